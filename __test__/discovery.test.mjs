// The progressive discovery chain (seed 003) and the paged discovery verbs (reference/core.md
// §2–§6): budgets, cursors, completeness, scope and revisions.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { cap, inline, rejectsWith, seedSource } from './helpers.mjs';

const ids = (items) => items.map((i) => i.qualifiedId);

async function walkChain(g, ref) {
  // 1. the catalog names the entry points
  const catalog = await g.listCatalog();
  assert.ok(ids(catalog.items).includes('seed.http::route'));
  const revision = catalog.meta.staticRevision;
  // 2. route's children include the HTTP route and its validation
  const neighbours = await g.getNeighbors(ref('route'), { kinds: ['children'], requiredStaticRevision: revision });
  assert.deepEqual(ids(neighbours.groups.children.items), ['seed.http::route.http', 'seed.http::route.validation']);
  assert.equal(neighbours.meta.staticRevision, revision);
  // 3. details of route.validation
  const details = await g.getCapabilities([ref('route.validation')], { requiredStaticRevision: revision });
  const [slot] = details.results;
  assert.equal(slot.ok, true);
  assert.deepEqual(slot.value.neighborSummaries.requires.items, [
    { id: { providerId: 'seed.http', capabilityId: 'schema.request' }, name: 'Request schema' },
  ]);
  assert.equal(slot.value.knowledge.items[0].knowledgeId, 'D-02');
  // 4. the selection adds schema.request, required by route.validation
  const selection = await g.resolveSelection({ selected: [ref('route.validation')], requiredStaticRevision: revision });
  assert.deepEqual(selection.added, [{ providerId: 'seed.http', capabilityId: 'schema.request' }]);
  const reason = selection.reasons.find((r) => r.id.capabilityId === 'schema.request').reason;
  assert.deepEqual(reason, { requested: false, requiredBy: [{ providerId: 'seed.http', capabilityId: 'route.validation' }] });
  assert.equal(selection.meta.staticRevisionByProvider['seed.http'], revision);
}

test('the seed 003 discovery chain on one revision, unbound and bound', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource()] });
  await walkChain(graph, (id) => `seed.http::${id}`);
  await walkChain(graph.forProvider('seed.http'), (id) => id);
  await graph.close();
});

test('listProviders and getProvider describe providers and their specification', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource(), inline('acme')] });
  const providers = await graph.listProviders();
  assert.deepEqual(providers.items.map((p) => [p.providerId, p.authorityKind]), [['acme', 'inline'], ['seed.http', 'file']]);
  assert.equal(providers.items[1].specification.documentCount, 1);
  const seed = await graph.getProvider('seed.http');
  assert.equal(seed.specificationDocuments.items[0].knowledgeId, 'SPEC-01');
  assert.equal(seed.specificationDocuments.completeness, 'complete');
  assert.equal(seed.meta.completeness, 'complete');
  const acme = await graph.getProvider('acme');
  assert.equal(acme.specificationDocuments, undefined);
  await rejectsWith(graph.getProvider('nope'), 'CG_PROVIDER_NOT_FOUND', 'query', 'refresh');
  await rejectsWith(graph.getProvider('Bad'), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.getProvider('acme', { requestProviderScope: ['seed.http'] }), 'CG_ACCESS_DENIED', 'query', 'check_config');
  await rejectsWith(graph.forProvider('seed.http').getProvider({ requestProviderScope: ['seed.http'] }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  const narrowed = await graph.listProviders({ requestProviderScope: ['acme'] });
  assert.deepEqual(narrowed.items.map((p) => p.providerId), ['acme']);
  await rejectsWith(graph.listProviders({ requestProviderScope: ['zeta'] }), 'CG_SCOPE_DENIED', 'query', 'narrow_scope');
  await graph.close();
});

const specDocs = (n) =>
  Array.from({ length: n }, (_, i) => ({
    kind: 'document',
    knowledgeId: `S-${String(i).padStart(3, '0')}`,
    role: 'specification',
    locator: { type: 'relative-file', path: `spec/${i}.md` },
  }));

test('specification documents page by count and resume after the last one', async () => {
  const specification = { specificationId: 'x', version: '1', documents: specDocs(45) };
  const graph = await CapabilityGraph.open({ providers: [inline('acme', [], { specification })] });
  const first = await graph.getProvider('acme');
  assert.equal(first.specificationDocuments.items.length, 20);
  assert.equal(first.meta.completeness, 'truncated');
  const seen = [];
  let page = await graph.listSpecificationDocuments({ providerId: 'acme', limit: 1000 });
  assert.equal(page.items.length, 45, 'limits above the maximum are clamped to 100');
  let cursor;
  do {
    page = await graph.listSpecificationDocuments({ providerId: 'acme', limit: 7, cursor });
    seen.push(...page.items.map((d) => d.knowledgeId));
    cursor = page.nextCursor;
    assert.equal(page.completeness, cursor ? 'truncated' : 'complete');
  } while (cursor);
  assert.deepEqual(seen, specDocs(45).map((d) => d.knowledgeId));
  const c = (await graph.listSpecificationDocuments({ providerId: 'acme', limit: 7 })).nextCursor;
  await rejectsWith(graph.listSpecificationDocuments({ providerId: 'acme', limit: 8, cursor: c }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  await rejectsWith(graph.listSpecificationDocuments({ providerId: 'acme', limit: 0 }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await graph.close();
});

/** A generated graph: `providers` providers of `n` capabilities with a parent tree. */
function generated(providers, n) {
  return Array.from({ length: providers }, (_, p) =>
    inline(
      `gen${p}`,
      Array.from({ length: n }, (_, i) =>
        cap(`c${String(i).padStart(4, '0')}`, i > 0 ? { parents: [`c${String(Math.floor((i - 1) / 3)).padStart(4, '0')}`] } : {}),
      ),
    ),
  );
}

test('a full catalog walk returns every capability exactly once, in order', async () => {
  const graph = await CapabilityGraph.open({ providers: generated(3, 250) });
  const seen = [];
  let cursor;
  let pages = 0;
  do {
    const page = await graph.listCatalog({ limit: 200, cursor });
    seen.push(...ids(page.items));
    assert.ok(JSON.stringify(page).length <= 24_576, 'a page stays within catalog.maxBytes');
    cursor = page.nextCursor;
    assert.equal(page.meta.completeness, cursor ? 'truncated' : 'complete');
    pages += 1;
  } while (cursor);
  const expected = ['gen0', 'gen1', 'gen2'].flatMap((p) => Array.from({ length: 250 }, (_, i) => `${p}::c${String(i).padStart(4, '0')}`));
  assert.deepEqual(seen, expected);
  assert.ok(pages > 750 / 200, 'the byte budget, not only the count, cut pages');
  await graph.close();
});

test('catalog filters: prefix, parent, scope; limits clamp and cursors bind their filters', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource(), ...generated(2, 30)] });
  const routes = await graph.listCatalog({ capabilityIdPrefix: 'route', requestProviderScope: ['seed.http'] });
  assert.deepEqual(ids(routes.items), ['seed.http::route', 'seed.http::route.http', 'seed.http::route.validation']);
  assert.deepEqual(routes.meta.filter, { scope: ['seed.http'], prefix: 'route', parent: null, limit: 200 });
  const children = await graph.listCatalog({ parent: 'gen1::c0000' });
  assert.deepEqual(ids(children.items), ['gen1::c0001', 'gen1::c0002', 'gen1::c0003']);
  const clamped = await graph.listCatalog({ limit: 5000 });
  assert.equal(clamped.meta.filter.limit, 200);

  const first = await graph.listCatalog({ limit: 5 });
  assert.equal(first.items.length, 5);
  const next = await graph.listCatalog({ limit: 5, cursor: first.nextCursor });
  assert.equal(next.items[0].qualifiedId, 'gen0::c0005');
  const misuse = [
    { limit: 6, cursor: first.nextCursor },
    { limit: 5, capabilityIdPrefix: 'c', cursor: first.nextCursor },
    { limit: 5, requestProviderScope: ['gen0'], cursor: first.nextCursor },
  ];
  for (const query of misuse) await rejectsWith(graph.listCatalog(query), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  for (const cursor of ['garbage!', '', 'x'.repeat(40_000), 'eyJ2IjoxfQ']) {
    await rejectsWith(graph.listCatalog({ limit: 5, cursor }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  }
  await rejectsWith(graph.listCatalog({ parent: 'gen1::nope' }), 'CG_CAPABILITY_NOT_FOUND', 'query', 'refresh');
  await rejectsWith(graph.listCatalog({ parent: 'gen1::c0000', requestProviderScope: ['gen0'] }), 'CG_ACCESS_DENIED', 'query', 'check_config');
  await rejectsWith(graph.listCatalog({ limit: 0 }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.listCatalog({ limit: 1.5 }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.listCatalog({ capabilityIdPrefix: 3 }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.listCatalog({ requiredStaticRevision: 's:0000000000000000' }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await graph.close();
});

test('an oversized catalog row is left out with a warning; a page that cannot hold one row fails', async () => {
  const big = cap('big', { description: 'x'.repeat(3000) });
  const graph = await CapabilityGraph.open({ providers: [inline('acme', [cap('a'), big, cap('c')])] });
  const page = await graph.listCatalog();
  assert.deepEqual(ids(page.items), ['acme::a', 'acme::c']);
  assert.equal(page.meta.completeness, 'partial');
  assert.equal(page.meta.warnings[0].code, 'CG_RESULT_TOO_LARGE');
  assert.equal(page.meta.warnings[0].details.qualifiedId, 'acme::big');
  await graph.close();
  const tiny = await CapabilityGraph.open({ providers: [inline('acme', [cap('a')])], budgets: { catalog: { maxBytes: 400 } } });
  await rejectsWith(tiny.listCatalog(), 'CG_BUDGET_EXCEEDED', 'query', 'narrow_scope');
  await tiny.close();
  // A page that fits is served whole: no room is kept for a cursor it does not carry.
  const small = await CapabilityGraph.open({ providers: [inline('acme', [cap('a')])], budgets: { catalog: { maxBytes: 600 } } });
  const one = await small.listCatalog();
  assert.ok(JSON.stringify(one).length <= 600);
  assert.deepEqual([ids(one.items), one.meta.completeness, one.nextCursor], [['acme::a'], 'complete', undefined]);
  await small.close();
});

test('neighbour groups page per kind with their own cursors', async () => {
  const children = Array.from({ length: 12 }, (_, i) => cap(`k${String(i).padStart(2, '0')}`, { parents: ['root'], related: ['root'] }));
  const graph = await CapabilityGraph.open({ providers: [inline('acme', [cap('root'), ...children])] });
  let page = await graph.getNeighbors('acme::root', { limitPerKind: 5 });
  assert.equal(page.groups.children.items.length, 5);
  assert.equal(page.groups.relatedBy.items.length, 5);
  assert.equal(page.groups.parents.completeness, 'complete');
  assert.equal(page.meta.completeness, 'truncated');
  const collected = { children: ids(page.groups.children.items), relatedBy: ids(page.groups.relatedBy.items) };
  while (page.groups.children.nextCursor || page.groups.relatedBy.nextCursor) {
    const kinds = ['children', 'relatedBy'].filter((k) => page.groups[k].nextCursor);
    const cursors = Object.fromEntries(kinds.map((k) => [k, page.groups[k].nextCursor]));
    page = await graph.getNeighbors('acme::root', { kinds, cursors, limitPerKind: 5 });
    for (const k of kinds) collected[k].push(...ids(page.groups[k].items));
  }
  const all = children.map((c) => `acme::${c.capabilityId}`);
  assert.deepEqual(collected, { children: all, relatedBy: all });
  const cursor = (await graph.getNeighbors('acme::root', { limitPerKind: 5 })).groups.children.nextCursor;
  await rejectsWith(graph.getNeighbors('acme::root', { kinds: ['relatedBy'], cursors: { relatedBy: cursor }, limitPerKind: 5 }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  await rejectsWith(graph.getNeighbors('acme::root', { kinds: ['children'], cursors: { children: cursor }, limitPerKind: 6 }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  await rejectsWith(graph.getNeighbors('acme::root', { kinds: ['parents'], cursors: { children: cursor } }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.getNeighbors('acme::root', { kinds: ['children', 'children'] }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.getNeighbors('acme::root', { kinds: ['siblings'] }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.getNeighbors('acme::nope'), 'CG_CAPABILITY_NOT_FOUND', 'query', 'refresh');
  await rejectsWith(graph.getNeighbors('a::b::c'), 'CG_INPUT_INVALID', 'query', 'fix_input');
  const none = await graph.getNeighbors('acme::root', { kinds: [] });
  assert.equal(none.meta.completeness, 'complete');
  await graph.close();
});

test('neighbour pages share one byte budget and stop a kind at an item boundary', async () => {
  const children = Array.from({ length: 40 }, (_, i) => cap(`k${String(i).padStart(2, '0')}`, { parents: ['root'], description: 'd'.repeat(400) }));
  const graph = await CapabilityGraph.open({ providers: [inline('acme', [cap('root'), ...children])] });
  const page = await graph.getNeighbors('acme::root');
  assert.ok(JSON.stringify(page).length <= 24_576);
  assert.ok(page.groups.children.items.length < 40);
  assert.equal(page.groups.children.completeness, 'truncated');
  await graph.close();
});

test('getCapabilities keeps input slots; one bad item never empties the others', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource(), inline('acme', [cap('a')])] });
  const r = await graph.getCapabilities(['seed.http::route', 'bad id', 'seed.http::nope', 'zeta::x', 'seed.http::route'], {
    requestProviderScope: ['seed.http'],
  });
  assert.deepEqual(r.results.map((s) => [s.inputIndex, s.ok, s.error?.code]), [
    [0, true, undefined],
    [1, false, 'CG_INPUT_INVALID'],
    [2, false, 'CG_CAPABILITY_NOT_FOUND'],
    [3, false, 'CG_PROVIDER_NOT_FOUND'],
    [4, true, undefined],
  ]);
  assert.equal(r.meta.completeness, 'partial');
  assert.equal(r.results[2].error.phase, 'query');
  const denied = await graph.getCapabilities(['acme::a'], { requestProviderScope: ['seed.http'] });
  assert.equal(denied.results[0].error.code, 'CG_ACCESS_DENIED');
  const empty = await graph.getCapabilities([]);
  assert.deepEqual(empty.results, []);
  await rejectsWith(graph.getCapabilities(Array(21).fill('seed.http::route')), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope');
  await rejectsWith(graph.getCapabilities('seed.http::route'), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.getCapabilities(['seed.http::route'], { requiredStaticRevision: 's:0000000000000000' }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  const zero = await graph.getCapabilities(['seed.http::route'], { neighborLimitPerKind: 0 });
  assert.equal(zero.results[0].value.neighborSummaries.children.completeness, 'truncated');
  assert.equal(zero.meta.completeness, 'truncated');
  await graph.close();
});

test('detail knowledge pages with per-capability cursors', async () => {
  const knowledge = Array.from({ length: 5 }, (_, i) => ({
    kind: 'document',
    knowledgeId: `D-${i}`,
    role: 'guide',
    locator: { type: 'relative-file', path: `k/${i}.md` },
  }));
  knowledge.push({ kind: 'collection', knowledgeId: 'C-1', members: knowledge.slice(0, 2).map((d) => ({ ...d })) });
  const graph = await CapabilityGraph.open({ providers: [inline('acme', [cap('a', { knowledge })])] });
  const first = await graph.getCapabilities(['acme::a'], { knowledgeLimit: 4 });
  const k = first.results[0].value.knowledge;
  assert.deepEqual(k.items.map((i) => i.knowledgeId), ['C-1', 'D-0', 'D-1', 'D-2']);
  assert.deepEqual(k.items[0], { kind: 'collection', knowledgeId: 'C-1', memberCount: 2 });
  const second = await graph.getCapabilities(['acme::a'], { knowledgeLimit: 4, knowledgeCursors: { 'acme::a': k.nextCursor } });
  assert.deepEqual(second.results[0].value.knowledge.items.map((i) => i.knowledgeId), ['D-3', 'D-4']);
  assert.equal(second.results[0].value.knowledge.completeness, 'complete');
  const garbage = await graph.getCapabilities(['acme::a'], { knowledgeCursors: { 'acme::a': 'nope' } });
  assert.equal(garbage.results[0].error.code, 'CG_INPUT_INVALID');
  await rejectsWith(graph.getCapabilities(['acme::a'], { knowledgeLimit: 5, knowledgeCursors: { 'acme::a': k.nextCursor } }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  await rejectsWith(graph.getCapabilities(['acme::a'], { knowledgeCursors: { 'acme::b': k.nextCursor } }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  const members = await graph.listKnowledgeMembers({ capability: 'acme::a', collectionId: 'C-1', limit: 1 });
  assert.deepEqual(members.items.map((m) => m.knowledgeId), ['D-0']);
  const rest = await graph.listKnowledgeMembers({ capability: 'acme::a', collectionId: 'C-1', limit: 1, cursor: members.nextCursor });
  assert.deepEqual(rest.items.map((m) => m.knowledgeId), ['D-1']);
  assert.equal(rest.completeness, 'complete');
  await rejectsWith(graph.listKnowledgeMembers({ capability: 'acme::a', collectionId: 'D-0' }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.listKnowledgeMembers({ capability: 'acme::a', collectionId: 'X-9' }), 'CG_DOCUMENT_NOT_FOUND', 'query', 'fix_input');
  await graph.close();
});

test('resolveSelection is all or nothing', async () => {
  const chain = Array.from({ length: 6 }, (_, i) => cap(`c${i}`, i < 5 ? { requires: [`c${i + 1}`] } : {}));
  const graph = await CapabilityGraph.open({ providers: [inline('acme', chain)], budgets: { selection: { maxNodes: 4, maxSelected: 3 } } });
  await rejectsWith(graph.resolveSelection({ selected: ['acme::c0'] }), 'CG_RESULT_TOO_LARGE', 'query', 'narrow_scope', { budget: 'selection.maxNodes' });
  const ok = await graph.resolveSelection({ selected: ['acme::c3', 'acme::c3'] });
  assert.deepEqual(ok.resolved.map((i) => i.capabilityId), ['c3', 'c4', 'c5']);
  assert.deepEqual(ok.requested.map((i) => i.capabilityId), ['c3']);
  await rejectsWith(graph.resolveSelection({ selected: [] }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.resolveSelection({ selected: Array(4).fill('acme::c5') }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope');
  await rejectsWith(graph.resolveSelection({ selected: ['acme::nope'] }), 'CG_CAPABILITY_NOT_FOUND', 'query', 'refresh');
  await graph.close();
});

test('a cursor survives a reload only when its revision is pinned and still retained', async () => {
  const def = (extra) => ({ providerId: 'acme', name: 'Acme', version: '1', capabilities: Array.from({ length: 9 }, (_, i) => cap(`c${i}`, extra)) });
  const graph = await CapabilityGraph.open({ providers: [{ definition: def({}) }] });
  const first = await graph.listCatalog({ limit: 3 });
  const r1 = first.meta.staticRevision;
  await graph.reload({ definitions: { acme: def({ distinction: 'changed once' }) } });
  await rejectsWith(graph.listCatalog({ limit: 3, cursor: first.nextCursor }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  const continued = await graph.listCatalog({ limit: 3, cursor: first.nextCursor, requiredStaticRevision: r1 });
  assert.equal(continued.meta.servedFrom, 'previous');
  assert.equal(continued.items[0].qualifiedId, 'acme::c3');
  assert.equal(continued.items[0].distinction, undefined);
  await graph.reload({ definitions: { acme: def({ distinction: 'changed twice' }) } });
  await rejectsWith(graph.listCatalog({ limit: 3, cursor: first.nextCursor, requiredStaticRevision: r1 }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  await graph.close();
});

test('a verb with one target provider reports that provider alone: scope, revision, servedFrom', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const root = mkdtempSync(join(tmpdir(), 'cg-one-'));
  writeFileSync(join(root, 'spec.md'), '# spec\n');
  writeFileSync(join(root, 'member.md'), '# member\n');
  const doc = (knowledgeId, file, role = 'guide') => ({ kind: 'document', knowledgeId, role, locator: { type: 'relative-file', path: file } });
  const def = (providerId, version) => ({
    providerId,
    name: providerId,
    version,
    capabilities: [cap('a', { knowledge: [{ kind: 'collection', knowledgeId: 'C', members: [doc('M', 'member.md')] }] }), cap('b', { parents: ['a'] })],
    specification: { specificationId: 's', version: '1', documents: [doc('S', 'spec.md', 'specification')] },
  });
  const graph = await CapabilityGraph.open({ providers: ['p0', 'p1'].map((p) => ({ definition: def(p, '1'), documentRoot: root })) });
  try {
    const calls = (extra = {}) => [
      graph.getProvider('p0', extra),
      graph.listSpecificationDocuments({ providerId: 'p0', ...extra }),
      graph.readSpecification({ providerId: 'p0', ...extra }),
      graph.readSpecificationPage({ providerId: 'p0', knowledgeId: 'S', ...extra }),
      graph.getNeighbors('p0::a', extra),
      graph.listKnowledgeMembers({ capability: 'p0::a', collectionId: 'C', ...extra }),
      graph.readDocumentPage({ capability: 'p0::a', knowledgeId: 'M', ...extra }),
    ];
    const old = (await graph.getProvider('p0')).meta.staticRevision;
    for (const { meta } of await Promise.all(calls())) {
      assert.deepEqual([meta.scope, meta.staticRevision, meta.servedFrom, meta.staticRevisionByProvider], [['p0'], old, 'current', undefined]);
    }
    await graph.reload({ providerId: 'p0', definitions: { p0: def('p0', '2') } });
    const fresh = (await graph.getProvider('p0')).meta.staticRevision;
    assert.notEqual(fresh, old);
    for (const { meta } of await Promise.all(calls({ requiredStaticRevision: old }))) {
      assert.deepEqual([meta.scope, meta.staticRevision, meta.servedFrom], [['p0'], old, 'previous']);
    }
    // A provider outside the call's scope is still refused as before.
    await rejectsWith(graph.getProvider('p0', { requestProviderScope: ['p1'] }), 'CG_ACCESS_DENIED', 'query', 'check_config');
  } finally {
    await graph.close();
    rmSync(root, { recursive: true, force: true });
  }
});
