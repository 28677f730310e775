// The data of the tool-search evaluation (bench/eval-tools-catalog.mjs): the MCP tool catalog and
// its tasks (bench/tool-catalog/), the 74 requests on examples/tool-search's 150 tools, the
// no-match intents of the match evaluation; how each is split into a tuning and a held-out half;
// the catalogs (corpora) they are asked against; and, for the pinned BM25 baseline, the text our
// ranker sees of every capability, exported from the very definitions the graphs open.

import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { providerFromTools } from '@devcodex/capability-graph';
import { generate } from './generate.mjs';
import { loadProviders as loadMatchProviders, split as splitMatchIntents } from './eval-match.mjs';
import { listTools } from './eval-tool-search.mjs';

const bench = fileURLToPath(new URL('./', import.meta.url));
export const DATA_FILES = {
  catalog: path.join(bench, 'tool-catalog', 'catalog.json'),
  tasks: path.join(bench, 'tool-catalog', 'tasks.json'),
  intents: path.join(bench, 'tool-search-intents.json'),
};

/** Salt of the split: changing it reshuffles the halves, so it never changes. */
const SPLIT_SALT = 'capability-graph tool search split 1';
/** The generated catalog the tools are mixed into, a private copy (it gets a vectors file). */
export const SYNTHETIC = { size: 10000, name: 'n10000-tool-search' };
/** The server ID of examples/tool-search's 150 tools, in keys `<server>/<tool>`. */
export const TOOL_SEARCH_SERVER = 'tool-search';
export const LIMITS = { multi: 10, single: 5, requests: 5, noMatch: 5 };

export const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/**
 * A task's half: the first byte of SHA-256 over the salt and the task's ID. A task keeps its half
 * whatever else is added or removed.
 */
export function splitOf(id) {
  return createHash('sha256').update(`${SPLIT_SALT}\n${id}`).digest()[0] < 128 ? 'tune' : 'heldout';
}

/** A valid provider ID (`^[a-z][a-z0-9._-]*$`) for a catalog server's ID. */
export function providerIdOf(serverId) {
  const id = serverId.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').slice(0, 120);
  return /^[a-z]/.test(id) ? id : `mcp-${id}`;
}

async function readIfPresent(file) {
  try {
    return await readFile(file);
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Every data file's bytes and SHA-256 (`null` for one not there yet), parsed. `files` may point
 * the catalog or the tasks elsewhere (a stand-in while the committed ones are being written).
 */
export async function loadData(files = {}) {
  const paths = { ...DATA_FILES, ...files };
  const hashes = {};
  const parsed = {};
  for (const [key, file] of Object.entries(paths)) {
    const bytes = await readIfPresent(file);
    hashes[key] = bytes === undefined ? null : sha256(bytes);
    parsed[key] = bytes === undefined ? undefined : JSON.parse(bytes.toString('utf8'));
  }
  return { paths, hashes, catalog: parsed.catalog, tasks: parsed.tasks, intents: parsed.intents.intents };
}

/** The string at an error's `details.field` (`tools[1].inputSchema.properties.q.description`) and its holder. */
function fieldAt(options, field) {
  const steps = [...field.matchAll(/([^.[\]]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g)].map((m) => m[1] ?? (m[2] !== undefined ? Number(m[2]) : JSON.parse(m[3])));
  const key = steps.pop();
  const holder = steps.reduce((at, step) => at?.[step], options);
  return typeof holder?.[key] === 'string' ? { holder, key } : undefined;
}

/** `text` cut to at most `bytes` bytes of UTF-8, at a character boundary. */
function cutTo(text, bytes) {
  let out = Buffer.from(text, 'utf8').subarray(0, bytes).toString('utf8');
  if (out.endsWith('\uFFFD')) out = out.slice(0, -1);
  return out;
}

/**
 * providerFromTools on `options`, as a host that must use a published tool would: a text past
 * one of its budgets (`CG_INPUT_TOO_LARGE` naming the field and the limit) is cut to the limit,
 * and the cut is reported. Whatever else it refuses is an error of the data.
 */
function providerFittingBudgets(options, server) {
  const cuts = [];
  for (;;) {
    try {
      return { ...providerFromTools(options), cuts };
    } catch (error) {
      const at = error?.code === 'CG_INPUT_TOO_LARGE' && cuts.length < 100 ? fieldAt(options, error.details?.field ?? '') : undefined;
      if (at === undefined || typeof error.details?.limit !== 'number') throw error;
      const tool = options.tools[Number(/^tools\[(\d+)\]/.exec(error.details.field)?.[1])]?.name ?? null;
      cuts.push({ server, tool, field: error.details.field, bytes: Buffer.byteLength(at.holder[at.key]), limit: error.details.limit });
      at.holder[at.key] = cutTo(at.holder[at.key], error.details.limit);
    }
  }
}

/** One provider per catalog server, made by providerFromTools, with the server's description. */
export function catalogProviders(catalog) {
  const seen = new Map();
  return catalog.servers.map((server) => {
    const providerId = providerIdOf(server.id);
    if (seen.has(providerId)) throw new Error(`servers ${seen.get(providerId)} and ${server.id} share provider ID ${providerId}`);
    seen.set(providerId, server.id);
    // A provider definition has no description field (and providerFromTools no option for one):
    // the server's description is kept beside it, for the baseline's text.
    const tools = structuredClone(server.tools);
    const { definition, toolNames, cuts } = providerFittingBudgets({ providerId, name: server.name, tools }, server.id);
    return { server: server.id, providerId, definition, toolNames, cuts, description: server.description ?? '' };
  });
}

/** examples/tool-search's 150 tools, as a host gets them over MCP, as one provider. */
export async function toolSearchProvider() {
  const { definition, toolNames } = providerFromTools({ providerId: 'host.tools', name: 'Host tools', tools: await listTools() });
  return { server: TOOL_SEARCH_SERVER, providerId: 'host.tools', definition, toolNames, description: '' };
}

/** The generated 10k provider's folder (generated once, cached like every bench tree). */
export const syntheticRoot = () => generate(SYNTHETIC.size, { name: SYNTHETIC.name });

async function definitionFiles(dir) {
  const out = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await definitionFiles(full)));
    else if (entry.name.endsWith('.json')) out.push(full);
  }
  return out;
}

/** The generated provider's manifest and capability records, in ID order. */
export async function syntheticDefinition(root) {
  const manifest = JSON.parse(await readFile(path.join(root, 'provider.json'), 'utf8'));
  const capabilities = await Promise.all((await definitionFiles(path.join(root, 'capabilities'))).map(async (f) => JSON.parse(await readFile(f, 'utf8'))));
  capabilities.sort((a, b) => (a.capabilityId < b.capabilityId ? -1 : a.capabilityId > b.capabilityId ? 1 : 0));
  return { ...manifest, capabilities };
}

/**
 * The requests, each with its set, half, gold keys (`<server>/<tool>`) and `limit`:
 *   multi     the catalog's multi-step tasks (several gold tools)
 *   single    the catalog's single-step requests
 *   requests  the 74 requests on examples/tool-search's 150 tools
 *   noMatch   the match evaluation's no-match intents, halved as that evaluation halves them
 */
export async function loadItems(data) {
  const items = [];
  for (const t of data.tasks?.multiStep ?? []) items.push({ set: 'multi', id: t.id, request: t.request, gold: t.gold, split: splitOf(t.id) });
  for (const t of data.tasks?.single ?? []) items.push({ set: 'single', id: t.id, request: t.request, gold: [t.gold], otherVerbs: t.otherVerbs === true, split: splitOf(t.id) });
  // The requests have no IDs: their text is their ID.
  data.intents.forEach((r, n) => items.push({ set: 'requests', id: `r${String(n + 1).padStart(3, '0')}`, request: r.intent, gold: [`${TOOL_SEARCH_SERVER}/${r.tool}`], split: splitOf(r.intent) }));
  for (const i of splitMatchIntents(await loadMatchProviders()).filter((x) => x.kind === 'no-match')) {
    items.push({ set: 'noMatch', id: `${i.provider}#${i.n}`, request: i.intent, gold: [], split: i.split });
  }
  return items.map((i) => ({ ...i, limit: LIMITS[i.set] }));
}

/**
 * The catalogs asked, each with the sets asked against it: the tool catalog alone and inside the
 * generated 10k catalog, and examples/tool-search's 150 tools alone and inside it. A corpus whose
 * data is missing (no catalog yet) is left out.
 */
export function corpora(data, sizes) {
  const out = [];
  if (data.catalog !== undefined) {
    const sets = ['multi', 'single', 'noMatch'];
    if (sizes.includes('catalog')) out.push({ name: 'catalog', base: 'catalog', synthetic: false, sets });
    if (sizes.includes('10k')) out.push({ name: 'catalog+10k', base: 'catalog', synthetic: true, sets });
  }
  if (sizes.includes('catalog')) out.push({ name: 'tool-search', base: 'tool-search', synthetic: false, sets: ['requests', 'noMatch'] });
  if (sizes.includes('10k')) out.push({ name: 'tool-search+10k', base: 'tool-search', synthetic: true, sets: ['requests', 'noMatch'] });
  return out;
}

// --- The text our ranker sees ---------------------------------------------------------------

/** An ID's words: its separators (`.`, `_`, `-`) become spaces, as the lexical tokenizer splits it. */
const idWords = (id) => id.replace(/[._-]+/g, ' ').trim();

/**
 * The text of one capability, field by field as the lexical executor indexes it
 * (src/matching/lexical/index.rs, `Field::ALL` and `field_texts`): name, ID (as words),
 * whenToUse, description, examples (providerFromTools writes one per parameter: its name's
 * words, its description and its allowed values), distinction, knowledge titles, parent names;
 * then the provider's name and description (D25: the ranker weighs the provider's own words).
 */
export function rankerText(definition, capability, byId, providerDescription) {
  const knowledgeTitles = (capability.knowledge ?? []).map((k) => k.title).filter(Boolean);
  const parentNames = (capability.parents ?? []).map((p) => byId.get(p)?.name).filter(Boolean);
  return [
    capability.name,
    idWords(capability.capabilityId),
    capability.whenToUse,
    capability.description,
    ...(capability.examples ?? []),
    capability.distinction,
    ...knowledgeTitles,
    ...parentNames,
    definition.name,
    providerDescription,
  ]
    .filter((t) => typeof t === 'string' && t.trim() !== '')
    .join('\n');
}

/** A provider's documents for the baseline: each capability's key and text. */
export function providerDocuments(provider) {
  const { definition } = provider;
  const byId = new Map(definition.capabilities.map((c) => [c.capabilityId, c]));
  return definition.capabilities.map((c) => ({ key: keyOf(provider, c.capabilityId), text: rankerText(definition, c, byId, provider.description) }));
}

/** The key of a capability in answers and gold: `<server>/<tool>` for a tool, else its qualified ID. */
export function keyOf(provider, capabilityId) {
  const tool = provider.toolNames?.get(capabilityId);
  return tool === undefined ? `${provider.providerId}::${capabilityId}` : `${provider.server}/${tool}`;
}
