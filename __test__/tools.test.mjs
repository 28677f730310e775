// The Tool Adapter (SPEC §9): schemas, envelopes, equivalence with the SDK, body approval.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CapabilityGraph, createToolAdapter, lexicalExecutor } from '@devcodex/capability-graph';
import { rejectsWith, seedSource, throwsWith } from './helpers.mjs';

const open = (extra = {}) => CapabilityGraph.open({ providers: [seedSource()], executor: lexicalExecutor(), ...extra });

test('documented examples are accepted and counter-examples rejected with CG_INPUT_INVALID', async () => {
  const graph = await open();
  const adapter = createToolAdapter(graph, { documentBodies: true, entryPoints: ['seed.http::route'] });
  for (const tool of adapter.tools) {
    const { examples, properties } = tool.inputSchema;
    assert.ok(examples.length > 0, tool.name);
    for (const example of examples) {
      const out = await adapter.call(tool.name, example);
      assert.ok(out.ok || out.error.code !== 'CG_INPUT_INVALID', `${tool.name} ${JSON.stringify(example)} → ${JSON.stringify(out.error)}`);
    }
    const base = examples[0];
    const counter = [{ ...base, bogus: 1 }, null, 'text', [base]];
    for (const [key, schema] of Object.entries(properties)) {
      if (schema.pattern) counter.push({ ...base, [key]: 'Not Valid::' });
      if (schema.type === 'string') counter.push({ ...base, [key]: 42 });
      if (schema.type === 'array') counter.push({ ...base, [key]: 'not-an-array' });
      if (schema.type === 'integer') counter.push({ ...base, [key]: -1.5 });
    }
    for (const args of counter) {
      const out = await adapter.call(tool.name, args);
      assert.equal(out.ok, false, `${tool.name} accepted ${JSON.stringify(args)}`);
      assert.equal(out.error.code, tool.name === 'match' && args?.context !== undefined ? 'CG_CONTEXT_INVALID' : 'CG_INPUT_INVALID', `${tool.name} ${JSON.stringify(args)} → ${JSON.stringify(out.error)}`);
    }
  }
  await graph.close();
});

test('results and errors equal the direct SDK calls', async () => {
  const graph = await open();
  const adapter = createToolAdapter(graph, { documentBodies: true });
  const pairs = [
    ['list_providers', {}, () => graph.listProviders({})],
    ['get_provider', { providerId: 'seed.http' }, () => graph.getProvider('seed.http', {})],
    ['list_catalog', { limit: 2 }, () => graph.listCatalog({ limit: 2 })],
    ['get_capabilities', { ids: ['seed.http::route', 'seed.http::missing'] }, () => graph.getCapabilities(['seed.http::route', 'seed.http::missing'], {})],
    ['get_neighbors', { id: 'seed.http::route.validation' }, () => graph.getNeighbors('seed.http::route.validation', {})],
    ['resolve', { ids: ['seed.http::route.validation'] }, () => graph.resolve({ ids: ['seed.http::route.validation'] })],
    ['resolve_selection', { selected: ['seed.http::route.validation'] }, () => graph.resolveSelection({ selected: ['seed.http::route.validation'] })],
    ['list_knowledge_members', { capability: 'seed.http::route', collectionId: 'ROUTING', limit: 1 }, () => graph.listKnowledgeMembers({ capability: 'seed.http::route', collectionId: 'ROUTING', limit: 1 })],
    ['list_specification_documents', { providerId: 'seed.http' }, () => graph.listSpecificationDocuments({ providerId: 'seed.http' })],
    ['read_documents', { selected: ['seed.http::route.validation'] }, () => graph.readDocuments({ selected: ['seed.http::route.validation'] })],
    ['read_document_page', { capability: 'seed.http::route.http', knowledgeId: 'D-01', maxBytes: 64 }, () => graph.readDocumentPage({ capability: 'seed.http::route.http', knowledgeId: 'D-01', maxBytes: 64 })],
    ['read_specification', { providerId: 'seed.http' }, () => graph.readSpecification({ providerId: 'seed.http' })],
    ['read_specification_page', { providerId: 'seed.http', knowledgeId: 'SPEC-01' }, () => graph.readSpecificationPage({ providerId: 'seed.http', knowledgeId: 'SPEC-01' })],
    ['match', { intent: 'add an HTTP endpoint' }, () => graph.match({ intent: 'add an HTTP endpoint' })],
    ['resolve', { ids: ['seed.http::missing'] }, () => graph.resolve({ ids: ['seed.http::missing'] })],
    ['list_catalog', { requestProviderScope: ['other'] }, () => graph.listCatalog({ requestProviderScope: ['other'] })],
    ['get_neighbors', { id: 'nope::x' }, () => graph.getNeighbors('nope::x', {})],
    ['retrieve_capabilities', { text: 'x' }, () => graph.retrieveCapabilities({ text: 'x' })],
    ['query_knowledge', { text: 'x', selected: ['seed.http::route'] }, () => graph.queryKnowledge({ text: 'x', selected: ['seed.http::route'] })],
    ['query_runtime', { project: 'p', environment: 'e' }, () => graph.queryRuntime({ project: 'p', environment: 'e' })],
  ];
  for (const [name, args, direct] of pairs) {
    const out = await adapter.call(name, args);
    const expected = await direct().then((result) => ({ ok: true, result }), (e) => ({ ok: false, error: e.toJSON() }));
    assert.deepEqual(out, expected, name);
  }
  const unconfigured = await Promise.all(['retrieve_capabilities', 'query_knowledge', 'query_runtime'].map((n) => adapter.call(n, pairs.find((p) => p[0] === n)[1])));
  assert.deepEqual(unconfigured.map((o) => o.error.code), ['CG_RETRIEVER_UNCONFIGURED', 'CG_RETRIEVER_UNCONFIGURED', 'CG_RUNTIME_DISABLED']);
  assert.deepEqual((await adapter.call('nope', {})).error.code, 'CG_INPUT_INVALID');
  await graph.close();
});

test('body tools need the host approval; the bound adapter drops provider arguments', async () => {
  const graph = await open();
  const adapter = createToolAdapter(graph);
  for (const name of ['read_documents', 'read_document_page', 'read_specification', 'read_specification_page', 'query_knowledge']) {
    const out = await adapter.call(name, { selected: ['seed.http::route.http'] });
    assert.deepEqual(out.error, { code: 'CG_ACCESS_DENIED', phase: 'document', message: 'Target is outside the trusted scope', nextAction: 'check_config' }, name);
  }
  const bound = createToolAdapter(graph.forProvider('seed.http'), { prefix: 'seed_', tools: ['get_provider', 'get_neighbors', 'read_specification'], documentBodies: true });
  assert.deepEqual(bound.tools.map((t) => t.name), ['seed_get_provider', 'seed_get_neighbors', 'seed_read_specification']);
  assert.equal(bound.tools[0].inputSchema.properties.providerId, undefined);
  assert.equal(bound.tools[1].inputSchema.properties.requestProviderScope, undefined);
  assert.equal((await bound.call('seed_get_provider', {})).result.providerId, 'seed.http');
  assert.deepEqual((await bound.call('seed_get_neighbors', { id: 'route' })).result.id, { providerId: 'seed.http', capabilityId: 'route' });
  assert.equal((await bound.call('seed_read_specification', {})).result.results[0].value.knowledgeId, 'SPEC-01');
  assert.equal((await bound.call('seed_read_specification', { providerId: 'seed.http' })).error.code, 'CG_INPUT_INVALID');
  assert.ok(!createToolAdapter(graph.forProvider('seed.http')).tools.some((t) => t.name === 'list_providers'));
  await graph.close();
});

test('adapter options are checked; match is cancelled through the call signal', async () => {
  const graph = await CapabilityGraph.open({
    providers: [seedSource()],
    executor: { id: 'slow', match: (req, { signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))) },
  });
  for (const options of [{ prefix: 'bad prefix' }, { tools: ['nope'] }, { documentBodies: 'yes' }, { entryPoints: ['bad'] }, { other: 1 }, null]) {
    throwsWith(() => createToolAdapter(graph, options), 'CG_INPUT_INVALID', 'query', 'fix_input');
  }
  throwsWith(() => createToolAdapter({}), 'CG_INPUT_INVALID', 'query', 'fix_input');
  const adapter = createToolAdapter(graph);
  const controller = new AbortController();
  const pending = adapter.call('match', { intent: 'anything' }, { signal: controller.signal });
  setTimeout(() => controller.abort(), 10);
  const out = await pending;
  assert.deepEqual(out.error, { code: 'CG_MODEL_CANCELLED', phase: 'match', message: 'Match was cancelled', nextAction: 'retry' });
  await graph.close();
  await rejectsWith(graph.listCatalog(), 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
});

test('loading the package never loads the MCP SDK', async () => {
  const { execFileSync } = await import('node:child_process');
  const probe = (code) => execFileSync(process.execPath, ['-e', code], { encoding: 'utf8', cwd: new URL('..', import.meta.url).pathname }).trim();
  const cjs = "const cg = require('@devcodex/capability-graph'); cg.createToolAdapter; console.log(Object.keys(require.cache).some((k) => k.includes('modelcontextprotocol')))";
  assert.equal(probe(cjs), 'false');
  const esm = "import('@devcodex/capability-graph').then(() => console.log(Object.keys(require('node:module')._cache).some((k) => k.includes('modelcontextprotocol'))))";
  assert.equal(probe(esm), 'false');
});

/** 700k tiny objects; `counter.read` counts the elements a walk reads (through their descriptors). */
function hugeList(counter) {
  const list = Array.from({ length: 700_000 }, (_, i) => ({ i }));
  return new Proxy(list, {
    getOwnPropertyDescriptor(target, key) {
      counter.read++;
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
  });
}

test('arguments past the walk bound are refused without being walked whole', async () => {
  const graph = await open();
  const adapter = createToolAdapter(graph);
  const bound = { field: '$', limit: 50_000, reason: 'argument_values' };
  for (const [tool, args, phase] of [
    ['list_catalog', (c) => ({ junk: hugeList(c) }), 'query'],
    ['get_capabilities', (c) => ({ ids: ['seed.http::route'], junk: hugeList(c) }), 'query'],
    ['get_provider', (c) => ({ providerId: 'seed.http', junk: hugeList(c) }), 'query'],
    ['match', (c) => ({ intent: 'x', junk: hugeList(c) }), 'match'],
  ]) {
    const counter = { read: 0 };
    const out = await adapter.call(tool, args(counter));
    assert.equal(out.ok, false, tool);
    assert.deepEqual(
      { code: out.error.code, phase: out.error.phase, nextAction: out.error.nextAction, details: out.error.details },
      { code: 'CG_INPUT_TOO_LARGE', phase, nextAction: 'narrow_scope', details: bound },
      tool,
    );
    assert.ok(counter.read <= 50_000, `${tool}: ${counter.read} elements read`);
  }
  const counter = { read: 0 };
  await rejectsWith(graph.listCatalog({ junk: hugeList(counter) }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope', bound);
  await rejectsWith(graph.readDocuments({ selected: ['seed.http::route'], junk: hugeList(counter) }), 'CG_INPUT_TOO_LARGE', 'document', 'narrow_scope', bound);
  await rejectsWith(graph.match({ intent: 'x', junk: hugeList(counter) }), 'CG_INPUT_TOO_LARGE', 'match', 'narrow_scope', bound);
  await rejectsWith(graph.getNeighbors('seed.http::route', { junk: hugeList(counter) }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope', bound);
  assert.ok(counter.read <= 4 * 50_000, `${counter.read} elements read`);
  const text = 'x'.repeat(16_777_217);
  await rejectsWith(graph.listCatalog({ junk: text }), 'CG_INPUT_TOO_LARGE', 'query', 'narrow_scope', { field: '$', limit: 16_777_216, reason: 'argument_chars' });
  // Under the bound, the rules are the engine's as before: an unknown key is named.
  await rejectsWith(graph.listCatalog({ junk: Array.from({ length: 1000 }, (_, i) => ({ i })) }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'junk' });
  await graph.close();
});

test('configs and reload definitions are not bounded by the arguments walk', async () => {
  // 12k capabilities of five fields: more values than the arguments' bound.
  const capabilities = Array.from({ length: 12_000 }, (_, i) => ({ capabilityId: `c${i}`, name: `C ${i}`, description: 'd', whenToUse: 'w' }));
  const definition = { providerId: 'acme', name: 'Acme', version: '1', capabilities };
  const graph = await CapabilityGraph.open({ providers: [{ definition }] });
  const stats = () => graph[Symbol.for('capability-graph.stats')]().providers[0];
  assert.equal(stats().capabilities, 12_000);
  const report = await graph.reload({ providerId: 'acme', definitions: { acme: { ...definition, version: '2' } } });
  assert.equal(report.ok, true);
  assert.equal(stats().capabilities, 12_000);
  await graph.close();
});
