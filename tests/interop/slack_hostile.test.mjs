// A seeded hostile sweep of the Slack channel (docs/slack.md) against `fisk-ai-serve serve` and
// fiskai-fake-slack: events with odd channels, users, texts (empty, 40 KB, mentions of anybody),
// thread stamps and subtypes; raw Socket Mode frames that Slack never sends (mutated events_api,
// interactive and slash-command envelopes, bytes that are not JSON); and, on real questions,
// mutated clicks before the real one. Then it checks that the worker acked every envelope the
// fake delivered, still answers a new mention, and stops with status 0 and no sanitizer report.
// SEED and ROUNDS in the environment replay or widen a run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crashMarks, oneToolConversation, serveBinaries, start, startWorker, stopChildren, sweep, waitFor } from './serve_harness.mjs';

const BINS = serveBinaries();
const FAKE_SLACK_BIN = process.env.FISKAI_FAKE_SLACK;
if (!FAKE_SLACK_BIN) throw new Error('set FISKAI_FAKE_SLACK to the built fiskai-fake-slack');
const SEED = Number(process.env.SEED || 20261202);
const ROUNDS = Number(process.env.ROUNDS || 300);
const { rnd, pick, newId, oddValue, mutate, mangle } = sweep(SEED);

const script = {
  conversations: [
    { name: 'confirm', when: { prompt_contains: 'CONFIRM' }, steps: [
      { reply: { content: [{ type: 'tool_use', name: 'ask_human_confirm', input: { question: 'Go on?' } }], stop_reason: 'tool_use' } },
      { reply: { content: [{ type: 'text', text: 'Confirmed, done.' }], stop_reason: 'end_turn' } }] },
    oneToolConversation('ORDERS is **there**.'),
  ],
};

let dir, fake, slack, slackUrl, worker;

async function control(path, body) {
  const res = await fetch(`${slackUrl}${path}`, { method: body === undefined ? 'GET' : 'POST',
    body: body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body) });
  return { status: res.status, body: await res.json().catch(() => null) };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fiskai-slack-hostile-'));
  slack = start(FAKE_SLACK_BIN, ['--port', '0', '--exit-with-parent'], {}, /fake-slack listening on 127\.0\.0\.1:\d+/);
  await slack.ready;
  slackUrl = `http://127.0.0.1:${slack.output().match(/listening on 127\.0\.0\.1:(\d+)/)[1]}`;
  ({ fake, worker } = await startWorker(BINS, dir, { identity: 'demo', script, humanInTheLoop: true, nats: false, ready: /services:/,
    env: { TEST_SLACK_APP_TOKEN: 'xapp-test', TEST_SLACK_BOT_TOKEN: 'xoxb-test' },
    expose: `expose:
  agent:
    workers: 4
    slack:
      app_token_env: TEST_SLACK_APP_TOKEN
      bot_token_env: TEST_SLACK_BOT_TOKEN
      api_base_url: ${slackUrl}/api
      question_timeout: 30s
` }));
});

after(async () => {
  await stopChildren([worker, slack, fake]);
  rmSync(dir, { recursive: true, force: true });
});

const botMessages = async (threadTs) =>
  ((await control(`/_fake/messages?thread_ts=${threadTs}`)).body?.messages ?? []);

// A click on the message `messageTs` as Socket Mode frames it (`actionId`: one of its buttons).
function clickEnvelope(messageTs, actionId) {
  return { envelope_id: newId(), type: 'interactive', accepts_response_payload: false, retry_attempt: 0, payload: {
    type: 'block_actions', user: { id: pick(['UHUMAN', 'UBOT', '']) }, channel: { id: 'C1' },
    container: { type: 'message', message_ts: messageTs, channel_id: 'C1', thread_ts: messageTs },
    message: { ts: messageTs, blocks: [] },
    actions: [{ type: 'button', action_id: actionId ?? pick(['q:1:yes', 'approve', newId()]), value: pick(['yes', 'once', '']),
      block_id: 'b', action_ts: '1700001000.000001' }] } };
}

// A frame of a kind the worker reads (or does not), for mutating.
function frameTemplate(messageTs) {
  const kind = pick(['events_api', 'interactive', 'slash_commands', 'disconnect', 'hello', 'other']);
  if (kind === 'interactive') return clickEnvelope(messageTs);
  if (kind === 'disconnect') return { type: 'disconnect', reason: pick(['warning', 'unknown', 7]) };
  return { envelope_id: newId(), type: kind, accepts_response_payload: false, retry_attempt: 0, payload: {
    type: 'event_callback', event_id: `Ev${newId()}`, team_id: 'T1',
    event: { type: pick(['app_mention', 'message', 'reaction_added']), user: 'UHUMAN', text: '<@UBOT> hi', ts: '1700000000.5',
      channel: 'C1', thread_ts: messageTs } } };
}

test(`hostile events, frames and clicks leave the Slack channel acking and answering (seed ${SEED})`, async () => {
  const delivered = new Set();  // envelope ids the fake delivered (and keeps re-sending until acked)
  const threads = [];
  for (let round = 0; round < ROUNDS; round++) {
    const r = rnd();
    if (r < 0.35) {
      const event = {
        type: pick(['app_mention', 'message']), channel: pick(['C1', 'D1', 'G1', '', 'C'.repeat(300), 'C1\u0000']),
        user: pick(['UHUMAN', 'UBOT', '', 'U'.repeat(500)]),
        text: pick(['<@UBOT> hello', '', '<@UBOT>', `<@UBOT> ${'x'.repeat(40000)}`, '<@UOTHER> hi', '<@UBOT> <!channel>',
          `<@UBOT> ${oddValue()}`, '```<@UBOT>```', '<@UBOT|bot> hi']),
      };
      if (rnd() < 0.4) event.thread_ts = pick([threads.length ? pick(threads) : '1700000000.000001', 'abc', '0', '9999999999.999999']);
      if (rnd() < 0.2) event.subtype = pick(['message_changed', 'bot_message', 'channel_join', 'thread_broadcast']);
      if (rnd() < 0.2) event.channel_type = pick(['im', 'channel', 'mpim', 'weird']);
      if (rnd() < 0.1) event.bot_id = 'B1';
      const got = await control('/_fake/event', event);
      if (got.status === 200) {
        delivered.add(got.body.envelope_id);
        if (event.text === '<@UBOT> hello' && !event.thread_ts) threads.push(got.body.ts);
      }
    } else if (r < 0.8) {
      const template = frameTemplate(threads.length ? pick(threads) : '1700000000.000001');
      const text = JSON.stringify(rnd() < 0.7 ? mutate(template, ['extra', 'payload', 'type', 'envelope_id', 'retry_attempt']) : template);
      await control('/_fake/raw', rnd() < 0.25 ? mangle(text) : text);
    } else {
      // A real question, hostile clicks on it, then the real click.
      const got = await control('/_fake/event', { type: 'app_mention', channel: 'C1', user: 'UHUMAN', text: '<@UBOT> CONFIRM this' });
      assert.equal(got.status, 200, JSON.stringify(got.body));
      delivered.add(got.body.envelope_id);
      let question;
      await waitFor(async () => {
        question = (await botMessages(got.body.ts)).find((m) => (m.blocks ?? []).some((b) => b.type === 'actions'));
        return question !== undefined;
      }, 20000, 'the question').catch(() => {});
      if (!question) continue;
      const buttons = question.blocks.filter((b) => b.type === 'actions').flatMap((b) => b.elements ?? []);
      for (let i = 0; i < 1 + Math.floor(rnd() * 3); i++) {
        const click = clickEnvelope(question.ts, buttons.length ? pick(buttons).action_id : undefined);
        await control('/_fake/raw', JSON.stringify(rnd() < 0.6 ? mutate(click, ['payload', 'extra']) : click));
      }
      const clicked = await control('/_fake/click', { message_ts: question.ts, action_index: 0, user: 'UHUMAN' });
      if (clicked.status === 200) delivered.add(clicked.body.envelope_id);
    }
    assert.equal(worker.child.exitCode, null, `the worker exited (seed ${SEED}):\n${worker.output().slice(-3000)}`);
  }

  // Every envelope the fake delivered was acked (a raw frame's id is nobody's to ack).
  await waitFor(async () => {
    const acked = new Set(((await control('/_fake/acks')).body?.acks ?? []).map((a) => a.envelope_id));
    return [...delivered].every((id) => acked.has(id));
  }, 30000, 'every delivered envelope acked').catch(() => {});
  const acked = new Set(((await control('/_fake/acks')).body?.acks ?? []).map((a) => a.envelope_id));
  const missing = [...delivered].filter((id) => !acked.has(id));
  assert.deepEqual(missing, [], `envelopes never acked (seed ${SEED})`);

  // Still answering a plain mention.
  const probe = await control('/_fake/event', { type: 'app_mention', channel: 'C1', user: 'UHUMAN', text: '<@UBOT> and now?' });
  assert.equal(probe.status, 200);
  await waitFor(async () => (await botMessages(probe.body.ts)).some((m) => /ORDERS is \*there\*/.test(m.text ?? '')), 60000,
    `the probe's answer (seed ${SEED})`);
  console.log(`seed ${SEED}: ${delivered.size} envelopes delivered and acked, ${threads.length} plain threads`);

  worker.child.kill('SIGTERM');
  const { code } = await worker.exited;
  const log = worker.output();
  assert.equal(code, 0, log.slice(-3000));
  for (const mark of crashMarks) assert.doesNotMatch(log, mark);
});
