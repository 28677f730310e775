// The MCP stdio transport: an oversized message costs an error answer, never the session; every
// request read before the end of input is answered; a client that does not read stops the
// reading; a broken pipe is reported, never thrown.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
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

test('a line nested too deep or holding too many values is answered -32700 without being parsed; the session goes on', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource()] });
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const out = answers(stdout);
  const server = createMcpServer(graph);
  await server.connect(new StdioServerTransport({ stdin, stdout }));
  stdin.write(initialize);
  await out.until(1);
  // Work done: the longest text JSON.parse was handed while the refused lines were answered.
  const parse = JSON.parse;
  let longest = 0;
  JSON.parse = function (text, ...rest) {
    if (typeof text === 'string') longest = Math.max(longest, text.length);
    return parse.call(this, text, ...rest);
  };
  const deep = '['.repeat(MIB);
  const wide = `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":[${'0,'.repeat(100_000)}0]}}`;
  try {
    stdin.write(`${deep}\n${wide}\n`);
    stdin.write(listTools(2));
    await out.until(2);
  } finally {
    JSON.parse = parse;
  }
  assert.deepEqual(out.got.filter((m) => m.id === null).map((m) => m.error.code), [-32700, -32700]);
  assert.ok(!out.got.some((m) => m.id === 9), 'the refused request is never served');
  assert.ok(longest < wide.length, `JSON.parse saw ${longest} characters`);
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

/** Lets every pending stream event and promise callback run. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};
const request = (id, method = 'tools/list', params) => line({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
const call = (id, name, args) => request(id, 'tools/call', { name, arguments: args });

/** Spawns a server, writes `input` and closes its stdin; resolves when it exits (60 s deadline). */
function runToExit(command, args, input, options = {}) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no exit within 60 s; answered ${stdout.split('\n').length - 1}`));
    }, 60_000);
    child.once('close', (code, signal) => {
      clearTimeout(deadline);
      resolve({ code, signal, stderr, answers: stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)) });
    });
  });
}

/** initialize, then a list of providers, a match and a document read, all written before EOF. */
const batchBeforeEof = (prefix) =>
  initialize +
  line({ jsonrpc: '2.0', method: 'notifications/initialized' }) +
  call(2, `${prefix}list_providers`, {}) +
  call(3, `${prefix}match`, { intent: 'validate the request body before the handler runs' }) +
  call(4, `${prefix}read_documents`, { selected: ['seed.http::route.validation'] }) +
  request(5) +
  // The last line has no newline: it is still a request read before EOF.
  call(6, `${prefix}get_capabilities`, { ids: ['seed.http::route'] }).trimEnd();

function assertAllAnswered(run) {
  assert.deepEqual([run.code, run.signal, run.stderr], [0, null, '']);
  assert.deepEqual(run.answers.map((a) => a.id).sort(), [1, 2, 3, 4, 5, 6]);
  for (const a of run.answers.filter((x) => x.id > 1 && x.id !== 5)) assert.notEqual(a.result?.isError, true, JSON.stringify(a).slice(0, 300));
  assert.equal(JSON.parse(run.answers.find((a) => a.id === 3).result.content[0].text).matches[0].qualifiedId, 'seed.http::route.validation');
  assert.deepEqual(JSON.parse(run.answers.find((a) => a.id === 4).result.content[0].text).results.map((r) => r.value.knowledgeId), ['D-02']);
}

test('examples/seed-mcp answers every request read before the end of its input', { timeout: 90_000 }, async () => {
  assertAllAnswered(await runToExit(process.execPath, [path.join(repoRoot, 'examples', 'seed-mcp', 'server.mjs')], batchBeforeEof('example_')));
});

test('capability-graph mcp answers every request read before the end of its input', { timeout: 90_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-mcp-'));
  try {
    writeFileSync(path.join(dir, 'capability-graph.json'), JSON.stringify({ providers: [seedSource()], executor: { kind: 'lexical' }, mcp: { documentBodies: true } }));
    assertAllAnswered(await runToExit(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'mcp'], batchBeforeEof(''), { cwd: dir }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A transport on streams of the test's own, with a plain handler in place of a server. */
async function bareTransport(options = {}, stdout = new PassThrough()) {
  const stdin = new PassThrough();
  const transport = new StdioServerTransport({ stdin, stdout, ...options });
  const seen = { messages: [], errors: [], closed: 0 };
  transport.onmessage = (m) => seen.messages.push(m);
  transport.onerror = (e) => seen.errors.push(e);
  transport.onclose = () => seen.closed++;
  await transport.start();
  return { stdin, stdout, transport, seen };
}

test('no more than maxInFlight requests are handed on before they are answered; the end of input waits for them', async () => {
  const { stdin, transport, seen } = await bareTransport({ maxInFlight: 4 });
  const ids = () => seen.messages.filter((m) => m.id !== undefined).map((m) => m.id);
  const answer = async (...list) => {
    for (const id of list) await transport.send({ jsonrpc: '2.0', id, result: {} });
    await settle();
  };
  // Ten requests and a notification in one chunk, then the end of input.
  stdin.end(Array.from({ length: 10 }, (_, i) => request(i + 1)).join('') + line({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  await settle();
  assert.deepEqual(ids(), [1, 2, 3, 4]);
  assert.equal(stdin.isPaused(), true, 'stdin is not read while the calls in flight are at their bound');
  await answer(2);
  assert.deepEqual(ids(), [1, 2, 3, 4, 5]);
  await answer(1, 3, 4, 5);
  assert.deepEqual(ids(), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  await answer(6, 7, 8);
  assert.deepEqual(ids(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.equal(seen.messages.at(-1).method, 'notifications/initialized');
  assert.equal(seen.closed, 0, 'requests read before the end of input are still in flight');
  await transport.send({ jsonrpc: '2.0', id: 9, error: { code: -32603, message: 'x' } });
  await settle();
  assert.equal(seen.closed, 0);
  await answer(10);
  assert.equal(seen.closed, 1, 'closed once every request is answered');
  await rejectsWith(transport.send({ jsonrpc: '2.0', id: 11, result: {} }), 'CG_INPUT_INVALID', 'lifecycle', 'fix_input', { field: 'send' });
  await transport.close();
  assert.equal(seen.closed, 1, 'onclose is reported once');
  assert.deepEqual(seen.errors, []);
});

test('a cancelled request frees its slot; a request with no answer yet keeps the transport open at EOF', async () => {
  const { stdin, transport, seen } = await bareTransport({ maxInFlight: 1 });
  stdin.end(request(1) + line({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }) + request(2));
  await settle();
  assert.deepEqual(seen.messages.map((m) => m.id ?? m.method), [1]);
  // The cancellation is read only once the slot is free: the bound holds, and an answer frees it.
  await transport.send({ jsonrpc: '2.0', id: 1, result: {} });
  await settle();
  assert.deepEqual(seen.messages.map((m) => m.id ?? m.method), [1, 'notifications/cancelled', 2]);
  assert.equal(seen.closed, 0);
  await transport.send({ jsonrpc: '2.0', id: 2, result: {} });
  await settle();
  assert.equal(seen.closed, 1);

  const second = await bareTransport({ maxInFlight: 2 });
  second.stdin.end(request(1) + line({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }));
  await settle();
  assert.equal(second.seen.closed, 1, 'a cancelled request is never answered: nothing is left in flight');
});

/** A stdout that holds every write until `release()`; its write() returns false. */
function heldStdout() {
  const held = [];
  const written = [];
  const stdout = new Writable({
    highWaterMark: 1,
    write(chunk, _encoding, callback) {
      written.push(chunk.toString());
      held.push(callback);
    },
  });
  const release = async () => {
    while (held.length) {
      held.shift()();
      await settle();
    }
  };
  return { stdout, written, release };
}

test('stdin is not read while the unwritten answers are above the high-water mark; reading resumes on drain', async () => {
  const warnings = [];
  const onWarning = (w) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const out = heldStdout();
    const { stdin, transport, seen } = await bareTransport({ highWaterMark: 1000, maxInFlight: 1000 }, out.stdout);
    transport.onmessage = (m) => {
      seen.messages.push(m);
      transport.send({ jsonrpc: '2.0', id: m.id, result: { pad: 'x'.repeat(300) } });
    };
    stdin.write(Array.from({ length: 50 }, (_, i) => request(i + 1)).join(''));
    await settle();
    assert.ok(seen.messages.length <= 4, `${seen.messages.length} requests read with more than 1000 bytes unwritten`);
    assert.equal(stdin.isPaused(), true);
    assert.ok(out.stdout.listenerCount('drain') <= 1, 'no listener per message');
    await out.release();
    assert.equal(seen.messages.length, 50, 'every request is read once the answers are written');
    assert.equal(out.written.length, 50);
    assert.equal(stdin.isPaused(), false, 'reading resumed');
    stdin.end();
    await settle();
    assert.equal(seen.closed, 1);
    // Malformed lines answered by the transport itself count as unwritten output too.
    const bad = heldStdout();
    const second = await bareTransport({ highWaterMark: 100 }, bad.stdout);
    second.stdin.write('{ nope\n'.repeat(40));
    await settle();
    assert.ok(bad.written.length <= 3, `${bad.written.length} error answers written while blocked`);
    await bad.release();
    assert.equal(bad.written.length, 40);
    await second.transport.close();
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(warnings, []);
});

test('a failing stdout or stdin is reported through onerror and onclose, never thrown', async () => {
  const epipe = () => Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32, syscall: 'write' });
  const stdout = new Writable({ write: (_c, _e, callback) => callback(epipe()) });
  const { stdin, transport, seen } = await bareTransport({}, stdout);
  transport.onmessage = (m) => {
    seen.messages.push(m);
    transport.send({ jsonrpc: '2.0', id: m.id, result: {} }).catch((e) => seen.errors.push(`send: ${e.code}`));
  };
  stdin.write(request(1) + request(2));
  await settle();
  assert.equal(seen.closed, 1, 'a broken stdout closes the transport');
  assert.ok(seen.errors.some((e) => e?.code === 'EPIPE'), JSON.stringify(seen.errors));
  assert.ok(seen.messages.length >= 1);
  // Later errors on the broken stream are swallowed, not thrown.
  stdout.emit('error', epipe());
  await settle();
  assert.equal(seen.closed, 1);

  const broken = await bareTransport();
  broken.stdin.write(request(1));
  await settle();
  broken.stdin.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
  await settle();
  assert.deepEqual(broken.seen.errors.map((e) => e.code), ['ECONNRESET']);
  assert.equal(broken.seen.closed, 0, 'the request read before the failure is still answered');
  await broken.transport.send({ jsonrpc: '2.0', id: 1, result: {} });
  await settle();
  assert.equal(broken.seen.closed, 1);
});

/** Spawns a server, initializes it, then closes its stdout pipe and sends more requests. */
async function survivesClosedStdout(command, args, options) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  const out = answers(child.stdout);
  child.stdin.on('error', () => {});
  child.stdin.write(initialize);
  await out.until(1);
  child.stdout.destroy();
  for (let i = 0; i < 200; i++) child.stdin.write(listTools(i + 2));
  child.stdin.end();
  const deadline = new Promise((_, reject) => setTimeout(() => reject(new Error('no exit within 60 s')), 60_000).unref());
  const { code, signal } = await Promise.race([exited, deadline]).finally(() => child.kill('SIGKILL'));
  assert.deepEqual({ code, signal, stderr }, { code: 0, signal: null, stderr: '' });
}

test('examples/seed-mcp exits quietly when its client closes the read end', { timeout: 90_000 }, async () => {
  await survivesClosedStdout(process.execPath, [path.join(repoRoot, 'examples', 'seed-mcp', 'server.mjs')]);
});

test('capability-graph mcp exits quietly when its client closes the read end', { timeout: 90_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-mcp-'));
  try {
    writeFileSync(path.join(dir, 'capability-graph.json'), JSON.stringify({ providers: [seedSource()] }));
    await survivesClosedStdout(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'mcp'], { cwd: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('capability-graph mcp with a client that does not read: no warning, every answer once it reads', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-mcp-'));
  try {
    writeFileSync(path.join(dir, 'capability-graph.json'), JSON.stringify({ providers: [seedSource()] }));
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'mcp'], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    const exited = new Promise((resolve) => child.once('close', (code) => resolve(code)));
    const count = 2000;
    child.stdin.write(initialize);
    for (let i = 0; i < count; i++) child.stdin.write(listTools(i + 2));
    child.stdin.end();
    // Nothing reads the server's answers for a while: its stdout pipe fills.
    await new Promise((r) => setTimeout(r, 2000));
    let lines = 0;
    let tail = '';
    child.stdout.setEncoding('utf8').on('data', (c) => {
      const parts = (tail + c).split('\n');
      tail = parts.pop();
      lines += parts.length;
    });
    const deadline = new Promise((_, reject) => setTimeout(() => reject(new Error('no exit within 100 s')), 100_000).unref());
    const code = await Promise.race([exited, deadline]).finally(() => child.kill('SIGKILL'));
    assert.deepEqual({ code, lines, stderr }, { code: 0, lines: count + 1, stderr: '' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
