// Starts fisk-ai-mcp on a free port with a generated config, and stops it again.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const MCP_BIN = process.env.FISK_AI_MCP;
export const DEMO_BIN = process.env.FISK_DEMO;
if (!MCP_BIN || !DEMO_BIN) throw new Error('set FISK_AI_MCP and FISK_DEMO to the built binaries');

// Resolves when `predicate()` holds, rejects after `ms` milliseconds.
export async function waitFor(predicate, ms = 10000, what = 'condition') {
  const end = Date.now() + ms;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function scratchDir() {
  return mkdtempSync(join(tmpdir(), 'fiskai-interop-'));
}

// Writes a config serving the demo application with the given expose.agent.mcp settings.
export function writeConfig(dir, mcp = {}, extra = '') {
  const lines = Object.entries(mcp).map(([k, v]) => `      ${k}: ${JSON.stringify(v)}`);
  const text = `application_path: ${JSON.stringify(DEMO_BIN)}
harness:
  confirm_tags: ["change:config"]
expose:
  agent:
    mcp:
${lines.length ? lines.join('\n') : '      {}'}
${extra}`.replace('    mcp:\n      {}', '    mcp: {}');
  const path = join(dir, 'fisk-ai.yaml');
  writeFileSync(path, text);
  return path;
}

// `fdLimit` starts the server under `ulimit -n` (the shell execs it, so the child is the server).
export async function startServer({ mcp = {}, extra = '', args = [], env = {}, fdLimit } = {}) {
  const dir = scratchDir();
  const config = writeConfig(dir, mcp, extra);
  const argv = ['--config', config, '--port', '0', ...args];
  const [file, fileArgs] = fdLimit
    ? ['/bin/sh', ['-c', `ulimit -n ${fdLimit} && exec "$0" "$@"`, MCP_BIN, ...argv]]
    : [MCP_BIN, argv];
  const child = spawn(file, fileArgs, {
    env: { ...process.env, DEMO_STATE_DIR: dir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d.toString(); });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let url;
  await waitFor(() => {
    const m = stderr.match(/over MCP on (http:\/\/\S+\/mcp)/);
    if (m) url = m[1];
    return Boolean(url) || child.exitCode !== null;
  }, 15000, 'the server banner');
  if (!url) throw new Error(`fisk-ai-mcp did not start:\n${stderr}`);
  return {
    url, dir, child, exited,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      const r = await exited;
      rmSync(dir, { recursive: true, force: true });
      return r;
    },
  };
}

// CPU time (user + system, in clock ticks of 10 ms) a process has used so far.
export function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);  // utime, stime (fields 14 and 15)
}

// Processes whose command line mentions `needle` (to prove a process group is gone).
export function processesMentioning(needle) {
  const found = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (cmd.includes(needle) && state !== 'Z') found.push(Number(pid));
    } catch { /* gone meanwhile */ }
  }
  return found;
}
