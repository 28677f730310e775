'use strict';
// The Tool Adapter: the graph's verbs as protocol-neutral tools for agents. A tool
// maps its arguments onto one verb call; the verb alone validates them. Results and failures
// come back as { ok: true, result } or { ok: false, error } — call() never throws for a graph
// error. Tool metadata holds no capability data: there is no tool per capability.

const { GraphError, inputInvalid } = require('../errors.cjs');
const { parseQualifiedId, isGraph, isBound, internal } = require('../graph/graph.cjs');
const { toWireJson, refusedAtBound, isRefusedAtBound, ownValue, ARGUMENTS, NON_JSON_KEY } = require('../pure-json.cjs');

// --- schema fragments, written for a model -------------------------------------------------

// The engine's ID formats; `ID` is the pattern without its anchors.
const { idPatterns, neighborKinds } = require('../engine-tables.cjs');
const { id: ID_PATTERN, knowledgeId: KNOWLEDGE_ID_PATTERN } = idPatterns;
const ID = ID_PATTERN.slice(1, -1);
const QUALIFIED_PATTERN = `^${ID}::${ID}$`;

/** A map from keys to `value` (an open object in the JSON Schema dialect, `{ key, value }`
 *  entries in the strict one). */
const MAP_KEY = Symbol('map key');
const map = (key, value, description, extra = {}) => ({
  type: 'object',
  additionalProperties: value,
  description,
  [MAP_KEY]: key,
  ...extra,
});

const limit = (max, what) => ({ type: 'integer', minimum: 1, description: `${what}; larger values are clamped to ${max}.` });
const cursor = { type: 'string', maxLength: 32768, description: 'The nextCursor of the previous page of the same query.' };
/** Where a page read starts and how long its page is: by offset, or by the previous page's cursor. */
const pageRange = {
  startOffset: { type: 'integer', minimum: 0, description: 'Byte offset to start at (default 0); not together with cursor.' },
  maxBytes: { type: 'integer', minimum: 1, maximum: 32768, description: 'Bytes per page, 1 to 32768 (default 32768).' },
  cursor,
};
const revision = {
  type: 'string',
  description: "Serve the call from this staticRevision (from an earlier result's meta), so that every call of a walk reads the same revision.",
};
const knowledgeId = (what) => ({ type: 'string', pattern: KNOWLEDGE_ID_PATTERN, description: what });
const knowledgeIds = {
  type: 'array',
  items: knowledgeId('A knowledge ID.'),
  maxItems: 128,
  description: 'Only these documents (knowledge IDs; collection members are read only when named).',
};
const strings = (item, description) => ({ type: 'array', items: { type: 'string', description: item }, maxItems: 128, description });
const kinds = {
  type: 'array',
  items: { type: 'string', enum: [...neighborKinds], description: 'A relation group.' },
  uniqueItems: true,
  description: `Relation groups to return (default: all ${neighborKinds.length}).`,
};

/** Output schemas name the top-level members a result always has. */
const output = (...required) => ({
  type: 'object',
  properties: Object.fromEntries(required.map((k) => [k, {}])),
  required,
});

/**
 * What the schemas and examples cite, taken from the graph being served (its entry points or
 * first catalog rows): `provider`, `capability` (qualified, or local on a bound graph) and the
 * knowledge IDs found there. `bound` is whether the graph is bound to one provider.
 */
function fragments(ex, bound) {
  const providerId = { type: 'string', pattern: ID_PATTERN, description: `Provider ID, e.g. "${ex.provider}".` };
  const capability = (what) =>
    bound
      ? { type: 'string', pattern: `^${ID}(::${ID})?$`, description: `${what}: a capability ID of this provider (e.g. "${ex.local}") or its qualified form.` }
      : { type: 'string', pattern: QUALIFIED_PATTERN, description: `${what}: a qualified capability ID "provider::capability", e.g. "${ex.qualified}".` };
  const ids = (what, max) => ({ type: 'array', items: capability(what), minItems: 1, maxItems: max, description: `1 to ${max} capabilities.` });
  const scope = {
    type: 'array',
    items: { type: 'string', pattern: ID_PATTERN, description: 'A provider ID.' },
    description: 'Narrow the call to these providers.',
  };
  const revisions = map(
    { type: 'string', pattern: ID_PATTERN, description: 'A provider ID.' },
    { type: 'string', description: 'That provider\'s staticRevision.' },
    'One staticRevision per provider the call names.',
  );
  return { providerId, capability, ids, scope, revisions };
}

// --- the tools ------------------------------------------------------------------------------

/**
 * Each tool: its verb, a human title, a description, its properties, what it needs (`body`:
 * document bodies; `host`: the verb served by a host component), how its arguments become the
 * verb's, and documented examples — all written for the graph `ex` describes.
 */
function toolTable(ex, bound) {
  const { providerId, capability, ids, scope, revisions } = fragments(ex, bound);
  const cap = bound ? ex.local : ex.qualified;
  const pins = { requestProviderScope: scope, requiredStaticRevision: revision };
  return [
    {
      name: 'list_providers',
      verb: 'listProviders',
      title: 'List providers',
      description: 'List the providers you may use, with their versions, specifications and static revisions.',
      properties: pins,
      output: output('items', 'meta'),
      examples: [{}, { requestProviderScope: [ex.provider] }],
      unboundOnly: true,
    },
    {
      name: 'get_provider',
      verb: 'getProvider',
      title: 'Describe a provider',
      description: "Describe one provider and the first page of its specification documents' metadata.",
      properties: { providerId, requiredStaticRevision: revision },
      required: ['providerId'],
      target: 'providerId',
      boundDrops: ['providerId'],
      output: output('providerId', 'name', 'version', 'staticRevision', 'meta'),
      examples: [{ providerId: ex.provider }],
    },
    {
      name: 'list_catalog',
      verb: 'listCatalog',
      title: 'Browse the capability catalog',
      description: 'Page through capabilities (ID, name, description, when to use), optionally by ID prefix or direct parent.',
      properties: {
        capabilityIdPrefix: { type: 'string', description: `Only capability IDs starting with this, e.g. "${ex.prefix}".` },
        parent: capability('Only direct children of this capability'),
        cursor,
        limit: limit(200, 'Rows per page (default 200)'),
        ...pins,
      },
      output: output('items', 'meta'),
      examples: [{}, { limit: 20 }, { parent: cap }, { capabilityIdPrefix: ex.prefix }],
    },
    {
      name: 'get_capabilities',
      verb: 'getCapabilities',
      title: 'Read capability details',
      description: 'Read the details of a few capabilities: text, examples, first relations of each kind and knowledge summaries.',
      properties: {
        ids: ids('Capability', 20),
        neighborLimitPerKind: { type: 'integer', minimum: 0, description: 'Relations listed per kind (default 50); larger values are clamped to 100.' },
        knowledgeLimit: limit(100, 'Knowledge summaries per capability (default 20)'),
        knowledgeCursors: map(capability('Capability'), { type: 'string', description: 'Its knowledge nextCursor.' }, 'The knowledge nextCursor of a capability, per capability.'),
        ...pins,
      },
      required: ['ids'],
      target: 'ids',
      output: output('results', 'meta'),
      examples: [{ ids: [cap] }, { ids: [cap], knowledgeLimit: 5 }],
    },
    {
      name: 'get_neighbors',
      verb: 'getNeighbors',
      title: "Browse a capability's relations",
      description: "Browse one capability's relations (parents, children, specializations, related, requires and their inverses) without selecting them.",
      properties: {
        id: capability('Capability'),
        kinds,
        limitPerKind: limit(100, 'Rows per group (default 50)'),
        cursors: map({ type: 'string', enum: [...neighborKinds], description: 'A relation group.' }, { type: 'string', description: "That group's nextCursor." }, "A relation group's nextCursor, per group."),
        ...pins,
      },
      required: ['id'],
      target: 'id',
      output: output('id', 'groups', 'meta'),
      examples: [{ id: cap, kinds: ['children'] }],
    },
    {
      name: 'resolve',
      verb: 'resolve',
      title: 'Resolve capabilities with what they require',
      description: 'Return the full records of capabilities plus everything they require (the requires closure).',
      properties: { ids: ids('Capability', 32), ...pins, requiredStaticRevisionByProvider: revisions },
      required: ['ids'],
      output: output('items', 'requested', 'added', 'requiresEdges', 'meta'),
      examples: [{ ids: [cap] }],
    },
    {
      name: 'resolve_selection',
      verb: 'resolveSelection',
      title: 'Confirm a selection',
      description: 'Confirm a selection: the selected capabilities plus what they require, with the reason each was added.',
      properties: { selected: ids('Capability', 32), ...pins, requiredStaticRevisionByProvider: revisions },
      required: ['selected'],
      output: output('requested', 'resolved', 'added', 'requiresEdges', 'reasons', 'meta'),
      examples: [{ selected: [cap] }, { selected: [cap], requiredStaticRevisionByProvider: { [ex.provider]: ex.revision } }],
    },
    {
      name: 'match',
      verb: 'match',
      title: 'Match an intent to capabilities',
      description: "Find the capabilities that fit a user's intent with the configured executor.",
      properties: {
        intent: { type: 'string', minLength: 1, maxLength: 4096, description: 'What the user wants to do, in their words.' },
        context: map(
          { type: 'string', description: 'The fact\'s name.' },
          { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }], description: 'Its value: a string, number, boolean or null.' },
          'Flat facts for the model (scalar values only).',
          { maxProperties: 32 },
        ),
        limit: limit(20, 'Most matches (default 5)'),
        timeoutMs: { type: 'integer', minimum: 1, description: 'Deadline in milliseconds (default 60000); larger values are clamped to 600000.' },
        ...pins,
      },
      required: ['intent'],
      signal: true,
      host: 'match',
      output: output('status', 'matches', 'meta'),
      examples: [{ intent: ex.intent }, { intent: ex.intent, context: { locale: 'en' }, limit: 3 }],
    },
    {
      name: 'list_knowledge_members',
      verb: 'listKnowledgeMembers',
      title: 'List a knowledge collection',
      description: "Page through the documents of one of a capability's knowledge collections (metadata only).",
      properties: {
        capability: capability('Capability'),
        collectionId: knowledgeId(`The collection's knowledge ID, e.g. "${ex.collection.knowledgeId}".`),
        cursor,
        limit: limit(100, 'Documents per page (default 20)'),
        ...pins,
      },
      required: ['capability', 'collectionId'],
      output: output('id', 'collectionId', 'items', 'completeness', 'meta'),
      examples: [{ capability: ex.collection.capability, collectionId: ex.collection.knowledgeId }],
    },
    {
      name: 'list_specification_documents',
      verb: 'listSpecificationDocuments',
      title: 'List specification documents',
      description: "Page through a provider's specification documents (metadata only).",
      properties: { providerId, cursor, limit: limit(100, 'Documents per page (default 20)'), ...pins },
      required: ['providerId'],
      boundDrops: ['providerId'],
      output: output('providerId', 'items', 'completeness', 'meta'),
      examples: [{ providerId: ex.provider }],
    },
    {
      name: 'read_documents',
      verb: 'readDocuments',
      title: 'Read capability documents',
      description: 'Read the knowledge documents of selected capabilities, whole (collection members only when named). Returns document bodies, read from the provider\'s files or through the host\'s readers.',
      properties: {
        selected: ids('Capability', 32),
        knowledgeIds,
        roles: strings('A document role.', 'Only documents of these roles, e.g. "guide".'),
        locales: strings('A BCP 47 tag.', 'Only documents in these languages (BCP 47 tags, e.g. "en").'),
        ...pins,
      },
      required: ['selected'],
      body: true,
      output: output('results', 'knowledgeState', 'meta'),
      examples: [{ selected: [cap] }, { selected: [ex.document.capability], knowledgeIds: [ex.document.knowledgeId] }],
    },
    {
      name: 'read_document_page',
      verb: 'readDocumentPage',
      title: 'Read a page of a capability document',
      description: 'Read one page (up to 32 KiB) of a capability document of any size. Returns document text, read from the provider\'s files or through the host\'s readers.',
      properties: {
        capability: capability('Capability'),
        knowledgeId: knowledgeId(`The document's knowledge ID, e.g. "${ex.document.knowledgeId}".`),
        ...pageRange,
        ...pins,
      },
      required: ['capability', 'knowledgeId'],
      body: true,
      signal: true,
      output: output('knowledgeId', 'text', 'startOffset', 'endOffset', 'totalBytes', 'hasMore', 'meta'),
      examples: [{ capability: ex.document.capability, knowledgeId: ex.document.knowledgeId }],
    },
    {
      name: 'read_specification',
      verb: 'readSpecification',
      title: "Read a provider's specification",
      description: "Read a provider's specification documents, whole. Returns document bodies, read from the provider's files or through the host's readers.",
      properties: {
        providerId,
        knowledgeIds,
        roles: strings('A document role.', 'Only documents of these roles.'),
        locales: strings('A BCP 47 tag.', 'Only documents in these languages (BCP 47 tags).'),
        ...pins,
      },
      required: ['providerId'],
      boundDrops: ['providerId'],
      body: true,
      output: output('results', 'knowledgeState', 'meta'),
      examples: [{ providerId: ex.provider }],
    },
    {
      name: 'read_specification_page',
      verb: 'readSpecificationPage',
      title: 'Read a page of a specification document',
      description: "Read one page (up to 32 KiB) of a provider specification document. Returns document text, read from the provider's files or through the host's readers.",
      properties: {
        providerId,
        knowledgeId: knowledgeId(`The document's knowledge ID, e.g. "${ex.specification}".`),
        ...pageRange,
        ...pins,
      },
      required: ['providerId', 'knowledgeId'],
      boundDrops: ['providerId'],
      body: true,
      signal: true,
      output: output('providerId', 'knowledgeId', 'text', 'hasMore', 'meta'),
      examples: [{ providerId: ex.provider, knowledgeId: ex.specification }],
    },
    {
      name: 'retrieve_capabilities',
      verb: 'retrieveCapabilities',
      title: "Search capabilities with the host's retriever",
      description: "Recall capabilities for a text with the host's retriever (an explicit search, not a selection).",
      properties: { text: { type: 'string', minLength: 1, description: 'What to search for.' }, limit: limit(20, 'Most candidates (default 20)'), ...pins },
      required: ['text'],
      host: 'retrieveCapabilities',
      output: output('items', 'meta'),
      examples: [{ text: ex.intent }],
    },
    {
      name: 'query_knowledge',
      verb: 'queryKnowledge',
      title: 'Search capability documents',
      description: "Search the documents of selected capabilities with the host's knowledge retriever (returns snippets of document bodies).",
      properties: {
        text: { type: 'string', minLength: 1, description: 'What to search for.' },
        selected: ids('Capability', 32),
        knowledgeIds,
        roles: strings('A document role.', 'Only documents of these roles.'),
        locales: strings('A BCP 47 tag.', 'Only documents in these languages (BCP 47 tags).'),
        limit: limit(8, 'Most hits (default 8)'),
        ...pins,
      },
      required: ['text', 'selected'],
      body: true,
      host: 'queryKnowledge',
      output: output('items', 'meta'),
      examples: [{ text: ex.intent, selected: [cap] }],
    },
    {
      name: 'query_runtime',
      verb: 'queryRuntime',
      title: 'Observe running instances',
      description: "Observe running instances of a provider in one project and environment, through the host's runtime adapter.",
      properties: {
        project: { type: 'string', minLength: 1, description: 'The project, as the runtime names it.' },
        environment: { type: 'string', minLength: 1, description: 'The environment, e.g. "staging".' },
        instanceOf: capability('Only instances of this capability'),
        instanceId: { type: 'string', minLength: 1, description: 'Only the instance with this ID.' },
        cursor,
        limit: limit(100, 'Instances per page (default 50)'),
        requiredRuntimeRevision: { type: 'string', description: "Serve the page from this runtimeRevision (from an earlier page's meta)." },
        ...pins,
      },
      required: ['project', 'environment'],
      host: 'queryRuntime',
      output: output('items', 'meta'),
      examples: [{ project: 'shop', environment: 'staging' }],
    },
  ];
}

const ENTRY_POINTS = {
  name: 'list_entry_points',
  title: 'Start here: the main capabilities',
  description: "Start here: the provider's main capabilities, with the static revision to pin the next calls to.",
  properties: { requiredStaticRevision: revision },
  output: output('items', 'meta'),
  examples: [{}],
};

/** What every tool is: it reads and changes nothing, so a repeated call has no further effect. */
const ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/**
 * MCP's hints for `tool`: its world is open when its answer comes from host code rather than
 * the graph alone (the host's retrievers and runtime adapters always; `match` with the host's
 * executor; document bodies when the host's readers read them). `fromHost` is the engine's say.
 */
function annotationsOf(tool, fromHost) {
  const open = tool.host === 'match' ? fromHost.match : tool.host !== undefined || (tool.body === true && fromHost.documents);
  return { ...ANNOTATIONS, openWorldHint: open };
}

/** What `match` says it runs on: the engine's own executor, the host's, or whichever is set. */
function matchDescription(hostVerbs) {
  const what = "Find the capabilities that fit a user's intent";
  if (!hostVerbs.match) return `${what} with the configured executor.`;
  return hostVerbs.fromHost.match
    ? `${what} with the host's executor (its answers come from host code, such as a model).`
    : `${what} with the built-in executor (it ranks the graph's own text).`;
}

// --- the strict dialect ---------------------------------------------------------------------

/** Keywords strict function calling refuses (OpenAI, Anthropic and Gemini each refuse some);
 *  a limit among them is said in the description instead. */
const REFUSED = {
  minLength: (n) => (n === 1 ? 'Not empty' : `At least ${n} characters`),
  maxLength: (n) => `at most ${n} characters`,
  minimum: (n) => `at least ${n}`,
  maximum: (n) => `at most ${n}`,
  minItems: (n) => `at least ${n} item${n === 1 ? '' : 's'}`,
  maxItems: (n) => `at most ${n} items`,
  maxProperties: (n) => `at most ${n} entries`,
  uniqueItems: () => 'no duplicates',
  pattern: () => undefined,
  format: () => undefined,
  examples: () => undefined,
  default: () => undefined,
};

/** `description` with the limits of `schema` that the strict dialect drops, unless it says them. */
function withLimits(schema) {
  const said = (schema.description ?? '').toLowerCase();
  const limits = Object.entries(REFUSED)
    .filter(([key]) => schema[key] !== undefined)
    .map(([key, text]) => [text(schema[key]), schema[key]])
    .filter(([text, value]) => text !== undefined && !(typeof value === 'number' && said.includes(String(value))) && !said.includes(text.toLowerCase()));
  if (limits.length === 0) return schema.description;
  const sentence = limits.map(([text]) => text).join('; ');
  return `${schema.description ?? ''} ${sentence[0].toUpperCase()}${sentence.slice(1)}.`.trim();
}

/** `schema` in the strict dialect; `nullable` adds `null` to what it accepts. */
function strict(schema, nullable = false) {
  if (schema[MAP_KEY]) {
    const entry = {
      type: 'object',
      properties: { key: strict(schema[MAP_KEY]), value: strict(schema.additionalProperties) },
      required: ['key', 'value'],
      additionalProperties: false,
      description: 'One entry.',
    };
    const description = `${withLimits(schema)} Given as a list of { key, value } entries, each key once.`;
    return { type: nullable ? ['array', 'null'] : 'array', items: entry, description };
  }
  const out = {};
  if (schema.anyOf) {
    out.anyOf = schema.anyOf.map((s) => strict(s));
    if (nullable && !schema.anyOf.some((s) => s.type === 'null')) out.anyOf.push({ type: 'null' });
  } else if (schema.type !== undefined) {
    out.type = nullable ? [schema.type, 'null'] : schema.type;
  }
  if (schema.enum) out.enum = nullable ? [...schema.enum, null] : [...schema.enum];
  if (schema.items) out.items = strict(schema.items);
  if (schema.properties) Object.assign(out, strictObject(schema.properties, schema.required ?? []));
  const description = withLimits(schema);
  if (description !== undefined) out.description = description;
  return out;
}

/** An object's members in the strict dialect: every one required, the optional ones nullable. */
function strictObject(properties, required) {
  return {
    properties: Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, strict(s, !required.includes(k))])),
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

/** A documented example in the strict dialect: every property present, maps as entries. */
function strictExample(example, properties) {
  return Object.fromEntries(
    Object.keys(properties).map((k) => {
      const value = example[k];
      if (value === undefined) return [k, null];
      if (properties[k][MAP_KEY]) return [k, Object.entries(value).map(([key, v]) => ({ key, value: v }))];
      return [k, value];
    }),
  );
}

/** The JSON Schema dialect's schema as plain JSON (the map marker is not part of it). */
const published = (schema) => JSON.parse(JSON.stringify(schema));

/** The tool-name rule of OpenAI, Anthropic and Gemini alike, checked on each prefixed name. */
const TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
const DIALECTS = ['json-schema', 'strict'];

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

/** The properties of a tool as the graph (bound or not) takes them. */
function toolProperties(tool, bound) {
  const properties = { ...tool.properties };
  if (bound) {
    delete properties.requestProviderScope;
    for (const p of tool.boundDrops ?? []) delete properties[p];
  }
  return properties;
}

/** A documented example as the graph (bound or not) takes it. */
function boundExample(example, properties) {
  return Object.fromEntries(Object.entries(example).filter(([k]) => k in properties));
}

/** The input schema and examples of a tool in `dialect`. */
function inputSchema(tool, bound, dialect) {
  const properties = toolProperties(tool, bound);
  const required = (tool.required ?? []).filter((r) => r in properties);
  const examples = tool.examples.map((e) => boundExample(e, properties));
  if (dialect === 'strict') {
    return { schema: { type: 'object', ...strictObject(properties, required) }, examples: examples.map((e) => strictExample(e, properties)) };
  }
  const schema = {
    type: 'object',
    properties: published(properties),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
    examples,
  };
  return { schema, examples };
}

/** Splits `{ [key]: target, ...rest }` into the verb's two arguments; anything else goes to the
 *  verb whole, which rejects it. */
function split(args, key) {
  if (!isPlainObject(args) || !Object.hasOwn(args, key)) return [undefined, args];
  const { [key]: target, ...rest } = args;
  return [target, rest];
}

/**
 * Strict-dialect arguments as the verb takes them: a `null` optional argument is omitted, and a
 * map given as `{ key, value }` entries becomes the object. Anything else goes to the verb as
 * it is, which judges it.
 */
function fromStrict(args, properties, required) {
  if (!isPlainObject(args)) return args;
  const out = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === null && key in properties && !required.includes(key)) continue;
    if (properties[key]?.[MAP_KEY] && Array.isArray(value) && value.every(isEntry)) {
      const entries = {};
      for (const entry of value) {
        if (Object.hasOwn(entries, entry.key)) fail(key);
        entries[entry.key] = entry.value;
      }
      out[key] = entries;
    } else {
      out[key] = value;
    }
  }
  return out;
}
const isEntry = (e) => isPlainObject(e) && typeof e.key === 'string' && Object.hasOwn(e, 'value') && Object.keys(e).length === 2;

/** Which tools are served when `tools` does not say: those that can work in this configuration. */
function works(tool, documentBodies, hostVerbs) {
  if (tool.body && !documentBodies) return false;
  return tool.host === undefined || hostVerbs[tool.host] === true;
}

/**
 * What the schemas cite: the entry points or the first catalog rows of the graph being served,
 * read once (a page's worth) when the adapter is made.
 */
function citedIds(graph, bound, entries) {
  const query = (verb, ...args) => {
    try {
      return internal.querySync(graph, verb, ...args);
    } catch {
      return undefined;
    }
  };
  const rows = query('listCatalog', { limit: 5 })?.items ?? [];
  const ids = [...(entries ?? []), ...rows.map((r) => r.qualifiedId)].slice(0, 6);
  const details = ids.length ? (query('getCapabilities', ids.map((id) => (bound ? id.split('::')[1] : id)), { neighborLimitPerKind: 0, knowledgeLimit: 10 })?.results ?? []) : [];
  const found = details.filter((slot) => slot.ok).map((slot) => slot.value);
  const first = found[0];
  const providers = bound ? [graph.providerId] : (query('listProviders', {})?.items ?? []).map((p) => p.providerId);
  const provider = first?.id.providerId ?? providers[0] ?? 'provider';
  const name = (v) => (bound ? v.id.capabilityId : v.qualifiedId);
  const local = first?.id.capabilityId ?? 'capability';
  const knowledge = (kind) => {
    for (const v of found) {
      const item = v.knowledge.items.find((k) => k.kind === kind);
      if (item) return { capability: name(v), knowledgeId: item.knowledgeId };
    }
    return { capability: bound ? local : `${provider}::${local}`, knowledgeId: kind === 'collection' ? 'GUIDES' : 'GUIDE' };
  };
  const specification = query('listSpecificationDocuments', bound ? { limit: 1 } : { providerId: provider, limit: 1 })?.items[0]?.knowledgeId ?? 'SPEC';
  return {
    provider,
    local,
    qualified: `${provider}::${local}`,
    prefix: local.includes('.') ? local.slice(0, local.indexOf('.') + 1) : local,
    revision: first?.staticRevision ?? rows[0]?.staticRevision ?? 's:0000000000000000',
    intent: 'find the capability for this change',
    collection: knowledge('collection'),
    document: knowledge('document'),
    specification,
    providers,
  };
}

/** The adapters createToolAdapter made: the agent SDK helpers take only these. */
const ADAPTERS = new WeakSet();
const isToolAdapter = (value) => ADAPTERS.has(value);

/**
 * @param graph a CapabilityGraph or a BoundProviderGraph
 * @param options { prefix = '', tools?, documentBodies = false, entryPoints?, dialect = 'json-schema' }
 */
function createToolAdapter(graph, options = {}) {
  options = plain(options);
  if (!isPlainObject(options) || isMarker(options)) fail('options');
  const { prefix = '', tools: only, documentBodies = false, entryPoints, dialect = 'json-schema' } = options;
  for (const key of Object.keys(options)) {
    if (!['prefix', 'tools', 'documentBodies', 'entryPoints', 'dialect'].includes(key)) fail(key);
  }
  if (typeof prefix !== 'string') fail('prefix');
  if (typeof documentBodies !== 'boolean') fail('documentBodies');
  if (!DIALECTS.includes(dialect)) fail('dialect');
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
  const ex = citedIds(graph, bound, entries);
  const table = toolTable(ex, bound);
  // Asked even when `tools` names the set: a closed graph is CG_GRAPH_CLOSED whichever way.
  const hostVerbs = internal.hostVerbs(graph);
  let available = table.filter((t) => !(bound && t.unboundOnly));
  if (entries) available = [...available, ENTRY_POINTS];
  if (only !== undefined) {
    if (!Array.isArray(only)) fail('tools');
    for (const name of only) if (!available.some((t) => t.name === name)) fail('tools');
    available = available.filter((t) => only.includes(t.name));
  } else {
    available = available.filter((t) => works(t, documentBodies, hostVerbs));
  }
  if (!available.every((t) => TOOL_NAME.test(prefix + t.name))) fail('prefix');

  const byName = new Map(available.map((t) => [prefix + t.name, t]));
  const tools = available.map((t) => {
    const { schema, examples } = inputSchema(t, bound, dialect);
    return {
      name: prefix + t.name,
      title: t.title,
      description: t.name === 'match' ? matchDescription(hostVerbs) : t.description,
      inputSchema: schema,
      outputSchema: t.output,
      annotations: annotationsOf(t, hostVerbs.fromHost),
      examples,
    };
  });

  async function run(tool, args, signal) {
    if (tool.body && !documentBodies) {
      throw new GraphError({ code: 'CG_ACCESS_DENIED', phase: 'document' });
    }
    // Refused at the walk's bound: the verb's engine call says so.
    if (isRefusedAtBound(args)) return graph[tool === ENTRY_POINTS ? 'getCapabilities' : tool.verb](args);
    if (dialect === 'strict') {
      const properties = toolProperties(tool, bound);
      args = fromStrict(args, properties, tool.required ?? []);
    }
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

  const listed = new Set(available.map((t) => t.name));
  const instructions = walkInstructions((n) => (listed.has(n) ? `\`${prefix}${n}\`` : undefined), ex, bound);
  const adapter = Object.freeze({ tools: Object.freeze(tools), call, has: (name) => byName.has(name), dialect, instructions });
  ADAPTERS.add(adapter);
  return adapter;
}


/**
 * What a server built on these tools tells the model first: the progressive walk (entry points
 * or catalog → narrow → details → neighbours → resolveSelection → documents), in the tools it
 * actually lists. `tool(name)` is the listed tool's quoted name, or undefined.
 */
function walkInstructions(tool, ex, bound) {
  const any = (...names) => names.map(tool).filter(Boolean);
  const or = (names) => (names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names[0]);
  const steps = [];
  const start = any('list_entry_points', 'list_catalog');
  if (start.length) {
    steps.push(`Start with ${or(start)}; pin requiredStaticRevision to the staticRevision in the first result's meta, so every later call reads the same revision.`);
  }
  const narrow = [
    tool('list_catalog') && `${tool('list_catalog')} with parent or capabilityIdPrefix`,
    tool('match') && `${tool('match')} with the user's intent`,
    tool('retrieve_capabilities') && `${tool('retrieve_capabilities')} with a search text`,
  ].filter(Boolean);
  if (narrow.length) steps.push(`Narrow down: ${or(narrow)}.`);
  if (tool('get_capabilities')) steps.push(`Read the details of a few candidates with ${tool('get_capabilities')}.`);
  if (tool('get_neighbors')) steps.push(`Look at their neighbours (children, specializations, related, required) with ${tool('get_neighbors')}.`);
  const confirm = any('resolve_selection', 'resolve');
  if (confirm.length) steps.push(`Confirm the selection with ${confirm[0]}: it adds what the selected capabilities require and says why.`);
  const documents = any('list_knowledge_members', 'read_documents', 'read_document_page', 'query_knowledge', 'list_specification_documents', 'read_specification', 'read_specification_page');
  if (documents.length) steps.push(`Read only the documents the task needs: ${documents.join(', ')}.`);
  const providers = ex.providers.length ? ex.providers.map((p) => `"${p}"`).join(', ') : 'its providers';
  const naming = bound
    ? `Capabilities are named by their IDs, e.g. "${ex.local}".`
    : `Capabilities are named by qualified IDs "provider::capability", e.g. "${ex.qualified}".`;
  return [
    `This server serves the capability graph of ${providers}: what it can do, as capabilities linked by relations, with documents. Walk it a little at a time rather than reading it whole:`,
    ...steps.map((text, i) => `${i + 1}. ${text}`),
    naming,
    'A failed call returns isError with the error as JSON { code, phase, message, nextAction }: follow nextAction (fix_input: correct the arguments; refresh: list again and use current IDs and revisions; narrow_scope: ask for less; retry: try again; check_config: the server is not set up for this).',
  ].join('\n');
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

module.exports = { createToolAdapter, isToolAdapter };
