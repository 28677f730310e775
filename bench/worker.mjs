// One measurement process: opens the provider at <dir>, runs every step the graph supports and
// prints one JSON line. A fresh process per run keeps JIT warm-up, allocator state and peak RSS
// of one run from leaking into the next.
//
//   node bench/worker.mjs <providerDir> <capabilityCount> [seed]

import { CapabilityGraph } from '@devcodex/capability-graph';
import { capabilityId, prng, PROVIDER_ID } from './generate.mjs';

const [dir, count, seed = '1'] = process.argv.slice(2);
const n = Number(count);
const rnd = prng(Number(seed));
const randomRef = () => `${PROVIDER_ID}::${capabilityId(rnd.int(n))}`;

const CALLS = 1000;
// Unmeasured calls first, so the table shows steady-state cost rather than JIT compilation.
const WARMUP = 50;

/**
 * The measured verbs. `each` steps run CALLS times and report per-call latency; `once` steps run
 * a single time. A step whose method the graph lacks is skipped, so a new verb only needs a row
 * here. Steps run in order against one graph, so put `reload` last.
 */
const STEPS = [
  {
    name: 'resolve',
    method: 'resolve',
    each: async (graph, stats) => {
      const result = await graph.resolve({ ids: [randomRef()] });
      stats.items += result.items.length;
      // A closure that hit the node/edge budget would measure the budget, not the provider.
      if (result.meta.completeness !== 'complete') stats.partial = (stats.partial ?? 0) + 1;
    },
  },
  // e.g. { name: 'getNeighbors', method: 'getNeighbors', each: (graph) => graph.getNeighbors(randomRef()) },
  { name: 'reload', method: 'reload', once: (graph) => graph.reload() },
];

const ms = (from) => performance.now() - from;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function measureEach(step, graph) {
  const stats = { items: 0 };
  for (let i = 0; i < WARMUP; i++) await step.each(graph, stats);
  stats.items = 0;
  stats.partial = 0;
  const times = new Float64Array(CALLS);
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    await step.each(graph, stats);
    times[i] = (performance.now() - t) * 1000;
  }
  times.sort();
  const out = { calls: CALLS, medianUs: percentile(times, 0.5), p95Us: percentile(times, 0.95) };
  if (stats.items) out.itemsPerCall = stats.items / CALLS;
  if (stats.partial) out.partialCalls = stats.partial;
  return out;
}

async function measureOnce(step, graph) {
  const t = performance.now();
  const result = await step.once(graph);
  if (result && result.ok === false) throw new Error(`${step.name} failed: ${JSON.stringify(result)}`);
  return { ms: ms(t) };
}

const rssBeforeOpen = process.memoryUsage().rss;
const openStarted = performance.now();
const graph = await CapabilityGraph.open({
  providers: [{ providerId: PROVIDER_ID, authority: { kind: 'file', rootDir: dir, definitionLayout: 'directory' } }],
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
