// knowledge_search and knowledge_enumerate served by fisk-ai-mcp, called through the
// official MCP TypeScript SDK client; the index is built first with `fisk-ai-mcp knowledge index`.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_BIN, scratchDir, waitFor } from './harness.mjs';

function writeCorpus(dir) {
  const docs = join(dir, 'docs');
  mkdirSync(docs, { recursive: true });
  writeFileSync(join(docs, 'streams.md'), '---\ntitle: Stream basics\n---\n# Streams\n\n## Retention\n\nWork-queue retention removes a message once it is acknowledged.\n');
  writeFileSync(join(docs, 'rotation.md'), '# Rotation\n\nRotate API keys every ninety days.\n');
  for (let i = 0; i < 30; i++) {
    writeFileSync(join(docs, `note-${String(i).padStart(2, '0')}.md`), `# Note ${i}\n\nmeeting budget travel ${i}\n`);
  }
  return docs;
}

function writeKnowledgeConfig(dir, builtins) {
  const path = join(dir, 'fisk-ai.yaml');
  writeFileSync(path, `identity: kb
harness:
  knowledge:
    enabled: true
    paths: [${JSON.stringify(join(dir, 'docs'))}]
    directory: ${JSON.stringify(join(dir, 'index'))}
expose:
  agent:
    mcp:
      max_concurrent_tools: 8
      builtins: ${JSON.stringify(builtins)}
`);
  return path;
}

async function start(config) {
  const child = spawn(MCP_BIN, ['--config', config, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d.toString(); });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  let url;
  await waitFor(() => {
    const m = stderr.match(/over MCP on (http:\/\/\S+\/mcp)/);
    if (m) url = m[1];
    return Boolean(url) || child.exitCode !== null;
  }, 15000, 'the server banner');
  return { url, child, exited, stderr: () => stderr };
}

async function connect(url) {
  const client = new Client({ name: 'interop', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe('knowledge built-ins over MCP with the official SDK client', () => {
  let dir; let server; let config;
  before(async () => {
    dir = scratchDir();
    writeCorpus(dir);
    config = writeKnowledgeConfig(dir, ['knowledge_search', 'knowledge_enumerate']);
    const built = spawnSync(MCP_BIN, ['knowledge', '--config', config, 'index'], { encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    assert.match(built.stdout, /indexed: added=32 updated=0 skipped=0 removed=0 \(32 files, 32 chunks\)/);
    server = await start(config);
    assert.ok(server.url, server.stderr());
  });
  after(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGTERM');
    if (server) await server.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  test('the tier line is logged and both tools are listed with Go\'s schema', async () => {
    assert.match(server.stderr(), /knowledge tier: lexical \(FTS5\) - no embeddings configured/);
    const client = await connect(server.url);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['knowledge_search', 'knowledge_enumerate']);
    const search = tools[0];
    assert.deepEqual(search.inputSchema.required, ['query']);
    assert.equal(search.inputSchema.additionalProperties, undefined);
    assert.equal(search.inputSchema.properties.top_k.type, 'integer');
    await client.close();
  });

  test('knowledge_search returns the built-in JSON verbatim with citations', async () => {
    const client = await connect(server.url);
    const r = await client.callTool({ name: 'knowledge_search', arguments: { query: 'work-queue retention', top_k: 3 } });
    assert.equal(r.isError, undefined);
    const out = JSON.parse(r.content[0].text);
    assert.equal(out.status, 'ok');
    assert.match(out.tier, /lexical/);
    assert.equal(out.results[0].citation, `${join(dir, 'docs', 'streams.md')}#0`);
    assert.equal(out.results[0].section, 'Streams > Retention');
    assert.match(server.stderr(), /Running knowledge_search\("work-queue retention", top_k=3\)/);
    await client.close();
  });

  test('FTS syntax and an empty query are answers, not errors', async () => {
    const client = await connect(server.url);
    for (const query of ['stream-info', 'c++', 'ack OR', '"', '', 'x'.repeat(10 * 1024)]) {
      const r = await client.callTool({ name: 'knowledge_search', arguments: { query } });
      assert.equal(r.isError, undefined, `${query.slice(0, 20)}: ${r.content[0].text}`);
      assert.ok(['ok', 'index_empty'].includes(JSON.parse(r.content[0].text).status));
    }
    const bad = await client.callTool({ name: 'knowledge_search', arguments: {} });
    assert.equal(bad.isError, true);
    await client.close();
  });

  test('eight concurrent searches all succeed against one read-only store', async () => {
    const client = await connect(server.url);
    const calls = Array.from({ length: 8 }, (_, i) =>
      client.callTool({ name: 'knowledge_search', arguments: { query: `meeting budget ${i}` } }));
    for (const r of await Promise.all(calls)) {
      assert.equal(r.isError, undefined);
      assert.equal(JSON.parse(r.content[0].text).status, 'ok');
    }
    await client.close();
  });

  test('knowledge_enumerate pages with cursors and refuses one it never issued', async () => {
    const client = await connect(server.url);
    const paths = [];
    let cursor;
    for (let pages = 0; pages < 10; pages++) {
      const args = cursor ? { limit: 10, cursor } : { limit: 10 };
      const r = await client.callTool({ name: 'knowledge_enumerate', arguments: args });
      assert.equal(r.isError, undefined);
      const out = JSON.parse(r.content[0].text);
      paths.push(...out.documents.map((d) => d.path));
      cursor = out.next_cursor;
      if (!cursor) break;
    }
    assert.equal(paths.length, 32);
    assert.equal(new Set(paths).size, 32);
    const r = await client.callTool({ name: 'knowledge_enumerate', arguments: { cursor: 'never-issued' } });
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, /cursor "never-issued" was not issued by this server/);
    await client.close();
  });
});

describe('knowledge over MCP: startup refusals and notes', () => {
  test('a missing index path stops the start with a clear error', async () => {
    const dir = scratchDir();
    const config = writeKnowledgeConfig(dir, ['knowledge_search']);
    const r = spawnSync(MCP_BIN, ['--config', config, '--port', '0'], { encoding: 'utf8', timeout: 15000 });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /cannot expose knowledge_search over MCP: harness.knowledge.paths: ".*docs" does not exist/);
    rmSync(dir, { recursive: true, force: true });
  });

  test('not built yet: the note is logged and searches say index_not_built', async () => {
    const dir = scratchDir();
    writeCorpus(dir);
    const server = await start(writeKnowledgeConfig(dir, ['knowledge_search']));
    try {
      assert.match(server.stderr(), /note: the knowledge index is not built yet/);
      const client = await connect(server.url);
      const r = await client.callTool({ name: 'knowledge_search', arguments: { query: 'anything' } });
      assert.equal(JSON.parse(r.content[0].text).status, 'index_not_built');
      await client.close();
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('info lists the built-ins', async () => {
    const dir = scratchDir();
    const config = writeKnowledgeConfig(dir, ['knowledge_search']);
    const r = spawnSync(MCP_BIN, ['info', '--config', config], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /knowledge_search {2}\[served over MCP\]/);
    assert.match(r.stdout, /knowledge_enumerate {2}\[agent only/);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('the knowledge command', () => {
  test('index, show, doctor, and watch re-indexing an edit until SIGTERM', async () => {
    const dir = scratchDir();
    writeCorpus(dir);
    const config = writeKnowledgeConfig(dir, []);
    const run = (...args) => spawnSync(MCP_BIN, ['knowledge', '--config', config, ...args], { encoding: 'utf8' });
    assert.equal(run('index').status, 0);
    const again = run('index');
    assert.match(again.stdout, /indexed: added=0 updated=0 skipped=32 removed=0/);
    const citation = `${join(dir, 'docs', 'streams.md')}#0`;
    const show = run('show', citation);
    assert.equal(show.status, 0, show.stderr);
    assert.equal(show.stdout, '# Streams > Retention\n\nStreams > Retention\n\nWork-queue retention removes a message once it is acknowledged.\n');
    const missing = run('show', `${join(dir, 'docs', 'streams.md')}#9`);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /no chunk found for citation/);
    const doctor = run('doctor');
    assert.equal(doctor.status, 0, doctor.stderr);
    assert.match(doctor.stdout, /tier: lexical \(FTS5\) - no embeddings configured/);
    assert.match(doctor.stdout, /FTS5 compiled in: \[ ok \]/);

    const watch = spawn(MCP_BIN, ['knowledge', '--config', config, 'watch', '--debounce-ms', '200', '--no-initial'],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    watch.stdout.on('data', (d) => { out += d.toString(); });
    watch.stderr.on('data', (d) => { out += d.toString(); });
    const exited = new Promise((resolve) => watch.on('exit', (code) => resolve(code)));
    await waitFor(() => /watching \d+ director(y|ies) under 1 path/.test(out), 10000, 'the watch banner');
    writeFileSync(join(dir, 'docs', 'rotation.md'), '# Rotation\n\nRotate API keys every thirty days now.\n');
    await waitFor(() => /indexed: added=0 updated=1 skipped=31 removed=0/.test(out), 10000, `the re-index:\n${out}`);
    assert.match(out, /change detected in 1 file; reindexing:\n {2}.*rotation\.md/);
    watch.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(out, /stopped watching/);
    const search = run('search', 'thirty days');
    assert.match(search.stdout, /rotation\.md#0/);
    rmSync(dir, { recursive: true, force: true });
  });
});
