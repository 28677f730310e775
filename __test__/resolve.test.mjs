// resolve (SPEC §6.1), scope and revisions, through the graph and the bound facade.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { cap, inline, rejectsWith, seedSource, throwsWith } from './helpers.mjs';

const openSeed = (extra = {}) => CapabilityGraph.open({ providers: [seedSource(), inline('acme', [cap('a')])], ...extra });

test('resolve adds what a capability requires, with reasons and edges', async () => {
  const graph = await openSeed();
  const r = await graph.resolve({ ids: ['seed.http::route.validation', { providerId: 'seed.http', capabilityId: 'route' }] });
  assert.deepEqual(r.requested, ['seed.http::route.validation', 'seed.http::route']);
  assert.deepEqual(r.added, ['seed.http::schema.request']);
  assert.deepEqual(r.items.map((i) => i.qualifiedId), [...r.requested, ...r.added]);
  assert.deepEqual(r.requiresEdges, [{ from: 'seed.http::route.validation', to: 'seed.http::schema.request' }]);
  const schema = r.items[2];
  assert.deepEqual(schema.reason, { requested: false, requiredBy: ['seed.http::route.validation'] });
  assert.deepEqual(r.items[0].reason, { requested: true, requiredBy: [] });
  const validation = r.items[0];
  assert.deepEqual(validation.id, { providerId: 'seed.http', capabilityId: 'route.validation' });
  assert.deepEqual(validation.parents, [
    { providerId: 'seed.http', capabilityId: 'request' },
    { providerId: 'seed.http', capabilityId: 'route' },
  ]);
  assert.deepEqual(validation.specializes, [{ providerId: 'seed.http', capabilityId: 'route.http' }]);
  assert.equal(validation.knowledge[0].knowledgeId, 'D-02');
  assert.equal(r.meta.completeness, 'complete');
  assert.deepEqual(r.meta.warnings, []);
  assert.deepEqual(r.meta.scope, ['acme', 'seed.http']);
  assert.equal(r.meta.servedFrom, 'current');
  assert.match(r.meta.compositeStaticRevision, /^s:[0-9a-f]{16}$/);
  assert.match(r.meta.staticRevisionByProvider['seed.http'], /^s:[0-9a-f]{16}$/);
  assert.equal(r.meta.staticRevision, undefined);
  assert.equal(validation.staticRevision, r.meta.staticRevisionByProvider['seed.http']);
  await graph.close();
});

test('duplicates collapse and a narrowed scope gives a single staticRevision', async () => {
  const graph = await openSeed();
  const r = await graph.resolve({ ids: ['seed.http::route', 'seed.http::route'], requestProviderScope: ['seed.http'] });
  assert.deepEqual(r.requested, ['seed.http::route']);
  assert.deepEqual(r.meta.scope, ['seed.http']);
  assert.match(r.meta.staticRevision, /^s:[0-9a-f]{16}$/);
  assert.equal(r.meta.staticRevisionByProvider, undefined);
  await graph.close();
});

test('resolve rejects bad input with the documented codes', async () => {
  const graph = await openSeed();
  const bad = (query) => graph.resolve(query);
  for (const id of ['a::b::c', '::x', 'a::', 'route', 42, null, { providerId: 'seed.http' }]) {
    await rejectsWith(bad({ ids: [id] }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'ids[0]' });
  }
  await rejectsWith(bad({ ids: [] }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(bad({}), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(bad(), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(bad(null), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(bad({ ids: ['seed.http::route'], extra: true }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'extra' });
  await rejectsWith(bad({ ids: ['seed.http::route'], requestProviderScope: null }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  const many = Array.from({ length: 33 }, (_, i) => `seed.http::c${i}`);
  await rejectsWith(bad({ ids: many }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope');
  // syntax is checked for every ID before any target
  await rejectsWith(bad({ ids: ['nope::x', 'bad'] }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await graph.close();
});

test('targets fail in input order: provider, scope, capability; not-found carries no details', async () => {
  const graph = await openSeed();
  let e = await rejectsWith(graph.resolve({ ids: ['nope::x'] }), 'CG_PROVIDER_NOT_FOUND', 'query', 'refresh');
  assert.equal(e.details, undefined);
  e = await rejectsWith(graph.resolve({ ids: ['seed.http::missing', 'nope::x'] }), 'CG_CAPABILITY_NOT_FOUND', 'query', 'refresh');
  assert.equal(e.details, undefined);
  await rejectsWith(graph.resolve({ ids: ['seed.http::route'], requestProviderScope: ['acme'] }), 'CG_ACCESS_DENIED', 'query', 'check_config');
  await rejectsWith(graph.resolve({ ids: ['seed.http::route'], requestProviderScope: ['other'] }), 'CG_SCOPE_DENIED', 'query', 'narrow_scope');
  await graph.close();
});

test('a narrowed host scope never widens', async () => {
  const graph = await CapabilityGraph.open({
    providers: [seedSource()],
    hostAllowedProviders: ['seed.http', 'beta'],
    integrationEnabledProviders: ['seed.http'],
  });
  await rejectsWith(graph.resolve({ ids: ['seed.http::route'], requestProviderScope: ['beta'] }), 'CG_SCOPE_DENIED', 'query', 'narrow_scope');
  await graph.close();
});

test('the closure stops at its budget and says so', async () => {
  const chain = Array.from({ length: 10 }, (_, i) => cap(`c${i}`, i < 9 ? { requires: [`c${i + 1}`] } : {}));
  const graph = await CapabilityGraph.open({ providers: [inline('acme', chain)], budgets: { resolve: { maxNodes: 4, maxIds: 4 } } });
  const r = await graph.resolve({ ids: ['acme::c0'] });
  assert.deepEqual(r.added, ['acme::c1', 'acme::c2', 'acme::c3']);
  assert.equal(r.meta.completeness, 'partial');
  assert.equal(r.meta.warnings[0].code, 'CG_RESULT_TOO_LARGE');
  assert.deepEqual(r.meta.warnings[0].details, { budget: 'resolve.maxNodes', limit: 4 });
  await rejectsWith(graph.resolve({ ids: ['acme::c0', 'acme::c1', 'acme::c2', 'acme::c3', 'acme::c4'] }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope');
  await graph.close();
  const tight = await CapabilityGraph.open({ providers: [inline('acme', chain)], budgets: { resolve: { maxBytes: 500 } } });
  await rejectsWith(tight.resolve({ ids: ['acme::c0'] }), 'CG_RESULT_TOO_LARGE', 'query', 'narrow_scope', { budget: 'resolve.maxBytes' });
  await tight.close();
});

test('requiredStaticRevision pins the current revision; unknown ones mismatch', async () => {
  const graph = await openSeed();
  const { meta } = await graph.resolve({ ids: ['seed.http::route'], requestProviderScope: ['seed.http'] });
  const pinned = await graph.resolve({ ids: ['seed.http::route'], requiredStaticRevision: meta.staticRevision });
  assert.equal(pinned.meta.servedFrom, 'current');
  await rejectsWith(graph.resolve({ ids: ['seed.http::route'], requiredStaticRevision: 's:0000000000000000' }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  await rejectsWith(
    graph.resolve({ ids: ['seed.http::route', 'acme::a'], requiredStaticRevision: meta.staticRevision }),
    'CG_INPUT_INVALID',
    'query',
    'fix_input',
  );
  const acme = (await graph.resolve({ ids: ['acme::a'] })).items[0].staticRevision;
  const both = await graph.resolve({
    ids: ['seed.http::route', 'acme::a'],
    requiredStaticRevisionByProvider: { 'seed.http': meta.staticRevision, acme },
  });
  assert.deepEqual(both.meta.servedFromByProvider, { acme: 'current', 'seed.http': 'current' });
  await rejectsWith(
    graph.resolve({ ids: ['seed.http::route'], requiredStaticRevisionByProvider: { acme: meta.staticRevision } }),
    'CG_INPUT_INVALID',
    'query',
    'fix_input',
  );
  await rejectsWith(
    graph.resolve({ ids: ['seed.http::route'], requiredStaticRevision: meta.staticRevision, requiredStaticRevisionByProvider: { 'seed.http': meta.staticRevision } }),
    'CG_INPUT_INVALID',
    'query',
    'fix_input',
  );
  await graph.close();
});

test('the bound facade takes local IDs and keeps to its provider', async () => {
  const graph = await openSeed();
  const seed = graph.forProvider('seed.http');
  assert.equal(seed.providerId, 'seed.http');
  const r = await seed.resolve({ ids: ['route.validation', { capabilityId: 'route' }, 'seed.http::request'] });
  assert.deepEqual(r.requested, ['seed.http::route.validation', 'seed.http::route', 'seed.http::request']);
  assert.deepEqual(r.meta.scope, ['seed.http']);
  await rejectsWith(seed.resolve({ ids: ['acme::a'] }), 'CG_ACCESS_DENIED', 'query', 'check_config');
  await rejectsWith(seed.resolve({ ids: ['nope::a'] }), 'CG_PROVIDER_NOT_FOUND', 'query', 'refresh');
  await rejectsWith(seed.resolve({ ids: ['route'], requestProviderScope: ['seed.http'] }), 'CG_INPUT_INVALID', 'query', 'fix_input', {
    field: 'requestProviderScope',
  });
  throwsWith(() => graph.forProvider('nope'), 'CG_PROVIDER_NOT_FOUND', 'query', 'refresh');
  throwsWith(() => graph.forProvider('Bad'), 'CG_INPUT_INVALID', 'query', 'fix_input');
  throwsWith(() => graph.forProvider(7), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await graph.close();
});

test('every call after close() rejects CG_GRAPH_CLOSED in phase lifecycle', async () => {
  const graph = await openSeed();
  const seed = graph.forProvider('seed.http');
  await graph.close();
  await graph.close();
  const closed = (p) => rejectsWith(p, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  await closed(graph.resolve({ ids: ['seed.http::route'] }));
  await closed(graph.resolve({ ids: ['not valid'] }));
  await closed(seed.resolve({ ids: ['route'] }));
  await closed(graph.reload());
  await closed(graph.reload({ providerId: 'nope' }));
  throwsWith(() => graph.forProvider('seed.http'), 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
});

test('no async method throws synchronously', () => {
  return CapabilityGraph.open({ providers: [] }).then(async (graph) => {
    const p = graph.resolve(Symbol('x'));
    assert.ok(p instanceof Promise);
    await rejectsWith(p, 'CG_INPUT_INVALID', 'query', 'fix_input');
    const opened = CapabilityGraph.open(undefined);
    assert.ok(opened instanceof Promise);
    await rejectsWith(opened, 'CG_CONFIG_INVALID', 'config', 'check_config');
    await graph.close();
  });
});
