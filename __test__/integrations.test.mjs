// Host backends (reference/integrations.md): the engine validates everything they return.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { cap, inline, rejectsWith, seedSource } from './helpers.mjs';

async function withRetriever(retrieve, extra = {}) {
  const calls = [];
  const graph = await CapabilityGraph.open({
    providers: [seedSource(), inline('acme', [cap('a')])],
    capabilityRetriever: { id: 'test-retriever', retrieve: (input, options) => (calls.push(input), retrieve(input, options)) },
    ...extra,
  });
  return { graph, calls };
}

test('retrieveCapabilities keeps the retriever order, with gaps where candidates were rejected', async () => {
  const { graph, calls } = await withRetriever((input) => ({
    candidates: [
      { id: { providerId: 'seed.http', capabilityId: 'route.validation' }, score: 0.9, sourceStaticRevision: input.staticRevisionByProvider['seed.http'] },
      { id: { providerId: 'seed.http', capabilityId: 'missing' }, sourceStaticRevision: input.staticRevisionByProvider['seed.http'] },
      { id: 'seed.http::schema.request', score: 0.5, sourceStaticRevision: input.staticRevisionByProvider['seed.http'] },
      { id: { providerId: 'seed.http', capabilityId: 'route' }, sourceStaticRevision: 's:0000000000000000' },
      { id: { providerId: 'seed.http', capabilityId: 'route.validation' }, sourceStaticRevision: input.staticRevisionByProvider['seed.http'] },
      { id: { providerId: 'acme', capabilityId: 'a' }, sourceStaticRevision: 'whatever' },
      { id: { providerId: 'nope', capabilityId: 'a' }, sourceStaticRevision: 'x' },
      { id: 'seed.http::route', score: 'high', sourceStaticRevision: 'x' },
    ],
  }));
  const r = await graph.retrieveCapabilities({ text: 'validate input', requestProviderScope: ['seed.http'] });
  assert.deepEqual(calls[0].providerIds, ['seed.http']);
  assert.equal(calls[0].limit, 20);
  assert.deepEqual(r.items.map((i) => [i.qualifiedId, i.rank, i.score]), [
    ['seed.http::route.validation', 1, 0.9],
    ['seed.http::schema.request', 3, 0.5],
  ]);
  assert.equal(r.meta.completeness, 'partial');
  assert.deepEqual(r.meta.warnings.map((w) => [w.code, w.details.adapterIndex]), [
    ['CG_CAPABILITY_NOT_FOUND', 1],
    ['CG_REVISION_MISMATCH', 3],
    ['CG_ADAPTER_CONTRACT_INVALID', 4],
    ['CG_ACCESS_DENIED', 5],
    ['CG_PROVIDER_NOT_FOUND', 6],
    ['CG_ADAPTER_CONTRACT_INVALID', 7],
  ]);
  await graph.close();
});

test('retrieveCapabilities: empty results, broken pages and retriever failures', async () => {
  let reply = () => ({ candidates: [] });
  const { graph } = await withRetriever(() => reply());
  const r = await graph.retrieveCapabilities({ text: 'x' });
  assert.deepEqual(r.items, []);
  assert.equal(r.meta.completeness, 'complete');
  for (const [make, code, action] of [
    [() => ({ candidates: 'none' }), 'CG_ADAPTER_CONTRACT_INVALID', 'contact_admin'],
    [() => ({ candidates: Array(21).fill({}) }), 'CG_ADAPTER_CONTRACT_INVALID', 'contact_admin'],
    [() => null, 'CG_ADAPTER_CONTRACT_INVALID', 'contact_admin'],
    [() => { throw new Error('ECONNREFUSED /home/secret'); }, 'CG_RETRIEVER_UNAVAILABLE', 'retry'],
    [() => { throw Object.assign(new Error('stale'), { code: 'CG_INDEX_STALE', nextAction: 'retry' }); }, 'CG_INDEX_STALE', 'refresh'],
    [() => Promise.reject(Object.assign(new Error('x'), { code: 'CG_REVISION_MISMATCH' })), 'CG_REVISION_MISMATCH', 'refresh'],
  ]) {
    reply = make;
    const e = await rejectsWith(graph.retrieveCapabilities({ text: 'x' }), code, 'query', action);
    assert.ok(!JSON.stringify(e).includes('secret'));
  }
  await rejectsWith(graph.retrieveCapabilities({ text: ' ' }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.retrieveCapabilities({ text: 'x', requestProviderScope: ['zeta'] }), 'CG_SCOPE_DENIED', 'query', 'narrow_scope');
  await graph.close();
  const bare = await CapabilityGraph.open({ providers: [seedSource()] });
  await rejectsWith(bare.retrieveCapabilities({ text: 'x' }), 'CG_RETRIEVER_UNCONFIGURED', 'query', 'check_config');
  await bare.close();
});

test('a bound facade retrieves within its provider', async () => {
  const { graph, calls } = await withRetriever((input) => ({
    candidates: [{ id: 'acme::a', sourceStaticRevision: 'x' }, { id: 'seed.http::route', sourceStaticRevision: input.staticRevisionByProvider['seed.http'] }],
  }));
  const r = await graph.forProvider('seed.http').retrieveCapabilities({ text: 'routing', limit: 50 });
  assert.deepEqual(calls[0].providerIds, ['seed.http']);
  assert.deepEqual(r.items.map((i) => [i.qualifiedId, i.rank]), [['seed.http::route', 2]]);
  assert.equal(r.meta.warnings[0].code, 'CG_ACCESS_DENIED');
  assert.equal(r.meta.budgets['retrieveCapabilities.maxCandidates'], 20);
  await graph.close();
});

const observation = (extra = {}) => ({
  source: 'test-runtime',
  observedAt: '2026-11-30T12:00:00.000Z',
  runtimeRevision: 'r:1',
  observedAgainstStaticRevision: 's:anything',
  compatibility: 'compatible',
  availability: 'available',
  freshness: 'current',
  ...extra,
});
const instance = (id, extra = {}) => ({
  instanceId: id,
  providerId: 'seed.http',
  project: 'shop',
  environment: 'staging',
  instanceOf: { providerId: 'seed.http', capabilityId: 'route.http' },
  facts: { method: 'GET', path: `/${id}` },
  ...extra,
});

async function withRuntime(query, budgets) {
  const calls = [];
  const graph = await CapabilityGraph.open({
    providers: [seedSource(), inline('acme', [cap('a')])],
    runtimeAdapters: [{ id: 'test-runtime', providerId: 'seed.http', query: (input) => (calls.push(input), query(input)) }],
    ...(budgets ? { budgets } : {}),
  });
  return { graph, calls };
}

test('queryRuntime pages instances on one runtime revision and checks each one', async () => {
  const all = ['a', 'b', 'c'].map((id) => instance(id));
  const { graph, calls } = await withRuntime((input) => {
    const start = input.cursor ? Number(input.cursor) : 0;
    const page = all.slice(start, start + input.limit);
    const next = start + input.limit < all.length ? String(start + input.limit) : undefined;
    return { instances: page, observation: observation(), ...(next ? { nextCursor: next } : {}) };
  });
  const q = { project: 'shop', environment: 'staging', instanceOf: 'seed.http::route.http', limit: 2 };
  const first = await graph.queryRuntime(q);
  assert.deepEqual(first.items.map((i) => i.instanceId), ['a', 'b']);
  assert.equal(first.meta.completeness, 'truncated');
  assert.equal(first.meta.view.runtime.runtimeRevision, 'r:1');
  assert.deepEqual(calls[0].instanceOf, { providerId: 'seed.http', capabilityId: 'route.http' });
  assert.match(calls[0].currentStaticRevision, /^s:/);
  const second = await graph.queryRuntime({ ...q, cursor: first.nextCursor });
  assert.deepEqual(second.items.map((i) => i.instanceId), ['c']);
  assert.equal(calls[1].cursor, '2');
  assert.equal(second.meta.completeness, 'complete');
  await rejectsWith(graph.queryRuntime({ ...q, limit: 3, cursor: first.nextCursor }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  await rejectsWith(graph.queryRuntime({ ...q, cursor: first.nextCursor, requiredRuntimeRevision: 'r:2' }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  await rejectsWith(graph.queryRuntime({ ...q, requiredRuntimeRevision: 'r:9' }), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  const bound = await graph.forProvider('seed.http').queryRuntime({ project: 'shop', environment: 'staging', instanceOf: 'route.http' });
  assert.equal(bound.items.length, 3);
  await graph.close();
});

test('queryRuntime rejects bad instances as warnings and bad pages as a whole', async () => {
  let reply;
  const { graph } = await withRuntime(() => reply());
  const q = { project: 'shop', environment: 'staging', requestProviderScope: ['seed.http'] };
  reply = () => ({
    instances: [
      instance('ok'),
      instance('other-provider', { providerId: 'acme' }),
      instance('wrong-env', { environment: 'prod' }),
      instance('ghost', { instanceOf: { providerId: 'seed.http', capabilityId: 'ghost' } }),
      instance('big', { facts: { blob: 'x'.repeat(5000) } }),
      instance('no-facts', { facts: [] }),
      instance('bad-assoc', { associations: [{ kind: '' }] }),
      instance('assoc', { associations: [{ kind: 'calls', targetInstanceId: 'ok' }] }),
    ],
    observation: observation({ availability: 'partial', extra: 'dropped' }),
  });
  const r = await graph.queryRuntime(q);
  assert.deepEqual(r.items.map((i) => i.instanceId), ['ok', 'assoc']);
  assert.deepEqual(r.items[1].associations, [{ kind: 'calls', targetInstanceId: 'ok' }]);
  assert.deepEqual(r.meta.warnings.map((w) => [w.code, w.details.adapterIndex]), [
    ['CG_ACCESS_DENIED', 1],
    ['CG_ADAPTER_CONTRACT_INVALID', 2],
    ['CG_CAPABILITY_NOT_FOUND', 3],
    ['CG_RESULT_TOO_LARGE', 4],
    ['CG_ADAPTER_CONTRACT_INVALID', 5],
    ['CG_ADAPTER_CONTRACT_INVALID', 6],
  ]);
  assert.equal(r.observation.extra, undefined);
  assert.equal(r.meta.completeness, 'partial');
  reply = () => ({ instances: [], observation: observation({ availability: 'empty' }) });
  assert.deepEqual((await graph.queryRuntime(q)).items, [], 'an empty observation is an answer');
  for (const [make, code, action] of [
    [() => ({ instances: [instance('x')], observation: observation({ availability: 'empty' }) }), 'CG_ADAPTER_CONTRACT_INVALID', 'contact_admin'],
    [() => ({ instances: [], observation: observation() }), 'CG_ADAPTER_CONTRACT_INVALID', 'contact_admin'],
    [() => ({ instances: [instance('x'), instance('x')], observation: observation() }), 'CG_ADAPTER_CONTRACT_INVALID', 'contact_admin'],
    [() => ({ instances: [instance('x', { providerId: 'acme' })], observation: observation() }), 'CG_ADAPTER_CONTRACT_INVALID', 'contact_admin'],
    [() => ({ instances: [], observation: observation({ observedAt: 'yesterday', availability: 'empty' }) }), 'CG_ADAPTER_CONTRACT_INVALID', 'contact_admin'],
    [() => ({ instances: 'none', observation: observation() }), 'CG_ADAPTER_CONTRACT_INVALID', 'contact_admin'],
    [() => { throw new Error('ECONNREFUSED /secret'); }, 'CG_RUNTIME_UNAVAILABLE', 'retry'],
    [() => new Promise(() => {}), 'CG_RUNTIME_UNAVAILABLE', 'retry'],
  ]) {
    reply = make;
    await rejectsWith(graph.queryRuntime(q), code, 'query', action);
  }
  await graph.close();
});

test('queryRuntime needs a context, one provider and an adapter', async () => {
  const { graph } = await withRuntime(() => ({ instances: [], observation: observation({ availability: 'empty' }) }), { runtime: { timeoutMs: 50 } });
  await rejectsWith(graph.queryRuntime({ project: 'shop' }), 'CG_RUNTIME_CONTEXT_REQUIRED', 'query', 'fix_input');
  await rejectsWith(graph.queryRuntime({ project: ' ', environment: 'x' }), 'CG_RUNTIME_CONTEXT_REQUIRED', 'query', 'fix_input');
  await rejectsWith(graph.queryRuntime({ project: 'p', environment: 'e' }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(graph.queryRuntime({ project: 'p', environment: 'e', requestProviderScope: ['acme'] }), 'CG_RUNTIME_DISABLED', 'query', 'check_config');
  await rejectsWith(graph.queryRuntime({ project: 'p', environment: 'e', instanceOf: 'seed.http::nope' }), 'CG_CAPABILITY_NOT_FOUND', 'query', 'refresh');
  await rejectsWith(graph.queryRuntime({ project: 'p', environment: 'e', instanceId: '' }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  assert.equal((await graph.queryRuntime({ project: 'p', environment: 'e', requestProviderScope: ['seed.http'] })).meta.completeness, 'complete');
  await graph.close();
  const ghost = { id: 'ghost-runtime', providerId: 'ghost', query: () => ({}) };
  await rejectsWith(CapabilityGraph.open({ providers: [seedSource()], runtimeAdapters: [ghost] }), 'CG_CONFIG_INVALID', 'config', 'check_config', {
    path: 'runtimeAdapters[0].providerId',
  });
});

test('close() settles a pending component call and aborts its signal', async () => {
  let signal;
  const { graph } = await withRetriever((input, options) => new Promise(() => (signal = options.signal)));
  const pending = graph.retrieveCapabilities({ text: 'x' });
  await new Promise((r) => setImmediate(r));
  await graph.close();
  await rejectsWith(pending, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  assert.equal(signal.aborted, true);
});

test('queryKnowledge answers what it can without a retriever, and never calls one with nothing to search', async () => {
  const calls = [];
  const empty = { kind: 'collection', knowledgeId: 'EMPTY', members: [] };
  const open = (extra = {}) =>
    CapabilityGraph.open({ providers: [seedSource(), inline('acme', [cap('e', { knowledge: [empty] }), cap('bare')])], ...extra });
  const graph = await open();
  const q = (query) => graph.queryKnowledge({ text: 'how are routes declared', ...query });

  // Targets exist (ROUTING's two members): a retriever is needed.
  await rejectsWith(q({ selected: ['seed.http::route'] }), 'CG_RETRIEVER_UNCONFIGURED', 'query', 'check_config');
  // Filters leave nothing: an honest empty answer, no retriever needed, no index status.
  const filtered = await q({ selected: ['seed.http::route'], roles: ['reference'] });
  assert.deepEqual([filtered.items, filtered.knowledgeState, filtered.indexStatus, filtered.meta.completeness], [[], 'filtered_empty', undefined, 'complete']);
  const unknown = await q({ selected: ['seed.http::route.http'], knowledgeIds: ['D-99'] });
  assert.equal(unknown.knowledgeState, 'filtered_empty');
  assert.equal(unknown.meta.completeness, 'partial');
  assert.deepEqual(unknown.meta.warnings.map((w) => [w.code, w.details.knowledgeId]), [['CG_DOCUMENT_NOT_FOUND', 'D-99']]);
  assert.equal((await q({ selected: ['acme::e'] })).knowledgeState, 'empty_collection');
  assert.equal((await q({ selected: ['acme::e'], locales: ['en'] })).knowledgeState, 'filtered_empty');

  // Capabilities without knowledge: a warning each, or the whole query when none has any.
  const some = await q({ selected: ['acme::bare', 'acme::e'] });
  assert.deepEqual(some.meta.warnings.map((w) => [w.code, w.details.qualifiedId]), [['CG_KNOWLEDGE_NOT_ASSOCIATED', 'acme::bare']]);
  await rejectsWith(q({ selected: ['acme::bare', 'seed.http::request'] }), 'CG_KNOWLEDGE_NOT_ASSOCIATED', 'query', 'fix_input', { retrieval: 'CG_RETRIEVER_UNCONFIGURED' });

  // Selected capabilities that do not resolve: warnings, or the whole query when none does.
  const partly = await q({ selected: ['acme::missing', 'acme::e'] });
  assert.deepEqual(partly.meta.warnings.map((w) => [w.code, w.details.selectedIndex]), [['CG_CAPABILITY_NOT_FOUND', 0]]);
  await rejectsWith(q({ selected: ['acme::missing', 'acme::gone'] }), 'CG_CAPABILITY_NOT_FOUND', 'query', 'refresh');
  const mixed = await q({ selected: ['acme::missing', 'nope::x'] }).catch((e) => e);
  assert.equal(mixed.code, 'CG_PARTIAL_ITEM');
  assert.deepEqual(mixed.details.failures.map((f) => [f.inputIndex, f.code]), [[0, 'CG_CAPABILITY_NOT_FOUND'], [1, 'CG_PROVIDER_NOT_FOUND']]);
  assert.deepEqual([mixed.details.failureCount, mixed.details.omittedFailureCount], [2, 0]);

  // Input checks come first.
  await rejectsWith(q({ text: '  ', selected: ['acme::e'] }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(q({ selected: [] }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(q({ selected: ['acme::e'], knowledgeIds: [] }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(q({ selected: ['acme::e'], roles: ['no spaces allowed'] }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await rejectsWith(q({ selected: ['acme::e'], limit: 0 }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  await graph.close();

  const limited = await open({ budgets: { queryKnowledge: { maxTargets: 1 } }, knowledgeRetriever: { id: 'k', retrieve: (i) => (calls.push(i), { hits: [] }) } });
  await rejectsWith(limited.queryKnowledge({ text: 'x', selected: ['seed.http::route'] }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope', { budget: 'queryKnowledge.maxTargets' });
  assert.equal((await limited.queryKnowledge({ text: 'x', selected: ['acme::e'] })).knowledgeState, 'empty_collection');
  await limited.close();
  assert.equal(calls.length, 0);
});
