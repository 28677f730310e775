// One measurement process: opens the generated providers, runs every step the graph supports and
// prints one JSON line. A fresh process per run keeps JIT warm-up, allocator state and peak RSS
// of one run from leaking into the next. Run with --expose-gc (bench/run.mjs does): memory
// figures are taken after a full GC, so they show what stays, not garbage not yet collected.
//
//   node --expose-gc bench/worker.mjs '<spec JSON>'
//
// spec: { providers: [{ providerId, rootDir }], perProvider, seed }. Capability `i` of every
// provider has the generator's ID `capabilityId(i)`.

// A namespace import, because a named import of an export that does not exist yet
// (lexicalExecutor) would fail to link.
import * as cg from '@devcodex/capability-graph';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { capabilityId, generateLargeDocument, hasKnowledge, prng } from './generate.mjs';
import { engineStats, gcRssMiB } from './memory.mjs';
import { holdMonitor, yieldToLoop } from './loop.mjs';

const spec = JSON.parse(process.argv[2]);
const perProvider = spec.perProvider;
const n = perProvider * spec.providers.length;
const rnd = prng(Number(spec.seed ?? 1));
const randomProvider = () => spec.providers[rnd.int(spec.providers.length)].providerId;
const randomRef = () => `${randomProvider()}::${capabilityId(rnd.int(perProvider))}`;
// With many providers every call names the provider of its capability as its scope: a result's
// meta names every provider of the scope, and a thousand of them alone outgrow the default page
// budgets (CG_BUDGET_EXCEEDED).
const scoped = (ref) => (spec.providers.length > 1 ? { requestProviderScope: [ref.split('::')[0]] } : {});
function randomRefWithKnowledge() {
  let i;
  do i = rnd.int(perProvider);
  while (!hasKnowledge(i));
  return `${randomProvider()}::${capabilityId(i)}`;
}

// The floor of a call: the cheapest synchronous function of the engine's binding (two short
// strings in, a boolean out), so a verb's floor is one napi round trip plus JSON.parse of its
// answer.
const binding = createRequire(import.meta.url)('../binding.js');
const emptyNapiCall = () => binding.codexVersionOk('', '');

// The longest time anything held the JS thread, per step.
const heldMs = holdMonitor();
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
      // One walk over the whole scope; with many providers, one walk per provider: a page's
      // meta names every provider of its scope, and with a thousand of them that alone is over
      // the default catalog.maxBytes (CG_BUDGET_EXCEEDED).
      const scopes = spec.providers.length > 1 ? spec.providers.map((p) => ({ requestProviderScope: [p.providerId] })) : [{}];
      for (const scope of scopes) {
        let cursor;
        do {
          const page = await graph.listCatalog(cursor ? { ...scope, cursor } : scope);
          await yieldToLoop();
          pages++;
          items += page.items.length;
          cursor = page.nextCursor;
        } while (cursor);
      }
      if (items !== n) throw new Error(`catalog walk saw ${items} of ${n} capabilities`);
      return { pages };
    },
  },
  { name: 'getCapabilities', method: 'getCapabilities', each: (graph) => {
    const ref = randomRef();
    return graph.getCapabilities([ref], scoped(ref));
  } },
  {
    name: 'getNeighbors',
    method: 'getNeighbors',
    each: (graph) => {
      const ref = randomRef();
      return graph.getNeighbors(ref, scoped(ref));
    },
    items: (r) => Object.values(r.groups).reduce((sum, g) => sum + g.items.length, 0),
  },
  {
    name: 'resolveSelection',
    method: 'resolveSelection',
    each: (graph) => {
      const ref = randomRef();
      return graph.resolveSelection({ selected: [ref], ...scoped(ref) });
    },
    items: (r) => r.resolved.length,
  },
  {
    name: 'resolve',
    method: 'resolve',
    each: (graph) => {
      const ref = randomRef();
      return graph.resolve({ ids: [ref], ...scoped(ref) });
    },
    items: (r) => r.items.length,
  },
  // The lexical index is built in the background after open; the first call may wait for it,
  // so it is reported apart, and memory is measured once the index exists.
  {
    name: 'match first call',
    method: 'match',
    once: async (graph) => {
      await graph.match({ intent: rnd.pick(intents) });
      indexed.rssMiB = gcRssMiB();
      indexed.stats = await engineStats(graph);
    },
  },
  { name: 'match', method: 'match', each: (graph) => graph.match({ intent: rnd.pick(intents) }) },
  {
    // The engine's share of a knowledge search: targets, mapping, reads through access, the
    // evidence and one hit checked against the bytes (the retriever itself does no search).
    name: 'queryKnowledge',
    method: 'queryKnowledge',
    each: (graph) => {
      const ref = randomRefWithKnowledge();
      return graph.queryKnowledge({ text: 'webhook', selected: [ref], ...scoped(ref) });
    },
    items: (r) => r.items.length,
  },
  {
    name: 'readDocuments',
    method: 'readDocuments',
    each: (graph) => {
      const ref = randomRefWithKnowledge();
      return graph.readDocuments({ selected: [ref], ...scoped(ref) });
    },
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
        await yieldToLoop();
        pages++;
      }
      const seconds = (performance.now() - started) / 1000;
      await big.close();
      return { pages, mibPerSecond: page.totalBytes / 2 ** 20 / seconds };
    },
  },
  {
    // Eight first pages of 64 MiB documents (eight graphs, so eight hashes of the whole file)
    // run on the engine's long-read lane; a small read and a match started meanwhile must not
    // wait behind them.
    name: 'under 8 large reads',
    method: 'readDocumentPage',
    once: async (graph) => {
      const documentRoot = await generateLargeDocument();
      const opened = await Promise.all(
        Array.from({ length: 8 }, () =>
          cg.CapabilityGraph.open({
            providers: [{ documentRoot, definition: { providerId: 'bench.large', name: 'Large', version: '1', capabilities: [{
              capabilityId: 'large', name: 'Large', description: 'A large document.', whenToUse: 'Benchmarks.',
              knowledge: [{ kind: 'document', knowledgeId: 'LARGE', role: 'reference', locator: { type: 'relative-file', path: 'large.md' } }],
            }] } }],
          }),
        ),
      );
      const started = performance.now();
      const large = Promise.all(opened.map((g) => g.readDocumentPage({ capability: 'bench.large::large', knowledgeId: 'LARGE', maxBytes: 64 })));
      const ref = randomRefWithKnowledge();
      let t = performance.now();
      await graph.readDocuments({ selected: [ref], ...scoped(ref) });
      const smallReadMs = performance.now() - t;
      t = performance.now();
      await graph.match({ intent: rnd.pick(intents) });
      const matchMs = performance.now() - t;
      await large;
      const largeReadsMs = performance.now() - started;
      await Promise.all(opened.map((g) => g.close()));
      return { smallReadMs, matchMs, largeReadsMs };
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
  await yieldToLoop();
  heldMs();
  const times = new Float64Array(CALLS);
  let items = 0;
  let partial = 0;
  const answers = new Array(CALLS);
  const answerBytes = new Array(CALLS);
  for (let i = 0; i < CALLS; i++) {
    await yieldToLoop();
    const t = performance.now();
    const result = await step.each(graph);
    times[i] = (performance.now() - t) * 1000;
    answers[i] = JSON.stringify(result);
    answerBytes[i] = Buffer.byteLength(answers[i]);
    if (step.items) items += step.items(result);
    // A result cut short by a budget measures the budget, not the provider: worth flagging.
    if (result?.meta?.completeness === 'partial') partial++;
  }
  times.sort();
  const out = { calls: CALLS, medianUs: percentile(times, 0.5), p95Us: percentile(times, 0.95) };
  // The floor: the same answers' bytes parsed after an empty native call, each sample taken
  // as the verb's were (after a turn of the event loop), so both pay the same cold caches.
  const floor = new Float64Array(CALLS);
  for (let i = 0; i < CALLS; i++) {
    await yieldToLoop();
    const t = performance.now();
    emptyNapiCall();
    JSON.parse(answers[i]);
    floor[i] = (performance.now() - t) * 1000;
  }
  floor.sort();
  out.floorUs = percentile(floor, 0.5);
  out.answerBytes = answerBytes.sort((a, b) => a - b)[CALLS >> 1];
  if (step.items) out.itemsPerCall = items / CALLS;
  out.partialCalls = partial;
  out.heldMs = heldMs();
  return out;
}

async function measureOnce(step, graph) {
  await yieldToLoop();
  heldMs();
  const t = performance.now();
  const result = await step.once(graph);
  const elapsed = ms(t);
  if (result?.ok === false) throw new Error(`${step.name} failed: ${JSON.stringify(result)}`);
  // Numeric fields of what the step returned (e.g. pages walked) are reported beside its time.
  const figures = Object.entries(result ?? {}).filter(([, v]) => typeof v === 'number');
  await yieldToLoop();
  return { ms: elapsed, heldMs: heldMs(), ...Object.fromEntries(figures) };
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

const indexed = {};
const rssBeforeOpen = gcRssMiB();
await yieldToLoop();
heldMs();
const openStarted = performance.now();
const graph = await cg.CapabilityGraph.open({
  providers: spec.providers.map(({ providerId, rootDir }) => ({ providerId, authority: { kind: 'file', rootDir, definitionLayout: spec.layout ?? 'directory' } })),
  ...(cg.lexicalExecutor ? { executor: cg.lexicalExecutor() } : {}),
  knowledgeRetriever: { id: 'bench', retrieve: readingRetriever },
});
const openMs = ms(openStarted);
await yieldToLoop();
const result = {
  openMs,
  openHeldMs: heldMs(),
  rssBeforeOpenMiB: rssBeforeOpen,
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
// Memory with the lexical index built (measured by the first match, when there is one).
result.rssWithIndexMiB = indexed.rssMiB ?? null;
result.engineBytesWithIndex = indexed.stats?.bytes ?? null;
result.engineIndexBytes = indexed.stats?.indexBytes ?? null;

await yieldToLoop();
heldMs();
const closeStarted = performance.now();
await graph.close();
result.closeMs = ms(closeStarted);
await yieldToLoop();
result.closeHeldMs = heldMs();

// maxRSS is in KiB on every platform Node reports it for.
result.peakRssMiB = process.resourceUsage().maxRSS / 1024;
if (cg.semanticExecutor) await measureSemantic();
process.stdout.write(`${JSON.stringify(result)}\n`);

/** A deterministic stand-in for a sentence encoder (hashed words, 384 dimensions): without the
 *  model package the bench still measures the engine's part — batches, quantising, scoring and
 *  fusion — but not the encoder's. */
function hashedEmbedder(dimensions = 384) {
  return {
    id: 'bench-hashed',
    dimensions,
    embed(texts) {
      const out = new Float32Array(texts.length * dimensions);
      texts.forEach((t, i) => {
        for (const w of t.toLowerCase().split(/[^a-z0-9]+/)) {
          let h = 7;
          for (let k = 0; k < w.length; k++) h = (h * 31 + w.charCodeAt(k)) >>> 0;
          out[i * dimensions + (h % dimensions)] += 1;
        }
        out[i * dimensions] += 0.01;
      });
      return out;
    },
  };
}

/** The semantic executor after the main graph closed: the vectors' build (the first match
 *  waits for it), then matches with the vectors built, and the vectors' bytes. */
async function measureSemantic() {
  // The encoder's weights when they are built (the package folder alone is linked by `npm ci`),
  // unless BENCH_EMBEDDER=hashed asks for the cheap embedder: at 100k the real encoder takes
  // most of a run's time, in a path the other steps do not share.
  let model = 'bench-hashed';
  if (process.env.BENCH_EMBEDDER !== 'hashed') {
    try {
      const dir = path.dirname(createRequire(import.meta.url).resolve('@devcodex/capability-graph-minilm/package.json'));
      if (existsSync(path.join(dir, 'model.bin'))) model = 'minilm';
    } catch {
      // not installed: the cheap embedder
    }
  }
  const semantic = await cg.CapabilityGraph.open({
    providers: spec.providers.map(({ providerId, rootDir }) => ({ providerId, authority: { kind: 'file', rootDir, definitionLayout: spec.layout ?? 'directory' } })),
    executor: cg.semanticExecutor(model === 'minilm' ? {} : { embedder: hashedEmbedder() }),
    budgets: { match: { embedBatchSize: 256, maxTimeoutMs: 3_600_000 } },
  });
  try {
    const started = performance.now();
    await semantic.match({ intent: rnd.pick(intents), timeoutMs: 3_600_000 });
    result.semanticModel = model;
    result.semanticBuildMs = ms(started);
    const stats = await engineStats(semantic);
    result.semanticVectorBytes = stats?.stats.providers.reduce((t, p) => t + (p.vectorBytes ?? 0), 0) ?? null;
    result.steps['semantic match'] = await measureEach({ name: 'semantic match', method: 'match', each: (g) => g.match({ intent: rnd.pick(intents) }) }, semantic);
  } finally {
    await semantic.close();
  }
}
