// Hostile inputs that once crashed or wedged fisk-ai-mcp, sent through the official SDK
// client: each must get a clear in-band answer and leave the server serving.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startServer, waitFor } from './harness.mjs';

async function connect(url, { elicit } = {}) {
  const capabilities = elicit ? { elicitation: { form: {} } } : {};
  const client = new Client({ name: 'hostile', version: '1.0.0' }, { capabilities });
  const asked = [];
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return elicit(req.params);
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { client, asked };
}

const text = (r) => r.content[0].text;

async function stillServes(client) {
  const r = await client.callTool({ name: 'echo', arguments: { text: ['alive'] } });
  assert.equal(r.isError, undefined);
  assert.equal(r.structuredContent.output, 'alive\n');
}

describe('hostile arguments', () => {
  let server;
  before(async () => { server = await startServer({ mcp: { confirm_over_mcp: 'auto' } }); });
  after(async () => { await server.stop(); });

  // The demo's duration argument carries a schema `pattern`; std::regex recursed once per
  // character and overflowed the stack on about 15,000.
  for (const length of [15000, 400000]) {
    test(`a ${length}-character string against a pattern is refused in-band`, async () => {
      const { client } = await connect(server.url);
      const r = await client.callTool({ name: 'sleep', arguments: { duration: `${'9'.repeat(length)}q` } });
      assert.equal(r.isError, true);
      assert.match(text(r), /^invalid arguments for tool "sleep": property "duration": Failed to match regex/);
      await stillServes(client);
      await client.close();
    });
  }

  test('a NUL inside a string argument is refused before anyone is asked to approve', async () => {
    const { client, asked } = await connect(server.url, { elicit: () => ({ action: 'accept', content: { approve: true } }) });
    const r = await client.callTool({ name: 'stream_rm', arguments: { name: 'ORDERS\u0000--force' } });
    assert.equal(r.isError, true);
    assert.match(text(r), /NUL character, which no command-line argument can carry/);
    assert.equal(asked.length, 0, 'no approval prompt for a call that could never run as shown');
    await stillServes(client);
    await client.close();
  });
});

describe('a call cancelled while it waits for a slot', () => {
  let server;
  before(async () => { server = await startServer({ mcp: { max_concurrent_tools: 1, tool_timeout: '30s' } }); });
  after(async () => { await server.stop(); });

  test('frees nothing it never had, and later calls still run', async () => {
    const { client } = await connect(server.url);
    const holder = client.callTool({ name: 'sleep', arguments: { duration: '1500ms' } });
    await waitFor(() => server.stderr().includes('Running sleep -- 1500ms'), 10000, 'the first call to hold the slot');

    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const waiting = client.request(
        { method: 'tools/call', params: { name: 'echo', arguments: { text: [`queued-${i}`] } } },
        CallToolResultSchema, { signal: controller.signal, timeout: 60000 });
      const queuedLines = () => server.stderr().split('\n').filter((l) => l.includes(`Waiting for a free slot to run echo -- queued-${i}`));
      await waitFor(() => queuedLines().length === 1, 10000, `call ${i} to queue for the slot`);
      controller.abort('changed my mind');
      await assert.rejects(waiting);
      await waitFor(() => server.stderr().split('\n').filter((l) => l.includes('at the client\'s request')).length === i + 1,
        10000, `the server to cancel call ${i}`);
    }

    const first = await holder;
    assert.equal(first.isError, undefined);
    // Before the fix, every cancelled wait took the slot with it and this call hung.
    const after = await client.callTool({ name: 'echo', arguments: { text: ['after'] } }, undefined, { timeout: 15000 });
    assert.equal(after.structuredContent.output, 'after\n');
    await client.close();
  });
});
