// The caller's side of the task flow under a hostile worker: `fisk-ai-a2a ask` sends its task
// to a worker written here with the npm `nats` client, which answers with reply sets that break
// the rules at random (mutated or non-JSON messages, numbers repeated or skipped, messages for
// another task or from another sender, 700 KB events, questions of every kind) before a real
// terminal, and sometimes a message after it. Each `ask` must end on its own with the exit code that
// terminal (or the ack) calls for, print a result's text, and show no sanitizer report.
// SEED and ROUNDS in the environment replay or widen a run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { crashMarks, startBroker, stopChildren, sweep } from './serve_harness.mjs';

const A2A_BIN = process.env.FISK_AI_A2A;
const NATS_SERVER = process.env.NATS_SERVER || 'nats-server';
if (!A2A_BIN) throw new Error('set FISK_AI_A2A to the built fisk-ai-a2a');
const SEED = Number(process.env.SEED || 20261202);
const ROUNDS = Number(process.env.ROUNDS || 40);
const { rnd, pick, newId, mutate, mangle } = sweep(SEED);

const IDENTITY = 'demo';
const P = 'io.choria.fisk-ai.v1.';
const enc = new TextEncoder();
const dec = new TextDecoder();

let dir, nats, nc;
const plans = new Map();  // prompt -> what the worker will do with it

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fiskai-ask-hostile-'));
  let url;
  ({ nats, url } = await startBroker(NATS_SERVER, dir));
  nc = await connect({ servers: url });
  // The hostile worker: each request is answered as the plan for its prompt says.
  const sub = nc.subscribe(`choria.fisk-ai.request.${IDENTITY}`, { queue: IDENTITY });
  (async () => {
    for await (const m of sub) {
      let request;
      try { request = JSON.parse(dec.decode(m.data)); } catch { continue; }
      const plan = plans.get(request.prompt);
      if (plan && m.reply) answer(plan, request, m.reply).catch(() => {});
    }
  })();
});

after(async () => {
  await nc?.close();
  await stopChildren([nats]);
  rmSync(dir, { recursive: true, force: true });
});

function reply(protocol, request, sequence, fields) {
  return { protocol: P + protocol, id: newId(), request: request.id, conversation: 'a2a-conv', sequence,
    time: new Date().toISOString(), sender: { name: IDENTITY }, recipient: { name: request.sender?.name ?? 'x' }, ...fields };
}

// One message that breaks a rule, or a valid one in the wrong place.
function hostile(request, sequence) {
  const kind = pick(['event', 'question', 'keepalive', 'text']);
  const base = kind === 'question'
    ? reply('question', request, sequence, pick([
      { question_id: newId(), kind: 'approval', question: 'Approve?', call_id: 'c1', tool: 'stream_rm', command: 'stream rm -- X', window: '2m0s' },
      { question_id: newId(), kind: 'select', question: 'Which?', options: ['A', 'B'], window: '5m0s' },
      { question_id: newId(), kind: 'confirm', question: 'Sure?', window: '5m0s' },
      { question_id: newId(), kind: 'input', question: 'Name?', window: '5m0s' }]))
    : kind === 'keepalive' ? reply('keepalive', request, sequence, {})
      : reply('event', request, sequence, { block: pick([{ type: 'text', text: kind === 'text' ? 'x'.repeat(700000) : 'hi' },
        { type: 'status', iteration: 1, phase: 'calling-llm', usage: { input_tokens: 1, output_tokens: 2 } },
        { type: 'tool_call', id: 'c1', name: 'stream_info', input: { name: 'ORDERS' } }, { type: 'unknown_kind', x: 1 }]) });
  const r = rnd();
  if (r < 0.15) base.request = newId();                       // another task's
  else if (r < 0.25) base.sender = { name: 'intruder' };      // another sender
  else if (r < 0.35) base.sequence = pick([0, -1, sequence - 1, 'x']);  // not a next number
  const text = JSON.stringify(r < 0.7 ? base : mutate(base, ['extra', 'block', 'question_id', 'kind', 'stop_reason']));
  return rnd() < 0.15 ? mangle(text) : enc.encode(text);
}

async function answer(plan, request, inbox) {
  let seq = 1;
  if (plan.ack === 'none') return;
  if (plan.ack === 'refused') {
    nc.publish(inbox, enc.encode(JSON.stringify(reply('ack', request, seq++, { accepted: false, reason: 'busy' }))));
    nc.publish(inbox, enc.encode(JSON.stringify(reply('error', request, seq++, { stop_reason: 'error', error: 'busy', code: 'busy' }))));
    return;
  }
  nc.publish(inbox, enc.encode(JSON.stringify(reply('ack', request, seq++, { accepted: true }))));
  for (let i = 0; i < plan.hostile; i++) {
    // A number skipped (a gap the caller warns of), used, or used again (a repeat it drops).
    if (rnd() < 0.2) seq += 2;
    nc.publish(inbox, hostile(request, seq));
    if (rnd() < 0.7) ++seq;
    if (rnd() < 0.2) await new Promise((r) => setTimeout(r, 5));
  }
  // The terminal takes a number above every one sent: a repeated number is dropped as a
  // duplicate, and then the caller would only stop at its idle limit.
  ++seq;
  const terminal = plan.terminal === 'result'
    ? reply('result', request, seq++, { stop_reason: 'end_turn', text: plan.text, usage: { input_tokens: 1, output_tokens: 2 } })
    : plan.terminal === 'suspended'
      ? reply('result', request, seq++, { stop_reason: 'suspended', text: '' })
      : reply('error', request, seq++, { stop_reason: 'error', error: 'it went wrong', code: 'llm_error' });
  nc.publish(inbox, enc.encode(JSON.stringify(terminal)));
  // A message after the terminal, sometimes a large one: `ask` closes its connection at the
  // terminal, and a message still arriving then must be read whole (nats.c 3.4.1 leaks the
  // buffer of one cut off; conns::connection::close flushes first).
  if (plan.after) {
    const text = rnd() < 0.5 ? 'late' : 'x'.repeat(700000);
    nc.publish(inbox, enc.encode(JSON.stringify(reply('event', request, seq, { block: { type: 'text', text } }))));
  }
}

function ask(prompt) {
  return new Promise((resolve) => {
    const child = spawn(A2A_BIN, ['ask', '--context', 'fleet', '--decline-questions', '--accept-timeout', '3s', '--idle-timeout', '30s',
      IDENTITY, prompt],
      { env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'xdg') }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const killer = setTimeout(() => child.kill('SIGKILL'), 60000);
    child.on('exit', (code, signal) => { clearTimeout(killer); resolve({ code, signal, out, err }); });
  });
}

test(`ask survives a hostile worker and ends as the terminal says (seed ${SEED})`, async () => {
  const codes = {};
  for (let round = 0; round < ROUNDS; round++) {
    const prompt = `round ${round} ${newId()}`;
    const plan = {
      ack: rnd() < 0.05 ? 'none' : rnd() < 0.05 ? 'refused' : 'accepted',
      hostile: Math.floor(rnd() * 8),
      terminal: pick(['result', 'result', 'result', 'error', 'suspended']),
      text: `the answer ${newId()}`,
      after: rnd() < 0.3,
    };
    plans.set(prompt, plan);
    const got = await ask(prompt);
    const where = `round ${round} (seed ${SEED}) plan ${JSON.stringify(plan)}: exit ${got.code}/${got.signal}\n${got.err.slice(-2000)}`;
    assert.equal(got.signal, null, where);
    for (const mark of crashMarks) assert.doesNotMatch(got.err, mark, where);
    const want = plan.ack === 'none' ? 2 : plan.ack === 'refused' ? 3
      : { result: 0, error: 1, suspended: 4 }[plan.terminal];
    assert.equal(got.code, want, where);
    if (want === 0) assert.match(got.out, new RegExp(plan.text), where);
    codes[got.code] = (codes[got.code] ?? 0) + 1;
  }
  console.log(`seed ${SEED}: exit codes ${JSON.stringify(codes)}`);
});
