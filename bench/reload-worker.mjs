// One memory measurement process: opens the generated providers without an executor (so no
// lexical index exists), takes RSS after a GC and the engine's own account of the snapshot,
// then swaps every definition for its changed variant and reloads, noting the peak RSS of the
// reload alone. Prints one JSON line.
//
//   node --expose-gc bench/reload-worker.mjs '<spec JSON>'
//
// spec: { providers: [{ providerId, root, changed }], layout? } (see reloadTree in generate.mjs).

import * as cg from '@devcodex/capability-graph';
import { swapDefinitions } from './generate.mjs';
import { engineStats, gcRssMiB, peakRss } from './memory.mjs';
import { holdMonitor, yieldToLoop } from './loop.mjs';

const spec = JSON.parse(process.argv[2]);
const heldMs = holdMonitor();

const rssBeforeOpenMiB = gcRssMiB();
let started = performance.now();
const graph = await cg.CapabilityGraph.open({
  providers: spec.providers.map(({ providerId, root }) => ({ providerId, authority: { kind: 'file', rootDir: root, definitionLayout: spec.layout ?? 'directory' } })),
});
const openMs = performance.now() - started;
const rssAfterOpenMiB = gcRssMiB();
const stats = await engineStats(graph);

for (const tree of spec.providers) await swapDefinitions(tree);
const peak = peakRss();
await yieldToLoop();
heldMs();
peak.start();
started = performance.now();
const report = await graph.reload();
const reloadMs = performance.now() - started;
const { peakMiB, sinceStart } = peak.stop();
await yieldToLoop();
const reloadHeldMs = heldMs();
if (!report.ok || report.providers.some((p) => !p.previousStaticRevision || p.previousStaticRevision === p.staticRevision)) throw new Error(`reload did not change every provider: ${JSON.stringify(report).slice(0, 500)}`);
const rssAfterReloadMiB = gcRssMiB();
await graph.close();

process.stdout.write(`${JSON.stringify({
  openMs,
  rssBeforeOpenMiB,
  rssAfterOpenMiB,
  engineBytes: stats?.bytes ?? null,
  reloadChangedMs: reloadMs,
  reloadHeldMs,
  reloadPeakRssMiB: peakMiB,
  reloadPeakSinceStart: sinceStart,
  rssAfterReloadMiB,
})}\n`);
