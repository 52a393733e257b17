// The peer for the MCP benchmark: a server on the official TypeScript SDK that serves the
// same tool (`echo`) by running the same demo command, one child process per call.
//   node ts_server.mjs <port> <fisk-demo path> <max concurrent calls>
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const [port, demo, slots] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4] ?? 2)];
let running = 0;
const waiting = [];
const acquire = () => (running < slots ? (running++, Promise.resolve()) : new Promise((r) => waiting.push(r)));
const release = () => { const next = waiting.shift(); if (next) next(); else running--; };

function makeServer() {
  const server = new McpServer({ name: 'ts-peer', version: '1.0.0' });
  server.registerTool('echo', {
    description: 'Print the arguments',
    inputSchema: { text: z.array(z.string()).optional(), upper: z.boolean().optional() },
  }, async ({ text = [] }) => {
    await acquire();
    try {
      const argv = ['echo', ...(text.length ? ['--', ...text] : [])];
      const output = await new Promise((resolve) => execFile(demo, argv, (err, stdout, stderr) => resolve(stdout + stderr)));
      const result = { command: argv.join(' '), output };
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    } finally { release(); }
  });
  return server;
}

const transports = new Map();
http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const parsed = body ? JSON.parse(body) : undefined;
  const sid = req.headers['mcp-session-id'];
  let transport = sid ? transports.get(sid) : undefined;
  if (!transport) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    await makeServer().connect(transport);
  }
  await transport.handleRequest(req, res, parsed);
}).listen(port, '127.0.0.1', () => process.stderr.write(`listening on http://127.0.0.1:${port}/mcp\n`));
