// Host backends (reference/integrations.md): the engine validates everything they return.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CapabilityGraph, createToolAdapter } from '@devcodex/capability-graph';
import { cap, inline, rejectsWith, seedRoot, seedSource, currentEvidence } from './helpers.mjs';

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
  const runtime = await withRuntime(() => new Promise(() => {}), { runtime: { timeoutMs: 60_000 } });
  const observing = runtime.graph.queryRuntime({ project: 'p', environment: 'e', requestProviderScope: ['seed.http'] });
  await new Promise((r) => setImmediate(r));
  await runtime.graph.close();
  await rejectsWith(observing, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
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
  // Failing alike, the whole query is that failure and carries the same summary as a mixed one.
  const alike = await rejectsWith(q({ selected: ['acme::missing', 'acme::gone'] }), 'CG_CAPABILITY_NOT_FOUND', 'query', 'refresh');
  assert.deepEqual(alike.details, {
    failureCount: 2,
    failures: [0, 1].map((inputIndex) => ({ inputIndex, code: 'CG_CAPABILITY_NOT_FOUND', nextAction: 'refresh' })),
    omittedFailureCount: 0,
  });
  const malformed = await rejectsWith(q({ selected: Array.from({ length: 25 }, (_, i) => `bad id ${i}`) }), 'CG_INPUT_INVALID', 'query', 'fix_input');
  assert.equal(typeof malformed.details.field, 'string');
  assert.equal(typeof malformed.details.expected, 'string');
  assert.deepEqual([malformed.details.failureCount, malformed.details.failures.length, malformed.details.omittedFailureCount], [25, 20, 5]);
  const mixed = await rejectsWith(q({ selected: ['acme::missing', 'nope::x'] }), 'CG_PARTIAL_ITEM', 'query', 'fix_input');
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
  const narrow = await open({ budgets: { queryKnowledge: { maxTargetBytes: 100 } }, knowledgeRetriever: { id: 'k', retrieve: (i) => (calls.push(i), { hits: [] }) } });
  await rejectsWith(narrow.queryKnowledge({ text: 'x', selected: ['seed.http::route'] }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope', { budget: 'queryKnowledge.maxTargetBytes' });
  await narrow.close();
  assert.equal(calls.length, 0);
});

/** A retriever over an honest in-memory index: it reads its targets through `access`. */
function honestRetriever(overrides = {}) {
  const seen = [];
  return {
    seen,
    retriever: {
      id: 'memory-knowledge',
      async retrieve(input, access) {
        seen.push(input);
        const documents = [];
        const hits = [];
        for (const t of input.targets) {
          const read = await access.read({ id: t.id, knowledgeId: t.knowledgeId }, { maxBytes: 1 << 20 });
          documents.push({ id: t.id, knowledgeId: t.knowledgeId, sourceContentId: read.contentId, indexedContentId: read.contentId });
          const text = Buffer.from(read.bytes);
          const at = text.indexOf(Buffer.from(input.text.split(' ')[0]));
          if (at >= 0) {
            const snippet = text.subarray(at, at + 40).toString('utf8');
            hits.push({ id: t.id, knowledgeId: t.knowledgeId, contentId: read.contentId, source: read.source, startOffset: at, endOffset: at + Buffer.byteLength(snippet), snippet, score: 1 });
          }
        }
        const evidence = currentEvidence(input, documents, 'cfg-1');
        return overrides.answer ? overrides.answer({ hits, evidence, input, access }) : { hits, evidence };
      },
    },
  };
}

test('queryKnowledge: a retriever reads its targets through the engine and every hit is checked', async () => {
  const { retriever, seen } = honestRetriever();
  const graph = await CapabilityGraph.open({ providers: [seedSource()], knowledgeRetriever: retriever });
  const r = await graph.queryKnowledge({ text: 'route handler', selected: ['seed.http::route'] });
  const input = seen[0];
  assert.deepEqual(Object.keys(input), ['text', 'staticRevisionByProvider', 'mappingRevision', 'targets', 'limit']);
  assert.match(input.mappingRevision, /^m:[0-9a-f]{64}$/);
  assert.deepEqual(input.targets.map((t) => [t.knowledgeId, t.viaCollectionIds, t.locator.path]), [
    ['D-01', ['ROUTING'], 'knowledge/route-http.md'],
    ['D-02', ['ROUTING'], 'knowledge/route-validation.md'],
  ]);
  assert.ok(!JSON.stringify(input).includes(seedRoot), 'no root path leaves the engine');
  assert.equal(input.limit, 8);
  assert.equal(r.knowledgeState, 'searched');
  assert.equal(r.meta.completeness, 'complete');
  assert.deepEqual(r.indexStatus.mappingRevision, input.mappingRevision);
  assert.equal(r.indexStatus.validatedDocuments, 2);
  assert.ok(r.items.length > 0);
  for (const hit of r.items) {
    assert.equal(hit.role, 'guide');
    const body = readFileSync(path.join(seedRoot, hit.source));
    assert.equal(body.subarray(hit.startOffset, hit.endOffset).toString('utf8'), hit.snippet);
  }
  assert.deepEqual(r.meta.budgets, { 'queryKnowledge.maxHits': 8, 'queryKnowledge.maxSnippetBytes': 2048, 'queryKnowledge.maxTargets': 128, 'queryKnowledge.maxTargetBytes': 131072 });
  // The same mapping gives the same revision.
  await graph.queryKnowledge({ text: 'route', selected: ['seed.http::route'] });
  assert.equal(seen[1].mappingRevision, input.mappingRevision);
  // The agent tool runs the same search (body tools need the host's approval).
  const tool = await createToolAdapter(graph, { documentBodies: true }).call('query_knowledge', { text: 'route handler', selected: ['seed.http::route'] });
  assert.deepEqual([tool.ok, tool.result.knowledgeState, tool.result.items], [true, 'searched', r.items]);
  const bound = await graph.forProvider('seed.http').queryKnowledge({ text: 'route', selected: ['route'], knowledgeIds: ['D-02'] });
  assert.deepEqual([bound.knowledgeState, seen[3].targets.map((t) => t.knowledgeId), seen[3].mappingRevision === input.mappingRevision], ['searched', ['D-02'], false]);
  await graph.close();
});

test('queryKnowledge: stale or foreign evidence fails the query, bad hits become warnings', async () => {
  const run = async (answer, query = {}) => {
    const { retriever } = honestRetriever({ answer });
    const graph = await CapabilityGraph.open({ providers: [seedSource()], knowledgeRetriever: retriever });
    try {
      return await graph.queryKnowledge({ text: 'route', selected: ['seed.http::route'], ...query });
    } finally {
      await graph.close();
    }
  };
  const stale = (change) => ({ hits, evidence }) => ({ hits, evidence: { ...evidence, ...change(evidence) } });
  await rejectsWith(run(({ hits }) => ({ hits })), 'CG_INDEX_STALE', 'query', 'refresh');
  await rejectsWith(run(({ evidence }) => ({ hits: [], evidence: { ...evidence, freshness: 'stale' } })), 'CG_INDEX_STALE', 'query', 'refresh');
  await rejectsWith(run(stale(() => ({ mappingRevision: 'm:0' }))), 'CG_INDEX_STALE', 'query', 'refresh');
  await rejectsWith(run(stale(() => ({ observedAt: new Date(Date.now() + 60_000).toISOString() }))), 'CG_INDEX_STALE', 'query', 'refresh');
  await rejectsWith(run(stale(() => ({ indexedConfigRevision: 'cfg-0' }))), 'CG_INDEX_STALE', 'query', 'refresh');
  await rejectsWith(run(stale((e) => ({ documents: e.documents.slice(1) }))), 'CG_INDEX_STALE', 'query', 'refresh');
  await rejectsWith(run(stale((e) => ({ documents: [e.documents[1], e.documents[1]] }))), 'CG_INDEX_STALE', 'query', 'refresh', { reason: 'document_duplicate' });
  await rejectsWith(run(stale((e) => ({ documents: [{ ...e.documents[0], knowledgeId: 'D-03' }, e.documents[1]] }))), 'CG_INDEX_STALE', 'query', 'refresh', { reason: 'document_not_a_target' });
  await rejectsWith(run(stale((e) => ({ documents: e.documents.map((d) => ({ ...d, sourceContentId: `k:${'0'.repeat(64)}` })) }))), 'CG_INDEX_STALE', 'query', 'refresh', { reason: 'content_id_invalid' });
  await rejectsWith(run(stale((e) => ({ documents: e.documents.map((d) => ({ ...d, indexedContentId: 'k:0000000000000000' })) }))), 'CG_INDEX_STALE', 'query', 'refresh', { reason: 'content_changed' });
  await rejectsWith(run(stale((e) => ({ documents: e.documents.map((d) => ({ ...d, sourceContentId: 'k:0000000000000000', indexedContentId: 'k:0000000000000000' })) }))), 'CG_INDEX_STALE', 'query', 'refresh');
  await rejectsWith(run(stale(() => ({ staticRevisionByProvider: { 'seed.http': 's:0' } }))), 'CG_REVISION_MISMATCH', 'query', 'refresh');
  // Evidence is required even for zero hits; valid evidence with zero hits is a search.
  const none = await run(({ evidence }) => ({ hits: [], evidence }));
  assert.deepEqual([none.items, none.knowledgeState, none.meta.completeness], [[], 'searched', 'complete']);
  await rejectsWith(run(({ evidence }) => ({ hits: 'many', evidence })), 'CG_ADAPTER_CONTRACT_INVALID', 'query', 'contact_admin', { reason: 'knowledge_page_invalid' });
  await rejectsWith(run(({ hits, evidence }) => ({ hits: Array(3).fill(hits[0]), evidence }), { limit: 2 }), 'CG_ADAPTER_CONTRACT_INVALID', 'query', 'contact_admin');

  const bad = await run(({ hits, evidence }) => {
    const h = hits[0];
    return {
      evidence,
      hits: [
        h,
        { ...h, snippet: 'x'.repeat(3000) },
        { ...h, startOffset: h.startOffset + 1, endOffset: h.endOffset + 1 },
        { ...h, source: 'elsewhere.md' },
        { ...h, endOffset: h.endOffset + 1 },
        { ...h, id: { providerId: 'other', capabilityId: 'route' } },
        { ...h, score: 'high' },
        null,
      ],
    };
  });
  assert.equal(bad.items.length, 1);
  assert.equal(bad.meta.completeness, 'partial');
  assert.deepEqual(bad.meta.warnings.map((w) => [w.details.hitIndex, w.code, w.details.reason]), [
    [1, 'CG_RESULT_TOO_LARGE', undefined],
    [2, 'CG_ADAPTER_CONTRACT_INVALID', 'knowledge_hit_content_mismatch'],
    [3, 'CG_ADAPTER_CONTRACT_INVALID', 'knowledge_hit_mismatch'],
    [4, 'CG_ADAPTER_CONTRACT_INVALID', 'knowledge_hit_mismatch'],
    [5, 'CG_PROVIDER_NOT_FOUND', undefined],
    [6, 'CG_ADAPTER_CONTRACT_INVALID', 'knowledge_hit_mismatch'],
    [7, 'CG_ADAPTER_CONTRACT_INVALID', 'knowledge_hit_invalid'],
  ]);
});

test('queryKnowledge: access reads only the targets sent, and expires with the call', async () => {
  let kept;
  const errors = [];
  const fields = (e) => [e.code, e.phase, e.nextAction, e.details?.reason ?? e.details?.field];
  const retriever = {
    id: 'probing',
    async retrieve(input, access) {
      kept = access;
      const t = input.targets[0];
      for (const target of [{ ...t, extra: 1 }, { id: { providerId: 'seed.http', capabilityId: 'schema.request' }, knowledgeId: 'D-03' }, { id: 'nope::x', knowledgeId: 'D-01' }, 'D-01']) {
        errors.push(await access.read(target, { maxBytes: 100 }).then(() => null, fields));
      }
      const own = { id: t.id, knowledgeId: t.knowledgeId };
      errors.push(await access.read(own, { maxBytes: 0 }).then(() => null, fields));
      errors.push(await access.scan(own, null).then(() => null, fields));
      errors.push(await access.scan(own, () => {}, { signal: 'stop' }).then(() => null, fields));
      const chunks = [];
      const scanned = await access.scan({ id: t.id, knowledgeId: t.knowledgeId }, (bytes, offset) => chunks.push([offset, bytes.length]), { chunkBytes: 100 });
      assert.equal(chunks.reduce((n, [, l]) => n + l, 0), scanned.totalBytes);
      assert.ok(chunks.every(([o, l], i) => l <= 100 && o === (i === 0 ? 0 : chunks[i - 1][0] + chunks[i - 1][1])));
      // A target the retriever cannot use: the engine's own error passes through unchanged.
      await access.read({ ...t, role: 'other' }, { maxBytes: 10 });
    },
  };
  const graph = await CapabilityGraph.open({ providers: [seedSource()], knowledgeRetriever: retriever });
  await rejectsWith(graph.queryKnowledge({ text: 'route', selected: ['seed.http::route'] }), 'CG_ADAPTER_CONTRACT_INVALID', 'query', 'contact_admin', { reason: 'retrieval_target_override' });
  assert.deepEqual(errors, [
    ['CG_ADAPTER_CONTRACT_INVALID', 'query', 'contact_admin', 'retrieval_target_override'],
    ['CG_ADAPTER_CONTRACT_INVALID', 'query', 'contact_admin', 'retrieval_target_not_selected'],
    ['CG_PROVIDER_NOT_FOUND', 'query', 'refresh', undefined],
    ['CG_INPUT_INVALID', 'query', 'fix_input', 'target'],
    ['CG_INPUT_INVALID', 'query', 'fix_input', 'budget.maxBytes'],
    ['CG_INPUT_INVALID', 'query', 'fix_input', 'consume'],
    ['CG_INPUT_INVALID', 'query', 'fix_input', 'options.signal'],
  ]);
  await rejectsWith(kept.read({ id: 'seed.http::route', knowledgeId: 'D-01' }, { maxBytes: 10 }), 'CG_ADAPTER_CONTRACT_INVALID', 'query', 'contact_admin', { reason: 'retrieval_access_expired' });
  // A failure of the retriever's own is its unavailability; no text of it passes.
  const failing = await CapabilityGraph.open({ providers: [seedSource()], knowledgeRetriever: { id: 'f', retrieve: () => { throw new Error('index at /srv/secret down'); } } });
  const e = await rejectsWith(failing.queryKnowledge({ text: 'route', selected: ['seed.http::route'] }), 'CG_RETRIEVER_UNAVAILABLE', 'query', 'retry');
  assert.ok(!JSON.stringify(e).includes('secret'));
  await failing.close();
  const refusing = await CapabilityGraph.open({ providers: [seedSource()], knowledgeRetriever: { id: 's', retrieve: async () => Promise.reject({ code: 'CG_INDEX_STALE', nextAction: 'retry', details: { path: '/srv/secret' } }) } });
  const passed = await rejectsWith(refusing.queryKnowledge({ text: 'route', selected: ['seed.http::route'] }), 'CG_INDEX_STALE', 'query', 'refresh');
  assert.equal(passed.details, undefined);
  await refusing.close();
  await graph.close();
});

test("queryKnowledge: access to another provider's target is refused like any explicit target", async () => {
  const errors = [];
  const fields = (e) => [e.code, e.phase, e.nextAction];
  const doc = { kind: 'document', knowledgeId: 'A-01', role: 'guide', locator: { type: 'relative-file', path: 'a.md' } };
  const retriever = {
    id: 'wandering',
    async retrieve(input, access) {
      for (const id of ['zeta::a', { providerId: 'zeta', capabilityId: 'a' }, 'acme::a']) {
        errors.push(await access.read({ id, knowledgeId: 'A-01' }, { maxBytes: 100 }).then(() => null, fields));
        errors.push(await access.scan({ id, knowledgeId: 'A-01' }, () => {}).then(() => null, fields));
      }
      return { hits: [] };
    },
  };
  const graph = await CapabilityGraph.open({ providers: [seedSource(), inline('acme', [cap('a', { knowledge: [doc] })])], knowledgeRetriever: retriever });
  await graph.queryKnowledge({ text: 'route', selected: ['seed.http::route'], requestProviderScope: ['seed.http'] }).catch(() => {});
  const missing = ['CG_PROVIDER_NOT_FOUND', 'query', 'refresh'];
  const denied = ['CG_ACCESS_DENIED', 'query', 'check_config'];
  assert.deepEqual(errors, [missing, missing, missing, missing, denied, denied]);
  await graph.close();
});

test('queryKnowledge: URL documents are read through the host readers, also for targets the retriever skipped', async () => {
  const url = 'https://docs.example.com/web.md';
  let reads = 0;
  const reader = { id: 'web', canRead: (ref) => ref.locator.type === 'http', read: () => (reads++, { bytes: Buffer.from('# Web\nServe pages.\n'), contentType: 'text/markdown', source: url }) };
  let readFirst = true;
  let known;
  const retriever = {
    id: 'web-index',
    async retrieve(input, access) {
      const [t] = input.targets;
      const contentId = readFirst ? (await access.read({ id: t.id, knowledgeId: t.knowledgeId }, { maxBytes: 1024 })).contentId : known;
      const document = { id: t.id, knowledgeId: t.knowledgeId, sourceContentId: contentId, indexedContentId: contentId };
      const hit = { id: t.id, knowledgeId: t.knowledgeId, contentId, source: url, startOffset: 6, endOffset: 18, snippet: 'Serve pages.' };
      return { hits: [hit], evidence: currentEvidence(input, [document]) };
    },
  };
  const web = inline('web', [cap('pages', { knowledge: [{ kind: 'document', knowledgeId: 'W-01', role: 'guide', locator: { type: 'http', url } }] })]);
  const graph = await CapabilityGraph.open({ providers: [web], readers: [reader], knowledgeRetriever: retriever });
  const first = await graph.queryKnowledge({ text: 'pages', selected: ['web::pages'] });
  assert.deepEqual(first.items.map((h) => [h.snippet, h.source]), [['Serve pages.', url]]);
  known = first.items[0].contentId;
  readFirst = false;
  const before = reads;
  const second = await graph.queryKnowledge({ text: 'pages', selected: ['web::pages'] });
  assert.equal(second.items.length, 1);
  assert.equal(reads, before + 1, 'the engine read the skipped target itself');
  await graph.close();
});

test('queryKnowledge: access reads in flight when retrieve returns complete, and the answer waits for them', async () => {
  const url = 'https://docs.example.com/web.md';
  const body = '# Web\nServe pages.\n';
  // The reader answers when the test lets it.
  let release;
  const gate = () => new Promise((resolve) => (release = resolve));
  let held = gate();
  const reader = { id: 'web', canRead: (ref) => ref.locator.type === 'http', read: async () => (await held, { bytes: Buffer.from(body), contentType: 'text/markdown', source: url }) };
  let known;
  const inFlight = [];
  const mode = { current: 'await' };
  const retriever = {
    id: 'web-index',
    async retrieve(input, access) {
      const [t] = input.targets;
      const target = { id: t.id, knowledgeId: t.knowledgeId };
      if (mode.current === 'await') known = (await access.read(target, { maxBytes: 1024 })).contentId;
      else if (mode.current === 'leave') inFlight.push(access.read(target, { maxBytes: 1024 }));
      else if (mode.current === 'later') setTimeout(() => inFlight.push(access.read(target, { maxBytes: 1024 })), 0);
      const document = { id: t.id, knowledgeId: t.knowledgeId, sourceContentId: known, indexedContentId: known };
      const hit = { id: t.id, knowledgeId: t.knowledgeId, contentId: known, source: url, startOffset: 6, endOffset: 18, snippet: 'Serve pages.' };
      return { hits: [hit], evidence: currentEvidence(input, [document]) };
    },
  };
  const web = inline('web', [cap('pages', { knowledge: [{ kind: 'document', knowledgeId: 'W-01', role: 'guide', locator: { type: 'http', url } }] })]);
  const graph = await CapabilityGraph.open({ providers: [web], readers: [reader], knowledgeRetriever: retriever });
  const query = { text: 'pages', selected: ['web::pages'] };
  release();
  assert.equal((await graph.queryKnowledge(query)).items.length, 1);

  // A read the retriever started but did not await completes; the answer waits for it.
  held = gate();
  mode.current = 'leave';
  let answered = false;
  const pending = graph.queryKnowledge(query).then((r) => ((answered = true), r));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(answered, false, 'the answer waits for the read in flight');
  release();
  const r = await pending;
  assert.deepEqual(r.items.map((h) => h.contentId), [known]);
  const [read] = await Promise.allSettled(inFlight.splice(0));
  assert.equal(read.status, 'fulfilled', JSON.stringify(read.reason));
  assert.equal(Buffer.from(read.value.bytes).toString('utf8'), body);

  // A read started after retrieve returned still expires.
  mode.current = 'later';
  await graph.queryKnowledge(query);
  await new Promise((resolve) => setTimeout(resolve, 10));
  await rejectsWith(inFlight.splice(0)[0], 'CG_ADAPTER_CONTRACT_INVALID', 'query', 'contact_admin', { reason: 'retrieval_access_expired' });

  // close() settles the verb and the reads in flight at once.
  held = gate();
  mode.current = 'leave';
  const closing = graph.queryKnowledge(query);
  await new Promise((resolve) => setTimeout(resolve, 10));
  await graph.close();
  await rejectsWith(closing, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  await rejectsWith(inFlight.splice(0)[0], 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  release();
});

test('queryKnowledge: documents larger than read.maxBytes are scanned, not held, and their hits read back', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cg-big-'));
  const line = 'Ordinary routing prose, repeated to make a large guide. ';
  const body = `${line.repeat(2000)}The needle: retries back off exponentially.\n${'é'.repeat(5000)}`;
  writeFileSync(path.join(dir, 'big.md'), body);
  const big = { ...inline('big', [cap('guide', { knowledge: [{ kind: 'document', knowledgeId: 'B-01', role: 'guide', locator: { type: 'relative-file', path: 'big.md' } }] })]), documentRoot: dir };
  let chunkCount = 0;
  const retriever = {
    id: 'streaming',
    async retrieve(input, access) {
      const [t] = input.targets;
      const parts = [];
      const scanned = await access.scan({ id: t.id, knowledgeId: t.knowledgeId }, (bytes) => (chunkCount++, parts.push(Buffer.from(bytes))));
      const text = Buffer.concat(parts);
      assert.equal(text.length, scanned.totalBytes);
      const at = text.indexOf('The needle');
      const snippet = 'The needle: retries back off exponentially.';
      const hit = { id: t.id, knowledgeId: t.knowledgeId, contentId: scanned.contentId, source: 'big.md', startOffset: at, endOffset: at + snippet.length, snippet };
      const document = { id: t.id, knowledgeId: t.knowledgeId, sourceContentId: scanned.contentId, indexedContentId: scanned.contentId };
      const evidence = currentEvidence(input, [document]);
      return { hits: [hit, { ...hit, startOffset: at + 1, endOffset: at + 1 + snippet.length }], evidence };
    },
  };
  const graph = await CapabilityGraph.open({ providers: [big], knowledgeRetriever: retriever });
  try {
    const r = await graph.queryKnowledge({ text: 'retries', selected: ['big::guide'] });
    assert.ok(Buffer.byteLength(body) > 32_768 && chunkCount > 1);
    assert.deepEqual(r.items.map((h) => h.snippet), ['The needle: retries back off exponentially.']);
    assert.deepEqual(r.meta.warnings.map((w) => [w.details.hitIndex, w.details.reason]), [[1, 'knowledge_hit_content_mismatch']]);
    // A retriever that reads nothing: the engine identifies the file itself; a change since
    // the index was built is stale evidence, never an empty result.
    const contentId = r.items[0].contentId;
    const blind = { id: 'blind', retrieve: (input) => ({ hits: [], evidence: currentEvidence(input, [{ id: input.targets[0].id, knowledgeId: 'B-01', sourceContentId: contentId, indexedContentId: contentId }]) }) };
    const second = await CapabilityGraph.open({ providers: [big], knowledgeRetriever: blind });
    assert.equal((await second.queryKnowledge({ text: 'x', selected: ['big::guide'] })).knowledgeState, 'searched');
    writeFileSync(path.join(dir, 'big.md'), `${body}!`);
    await rejectsWith(second.queryKnowledge({ text: 'x', selected: ['big::guide'] }), 'CG_INDEX_STALE', 'query', 'refresh', { reason: 'content_changed' });
    await second.close();
  } finally {
    await graph.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
