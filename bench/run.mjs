// `npm run bench`: generated providers of several sizes, each measured in a few fresh worker
// processes; prints medians across processes and writes bench/results/latest.json.
//
//   BENCH_SIZES=1000,10000   sizes to run (default 1000,10000,100000)
//   BENCH_RUNS=5             worker processes per size

import { execFile } from 'node:child_process';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generate, GENERATOR_VERSION } from './generate.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const sizes = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 5);

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** The median of every numeric leaf across runs, keeping the shape of one run's result. */
function medianOf(results) {
  const [first] = results;
  if (typeof first === 'number') return median(results);
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return first;
  return Object.fromEntries(Object.keys(first).map((k) => [k, medianOf(results.map((r) => r[k]))]));
}

async function measure(dir, n, run) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(here, 'worker.mjs'), dir, String(n), String(run + 1)],
    { maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout);
}

/** The engine binary the workers will load; `npm test` leaves a debug build in its place. */
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
const report = { generatorVersion: GENERATOR_VERSION, machine, binary, date: new Date().toISOString(), sizes: {} };
for (const n of sizes) {
  const dir = await generate(n, { log: (m) => console.log(`  ${m}`) });
  const results = [];
  // One after another: parallel workers would compete for the same cores and disk.
  for (let run = 0; run < runs; run++) results.push(await measure(dir, n, run));
  report.sizes[n] = { runs, median: medianOf(results), results };
  const m = report.sizes[n].median;
  console.log(`  ${n}: ${runs} runs, open ${m.openMs.toFixed(0)} ms, peak RSS ${m.peakRssMiB.toFixed(0)} MiB`);
}

// One row per measurement, one column per size: new steps add rows, not columns.
const rows = [['open (ms)', (s) => s.median.openMs.toFixed(1)]];
const LABELS = {
  medianUs: 'median (µs/call)',
  p95Us: 'p95 (µs/call)',
  itemsPerCall: 'items/call',
  partialCalls: 'partial results',
  ms: '(ms)',
  pages: 'pages',
  mibPerSecond: '(MiB/s)',
};
const digits = (key) => (['ms', 'itemsPerCall', 'mibPerSecond'].includes(key) ? 1 : 0);
const stepNames = [...new Set(sizes.flatMap((n) => Object.keys(report.sizes[n].median.steps)))];
for (const name of stepNames) {
  const figures = new Set(sizes.flatMap((n) => Object.keys(report.sizes[n].median.steps[name] ?? {})));
  for (const key of Object.keys(LABELS).filter((k) => figures.has(k))) {
    // Counters that stayed 0 everywhere (partial results, normally) are not worth a row.
    if (sizes.every((n) => !report.sizes[n].median.steps[name]?.[key])) continue;
    rows.push([`${name} ${LABELS[key]}`, (s) => s.median.steps[name]?.[key]?.toFixed(digits(key)) ?? '–']);
  }
}
rows.push(
  ['RSS before open (MiB)', (s) => s.median.rssBeforeOpenMiB.toFixed(1)],
  ['RSS after open (MiB)', (s) => s.median.rssAfterOpenMiB.toFixed(1)],
  ['peak RSS (MiB)', (s) => s.median.peakRssMiB.toFixed(1)],
);

const header = ['capabilities', ...sizes.map(String)];
const table = [header, ...rows.map(([label, cell]) => [label, ...sizes.map((n) => cell(report.sizes[n]))])];
const widths = header.map((_, c) => Math.max(...table.map((r) => r[c].length)));
const line = (r) => r.map((cell, c) => (c ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join('  ');
console.log(`\n${line(table[0])}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
for (const r of table.slice(1)) console.log(line(r));

const skipped = [...new Set(sizes.flatMap((n) => report.sizes[n].results[0].skipped))];
if (skipped.length) console.log(`\nnot measured (no such method yet): ${skipped.join(', ')}`);
console.log(`medians across ${runs} worker processes per size; per-call figures are the median/p95 of 1,000 calls within a process`);

const out = path.join(here, 'results', 'latest.json');
await mkdir(path.dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
console.log(`\n${path.relative(process.cwd(), out)} written in ${((performance.now() - started) / 1000).toFixed(0)} s total`);
