'use strict';
// The graph commands: each a verb of the graph, its flags mapped onto the verb's query.

const { usage } = require('./args.cjs');

function pins(flags) {
  return {
    ...(flags.scope ? { requestProviderScope: flags.scope.split(',') } : {}),
    ...(flags.revision ? { requiredStaticRevision: flags.revision } : {}),
  };
}

/** Whether a document command reads one document by pages (`--cursor` or `--max-bytes`). */
const paged = (flags) => flags.cursor !== undefined || flags['max-bytes'] !== undefined;

/** The page query of `read`/`spec`: exactly one `--knowledge`, none of the whole-read filters. */
function page(flags, filters) {
  if (flags.knowledge?.length !== 1) throw usage('--knowledge');
  const other = filters.find((name) => flags[name] !== undefined);
  if (other) throw usage(`--${other}`);
  return {
    knowledgeId: flags.knowledge[0],
    ...pins(flags),
    ...(flags.cursor !== undefined ? { cursor: flags.cursor } : {}),
    ...(flags['max-bytes'] !== undefined ? { maxBytes: flags['max-bytes'] } : {}),
  };
}

/** A context value: a JSON scalar where the text is one (`7`, `true`, `null`, `"x"`), else the
 *  text itself (`007`, `[1]`, `1e400`: not a finite scalar). */
function contextValue(raw) {
  let parsed;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return raw;
  }
  const scalar = parsed === null || typeof parsed === 'string' || typeof parsed === 'boolean' || (typeof parsed === 'number' && Number.isFinite(parsed));
  return scalar ? parsed : raw;
}

function contextOf(pairs = []) {
  // Any 1–64-byte key is a context key, `__proto__` included: an own key, as the SDK passes it.
  const context = Object.create(null);
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usage('--context');
    context[pair.slice(0, eq)] = contextValue(pair.slice(eq + 1));
  }
  return context;
}

const GRAPH_COMMANDS = {
  providers: (g, a, f) => g.listProviders(pins(f)),
  catalog: (g, a, f) =>
    g.listCatalog({
      ...pins(f),
      ...(f.prefix !== undefined ? { capabilityIdPrefix: f.prefix } : {}),
      ...(f.parent !== undefined ? { parent: f.parent } : {}),
      ...(f.limit !== undefined ? { limit: f.limit } : {}),
      ...(f.cursor !== undefined ? { cursor: f.cursor } : {}),
    }),
  show: (g, a, f) => g.getCapabilities(a, pins(f)),
  neighbors: (g, a, f) =>
    g.getNeighbors(a[0], { ...pins(f), ...(f.kinds ? { kinds: f.kinds.split(',') } : {}), ...(f.limit !== undefined ? { limitPerKind: f.limit } : {}) }),
  resolve: (g, a, f) => g.resolve({ ids: a, ...pins(f) }),
  select: (g, a, f) => g.resolveSelection({ selected: a, ...pins(f) }),
  read: (g, a, f) =>
    paged(f)
      ? g.readDocumentPage({ capability: a[0], ...page(f, ['role', 'locale']) })
      : g.readDocuments({ selected: a, ...pins(f), ...(f.knowledge ? { knowledgeIds: f.knowledge } : {}), ...(f.role ? { roles: f.role } : {}), ...(f.locale ? { locales: f.locale } : {}) }),
  spec: (g, a, f) =>
    paged(f) ? g.readSpecificationPage({ providerId: a[0], ...page(f, []) }) : g.readSpecification({ providerId: a[0], ...pins(f), ...(f.knowledge ? { knowledgeIds: f.knowledge } : {}) }),
  match: (g, a, f) =>
    g.match({ intent: a[0], ...pins(f), ...(f.context ? { context: contextOf(f.context) } : {}), ...(f.limit !== undefined ? { limit: f.limit } : {}), ...(f.mode !== undefined ? { mode: f.mode } : {}) }),
};

const quote = (s) => JSON.stringify(s);

/** A provider graph for people: Mermaid or DOT, nodes and the four declared relations. */
function renderExport(graph, format) {
  const style = { parents: 'solid', specializes: 'dashed', related: 'dotted', requires: 'bold' };
  if (format === 'dot') {
    const lines = ['digraph capabilities {', '  rankdir=LR;', '  node [shape=box];'];
    for (const n of graph.nodes) lines.push(`  ${quote(n.id)} [label=${quote(`${n.name}\n${n.id}`)}];`);
    for (const e of graph.edges) lines.push(`  ${quote(e.from)} -> ${quote(e.to)} [label=${quote(e.kind)}, style=${style[e.kind]}];`);
    lines.push('}');
    return lines.join('\n') + '\n';
  }
  const arrow = { parents: '-->', specializes: '-.->', related: '-.-', requires: '==>' };
  const ids = new Map(graph.nodes.map((n, i) => [n.id, `n${i}`]));
  const label = (s) => s.replace(/["\n]/g, ' ');
  const lines = ['flowchart LR'];
  for (const n of graph.nodes) lines.push(`  ${ids.get(n.id)}["${label(n.name)}<br/>${label(n.id)}"]`);
  for (const e of graph.edges) lines.push(`  ${ids.get(e.from)} ${arrow[e.kind]}|${e.kind}| ${ids.get(e.to)}`);
  return lines.join('\n') + '\n';
}

/** The error of a batch whose every item failed (its first item's), else undefined. */
function everyItemFailed(result) {
  const slots = result?.results;
  if (!Array.isArray(slots) || slots.length === 0 || !slots.every((s) => s.ok === false)) return undefined;
  return slots[0].error;
}

/** For a person at a terminal: a whole read that found nothing because the capability's
 *  documents sit in collections (read only by --knowledge) names their members. */
async function readHint(graph, id, flags) {
  const shown = (await graph.getCapabilities([id], pins(flags))).results[0];
  if (!shown?.ok) return undefined;
  const collections = shown.value.knowledge.items.filter((k) => k.kind === 'collection').slice(0, 3);
  const parts = [];
  let first;
  for (const { knowledgeId: collectionId } of collections) {
    const page = await graph.listKnowledgeMembers({ capability: id, collectionId, limit: 10, ...pins(flags) });
    const members = page.items.map((m) => m.knowledgeId);
    if (members.length === 0) continue;
    first ??= members[0];
    parts.push(`${collectionId} holds ${members.join(', ')}${page.nextCursor ? ', …' : ''}`);
  }
  if (parts.length === 0) {
    const filters = ['role', 'locale'].filter((f) => flags[f]).map((f) => `--${f}`);
    return filters.length ? `capability-graph: no top-level document of ${id} matches ${filters.join(' and ')}\n` : undefined;
  }
  const its = parts.length === 1 ? 'its collection' : 'its collections';
  return `capability-graph: ${id} has no top-level document to read; ${its} ${parts.join('; ')}: read them with --knowledge (e.g. --knowledge ${first})\n`;
}

module.exports = { GRAPH_COMMANDS, pins, renderExport, everyItemFailed, readHint };
