// A scripted MCP server on stdio for what server-everything cannot be made to do: it asks
// the client something (sampling) before answering initialize, answers with an older
// revision, pages tools/list two at a time, lists a tool whose name is not valid, and
// answers tools/call with the client's reply to its request; `slow` is never answered and
// `cancels` lists the notifications/cancelled received.
const readline = require('node:readline');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const tools = [{ name: 'one', inputSchema: { type: 'object' } }, { name: 'two' }, { name: 'bad name' }, { name: 'three' }];
let reply = null;
const cancelled = [];
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') {
    send({ jsonrpc: '2.0', id: 'srv1', method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } });
    send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1' } } });
  } else if (m.id === 'srv1') {
    reply = m;
  } else if (m.method === 'tools/list') {
    const start = m.params && m.params.cursor ? Number(m.params.cursor) : 0;
    const result = { tools: tools.slice(start, start + 2) };
    if (start + 2 < tools.length) result.nextCursor = String(start + 2);
    send({ jsonrpc: '2.0', id: m.id, result });
  } else if (m.method === 'notifications/cancelled') {
    cancelled.push(m.params);
  } else if (m.method === 'tools/call' && m.params.name === 'slow') {
    // never answered: the client must give up and say so
  } else if (m.method === 'tools/call' && m.params.name === 'cancels') {
    send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: JSON.stringify(cancelled) }] } });
  } else if (m.method === 'tools/call') {
    send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: JSON.stringify(reply) }] } });
  } else if (m.id !== undefined) {
    send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'unknown' } });
  }
});
