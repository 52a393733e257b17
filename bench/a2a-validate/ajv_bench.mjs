// The peer: npm ajv validating the same golden messages against the same schema files
// (JSON.parse + compiled schema), for the same time per row.
//   node ajv_bench.mjs <schemas dir> <golden dir> [seconds per row]
import { readFileSync, readdirSync } from 'node:fs';
import Ajv from 'ajv';

const [schemas, golden, seconds = '2'] = process.argv.slice(2);
const ajv = new Ajv({ strict: false, allErrors: false });
for (const f of readdirSync(schemas)) ajv.addSchema(JSON.parse(readFileSync(`${schemas}/${f}`, 'utf8')));
const byProtocol = (body) => {
  const schemaFile = {
    'io.choria.fisk-ai.v1.tool.request': 'tool.request.json',
    'io.choria.fisk-ai.v1.tool.reply': 'tool.reply.json',
    'io.choria.fisk-ai.v1.discovery.reply': 'discovery.reply.json',
    'io.choria.fisk-ai.v1.question': 'question.json',
    'io.choria.fisk-ai.v1.answer': 'answer.json',
    'io.choria.fisk-ai.v1.keepalive': 'keepalive.json',
    'io.choria.fisk-ai.v1.ack': 'ack.json',
    'io.choria.fisk-ai.v1.event': 'event.json',
    'io.choria.fisk-ai.v1.result': 'result.json',
  }[body.protocol];
  const id = JSON.parse(readFileSync(`${schemas}/${schemaFile}`, 'utf8')).$id;
  return ajv.getSchema(id);
};
for (const name of ['tool.request.input.json', 'tool.reply.exit3.json', 'discovery.reply.json',
  'question.approval.json', 'answer.decision.json', 'keepalive.json', 'ack.json', 'event.text.json',
  'event.tool_result.json', 'result.json']) {
  const text = readFileSync(`${golden}/${name}`, 'utf8').trim();
  const validate = byProtocol(JSON.parse(text));
  if (!validate(JSON.parse(text))) throw new Error(`${name}: ${JSON.stringify(validate.errors)}`);
  let n = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(Number(seconds) * 1e9));
  while (process.hrtime.bigint() < end) {
    for (let i = 0; i < 100; i++) {
      if (Buffer.byteLength(text) > 786432 || !validate(JSON.parse(text))) throw new Error('invalid');
    }
    n += 100;
  }
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(JSON.stringify({ impl: 'ajv 8 (Node)', message: name, bytes: Buffer.byteLength(text),
    per_second: Math.round(n / elapsed), us_per_message: Number((elapsed * 1e6 / n).toFixed(2)) }));
}
