// The task flow over NATS (serve.md §6) driven from JavaScript with the npm `nats` client:
// a caller written only from the wire contract sends tasks to a real `fisk-ai-serve serve`
// worker (the demo application, the scripted fiskai-fake-llm, a real nats-server) and checks
// every message of each reply set: numbering from 1 without gaps, `request` = the task,
// `conversation` = the session id derived as §5.6 says (recomputed here), exactly one terminal.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createInbox, nuid } from 'nats';
import { serveBinaries, startA2aWorker, stopA2aWorker } from './serve_harness.mjs';

const BINS = serveBinaries();

const IDENTITY = 'demo';
const CALLER = 'js-caller';
const P = 'io.choria.fisk-ai.v1.';
const enc = new TextEncoder();
const dec = new TextDecoder();

// §5.6: a2a session ids are derived from (identity, sender, task), never taken from the caller.
function sessionId(task) {
  const h = createHash('sha256');
  h.update(['fisk-ai.session.a2a.v1', IDENTITY, CALLER, task].join('\0'));
  return `a2a-${h.digest('hex').slice(0, 40)}`;
}

function header(protocol, id, task, sequence) {
  return {
    protocol: P + protocol, id, request: task, conversation: task, sequence,
    time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    sender: { name: CALLER }, recipient: { name: IDENTITY },
  };
}

// Steps are chosen by the number of assistant messages in the request (docs/llm.md), so a
// continuation of a finished conversation lands on the step after its last one.
const script = {
  conversations: [
    { name: 'orders', when: { prompt_contains: 'ORDERS' }, steps: [
      { expect: { tools_include: ['stream_info'] },
        reply: { content: [{ type: 'text', text: 'Checking the stream.' },
                           { type: 'tool_use', name: 'stream_info', input: { name: 'ORDERS' } }],
                 stop_reason: 'tool_use', usage: { input_tokens: 1200, output_tokens: 80 } } },
      { expect: { last_tool_result_contains: 'ORDERS' },
        reply: { content: [{ type: 'text', text: 'ORDERS is there.' }], stop_reason: 'end_turn',
                 usage: { input_tokens: 1300, output_tokens: 20 } } },
      { reply: { content: [{ type: 'text', text: 'Still there, as I said.' }], stop_reason: 'end_turn' } }] },
    // The first call is slow, so a cancel lands while it is in flight.
    { name: 'slow', when: { prompt_contains: 'SLOWLY' }, steps: [
      { faults: [{ delay_ms: 3000 }],
        reply: { content: [{ type: 'tool_use', name: 'stream_info', input: { name: 'SLOW' } }], stop_reason: 'tool_use' } },
      { reply: { content: [{ type: 'text', text: 'Resumed and done.' }], stop_reason: 'end_turn' } }] },
    { name: 'confirm', when: { prompt_contains: 'CONFIRM' }, steps: [
      { reply: { content: [{ type: 'tool_use', name: 'ask_human_confirm', input: { question: 'Delete stream ORDERS?' } }],
                 stop_reason: 'tool_use' } },
      { expect: { last_tool_result_contains: '"confirmed":true' },
        reply: { content: [{ type: 'text', text: 'The operator confirmed.' }], stop_reason: 'end_turn' } }] },
    { name: 'approval', when: { prompt_contains: 'REMOVE' }, steps: [
      { reply: { content: [{ type: 'tool_use', name: 'stream_rm', input: { name: 'ORDERS' } }], stop_reason: 'tool_use' } },
      { reply: { content: [{ type: 'text', text: 'Removed.' }], stop_reason: 'end_turn' } }] },
  ],
};

let served, worker, nc;

before(async () => {
  served = await startA2aWorker(BINS, { prefix: 'fiskai-serve-js-', identity: IDENTITY, script, workers: 2 });
  ({ worker, nc } = served);
});

after(() => stopA2aWorker(served));

// One request and its reply set, read from the caller's inbox. `outgoing` numbers the
// caller's cancel/answer/keepalive messages from 1 (the request is 0).
class Task {
  constructor(task, { continuation = false } = {}) {
    this.task = task;
    this.id = continuation ? nuid.next() : task;
    this.inbox = createInbox();
    this.sub = nc.subscribe(this.inbox);
    this.received = [];
    this.waiters = [];
    this.outgoing = 0;
    (async () => {
      for await (const m of this.sub) {
        this.received.push(JSON.parse(dec.decode(m.data)));
        for (const w of this.waiters.splice(0)) w();
      }
    })();
    this.read = 0;
  }

  async send(prompt) {
    const body = { ...header('request', this.id, this.task, 0), prompt };
    await nc.flush();  // the inbox subscription is known to the server before anybody replies
    nc.publish(`choria.fisk-ai.request.${IDENTITY}`, enc.encode(JSON.stringify(body)), { reply: this.inbox });
  }

  // The next message of the set, checked against the rules every message obeys.
  async next(ms = 20000) {
    if (this.read === this.received.length) {
      await Promise.race([
        new Promise((r) => this.waiters.push(r)),
        new Promise((_, reject) => setTimeout(() => reject(new Error(
          `no message ${this.read + 1} for task ${this.task} within ${ms} ms; got ${JSON.stringify(this.received)}`)), ms)),
      ]);
    }
    const m = this.received[this.read++];
    assert.equal(m.sequence, this.read, `gap-free numbering: ${JSON.stringify(m)}`);
    assert.equal(m.request, this.task);
    assert.equal(m.conversation, sessionId(this.task));
    assert.equal(m.sender.name, IDENTITY);
    assert.notEqual(m.id, this.id);
    return m;
  }

  // Reads up to and including the terminal; returns the messages read (terminal last).
  async untilTerminal() {
    const got = [];
    for (;;) {
      const m = await this.next();
      got.push(m);
      if (m.protocol === `${P}result` || m.protocol === `${P}error`) return got;
    }
  }

  publish(subject, protocol, fields) {
    this.outgoing += 1;
    const body = { ...header(protocol, nuid.next(), this.task, this.outgoing), ...fields };
    nc.publish(`choria.fisk-ai.${subject}.${IDENTITY}.${this.id}`, enc.encode(JSON.stringify(body)));
  }
}

const tasks = [];
function newTask(task, opts) {
  const t = new Task(task, opts);
  tasks.push(t);
  return t;
}

const blocks = (msgs) => msgs.filter((m) => m.protocol === `${P}event`).map((m) => m.block);
const kinds = (msgs) => blocks(msgs).filter((b) => b.type !== 'status').map((b) => b.type);
const phases = (msgs) => blocks(msgs).filter((b) => b.type === 'status').map((b) => b.phase);

test('a new task: ack as sequence 1, the events in order, one result; a continuation follows up', async () => {
  const R = nuid.next();
  const t = newTask(R);
  await t.send('How many messages are in ORDERS?');
  const ack = await t.next();
  assert.equal(ack.protocol, `${P}ack`);
  assert.equal(ack.accepted, true);
  assert.equal(ack.recipient.name, CALLER);
  const rest = await t.untilTerminal();
  assert.deepEqual(kinds(rest), ['text', 'tool_call', 'tool_result', 'text']);
  assert.deepEqual(phases(rest).slice(0, 2), ['calling-llm', 'executing-tool']);
  const call = blocks(rest).find((b) => b.type === 'tool_call');
  assert.equal(call.name, 'stream_info');
  assert.deepEqual(call.input, { name: 'ORDERS' });
  const result = blocks(rest).find((b) => b.type === 'tool_result');
  assert.equal(result.call_id, call.id);
  assert.ok(!result.is_error, JSON.stringify(result));
  assert.match(result.output, /ORDERS/);
  const terminal = rest.at(-1);
  assert.equal(terminal.protocol, `${P}result`);
  assert.equal(terminal.stop_reason, 'end_turn');
  assert.equal(terminal.text, 'ORDERS is there.');
  assert.equal(terminal.recipient.name, CALLER);
  assert.ok(terminal.usage.input_tokens >= 2500, JSON.stringify(terminal.usage));

  // The continuation: a fresh id, `request` = the task; same session, numbered from 1 again.
  const c = newTask(R, { continuation: true });
  await c.send('And now?');
  assert.equal((await c.next()).accepted, true);
  const more = await c.untilTerminal();
  assert.equal(more.at(-1).protocol, `${P}result`);
  assert.equal(more.at(-1).text, 'Still there, as I said.');
});

test('a new task reusing a taken id is refused: negative ack, then a terminal error', async () => {
  const R = nuid.next();
  const first = newTask(R);
  await first.send('Describe ORDERS');
  await first.untilTerminal();
  const again = newTask(R);
  await again.send('Describe ORDERS');
  const ack = await again.next();
  assert.equal(ack.accepted, false);
  assert.equal(ack.reason, `task "${R}" was already taken here; continue it with --continue ${R}`);
  const err = await again.next();
  assert.equal(err.protocol, `${P}error`);
  assert.equal(err.code, 'duplicate_task');
  assert.equal(err.error, ack.reason);
});

test('a continuation of a task nobody ran is refused as unknown', async () => {
  const R = nuid.next();
  const c = newTask(R, { continuation: true });
  await c.send('Continue it');
  const ack = await c.next();
  assert.equal(ack.accepted, false);
  const err = await c.next();
  assert.equal(err.code, 'unknown_task');
  assert.equal(err.error, `task "${R}" is not known to this worker`);
});

test('a cancel mid-run parks the run: status stopping, terminal suspended; the continuation resumes it', async () => {
  const R = nuid.next();
  const t = newTask(R);
  await t.send('Look at SLOWLY changing streams');
  assert.equal((await t.next()).accepted, true);
  const seen = [];
  // Cancel while the first (delayed) model call is in flight.
  for (;;) {
    const m = await t.next();
    seen.push(m);
    if (m.block?.type === 'status' && m.block.phase === 'calling-llm') break;
  }
  t.publish('cancel', 'cancel', { reason: 'interrupted from JavaScript' });
  seen.push(...await t.untilTerminal());
  assert.ok(phases(seen).includes('stopping'), JSON.stringify(phases(seen)));
  const terminal = seen.at(-1);
  assert.equal(terminal.protocol, `${P}result`);
  assert.equal(terminal.stop_reason, 'suspended');
  // The call in flight completes and its tool runs; the loop stops before the next call.
  assert.deepEqual(kinds(seen), ['tool_call', 'tool_result']);

  const c = newTask(R, { continuation: true });
  await c.send('Go on');
  assert.equal((await c.next()).accepted, true);
  const more = await c.untilTerminal();
  assert.equal(more.at(-1).protocol, `${P}result`);
  assert.equal(more.at(-1).stop_reason, 'end_turn');
  assert.equal(more.at(-1).text, 'Resumed and done.');
});

test('a question is answered over the elicit subject (keepalive first, then the answer)', async () => {
  const R = nuid.next();
  const t = newTask(R);
  await t.send('CONFIRM before you delete');
  assert.equal((await t.next()).accepted, true);
  const before = [];
  let q;
  for (;;) {
    const m = await t.next();
    if (m.protocol === `${P}question`) { q = m; break; }
    before.push(m);
  }
  // Amendment 2: the status comes before the question.
  assert.equal(phases(before).at(-1), 'waiting-for-answer');
  const call = blocks(before).find((b) => b.type === 'tool_call');
  assert.ok(call, JSON.stringify([...before, q]));
  assert.equal(q.kind, 'confirm');
  assert.equal(q.question, 'Delete stream ORDERS?');
  assert.equal(q.call_id, call.id);
  assert.match(q.question_id, /^[a-zA-Z0-9_-]{1,64}$/);
  assert.match(q.window, /^\d+m\d+s$/);
  t.publish('elicit', 'keepalive', { question_id: q.question_id });
  t.publish('elicit', 'answer', { question_id: q.question_id, confirmed: true });
  const rest = await t.untilTerminal();
  const result = blocks(rest).find((b) => b.type === 'tool_result');
  assert.equal(result.call_id, call.id);
  assert.equal(JSON.parse(result.output).confirmed, true);
  assert.equal(rest.at(-1).text, 'The operator confirmed.');
});

test('an approval question is answered "once" and the gated command runs', async () => {
  const R = nuid.next();
  const t = newTask(R);
  await t.send('REMOVE the stream called orders');
  assert.equal((await t.next()).accepted, true);
  let q;
  while (!q) {
    const m = await t.next();
    if (m.protocol === `${P}question`) q = m;
  }
  assert.equal(q.kind, 'approval');
  assert.equal(q.tool, 'stream_rm');
  assert.equal(q.tag, 'ai:confirm');
  assert.match(q.command, /stream rm .*ORDERS/);
  t.publish('elicit', 'answer', { question_id: q.question_id, decision: 'once' });
  const rest = await t.untilTerminal();
  const result = blocks(rest).find((b) => b.type === 'tool_result');
  assert.ok(!result.is_error, JSON.stringify(result));
  assert.ok(!result.exec.exit_code, JSON.stringify(result));  // 0 is omitted
  assert.equal(rest.at(-1).stop_reason, 'end_turn');
});

test('after the worker drains, no reply set got a message past its terminal', async () => {
  worker.child.kill('SIGTERM');
  const { code } = await worker.exited;
  assert.equal(code, 0, worker.output());
  await nc.flush();
  for (const t of tasks) {
    assert.equal(t.received.length, t.read, `task ${t.task}: extra ${JSON.stringify(t.received.slice(t.read))}`);
  }
});
