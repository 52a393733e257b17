// A seeded hostile sweep of the queue channel (docs/queue.md) against `fisk-ai-serve serve`: an
// npm `nats` producer puts jobs on the JetStream work queue, most of them mutated at random
// (fields dropped or retyped, bytes flipped, truncated, nested past any sane depth, continuations,
// bad budgets, stray or missing Nats-Msg-Id headers), beside plain jobs. Then it checks that
// nothing is lost: the work stream ends empty, every job is either answered in the task store
// under its task id or filed as a dead letter carrying its stream sequence, every plain job has
// a `result`, the worker still answers a new job, and it stops with status 0 and no sanitizer
// report. SEED and ROUNDS in the environment replay or widen a run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, DeliverPolicy, ReplayPolicy, RetentionPolicy, connect, headers as natsHeaders, nanos } from 'nats';
import { crashMarks, oneToolConversation, serveBinaries, startBroker, startWorker, stopChildren, sweep, waitFor } from './serve_harness.mjs';

const BINS = serveBinaries();
const SEED = Number(process.env.SEED || 20261202);
const ROUNDS = Number(process.env.ROUNDS || 200);

const IDENTITY = 'demo';
const P = 'io.choria.fisk-ai.v1.';
const SUBJECT = `choria.fisk-ai.work.${IDENTITY}`;
const enc = new TextEncoder();
const dec = new TextDecoder();

const { rnd, pick, newId, mutate: mutateWith, mangle } = sweep(SEED);
const mutate = (obj) => mutateWith(obj, ['extra', 'budget', 'continuation', 'stream', 'tool_hints', 'context', 'must_understand']);

const script = { conversations: [oneToolConversation('ORDERS is there.')] };

function job(id, prompt) {
  return {
    protocol: P + 'request', id, request: id, conversation: id, sequence: 0, time: new Date().toISOString(),
    sender: { name: 'producer' }, recipient: { name: IDENTITY }, prompt,
  };
}

let dir, nats, fake, worker, nc, js, jsm, kv;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fiskai-queue-hostile-'));
  let url;
  ({ nats, url } = await startBroker(BINS.natsServer, dir, { jetstream: true }));
  nc = await connect({ servers: url });
  jsm = await nc.jetstreamManager();
  js = nc.jetstream();
  // The storage as docs/queue.md §1 creates it.
  await jsm.streams.add({ name: 'FISK_WORK', subjects: ['choria.fisk-ai.work.>'], retention: RetentionPolicy.Workqueue,
    max_msg_size: 1048576 });
  kv = await js.views.kv('FISK_TASKS', { history: 1, maxValueSize: 786432, ttl: 168 * 3600 * 1000 });
  await jsm.consumers.add('FISK_WORK', { durable_name: IDENTITY, filter_subject: SUBJECT, ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(30000), max_deliver: 5, max_ack_pending: 1000, deliver_policy: DeliverPolicy.All,
    replay_policy: ReplayPolicy.Instant });
  await jsm.streams.add({ name: 'FISK_DEAD', subjects: ['choria.fisk-ai.dead.>'], max_msg_size: 1048576,
    max_age: nanos(720 * 3600 * 1000) });

  ({ fake, worker } = await startWorker(BINS, dir, { identity: IDENTITY, script, ready: /queue: jobs on/,
    expose: `expose:
  agent:
    workers: 4
    queue:
      dead_letter: FISK_DEAD
` }));
});

after(async () => {
  await nc?.close();
  await stopChildren([worker, fake, nats]);
  rmSync(dir, { recursive: true, force: true });
});

// The dead letters filed so far, by the work stream sequence they name.
async function deadLetters() {
  const out = new Map();
  const info = await jsm.streams.info('FISK_DEAD');
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage('FISK_DEAD', { seq }).catch(() => null);
    if (m) out.set(Number(m.header.get('Fisk-Stream-Seq')), { task: m.header.get('Fisk-Task'), error: m.header.get('Fisk-Error') });
  }
  return out;
}

async function answer(task) {
  const e = await kv.get(`${IDENTITY}.${task}`).catch(() => null);
  return e && e.value.length ? JSON.parse(dec.decode(e.value)) : null;
}

test(`hostile jobs are each answered or filed as dead letters, and the worker keeps answering (seed ${SEED})`, async () => {
  const jobs = [];
  for (let round = 0; round < ROUNDS; round++) {
    const id = newId();
    const plain = rnd() < 0.35;
    let body = job(id, pick(['hello', 'how many in ORDERS?']));
    let payload;
    let mangled = false;
    if (plain) {
      payload = enc.encode(JSON.stringify(body));
    } else {
      body = mutate(body);
      const text = JSON.stringify(body);
      mangled = rnd() < 0.3;
      payload = mangled ? mangle(text) : enc.encode(text);
    }
    if (payload.length > 1048576 - 4096) continue;  // the stream refuses it: nothing was queued
    const options = {};
    if (plain || rnd() < 0.7) options.msgID = plain ? id : pick([id, newId(), 'x'.repeat(200), ' ']);
    if (!plain && rnd() < 0.2) {
      const h = natsHeaders();
      h.set(pick(['X-Odd', 'Description', 'Fisk-Task']), pick(['503', 'x'.repeat(2000), 'v']));
      options.headers = h;
    }
    const ack = await js.publish(SUBJECT, payload, options);
    // The task the job names: from the mutated body, or from the mangled bytes when they still
    // parse (a duplicated key, say), as the worker would read them.
    let named = body?.request;
    if (mangled) {
      try { named = JSON.parse(Buffer.from(payload).toString()).request; } catch { named = undefined; }
    }
    jobs.push({ id, plain, mangled, seq: ack.seq, duplicate: ack.duplicate, task: typeof named === 'string' ? named : null,
      sent: Buffer.from(payload).subarray(0, 300).toString() });
    assert.equal(worker.child.exitCode, null, `the worker exited (seed ${SEED}):\n${worker.output().slice(-3000)}`);
  }

  // Everything taken off the queue: acked (answered) or terminated (dead letter).
  await waitFor(async () => (await jsm.streams.info('FISK_WORK')).state.messages === 0, 120000,
    `the work stream to empty (seed ${SEED})`);
  const dead = await deadLetters();
  let answered = 0;
  for (const j of jobs.filter((x) => !x.duplicate)) {
    const where = `job seq ${j.seq} (seed ${SEED}): ${j.sent}`;
    const task = j.task;
    const stored = task ? await answer(task).catch(() => null) : null;
    if (j.plain) {
      assert.ok(stored, `no answer for a plain job: ${where}`);
      assert.equal(stored.protocol, P + 'result', `${where}: ${JSON.stringify(stored)}`);
      assert.ok(!dead.has(j.seq), `a plain job filed dead: ${where}`);
      ++answered;
      continue;
    }
    assert.ok(stored || dead.has(j.seq), `neither answered nor filed dead: ${where}`);
    // A body that names a well-formed task is answered under it, valid or not.
    if (!j.mangled && task !== null && /^[A-Za-z0-9_-]{1,64}$/.test(task)) {
      assert.ok(stored, `no answer under the task it names: ${where}`);
    }
  }
  console.log(`seed ${SEED}: ${jobs.length} jobs, ${answered} plain answered, ${dead.size} dead letters`);

  // Still answering.
  const probe = newId();
  await js.publish(SUBJECT, enc.encode(JSON.stringify(job(probe, 'hello'))), { msgID: probe });
  await waitFor(async () => (await answer(probe)) !== null, 30000, 'the probe job');
  assert.equal((await answer(probe)).protocol, P + 'result');

  worker.child.kill('SIGTERM');
  const { code } = await worker.exited;
  const log = worker.output();
  assert.equal(code, 0, log.slice(-3000));
  for (const mark of crashMarks) assert.doesNotMatch(log, mark);
});
