// MCP load generator: N concurrent SDK clients call `echo` in a loop for a fixed time,
// then report throughput, latency percentiles, the server's CPU per call (user + system,
// its reaped children included: the children run the commands) and its resident memory.
//   node load.mjs <url> <server pid> <clients> <seconds> [clock ticks per second]
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, pid, clients, seconds] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5])];
const ticksPerSecond = Number(process.argv[6] ?? 100);
// utime, stime, cutime, cstime: fields 14-17 of /proc/<pid>/stat, counted after the ")"
// that ends the command name.
const cpuTicks = () => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0);
};
const rssKiB = (field) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);

const latencies = [];
let errors = 0;
const conns = [];
for (let i = 0; i < clients; i++) {
  const c = new Client({ name: `load-${i}`, version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  conns.push(c);
}
// warm-up
await Promise.all(conns.map((c) => c.callTool({ name: 'echo', arguments: { text: ['warm'] } })));
const idle = rssKiB('VmRSS');
const cpuStart = cpuTicks();
const end = Date.now() + seconds * 1000;
await Promise.all(conns.map(async (c) => {
  while (Date.now() < end) {
    const t0 = process.hrtime.bigint();
    const r = await c.callTool({ name: 'echo', arguments: { text: ['hello', 'world'] } });
    const us = Number(process.hrtime.bigint() - t0) / 1000;
    if (r.isError || !r.content[0].text.includes('hello world')) errors++; else latencies.push(us);
  }
}));
const cpuUsed = (cpuTicks() - cpuStart) / ticksPerSecond;
const loaded = rssKiB('VmRSS');
const peak = rssKiB('VmHWM');
for (const c of conns) await c.close();
latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] / 1000;
console.log(JSON.stringify({
  clients, calls: latencies.length, errors, per_second: latencies.length / seconds,
  cpu_us_per_call: (cpuUsed * 1e6) / Math.max(1, latencies.length + errors),
  p50_ms: pct(0.5), p90_ms: pct(0.9), p99_ms: pct(0.99),
  rss_idle_mib: idle / 1024, rss_loaded_mib: loaded / 1024, rss_peak_mib: peak / 1024,
}));
