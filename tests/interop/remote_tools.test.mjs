// One MCP endpoint fronting a fleet: two fisk-ai-a2a agents share tool names on a real
// nats-server, fisk-ai-mcp imports their tools (serve_remote_tools) and the official SDK
// client calls a remote tool through it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { waitFor, DEMO_BIN, MCP_BIN } from './harness.mjs';

const A2A_BIN = process.env.FISK_AI_A2A;
const NATS_SERVER = process.env.NATS_SERVER || 'nats-server';

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// A child whose stderr is collected; `ready` resolves once `pattern` appears.
function start(cmd, args, env, pattern) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = waitFor(() => pattern.test(out) || child.exitCode !== null, 20000, `${cmd} to start`)
    .then(() => { if (!pattern.test(out)) throw new Error(`${cmd} did not start:\n${out}`); });
  return { child, ready, exited, output: () => out };
}

describe('remote tools through fisk-ai-mcp', () => {
  let dir, env, nats, agents = [], front, url;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fiskai-remote-'));
    const port = await freePort();
    nats = start(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'js')], {}, /Server is ready/);
    await nats.ready;
    mkdirSync(join(dir, 'xdg/nats/context'), { recursive: true });
    writeFileSync(join(dir, 'xdg/nats/context/fleet.json'), JSON.stringify({ url: `nats://127.0.0.1:${port}` }));
    env = { XDG_CONFIG_HOME: join(dir, 'xdg') };
    const agent = (id, include) => {
      const cfg = join(dir, `${id}.yaml`);
      writeFileSync(cfg, `identity: ${id}\napplication_path: ${JSON.stringify(DEMO_BIN)}\nnats_context: fleet\n` +
        `include: {tools: ${JSON.stringify(include)}}\nexpose: {agent: {a2a: {serve_tools: true}}}\n`);
      return start(A2A_BIN, ['serve', '--config', cfg], env, /Serving \d+ tools over a2a/);
    };
    agents = [agent('alpha', ['^echo$', '^fail$']), agent('beta', ['^echo$', '^stream_info$'])];
    await Promise.all(agents.map((a) => a.ready));
    const cfg = join(dir, 'front.yaml');
    writeFileSync(cfg, 'identity: front\nnats_context: fleet\nremote_tools:\n  - {name: alpha}\n  - {name: beta, alias: b}\n' +
      'expose: {agent: {mcp: {serve_remote_tools: true}}}\n');
    front = start(MCP_BIN, ['--config', cfg, '--port', '0'], env, /over MCP on http:\/\/\S+\/mcp/);
    await front.ready;
    url = front.output().match(/over MCP on (http:\/\/\S+\/mcp)/)[1];
  });
  after(async () => {
    for (const p of [front, ...agents, nats]) if (p && p.child.exitCode === null) p.child.kill('SIGTERM');
    await Promise.all([front, ...agents, nats].filter(Boolean).map((p) => p.exited));
    rmSync(dir, { recursive: true, force: true });
  });

  test('shared names are prefixed on every host, unique ones stay bare', async () => {
    const c = new Client({ name: 'fleet', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(url)));
    const names = (await c.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['alpha_echo', 'b_echo', 'fail', 'stream_info']);
    await c.close();
  });

  test('a remote tool runs on its agent and returns the local result shape', async () => {
    const c = new Client({ name: 'fleet', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(url)));
    const r = await c.callTool({ name: 'b_echo', arguments: { text: ['from', 'beta'] } });
    assert.equal(r.isError, undefined);
    assert.equal(r.content[0].text, '{"command":"echo -- from beta","output":"from beta\\n"}');
    const failed = await c.callTool({ name: 'fail', arguments: { code: 6 } });
    assert.equal(failed.isError, undefined, 'a non-zero exit stays a normal result');
    assert.equal(failed.structuredContent.exit_code, 6);
    const info = await c.callTool({ name: 'stream_info', arguments: { name: 'ORDERS' } });
    assert.match(info.content[0].text, /stream info -- ORDERS/);
    await c.close();
  });

  test('the importer\'s info lists imported tools with their hosts, and host statuses', () => {
    const cfg = join(dir, 'importer.yaml');
    writeFileSync(cfg, `identity: importer\napplication_path: ${JSON.stringify(DEMO_BIN)}\nnats_context: fleet\n` +
      'include: {tools: ["^echo$"]}\nremote_tools:\n  - {name: alpha}\n  - {name: beta, alias: b}\n  - {name: ghost}\n');
    const r = spawnSync(A2A_BIN, ['info', '--config', cfg, '--json'], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    const byName = Object.fromEntries(doc.tools.map((t) => [t.name, t]));
    assert.equal(byName.echo.remote, false, 'the local echo keeps its name');
    assert.equal(byName.alpha_echo.host, 'alpha');
    assert.equal(byName.b_echo.host, 'beta');
    assert.equal(byName.fail.remote, true);
    assert.equal(byName.stream_info.host, 'beta');
    const hosts = Object.fromEntries(doc.hosts.map((h) => [h.name, h]));
    assert.equal(hosts.alpha.status, 'reachable');
    assert.equal(hosts.alpha.imported, 2);
    assert.equal(hosts.ghost.status, 'unavailable');
    assert.match(hosts.ghost.error, /unavailable/);
    const text = spawnSync(A2A_BIN, ['info', '--config', cfg], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60000 });
    assert.match(text.stdout, /ghost: UNAVAILABLE via context "fleet"/);
    assert.match(text.stdout, /beta \(0\.1\.0\): reachable in \S+, advertised 2 tool\(s\), imported 2 as "b"/);
  });

  test('fisk-ai-mcp info lists the remote tools it would serve', () => {
    const r = spawnSync(MCP_BIN, ['info', '--config', join(dir, 'front.yaml'), '--json'],
      { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 0, r.stderr);
    const tools = JSON.parse(r.stdout).tools;
    assert.deepEqual(tools.map((t) => `${t.name}@${t.host}`).sort(),
      ['alpha_echo@alpha', 'b_echo@beta', 'fail@alpha', 'stream_info@beta']);
    assert.ok(tools.every((t) => t.remote === true && t.confirm === false));
  });

  test('a host that does not answer stops a strict import with a clear error', () => {
    const cfg = join(dir, 'down.yaml');
    writeFileSync(cfg, 'identity: front2\nnats_context: fleet\nremote_tools:\n  - {name: alpha}\n  - {name: ghost}\n' +
      'expose: {agent: {mcp: {serve_remote_tools: true}}}\n');
    const r = spawnSync(MCP_BIN, ['--config', cfg, '--port', '0'], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /importing tools from remote agent "ghost" on context "fleet": /);
  });
});
