// Every call into host code settles, and every text a host component receives is bounded
// (SPEC §14 D17): readers and retrievers have deadlines, close() settles what waits on them.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CapabilityGraph, GraphError } from '@devcodex/capability-graph';
import { assertError, cap, inline, rejectsWith, seedSource } from './helpers.mjs';

const never = () => new Promise(() => {});
const tick = () => new Promise((r) => setImmediate(r));

test('new budgets are validated like every other', async () => {
  for (const [budgets, path] of [
    [{ read: { readerTimeoutMs: 0 } }, 'budgets.read.readerTimeoutMs'],
    [{ retrieveCapabilities: { timeoutMs: 2 ** 31 } }, 'budgets.retrieveCapabilities.timeoutMs'],
    [{ queryKnowledge: { maxTextBytes: 1.5 } }, 'budgets.queryKnowledge.maxTextBytes'],
    [{ database: { maxRecords: 0 } }, 'budgets.database.maxRecords'],
    [{ database: { readTimeoutMs: 2 ** 31 } }, 'budgets.database.readTimeoutMs'],
    [{ database: { maxPages: 1 } }, 'budgets.database.maxPages'],
  ]) {
    await rejectsWith(CapabilityGraph.open({ providers: [seedSource()], budgets }), 'CG_CONFIG_INVALID', 'config', 'check_config', { path });
  }
  const graph = await CapabilityGraph.open({ providers: [seedSource()], budgets: { database: { maxBytes: 1 }, read: { readerTimeoutMs: 1 } } });
  await graph.close();
});

// --- text inputs ----------------------------------------------------------------------------

test('retriever texts and runtime contexts are bounded in bytes (CG_INPUT_TOO_LARGE)', async () => {
  let retrieved = 0;
  const graph = await CapabilityGraph.open({
    providers: [seedSource()],
    capabilityRetriever: { id: 'r', retrieve: () => (retrieved++, { candidates: [] }) },
    knowledgeRetriever: { id: 'k', retrieve: () => (retrieved++, { hits: [] }) },
    runtimeAdapters: [{ id: 'rt', providerId: 'seed.http', query: () => (retrieved++, {}) }],
  });
  const big = 'é'.repeat(2049); // 4,098 bytes in 2,049 characters
  await rejectsWith(graph.retrieveCapabilities({ text: big }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope', {
    field: 'text',
    limit: 4096,
    budget: 'retrieveCapabilities.maxTextBytes',
  });
  await rejectsWith(graph.queryKnowledge({ text: 'x'.repeat(10 * 1024 * 1024), selected: ['seed.http::route'] }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope', {
    field: 'text',
    limit: 4096,
    budget: 'queryKnowledge.maxTextBytes',
  });
  for (const field of ['project', 'environment']) {
    const q = { project: 'p', environment: 'e', [field]: 'x'.repeat(257) };
    await rejectsWith(graph.queryRuntime(q), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope', { field, limit: 256 });
  }
  assert.equal(retrieved, 0, 'no component saw an oversized text');
  await graph.close();

  const tight = await CapabilityGraph.open({
    providers: [seedSource()],
    capabilityRetriever: { id: 'r', retrieve: () => ({ candidates: [] }) },
    budgets: { retrieveCapabilities: { maxTextBytes: 4 } },
  });
  assert.deepEqual((await tight.retrieveCapabilities({ text: 'abcd' })).items, []);
  await rejectsWith(tight.retrieveCapabilities({ text: 'abcde' }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope', { limit: 4 });
  await tight.close();
});

// --- retrievers -----------------------------------------------------------------------------

test('a retriever past its deadline is CG_RETRIEVER_UNAVAILABLE/retry and its signal is aborted', async () => {
  let signal;
  const graph = await CapabilityGraph.open({
    providers: [seedSource()],
    capabilityRetriever: { id: 'r', retrieve: (input, options) => ((signal = options.signal), never()) },
    budgets: { retrieveCapabilities: { timeoutMs: 20 } },
  });
  await rejectsWith(graph.retrieveCapabilities({ text: 'x' }), 'CG_RETRIEVER_UNAVAILABLE', 'query', 'retry');
  assert.equal(signal.aborted, true);
  await graph.close();

  let access;
  const knowing = await CapabilityGraph.open({
    providers: [seedSource()],
    knowledgeRetriever: { id: 'k', retrieve: (input, a) => ((access = a), never()) },
    budgets: { queryKnowledge: { timeoutMs: 20 } },
  });
  await rejectsWith(knowing.queryKnowledge({ text: 'route', selected: ['seed.http::route'] }), 'CG_RETRIEVER_UNAVAILABLE', 'query', 'retry');
  assert.ok(access.signal instanceof AbortSignal);
  assert.equal(access.signal.aborted, true);
  await knowing.close();
});

test('close() settles a knowledge retriever that never answers and aborts its signal', async () => {
  let access;
  const graph = await CapabilityGraph.open({ providers: [seedSource()], knowledgeRetriever: { id: 'k', retrieve: (input, a) => ((access = a), never()) } });
  const pending = graph.queryKnowledge({ text: 'route', selected: ['seed.http::route'] });
  await tick();
  await graph.close();
  await rejectsWith(pending, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  assert.equal(access.signal.aborted, true);
});

test('an engine error a knowledge retriever rewrites and rethrows is replaced by the engine copy', async () => {
  let caught;
  const retriever = {
    id: 'rewriting',
    async retrieve(input, access) {
      const t = input.targets[0];
      try {
        await access.read({ ...t, role: 'other' }, { maxBytes: 10 });
      } catch (error) {
        caught = error;
        // Reflect.set: a frozen error refuses quietly instead of throwing here.
        Reflect.set(error, 'message', 'read /srv/private/index failed');
        Reflect.set(error, 'nextAction', 'retry');
        Reflect.set(error, 'phase', 'load');
        Reflect.set(error, 'details', { reason: 'x', path: '/srv/private' });
        if (error.details && typeof error.details === 'object') Reflect.set(error.details, 'path', '/srv/private');
        throw error;
      }
    },
  };
  const graph = await CapabilityGraph.open({ providers: [seedSource()], knowledgeRetriever: retriever });
  const e = await rejectsWith(graph.queryKnowledge({ text: 'route', selected: ['seed.http::route'] }), 'CG_ADAPTER_CONTRACT_INVALID', 'query', 'contact_admin', {
    reason: 'retrieval_target_override',
  });
  assert.ok(caught instanceof GraphError);
  assert.notEqual(e, caught, 'never the object the retriever held');
  assert.equal(e.message, new GraphError({ code: 'CG_ADAPTER_CONTRACT_INVALID' }).message);
  assert.ok(!JSON.stringify(e).includes('private'));
  await graph.close();
});

// --- readers --------------------------------------------------------------------------------

const url = 'https://docs.example/guide.md';
const webProvider = () => ({
  definition: {
    providerId: 'acme',
    name: 'A',
    version: '1',
    capabilities: [cap('x', { knowledge: [{ kind: 'document', knowledgeId: 'WEB', role: 'guide', locator: { type: 'http', url } }] })],
  },
});

test('a reader gets { maxBytes, signal } and a deadline: CG_DOCUMENT_UNREADABLE/retry for that document', async () => {
  const seen = [];
  const reader = { id: 'slow', canRead: () => true, read: (ref, ctx, options) => (seen.push(options), never()) };
  const graph = await CapabilityGraph.open({ providers: [webProvider()], readers: [reader], budgets: { read: { readerTimeoutMs: 20 } } });
  const r = await graph.readDocuments({ selected: ['acme::x'] });
  assertError(r.results[0].error, 'CG_DOCUMENT_UNREADABLE', 'document', 'retry');
  assert.equal(seen[0].maxBytes, 4194304);
  assert.ok(seen[0].signal instanceof AbortSignal);
  assert.equal(seen[0].signal.aborted, true, 'the reader is told to stop');
  await rejectsWith(graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'WEB' }), 'CG_DOCUMENT_UNREADABLE', 'document', 'retry');
  await graph.close();
});

test('close() settles reads waiting on a reader with CG_GRAPH_CLOSED and aborts the reader signal', async () => {
  const signals = [];
  const reader = { id: 'hanging', canRead: () => true, read: (ref, ctx, options) => (signals.push(options.signal), never()) };
  const graph = await CapabilityGraph.open({ providers: [webProvider()], readers: [reader] });
  const batch = graph.readDocuments({ selected: ['acme::x'] });
  const page = graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'WEB' });
  while (signals.length < 2) await tick();
  await graph.close();
  await rejectsWith(batch, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  await rejectsWith(page, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  assert.ok(signals.every((s) => s.aborted));
});

test('a knowledge retriever reading through a hanging reader is settled by its deadline', async () => {
  const reader = { id: 'hanging', canRead: () => true, read: never };
  const retriever = { id: 'k', retrieve: async (input, access) => access.read({ id: input.targets[0].id, knowledgeId: 'WEB' }, { maxBytes: 100 }) };
  const graph = await CapabilityGraph.open({ providers: [webProvider()], readers: [reader], knowledgeRetriever: retriever, budgets: { read: { readerTimeoutMs: 20 } } });
  await rejectsWith(graph.queryKnowledge({ text: 'x', selected: ['acme::x'] }), 'CG_DOCUMENT_UNREADABLE', 'query', 'retry');
  await graph.close();
});

test('a page read stream has the reader deadline and is settled by close(); one signal tells the reader to stop', async () => {
  const signals = [];
  const chunk = { bytes: new TextEncoder().encode('# Guide\n'), contentType: 'text/markdown', source: url };
  // One stream sends nothing, another stops after its first chunk; neither ends.
  const hanging = (first) => ({
    id: 'stream',
    canRead: () => true,
    read: never,
    async *stream(ref, ctx, options) {
      signals.push(options.signal);
      if (first) yield chunk;
      await never();
    },
  });
  const page = { capability: 'acme::x', knowledgeId: 'WEB' };
  for (const first of [false, true]) {
    const graph = await CapabilityGraph.open({ providers: [webProvider()], readers: [hanging(first)], budgets: { read: { readerTimeoutMs: 20 } } });
    const e = await rejectsWith(graph.readDocumentPage(page), 'CG_DOCUMENT_UNREADABLE', 'document', 'retry');
    assert.notEqual(e.details?.reason, 'aborted', 'the deadline, not a caller, stopped it');
    assert.equal(signals.pop().aborted, true);
    await graph.close();
  }
  const graph = await CapabilityGraph.open({ providers: [webProvider()], readers: [hanging(true)] });
  const pending = graph.readDocumentPage({ ...page, signal: new AbortController().signal });
  while (signals.length === 0) await tick();
  await graph.close();
  await rejectsWith(pending, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  assert.equal(signals.pop().aborted, true);
});

test("a page read's signal and the reader deadline bound the same reader call", async () => {
  const signals = [];
  const reader = { id: 'slow', canRead: () => true, read: (ref, ctx, options) => (signals.push(options.signal), never()) };
  const page = { capability: 'acme::x', knowledgeId: 'WEB' };
  const graph = await CapabilityGraph.open({ providers: [webProvider()], readers: [reader], budgets: { read: { readerTimeoutMs: 20 } } });
  // The caller's signal does not lift the deadline.
  const e = await rejectsWith(graph.readDocumentPage({ ...page, signal: new AbortController().signal }), 'CG_DOCUMENT_UNREADABLE', 'document', 'retry');
  assert.notEqual(e.details?.reason, 'aborted');
  assert.equal(signals.pop().aborted, true);
  await graph.close();
  // Within the deadline, the caller's abort reaches the reader.
  const patient = await CapabilityGraph.open({ providers: [webProvider()], readers: [reader], budgets: { read: { readerTimeoutMs: 60_000 } } });
  const controller = new AbortController();
  const pending = patient.readDocumentPage({ ...page, signal: controller.signal });
  while (signals.length === 0) await tick();
  controller.abort();
  await rejectsWith(pending, 'CG_DOCUMENT_UNREADABLE', 'document', 'retry', { reason: 'aborted' });
  assert.equal(signals.pop().aborted, true, 'the reader is told to stop');
  await patient.close();
});

test('reads a knowledge retriever leaves running get the reader deadline, then the query fails CG_RETRIEVER_UNAVAILABLE/retry', async () => {
  let scan;
  const retriever = {
    id: 'careless',
    retrieve(input, access) {
      const [t] = input.targets;
      // A scan whose consumer never returns, not awaited.
      scan = access.scan({ id: t.id, knowledgeId: t.knowledgeId }, never);
      return { hits: [] };
    },
  };
  const graph = await CapabilityGraph.open({ providers: [seedSource()], knowledgeRetriever: retriever, budgets: { read: { readerTimeoutMs: 30 } } });
  await rejectsWith(graph.queryKnowledge({ text: 'route', selected: ['seed.http::route'] }), 'CG_RETRIEVER_UNAVAILABLE', 'query', 'retry');
  await rejectsWith(scan, 'CG_RETRIEVER_UNAVAILABLE', 'query', 'retry');
  await graph.close();
});

// --- reloads --------------------------------------------------------------------------------

test('a reload waiting on another never runs beside it', async () => {
  let gate;
  let opened = 0;
  let version = 1;
  const provider = (v) => inline('acme', [cap('a', { description: `Version ${v}.` })]).definition;
  const adapter = {
    id: 'db',
    async openView() {
      opened++;
      const v = version;
      if (opened === 2) await new Promise((r) => (gate = r)); // the first reload is slow
      const { capabilities, ...record } = provider(v);
      return {
        provider: record,
        sourceRevision: `v${v}`,
        scanCapabilities: async () => ({ items: capabilities }),
        neighbors: async () => ({ items: [] }),
      };
    },
  };
  const graph = await CapabilityGraph.open({ providers: [{ providerId: 'acme', authority: { kind: 'database', adapter } }] });
  version = 2;
  const slow = graph.reload();
  while (!gate) await tick();
  version = 3;
  const fast = graph.reload();
  for (let i = 0; i < 20; i++) await tick();
  assert.equal(opened, 2, 'the second reload has not read while the first runs');
  gate();
  const [first, second] = await Promise.all([slow, fast]);
  assert.equal(first.ok && second.ok, true);
  assert.notEqual(second.providers[0].staticRevision, first.providers[0].staticRevision);
  const [summary] = (await graph.listProviders()).items;
  assert.equal(summary.staticRevision, second.providers[0].staticRevision, 'the later read is published last');
  assert.equal((await graph.getCapabilities(['acme::a'])).results[0].value.description, 'Version 3.');
  await graph.close();
});

test('close() settles a reload waiting on a database with CG_GRAPH_CLOSED', async () => {
  let hang = false;
  let asked = 0;
  const { capabilities, ...record } = inline('acme', [cap('a')]).definition;
  const adapter = {
    id: 'db',
    openView: () => {
      asked++;
      return hang ? never() : { provider: record, sourceRevision: 'v1', scanCapabilities: () => ({ items: capabilities }), neighbors: () => ({ items: [] }) };
    },
  };
  const graph = await CapabilityGraph.open({ providers: [{ providerId: 'acme', authority: { kind: 'database', adapter } }] });
  hang = true;
  const reloading = graph.reload();
  while (asked < 2) await tick();
  await graph.close();
  await rejectsWith(reloading, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
});

test('a GraphError a database adapter throws is its failure, even CG_GRAPH_CLOSED', async () => {
  const adapter = { id: 'db', openView: () => Promise.reject(new GraphError({ code: 'CG_GRAPH_CLOSED' })) };
  await rejectsWith(CapabilityGraph.open({ providers: [{ providerId: 'acme', authority: { kind: 'database', adapter } }] }), 'CG_CONFIG_INVALID', 'load', 'check_config');
});
