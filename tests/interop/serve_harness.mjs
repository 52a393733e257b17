// What the fisk-ai-serve interop tests share: children with their output collected, waits on
// conditions, free ports, and for the hostile sweeps a seeded generator of odd values, mutated
// messages and mangled bytes.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';

// Resolves when `predicate()` holds, rejects after `ms` milliseconds.
export async function waitFor(predicate, ms, what) {
  const end = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// A child whose output is collected; `ready` resolves once `pattern` appears in it.
export function start(cmd, args, env, pattern) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const ready = waitFor(() => pattern.test(out) || child.exitCode !== null, 60000, `${cmd} to start`)
    .then(() => { if (!pattern.test(out)) throw new Error(`${cmd} did not start:\n${out}`); });
  return { child, ready, exited, output: () => out };
}

// A nats-server on a free loopback port (JetStream under `dir` when asked), and the NATS
// context `fleet` naming it under dir/xdg (the tests' XDG_CONFIG_HOME); resolves to the child
// and the broker's URL.
export async function startBroker(natsServer, dir, { jetstream = false } = {}) {
  const port = await freePort();
  const args = ['-a', '127.0.0.1', '-p', String(port)];
  if (jetstream) args.push('-js', '-sd', join(dir, 'js'));
  const nats = start(natsServer, args, {}, /Server is ready/);
  await nats.ready;
  const url = `nats://127.0.0.1:${port}`;
  mkdirSync(join(dir, 'xdg/nats/context'), { recursive: true });
  writeFileSync(join(dir, 'xdg/nats/context/fleet.json'), JSON.stringify({ url }));
  return { nats, url };
}

// The scripted fake model (docs/llm.md) on a free port, with `script` written into `dir`
// (and every request logged to llm.jsonl there); resolves to the child and the model's port.
export async function startFakeModel(bin, dir, script) {
  writeFileSync(join(dir, 'script.json'), JSON.stringify(script));
  const fake = start(bin, ['--script', join(dir, 'script.json'), '--port', '0', '--log', join(dir, 'llm.jsonl'),
    '--exit-with-parent'], {}, /fake-llm listening on 127\.0\.0\.1:\d+/);
  await fake.ready;
  return { fake, port: fake.output().match(/listening on 127\.0\.0\.1:(\d+)/)[1] };
}

// A worker's configuration up to its expose section: the demo application as its tools, the
// NATS context `fleet` (unless `nats` is false), the fake model on `llmPort`, file sessions in
// `runsDir`, and the human-in-the-loop tools when asked for. Each test appends its `expose:`.
export function workerConfig(identity, demoBin, llmPort, runsDir, { humanInTheLoop = false, nats = true } = {}) {
  return `identity: ${identity}
application_path: ${JSON.stringify(demoBin)}
${nats ? 'nats_context: fleet\n' : ''}system_prompt: You operate the fisk-demo tool.
llm:
  provider: anthropic
  model: fake
  base_url: http://127.0.0.1:${llmPort}
harness:
${humanInTheLoop ? '  human_in_the_loop:\n    enabled: true\n' : ''}  sessions:
    backend: file
    options:
      directory: ${JSON.stringify(runsDir)}
`;
}

// The fake model conversation most sweeps need: a text block and one `stream_info ORDERS` call,
// then `answer`. It matches any prompt, so it goes last among a script's conversations.
export function oneToolConversation(answer) {
  return { name: 'plain', steps: [
    { reply: { content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', name: 'stream_info', input: { name: 'ORDERS' } }],
               stop_reason: 'tool_use' } },
    { reply: { content: [{ type: 'text', text: answer }], stop_reason: 'end_turn' } }] };
}

// The fake model with `script`, then `fisk-ai-serve serve` on workerConfig(...) + `expose` (the
// config's `expose:` section), with the demo's state and XDG_CONFIG_HOME under `dir` and `env`
// added; resolves to both children once `ready` shows in the worker's output.
export async function startWorker(bins, dir, { identity, script, expose, ready, env = {}, humanInTheLoop = false,
  nats = true }) {
  const { fake, port } = await startFakeModel(bins.fakeModel, dir, script);
  writeFileSync(join(dir, 'serve.yaml'), workerConfig(identity, bins.demo, port, join(dir, 'runs'), { humanInTheLoop, nats }) + expose);
  const worker = start(bins.serve, ['serve', '--config', join(dir, 'serve.yaml')],
    { XDG_CONFIG_HOME: join(dir, 'xdg'), ANTHROPIC_API_KEY: 'fake', DEMO_STATE_DIR: dir, ...env }, ready);
  await worker.ready;
  return { fake, worker };
}

// SIGTERM to each child still running, in order, waiting for each; one that has not exited
// 10 s later (a worker that failed its test may still wait on a question) gets SIGKILL.
export async function stopChildren(children) {
  for (const c of children) {
    if (!c || c.child.exitCode !== null || c.child.signalCode !== null) continue;
    c.child.kill('SIGTERM');
    const killer = setTimeout(() => c.child.kill('SIGKILL'), 10000);
    await c.exited;
    clearTimeout(killer);
  }
}

// A served a2a agent on a broker of its own: a scratch directory, nats-server, the fake model
// with `script`, a worker of `identity` with `workers` slots (human-in-the-loop tools and
// elicitation on), and a client connection to the broker. stopA2aWorker ends it all.
export async function startA2aWorker(bins, { prefix, identity, script, workers }) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const { nats, url } = await startBroker(bins.natsServer, dir);
  const { fake, worker } = await startWorker(bins, dir, { identity, script, humanInTheLoop: true,
    ready: new RegExp(`a2a: requests on choria\\.fisk-ai\\.request\\.${identity}`), expose: `expose:
  agent:
    workers: ${workers}
    a2a:
      prompts:
        elicitation: true
` });
  const nc = await connect({ servers: url });
  return { dir, nats, fake, worker, nc };
}

export async function stopA2aWorker({ dir, nats, fake, worker, nc } = {}) {
  await nc?.close();
  await stopChildren([worker, fake, nats]);
  if (dir) rmSync(dir, { recursive: true, force: true });
}

// The built binaries the serve tests run, from the environment CTest sets.
export function serveBinaries() {
  const bins = {
    serve: process.env.FISK_AI_SERVE, demo: process.env.FISK_DEMO, fakeModel: process.env.FISKAI_FAKE_LLM,
    natsServer: process.env.NATS_SERVER || 'nats-server',
  };
  if (!bins.serve || !bins.demo || !bins.fakeModel) {
    throw new Error('set FISK_AI_SERVE, FISK_DEMO and FISKAI_FAKE_LLM to the built binaries');
  }
  return bins;
}

// Sanitizer reports and std::terminate, any of which fails a sweep.
export const crashMarks = [/AddressSanitizer/, /LeakSanitizer/, /runtime error:/, /terminate called/];

// A hostile sweep's randomness, all from one seed (mulberry32, in 32-bit integer arithmetic),
// so that a seed replays the same sweep.
export function sweep(seed) {
  let state = seed >>> 0;
  const rnd = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = (items) => items[Math.floor(rnd() * items.length)];
  const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const newId = () => Array.from({ length: 27 }, () => B62[Math.floor(rnd() * 62)]).join('');

  // What a hostile sender could put in a field.
  const oddValue = () => pick([
    null, true, false, 0, -1, 1e308, -1e308, 2 ** 63, 1.5, '', ' ', 'x'.repeat(rnd() < 0.1 ? 700000 : 5000), '\u0000',
    '\ud800', '💥'.repeat(100), '../../etc/passwd', 'a.b.*.>', '>', '*', [], [1, 2], {}, { a: { b: { c: [] } } },
    '2026-13-45T99:99:99Z', '1s', '-5s', '99999999h', 'once', 'run', 'deny', newId(), 'choria.fisk-ai.cancel.demo.x',
  ]);

  // A field dropped, added (one of `extraKeys`; `budget` gets odd budgets) or replaced, at
  // any depth. Mutates `obj` and returns it, or returns the value that replaces it.
  function mutate(obj, extraKeys, depth = 0) {
    if (obj === null || typeof obj !== 'object' || depth > 3) return oddValue();
    const keys = Object.keys(obj);
    const r = rnd();
    if (r < 0.15 && keys.length) { delete obj[pick(keys)]; return obj; }
    if (r < 0.3) {
      const key = pick(extraKeys);
      obj[key] = key === 'budget'
        ? { call_timeout: pick(['0s', '-1s', 'soon', '1h', 5]), max_tokens: pick([-1, 0, 10]) } : oddValue();
      return obj;
    }
    if (!keys.length) return oddValue();
    const k = pick(keys);
    obj[k] = rnd() < 0.6 ? oddValue() : mutate(obj[k], extraKeys, depth + 1);
    return obj;
  }

  // The encoded text cut short, bytes flipped, nested deeper than any parser allows, or with
  // invalid UTF-8 after it.
  function mangle(text) {
    const b = Buffer.from(text);
    const r = rnd();
    if (r < 0.3) return b.subarray(0, Math.floor(rnd() * b.length));
    if (r < 0.6) {
      for (let i = 0; i < 1 + rnd() * 5; i++) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
      return b;
    }
    if (r < 0.7) return Buffer.from('['.repeat(100000));
    if (r < 0.8) return Buffer.from('{"a":'.repeat(5000) + '1' + '}'.repeat(5000));
    if (r < 0.9) return Buffer.concat([b, Buffer.from([0xff, 0xfe, 0x00])]);
    return Buffer.from(text.replace('"prompt"', '"prompt":"a","prompt"'));
  }

  return { rnd, pick, newId, oddValue, mutate, mangle };
}
