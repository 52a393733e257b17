// The embed-beast example: a user's own Beast server with the MCP endpoint mounted at
// /mcp, beside its own routes, driven by the official SDK client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { waitFor } from './harness.mjs';

test('the MCP endpoint works inside a user\'s own Beast server', async () => {
  const child = spawn(process.env.EMBED_BEAST, ['0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  try {
    let base;
    await waitFor(() => { base = stderr.match(/listening on (http:\/\/\S+\/)/)?.[1]; return Boolean(base); }, 10000, 'the banner');
    const home = await fetch(base);
    assert.equal(await home.text(), 'hello from my own server; MCP lives at /mcp\n');

    const client = new Client({ name: 'embed-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}mcp`)));
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['add']);
    const r = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
    assert.equal(r.content[0].text, '{"sum":42}');
    const bad = await client.callTool({ name: 'add', arguments: { a: 'two', b: 40 } });
    assert.equal(bad.isError, true);

    const health = await (await fetch(`${base}health`)).json();
    assert.equal(health.status, 'ok');
    assert.ok(health.mcp_sessions >= 1);
    await client.close();
  } finally {
    child.kill('SIGTERM');
  }
});
