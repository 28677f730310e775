// Evaluates tool search on catalogs like a host's: a real multi-server MCP catalog
// (bench/tool-catalog/: one provider per server) with multi-step tasks and single-step requests
// written blind, and the 74 requests on examples/tool-search's 150 tools; each alone and inside
// the generated 10k catalog (bench/generate.mjs); per method: the pinned BM25 (recorded), the
// lexical executor, the semantic executor, and the MiniLM cosine alone (the semantic executor's
// evaluation option `signals: 'dense'`).
//
//   npm run eval:tools                        every method, both halves, both sizes; tuning misses
//   npm run eval:tools -- --split=heldout     one half (held-out misses are never listed)
//   npm run eval:tools -- --methods=lexical,semantic   --sizes=catalog   --json
//   npm run eval:tools -- --baseline          runs the pinned BM25 (Python, a private venv) and
//                                             records it in bench/tool-search-bm25.json
//   npm run eval:tools -- --modes=rank        one match mode (default: rank, then accept beside it)
//   --catalog=FILE --tasks=FILE               other data files (a stand-in)
//
// Tool search asks in rank mode; accept mode is reported beside it (an executor's `no_match` is
// a miss, and the no-match measures are about accept mode).
// bench/README.md says what each measure is. The exit code is 0 unless the engine fails: this is
// a measurement, not a test (__test__/tool-search-floors.test.mjs holds the floors).

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as cg from '@devcodex/capability-graph';
import { RECORDING, SETTINGS, readRecording, runBm25, writeRecording } from './bm25-baseline.mjs';
import {
  catalogProviders, corpora, keyOf, loadData, loadItems, providerDocuments, sha256, syntheticDefinition, syntheticRoot, toolSearchProvider,
} from './tool-search-data.mjs';

export const METHODS = ['bm25', 'lexical', 'semantic', 'dense'];
export const SIZES = ['catalog', '10k'];
export const SPLITS = ['tune', 'heldout'];
const FIRST_MATCH_TIMEOUT_MS = 600_000;
export const MODES = ['rank', 'accept'];

/** The executor of a method (BM25 is recorded, not run here). */
function executorOf(method) {
  if (method === 'lexical') return cg.lexicalExecutor();
  if (method === 'semantic') return cg.semanticExecutor();
  if (method === 'dense') return cg.semanticExecutor({ signals: 'dense' });
  throw new Error(`no executor for ${method}`);
}

/** Everything the methods are asked: data, items, providers, corpora. */
export async function prepare({ files = {}, sizes = SIZES } = {}) {
  const data = await loadData(files);
  const items = await loadItems(data);
  const providers = {
    catalog: data.catalog === undefined ? [] : catalogProviders(data.catalog),
    'tool-search': [await toolSearchProvider()],
  };
  // A gold tool the catalog lacks would count as a miss of every method: refused instead.
  const known = new Set(Object.values(providers).flat().flatMap((p) => [...p.toolNames.values()].map((tool) => `${p.server}/${tool}`)));
  for (const item of items) {
    const unknown = item.gold.find((g) => !known.has(g));
    if (unknown !== undefined) throw new Error(`${item.set} ${item.id}: gold tool ${unknown} is in no catalog`);
  }
  const synthetic = sizes.includes('10k') ? await syntheticRoot() : undefined;
  return { data, items, providers, synthetic, corpora: corpora(data, sizes) };
}

/** The graph's answer as keys (`<server>/<tool>`, or the qualified ID of a generated capability). */
async function ask(graph, byProvider, item, mode, timeoutMs = undefined) {
  const started = performance.now();
  const answer = await graph.match({ intent: item.request, limit: item.limit, mode, timeoutMs });
  const ms = performance.now() - started;
  const got = answer.matches.map((m) => {
    const p = byProvider.get(m.id.providerId);
    return p === undefined ? m.qualifiedId : keyOf(p, m.id.capabilityId);
  });
  return { status: answer.status, got, ms };
}

/** The vectors file of the generated catalog, made once by `capability-graph embed` (as a host ships it). */
function ensureVectors(root) {
  const dir = path.join(root, 'vectors');
  if (existsSync(dir) && readdirSync(dir, { recursive: true }).some((f) => String(f).endsWith('.bin'))) return;
  console.error(`embedding the generated catalog once into ${dir} (minutes)`);
  const cli = fileURLToPath(new URL('../bin/capability-graph.cjs', import.meta.url));
  const out = spawnSync(process.execPath, [cli, 'embed', root], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (out.status !== 0) throw new Error('capability-graph embed of the generated catalog failed');
}

/** One method over one corpus: a row per item asked, the open → first answer time. */
async function runCorpus(method, corpus, ctx) {
  const providers = ctx.providers[corpus.base];
  const sources = providers.map((p) => ({ definition: p.definition }));
  if (corpus.synthetic) {
    if (method !== 'lexical') ensureVectors(ctx.synthetic);
    sources.push({ providerId: 'bench.synthetic', authority: { kind: 'file', rootDir: ctx.synthetic, definitionLayout: 'directory' } });
  }
  const byProvider = new Map(providers.map((p) => [p.providerId, p]));
  const asked = ctx.items.filter((i) => corpus.sets.includes(i.set));
  const started = performance.now();
  const graph = await cg.CapabilityGraph.open({ providers: sources, executor: executorOf(method) });
  const rows = [];
  let firstMs;
  try {
    for (const item of asked) {
      let answer;
      if (firstMs === undefined) {
        // The first answer waits for the index (and the vectors); timed as such, then asked warm.
        await ask(graph, byProvider, item, ctx.mode, FIRST_MATCH_TIMEOUT_MS);
        firstMs = performance.now() - started;
      }
      answer = await ask(graph, byProvider, item, ctx.mode);
      rows.push({ method, corpus: corpus.name, ...item, ...answer });
    }
  } finally {
    await graph.close();
  }
  return { rows, firstMs };
}

// --- Measures --------------------------------------------------------------------------------

const pct = (num, den) => (den === 0 ? null : Math.round((num / den) * 1000) / 10);
const mean = (values) => (values.length === 0 ? null : Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 1000) / 10);
const percentile = (sorted, q) => (sorted.length === 0 ? null : Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] * 100) / 100);

const hits = (row, k) => row.gold.filter((g) => row.got.slice(0, k).includes(g)).length;
const rankOf = (row) => row.got.indexOf(row.gold[0]);

/**
 * The figures of one method over the rows of one corpus and half: per set, the measures of
 * bench/README.md. `answersNoMatch` is false for a method that never answers no_match (BM25).
 */
export function figures(rows, answersNoMatch = true) {
  const of = (set) => rows.filter((r) => r.set === set);
  const out = {};
  const multi = of('multi');
  if (multi.length) {
    out.multi = {
      n: multi.length,
      recall5: mean(multi.map((r) => hits(r, 5) / r.gold.length)),
      recall10: mean(multi.map((r) => hits(r, 10) / r.gold.length)),
      any5: pct(multi.filter((r) => hits(r, 5) > 0).length, multi.length),
    };
  }
  for (const set of ['single', 'requests']) {
    const list = of(set);
    if (list.length === 0) continue;
    const within = (k) => list.filter((r) => rankOf(r) >= 0 && rankOf(r) < k).length;
    out[set] = { n: list.length, top1: pct(within(1), list.length), top3: pct(within(3), list.length) };
  }
  const none = of('noMatch');
  if (none.length) {
    // Over the requests that should match one tool and those that should match nothing.
    const asked = [...of('single'), ...of('requests'), ...none];
    const answers = asked.filter((r) => r.status === 'no_match').length;
    const correct = none.filter((r) => r.status === 'no_match').length;
    out.noMatch = answersNoMatch
      ? { n: none.length, precision: pct(correct, answers), recall: pct(correct, none.length) }
      : { n: none.length, precision: null, recall: null };
  }
  return out;
}

/** Figures per method, corpus and half. */
function report(rows, methods, corpusNames, splits) {
  const out = [];
  for (const method of methods) {
    for (const corpus of corpusNames) {
      for (const split of splits) {
        const subset = rows.filter((r) => r.method === method && r.corpus === corpus && r.split === split);
        if (subset.length) out.push({ method, corpus, split, ...figures(subset, method !== 'bm25') });
      }
    }
  }
  return out;
}

// --- BM25: the export and the recording --------------------------------------------------------

/** What the pinned BM25 is given: each collection's documents, each corpus's collections, the requests. */
export async function baselineInput(ctx) {
  const collections = {};
  for (const [name, providers] of Object.entries(ctx.providers)) collections[name] = providers.flatMap(providerDocuments);
  if (ctx.synthetic !== undefined) {
    const definition = await syntheticDefinition(ctx.synthetic);
    collections.synthetic = providerDocuments({ providerId: 'bench.synthetic', definition, description: '' });
  }
  const corpora = Object.fromEntries(ctx.corpora.map((c) => [c.name, c.synthetic ? [c.base, 'synthetic'] : [c.base]]));
  // BM25 has no threshold: it is not asked the no-match intents.
  const queries = ctx.corpora.flatMap((c) => ctx.items.filter((i) => i.set !== 'noMatch' && c.sets.includes(i.set)).map((i) => ({ corpus: c.name, key: `${i.set}:${i.id}`, text: i.request })));
  return { k: SETTINGS.k, collections, corpora, queries };
}

/**
 * The SHA-256 of each corpus's part of the input: its documents' keys and texts and its requests.
 * A recording serves a corpus only while that hash stands.
 */
export function corpusHashes(input) {
  return Object.fromEntries(Object.entries(input.corpora).map(([corpus, collections]) => [
    corpus,
    sha256(JSON.stringify({ k: input.k, documents: collections.map((c) => input.collections[c]), queries: input.queries.filter((q) => q.corpus === corpus) })),
  ]));
}

/** BM25's rows from a recording's rankings, for the corpora it was recorded for. */
function bm25Rows(recording, ctx, corpusNames) {
  const rows = [];
  for (const c of ctx.corpora.filter((x) => corpusNames.includes(x.name))) {
    const ranked = recording.rankings[c.name] ?? {};
    for (const item of ctx.items.filter((i) => i.set !== 'noMatch' && c.sets.includes(i.set))) {
      const got = (ranked[`${item.set}:${item.id}`] ?? []).slice(0, item.limit);
      rows.push({ method: 'bm25', corpus: c.name, ...item, status: 'matched', got, ms: null });
    }
  }
  return rows;
}

/** The figures of a recording's rankings, per corpus and half. */
export function recordedFigures(recording, ctx) {
  const corpusNames = ctx.corpora.map((c) => c.name);
  return report(bm25Rows(recording, ctx, corpusNames), ['bm25'], corpusNames, SPLITS).map(({ method, ...f }) => f);
}

/** Runs the pinned BM25 over every corpus and records its rankings and figures, keyed by each corpus's SHA-256. */
export async function recordBaseline(files) {
  const ctx = await prepare({ files, sizes: SIZES });
  const input = await baselineInput(ctx);
  const { versions, rankings } = await runBm25(input, { log: (m) => console.error(m) });
  const recording = { inputSha256: corpusHashes(input), data: ctx.data.hashes, bm25: { ...SETTINGS, versions }, rankings };
  recording.figures = recordedFigures(recording, ctx);
  // Figures before rankings: the file is read by people too.
  const { rankings: r, ...head } = recording;
  await writeRecording({ about: 'The pinned BM25 of npm run eval:tools (bench/README.md), recorded by npm run eval:tools -- --baseline.', ...head, rankings: r });
}

// --- The evaluation --------------------------------------------------------------------------

/**
 * Every method's rows and figures. `bm25` comes from the recording, and only when it was
 * recorded for this very input (else `bm25.recorded` is false and it is left out).
 */
export async function evaluate({ methods = METHODS, sizes = SIZES, splits = SPLITS, files = {}, baseline = false, mode = 'accept' } = {}) {
  if (baseline && methods.includes('bm25')) await recordBaseline(files);
  const full = await prepare({ files, sizes });
  const hashes = corpusHashes(await baselineInput(full));
  const recording = await readRecording();
  const recorded = Object.keys(hashes).filter((c) => recording?.inputSha256?.[c] === hashes[c]);
  const bm25 = { file: path.basename(RECORDING), recorded, settings: recording?.bm25 ?? SETTINGS };
  const ctx = { ...full, mode, items: full.items.filter((i) => splits.includes(i.split)) };
  const rows = [];
  const first = [];
  const unavailable = {};
  const ran = [];
  for (const method of methods) {
    if (method === 'bm25') {
      if (recorded.length) {
        rows.push(...bm25Rows(recording, ctx, recorded));
        ran.push(method);
      }
      const missing = Object.keys(hashes).filter((c) => !recorded.includes(c));
      if (missing.length) unavailable.bm25 = `not recorded for this data: ${missing.join(', ')}`;
      continue;
    }
    try {
      for (const corpus of ctx.corpora) {
        const out = await runCorpus(method, corpus, ctx);
        rows.push(...out.rows);
        first.push({ method, corpus: corpus.name, firstMs: Math.round(out.firstMs) });
      }
      ran.push(method);
    } catch (error) {
      // A missing model package is a fact of this machine, not a failure of the measurement.
      if (error?.code !== 'CG_MODEL_UNAVAILABLE') throw error;
      unavailable[method] = `unavailable: its model package ${error.details?.package ?? ''} is not installed`;
      for (let i = rows.length - 1; i >= 0; i--) if (rows[i].method === method) rows.splice(i, 1);
    }
  }
  const corpusNames = ctx.corpora.map((c) => c.name);
  const latency = [];
  for (const method of ran.filter((m) => m !== 'bm25')) {
    for (const corpus of corpusNames) {
      const ms = rows.filter((r) => r.method === method && r.corpus === corpus).map((r) => r.ms).sort((a, b) => a - b);
      latency.push({ method, corpus, calls: ms.length, p50Ms: percentile(ms, 0.5), p95Ms: percentile(ms, 0.95), firstMs: first.find((f) => f.method === method && f.corpus === corpus)?.firstMs ?? null });
    }
  }
  const sizesOf = Object.fromEntries(ctx.corpora.map((c) => {
    const tools = ctx.providers[c.base].reduce((n, p) => n + p.definition.capabilities.length, 0);
    return [c.name, { providers: ctx.providers[c.base].length + (c.synthetic ? 1 : 0), capabilities: tools + (c.synthetic ? 10000 : 0) }];
  }));
  return {
    mode,
    files: Object.fromEntries(Object.entries(ctx.data.paths).map(([k, f]) => [k, path.relative(process.cwd(), f).startsWith('..') ? f : path.relative(process.cwd(), f)])),
    data: { ...ctx.data.hashes, corpora: hashes },
    cuts: Object.values(ctx.providers).flat().flatMap((p) => p.cuts ?? []),
    bm25,
    methods: ran,
    unavailable,
    corpora: sizesOf,
    report: report(rows, ran, corpusNames, splits),
    latency,
    rows,
  };
}

/** What a tuning row missed: multi-step gold not in the top 10, a single request's tool not in the top 3, a no-match answered. */
function missOf(r) {
  if (r.set === 'multi') {
    const lost = r.gold.filter((g) => !r.got.includes(g));
    return lost.length ? `missing ${lost.join(', ')}` : null;
  }
  if (r.set === 'noMatch') return r.status === 'no_match' || r.method === 'bm25' ? null : `answered ${r.got.slice(0, 3).join(', ')}`;
  const rank = r.got.indexOf(r.gold[0]);
  return rank >= 0 && rank < 3 ? null : `wanted ${r.gold[0]}`;
}

const ROWS = [
  ['multi', 'recall5', 'multi-step Recall@5'],
  ['multi', 'recall10', 'multi-step Recall@10'],
  ['multi', 'any5', 'multi-step any gold in top 5'],
  ['single', 'top1', 'single top-1'],
  ['single', 'top3', 'single top-3'],
  ['requests', 'top1', '74 requests top-1'],
  ['requests', 'top3', '74 requests top-3'],
  ['noMatch', 'precision', 'no-match precision'],
  ['noMatch', 'recall', 'no-match recall'],
];

export function printText(result, splits) {
  const { data, bm25 } = result;
  console.log(`tool search — ${result.mode} mode${result.mode === 'rank' ? '' : ' (beside rank mode, what tool search asks)'}`);
  console.log('data SHA-256');
  for (const [name, file] of Object.entries(result.files)) console.log(`  ${file.padEnd(40)} ${data[name] ?? 'absent'}`);
  for (const [corpus, hash] of Object.entries(data.corpora)) console.log(`  ${`texts and requests of ${corpus}`.padEnd(40)} ${hash}`);
  const s = bm25.settings;
  const where = bm25.recorded.length ? `recorded for ${bm25.recorded.join(', ')} (bench/${bm25.file})` : 'not recorded for this data';
  console.log(`BM25: bm25s${s.versions ? ` ${s.versions.bm25s}` : ''} ${s.method} k1 ${s.k1} b ${s.b}, stop words ${s.stopwords}, ${s.stemmer} — ${where}`);
  for (const c of result.cuts) console.log(`cut to providerFromTools' budget: ${c.server}/${c.tool} ${c.field} (${c.bytes} bytes, limit ${c.limit})`);
  for (const [m, why] of Object.entries(result.unavailable)) console.log(`${m}: ${why}${m === 'bm25' ? ' (npm run eval:tools -- --baseline records it)' : ''}`);
  const methods = result.methods;
  const fmt = (v) => (v === null || v === undefined ? '-' : v.toFixed(1)).padStart(9);
  for (const split of splits) {
    for (const [corpus, size] of Object.entries(result.corpora)) {
      const of = (m) => result.report.find((r) => r.method === m && r.corpus === corpus && r.split === split);
      const any = methods.map(of).find(Boolean);
      if (!any) continue;
      console.log(`\n${split === 'heldout' ? 'held-out' : 'tuning'} · ${corpus} (${size.capabilities} capabilities, ${size.providers} providers)`);
      console.log(`${''.padEnd(30)} ${'n'.padStart(4)}${methods.map((m) => m.padStart(9)).join('')}`);
      for (const [set, key, label] of ROWS) {
        const n = methods.map(of).find((f) => f?.[set])?.[set].n;
        if (n !== undefined) console.log(`${label.padEnd(30)} ${String(n).padStart(4)}${methods.map((m) => fmt(of(m)?.[set]?.[key])).join('')}`);
      }
    }
  }
  if (result.latency.length) {
    console.log('\nper match call, warm (ms); first = open → first match answered (ms)');
    console.log(`${'method'.padEnd(10)} ${'corpus'.padEnd(16)} ${'calls'.padStart(6)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'first'.padStart(9)}`);
    for (const l of result.latency) console.log(`${l.method.padEnd(10)} ${l.corpus.padEnd(16)} ${String(l.calls).padStart(6)} ${String(l.p50Ms).padStart(8)} ${String(l.p95Ms).padStart(8)} ${String(l.firstMs).padStart(9)}`);
  }
}

async function main(argv) {
  const arg = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const list = (name, all) => {
    const value = arg(name);
    const picked = value === undefined || value === 'all' ? all : value.split(',');
    const bad = picked.find((x) => !all.includes(x));
    if (bad !== undefined) throw new Error(`--${name}: ${JSON.stringify(bad)} is not one of ${all.join(', ')}`);
    return picked;
  };
  const splitArg = arg('split') ?? 'all';
  const splits = splitArg === 'all' ? SPLITS : list('split', SPLITS);
  const files = {};
  if (arg('catalog')) files.catalog = path.resolve(arg('catalog'));
  if (arg('tasks')) files.tasks = path.resolve(arg('tasks'));
  const modes = list('modes', MODES);
  const results = [];
  for (const [i, mode] of modes.entries()) {
    const baseline = i === 0 && argv.includes('--baseline');
    results.push(await evaluate({ methods: list('methods', METHODS), sizes: list('sizes', SIZES), splits, files, baseline, mode }));
  }
  // Misses are listed for the tuning half only: reading held-out misses would be tuning on them.
  const missesOf = (result) => result.rows.filter((r) => r.split === 'tune').map((r) => ({ r, why: missOf(r) })).filter((m) => m.why !== null)
    .map(({ r, why }) => ({ method: r.method, corpus: r.corpus, set: r.set, id: r.id, request: r.request, miss: why, got: r.status === 'no_match' ? 'no_match' : r.got.slice(0, 5) }));
  if (argv.includes('--json')) {
    console.log(JSON.stringify(results.map(({ rows, ...summary }) => ({ ...summary, misses: missesOf({ rows }) })), null, 2));
    return 0;
  }
  for (const result of results) {
    printText(result, splits);
    const misses = missesOf(result);
    if (misses.length) {
      console.log(`\nmisses of the tuning half, ${result.mode} mode (${misses.length}):`);
      for (const m of misses) console.log(`  [${m.method} ${m.corpus} ${m.set} ${m.id}] ${JSON.stringify(m.request)}: ${m.miss}; got ${Array.isArray(m.got) ? m.got.join(', ') || '—' : m.got}`);
    }
    console.log('');
  }
  return 0;
}

if (process.argv[1] && import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href) {
  process.exitCode = await main(process.argv.slice(2));
}
