// The a2a service as NATS peers see it: `fisk-ai-a2a serve --embedded-broker` with the
// demo application, discovered through `$SRV` by the npm `nats` client's services API and
// by `@nats-io/services`, and called with request bodies shaped exactly as the Go original
// sends them (spec a2a.md section 16).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectClassic, StringCodec } from 'nats';
import { connect as connectNode } from '@nats-io/transport-node';
import { Svcm, ServiceError } from '@nats-io/services';

const A2A_BIN = process.env.FISK_AI_A2A;
const DEMO_BIN = process.env.FISK_DEMO;
if (!A2A_BIN || !DEMO_BIN) throw new Error('set FISK_AI_A2A and FISK_DEMO to the built binaries');

const sc = StringCodec();
const enc = new TextEncoder();
const dec = new TextDecoder();

async function waitFor(predicate, ms, what) {
  const end = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let dir, child, stderr = '', exited, url, nc, nc3;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fiskai-nats-interop-'));
  const config = join(dir, 'fisk-ai.yaml');
  writeFileSync(config, `application_path: ${JSON.stringify(DEMO_BIN)}
identity: demo
harness:
  confirm_tags: ["change:config"]
expose:
  agent:
    a2a:
      serve_tools: true
`);
  child = spawn(A2A_BIN, ['serve', '--config', config, '--embedded-broker'], {
    env: { ...process.env, DEMO_STATE_DIR: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.on('data', (d) => { stderr += d.toString(); });
  exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await waitFor(() => /Serving \d+ tools over a2a/.test(stderr) || child.exitCode !== null, 20000, 'the serve banner');
  const m = stderr.match(/at (nats:\/\/127\.0\.0\.1:\d+)/);
  assert.ok(m, `no broker URL in:\n${stderr}`);
  url = m[1];
  nc = await connectClassic({ servers: url });
  nc3 = await connectNode({ servers: url });
});

after(async () => {
  await nc?.close();
  await nc3?.close();
  if (child && child.exitCode === null) child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

function collect(iter) {
  return (async () => {
    const out = [];
    for await (const x of await iter) out.push(x);
    return out;
  })();
}

function checkInfo(info) {
  assert.equal(info.name, 'demo');
  assert.equal(info.version, '0.0.0');
  assert.equal(info.description, 'fisk-ai a2a tool server');
  assert.equal(info.type, 'io.nats.micro.v1.info_response');
  assert.equal(info.id.length, 22);
  const eps = Object.fromEntries(info.endpoints.map((e) => [e.name, e]));
  assert.deepEqual(Object.keys(eps).sort(), ['discovery', 'tool']);
  assert.equal(eps.discovery.subject, 'choria.fisk-ai.discovery.demo');
  assert.equal(eps.tool.subject, 'choria.fisk-ai.tool.demo');
  assert.equal(eps.discovery.queue_group, 'demo');
  assert.equal(eps.tool.queue_group, 'demo');
}

test('nats@2 services client: PING, INFO and STATS find the service with its endpoints', async () => {
  const svc = nc.services.client();
  const pings = await collect(svc.ping('demo'));
  assert.equal(pings.length, 1);
  assert.equal(pings[0].type, 'io.nats.micro.v1.ping_response');
  assert.equal(pings[0].name, 'demo');
  const infos = await collect(svc.info('demo', pings[0].id));
  assert.equal(infos.length, 1);
  checkInfo(infos[0]);
  const all = await collect(svc.ping());
  assert.ok(all.some((p) => p.name === 'demo'));
  const stats = await collect(svc.stats('demo'));
  assert.equal(stats[0].type, 'io.nats.micro.v1.stats_response');
  assert.equal(stats[0].endpoints.length, 2);
  assert.ok(!Number.isNaN(Date.parse(stats[0].started)));
});

test('@nats-io/services client: the same service, the same answers', async () => {
  const svc = new Svcm(nc3).client();
  const infos = await collect(svc.info('demo'));
  assert.equal(infos.length, 1);
  checkInfo(infos[0]);
  const stats = await collect(svc.stats('demo', infos[0].id));
  for (const e of stats[0].endpoints) {
    for (const k of ['num_requests', 'num_errors', 'processing_time', 'average_processing_time']) {
      assert.equal(typeof e[k], 'number', `${e.name}.${k}`);
    }
  }
});

// Bodies shaped as a2a.md 16.1 and 16.3, addressed to this server's identity.
const header = (protocol, id) =>
  `{"protocol":"${protocol}","id":"${id}","request":"${id}","conversation":"${id}","sequence":0,` +
  `"time":"2026-05-04T09:15:27.482913304Z","sender":{"name":"caller"},"recipient":{"name":"demo"}`;

test('a Go-shaped discovery request gets the agent card, header first, echoing the request', async () => {
  const id = '2wJ4H0sTQqS7xYvEo1Rm9LkPbZd';
  const body = header('io.choria.fisk-ai.v1.discovery.request', id) + '}';
  const msg = await nc.request('choria.fisk-ai.discovery.demo', enc.encode(body), { timeout: 5000 });
  const text = dec.decode(msg.data);
  assert.ok(text.startsWith('{"protocol":"io.choria.fisk-ai.v1.discovery.reply","id":"'), text.slice(0, 80));
  const r = JSON.parse(text);
  assert.equal(r.request, id);
  assert.equal(r.conversation, id);
  assert.equal(r.sequence, 0);
  assert.deepEqual(r.sender, { name: 'demo' });
  assert.deepEqual(r.recipient, { name: 'caller' });
  assert.equal(r.name, 'demo');
  assert.deepEqual(r.protocols, ['io.choria.fisk-ai.v1']);
  const names = r.tools.map((t) => t.name);
  assert.ok(names.includes('echo'));
  assert.ok(!names.includes('stream_rm'), 'confirm-gated tools are not served');
  assert.equal(r.id.length, 27);
  assert.equal(msg.headers, undefined, 'a successful reply carries no headers');
});

test('Go-shaped tool requests: exit 0, exit 3, unknown tool', async () => {
  const id = '2wJ4H6KmZp1eWc5Ny8QbT3rLsAu';
  const call = async (name, input) => {
    const body = header('io.choria.fisk-ai.v1.tool.request', id) + `,"name":"${name}"` +
      (input ? `,"input":${input}` : '') + '}';
    const msg = await nc.request('choria.fisk-ai.tool.demo', enc.encode(body), { timeout: 10000 });
    return JSON.parse(dec.decode(msg.data));
  };
  const ok = await call('echo', '{"text":["pong"]}');
  assert.equal(ok.protocol, 'io.choria.fisk-ai.v1.tool.reply');
  assert.equal(ok.request, id);
  assert.equal(ok.output, 'pong\n');
  assert.deepEqual(ok.exec, { command: 'echo -- pong' });
  assert.equal('is_error' in ok, false);

  const three = await call('fail', '{"code":3}');
  assert.equal(three.exec.exit_code, 3);
  assert.equal('is_error' in three, false);

  const missing = await call('missing');
  assert.equal(missing.is_error, true);
  assert.equal(missing.output, 'tool "missing" is not available');
  assert.equal('exec' in missing, false);
});

test('a tool request on the discovery subject is a service error (a2a.md 16.9)', async () => {
  const body = `{"protocol":"io.choria.fisk-ai.v1.tool.request","id":"x","request":"x","conversation":"x",` +
    `"sequence":0,"time":"2026-01-01T00:00:00Z","sender":{"name":"caller"},"name":"ping"}`;
  const msg = await nc3.request('choria.fisk-ai.discovery.demo', enc.encode(body), { timeout: 5000 });
  assert.equal(msg.data.length, 0);
  assert.equal(ServiceError.isServiceError(msg), true);
  const err = ServiceError.toServiceError(msg);
  assert.equal(err.code, 400);
  assert.match(err.message, /want "io\.choria\.fisk-ai\.v1\.discovery\.request"/);
  assert.equal(msg.headers.get('Nats-Service-Error-Code'), '400');
});

test('SIGTERM stops the service cleanly: exit 0, the embedded broker stopped', async () => {
  child.kill('SIGTERM');
  const { code } = await exited;
  assert.equal(code, 0, stderr);
  assert.match(stderr, /stopped the embedded NATS server/);
  assert.match(stderr, /a2a server stopped/);
});
