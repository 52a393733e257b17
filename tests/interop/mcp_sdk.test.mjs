// The official MCP TypeScript SDK client against fisk-ai-mcp serving the demo application.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema, ElicitRequestSchema, LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startServer, waitFor, processesMentioning } from './harness.mjs';

async function connect(url, { elicit, capabilities: declared } = {}) {
  const capabilities = declared ?? (elicit ? { elicitation: { form: {} } } : {});
  const client = new Client({ name: 'interop', version: '1.0.0' }, { capabilities });
  const asked = [];
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return elicit(req.params);
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport, asked };
}

const text = (r) => r.content[0].text;

describe('fisk-ai-mcp with the official SDK client', () => {
  let server;
  before(async () => {
    server = await startServer({ mcp: { tool_timeout: '2s', max_concurrent_tools: 4, instructions: 'Tools of fisk-demo.' } });
  });
  after(async () => { await server.stop(); });

  test('initialize negotiates 2025-11-25 and names the server', async () => {
    const { client, transport } = await connect(server.url);
    assert.equal(transport.protocolVersion, '2025-11-25');
    assert.ok(transport.sessionId && transport.sessionId.length >= 32);
    assert.equal(client.getServerVersion().name, 'fisk-demo');
    assert.ok(client.getServerCapabilities().tools);
    assert.match(client.getInstructions() ?? '', /fisk-demo/);
    assert.deepEqual(await client.ping(), {});
    await client.close();
  });

  test('tools/list shows every served tool with description, schema and annotations', async () => {
    const { client } = await connect(server.url);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    assert.deepEqual(names, ['stream_info', 'stream_rm', 'pub', 'sleep', 'flood', 'fail', 'spawn', 'echo', 'env',
      'config_get', 'config_set']);
    const info = tools.find((t) => t.name === 'stream_info');
    assert.equal(info.description, 'Show stream information\n\nTags: impact:ro, ai:no_defer');
    assert.equal(info.inputSchema.type, 'object');
    assert.deepEqual(info.inputSchema.required, ['name']);
    assert.deepEqual(info.annotations, { title: 'stream info', readOnlyHint: true });
    assert.deepEqual(tools.find((t) => t.name === 'stream_rm').annotations, { title: 'stream rm', readOnlyHint: false });
    assert.ok(!names.includes('reset'), 'ai:deny is never served');
    await client.close();
  });

  test('a call returns the command result envelope as text and structured content', async () => {
    const { client } = await connect(server.url);
    const r = await client.callTool({ name: 'stream_info', arguments: { name: 'ORDERS', json: true } });
    assert.equal(r.isError, undefined);
    assert.deepEqual(JSON.parse(text(r)), r.structuredContent);
    assert.equal(r.structuredContent.command, 'stream info --json -- ORDERS');
    assert.equal(JSON.parse(r.structuredContent.output).name, 'ORDERS');
    await client.close();
  });

  test('a non-zero exit is a normal result carrying the exit code', async () => {
    const { client } = await connect(server.url);
    const r = await client.callTool({ name: 'fail', arguments: { code: 4 } });
    assert.equal(r.isError, undefined);
    assert.equal(r.structuredContent.exit_code, 4);
    assert.equal(r.structuredContent.output, 'failing with code 4\n');
    await client.close();
  });

  test('a command over the per-call timeout is killed and reported in-band', async () => {
    const { client } = await connect(server.url);
    const started = Date.now();
    const r = await client.callTool({ name: 'sleep', arguments: { duration: '30s' } });
    assert.equal(r.isError, true);
    assert.equal(text(r), 'running command "sleep": context deadline exceeded (timed out after 2s)');
    assert.ok(Date.now() - started < 10000);
    await client.close();
  });

  test('an unknown tool and invalid arguments are answered in-band', async () => {
    const { client } = await connect(server.url);
    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} });
    assert.equal(unknown.isError, true);
    assert.match(text(unknown), /^unknown tool "no_such_tool"/);
    const invalid = await client.callTool({ name: 'fail', arguments: { code: 'three' } });
    assert.equal(invalid.isError, true);
    assert.match(text(invalid), /^invalid arguments for tool "fail": property "code"/);
    const missing = await client.callTool({ name: 'stream_info', arguments: {} });
    assert.equal(missing.isError, true);
    assert.match(text(missing), /name/);
    await client.close();
  });

  test('progress notifications reach a caller that sent a progress token', async () => {
    const { client } = await connect(server.url);
    const seen = [];
    const r = await client.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { duration: '200ms' } } },
      CallToolResultSchema, { onprogress: (p) => seen.push(p) });
    assert.equal(r.isError, undefined);
    assert.ok(seen.length >= 1);
    assert.equal(seen[0].progress, 0);
    assert.match(seen[0].message, /running sleep -- 200ms/);
    await client.close();
  });

  test('log notifications arrive at or above the level the client set', async () => {
    const { client } = await connect(server.url);
    const logs = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
    await client.callTool({ name: 'echo', arguments: { text: ['quiet'] } });
    assert.equal(logs.length, 0, 'no logs before a level is set');
    await client.setLoggingLevel('info');
    await client.callTool({ name: 'echo', arguments: { text: ['loud'] } });
    assert.ok(logs.some((l) => l.level === 'info' && /Running echo -- loud/.test(l.data)));
    await client.setLoggingLevel('error');
    const before = logs.length;
    await client.callTool({ name: 'echo', arguments: { text: ['quiet again'] } });
    assert.equal(logs.length, before);
    await client.close();
  });

  test('cancelling a call kills its process group', async () => {
    const { client } = await connect(server.url);
    const marker = join(server.dir, `cancel-${Date.now()}`);
    const controller = new AbortController();
    const call = client.request(
      { method: 'tools/call', params: { name: 'spawn', arguments: { marker, delay: '20s', linger: '30s' } } },
      CallToolResultSchema, { signal: controller.signal, timeout: 60000 });
    await waitFor(() => processesMentioning(marker).length >= 2, 10000, 'the command and its child to start');
    controller.abort('stop');
    await assert.rejects(call);
    await waitFor(() => processesMentioning(marker).length === 0, 10000, 'the process group to be killed');
    await client.close();
  });
});

describe('approval by elicitation', () => {
  let server;
  before(async () => { server = await startServer({ mcp: { confirm_over_mcp: 'auto' } }); });
  after(async () => { await server.stop(); });

  test('accepted with approve=true runs the command', async () => {
    const { client, asked } = await connect(server.url, { elicit: () => ({ action: 'accept', content: { approve: true } }) });
    const r = await client.callTool({ name: 'stream_rm', arguments: { name: 'ORDERS' } });
    assert.equal(r.isError, undefined);
    assert.equal(r.structuredContent.output, 'removed stream ORDERS\n');
    assert.equal(asked.length, 1);
    assert.match(asked[0].message, /Command: stream rm -- ORDERS\nGated by: ai:confirm/);
    assert.deepEqual(asked[0].requestedSchema.required, ['approve']);
    assert.equal(asked[0].requestedSchema.properties.approve.type, 'boolean');
    await client.close();
  });

  test('a confirm tag from the config gates too', async () => {
    const { client, asked } = await connect(server.url, { elicit: () => ({ action: 'accept', content: { approve: true } }) });
    const r = await client.callTool({ name: 'config_set', arguments: { key: 'k', value: 'v' } });
    assert.equal(r.isError, undefined);
    assert.match(asked[0].message, /Gated by: change:config/);
    await client.close();
  });

  for (const [name, answer, pattern] of [
    ['declined', { action: 'decline' }, /^Not approved: the user declined to run "stream rm -- X"/],
    ['cancelled', { action: 'cancel' }, /^Approval not completed: the user dismissed the approval prompt/],
    ['accepted with approve=false', { action: 'accept', content: { approve: false } }, /chose not to run it/],
  ]) {
    test(`${name} does not run the command`, async () => {
      const { client, asked } = await connect(server.url, { elicit: () => answer });
      const r = await client.callTool({ name: 'stream_rm', arguments: { name: 'X' } });
      assert.equal(r.isError, true);
      assert.match(text(r), pattern);
      assert.equal(asked.length, 1);
      await client.close();
    });
  }

  test('an ungated tool is never asked about', async () => {
    const { client, asked } = await connect(server.url, { elicit: () => ({ action: 'decline' }) });
    const r = await client.callTool({ name: 'echo', arguments: { text: ['hi'] } });
    assert.equal(r.isError, undefined);
    assert.equal(asked.length, 0);
    await client.close();
  });

  test('auto runs a gated tool ungated for a client that cannot elicit, with a warning', async () => {
    const { client } = await connect(server.url);
    const r = await client.callTool({ name: 'stream_rm', arguments: { name: 'Y' } });
    assert.equal(r.isError, undefined);
    assert.match(server.stderr(), /warning: running "stream rm -- Y" ungated: gated by ai:confirm/);
    await client.close();
  });
});

describe('a client that declared only URL elicitation', () => {
  // Fail closed: URL elicitation cannot approve a command, and having declared elicitation
  // it is not "a client that cannot elicit" either; the gated call is refused, as in Go.
  for (const mode of ['auto', 'always']) {
    test(`${mode}: a gated call is refused, never run ungated`, async () => {
      const server = await startServer({ mcp: { confirm_over_mcp: mode } });
      try {
        const { client } = await connect(server.url, { capabilities: { elicitation: { url: {} } } });
        await waitFor(() => /Client "interop" connected: URL elicitation only/.test(server.stderr()), 5000, 'the connect line');
        const r = await client.callTool({ name: 'stream_rm', arguments: { name: 'U' } });
        assert.equal(r.isError, true);
        assert.equal(text(r), 'Not approved: requesting approval to run "stream rm -- U" failed: client does not support '
          + '"form" elicitation. The command did not run.');
        assert.doesNotMatch(server.stderr(), /Running stream rm -- U|"stream rm -- U" ungated/);
        const ungated = await client.callTool({ name: 'echo', arguments: { text: ['fine'] } });
        assert.equal(ungated.isError, undefined);
        await client.close();
      } finally { await server.stop(); }
    });
  }
});

describe('confirm_over_mcp always and never', () => {
  test('always refuses a client that cannot elicit', async () => {
    const server = await startServer({ mcp: { confirm_over_mcp: 'always' } });
    try {
      const { client } = await connect(server.url);
      const r = await client.callTool({ name: 'stream_rm', arguments: { name: 'Z' } });
      assert.equal(r.isError, true);
      assert.match(text(r), /requires approval, but this client cannot be asked/);
      await client.close();
    } finally { await server.stop(); }
  });

  test('never runs without asking even a client that can elicit', async () => {
    const server = await startServer({ mcp: { confirm_over_mcp: 'never' } });
    try {
      const { client, asked } = await connect(server.url, { elicit: () => ({ action: 'decline' }) });
      const r = await client.callTool({ name: 'stream_rm', arguments: { name: 'Z' } });
      assert.equal(r.isError, undefined);
      assert.equal(asked.length, 0);
      await client.close();
    } finally { await server.stop(); }
  });
});
