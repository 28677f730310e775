// Every discovery budget: its default is echoed in meta.budgets, and an override takes effect.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { cap, inline, rejectsWith } from './helpers.mjs';

const doc = (id, role = 'guide') => ({ kind: 'document', knowledgeId: id, role, locator: { type: 'relative-file', path: `${id}.md` } });
const kids = (n) => Array.from({ length: n }, (_, i) => cap(`k${String(i).padStart(3, '0')}`, { parents: ['root'] }));
const providers = () => [
  inline('acme', [cap('root', { knowledge: [...Array.from({ length: 30 }, (_, i) => doc(`D-${String(i).padStart(2, '0')}`)), { kind: 'collection', knowledgeId: 'C', members: Array.from({ length: 30 }, (_, i) => doc(`M-${String(i).padStart(2, '0')}`)) }] }), ...kids(150)], {
    specification: { specificationId: 's', version: '1', documents: Array.from({ length: 30 }, (_, i) => doc(`S-${String(i).padStart(2, '0')}`, 'specification')) },
  }),
];
const open = (budgets) => CapabilityGraph.open({ providers: providers(), budgets });

test('defaults are echoed in meta.budgets', async () => {
  const g = await open();
  assert.deepEqual((await g.listCatalog()).meta.budgets, { 'catalog.maxBytes': 24576, 'catalog.maxItems': 200, 'catalog.maxItemBytes': 2048 });
  assert.deepEqual((await g.getNeighbors('acme::root')).meta.budgets, { 'neighbors.maxPageSize': 100, 'neighbors.maxBytes': 24576, 'neighbors.maxItemBytes': 2048 });
  assert.deepEqual((await g.getCapabilities(['acme::root'])).meta.budgets, { 'detail.maxItemBytes': 16384, 'detail.maxBytes': 131072 });
  assert.deepEqual((await g.getProvider('acme')).meta.budgets, { 'specification.maxBytes': 131072, 'specification.maxItemBytes': 16384 });
  assert.deepEqual((await g.resolveSelection({ selected: ['acme::root'] })).meta.budgets, { 'selection.maxSelected': 32, 'selection.maxNodes': 128, 'selection.maxEdges': 256 });
  assert.deepEqual((await g.listKnowledgeMembers({ capability: 'acme::root', collectionId: 'C' })).meta.budgets, { 'detail.maxBytes': 131072, 'detail.maxItemBytes': 16384 });
  // default page sizes
  assert.equal((await g.getNeighbors('acme::root')).groups.children.items.length, 50);
  assert.equal((await g.getCapabilities(['acme::root'])).results[0].value.neighborSummaries.children.items.length, 50);
  assert.equal((await g.getCapabilities(['acme::root'])).results[0].value.knowledge.items.length, 20);
  assert.equal((await g.getProvider('acme')).specificationDocuments.items.length, 20);
  assert.equal((await g.listKnowledgeMembers({ capability: 'acme::root', collectionId: 'C' })).items.length, 20);
  // maxima clamp
  assert.equal((await g.getNeighbors('acme::root', { limitPerKind: 1000 })).groups.children.items.length <= 100, true);
  assert.equal((await g.getCapabilities(['acme::root'], { knowledgeLimit: 1000 })).results[0].value.knowledge.items.length, 31);
  await g.close();
});

test('overrides take effect field by field', async () => {
  const g = await open({
    catalog: { maxItems: 7 },
    neighbors: { defaultPageSize: 3, maxPageSize: 4 },
    detail: { maxCapabilities: 2, defaultKnowledgePageSize: 2, maxKnowledgePageSize: 3 },
    specification: { defaultPageSize: 4, maxPageSize: 5 },
    selection: { maxSelected: 1 },
  });
  assert.equal((await g.listCatalog()).items.length, 7);
  assert.equal((await g.listCatalog({ limit: 100 })).meta.filter.limit, 7);
  assert.equal((await g.getNeighbors('acme::root')).groups.children.items.length, 3);
  assert.equal((await g.getNeighbors('acme::root', { limitPerKind: 50 })).groups.children.items.length, 4);
  const detail = (await g.getCapabilities(['acme::root'])).results[0].value;
  assert.equal(detail.knowledge.items.length, 2);
  assert.equal(detail.neighborSummaries.children.items.length, 3);
  assert.equal((await g.getCapabilities(['acme::root'], { knowledgeLimit: 9 })).results[0].value.knowledge.items.length, 3);
  await rejectsWith(g.getCapabilities(['acme::root', 'acme::k001', 'acme::k002']), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope');
  assert.equal((await g.getProvider('acme')).specificationDocuments.items.length, 4);
  assert.equal((await g.listSpecificationDocuments({ providerId: 'acme', limit: 50 })).items.length, 5);
  assert.equal((await g.listKnowledgeMembers({ capability: 'acme::root', collectionId: 'C' })).items.length, 2);
  await rejectsWith(g.resolveSelection({ selected: ['acme::root', 'acme::k001'] }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope');
  await g.close();
});

test('byte budgets bound items and pages', async () => {
  const small = await open({
    neighbors: { maxItemBytes: 100 },
    detail: { maxItemBytes: 1000 },
    specification: { maxItemBytes: 50 },
    catalog: { maxBytes: 2000 },
  });
  const n = await small.getNeighbors('acme::root', { kinds: ['children'], limitPerKind: 2 });
  assert.equal(n.groups.children.completeness, 'partial');
  assert.equal(n.meta.warnings[0].code, 'CG_RESULT_TOO_LARGE');
  assert.equal(n.meta.warnings[0].details.kind, 'children');
  const d = await small.getCapabilities(['acme::root']);
  assert.equal(d.results[0].error.code, 'CG_RESULT_TOO_LARGE');
  await rejectsWith(small.getProvider('acme'), 'CG_RESULT_TOO_LARGE', 'query', 'narrow_scope');
  const page = await small.listCatalog();
  assert.ok(JSON.stringify(page).length <= 2000);
  assert.ok(page.nextCursor);
  await small.close();
  const tight = await open({ detail: { maxBytes: 3000 }, selection: { maxEdges: 1 } });
  await rejectsWith(tight.getCapabilities(['acme::root']), 'CG_RESULT_TOO_LARGE', 'query', 'narrow_scope', { budget: 'detail.maxBytes' });
  await tight.close();
});
