// A seeded hostile sweep of the task flow (serve.md §6) against `fisk-ai-serve serve`: an npm
// `nats` caller sends requests mutated at random (fields dropped, retyped, oversized, bytes
// flipped, truncated, nested past any sane depth, stray headers, odd reply subjects) and, beside
// real tasks, cancels, answers and keepalives that are malformed, misaddressed, of the wrong kind
// or for questions that do not exist. Then it checks what a caller relies on: every request that
// named an inbox got a reply, every reply set is numbered from 1 without gaps, every acked task
// ended with exactly one terminal and nothing after it, the worker still answers a plain task,
// and its log (a sanitizer build in the suite) holds no sanitizer report. SEED and ROUNDS in the
// environment replay or widen a run; a failure prints the seed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createInbox, headers as natsHeaders } from 'nats';
import { crashMarks, oneToolConversation, serveBinaries, startA2aWorker, stopA2aWorker, sweep, waitFor } from './serve_harness.mjs';

const BINS = serveBinaries();
const SEED = Number(process.env.SEED || 20261202);
const ROUNDS = Number(process.env.ROUNDS || 400);

const IDENTITY = 'demo';
const P = 'io.choria.fisk-ai.v1.';
const MAX_PAYLOAD = 1024 * 1024;  // nats-server's default: a larger publish is the client's error
const enc = new TextEncoder();
const dec = new TextDecoder();

const { rnd, pick, newId, mutate: mutateWith, mangle } = sweep(SEED);
const mutate = (obj) => mutateWith(obj, ['extra', 'must_understand', 'text', 'block', 'accepted', 'decision', 'question_id', 'budget', 'stream']);

function header(protocol, id, task, sequence) {
  return {
    protocol: P + protocol, id, request: task, conversation: task, sequence,
    time: new Date().toISOString(), sender: { name: 'sweeper' }, recipient: { name: IDENTITY },
  };
}

const script = {
  conversations: [
    { name: 'slow', when: { prompt_contains: 'SLOW' }, steps: [
      { faults: [{ delay_ms: 300 }],
        reply: { content: [{ type: 'tool_use', name: 'stream_info', input: { name: 'ORDERS' } }], stop_reason: 'tool_use' } },
      { reply: { content: [{ type: 'text', text: 'slow and done' }], stop_reason: 'end_turn' } }] },
    { name: 'ask', when: { prompt_contains: 'ASK' }, steps: [
      { reply: { content: [{ type: 'tool_use', name: 'ask_human_confirm', input: { question: 'Go on?' } }], stop_reason: 'tool_use' } },
      { reply: { content: [{ type: 'text', text: 'asked' }], stop_reason: 'end_turn' } }] },
    oneToolConversation('ORDERS is there.'),
  ],
};

let served, worker, nc;

before(async () => {
  served = await startA2aWorker(BINS, { prefix: 'fiskai-serve-hostile-', identity: IDENTITY, script, workers: 8 });
  ({ worker, nc } = served);
});

after(() => stopA2aWorker(served));

// A request's inbox and everything that reached it (a body that is not JSON kept raw).
function openInbox(id) {
  const inbox = createInbox();
  const sub = nc.subscribe(inbox);
  const got = [];
  (async () => {
    for await (const m of sub) {
      try { got.push(JSON.parse(dec.decode(m.data))); } catch { got.push({ raw: dec.decode(m.data) }); }
    }
  })();
  return { id, inbox, sub, got, answered: true };
}

const isTerminal = (m) => m.protocol === P + 'result' || m.protocol === P + 'error';
const isAck = (m) => m.protocol === P + 'ack';
const valid = (id, prompt) => ({ ...header('request', id, id, 0), prompt, stream: true });

test(`hostile requests and control messages leave every reply set whole and the worker answering (seed ${SEED})`, async () => {
  const tasks = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (rnd() < 0.5) {
      // A mutated request; some name no inbox of ours, some are too large to publish at all.
      const id = newId();
      const t = openInbox(id);
      tasks.push(t);
      const text = JSON.stringify(mutate(valid(id, pick(['hello', 'SLOW please']))));
      const payload = rnd() < 0.3 ? mangle(text) : enc.encode(text);
      const options = { reply: rnd() < 0.9 ? t.inbox : pick(['a.b.c', 'x'.repeat(3000), `${t.inbox}.x`, `choria.fisk-ai.request.${IDENTITY}`]) };
      if (rnd() < 0.2) {
        const h = natsHeaders();
        h.set(pick(['Nats-Msg-Id', 'X-Odd', 'Description']), pick(['503', 'x'.repeat(2000), 'v']));
        options.headers = h;
      }
      t.answered = options.reply === t.inbox && payload.length < MAX_PAYLOAD - 4096;
      if (payload.length < MAX_PAYLOAD - 4096) nc.publish(`choria.fisk-ai.request.${IDENTITY}`, payload, options);
      continue;
    }
    // A real task, and hostile control messages while it runs.
    const id = newId();
    const t = openInbox(id);
    tasks.push(t);
    const prompt = pick(['hi', 'SLOW', 'ASK']);
    await nc.flush();
    nc.publish(`choria.fisk-ai.request.${IDENTITY}`, enc.encode(JSON.stringify(valid(id, prompt))), { reply: t.inbox });
    const n = 1 + Math.floor(rnd() * 4);
    for (let i = 0; i < n; i++) {
      const route = pick(['cancel', 'elicit']);
      const question = t.got.find((m) => m.protocol === P + 'question');
      const body = {
        ...header(pick(['cancel', 'answer', 'keepalive', 'request', 'ack', 'result']), newId(), pick([id, id, newId(), '']), 1 + i),
        reason: 'sweep', decision: pick(['once', 'run', 'deny', 'bogus']), confirmed: pick([true, false, 'yes']),
        question_id: question ? pick([question.question_id, newId()]) : newId(), declined: rnd() < 0.2,
      };
      const text = JSON.stringify(rnd() < 0.5 ? mutate(body) : body);
      const subject = pick([`choria.fisk-ai.${route}.${IDENTITY}.${id}`, `choria.fisk-ai.${route}.${IDENTITY}.${newId()}`]);
      nc.publish(subject, rnd() < 0.2 ? mangle(text) : enc.encode(text));
      if (rnd() < 0.3) await new Promise((r) => setTimeout(r, Math.floor(rnd() * 40)));
    }
    if (prompt === 'ASK') {
      // Its question holds a slot for its whole window: end it, by an answer or a cancel.
      await waitFor(() => t.got.some((m) => m.protocol === P + 'question' || isTerminal(m)), 10000, 'a question').catch(() => {});
      const question = t.got.find((m) => m.protocol === P + 'question');
      if (question && rnd() < 0.5) {
        nc.publish(`choria.fisk-ai.elicit.${IDENTITY}.${id}`, enc.encode(JSON.stringify({
          ...header('answer', newId(), id, 9), question_id: question.question_id, confirmed: true })));
      } else {
        nc.publish(`choria.fisk-ai.cancel.${IDENTITY}.${id}`, enc.encode(JSON.stringify({ ...header('cancel', newId(), id, 9), reason: 'sweep' })));
      }
    }
    if (round % 50 === 49) await nc.flush();
    assert.equal(worker.child.exitCode, null, `the worker exited (seed ${SEED}):\n${worker.output().slice(-3000)}`);
  }

  // Any task still running (a mutated request may have become a real task) is cancelled.
  await new Promise((r) => setTimeout(r, 500));
  for (const t of tasks) {
    if (t.got.some(isAck) && !t.got.some(isTerminal)) {
      nc.publish(`choria.fisk-ai.cancel.${IDENTITY}.${t.id}`, enc.encode(JSON.stringify({ ...header('cancel', newId(), t.id, 9), reason: 'sweep' })));
    }
  }
  await waitFor(() => tasks.every((t) => (!t.answered || t.got.length > 0) && (!t.got.some(isAck) || t.got.some(isTerminal))),
    60000, 'every request answered and every acked task ended').catch(() => {});
  await new Promise((r) => setTimeout(r, 300));  // anything published after a terminal arrives too

  let acked = 0, refused = 0, completed = 0;
  for (const t of tasks) {
    const where = `task ${t.id} (seed ${SEED}): ${JSON.stringify(t.got).slice(0, 600)}`;
    if (t.answered) assert.ok(t.got.length > 0, `no reply at all: ${where}`);
    const set = t.got.filter((m) => m.sequence !== undefined);
    set.forEach((m, i) => assert.equal(m.sequence, i + 1, `numbered from 1 without gaps: ${where}`));
    if (!t.got.some(isAck)) continue;
    ++acked;
    if (t.got.find(isAck).accepted === false) ++refused;
    const terminals = t.got.filter(isTerminal).length;
    assert.equal(terminals, 1, `exactly one terminal: ${where}`);
    assert.ok(isTerminal(t.got[t.got.length - 1]), `nothing after the terminal: ${where}`);
    if (t.got.some((m) => m.protocol === P + 'result' && m.stop_reason === 'end_turn')) ++completed;
  }
  assert.ok(acked > ROUNDS / 4, `acked ${acked} of ${ROUNDS} rounds`);
  assert.ok(completed > 0, 'some tasks completed');
  console.log(`seed ${SEED}: ${tasks.length} requests, ${acked} acked (${refused} refused), ${completed} completed`);

  // Still answering a plain task.
  const probe = openInbox(newId());
  await nc.flush();
  nc.publish(`choria.fisk-ai.request.${IDENTITY}`, enc.encode(JSON.stringify(valid(probe.id, 'hello'))), { reply: probe.inbox });
  await waitFor(() => probe.got.some(isTerminal), 30000, 'the probe task');
  assert.equal(probe.got.find(isTerminal).protocol, P + 'result', JSON.stringify(probe.got));

  // A clean stop, and nothing a sanitizer (or std::terminate) would print.
  worker.child.kill('SIGTERM');
  const { code } = await worker.exited;
  const log = worker.output();
  assert.equal(code, 0, log.slice(-3000));
  for (const mark of crashMarks) assert.doesNotMatch(log, mark);
});
