// The official Anthropic TypeScript SDK calling fiskai-fake-llm: N non-streaming
// messages.create calls with C in flight from one process; prints one JSON line.
//   node sdk_bench.mjs <base url> <calls> <in flight>
import Anthropic from '@anthropic-ai/sdk';

const [baseURL, callsArg, inflightArg] = process.argv.slice(2);
const calls = Number(callsArg);
const inflight = Number(inflightArg);
const client = new Anthropic({ apiKey: 'bench-key', baseURL, maxRetries: 0 });

// The same request the C++ driver sends (bench/llm/llm_bench.cpp).
const params = {
  model: 'claude-bench',
  max_tokens: 8192,
  system: [{ type: 'text', text: 'You are an operator of a NATS JetStream cluster. Answer briefly.',
             cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'How many messages are in ORDERS?' }] }],
  tools: [{ type: 'custom', name: 'stream_info', description: 'Shows the state of a stream', defer_loading: false,
            input_schema: { type: 'object', properties: { stream: { type: 'string', description: 'Stream name' } },
                            required: ['stream'] } }],
  cache_control: { type: 'ephemeral' },
};

async function run(n) {
  const latencies = [];
  let next = 0;
  let errors = 0;
  async function worker() {
    while (next < n) {
      next++;
      const start = process.hrtime.bigint();
      try {
        const msg = await client.messages.create(params);
        if (msg.content.length !== 2) errors++;
      } catch {
        errors++;
      }
      latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: inflight }, worker));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  latencies.sort((a, b) => a - b);
  return { calls_per_s: n / seconds, p50_ms: latencies[Math.floor(latencies.length / 2)], errors };
}

await run(Math.min(200, calls));  // warm-up: JIT, connections
const result = await run(calls);
console.log(JSON.stringify({
  client: 'ts-sdk', inflight, calls, ...result,
  rss_mb: process.resourceUsage().maxRSS / 1024,
}));
