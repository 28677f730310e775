// Documents and budgets at their edges: budget ceilings, sparse files far larger than any budget,
// answers that would not fit a JavaScript string, the long-read lane, and page cursors that were
// edited or outlived their document. What used to abort the process runs in a child process
// with a deadline, so a regression fails the test instead of ending the run.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import { CapabilityGraph, lexicalExecutor } from '@devcodex/capability-graph';
import { cap, inline, rejectsWith, repoRoot } from './helpers.mjs';

const run = promisify(execFile);
const { native } = createRequire(import.meta.url)('../js/engine/native.cjs');
const MIB = 1024 * 1024;
const CEILING = 2 ** 28;

/** A fresh folder holding `files` ({ name: bytes | { sparse: size } }). */
function folder(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-large-'));
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    if (content.sparse === undefined) fs.writeFileSync(file, content);
    else {
      fs.writeFileSync(file, '');
      fs.truncateSync(file, content.sparse);
    }
  }
  return dir;
}

const doc = (knowledgeId, file) => ({ kind: 'document', knowledgeId, role: 'guide', locator: { type: 'relative-file', path: file } });

/** A provider `acme` whose capability `x` has one document per file, its root at `dir`. */
const provider = (dir, files) => ({ ...inline('acme', [cap('x', { knowledge: files.map((f, i) => doc(`D-${i}`, f)) })]), documentRoot: dir });

/** Runs `body` (module source using `CapabilityGraph`, `dir`, `print`) in a child with a deadline. */
async function inChild(dir, body, timeout = 120_000) {
  const source = `import { CapabilityGraph } from '@devcodex/capability-graph';
const dir = ${JSON.stringify(dir)};
const print = (v) => process.stdout.write(JSON.stringify(v) + '\\n');
const outcome = (p) => p.then((v) => ({ ok: true, v }), (e) => ({ ok: false, e: e.toJSON ? e.toJSON() : String(e) }));
${body}`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', source], { cwd: repoRoot, timeout, maxBuffer: 64 * MIB });
  return stdout.trim().split('\n').map((line) => JSON.parse(line));
}

test('budgets above their ceilings are refused at open, naming the field', async () => {
  const cases = [
    [{ read: { maxResponseBytes: Number.MAX_SAFE_INTEGER } }, 'budgets.read.maxResponseBytes', `integer <= ${CEILING}`],
    [{ read: { maxBytes: 2 ** 31 } }, 'budgets.read.maxBytes', `integer <= ${CEILING}`],
    [{ catalog: { maxItems: 1_000_001 } }, 'budgets.catalog.maxItems', 'integer <= 1000000'],
    [{ database: { maxBytes: 2 ** 40 } }, 'budgets.database.maxBytes', `integer <= ${2 ** 36}`],
    [{ match: { maxTimeoutMs: 2 ** 31 } }, 'budgets.match.maxTimeoutMs', 'integer <= 2147483647'],
  ];
  for (const [budgets, at, expected] of cases) {
    await rejectsWith(CapabilityGraph.open({ providers: [inline('acme')], budgets }), 'CG_CONFIG_INVALID', 'config', 'check_config', { path: at, expected });
  }
  // At the ceilings themselves it opens.
  const g = await CapabilityGraph.open({ providers: [inline('acme')], budgets: { read: { maxResponseBytes: CEILING, maxBytes: CEILING } } });
  await g.close();
});

test('a 64 GiB sparse document under raised budgets is too large before it is read', { timeout: 180_000 }, async () => {
  const dir = folder({ 'huge.md': { sparse: 64 * 1024 * MIB }, 'small.md': '# small\n' });
  try {
    const out = await inChild(
      dir,
      `const providers = [{ definition: { providerId: 'acme', name: 'A', version: '1', capabilities: [
        { capabilityId: 'x', name: 'X', description: 'D.', whenToUse: 'W.', knowledge: [
          { kind: 'document', knowledgeId: 'HUGE', role: 'guide', locator: { type: 'relative-file', path: 'huge.md' } },
          { kind: 'document', knowledgeId: 'SMALL', role: 'guide', locator: { type: 'relative-file', path: 'small.md' } }] }] },
        documentRoot: dir }];
      // Budgets that once let a read reserve the file's whole reported size.
      const unbounded = await outcome(CapabilityGraph.open({ providers, budgets: { read: { maxResponseBytes: ${Number.MAX_SAFE_INTEGER}, maxBytes: ${Number.MAX_SAFE_INTEGER} } } }));
      if (unbounded.ok) print(await outcome(unbounded.v.readDocuments({ selected: ['acme::x'] })));
      else print(unbounded);
      const g = await CapabilityGraph.open({ providers, budgets: { read: { maxResponseBytes: ${CEILING}, maxBytes: ${CEILING} } } });
      const read = await g.readDocuments({ selected: ['acme::x'] });
      print(read.results.map((r) => r.ok ? r.value.text : r.error));
      await g.close();`,
    );
    assert.deepEqual([out[0].e.code, out[0].e.phase, out[0].e.nextAction, out[0].e.details.path], ['CG_CONFIG_INVALID', 'config', 'check_config', 'budgets.read.maxResponseBytes']);
    const [huge, small] = out[1];
    assert.deepEqual([huge.code, huge.phase, huge.nextAction], ['CG_DOCUMENT_TOO_LARGE', 'document', 'narrow_scope']);
    assert.equal(huge.details.limit, CEILING);
    assert.equal(small, '# small\n');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an answer whose escaped text would not fit its budget is CG_RESULT_TOO_LARGE, measured before it is printed', { timeout: 180_000 }, async () => {
  // 96 MiB of NUL bytes is valid UTF-8 that JSON prints six times as long.
  const dir = folder({ 'nul.md': { sparse: 96 * MIB } });
  try {
    const out = await inChild(
      dir,
      `const g = await CapabilityGraph.open({ providers: [{ definition: { providerId: 'acme', name: 'A', version: '1', capabilities: [
        { capabilityId: 'x', name: 'X', description: 'D.', whenToUse: 'W.', knowledge: [
          { kind: 'document', knowledgeId: 'NUL', role: 'guide', locator: { type: 'relative-file', path: 'nul.md' } }] }] },
        documentRoot: dir }], budgets: { read: { maxResponseBytes: ${CEILING}, maxBytes: ${64 * MIB} } } });
      print(await outcome(g.readDocuments({ selected: ['acme::x'] })));
      print(await outcome(g.readDocumentPage({ capability: 'acme::x', knowledgeId: 'NUL', maxBytes: ${64 * MIB} })));
      const small = await g.readDocumentPage({ capability: 'acme::x', knowledgeId: 'NUL', startOffset: ${90 * MIB}, maxBytes: 16 });
      print({ ok: true, v: { bytes: small.byteLength, total: small.totalBytes } });
      await g.close();`,
    );
    for (const { ok, e } of out.slice(0, 2)) {
      assert.equal(ok, false);
      assert.equal(e.code, 'CG_RESULT_TOO_LARGE');
      assert.equal(e.nextAction, 'narrow_scope');
      assert.equal(e.phase, 'document');
      assert.deepEqual(e.details, { budget: 'read.maxResponseBytes', limit: CEILING });
    }
    assert.deepEqual(out[2].v, { bytes: 16, total: 96 * MIB });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('large documents are hashed on the long-read lane: with it held, small reads and match still answer', { timeout: 120_000 }, async () => {
  const dir = folder({ 'big.md': Buffer.alloc(12 * MIB, 'all work and no play\n\n'), 'small.md': '# small\n' });
  const graph = await CapabilityGraph.open({ providers: [provider(dir, ['big.md', 'small.md'])], executor: lexicalExecutor() });
  native.holdLongReads(true);
  let released = false;
  try {
    const big = Array.from({ length: 8 }, () => graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'D-0', maxBytes: 64 }));
    let settled = 0;
    for (const p of big) p.then(() => settled++, () => settled++);
    const small = await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'D-1' });
    assert.equal(small.text, '# small\n');
    const whole = await graph.readDocuments({ selected: ['acme::x'], knowledgeIds: ['D-1'] });
    assert.equal(whole.results[0].value.text, '# small\n');
    const matched = await graph.match({ intent: 'capability x' });
    assert.equal(matched.status, 'matched');
    assert.equal(settled, 0, 'the large reads wait on the lane');
    native.holdLongReads(false);
    released = true;
    const pages = await Promise.all(big);
    assert.equal(new Set(pages.map((p) => p.contentId)).size, 1);
    assert.ok(pages.every((p) => p.text === 'all work and no play\n\n'.repeat(3).slice(0, p.byteLength)));
    // Known by its stamp from then on: a page far into it is served off the lane, held or not.
    native.holdLongReads(true);
    const far = await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'D-0', startOffset: 11 * 22 * 47_000, maxBytes: 22 });
    assert.equal(far.contentId, pages[0].contentId);
  } finally {
    if (!released) native.holdLongReads(false);
    native.holdLongReads(false);
    await graph.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** The JSON inside a cursor, and a cursor made from edited JSON. */
const decode = (cursor) => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
const encode = (json) => Buffer.from(JSON.stringify(json), 'utf8').toString('base64url');

test('a page cursor is tamper-evident, and its content ID is the document’s own', async () => {
  const text = 'paragraph one\n\nparagraph two\n\nparagraph three\n\n'.repeat(50);
  const dir = folder({ 'guide.md': text });
  const open = () => CapabilityGraph.open({ providers: [provider(dir, ['guide.md'])] });
  const graph = await open();
  try {
    const first = await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'D-0', maxBytes: 100 });
    const wire = decode(first.nextCursor);
    assert.deepEqual(Object.keys(wire), ['v', 'kind', 'rev', 'filter', 'after', 'check']);
    const after = JSON.parse(wire.after);
    // An edited content ID (or offset), with the check left as it was, is refused and never echoed.
    for (const edit of [{ contentId: `c:${'0'.repeat(64)}` }, { offset: after.offset + 1 }]) {
      const forged = encode({ ...wire, after: JSON.stringify({ ...after, ...edit }) });
      await rejectsWith(graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'D-0', cursor: forged }), 'CG_INPUT_INVALID', 'document', 'fix_input');
    }
    // Another graph (another process, another host) serving the same revision takes the cursor.
    const other = await open();
    const here = await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'D-0', cursor: first.nextCursor });
    const there = await other.readDocumentPage({ capability: 'acme::x', knowledgeId: 'D-0', cursor: first.nextCursor });
    assert.deepEqual(there, here);
    await other.close();

    // Rewritten to the same size with its modification time put back: a changed document.
    const file = path.join(dir, 'guide.md');
    const { mtime } = fs.statSync(file);
    fs.writeFileSync(file, text.toUpperCase());
    fs.utimesSync(file, mtime, mtime);
    await rejectsWith(graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'D-0', cursor: first.nextCursor }), 'CG_REVISION_MISMATCH', 'document', 'refresh', { reason: 'document_changed' });
  } finally {
    await graph.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
