'use strict';
// The Tool Adapter: the graph's verbs as protocol-neutral tools for agents. A tool
// maps its arguments onto one verb call; the verb alone validates them. Results and failures
// come back as { ok: true, result } or { ok: false, error } — call() never throws for a graph
// error. Tool metadata holds no capability data: there is no tool per capability.

const { GraphError, inputInvalid } = require('../errors.cjs');
const { parseQualifiedId, isGraph, isBound, internal } = require('../graph/graph.cjs');
const { toWireJson, refusedAtBound, isRefusedAtBound, ownValue, ARGUMENTS, NON_JSON_KEY } = require('../pure-json.cjs');
const { DIALECTS, isPlainObject, toolProperties, inputSchema, fromStrict } = require('./dialect.cjs');
const { toolTable, entryPointsTool, pinsOf, annotationsOf, matchDescription } = require('./table.cjs');

/** The tool-name rule of OpenAI, Anthropic and Gemini alike, checked on each prefixed name. */
const TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

function fail(field) {
  throw inputInvalid(field);
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

/** Splits `{ [key]: target, ...rest }` into the verb's two arguments; anything else goes to the
 *  verb whole, which rejects it. */
function split(args, key) {
  if (!isPlainObject(args) || !Object.hasOwn(args, key)) return [undefined, args];
  const { [key]: target, ...rest } = args;
  return [target, rest];
}

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
  if (entries) available = [...available, entryPointsTool(ex, bound, entries)];
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
    if (isRefusedAtBound(args)) return graph[tool.entryPoints ? 'getCapabilities' : tool.verb](args);
    if (dialect === 'strict') {
      const properties = toolProperties(tool, bound);
      args = fromStrict(args, properties, tool.required ?? []);
    }
    if (tool.entryPoints) return listEntryPoints(graph, entries, args);
    if (bound && tool.boundDrops?.length) {
      // The provider of a bound graph is its binding: the argument does not exist there.
      if (isPlainObject(args) && tool.boundDrops.some((p) => Object.hasOwn(args, p))) fail(tool.boundDrops[0]);
    }
    if (tool.verb === 'getProvider') return bound ? graph.getProvider(args) : graph.getProvider(...split(args, 'providerId'));
    if (tool.verb === 'getNeighbors') return askedGroups(await graph.getNeighbors(...split(args, 'id')));
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
    const pin = pinsOf(ex, bound);
    const pinned = `pin ${pin.key} to the ${pin.meta} in the first result's meta, so every later call reads the same revision`;
    steps.push(
      pin.entries
        ? `Start with ${or(start)}; ${pinned}s. Give each call ${pin.entries}. The meta's compositeStaticRevision is no provider's revision: never pin it.`
        : `Start with ${or(start)}; ${pinned}.`,
    );
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

/**
 * A neighbour page as a tool answers it (SPEC D29): only the groups of the kinds asked for, as
 * the engine names them in `meta.filter.kinds` (all eight when none were asked). The SDK keeps
 * the reference's eight groups; a model reads an empty group of a kind it did not ask for as
 * "none there".
 */
function askedGroups(page) {
  const asked = new Set(page.meta.filter.kinds);
  return { ...page, groups: Object.fromEntries(Object.entries(page.groups).filter(([kind]) => asked.has(kind))) };
}

/** The provider's chosen entry points: summaries only, and the revision to pin. */
async function listEntryPoints(graph, entries, args) {
  if (!isPlainObject(args)) fail('$');
  for (const key of Object.keys(args)) if (key !== 'requiredStaticRevision' && key !== 'requiredStaticRevisionByProvider') fail(key);
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
