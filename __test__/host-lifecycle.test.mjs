// Host components cannot outlast their bounds, and close() ends only what waits on them
// (SPEC §6.5, §14 D17, D20): a reader's deadline holds without a timer getting a turn, and
// engine reads already running when close() is called finish with their whole answer.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs, { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { assertError, cap, currentEvidence, rejectsWith, repoRoot } from './helpers.mjs';

const { native } = createRequire(import.meta.url)('../js/engine/native.cjs');
const never = () => new Promise(() => {});
/** A promise whose rejection is handled now and asserted later. */
const held = (promise) => {
  promise.catch(() => {});
  return promise;
};
const tick = () => new Promise((r) => setImmediate(r));
const url = 'https://docs.example/guide.md';
const web = { kind: 'document', knowledgeId: 'WEB', role: 'guide', locator: { type: 'http', url } };

/** Runs an ES module in a child process; resolves its last stdout line as JSON, or null when
 *  it had to be killed at the deadline. */
function runChild(source, deadlineMs = 15_000) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').pop();
      resolve(code === 0 && last ? JSON.parse(last) : null);
    });
  });
}

test('a reader stream whose chunks are always ready still stops at the reader deadline, and timers keep running', async () => {
  const result = await runChild(`
    import { CapabilityGraph } from '@devcodex/capability-graph';
    const url = ${JSON.stringify(url)};
    const chunk = { bytes: new TextEncoder().encode('a'), contentType: 'text/markdown', source: url };
    let ticked = false;
    let tickedWhileStreaming = false;
    let stopped = false;
    const reader = {
      id: 'eager',
      canRead: () => true,
      read: () => new Promise(() => {}),
      // Never awaits anything: every chunk is ready at once, for ever.
      async *stream(ref, ctx, { signal }) {
        for (;;) {
          if (ticked) tickedWhileStreaming = true;
          if (signal.aborted) { stopped = true; return; }
          yield chunk;
        }
      },
    };
    const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [{ capabilityId: 'x', name: 'X', description: 'X.', whenToUse: 'X.', knowledge: [${JSON.stringify(web)}] }] };
    const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader], budgets: { read: { readerTimeoutMs: 50 } } });
    setTimeout(() => { ticked = true; }, 0);
    let outcome;
    try {
      await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'WEB' });
      outcome = 'answered';
    } catch (e) {
      outcome = e.toJSON();
    }
    await graph.close();
    console.log(JSON.stringify({ outcome, tickedWhileStreaming }));
  `);
  assert.ok(result, 'the read settled before the child deadline');
  assertError(result.outcome, 'CG_DOCUMENT_UNREADABLE', 'document', 'retry');
  assert.equal(result.tickedWhileStreaming, true, 'a timer scheduled beside the stream ran while it streamed');
});

/** A provider with `count` local documents under a fresh folder, and optionally the URL one. */
function localProvider(count, { withUrl = false } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-close-'));
  const knowledge = [];
  for (let i = 0; i < count; i++) {
    writeFileSync(path.join(dir, `d${i}.md`), `# Document ${i}\n${'text '.repeat(2000)}\n`);
    knowledge.push({ kind: 'document', knowledgeId: `D-${i}`, role: 'guide', locator: { type: 'relative-file', path: `d${i}.md` } });
  }
  const capabilities = [cap('local', { knowledge })];
  if (withUrl) capabilities.push(cap('web', { knowledge: [web] }));
  return { dir, source: { definition: { providerId: 'acme', name: 'A', version: '1', capabilities }, documentRoot: dir } };
}

const wholeAnswer = (count) => (r) => {
  assert.equal(r.results.length, count);
  r.results.forEach((slot, i) => assert.ok(slot.value?.text.startsWith(`# Document ${i}\n`), JSON.stringify(slot).slice(0, 200)));
};

test('reads started before close() finish on their pins with every slot', async () => {
  const { dir, source } = localProvider(4);
  try {
    for (let round = 0; round < 3; round++) {
      const graph = await CapabilityGraph.open({ providers: [source] });
      const calls = Array.from({ length: 100 }, () => graph.readDocuments({ selected: ['acme::local'] }));
      const pages = Array.from({ length: 10 }, () => graph.readDocumentPage({ capability: 'acme::local', knowledgeId: 'D-1', maxBytes: 64 }));
      const closing = graph.close();
      const later = held(graph.readDocuments({ selected: ['acme::local'] }));
      for (const answer of await Promise.all(calls)) wholeAnswer(4)(answer);
      for (const page of await Promise.all(pages)) assert.ok(page.text.startsWith('# Document 1\n'));
      await closing;
      await rejectsWith(later, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a read that moves to the long-read lane when close() is called still finishes on its pin', async () => {
  const { dir, source } = localProvider(1);
  // Larger than what is hashed off the lane: a sparse file of NUL bytes (valid UTF-8).
  fs.truncateSync(path.join(dir, 'd0.md'), 9 * 1024 * 1024);
  const graph = await CapabilityGraph.open({ providers: [source] });
  native.holdLongReads(true);
  try {
    const page = graph.readDocumentPage({ capability: 'acme::local', knowledgeId: 'D-0', maxBytes: 64 });
    const closing = graph.close();
    await new Promise((resolve) => setTimeout(resolve, 20)); // lets the read reach the held lane
    native.holdLongReads(false);
    assert.ok((await page).text.startsWith('# Document 0\n'));
    await closing;
  } finally {
    native.holdLongReads(false);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('close() settles only the reads waiting on a reader; local reads beside them complete', async () => {
  const { dir, source } = localProvider(3, { withUrl: true });
  const signals = [];
  const reader = { id: 'waiting', canRead: () => true, read: (ref, ctx, options) => (signals.push(options.signal), never()) };
  try {
    const graph = await CapabilityGraph.open({ providers: [source], readers: [reader] });
    const waiting = held(graph.readDocuments({ selected: ['acme::web'] }));
    const mixed = held(graph.readDocuments({ selected: ['acme::local', 'acme::web'] }));
    while (signals.length < 2) await tick();
    const local = Array.from({ length: 100 }, () => graph.readDocuments({ selected: ['acme::local'] }));
    await graph.close();
    await rejectsWith(waiting, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
    await rejectsWith(mixed, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
    assert.ok(signals.every((s) => s.aborted), 'the reader is told to stop');
    for (const answer of await Promise.all(local)) wholeAnswer(3)(answer);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a URL read whose engine round finishes after close() never calls a reader', async () => {
  const { dir, source } = localProvider(1, { withUrl: true });
  let calls = 0;
  const reader = { id: 'late', canRead: () => (calls++, true), read: never };
  try {
    const graph = await CapabilityGraph.open({ providers: [source], readers: [reader] });
    const pending = graph.readDocuments({ selected: ['acme::web'] });
    graph.close();
    await rejectsWith(pending, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
    assert.equal(calls, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a reader stating a content ID that is not a string breaks its contract', async () => {
  const text = '# Guide\n';
  for (const contentId of [5, null, false, {}]) {
    const reader = { id: 'r', canRead: () => true, read: () => ({ bytes: new TextEncoder().encode(text), contentType: 'text/markdown', source: url, contentId }) };
    const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge: [web] })] };
    const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader] });
    const r = await graph.readDocuments({ selected: ['acme::x'] });
    assertError(r.results[0].error, 'CG_ADAPTER_CONTRACT_INVALID', 'document', 'contact_admin', { reason: 'reader_content_id_invalid' });
    await rejectsWith(graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'WEB' }), 'CG_ADAPTER_CONTRACT_INVALID', 'document', 'contact_admin', { reason: 'reader_content_id_invalid' });
    await graph.close();
  }
  // Absent, it is the engine's own; a string is compared with it.
  const reader = { id: 'r', canRead: () => true, read: () => ({ bytes: new TextEncoder().encode(text), contentType: 'text/markdown', source: url }) };
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge: [web] })] };
  const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader] });
  const r = await graph.readDocuments({ selected: ['acme::x'] });
  assert.equal(r.results[0].value.text, text);
  await graph.close();
});

test('access.scan streams a URL document of any size through its reader, and hits in it are checked at their ranges', async () => {
  const line = 'Ordinary routing prose with a few wide characters: é ✓ 𝄞. ';
  const needle = 'The needle: retries back off exponentially.';
  const body = `${line.repeat(3000)}${needle}\n${'é'.repeat(40_000)}`;
  const bytes = new TextEncoder().encode(body);
  const streams = [];
  let wholeReads = 0;
  const reader = {
    id: 'web',
    canRead: () => true,
    read: () => (wholeReads++, { bytes, contentType: 'text/markdown', source: url }),
    async *stream(ref, ctx, { chunkBytes }) {
      const stream = { yielded: 0 };
      streams.push(stream);
      for (let at = 0; at < bytes.length; at += chunkBytes) {
        stream.yielded++;
        yield { bytes: bytes.subarray(at, at + chunkBytes), contentType: 'text/markdown', source: url };
      }
    },
  };
  let yieldedAtFirstChunk;
  const chunks = [];
  const retriever = {
    id: 'streaming',
    async retrieve(input, access) {
      const [t] = input.targets;
      const target = { id: t.id, knowledgeId: t.knowledgeId };
      const scanned = await access.scan(target, (chunk, offset) => {
        yieldedAtFirstChunk ??= streams[0].yielded;
        chunks.push([offset, Buffer.from(chunk)]);
      }, { chunkBytes: 1000 });
      const at = Buffer.concat(chunks.map(([, b]) => b)).indexOf(needle);
      const hit = { id: t.id, knowledgeId: t.knowledgeId, contentId: scanned.contentId, source: url, startOffset: at, endOffset: at + needle.length, snippet: needle };
      const document = { id: t.id, knowledgeId: t.knowledgeId, sourceContentId: scanned.contentId, indexedContentId: scanned.contentId };
      return { hits: [hit, { ...hit, startOffset: at + 1, endOffset: at + 1 + needle.length }], evidence: currentEvidence(input, [document]) };
    },
  };
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge: [web] })] };
  const budgets = { read: { maxBytes: 16_384, maxResponseBytes: 65_536 } };
  const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader], knowledgeRetriever: retriever, budgets });
  try {
    const r = await graph.queryKnowledge({ text: 'retries', selected: ['acme::x'] });
    assert.ok(bytes.length > 4 * budgets.read.maxResponseBytes, 'far larger than a whole read may be');
    assert.equal(wholeReads, 0, 'never read whole');
    // Handed on while the reader streams, not gathered first.
    assert.ok(yieldedAtFirstChunk < streams[0].yielded / 2, `${yieldedAtFirstChunk} of ${streams[0].yielded}`);
    let offset = 0;
    const decoder = new TextDecoder('utf-8', { fatal: true });
    for (const [at, chunk] of chunks) {
      assert.equal(at, offset);
      assert.ok(chunk.length > 0 && chunk.length <= 1000);
      decoder.decode(chunk); // each chunk ends on a character boundary
      offset += chunk.length;
    }
    assert.equal(Buffer.concat(chunks.map(([, b]) => b)).toString('utf8'), body);
    assert.deepEqual(r.items.map((h) => h.snippet), [needle]);
    assert.deepEqual(r.meta.warnings.map((w) => [w.details.hitIndex, w.details.reason]), [[1, 'knowledge_hit_content_mismatch']]);
    // The same content identity as a page read of the document.
    const page = await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'WEB', maxBytes: 64 });
    assert.equal(r.items[0].contentId, page.contentId);
  } finally {
    await graph.close();
  }
});

test('access.scan of a URL document: a consumer that throws ends the scan with its error; a document that changes before its hits are checked is stale', async () => {
  let text = 'Streaming guide. Retries back off.\n';
  const reader = {
    id: 'web',
    canRead: () => true,
    read: never,
    async *stream() {
      yield { bytes: new TextEncoder().encode(text), contentType: 'text/markdown', source: url };
    },
  };
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge: [web] })] };
  let caught;
  const failing = {
    id: 'k',
    async retrieve(input, access) {
      const [t] = input.targets;
      caught = await access.scan({ id: t.id, knowledgeId: t.knowledgeId }, () => {
        throw new RangeError('index full');
      }).catch((e) => e);
      const controller = new AbortController();
      controller.abort();
      caught = [caught, await access.scan({ id: t.id, knowledgeId: t.knowledgeId }, () => {}, { signal: controller.signal }).catch((e) => e)];
      return { hits: [] };
    },
  };
  const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader], knowledgeRetriever: failing });
  await graph.queryKnowledge({ text: 'x', selected: ['acme::x'] }).catch(() => {});
  assert.ok(caught[0] instanceof RangeError);
  assert.equal(caught[1].name, 'AbortError');
  await graph.close();

  const changing = {
    id: 'k',
    async retrieve(input, access) {
      const [t] = input.targets;
      const scanned = await access.scan({ id: t.id, knowledgeId: t.knowledgeId }, () => {});
      text = 'Streaming guide. Retries back off!\n'; // changed before the hits are checked
      const snippet = 'Retries back off';
      const hit = { id: t.id, knowledgeId: t.knowledgeId, contentId: scanned.contentId, source: url, startOffset: 17, endOffset: 17 + snippet.length, snippet };
      const document = { id: t.id, knowledgeId: t.knowledgeId, sourceContentId: scanned.contentId, indexedContentId: scanned.contentId };
      return { hits: [hit], evidence: currentEvidence(input, [document]) };
    },
  };
  const second = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader], knowledgeRetriever: changing });
  const r = await second.queryKnowledge({ text: 'x', selected: ['acme::x'] });
  assert.deepEqual(r.items, []);
  assert.deepEqual(r.meta.warnings.map((w) => [w.code, w.details.reason]), [['CG_INDEX_STALE', 'content_changed']]);
  await second.close();
});
