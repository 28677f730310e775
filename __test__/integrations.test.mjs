// Host backends (reference/integrations.md): the engine validates everything they return.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { cap, inline, rejectsWith, seedSource } from './helpers.mjs';

async function withRetriever(retrieve, extra = {}) {
  const calls = [];
  const graph = await CapabilityGraph.open({
    providers: [seedSource(), inline('acme', [cap('a')])],
    capabilityRetriever: { id: 'test-retriever', retrieve: (input) => (calls.push(input), retrieve(input)) },
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
