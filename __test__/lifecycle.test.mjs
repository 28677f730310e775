// Work that grows with the graph happens off the JS thread: the lexical index is built in the
// background after open and reload, and close() releases root handles at once and frees the
// snapshots on the pool (SPEC §14 D17; ARCHITECTURE "Which thread").
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CapabilityGraph, lexicalExecutor } from '@devcodex/capability-graph';
import { cap, rejectsWith, seedSource } from './helpers.mjs';

const many = (n, prefix) =>
  Array.from({ length: n }, (_, i) => cap(`${prefix}.c${i}`, { description: `Handles ${prefix} task number ${i} with care.` }));

test('match answers the same whether the index was still being built or long ready', async () => {
  const definition = { providerId: 'acme', name: 'Acme', version: '1', capabilities: [...many(300, 'billing'), cap('invoices.send', { description: 'Send invoices to customers by email.' })] };
  const intent = 'send invoices by email';
  const early = await CapabilityGraph.open({ providers: [{ definition }], executor: lexicalExecutor() });
  const first = await early.match({ intent });
  const again = await early.match({ intent });
  assert.deepEqual(first, again);
  assert.equal(first.matches[0].qualifiedId, 'acme::invoices.send');

  // After a reload that changes the provider, the new snapshot's index is built in the background too.
  const changed = { ...definition, capabilities: [...definition.capabilities, cap('invoices.void', { description: 'Void an invoice sent by mistake.' })] };
  const report = await early.reload({ definitions: { acme: changed } });
  assert.equal(report.ok, true);
  const afterReload = await early.match({ intent: 'void an invoice sent by mistake' });
  assert.equal(afterReload.matches[0].qualifiedId, 'acme::invoices.void');
  await early.close();
});

test('closing while the index is still being built settles everything', async () => {
  const definition = { providerId: 'acme', name: 'Acme', version: '1', capabilities: many(2000, 'area') };
  for (let i = 0; i < 5; i++) {
    const graph = await CapabilityGraph.open({ providers: [{ definition }], executor: lexicalExecutor() });
    const pending = graph.match({ intent: 'handles task number 7' });
    await graph.close();
    // Either it started before close and answers, or it finds the graph closed.
    await pending.then(
      (r) => assert.equal(r.status, 'matched'),
      (e) => assert.equal(e.code, 'CG_GRAPH_CLOSED'),
    );
    await rejectsWith(graph.match({ intent: 'anything' }), 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  }
});

/** Open descriptors of this process whose target lies under `dir`. */
function handlesUnder(dir) {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir);
    } catch {
      return false;
    }
  });
}

test('close() releases every trusted root handle before it resolves', { skip: process.platform !== 'linux' && 'reads /proc/self/fd' }, async () => {
  const base = mkdtempSync(path.join(tmpdir(), 'cg-handles-'));
  const docs = path.join(base, 'docs');
  const alias = path.join(base, 'alias');
  mkdirSync(docs);
  mkdirSync(alias);
  writeFileSync(path.join(docs, 'a.md'), 'a');
  writeFileSync(path.join(alias, 'b.md'), 'b');
  const knowledge = [
    { kind: 'document', knowledgeId: 'A', role: 'guide', locator: { type: 'relative-file', path: 'a.md' } },
    { kind: 'document', knowledgeId: 'B', role: 'guide', locator: { type: 'relative-file', path: 'b.md', root: 'more' } },
  ];
  const graph = await CapabilityGraph.open({
    providers: [
      seedSource(),
      { definition: { providerId: 'acme', name: 'Acme', version: '1', capabilities: [cap('x', { knowledge })] }, documentRoot: docs, knowledgeRoots: { more: { kind: 'directory', rootDir: alias } } },
    ],
  });
  try {
    const read = await graph.readDocuments({ selected: ['acme::x'] });
    assert.deepEqual(read.results.map((r) => r.value.text), ['a', 'b']);
    assert.ok(handlesUnder(base).length >= 2, 'the roots are held open while the graph is');
    await graph.close();
    assert.deepEqual(handlesUnder(base), []);
    await rejectsWith(graph.readDocuments({ selected: ['acme::x'] }), 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  } finally {
    await graph.close();
    rmSync(base, { recursive: true, force: true });
  }
});

test('the engine accounts for the memory its snapshots keep', async () => {
  const stats = Symbol.for('capability-graph.stats');
  const definition = (n, text) => ({ providerId: 'acme', name: 'Acme', version: '1', capabilities: Array.from({ length: n }, (_, i) => cap(`c${i}`, { description: text })) });
  const graph = await CapabilityGraph.open({ providers: [{ definition: definition(50, 'short') }] });
  const before = graph[stats]();
  assert.deepEqual(Object.keys(before.providers[0]), ['providerId', 'capabilities', 'snapshotBytes', 'previousSnapshotBytes', 'lexicalIndexBytes', 'vectorBytes', 'vectorsFile']);
  assert.equal(before.providers[0].lexicalIndexBytes, null);
  // Without the semantic executor there are no capability vectors.
  assert.deepEqual([before.providers[0].vectorBytes, before.providers[0].vectorsFile, before.embedded], [null, null, null]);
  assert.equal(before.providers[0].capabilities, 50);
  assert.equal(before.providers[0].previousSnapshotBytes, null);
  await graph.reload({ definitions: { acme: definition(50, 'x'.repeat(2000)) } });
  const after = graph[stats]().providers[0];
  assert.equal(after.previousSnapshotBytes, before.providers[0].snapshotBytes);
  assert.ok(after.snapshotBytes >= before.providers[0].snapshotBytes + 50 * 1990, JSON.stringify(after));
  await graph.close();
  assert.throws(() => graph[stats](), (e) => e.code === 'CG_GRAPH_CLOSED');

  // With the lexical executor, the index counts once it is built (the first match waits for it).
  const lexical = await CapabilityGraph.open({ providers: [{ definition: definition(50, 'short words here') }], executor: lexicalExecutor() });
  await lexical.match({ intent: 'short words' });
  assert.ok(lexical[stats]().providers[0].lexicalIndexBytes > 0);
  await lexical.close();
});
