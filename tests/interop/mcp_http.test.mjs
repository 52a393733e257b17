// Raw HTTP against fisk-ai-mcp: every admission rule and hostile request, status codes
// and bodies, sessions, streams, concurrency slots and shutdown.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { startServer, waitFor, cpuTicks } from './harness.mjs';

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

// One HTTP request; resolves with status, headers and the whole body.
function request(url, { method = 'POST', headers = {}, body, agent = false } = {}) {
  const u = new URL(url);
  const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers };
  for (const k of Object.keys(h)) if (h[k] === undefined) delete h[k];
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method, headers: h, agent }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(typeof body === 'string' ? body : JSON.stringify(body));
    req.end();
  });
}

async function openSession(url, agent = false) {
  const r = await request(url, { body: INIT, agent });
  assert.equal(r.status, 200);
  const sid = r.headers['mcp-session-id'];
  await request(url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', method: 'notifications/initialized' }, agent });
  return sid;
}

const rpcError = (r) => JSON.parse(r.body).error;

describe('HTTP admission and hostile requests', () => {
  let server;
  before(async () => {
    server = await startServer({ mcp: { allowed_origins: ['https://app.example.com'] } });
  });
  after(async () => { await server.stop(); });

  test('initialize answers JSON with a 128-bit session id', async () => {
    const r = await request(server.url, { body: INIT });
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^application\/json/);
    assert.match(r.headers['mcp-session-id'], /^[0-9a-f]{32}$/);
    assert.equal(JSON.parse(r.body).result.protocolVersion, '2025-11-25');
  });

  test('older supported versions are negotiated, unknown ones get the latest', async () => {
    for (const v of ['2025-06-18', '2025-03-26']) {
      const r = await request(server.url, { body: { ...INIT, params: { ...INIT.params, protocolVersion: v } } });
      assert.equal(JSON.parse(r.body).result.protocolVersion, v);
    }
    const r = await request(server.url, { body: { ...INIT, params: { ...INIT.params, protocolVersion: '2024-01-01' } } });
    assert.equal(JSON.parse(r.body).result.protocolVersion, '2025-11-25');
  });

  test('a foreign Origin is refused with 403; loopback and allowed origins pass', async () => {
    const bad = await request(server.url, { headers: { origin: 'http://evil.example.com' }, body: INIT });
    assert.equal(bad.status, 403);
    assert.match(rpcError(bad).message, /Origin "http:\/\/evil.example.com" is not allowed/);
    for (const origin of ['http://localhost:3000', 'http://127.0.0.1', 'https://[::1]:8443', 'https://app.example.com']) {
      const ok = await request(server.url, { headers: { origin }, body: INIT });
      assert.equal(ok.status, 200, origin);
    }
    const nul = await request(server.url, { headers: { origin: 'null' }, body: INIT });
    assert.equal(nul.status, 403);
  });

  test('a non-loopback Host is refused on a loopback listener (DNS rebinding)', async () => {
    const bad = await request(server.url, { headers: { host: 'evil.example.com' }, body: INIT });
    assert.equal(bad.status, 403);
    assert.match(rpcError(bad).message, /invalid Host header "evil.example.com"/);
    const ok = await request(server.url, { headers: { host: 'localhost:1234' }, body: INIT });
    assert.equal(ok.status, 200);
  });

  test('wrong method 405 with Allow, wrong Accept 406, wrong Content-Type 415', async () => {
    const put = await request(server.url, { method: 'PUT', body: INIT });
    assert.equal(put.status, 405);
    assert.equal(put.headers.allow, 'GET, POST, DELETE');
    const accept = await request(server.url, { headers: { accept: 'application/json' }, body: INIT });
    assert.equal(accept.status, 406);
    const type = await request(server.url, { headers: { 'content-type': 'text/plain' }, body: INIT });
    assert.equal(type.status, 415);
  });

  test('garbage JSON is a -32700 parse error; a batch and a non-object are -32600', async () => {
    const sid = await openSession(server.url);
    const garbage = await request(server.url, { headers: { 'mcp-session-id': sid }, body: '{"jsonrpc": "2.0", "id": ' });
    assert.equal(garbage.status, 400);
    assert.equal(rpcError(garbage).code, -32700);
    const batch = await request(server.url, { headers: { 'mcp-session-id': sid }, body: [{ jsonrpc: '2.0', id: 2, method: 'ping' }] });
    assert.equal(batch.status, 400);
    assert.equal(rpcError(batch).code, -32600);
    assert.match(rpcError(batch).message, /batches are not supported/);
    const scalar = await request(server.url, { headers: { 'mcp-session-id': sid }, body: '42' });
    assert.equal(scalar.status, 400);
    const noversion = await request(server.url, { headers: { 'mcp-session-id': sid }, body: { id: 3, method: 'ping' } });
    assert.equal(noversion.status, 400);
    const deep = await request(server.url, { headers: { 'mcp-session-id': sid }, body: '['.repeat(100000) });
    assert.equal(deep.status, 400);
    // and the session still works
    const ping = await request(server.url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', id: 4, method: 'ping' } });
    assert.equal(ping.status, 200);
    assert.deepEqual(JSON.parse(ping.body).result, {});
  });

  test('an oversized body is refused with 413 and the server stays healthy', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping', params: { pad: 'x'.repeat(2 * 1024 * 1024) } });
    const r = await request(server.url, { body: huge }).catch((e) => ({ status: 'reset', error: e }));
    if (r.status !== 'reset') assert.equal(r.status, 413);
    const ok = await request(server.url, { body: INIT });
    assert.equal(ok.status, 200);
  });

  test('oversized headers are refused with 431', async () => {
    const r = await request(server.url, { headers: { 'x-pad': 'y'.repeat(32 * 1024) }, body: INIT })
      .catch(() => ({ status: 'reset' }));
    if (r.status !== 'reset') assert.equal(r.status, 431);
  });

  test('missing session 400, unknown session 404, unsupported protocol version 400', async () => {
    const ping = { jsonrpc: '2.0', id: 6, method: 'ping' };
    const missing = await request(server.url, { body: ping });
    assert.equal(missing.status, 400);
    assert.match(rpcError(missing).message, /Mcp-Session-Id header is required/);
    const unknown = await request(server.url, { headers: { 'mcp-session-id': 'deadbeef' }, body: ping });
    assert.equal(unknown.status, 404);
    const sid = await openSession(server.url);
    const version = await request(server.url, { headers: { 'mcp-session-id': sid, 'mcp-protocol-version': '1999-01-01' }, body: ping });
    assert.equal(version.status, 400);
    assert.match(rpcError(version).message, /Unsupported protocol version: 1999-01-01/);
    const old = await request(server.url, { headers: { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26' }, body: ping });
    assert.equal(old.status, 200);
  });

  test('notifications and responses get 202; unknown methods -32601', async () => {
    const sid = await openSession(server.url);
    const n = await request(server.url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', method: 'notifications/whatever' } });
    assert.equal(n.status, 202);
    assert.equal(n.body, '');
    const resp = await request(server.url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', id: 999, result: {} } });
    assert.equal(resp.status, 202);
    const m = await request(server.url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', id: 7, method: 'nope/nope' } });
    assert.equal(rpcError(m).code, -32601);
    const lvl = await request(server.url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', id: 8, method: 'logging/setLevel', params: { level: 'loud' } } });
    assert.equal(rpcError(lvl).code, -32602);
    const ok = await request(server.url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', id: 9, method: 'logging/setLevel', params: { level: 'debug' } } });
    assert.equal(ok.body, '{"jsonrpc":"2.0","id":9,"result":{}}');
  });

  test('tools/list pages with a cursor; a bad cursor is -32602', async () => {
    const sid = await openSession(server.url);
    const r = await request(server.url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', id: 10, method: 'tools/list', params: { cursor: 'bogus' } } });
    assert.equal(rpcError(r).code, -32602);
    const all = await request(server.url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', id: 11, method: 'tools/list' } });
    assert.equal(JSON.parse(all.body).result.tools.length, 11);
  });

  test('DELETE ends a session; later requests get 404', async () => {
    const sid = await openSession(server.url);
    const del = await request(server.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    assert.equal(del.status, 204);
    const after = await request(server.url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', id: 12, method: 'ping' } });
    assert.equal(after.status, 404);
  });

  test('GET opens a listening event stream', async () => {
    const sid = await openSession(server.url);
    const u = new URL(server.url);
    const res = await new Promise((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'GET', agent: false,
        headers: { accept: 'text/event-stream', 'mcp-session-id': sid } }, resolve);
      req.on('error', reject);
      req.end();
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream');
    res.destroy();
    const noaccept = await request(server.url, { method: 'GET', headers: { 'mcp-session-id': sid, accept: 'application/json' } });
    assert.equal(noaccept.status, 406);
  });

  test('any other path is 404', async () => {
    const r = await request(server.url.replace('/mcp', '/other'), { body: INIT });
    assert.equal(r.status, 404);
  });

  test('a client that sends garbage bytes is answered 400 and the server lives on', async () => {
    const u = new URL(server.url);
    await new Promise((resolve) => {
      const s = net.connect(Number(u.port), u.hostname, () => s.write('THIS IS NOT HTTP\r\n\r\n'));
      s.on('data', () => {});
      s.on('close', resolve);
      s.on('error', resolve);
    });
    const ok = await request(server.url, { body: INIT });
    assert.equal(ok.status, 200);
  });
});

// A tools/call over raw HTTP, reading the SSE or JSON answer.
async function callTool(url, sid, id, name, args, agent = false) {
  const r = await request(url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, agent });
  if (r.headers['content-type'].startsWith('application/json')) return JSON.parse(r.body);
  const events = r.body.split('\n\n').filter((e) => e.includes('data: '));
  return JSON.parse(events[events.length - 1].split('data: ')[1]);
}

describe('handshake', () => {
  let server;
  before(async () => { server = await startServer(); });
  after(async () => { await server.stop(); });

  for (const [what, params, message] of [
    ['a missing protocolVersion', { capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      'Invalid params: initialize needs protocolVersion, a string such as "2025-11-25"'],
    ['a numeric protocolVersion', { protocolVersion: 20251125, capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      'Invalid params: protocolVersion must be a string such as "2025-11-25", not 20251125'],
    ['capabilities that are not an object', { protocolVersion: '2025-11-25', capabilities: 'all', clientInfo: { name: 'c', version: '1' } },
      'Invalid params: capabilities must be an object (send {} for none), not "all"'],
    ['a clientInfo of the wrong type', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: ['c'] },
      'Invalid params: clientInfo must be an object with a string name and version, not ["c"]'],
  ]) {
    test(`initialize with ${what} is -32602 and opens no session`, async () => {
      const r = await request(server.url, { body: { jsonrpc: '2.0', id: 9, method: 'initialize', params } });
      assert.equal(r.status, 200);
      assert.equal(r.headers['mcp-session-id'], undefined);
      assert.deepEqual(JSON.parse(r.body), { jsonrpc: '2.0', id: 9, error: { code: -32602, message } });
    });
  }

  test('nothing but ping runs before notifications/initialized', async () => {
    const r = await request(server.url, { body: INIT });
    const sid = r.headers['mcp-session-id'];
    const headers = { 'mcp-session-id': sid };
    const ping = await request(server.url, { headers, body: { jsonrpc: '2.0', id: 2, method: 'ping' } });
    assert.deepEqual(JSON.parse(ping.body).result, {});
    for (const [id, method, params] of [[3, 'tools/call', { name: 'echo', arguments: { text: ['early'] } }], [4, 'tools/list', {}]]) {
      const early = await request(server.url, { headers, body: { jsonrpc: '2.0', id, method, params } });
      assert.deepEqual(rpcError(early), { code: -32600,
        message: `Invalid Request: ${method} before notifications/initialized; send notifications/initialized after the initialize result, then retry` });
    }
    assert.doesNotMatch(server.stderr(), /Running echo -- early/);
    await request(server.url, { headers, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    const after = await callTool(server.url, sid, 5, 'echo', { text: ['late'] });
    assert.equal(after.result.isError, undefined);
  });

  test('progress values are integers on the wire, not 0E0', async () => {
    const sid = await openSession(server.url);
    const r = await request(server.url, { headers: { 'mcp-session-id': sid },
      body: { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'sleep', arguments: { duration: '100ms' }, _meta: { progressToken: 'p1' } } } });
    assert.match(r.headers['content-type'], /^text\/event-stream/);
    assert.match(r.body, /"method":"notifications\/progress","params":\{"progressToken":"p1","progress":0,"message":"running sleep -- 100ms"\}/);
    assert.doesNotMatch(r.body, /E0/);
  });
});

describe('listening', () => {
  test('a port in use is one line naming the address and the fix, exit code 1', async () => {
    const first = await startServer();
    try {
      const port = new URL(first.url).port;
      const second = spawnSync(process.env.FISK_AI_MCP, ['--config', `${first.dir}/fisk-ai.yaml`, '--port', port],
        { encoding: 'utf8', timeout: 15000 });
      assert.equal(second.status, 1);
      const last = second.stderr.trim().split('\n').pop();
      assert.equal(last, `fisk-ai-mcp: cannot listen on 127.0.0.1:${port}: the address is already in use; stop the other server or pass --port`);
      assert.doesNotMatch(second.stderr, /bind|system:|asio/i);
    } finally { await first.stop(); }
  });

  test('bound to 0.0.0.0 the banner shows the real address and warns that other hosts can reach it', async () => {
    const server = await startServer({ args: ['--address', '0.0.0.0'] });
    try {
      assert.match(server.url, /^http:\/\/0\.0\.0\.0:\d+\/mcp$/);
      const port = new URL(server.url).port;
      assert.match(server.stderr(), new RegExp(`warning: listening on 0\\.0\\.0\\.0:${port}, which is reachable from other hosts`));
      const loopback = await startServer();
      try { assert.doesNotMatch(loopback.stderr(), /reachable from other hosts/); } finally { await loopback.stop(); }
    } finally { await server.stop(); }
  });
});

describe('out of descriptors', () => {
  test('the accept loop backs off instead of spinning, and a call that cannot get a pipe fails in-band', async () => {
    const limit = 64;
    const server = await startServer({ fdLimit: limit });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = [];
    try {
      const pid = server.child.pid;
      // One kept-alive connection holds an initialized session before the descriptors run out.
      const sid = await openSession(server.url, agent);
      // A call before the descriptors run out, as a server in service has made. (Under
      // UBSan it also warms the vptr check's cache: its slow path needs a pipe of its own,
      // which a process out of descriptors cannot create.)
      const warm = await callTool(server.url, sid, 6, 'echo', { text: ['warm'] }, agent);
      assert.equal(warm.result.structuredContent.output, 'warm\n');
      const u = new URL(server.url);
      for (let i = 0; i < limit + 16; i++) {
        const s = net.connect(Number(u.port), u.hostname);
        s.on('error', () => {});
        sockets.push(s);
      }
      await waitFor(() => readdirSync(`/proc/${pid}/fd`).length >= limit, 10000, 'the server to run out of descriptors');
      // Queued connections it cannot accept must not make it spin: measure its CPU time.
      const before = cpuTicks(pid);
      const started = Date.now();
      await new Promise((r) => setTimeout(r, 1000));
      const used = (cpuTicks(pid) - before) * 10;
      const elapsed = Date.now() - started;
      console.log(`out of descriptors: ${used} ms of CPU in ${elapsed} ms`);
      assert.ok(used < elapsed * 0.2, `the server used ${used} ms of CPU in ${elapsed} ms while out of descriptors`);
      assert.match(server.stderr(), /warning: accepting a connection failed: Too many open files; retrying with a growing delay up to 1s/);

      // Still answering on the connection it has; the call cannot get a pipe and says so in-band.
      const r = await callTool(server.url, sid, 7, 'echo', { text: ['no pipe'] }, agent);
      assert.equal(r.error, undefined, JSON.stringify(r));
      assert.equal(r.result.isError, true);
      assert.match(r.result.content[0].text, /^running command "echo": creating the output pipe: Too many open files$/);

      // With descriptors back, queued and new connections are served again.
      for (const s of sockets) s.destroy();
      sockets.length = 0;
      agent.destroy();
      await waitFor(async () => (await request(server.url, { body: INIT }).catch(() => ({}))).status === 200, 10000,
        'a new connection to be served');
    } finally {
      for (const s of sockets) s.destroy();
      agent.destroy();
      await server.stop();
    }
  });
});

describe('concurrency slots', () => {
  // Observed through the server's own `Running` lines and the answers, not through timing.
  const runningCount = (server) => (server.stderr().match(/Running sleep -- /g) || []).length;

  test('with one slot, a second call never starts before the first has answered', async () => {
    const server = await startServer({ mcp: { max_concurrent_tools: 1 } });
    try {
      const sid = await openSession(server.url);
      const first = callTool(server.url, sid, 1, 'sleep', { duration: '1500ms' });
      await waitFor(() => runningCount(server) === 1, 10000, 'the first call to start');
      const second = callTool(server.url, sid, 2, 'sleep', { duration: '10ms' });
      const [a, b] = await Promise.all([first, second]);
      assert.equal(a.result.isError, undefined);
      assert.equal(b.result.isError, undefined);
      // The server's own log orders the events: the second ran only after the first ended.
      const log = server.stderr();
      const firstEnded = log.indexOf('Finished sleep -- 1500ms');
      const secondStarted = log.indexOf('Running sleep -- 10ms');
      assert.ok(firstEnded >= 0 && secondStarted > firstEnded, log);
    } finally { await server.stop(); }
  });

  test('with two slots, two calls run at the same time', async () => {
    const server = await startServer({ mcp: { max_concurrent_tools: 2 } });
    try {
      const sid = await openSession(server.url);
      let done = 0;
      const calls = [1, 2].map((id) => callTool(server.url, sid, id, 'sleep', { duration: '3s' }).then((r) => { done++; return r; }));
      await waitFor(() => runningCount(server) === 2, 10000, 'both calls to be running');
      assert.equal(done, 0, 'both started before either finished');
      for (const r of await Promise.all(calls)) assert.equal(r.result.isError, undefined);
    } finally { await server.stop(); }
  });
});

describe('shutdown', () => {
  test('SIGTERM with an open GET stream and a running call exits promptly and cleanly', async () => {
    const server = await startServer();
    const sid = await openSession(server.url);
    const u = new URL(server.url);
    const stream = await new Promise((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'GET', agent: false,
        headers: { accept: 'text/event-stream', 'mcp-session-id': sid } }, resolve);
      req.on('error', reject);
      req.end();
    });
    assert.equal(stream.statusCode, 200);
    const running = callTool(server.url, sid, 1, 'sleep', { duration: '60s' }).catch((e) => ({ error: e }));
    await waitFor(() => /Running sleep -- 60s/.test(server.stderr()), 5000, 'the call to start');
    const started = Date.now();
    const { code } = await server.stop('SIGTERM');
    assert.equal(code, 0);
    assert.ok(Date.now() - started < 5000, `shutdown took ${Date.now() - started} ms`);
    const answer = await running;
    if (!answer.error) assert.equal(answer.result.isError, true);
    assert.match(server.stderr(), /MCP server stopped/);
  });

  test('a second signal exits at once', async () => {
    const server = await startServer();
    const sid = await openSession(server.url);
    // a call whose group is slow to die is not needed: two signals back to back
    server.child.kill('SIGTERM');
    server.child.kill('SIGTERM');
    const r = await server.exited;
    assert.ok(r.code === 0 || r.code === 130, `exit code ${r.code}`);
    void sid;
  });
});

describe('refusing to start', () => {
  test('without expose.agent.mcp the server names the key to add', async () => {
    const { spawnSync } = await import('node:child_process');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(`${tmpdir()}/fiskai-`);
    writeFileSync(`${dir}/c.yaml`, `application_path: ${process.env.FISK_DEMO}\n`);
    const r = spawnSync(process.env.FISK_AI_MCP, ['--config', `${dir}/c.yaml`, '--port', '0'], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /expose\.agent\.mcp/);
  });
});
