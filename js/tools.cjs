'use strict';
// The Tool Adapter (SPEC §9): the graph's verbs as protocol-neutral tools for agents. A tool
// maps its arguments onto one verb call; the verb alone validates them. Results and failures
// come back as { ok: true, result } or { ok: false, error } — call() never throws for a graph
// error. Tool metadata holds no capability data: there is no tool per capability.

const { GraphError, inputInvalid } = require('./errors.cjs');
const { parseQualifiedId, isGraph, isBound } = require('./graph.cjs');
const { toWireJson, refusedAtBound, isRefusedAtBound, ownValue, ARGUMENTS, NON_JSON_KEY } = require('./pure-json.cjs');

// --- schema fragments, written for a model -------------------------------------------------

// The engine's ID formats; `ID` is the pattern without its anchors.
const { idPatterns, neighborKinds } = require('./engine-tables.cjs');
const { id: ID_PATTERN, knowledgeId: KNOWLEDGE_ID_PATTERN } = idPatterns;
const ID = ID_PATTERN.slice(1, -1);
const QUALIFIED_PATTERN = `^${ID}::${ID}$`;

const providerId = { type: 'string', pattern: ID_PATTERN, description: 'Provider ID, e.g. "acme.billing".' };
const qualified = (what) => ({
  type: 'string',
  pattern: QUALIFIED_PATTERN,
  description: `${what}: a qualified capability ID "provider::capability", e.g. "acme.billing::invoice.create".`,
});
const local = (what) => ({
  type: 'string',
  pattern: `^${ID}(::${ID})?$`,
  description: `${what}: a capability ID of this provider (e.g. "invoice.create") or its qualified form.`,
});
const ids = (ref, max) => ({ type: 'array', items: ref, minItems: 1, maxItems: max, description: `1 to ${max} capabilities.` });
const limit = (max, what) => ({ type: 'integer', minimum: 1, description: `${what}; larger values are clamped to ${max}.` });
const cursor = { type: 'string', maxLength: 32768, description: 'The nextCursor of the previous page of the same query.' };
const revision = { type: 'string', description: 'Serve the call from this staticRevision (from an earlier result\'s meta).' };
const revisions = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: 'One staticRevision per provider the call names.',
};
const scope = { type: 'array', items: { type: 'string', pattern: ID_PATTERN }, description: 'Narrow the call to these providers.' };
const knowledgeIds = { type: 'array', items: { type: 'string', pattern: KNOWLEDGE_ID_PATTERN }, maxItems: 128 };
const strings = (description) => ({ type: 'array', items: { type: 'string' }, maxItems: 128, description });
const kinds = {
  type: 'array',
  items: { enum: [...neighborKinds] },
  uniqueItems: true,
  description: 'Relation groups to return (default: all eight).',
};

/** Output schemas name the top-level members a result always has. */
const output = (...required) => ({
  type: 'object',
  properties: Object.fromEntries(required.map((k) => [k, {}])),
  required,
});

// --- the tools ------------------------------------------------------------------------------

/**
 * Each tool: its verb, a description, its properties (`bound` ones replace the unbound ones on a
 * provider-bound graph; `unbound: true` drops a property there), what it needs, how its
 * arguments become the verb's, and documented examples.
 */
const TOOLS = [
  {
    name: 'list_providers',
    verb: 'listProviders',
    description: 'List the providers you may use, with their versions, specifications and static revisions.',
    properties: { requestProviderScope: scope, requiredStaticRevision: revision },
    output: output('items', 'meta'),
    examples: [{}, { requestProviderScope: ['acme.billing'] }],
    unboundOnly: true,
  },
  {
    name: 'get_provider',
    verb: 'getProvider',
    description: "Describe one provider and the first page of its specification documents' metadata.",
    properties: { providerId, requiredStaticRevision: revision },
    required: ['providerId'],
    target: 'providerId',
    boundDrops: ['providerId'],
    output: output('providerId', 'name', 'version', 'staticRevision', 'meta'),
    examples: [{ providerId: 'acme.billing' }],
  },
  {
    name: 'list_catalog',
    verb: 'listCatalog',
    description: 'Page through capabilities (ID, name, description, when to use), optionally by ID prefix or direct parent.',
    properties: {
      capabilityIdPrefix: { type: 'string', description: 'Only capability IDs starting with this.' },
      parent: qualified('Only direct children of this capability'),
      cursor,
      limit: limit(200, 'Rows per page (default 200)'),
      requestProviderScope: scope,
      requiredStaticRevision: revision,
    },
    bound: { parent: local('Only direct children of this capability') },
    output: output('items', 'meta'),
    examples: [{}, { limit: 20 }, { capabilityIdPrefix: 'invoice.' }],
  },
  {
    name: 'get_capabilities',
    verb: 'getCapabilities',
    description: 'Read the details of a few capabilities: text, examples, first relations of each kind and knowledge summaries.',
    properties: {
      ids: ids(qualified('Capability'), 20),
      neighborLimitPerKind: { type: 'integer', minimum: 0, description: 'Relations listed per kind (default 50); larger values are clamped to 100.' },
      knowledgeLimit: limit(100, 'Knowledge summaries per capability (default 20)'),
      knowledgeCursors: { type: 'object', additionalProperties: { type: 'string' }, description: 'Qualified ID → knowledge nextCursor.' },
      requestProviderScope: scope,
      requiredStaticRevision: revision,
    },
    bound: { ids: ids(local('Capability'), 20) },
    required: ['ids'],
    target: 'ids',
    output: output('results', 'meta'),
    examples: [{ ids: ['acme.billing::invoice.create'] }],
  },
  {
    name: 'get_neighbors',
    verb: 'getNeighbors',
    description: 'Browse one capability\'s relations (parents, children, specializations, related, requires and their inverses) without selecting them.',
    properties: {
      id: qualified('Capability'),
      kinds,
      limitPerKind: limit(100, 'Rows per group (default 50)'),
      cursors: { type: 'object', additionalProperties: { type: 'string' }, description: 'Kind → that group\'s nextCursor.' },
      requestProviderScope: scope,
      requiredStaticRevision: revision,
    },
    bound: { id: local('Capability') },
    required: ['id'],
    target: 'id',
    output: output('id', 'groups', 'meta'),
    examples: [{ id: 'acme.billing::invoice', kinds: ['children'] }],
  },
  {
    name: 'resolve',
    verb: 'resolve',
    description: 'Return the full records of capabilities plus everything they require (the requires closure).',
    properties: { ids: ids(qualified('Capability'), 32), requestProviderScope: scope, requiredStaticRevision: revision, requiredStaticRevisionByProvider: revisions },
    bound: { ids: ids(local('Capability'), 32) },
    required: ['ids'],
    output: output('items', 'requested', 'added', 'requiresEdges', 'meta'),
    examples: [{ ids: ['acme.billing::invoice.create'] }],
  },
  {
    name: 'resolve_selection',
    verb: 'resolveSelection',
    description: 'Confirm a selection: the selected capabilities plus what they require, with the reason each was added.',
    properties: { selected: ids(qualified('Capability'), 32), requestProviderScope: scope, requiredStaticRevision: revision, requiredStaticRevisionByProvider: revisions },
    bound: { selected: ids(local('Capability'), 32) },
    required: ['selected'],
    output: output('requested', 'resolved', 'added', 'requiresEdges', 'reasons', 'meta'),
    examples: [{ selected: ['acme.billing::invoice.create'] }],
  },
  {
    name: 'match',
    verb: 'match',
    description: "Find the capabilities that fit a user's intent with the configured model executor.",
    properties: {
      intent: { type: 'string', minLength: 1, maxLength: 4096, description: 'What the user wants to do.' },
      context: {
        type: 'object',
        maxProperties: 32,
        additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
        description: 'Flat facts for the model (scalar values only).',
      },
      limit: limit(20, 'Most matches (default 5)'),
      timeoutMs: { type: 'integer', minimum: 1, description: 'Deadline in milliseconds (default 60000); larger values are clamped to 600000.' },
      requestProviderScope: scope,
      requiredStaticRevision: revision,
    },
    required: ['intent'],
    signal: true,
    output: output('status', 'matches', 'meta'),
    examples: [{ intent: 'send the customer a reminder for an unpaid invoice' }],
  },
  {
    name: 'list_knowledge_members',
    verb: 'listKnowledgeMembers',
    description: "Page through the documents of one of a capability's knowledge collections (metadata only).",
    properties: {
      capability: qualified('Capability'),
      collectionId: { type: 'string', pattern: KNOWLEDGE_ID_PATTERN },
      cursor,
      limit: limit(100, 'Documents per page (default 20)'),
      requestProviderScope: scope,
      requiredStaticRevision: revision,
    },
    bound: { capability: local('Capability') },
    required: ['capability', 'collectionId'],
    output: output('id', 'collectionId', 'items', 'completeness', 'meta'),
    examples: [{ capability: 'acme.billing::invoice', collectionId: 'GUIDES' }],
  },
  {
    name: 'list_specification_documents',
    verb: 'listSpecificationDocuments',
    description: "Page through a provider's specification documents (metadata only).",
    properties: { providerId, cursor, limit: limit(100, 'Documents per page (default 20)'), requestProviderScope: scope, requiredStaticRevision: revision },
    required: ['providerId'],
    boundDrops: ['providerId'],
    output: output('providerId', 'items', 'completeness', 'meta'),
    examples: [{ providerId: 'acme.billing' }],
  },
  {
    name: 'read_documents',
    verb: 'readDocuments',
    description: 'Read the knowledge documents of selected capabilities, whole (collection members only when named).',
    properties: {
      selected: ids(qualified('Capability'), 32),
      knowledgeIds,
      roles: strings('Document roles, e.g. "guide".'),
      locales: strings('BCP 47 tags, e.g. "en".'),
      requestProviderScope: scope,
      requiredStaticRevision: revision,
    },
    bound: { selected: ids(local('Capability'), 32) },
    required: ['selected'],
    body: true,
    output: output('results', 'knowledgeState', 'meta'),
    examples: [{ selected: ['acme.billing::invoice.create'], roles: ['guide'] }],
  },
  {
    name: 'read_document_page',
    verb: 'readDocumentPage',
    description: 'Read one page (up to 32 KiB) of a capability document of any size.',
    properties: {
      capability: qualified('Capability'),
      knowledgeId: { type: 'string', pattern: KNOWLEDGE_ID_PATTERN },
      startOffset: { type: 'integer', minimum: 0, description: 'Byte offset; not together with cursor.' },
      maxBytes: { type: 'integer', minimum: 1, maximum: 32768 },
      cursor,
      requestProviderScope: scope,
      requiredStaticRevision: revision,
    },
    bound: { capability: local('Capability') },
    required: ['capability', 'knowledgeId'],
    body: true,
    signal: true,
    output: output('knowledgeId', 'text', 'startOffset', 'endOffset', 'totalBytes', 'hasMore', 'meta'),
    examples: [{ capability: 'acme.billing::invoice.create', knowledgeId: 'GUIDE-1' }],
  },
  {
    name: 'read_specification',
    verb: 'readSpecification',
    description: "Read a provider's specification documents, whole.",
    properties: {
      providerId,
      knowledgeIds,
      roles: strings('Document roles.'),
      locales: strings('BCP 47 tags.'),
      requestProviderScope: scope,
      requiredStaticRevision: revision,
    },
    required: ['providerId'],
    boundDrops: ['providerId'],
    body: true,
    output: output('results', 'knowledgeState', 'meta'),
    examples: [{ providerId: 'acme.billing' }],
  },
  {
    name: 'read_specification_page',
    verb: 'readSpecificationPage',
    description: 'Read one page (up to 32 KiB) of a provider specification document.',
    properties: {
      providerId,
      knowledgeId: { type: 'string', pattern: KNOWLEDGE_ID_PATTERN },
      startOffset: { type: 'integer', minimum: 0 },
      maxBytes: { type: 'integer', minimum: 1, maximum: 32768 },
      cursor,
      requestProviderScope: scope,
      requiredStaticRevision: revision,
    },
    required: ['providerId', 'knowledgeId'],
    boundDrops: ['providerId'],
    body: true,
    signal: true,
    output: output('providerId', 'knowledgeId', 'text', 'hasMore', 'meta'),
    examples: [{ providerId: 'acme.billing', knowledgeId: 'SPEC-1' }],
  },
  {
    name: 'retrieve_capabilities',
    verb: 'retrieveCapabilities',
    description: "Recall capabilities for a text with the host's retriever (an explicit search, not a selection).",
    properties: { text: { type: 'string', minLength: 1 }, limit: limit(20, 'Most candidates (default 20)'), requestProviderScope: scope, requiredStaticRevision: revision },
    required: ['text'],
    output: output('items', 'meta'),
    examples: [{ text: 'refund a card payment' }],
  },
  {
    name: 'query_knowledge',
    verb: 'queryKnowledge',
    description: "Search the documents of selected capabilities with the host's knowledge retriever (returns snippets).",
    properties: {
      text: { type: 'string', minLength: 1 },
      selected: ids(qualified('Capability'), 32),
      knowledgeIds,
      roles: strings('Document roles.'),
      locales: strings('BCP 47 tags.'),
      limit: limit(8, 'Most hits (default 8)'),
      requestProviderScope: scope,
      requiredStaticRevision: revision,
    },
    bound: { selected: ids(local('Capability'), 32) },
    required: ['text', 'selected'],
    body: true,
    output: output('items', 'meta'),
    examples: [{ text: 'partial refunds', selected: ['acme.billing::refund'] }],
  },
  {
    name: 'query_runtime',
    verb: 'queryRuntime',
    description: 'Observe running instances of a provider in one project and environment.',
    properties: {
      project: { type: 'string', minLength: 1 },
      environment: { type: 'string', minLength: 1 },
      instanceOf: qualified('Only instances of this capability'),
      instanceId: { type: 'string', minLength: 1 },
      cursor,
      limit: limit(100, 'Instances per page (default 50)'),
      requiredRuntimeRevision: { type: 'string' },
      requestProviderScope: scope,
      requiredStaticRevision: revision,
    },
    bound: { instanceOf: local('Only instances of this capability') },
    required: ['project', 'environment'],
    output: output('items', 'meta'),
    examples: [{ project: 'shop', environment: 'staging' }],
  },
];

const ENTRY_POINTS = {
  name: 'list_entry_points',
  description: "Start here: the provider's main capabilities, with the static revision to pin the next calls to.",
  properties: { requiredStaticRevision: revision },
  output: output('items', 'meta'),
  examples: [{}],
};

const TOOL_NAME = /^[A-Za-z0-9_-]{0,64}$/;

function fail(field) {
  throw inputInvalid(field);
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v));
}

/**
 * `value` as plain JSON, read once by the pure-JSON walk: a getter or a Proxy is never invoked,
 * and what is not plain JSON becomes a marker object that no check here accepts.
 */
const plain = (value) => JSON.parse(toWireJson(value));

/**
 * A call's arguments, read once like `plain` within the arguments' bound; past it, a stand-in
 * the verb's own walk prints as the same refusal, so the engine answers the verb's error.
 */
function plainArguments(value) {
  const text = toWireJson(value, undefined, ARGUMENTS);
  return refusedAtBound(text) ?? JSON.parse(text);
}
const isMarker = (v) => isPlainObject(v) && Object.hasOwn(v, NON_JSON_KEY);

/** The `signal` of a tool call's options (`{ signal?: AbortSignal }`), read without invoking anything. */
function callSignal(options) {
  if (options === undefined) return undefined;
  const signal = ownValue(options, 'signal');
  if (signal === undefined) fail('options');
  return signal.value;
}

/** The input schema of a tool as the graph (bound or not) takes it. */
function inputSchema(tool, bound) {
  const properties = { ...tool.properties, ...(bound ? tool.bound : {}) };
  if (bound) {
    delete properties.requestProviderScope;
    for (const p of tool.boundDrops ?? []) delete properties[p];
  }
  const required = (tool.required ?? []).filter((r) => r in properties);
  return {
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    additionalProperties: false,
    examples: tool.examples,
  };
}

/** Splits `{ [key]: target, ...rest }` into the verb's two arguments; anything else goes to the
 *  verb whole, which rejects it. */
function split(args, key) {
  if (!isPlainObject(args) || !Object.hasOwn(args, key)) return [undefined, args];
  const { [key]: target, ...rest } = args;
  return [target, rest];
}

/**
 * @param graph a CapabilityGraph or a BoundProviderGraph
 * @param options { prefix = '', tools?, documentBodies = false, entryPoints? }
 */
function createToolAdapter(graph, options = {}) {
  options = plain(options);
  if (!isPlainObject(options) || isMarker(options)) fail('options');
  const { prefix = '', tools: only, documentBodies = false, entryPoints } = options;
  for (const key of Object.keys(options)) {
    if (!['prefix', 'tools', 'documentBodies', 'entryPoints'].includes(key)) fail(key);
  }
  if (typeof prefix !== 'string' || !TOOL_NAME.test(prefix)) fail('prefix');
  if (typeof documentBodies !== 'boolean') fail('documentBodies');
  const bound = isBound(graph);
  if (!bound && !isGraph(graph)) fail('graph');
  let entries;
  if (entryPoints !== undefined) {
    if (!Array.isArray(entryPoints) || entryPoints.length === 0) fail('entryPoints');
    entries = entryPoints.map((id, i) => {
      try {
        parseQualifiedId(id);
      } catch {
        fail(`entryPoints[${i}]`);
      }
      return id;
    });
  }
  let available = TOOLS.filter((t) => !(bound && t.unboundOnly));
  if (entries) available = [...available, ENTRY_POINTS];
  if (only !== undefined) {
    if (!Array.isArray(only)) fail('tools');
    for (const name of only) if (!available.some((t) => t.name === name)) fail('tools');
    available = available.filter((t) => only.includes(t.name));
  }

  const byName = new Map(available.map((t) => [prefix + t.name, t]));
  const tools = available.map((t) => ({
    name: prefix + t.name,
    description: t.description,
    inputSchema: inputSchema(t, bound),
    outputSchema: t.output,
  }));

  async function run(tool, args, signal) {
    if (tool.body && !documentBodies) {
      throw new GraphError({ code: 'CG_ACCESS_DENIED', phase: 'document' });
    }
    // Refused at the walk's bound: the verb's engine call says so.
    if (isRefusedAtBound(args)) return graph[tool === ENTRY_POINTS ? 'getCapabilities' : tool.verb](args);
    if (tool === ENTRY_POINTS) return listEntryPoints(graph, entries, args);
    if (bound && tool.boundDrops?.length) {
      // The provider of a bound graph is its binding: the argument does not exist there.
      if (isPlainObject(args) && tool.boundDrops.some((p) => Object.hasOwn(args, p))) fail(tool.boundDrops[0]);
    }
    if (tool.verb === 'getProvider') return bound ? graph.getProvider(args) : graph.getProvider(...split(args, 'providerId'));
    if (tool.target) return graph[tool.verb](...split(args, tool.target));
    if (tool.signal && signal !== undefined && isPlainObject(args)) return graph[tool.verb]({ ...args, signal });
    return graph[tool.verb](args);
  }

  /** Resolves { ok: true, result } or { ok: false, error }; never rejects for a graph error. */
  async function call(name, args, callOptions) {
    try {
      const tool = byName.get(name);
      if (tool === undefined) throw inputInvalid('name');
      const signal = callSignal(callOptions);
      return { ok: true, result: await run(tool, args === undefined ? {} : plainArguments(args), signal) };
    } catch (error) {
      const graphError = error instanceof GraphError ? error : new GraphError({ code: 'CG_INTERNAL' });
      return { ok: false, error: graphError.toJSON() };
    }
  }

  return Object.freeze({ tools: Object.freeze(tools), call, has: (name) => byName.has(name) });
}

/** The provider's chosen entry points: summaries only, and the revision to pin. */
async function listEntryPoints(graph, entries, args) {
  if (!isPlainObject(args)) fail('$');
  for (const key of Object.keys(args)) if (key !== 'requiredStaticRevision') fail(key);
  const details = await graph.getCapabilities(entries, { ...args, neighborLimitPerKind: 0, knowledgeLimit: 1 });
  const items = details.results.map((slot) => {
    if (!slot.ok) return slot;
    const { id, qualifiedId, name, description, whenToUse, distinction, staticRevision } = slot.value;
    const value = { id, qualifiedId, name, description, whenToUse, staticRevision };
    if (distinction !== undefined) value.distinction = distinction;
    return { inputIndex: slot.inputIndex, ok: true, value };
  });
  const { view, budgets, ...meta } = details.meta;
  return { items, meta: { ...meta, completeness: items.every((s) => s.ok) ? 'complete' : 'partial' } };
}

module.exports = { createToolAdapter };
