// The Tool Adapter (SPEC §9): schemas, envelopes, equivalence with the SDK, body approval.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CapabilityGraph, createToolAdapter, lexicalExecutor } from '@devcodex/capability-graph';
import { cap, inline, rejectsWith, seedSource, throwsWith } from './helpers.mjs';

const open = (extra = {}) => CapabilityGraph.open({ providers: [seedSource()], executor: lexicalExecutor(), ...extra });

const DIALECTS = ['json-schema', 'strict'];

test('documented examples are accepted and counter-examples rejected with CG_INPUT_INVALID, in both dialects', async () => {
  const graph = await open();
  const options = { documentBodies: true, entryPoints: ['seed.http::route'] };
  const plainSchemas = new Map(createToolAdapter(graph, options).tools.map((t) => [t.name, t.inputSchema]));
  for (const dialect of DIALECTS) {
    const adapter = createToolAdapter(graph, { ...options, dialect });
    assert.equal(adapter.tools.length, 15);
    for (const tool of adapter.tools) {
      const { examples } = tool;
      assert.ok(examples.length > 0, tool.name);
      if (dialect === 'json-schema') assert.deepEqual(tool.inputSchema.examples, examples);
      for (const example of examples) {
        const out = await adapter.call(tool.name, example);
        assert.ok(out.ok || out.error.code !== 'CG_INPUT_INVALID', `${dialect} ${tool.name} ${JSON.stringify(example)} → ${JSON.stringify(out.error)}`);
      }
      const base = examples[0];
      const counter = [{ ...base, bogus: 1 }, null, 'text', [base]];
      // The counter-examples come from the JSON Schema dialect's constraints, which the strict
      // dialect says in words: the verbs judge both alike.
      for (const [key, schema] of Object.entries(plainSchemas.get(tool.name).properties)) {
        if (schema.pattern) counter.push({ ...base, [key]: 'Not Valid::' });
        if (schema.type === 'string') counter.push({ ...base, [key]: 42 });
        if (schema.type === 'array') counter.push({ ...base, [key]: 'not-an-array' });
        if (schema.type === 'integer') counter.push({ ...base, [key]: -1.5 });
      }
      // A required argument is never omitted, not even by null in the strict dialect; an
      // optional one is only there.
      for (const key of plainSchemas.get(tool.name).required ?? []) counter.push({ ...base, [key]: null });
      if (dialect === 'json-schema') for (const key of Object.keys(tool.inputSchema.properties)) counter.push({ ...base, [key]: null });
      for (const args of counter) {
        const out = await adapter.call(tool.name, args);
        assert.equal(out.ok, false, `${dialect} ${tool.name} accepted ${JSON.stringify(args)}`);
        const context = args?.context !== undefined && !(dialect === 'strict' && args.context === null);
        const code = tool.name === 'match' && context ? 'CG_CONTEXT_INVALID' : 'CG_INPUT_INVALID';
        assert.equal(out.error.code, code, `${dialect} ${tool.name} ${JSON.stringify(args)} → ${JSON.stringify(out.error)}`);
      }
    }
  }
  await graph.close();
});

const ALL = ['list_providers', 'get_provider', 'list_catalog', 'get_capabilities', 'get_neighbors', 'resolve', 'resolve_selection', 'match', 'list_knowledge_members', 'list_specification_documents', 'read_documents', 'read_document_page', 'read_specification', 'read_specification_page', 'retrieve_capabilities', 'query_knowledge', 'query_runtime'];
const BODY_TOOLS = ['read_documents', 'read_document_page', 'read_specification', 'read_specification_page', 'query_knowledge'];

test('results and errors equal the direct SDK calls', async () => {
  const graph = await open();
  // Named, the tools of backends this graph lacks are served and fail with their codes.
  const adapter = createToolAdapter(graph, { documentBodies: true, tools: ALL });
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
  const adapter = createToolAdapter(graph, { tools: BODY_TOOLS });
  for (const name of BODY_TOOLS) {
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
  for (const options of [{}, { tools: ['list_catalog'] }]) throwsWith(() => createToolAdapter(graph, options), 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
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

// --- dialects -------------------------------------------------------------------------------

/** Ajv in strict mode: every report it logs or throws, for one schema. */
async function ajvReports(schema) {
  const { default: Ajv } = await import('ajv');
  const reports = [];
  const logger = { log: () => {}, warn: (...m) => reports.push(m.join(' ')), error: (...m) => reports.push(m.join(' ')) };
  try {
    new Ajv({ strict: true, allErrors: true, logger }).compile(schema);
  } catch (error) {
    reports.push(error.message);
  }
  return reports;
}

/** The keywords OpenAI's strict mode takes (and Anthropic's and Gemini's subsets share). */
const STRICT_KEYWORDS = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'anyOf', 'description']);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

/** OpenAI's documented strict-mode rules, walked: what each schema node breaks. */
function strictViolations(schema, at = '$', depth = 0, found = []) {
  const bad = (rule) => found.push(`${at}: ${rule}`);
  for (const key of Object.keys(schema)) if (!STRICT_KEYWORDS.has(key)) bad(`keyword ${key}`);
  if (depth > 10) bad('nested deeper than 10 levels');
  for (const t of [schema.type ?? []].flat()) if (!TYPES.has(t)) bad(`type ${t}`);
  if (schema.type === undefined && schema.anyOf === undefined) bad('no type');
  if (depth === 0 && (schema.type !== 'object' || schema.anyOf)) bad('the root is not an object');
  if (schema.enum && [schema.type].flat().includes('null') && !schema.enum.includes(null)) bad('a nullable enum without null');
  if ([schema.type].flat().includes('object')) {
    if (schema.additionalProperties !== false) bad('additionalProperties is not false');
    const keys = Object.keys(schema.properties ?? {});
    if (JSON.stringify([...(schema.required ?? [])].sort()) !== JSON.stringify([...keys].sort())) bad('not every property is required');
    for (const [key, sub] of Object.entries(schema.properties ?? {})) {
      if (typeof sub.description !== 'string' || sub.description === '') bad(`property ${key} has no description`);
      strictViolations(sub, `${at}.${key}`, depth + 1, found);
    }
  }
  if (schema.items) strictViolations(schema.items, `${at}[]`, depth + 1, found);
  for (const [i, branch] of (schema.anyOf ?? []).entries()) strictViolations(branch, `${at}|${i}`, depth + 1, found);
  return found;
}

/** Every property of a schema, at any depth, has a description. */
function undescribed(schema, at = '$', found = []) {
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    if (typeof sub.description !== 'string' || sub.description === '') found.push(`${at}.${key}`);
    undescribed(sub, `${at}.${key}`, found);
  }
  if (schema.items) undescribed(schema.items, `${at}[]`, found);
  return found;
}

const OPTIONS = { documentBodies: true, entryPoints: ['seed.http::route'], tools: [...ALL, 'list_entry_points'] };

test('the strict dialect meets strict function calling: Ajv strict, the rule walk, a description everywhere', async () => {
  const graph = await open();
  for (const target of [graph, graph.forProvider('seed.http')]) {
    const bound = target !== graph;
    const tools = bound ? [...ALL.filter((n) => n !== 'list_providers'), 'list_entry_points'] : OPTIONS.tools;
    const strict = createToolAdapter(target, { ...OPTIONS, tools, dialect: 'strict' });
    const plain = createToolAdapter(target, { ...OPTIONS, tools });
    assert.equal(strict.dialect, 'strict');
    assert.equal(plain.dialect, 'json-schema');
    assert.equal(strict.tools.length, bound ? 17 : 18);
    let properties = 0;
    for (const tool of strict.tools) {
      assert.deepEqual(await ajvReports(tool.inputSchema), [], `${tool.name} (strict)`);
      assert.deepEqual(strictViolations(tool.inputSchema), [], tool.name);
      properties += Object.keys(tool.inputSchema.properties).length;
    }
    // OpenAI's ceilings per tool definition set: 5000 properties, 1000 enum values.
    assert.ok(properties < 5000);
    for (const tool of plain.tools) {
      assert.deepEqual(await ajvReports(tool.inputSchema), [], `${tool.name} (json-schema)`);
      assert.deepEqual(await ajvReports(tool.outputSchema), [], `${tool.name} output`);
      assert.deepEqual(undescribed(tool.inputSchema), [], tool.name);
      assert.equal(tool.inputSchema.additionalProperties, false);
    }
  }
  throwsWith(() => createToolAdapter(graph, { dialect: 'openai' }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'dialect' });
  await graph.close();
});

test('strict arguments: null omits an optional argument (never inside context), maps come as entries', async () => {
  const seen = [];
  const graph = await CapabilityGraph.open({
    providers: [seedSource()],
    executor: { id: 'spy', match: (request) => (seen.push(request.context), { status: 'no_match', selections: [] }) },
  });
  const strict = createToolAdapter(graph, { dialect: 'strict' });
  const plain = createToolAdapter(graph);
  const nulls = { capabilityIdPrefix: null, parent: null, cursor: null, limit: 2, requestProviderScope: null, requiredStaticRevision: null };
  assert.deepEqual(await strict.call('list_catalog', nulls), { ok: true, result: await graph.listCatalog({ limit: 2 }) });
  // The SDK and the JSON Schema dialect keep D3: null is a value, and not one these take.
  assert.equal((await plain.call('list_catalog', nulls)).error.code, 'CG_INPUT_INVALID');
  await rejectsWith(graph.listCatalog(nulls), 'CG_INPUT_INVALID', 'query', 'fix_input');
  // A required argument given null is still missing.
  assert.deepEqual((await strict.call('get_neighbors', { id: null })).error.details, { field: 'id', expected: 'qualified capability ID or { providerId, capabilityId }' });

  const { staticRevision } = (await graph.listProviders()).items[0];
  const entries = [{ key: 'seed.http', value: staticRevision }];
  const selection = await strict.call('resolve_selection', { selected: ['seed.http::route.validation'], requestProviderScope: null, requiredStaticRevision: null, requiredStaticRevisionByProvider: entries });
  assert.deepEqual(selection, { ok: true, result: await graph.resolveSelection({ selected: ['seed.http::route.validation'], requiredStaticRevisionByProvider: { 'seed.http': staticRevision } }) });
  const stale = await strict.call('resolve', { ids: ['seed.http::route'], requiredStaticRevisionByProvider: [{ key: 'seed.http', value: 's:0000000000000000' }] });
  assert.equal(stale.error.code, 'CG_REVISION_MISMATCH');
  const twice = await strict.call('resolve', { ids: ['seed.http::route'], requiredStaticRevisionByProvider: [...entries, ...entries] });
  assert.deepEqual([twice.error.code, twice.error.details], ['CG_INPUT_INVALID', { field: 'requiredStaticRevisionByProvider' }]);
  const kinds = await strict.call('get_neighbors', { id: 'seed.http::route', kinds: null, limitPerKind: 1, cursors: null, requestProviderScope: null, requiredStaticRevision: null });
  const cursor = kinds.result.groups.children.nextCursor;
  assert.ok(cursor);
  const next = await strict.call('get_neighbors', { id: 'seed.http::route', kinds: ['children'], limitPerKind: 1, cursors: [{ key: 'children', value: cursor }] });
  const direct = await graph.getNeighbors('seed.http::route', { kinds: ['children'], limitPerKind: 1, cursors: { children: cursor } });
  assert.deepEqual(next.result, { ...direct, groups: { children: direct.groups.children } });

  // Inside context, null is a value.
  const matched = await strict.call('match', { intent: 'route a request', context: [{ key: 'tenant', value: null }, { key: 'tier', value: 2 }], limit: null, timeoutMs: null, requestProviderScope: null, requiredStaticRevision: null });
  assert.equal(matched.ok, true, JSON.stringify(matched.error));
  assert.deepEqual(seen.at(-1), { tenant: null, tier: 2 });
  const omitted = await strict.call('match', { intent: 'route a request', context: null });
  assert.equal(omitted.ok, true);
  assert.deepEqual(seen.at(-1), {});
  // Entries that are not { key, value } go to the verb as they are: it judges them.
  assert.equal((await strict.call('match', { intent: 'x', context: [{ key: 'a' }] })).error.code, 'CG_CONTEXT_INVALID');
  assert.equal((await strict.call('resolve', { ids: ['seed.http::route'], requiredStaticRevisionByProvider: [['seed.http', staticRevision]] })).error.code, 'CG_INPUT_INVALID');
  await graph.close();
});

test('tool names meet the OpenAI, Anthropic and Gemini rule once prefixed; a prefix that breaks it is refused', async () => {
  const graph = await open();
  const NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
  for (const prefix of ['', 'seed_', 'A-', '_x', 'p'.repeat(36)]) {
    const adapter = createToolAdapter(graph, { ...OPTIONS, prefix });
    for (const tool of adapter.tools) assert.match(tool.name, NAME, tool.name);
  }
  for (const prefix of ['1x_', '-x', 'bad prefix', 'seed.', 'é_', 'p'.repeat(37), 'p'.repeat(65)]) {
    throwsWith(() => createToolAdapter(graph, { ...OPTIONS, prefix }), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'prefix' });
  }
  // The rule holds for the tools served: a long prefix fits the short names.
  assert.deepEqual(createToolAdapter(graph, { prefix: 'p'.repeat(57), tools: ['resolve'] }).tools.map((t) => t.name.length), [64]);
  await graph.close();
});

test('by default only the tools that can work in this configuration are listed; named, any tool is served', async () => {
  const core = ['list_providers', 'get_provider', 'list_catalog', 'get_capabilities', 'get_neighbors', 'resolve', 'resolve_selection', 'list_knowledge_members', 'list_specification_documents'];
  const names = (adapter) => adapter.tools.map((t) => t.name);
  const bare = await CapabilityGraph.open({ providers: [seedSource()] });
  assert.deepEqual(names(createToolAdapter(bare)), core);
  assert.deepEqual(names(createToolAdapter(bare, { documentBodies: true })), [...core, 'read_documents', 'read_document_page', 'read_specification', 'read_specification_page']);
  const named = createToolAdapter(bare, { tools: ['match', 'query_runtime', 'read_documents'] });
  assert.deepEqual(names(named), ['match', 'read_documents', 'query_runtime']);
  assert.equal((await named.call('match', { intent: 'x' })).error.code, 'CG_MODEL_NOT_CONFIGURED');
  assert.equal((await named.call('query_runtime', { project: 'p', environment: 'e' })).error.code, 'CG_RUNTIME_DISABLED');
  assert.equal((await named.call('read_documents', { selected: ['seed.http::route'] })).error.code, 'CG_ACCESS_DENIED');
  await bare.close();

  const full = await CapabilityGraph.open({
    providers: [seedSource()],
    executor: lexicalExecutor(),
    capabilityRetriever: { id: 'r', retrieve: () => ({ candidates: [] }) },
    knowledgeRetriever: { id: 'k', retrieve: () => ({ hits: [] }) },
    runtimeAdapters: [{ id: 'rt', providerId: 'seed.http', query: () => ({ items: [] }) }],
  });
  assert.deepEqual(names(createToolAdapter(full)), [...core.slice(0, 7), 'match', ...core.slice(7), 'retrieve_capabilities', 'query_runtime']);
  assert.deepEqual(names(createToolAdapter(full, { documentBodies: true })), ALL);
  assert.deepEqual(names(createToolAdapter(full.forProvider('seed.http'), { documentBodies: true })), ALL.slice(1));
  await full.close();
  // A runtime adapter serves its own provider: bound to another, the runtime tool is not listed.
  const two = await CapabilityGraph.open({
    providers: [seedSource(), { definition: { providerId: 'acme', name: 'A', version: '1', capabilities: [{ capabilityId: 'x', name: 'X', description: 'D', whenToUse: 'W' }] } }],
    runtimeAdapters: [{ id: 'rt', providerId: 'seed.http', query: () => ({ items: [] }) }],
  });
  assert.ok(names(createToolAdapter(two)).includes('query_runtime'));
  assert.ok(names(createToolAdapter(two.forProvider('seed.http'))).includes('query_runtime'));
  assert.ok(!names(createToolAdapter(two.forProvider('acme'))).includes('query_runtime'));
  await two.close();
});

test('every tool has a title and read-only annotations; schemas cite the served graph, never an imaginary provider', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource()], executor: lexicalExecutor() });
  const catalog = await graph.listCatalog();
  const known = new Set(catalog.items.map((r) => r.qualifiedId));
  for (const dialect of DIALECTS) {
    const adapter = createToolAdapter(graph, { ...OPTIONS, dialect });
    const titles = new Set();
    for (const tool of adapter.tools) {
      assert.ok(typeof tool.title === 'string' && tool.title.length > 3 && !tool.title.includes('_'), tool.name);
      titles.add(tool.title);
      // The host's retrievers and runtime adapters answer from host code; the rest from the graph
      // (the lexical executor, the provider's files).
      const hosted = ['retrieve_capabilities', 'query_knowledge', 'query_runtime'].includes(tool.name);
      assert.deepEqual(tool.annotations, { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: hosted }, tool.name);
    }
    assert.equal(titles.size, adapter.tools.length);
    const text = JSON.stringify(adapter.tools);
    assert.ok(!/acme|billing|invoice/.test(text), 'an imaginary provider is cited');
    for (const id of text.match(/seed\.http::[a-z.]+/g)) assert.ok(known.has(id), id);
    // The body tools say they return document bodies.
    for (const name of BODY_TOOLS) assert.match(adapter.tools.find((t) => t.name === name).description, /bodies|text|snippets/);
  }
  const bound = createToolAdapter(graph.forProvider('seed.http'));
  const text = JSON.stringify(bound.tools.map((t) => [t.inputSchema, t.examples]));
  assert.ok(!text.includes('seed.http::'), 'a bound graph cites local IDs');
  assert.ok(!text.includes('acme'));
  await graph.close();
});

test('get_neighbors answers only the kinds asked for (all eight when none are); the SDK keeps all eight', async () => {
  const graph = await open();
  const adapter = createToolAdapter(graph);
  // route.validation has two parents (request, route) and no children.
  const sdk = await graph.getNeighbors('seed.http::route.validation', { kinds: ['children'] });
  assert.deepEqual(Object.keys(sdk.groups), ['parents', 'children', 'specializes', 'specializedBy', 'related', 'relatedBy', 'requires', 'requiredBy']);
  assert.deepEqual(sdk.groups.parents, { items: [], completeness: 'complete' });
  const children = await adapter.call('get_neighbors', { id: 'seed.http::route.validation', kinds: ['children'] });
  assert.deepEqual(children.result, { id: sdk.id, groups: { children: { items: [], completeness: 'complete' } }, meta: sdk.meta });
  // Groups in the engine's order, whatever the order asked.
  const two = await adapter.call('get_neighbors', { id: 'seed.http::route.validation', kinds: ['requires', 'parents'] });
  assert.deepEqual(Object.keys(two.result.groups), ['parents', 'requires']);
  assert.deepEqual(two.result.groups.parents.items.map((r) => r.qualifiedId), ['seed.http::request', 'seed.http::route']);
  assert.deepEqual(two.result.groups.requires.items.map((r) => r.qualifiedId), ['seed.http::schema.request']);
  const all = await adapter.call('get_neighbors', { id: 'seed.http::route.validation' });
  assert.deepEqual(all.result, await graph.getNeighbors('seed.http::route.validation'));
  // Failures stay the verb's.
  const bad = await adapter.call('get_neighbors', { id: 'seed.http::route.validation', kinds: ['siblings'] });
  assert.deepEqual([bad.error.code, bad.error.details], ['CG_INPUT_INVALID', { field: 'kinds[0]', expected: 'distinct neighbour kind' }]);
  await graph.close();
});

test('with several providers every tool takes the per-provider pin the instructions teach; one provider, or a bound graph, pins one revision', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource(), inline('acme', [cap('billing')])], executor: lexicalExecutor() });
  const several = createToolAdapter(graph, { documentBodies: true, entryPoints: ['seed.http::route'] });
  assert.match(several.instructions, /pin requiredStaticRevisionByProvider to the staticRevisionByProvider in the first result's meta/);
  assert.match(several.instructions, /compositeStaticRevision is no provider's revision: never pin it/);
  for (const tool of several.tools) assert.match(tool.inputSchema.properties.requiredStaticRevisionByProvider?.description ?? '', /staticRevisionByProvider/, tool.name);
  assert.match(several.tools.find((t) => t.name === 'list_entry_points').inputSchema.properties.requiredStaticRevisionByProvider.description, /provider of the entry points: "seed\.http"/);
  // The strict dialect gives the map as entries, as everywhere.
  const strict = createToolAdapter(graph, { dialect: 'strict' });
  assert.equal(strict.tools.find((t) => t.name === 'list_catalog').inputSchema.properties.requiredStaticRevisionByProvider.type[0], 'array');
  const { staticRevisionByProvider } = (await graph.listCatalog()).meta;
  const pinned = await strict.call('list_catalog', { capabilityIdPrefix: null, parent: null, cursor: null, limit: 1, requestProviderScope: null, requiredStaticRevision: null, requiredStaticRevisionByProvider: Object.entries(staticRevisionByProvider).map(([key, value]) => ({ key, value })) });
  assert.equal(pinned.ok, true, JSON.stringify(pinned.error));
  const entries = await several.call('list_entry_points', { requiredStaticRevisionByProvider: { 'seed.http': staticRevisionByProvider['seed.http'] } });
  assert.equal(entries.ok, true, JSON.stringify(entries.error));
  const single = await open();
  for (const adapter of [createToolAdapter(graph.forProvider('seed.http')), createToolAdapter(single)]) {
    assert.match(adapter.instructions, /pin requiredStaticRevision to the staticRevision in the first result's meta, so every later call reads the same revision\./);
    const pinnedPerProvider = adapter.tools.filter((t) => t.inputSchema.properties.requiredStaticRevisionByProvider).map((t) => t.name);
    assert.deepEqual(pinnedPerProvider, ['resolve', 'resolve_selection']);
  }
  await single.close();
  await graph.close();
});

test('the adapter teaches the progressive walk in the tools it lists', async () => {
  const graph = await CapabilityGraph.open({ providers: [seedSource()], executor: lexicalExecutor() });
  const full = createToolAdapter(graph, { prefix: 'seed_', documentBodies: true, entryPoints: ['seed.http::route'] }).instructions;
  const order = ['seed_list_entry_points', 'seed_list_catalog', 'seed_match', 'seed_get_capabilities', 'seed_get_neighbors', 'seed_resolve_selection', 'seed_read_documents'];
  const at = order.map((n) => full.indexOf(`\`${n}\``));
  assert.ok(at.every((i) => i >= 0), full);
  assert.deepEqual([...at].sort((a, b) => a - b), at, full);
  assert.match(full, /requiredStaticRevision/);
  assert.match(full, /nextAction/);
  assert.match(full, /"seed\.http::route"/);
  const few = createToolAdapter(graph, { tools: ['list_catalog', 'get_capabilities'] }).instructions;
  assert.ok(!/get_neighbors|match|read_documents|resolve_selection/.test(few), few);
  assert.match(few, /`list_catalog`/);
  await graph.close();
});
