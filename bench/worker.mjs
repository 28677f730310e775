// One measurement process: opens the provider at <dir>, runs every step the graph supports and
// prints one JSON line. A fresh process per run keeps JIT warm-up, allocator state and peak RSS
// of one run from leaking into the next.
//
//   node bench/worker.mjs <providerDir> <capabilityCount> [seed]

// A namespace import, because a named import of an export that does not exist yet
// (lexicalExecutor) would fail to link.
import * as cg from '@devcodex/capability-graph';
import { capabilityId, generateLargeDocument, hasKnowledge, prng, PROVIDER_ID } from './generate.mjs';

const [dir, count, seed = '1'] = process.argv.slice(2);
const n = Number(count);
const rnd = prng(Number(seed));
const qualified = (i) => `${PROVIDER_ID}::${capabilityId(i)}`;
const randomRef = () => qualified(rnd.int(n));
function randomRefWithKnowledge() {
  let i;
  do i = rnd.int(n);
  while (!hasKnowledge(i));
  return qualified(i);
}
const intents = ['validate incoming webhook payloads', 'cache signed tokens', 'export pending invoices'];

const CALLS = 1000;
// Unmeasured calls first, so the table shows steady-state cost rather than JIT compilation.
const WARMUP = 50;

/**
 * The measured verbs, in order, against one graph. `each` runs CALLS times and reports per-call
 * latency (`items` optionally counts what a result holds); `once` runs a single time and may
 * return extra figures. A step whose method the graph lacks is skipped, so a verb the engine does
 * not serve yet only needs a row here. `reload` stays last: it must not disturb the others.
 */
const STEPS = [
  {
    name: 'catalog walk',
    method: 'listCatalog',
    once: async (graph) => {
      let pages = 0;
      let items = 0;
      let cursor;
      do {
        const page = await graph.listCatalog(cursor ? { cursor } : {});
        pages++;
        items += page.items.length;
        cursor = page.nextCursor;
      } while (cursor);
      if (items !== n) throw new Error(`catalog walk saw ${items} of ${n} capabilities`);
      return { pages };
    },
  },
  { name: 'getCapabilities', method: 'getCapabilities', each: (graph) => graph.getCapabilities([randomRef()]) },
  {
    name: 'getNeighbors',
    method: 'getNeighbors',
    each: (graph) => graph.getNeighbors(randomRef()),
    items: (r) => Object.values(r.groups).reduce((sum, g) => sum + g.items.length, 0),
  },
  {
    name: 'resolveSelection',
    method: 'resolveSelection',
    each: (graph) => graph.resolveSelection({ selected: [randomRef()] }),
    items: (r) => r.resolved.length,
  },
  {
    name: 'resolve',
    method: 'resolve',
    each: (graph) => graph.resolve({ ids: [randomRef()] }),
    items: (r) => r.items.length,
  },
  // The lexical executor builds its index on the first call, so that call is reported apart.
  { name: 'match first call', method: 'match', once: (graph) => graph.match({ intent: rnd.pick(intents) }) },
  { name: 'match', method: 'match', each: (graph) => graph.match({ intent: rnd.pick(intents) }) },
  {
    // The engine's share of a knowledge search: targets, mapping, reads through access, the
    // evidence and one hit checked against the bytes (the retriever itself does no search).
    name: 'queryKnowledge',
    method: 'queryKnowledge',
    each: (graph) => graph.queryKnowledge({ text: 'webhook', selected: [randomRefWithKnowledge()] }),
    items: (r) => r.items.length,
  },
  {
    name: 'readDocuments',
    method: 'readDocuments',
    each: (graph) => graph.readDocuments({ selected: [randomRefWithKnowledge()] }),
  },
  {
    name: 'paged read 64 MiB',
    method: 'readDocumentPage',
    once: async () => {
      // A separate inline provider whose one document is far larger than any whole read.
      const documentRoot = await generateLargeDocument();
      const big = await cg.CapabilityGraph.open({
        providers: [{ documentRoot, definition: { providerId: 'bench.large', name: 'Large', version: '1', capabilities: [{
          capabilityId: 'large', name: 'Large', description: 'A large document.', whenToUse: 'Benchmarks.',
          knowledge: [{ kind: 'document', knowledgeId: 'LARGE', role: 'reference', locator: { type: 'relative-file', path: 'large.md' } }],
        }] } }],
      });
      const started = performance.now();
      let page = await big.readDocumentPage({ capability: 'bench.large::large', knowledgeId: 'LARGE' });
      let pages = 1;
      while (page.hasMore) {
        page = await big.readDocumentPage({ capability: 'bench.large::large', knowledgeId: 'LARGE', cursor: page.nextCursor });
        pages++;
      }
      const seconds = (performance.now() - started) / 1000;
      await big.close();
      return { pages, mibPerSecond: page.totalBytes / 2 ** 20 / seconds };
    },
  },
  { name: 'reload', method: 'reload', once: (graph) => graph.reload() },
];

const ms = (from) => performance.now() - from;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function measureEach(step, graph) {
  for (let i = 0; i < WARMUP; i++) await step.each(graph);
  const times = new Float64Array(CALLS);
  let items = 0;
  let partial = 0;
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    const result = await step.each(graph);
    times[i] = (performance.now() - t) * 1000;
    if (step.items) items += step.items(result);
    // A result cut short by a budget measures the budget, not the provider: worth flagging.
    if (result?.meta?.completeness === 'partial') partial++;
  }
  times.sort();
  const out = { calls: CALLS, medianUs: percentile(times, 0.5), p95Us: percentile(times, 0.95) };
  if (step.items) out.itemsPerCall = items / CALLS;
  out.partialCalls = partial;
  return out;
}

async function measureOnce(step, graph) {
  const t = performance.now();
  const result = await step.once(graph);
  const elapsed = ms(t);
  if (result?.ok === false) throw new Error(`${step.name} failed: ${JSON.stringify(result)}`);
  // Numeric fields of what the step returned (e.g. pages walked) are reported beside its time.
  const figures = Object.entries(result ?? {}).filter(([, v]) => typeof v === 'number');
  return { ms: elapsed, ...Object.fromEntries(figures) };
}

/** A retriever that reads every target through `access` and reports its first line as a hit. */
async function readingRetriever(input, access) {
  const hits = [];
  const documents = [];
  for (const t of input.targets) {
    const read = await access.read({ id: t.id, knowledgeId: t.knowledgeId }, { maxBytes: 1 << 20 });
    documents.push({ id: t.id, knowledgeId: t.knowledgeId, sourceContentId: read.contentId, indexedContentId: read.contentId });
    const end = Math.max(0, read.bytes.indexOf(10));
    const snippet = Buffer.from(read.bytes.subarray(0, end)).toString('utf8');
    hits.push({ id: t.id, knowledgeId: t.knowledgeId, contentId: read.contentId, source: read.source, startOffset: 0, endOffset: end, snippet });
  }
  const evidence = {
    staticRevisionByProvider: input.staticRevisionByProvider,
    mappingRevision: input.mappingRevision,
    observedAt: new Date().toISOString(),
    freshness: 'current',
    sourceConfigRevision: 'bench',
    indexedConfigRevision: 'bench',
    documents,
  };
  return { hits: hits.slice(0, input.limit), evidence };
}

const rssBeforeOpen = process.memoryUsage().rss;
const openStarted = performance.now();
const graph = await cg.CapabilityGraph.open({
  providers: [{ providerId: PROVIDER_ID, authority: { kind: 'file', rootDir: dir, definitionLayout: 'directory' } }],
  ...(cg.lexicalExecutor ? { executor: cg.lexicalExecutor() } : {}),
  knowledgeRetriever: { id: 'bench', retrieve: readingRetriever },
});
const result = {
  openMs: ms(openStarted),
  rssBeforeOpenMiB: rssBeforeOpen / 2 ** 20,
  rssAfterOpenMiB: process.memoryUsage().rss / 2 ** 20,
  steps: {},
  skipped: [],
};

for (const step of STEPS) {
  if (typeof graph[step.method] !== 'function') {
    result.skipped.push(step.name);
    continue;
  }
  result.steps[step.name] = step.each ? await measureEach(step, graph) : await measureOnce(step, graph);
}
await graph.close();

// maxRSS is in KiB on every platform Node reports it for.
result.peakRssMiB = process.resourceUsage().maxRSS / 1024;
process.stdout.write(`${JSON.stringify(result)}\n`);
