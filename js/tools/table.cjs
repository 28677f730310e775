'use strict';
// The tools of the Tool Adapter: each verb's name, title, description, properties and examples,
// written for a model and citing the graph being served (its own IDs, never a made-up one).

const { map } = require('./dialect.cjs');

// --- schema fragments, written for a model -------------------------------------------------

// The engine's ID formats; `ID` is the pattern without its anchors.
const { idPatterns, neighborKinds } = require('../engine-tables.cjs');
const { id: ID_PATTERN, knowledgeId: KNOWLEDGE_ID_PATTERN } = idPatterns;
const ID = ID_PATTERN.slice(1, -1);
const QUALIFIED_PATTERN = `^${ID}::${ID}$`;

const limit = (max, what) => ({ type: 'integer', minimum: 1, description: `${what}; larger values are clamped to ${max}.` });
const cursor = { type: 'string', maxLength: 32768, description: 'The nextCursor of the previous page of the same query.' };
/** Where a page read starts and how long its page is: by offset, or by the previous page's cursor. */
const pageRange = {
  startOffset: { type: 'integer', minimum: 0, description: 'Byte offset to start at (default 0); not together with cursor.' },
  maxBytes: { type: 'integer', minimum: 1, maximum: 32768, description: 'Bytes per page, 1 to 32768 (default 32768).' },
  cursor,
};
/**
 * How a walk pins its revisions (SPEC D29), taught by the instructions and said by the pin
 * properties alike. One provider: a result's meta has `staticRevision`, pinned as
 * `requiredStaticRevision`. Several: it has `staticRevisionByProvider` (its
 * `compositeStaticRevision` is no provider's revision), pinned as
 * `requiredStaticRevisionByProvider` with exactly the providers the call reads (the engine's
 * rule: one entry per provider of the call's targets, or of its scope when it names none).
 */
const PINS = {
  one: { key: 'requiredStaticRevision', meta: 'staticRevision' },
  several: {
    key: 'requiredStaticRevisionByProvider',
    meta: 'staticRevisionByProvider',
    entries:
      'the entries of the providers the call names (those of its capability IDs: id, ids, selected, capability, parent, instanceOf; or its providerId) or, when it names none, of every provider it reads (all of them, or those of requestProviderScope)',
  },
};
/** The pin a walk over the graph `ex` describes uses: per provider when it serves several. */
const pinsOf = (ex, bound) => (!bound && ex.providers.length > 1 ? PINS.several : PINS.one);
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
  // Several providers: every tool takes the per-provider pin the instructions teach.
  const several = pinsOf(ex, bound) === PINS.several;
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
  const revision = {
    type: 'string',
    description: several
      ? `Serve the call from this staticRevision (a result's meta.staticRevision, given when it read one provider); only for a call that reads one provider. With several, pin ${PINS.several.key} instead.`
      : "Serve the call from this staticRevision (from an earlier result's meta), so that every call of a walk reads the same revision.",
  };
  const revisions = (entries) =>
    map(
      { type: 'string', pattern: ID_PATTERN, description: 'A provider ID.' },
      { type: 'string', description: 'That provider\'s staticRevision.' },
      several
        ? `Serve the call from these revisions (from an earlier result's meta.${PINS.several.meta}, so that every call of a walk reads the same revisions): ${entries}.`
        : 'One staticRevision per provider the call names.',
    );
  const pin = { requiredStaticRevision: revision, ...(several ? { requiredStaticRevisionByProvider: revisions(PINS.several.entries) } : {}) };
  return { providerId, capability, ids, scope, revision, revisions, pin, several };
}

// --- the tools ------------------------------------------------------------------------------

/**
 * Each tool: its verb, a human title, a description, its properties, what it needs (`body`:
 * document bodies; `host`: the verb served by a host component), how its arguments become the
 * verb's, and documented examples — all written for the graph `ex` describes.
 */
function toolTable(ex, bound) {
  const { providerId, capability, ids, scope, revisions: revisionsFor, pin } = fragments(ex, bound);
  const revisions = revisionsFor(PINS.several.entries);
  const cap = bound ? ex.local : ex.qualified;
  const pins = { requestProviderScope: scope, ...pin };
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
      properties: { providerId, ...pin },
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
      description: "Browse one capability's relations (parents, children, specializations, related, requires and their inverses) without selecting them. Answers only the groups of the kinds asked for (all of them when kinds is omitted).",
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
        mode: {
          type: 'string',
          enum: ['accept', 'rank'],
          description: "'accept' (default): only the capabilities that fit, else no_match with the nearest candidates; 'rank': the best `limit` candidates, to choose from.",
        },
        timeoutMs: { type: 'integer', minimum: 1, description: 'Deadline in milliseconds (default 60000); larger values are clamped to 600000.' },
        ...pins,
      },
      required: ['intent'],
      signal: true,
      host: 'match',
      output: output('status', 'matches', 'meta'),
      examples: [{ intent: ex.intent }, { intent: ex.intent, context: { locale: 'en' }, limit: 3 }, { intent: ex.intent, mode: 'rank', limit: 5 }],
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

/** `list_entry_points`: the capabilities the host named as the walk's start (`entries`). */
function entryPointsTool(ex, bound, entries) {
  const { revision, revisions, several } = fragments(ex, bound);
  const providers = [...new Set(entries.map((id) => id.split('::')[0]))].map((p) => `"${p}"`).join(', ');
  return {
    name: 'list_entry_points',
    title: 'Start here: the main capabilities',
    description: several
      ? "Start here: the providers' main capabilities, with the static revisions to pin the next calls to."
      : "Start here: the provider's main capabilities, with the static revision to pin the next calls to.",
    properties: { requiredStaticRevision: revision, ...(several ? { requiredStaticRevisionByProvider: revisions(`one entry for each provider of the entry points: ${providers}`) } : {}) },
    output: output('items', 'meta'),
    examples: [{}],
    entryPoints: true,
  };
}

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

module.exports = { toolTable, entryPointsTool, pinsOf, annotationsOf, matchDescription };
