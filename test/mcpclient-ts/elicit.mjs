// The TypeScript MCP SDK as a real client of ptymcp, for mcpserver's
// TestElicitTypeScript and TestElicitTypeScriptBrowser: it speaks MCP on its stdin and stdout (ptymcp's
// stdio transport is at the other end), declares URL-mode elicitation on
// the SDK's newest protocol (2025-11-25), opens a terminal and sends the
// command in argv[2], which stops at a secret prompt.
//
// It reports to the Go test on fd 3, one JSON object a line: the
// elicitation it was asked ("elicit", with its params: the link), the
// elicitation complete notification ("complete"), the send's result
// ("result"), or what went wrong ("error"). It answers an elicitation with
// the action the Go test writes as a line on fd 4 ("accept", "decline"):
// before the person types the secret at the link (the user agreed to open
// it), or after (a headless chromium typed it on the page).
import fs from 'node:fs';
import net from 'node:net';
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
// The SDK's stdio transport for servers is newline-delimited JSON-RPC on
// this process's own stdin and stdout; the protocol is symmetric, so the
// client runs over it (the client transport would spawn ptymcp itself).
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ElicitRequestSchema, ElicitationCompleteNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const report = (o) => fs.writeSync(3, JSON.stringify(o) + '\n');
// A socket, not fs.createReadStream: a pipe read through fs blocks a
// thread of libuv's pool, and process.exit waits for it.
const control = readline.createInterface({ input: new net.Socket({ fd: 4, readable: true, writable: false }) })[Symbol.asyncIterator]();

async function main() {
  const command = process.argv[2];
  const client = new Client({ name: 'ptyactor-ts-test', version: '0' }, { capabilities: { elicitation: { url: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    report({ event: 'elicit', params: req.params });
    const { value, done } = await control.next();
    return { action: done ? 'cancel' : value.trim() };
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
    report({ event: 'complete', elicitationId: n.params.elicitationId });
  });
  await client.connect(new StdioServerTransport());
  // Listing the tools makes the SDK check each result's structuredContent
  // against the tool's output schema.
  await client.listTools();
  const open = await client.callTool({ name: 'terminal_open', arguments: {} });
  const sessionId = open.structuredContent?.sessionId;
  if (!sessionId) throw new Error('terminal_open: ' + JSON.stringify(open));
  // A person takes their time: the SDK's default request timeout is 60 s.
  const result = await client.callTool({ name: 'terminal_send', arguments: { sessionId, text: command } }, undefined, { timeout: 120000 });
  report({ event: 'result', sessionId, result });
  await client.close();
}

main().then(
  () => process.exit(0),
  (err) => {
    report({ event: 'error', message: String(err?.stack ?? err) });
    process.exit(1);
  },
);
