// `npm run bench`: generated providers of several sizes, each measured in a few fresh worker
// processes; prints medians across processes and writes bench/results/latest.json.
// bench/README.md says what every row measures and how to reproduce it.
//
//   npm run bench -- --scale 1000,10000   sizes to run (default 1000,10000,100000; BENCH_SIZES)
//   npm run bench -- --providers 1000x1000 also K providers of N capabilities each
//   npm run bench -- --layout legacy       the definition layout(s): directory (default), legacy, or both
//   BENCH_RUNS=5                           worker processes per size and kind
//   BENCH_RELOAD=0                         skip the memory/reload workers
//   BENCH_CACHE=/path                      where generated trees live (default os.tmpdir())

import { execFile } from 'node:child_process';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { canonicalBytes, generate, GENERATOR_VERSION, legacyTree, PROVIDER_ID, reloadTree } from './generate.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({ options: { scale: { type: 'string' }, providers: { type: 'string' }, layout: { type: 'string' } } });
const sizes = (args.scale ?? process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number).filter((n) => n > 0);
const runs = Number(process.env.BENCH_RUNS ?? 5);
const withReload = process.env.BENCH_RELOAD !== '0';

const layouts = (args.layout ?? 'directory').split(',');
if (layouts.some((l) => !['directory', 'legacy'].includes(l))) throw new Error(`--layout: directory, legacy or both, not ${args.layout}`);

/** The configurations measured: one provider of each size, then K providers of N each, in
 *  each layout (legacy columns say so). */
const configs = [];
for (const layout of layouts) {
  const suffix = layout === 'legacy' ? ' legacy' : '';
  for (const n of sizes) configs.push({ label: `${n}${suffix}`, n, providers: 1, perProvider: n, layout });
  for (const shape of (args.providers ?? '').split(',').filter(Boolean)) {
    const [k, per] = shape.split('x').map(Number);
    configs.push({ label: `${k}×${per}${suffix}`, n: k * per, providers: k, perProvider: per, layout });
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** The median of every numeric leaf across runs, keeping the shape of one run's result. */
function medianOf(results) {
  const [first] = results;
  if (typeof first === 'number') return median(results.filter((r) => typeof r === 'number'));
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return first;
  return Object.fromEntries(Object.keys(first).map((k) => [k, medianOf(results.map((r) => r?.[k]))]));
}

const run = async (script, argv, flags = []) => {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [...flags, path.join(here, script), ...argv], { maxBuffer: 1 << 24 });
    return JSON.parse(stdout);
  } catch (error) {
    // The command line of a thousand providers is long; what the worker said is what matters.
    throw new Error(`${script} failed:\n${error.stderr ?? error.message}`);
  }
};

/** Median of `runs` fresh processes of `script`, one after another (parallel processes would
 *  compete for the same cores and disk). */
async function measure(script, argv, flags) {
  const results = [];
  for (let r = 0; r < runs; r++) results.push(await run(script, typeof argv === 'function' ? argv(r) : argv, flags));
  return { median: medianOf(results), results };
}

/** The binary the workers will load; `npm test` leaves a debug build in its place. */
async function engineBinary() {
  const root = path.join(here, '..');
  const name = (await readdir(root)).find((f) => f.endsWith('.node'));
  if (!name) return null;
  const { size, mtime } = await stat(path.join(root, name));
  return { file: name, sizeMiB: +(size / 2 ** 20).toFixed(1), built: mtime.toISOString() };
}

const machine = {
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model,
  memoryGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  // Other work on the machine (a build, a test run) shows up directly in these timings.
  loadAverage1m: +os.loadavg()[0].toFixed(2),
};
const binary = await engineBinary();
console.log(`capability-graph bench — ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, node ${machine.node} (${machine.platform}), load ${machine.loadAverage1m}`);
if (binary) console.log(`engine: ${binary.file}, ${binary.sizeMiB} MiB, built ${binary.built}`);
// Release builds are stripped and small; tens of MiB means debug info, i.e. unoptimised code.
if (binary?.sizeMiB > 10) console.log('WARNING: this looks like a debug build; `npm run bench` builds release first');

const started = performance.now();
const report = { generatorVersion: GENERATOR_VERSION, machine, binary, date: new Date().toISOString(), configs: {} };
const log = (m) => console.log(`  ${m}`);
for (const config of configs) {
  // Single providers use the generator's defaults, so every size is one cached tree.
  const names = Array.from({ length: config.providers }, (_, k) =>
    config.providers === 1
      ? { providerId: PROVIDER_ID, name: `n${config.n}` }
      : { providerId: `bench.p${k}`, name: `m${config.providers}x${config.perProvider}/p${k}`, seed: 0xc0ffee ^ config.perProvider ^ (k * 0x9e3779b1) });
  const legacy = config.layout === 'legacy';
  const providers = [];
  const generated = [];
  for (const o of names) {
    generated.push(await generate(config.perProvider, { ...o, log }));
    providers.push({ providerId: o.providerId, rootDir: legacy ? await legacyTree(generated.at(-1), { log }) : generated.at(-1) });
  }
  const dirs = providers.map((p) => p.rootDir);
  const floor = await measure('floor.mjs', legacy ? ['--legacy', ...dirs] : dirs);
  // Both layouts hold the same definitions.
  const canonical = await canonicalBytes(generated);
  const { layout } = config;
  const main = await measure('worker.mjs', (r) => [JSON.stringify({ providers, perProvider: config.perProvider, seed: r + 1, layout })], ['--expose-gc']);
  let memory = null;
  if (withReload) {
    const trees = [];
    for (const o of names) trees.push({ providerId: o.providerId, ...(await reloadTree(config.perProvider, { ...o, log, legacy })) });
    memory = await measure('reload-worker.mjs', [JSON.stringify({ providers: trees, layout })], ['--expose-gc']);
  }
  report.configs[config.label] = { ...config, canonicalBytes: canonical, floor, main, memory };
  const m = main.median;
  console.log(`  ${config.label}: ${runs} runs, open ${m.openMs.toFixed(0)} ms (read floor ${floor.median.ms.toFixed(0)} ms), peak RSS ${m.peakRssMiB.toFixed(0)} MiB`);
}

const labels = configs.map((c) => c.label);
const cfg = (label) => report.configs[label];
const fixed = (v, d = 1) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(d) : '–');
const perCap = (c, bytes) => (typeof bytes === 'number' ? bytes / c.n : null);

// One row per measurement, one column per configuration; each floor sits right below the
// figure it bounds.
const rows = [
  ['open (ms)', (c) => fixed(c.main.median.openMs)],
  ['  floor: read every definition file (ms)', (c) => fixed(c.floor.median.ms)],
  ['open: longest JS-thread hold (ms)', (c) => fixed(c.main.median.openHeldMs)],
];
const LABELS = {
  medianUs: 'median (µs/call)',
  floorUs: '  floor: empty napi call + JSON.parse (µs)',
  p95Us: 'p95 (µs/call)',
  answerBytes: 'answer (bytes)',
  itemsPerCall: 'items/call',
  partialCalls: 'partial results',
  ms: '(ms)',
  pages: 'pages',
  mibPerSecond: '(MiB/s)',
  heldMs: 'longest JS-thread hold (ms)',
  smallReadMs: ': a small read meanwhile (ms)',
  matchMs: ': a match meanwhile (ms)',
  largeReadsMs: ': all eight first pages (ms)',
};
const digits = (key) => (['ms', 'itemsPerCall', 'mibPerSecond', 'heldMs', 'floorUs', 'smallReadMs', 'matchMs', 'largeReadsMs'].includes(key) ? 1 : 0);
const steps = (c) => c.main.median.steps;
const stepNames = [...new Set(labels.flatMap((l) => Object.keys(steps(cfg(l)))))];
for (const name of stepNames) {
  const figures = new Set(labels.flatMap((l) => Object.keys(steps(cfg(l))[name] ?? {})));
  for (const key of Object.keys(LABELS).filter((k) => figures.has(k))) {
    // Counters that stayed 0 everywhere (partial results, normally) are not worth a row.
    if (labels.every((l) => !steps(cfg(l))[name]?.[key])) continue;
    const label = LABELS[key].startsWith('  ') ? LABELS[key] : `${name} ${LABELS[key]}`;
    rows.push([label, (c) => fixed(steps(c)[name]?.[key], digits(key))]);
  }
}
const mem = (c) => c.memory?.median ?? {};
rows.push(
  ['close (ms)', (c) => fixed(c.main.median.closeMs)],
  ['close: longest JS-thread hold (ms)', (c) => fixed(c.main.median.closeHeldMs)],
  ['RSS before open (MiB)', (c) => fixed(c.main.median.rssBeforeOpenMiB)],
  ['RSS after open, after GC, no index (MiB)', (c) => fixed(mem(c).rssAfterOpenMiB)],
  ['RSS with the lexical index built, after GC (MiB)', (c) => fixed(c.main.median.rssWithIndexMiB)],
  ['lexical index bytes/capability, engine accounting', (c) => fixed(perCap(c, c.main.median.engineIndexBytes), 0)],
  ['snapshot bytes/capability, by RSS delta', (c) => fixed(perCap(c, (mem(c).rssAfterOpenMiB - mem(c).rssBeforeOpenMiB) * 2 ** 20), 0)],
  ['snapshot bytes/capability, engine accounting', (c) => fixed(perCap(c, mem(c).engineBytes), 0)],
  ['  canonical definition bytes/capability', (c) => fixed(perCap(c, c.canonicalBytes), 0)],
  ['reload changing every definition (ms)', (c) => fixed(mem(c).reloadChangedMs)],
  ['  floor: read every definition file (ms)', (c) => fixed(c.floor.median.ms)],
  ['reload changing every definition: longest JS-thread hold (ms)', (c) => fixed(mem(c).reloadHeldMs)],
  ['peak RSS during that reload (MiB)', (c) => fixed(mem(c).reloadPeakRssMiB)],
  ['  ÷ RSS after open', (c) => fixed(mem(c).reloadPeakRssMiB / mem(c).rssAfterOpenMiB, 2)],
  ['peak RSS, whole run with index (MiB)', (c) => fixed(c.main.median.peakRssMiB)],
  ['semantic: vectors built, first match (ms)', (c) => fixed(c.main.median.semanticBuildMs)],
  ['semantic: vector bytes/capability, engine accounting', (c) => fixed(perCap(c, c.main.median.semanticVectorBytes), 0)],
);

const header = ['capabilities', ...labels];
const table = [header, ...rows.map(([label, cell]) => [label, ...labels.map((l) => cell(cfg(l)))])];
const widths = header.map((_, c) => Math.max(...table.map((r) => r[c].length)));
const line = (r) => r.map((cell, c) => (c ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join('  ');
console.log(`\n${line(table[0])}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
for (const r of table.slice(1)) console.log(line(r));

const skipped = [...new Set(labels.flatMap((l) => cfg(l).main.results[0].skipped))];
if (skipped.length) console.log(`\nnot measured (no such method yet): ${skipped.join(', ')}`);
console.log(`medians across ${runs} worker processes per configuration; per-call figures are the median/p95 of 1,000 calls within a process; "–": not available (see bench/README.md)`);

const out = path.join(here, 'results', 'latest.json');
await mkdir(path.dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
console.log(`\n${path.relative(process.cwd(), out)} written in ${((performance.now() - started) / 1000).toFixed(0)} s total`);
