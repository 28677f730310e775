// The MCP stdio transport: an oversized message costs an error answer, never the session.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { CapabilityGraph, createMcpServer, StdioServerTransport } from '@devcodex/capability-graph';
import { rejectsWith, repoRoot, seedSource, throwsWith } from './helpers.mjs';

const MIB = 1024 * 1024;
const line = (message) => JSON.stringify(message) + '\n';
const initialize = line({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
});
const listTools = (id) => line({ jsonrpc: '2.0', id, method: 'tools/list' });
/** A JSON-RPC request of `bytes` bytes before its newline. */
const oversized = (bytes) => {
  const head = '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"pad":"';
  return head + 'x'.repeat(bytes - head.length - 3) + '"}}\n';
};

/** Reads JSON lines from `stream`; `until(id)` resolves with the answers up to the one with that id. */
function answers(stream) {
  const got = [];
  let buffer = '';
  let wake = () => {};
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buffer += chunk;
    for (let i; (i = buffer.indexOf('\n')) !== -1; buffer = buffer.slice(i + 1)) got.push(JSON.parse(buffer.slice(0, i)));
    wake();
  });
  return {
    got,
    async until(id) {
      while (!got.some((m) => m.id === id)) await new Promise((r) => (wake = r));
      return got;
    },
  };
}

const tooLarge = (m) => m.id === null && m.error?.code === -32600;

test('an oversized message is answered with -32600 and id null; the session goes on', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource()] });
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const out = answers(stdout);
  const server = createMcpServer(graph);
  await server.connect(new StdioServerTransport({ stdin, stdout, maxMessageBytes: 4096 }));
  stdin.write(initialize);
  await out.until(1);
  // Split across chunks, with the next request in the chunk that ends it.
  const big = oversized(10_000);
  stdin.write(big.slice(0, 3000));
  stdin.write(big.slice(3000, 9000));
  stdin.write(big.slice(9000) + listTools(2).slice(0, 10));
  stdin.write(listTools(2).slice(10));
  await out.until(2);
  assert.equal(out.got.filter(tooLarge).length, 1, JSON.stringify(out.got.map((m) => m.error ?? m.id)));
  assert.ok(out.got.find((m) => m.id === 2).result.tools.length > 0);
  assert.ok(!out.got.some((m) => m.id === 7), 'the oversized request itself is never served');
  // A message of exactly the limit is still a message.
  stdin.write(oversized(4096));
  stdin.write(listTools(3));
  await out.until(3);
  assert.ok(out.got.some((m) => m.id === 7 && m.result));
  // Garbage is answered too, and the session still goes on.
  stdin.write('{ not json\n');
  stdin.write(line({ jsonrpc: '2.0', id: 8 }) + listTools(4));
  await out.until(4);
  assert.deepEqual(out.got.filter((m) => m.id === null).map((m) => m.error.code), [-32600, -32700, -32600]);
  await server.close();
  await graph.close();
});

test('transport options are checked; methods called on something else fail as GraphErrors', async () => {
  for (const options of [null, 'x', { maxMessageBytes: 0 }, { maxMessageBytes: 1.5 }, { maxMessageBytes: '10' }, { stdin: {} }]) {
    throwsWith(() => new StdioServerTransport(options), 'CG_INPUT_INVALID', 'config', 'fix_input');
  }
  const { start, send, close } = StdioServerTransport.prototype;
  await rejectsWith(start.call(undefined), 'CG_INPUT_INVALID', 'lifecycle', 'fix_input', { field: 'this' });
  await rejectsWith(send.call({}, {}), 'CG_INPUT_INVALID', 'lifecycle', 'fix_input', { field: 'this' });
  assert.equal(await close.call(undefined), undefined);
  const transport = new StdioServerTransport({ stdin: new PassThrough(), stdout: new PassThrough() });
  await transport.start();
  await rejectsWith(transport.start(), 'CG_INPUT_INVALID', 'lifecycle', 'fix_input', { field: 'start' });
  await transport.close();
  await transport.close();
});

/** Runs a stdio MCP server process, sends a 10 MiB + 1 message and then a request. */
async function survivesOversizedMessage(command, args, options) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  const out = answers(child.stdout);
  try {
    child.stdin.write(initialize);
    await out.until(1);
    child.stdin.write(oversized(10 * MIB + 1));
    child.stdin.write(listTools(2));
    await out.until(2);
    assert.equal(out.got.filter(tooLarge).length, 1);
    assert.ok(out.got.find((m) => m.id === 2).result.tools.length > 0);
    assert.equal(child.exitCode, null, 'still serving');
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.stdin.end();
    await exited;
  }
  return child.exitCode;
}

test('examples/seed-mcp survives a 10 MiB + 1 message', async () => {
  const code = await survivesOversizedMessage(process.execPath, [path.join(repoRoot, 'examples', 'seed-mcp', 'server.mjs')]);
  assert.equal(code, 0);
});

test('capability-graph mcp survives a 10 MiB + 1 message', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-mcp-'));
  try {
    writeFileSync(path.join(dir, 'capability-graph.json'), JSON.stringify({ providers: [seedSource()] }));
    const code = await survivesOversizedMessage(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'mcp'], { cwd: dir });
    assert.equal(code, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
