// Memory figures shared by the bench workers.

import { readFileSync, writeFileSync } from 'node:fs';

/** RSS in MiB after a full garbage collection (workers run with --expose-gc). */
export function gcRssMiB() {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().rss / 2 ** 20;
}

/**
 * The engine's own account of its memory: `graph[Symbol.for('capability-graph.stats')]()` gives,
 * per provider, the heap bytes of its snapshot and of its lexical index once built. Summed over
 * providers; `null` when the graph has no such method.
 */
export async function engineStats(graph) {
  const method = graph[Symbol.for('capability-graph.stats')];
  if (typeof method !== 'function') return null;
  const stats = await method.call(graph);
  const sum = (key) => stats.providers.reduce((total, p) => total + (p[key] ?? 0), 0);
  return { bytes: sum('snapshotBytes'), indexBytes: sum('lexicalIndexBytes'), stats };
}

/**
 * Peak RSS over a stretch of work, in MiB: on Linux the kernel's high-water mark, reset at
 * `start()` (`/proc/self/clear_refs`) and read at `stop()`; elsewhere the process-wide maxRSS,
 * which may include earlier peaks (marked `sinceStart: false`).
 */
export function peakRss() {
  let reset = false;
  return {
    start() {
      try {
        writeFileSync('/proc/self/clear_refs', '5');
        reset = true;
      } catch {
        reset = false;
      }
    },
    stop() {
      if (reset) {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
        if (hwm) return { peakMiB: Number(hwm[1]) / 1024, sinceStart: true };
      }
      return { peakMiB: process.resourceUsage().maxRSS / 1024, sinceStart: false };
    },
  };
}
