// Evaluates `graph.match` by executor — the built-in lexical executor and the semantic executor
// (`semanticExecutor()`, when this build has it and its model package is installed) — on the
// evaluation providers (examples/eval-provider: a web application framework;
// examples/eval-objstore: an object storage SDK and CLI; examples/eval-payments: a payments and
// billing API) and their hand-written intents (`intents.json` beside each provider).
//
//   node bench/eval-match.mjs                    both halves, every size, both executors; misses of the tuning half
//   node bench/eval-match.mjs --split=tune       the tuning half only (what a ranker change is tuned on)
//   node bench/eval-match.mjs --split=heldout    the held-out half only (its misses are never listed)
//   node bench/eval-match.mjs --executor=lexical|semantic|both   which executors (default both)
//   node bench/eval-match.mjs --json             JSON summary on stdout
//   node bench/eval-match.mjs --sizes=small,provider,10k   catalog sizes to run
//   node bench/eval-match.mjs --min-score=0.2    pass { minScore } to each executor
//
// Each run ends with tool search (bench/eval-tool-search.mjs): the 150 tools of
// examples/tool-search as a provider, top-1/3/5 of the right tool per executor that ran.
//
// The intents are split in half by a fixed seed, stratified by provider and kind (direct,
// paraphrase, id, chinese, no-match): `tune` is what a ranker may be tuned on, `heldout` is not.
// Providers are split in the order of PROVIDERS with one generator: a provider added at the end
// leaves the halves of those before it as they were.
//
// Catalog sizes, each intent against:
//   small     its expected capability and 1–4 neighbours from the same provider (siblings under a
//             shared parent first), picked by a fixed seed; a no-match intent gets 2–5 capabilities
//   provider  the whole provider
//   10k       the provider mixed into a generated catalog of 10,000 capabilities (bench/generate.mjs)
//
// Measures, per executor, split, size, provider and kind:
//   top-k               of the intents that should match, the share whose expected capability is
//                       among the first k matches (a `no_match` answer counts as a miss)
//   no-match precision  of all `no_match` answers, the share given to intents that should match
//                       nothing
//   no-match recall     of the intents that should match nothing, the share answered `no_match`
//   latency             p50 and p95 of one `graph.match` call, per executor and size (wall clock,
//                       with the capability vectors already built)
//   index cost          semantic only: milliseconds per capability to build the vectors, taken as
//                       (open + first match) of the semantic executor less the same for the lexical
//                       executor on the same catalog, over the catalog's capabilities
// The exit code is 0 unless the engine fails: this is a measurement, not a test. An executor this
// build lacks (or whose model package is missing) is reported as unavailable and left out.
// bench/eval-match-baseline.json and bench/eval-match-final.json hold the figures of both halves
// on the first two providers before the ranker was first tuned and after;
// bench/eval-match-executors.json those of all three, before and after the ranker judged each
// capability by its own provider's words.

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as cg from '@devcodex/capability-graph';
import { generate, prng } from './generate.mjs';
import { evaluateToolSearch } from './eval-tool-search.mjs';

export const PROVIDERS = [
  { providerId: 'eval.webapp', dir: 'eval-provider' },
  { providerId: 'eval.objstore', dir: 'eval-objstore' },
  { providerId: 'eval.payments', dir: 'eval-payments' },
];
export const KINDS = ['direct', 'paraphrase', 'id', 'chinese', 'no-match'];
export const SIZES = ['small', 'provider', '10k'];
export const EXECUTORS = ['lexical', 'semantic'];
const SPLIT_SEED = 0x5eed16;
const SMALL_SEED = 0xca7a106;
const LIMIT = 5;
const FIRST_MATCH_TIMEOUT_MS = 600_000;
const examples = fileURLToPath(new URL('../examples/', import.meta.url));

/** Loads each provider's capability records and intents. */
export async function loadProviders() {
  const out = [];
  for (const p of PROVIDERS) {
    const rootDir = path.join(examples, p.dir);
    const manifest = JSON.parse(await readFile(path.join(rootDir, 'provider.json'), 'utf8'));
    const capabilities = [];
    for (const area of (await readdir(path.join(rootDir, 'capabilities'))).sort()) {
      for (const file of (await readdir(path.join(rootDir, 'capabilities', area))).sort()) {
        capabilities.push(JSON.parse(await readFile(path.join(rootDir, 'capabilities', area, file), 'utf8')));
      }
    }
    const intents = JSON.parse(await readFile(path.join(rootDir, 'intents.json'), 'utf8'));
    out.push({ ...p, rootDir, manifest, capabilities, intents: intents.map((i, n) => ({ ...i, provider: p.providerId, n })) });
  }
  return out;
}

/** Halves every (provider, kind) stratum by a fixed seed: the first half tunes, the rest is held out. */
export function split(providers) {
  const rnd = prng(SPLIT_SEED);
  const tagged = [];
  for (const p of providers) {
    for (const kind of KINDS) {
      const stratum = p.intents.filter((i) => i.kind === kind);
      // Fisher–Yates with the seeded generator.
      for (let i = stratum.length - 1; i > 0; i--) {
        const j = rnd.int(i + 1);
        [stratum[i], stratum[j]] = [stratum[j], stratum[i]];
      }
      const half = Math.ceil(stratum.length / 2);
      stratum.forEach((intent, i) => tagged.push({ ...intent, split: i < half ? 'tune' : 'heldout' }));
    }
  }
  return tagged.sort((a, b) => a.provider.localeCompare(b.provider) || a.n - b.n);
}

/** The small catalog of an intent: its expected capability (or a seeded one) and 1–4 neighbours. */
function smallCatalog(provider, intent) {
  const rnd = prng(SMALL_SEED ^ (intent.n * 7919) ^ (provider.providerId.length << 20));
  const all = provider.capabilities;
  const anchor = intent.expected ?? all[rnd.int(all.length)].capabilityId;
  const record = all.find((c) => c.capabilityId === anchor);
  const parents = new Set(record.parents ?? []);
  const siblings = all.filter((c) => c.capabilityId !== anchor && (c.parents ?? []).some((x) => parents.has(x)));
  const others = all.filter((c) => c.capabilityId !== anchor && !siblings.includes(c));
  const shuffled = (list) => {
    const l = [...list];
    for (let i = l.length - 1; i > 0; i--) {
      const j = rnd.int(i + 1);
      [l[i], l[j]] = [l[j], l[i]];
    }
    return l;
  };
  const count = 1 + rnd.int(4);
  const picked = [...shuffled(siblings), ...shuffled(others)].slice(0, count);
  const members = [record, ...picked];
  const ids = new Set(members.map((c) => c.capabilityId));
  // Relations may only name members of the catalog.
  const keep = (list) => list?.filter((id) => ids.has(id));
  return members.map((c) => {
    const copy = { ...c };
    for (const rel of ['parents', 'requires', 'specializes', 'related']) {
      if (copy[rel]) copy[rel] = keep(copy[rel]);
      if (copy[rel]?.length === 0) delete copy[rel];
    }
    return copy;
  });
}

async function ask(graph, intent, provider, timeoutMs = undefined) {
  const started = performance.now();
  const answer = await graph.match({ intent: intent.intent, limit: LIMIT, timeoutMs });
  const ms = performance.now() - started;
  const matched = answer.status === 'matched' || answer.status === 'partial';
  // Matches from the generated catalog count as what they are: wrong answers.
  const got = matched ? answer.matches.map((m) => (m.id.providerId === provider ? m.id.capabilityId : m.qualifiedId)) : [];
  const top = matched ? answer.matches[0] : null;
  return { status: answer.status, got, reason: top?.reason ?? null, confidence: top?.confidence ?? null, ms };
}

const pct = (num, den) => (den === 0 ? null : Math.round((num / den) * 1000) / 10);

export function summarize(rows) {
  const should = rows.filter((r) => r.expected !== null);
  const none = rows.filter((r) => r.expected === null);
  const noMatchAnswers = rows.filter((r) => r.status === 'no_match');
  const rank = (r) => (r.status === 'no_match' ? -1 : r.got.indexOf(r.expected));
  const top1 = should.filter((r) => rank(r) === 0).length;
  const top3 = should.filter((r) => rank(r) >= 0 && rank(r) < 3).length;
  const correctNoMatch = none.filter((r) => r.status === 'no_match').length;
  return {
    intents: rows.length,
    shouldMatch: should.length,
    shouldNotMatch: none.length,
    top1: pct(top1, should.length),
    top3: pct(top3, should.length),
    noMatchPrecision: pct(correctNoMatch, noMatchAnswers.length),
    noMatchRecall: pct(correctNoMatch, none.length),
    counts: { top1, top3, noMatchAnswers: noMatchAnswers.length, correctNoMatch },
  };
}

/** The executor named `name`, or why this build cannot give it. */
export function makeExecutor(name, minScore) {
  const options = minScore === undefined ? undefined : { minScore };
  if (name === 'lexical') return { executor: cg.lexicalExecutor(options) };
  if (typeof cg.semanticExecutor !== 'function') return { unavailable: 'semantic executor not available in this build' };
  try {
    return { executor: cg.semanticExecutor(options) };
  } catch (error) {
    return { unavailable: unavailableReason(error) };
  }
}

// A missing model package is a fact of this machine, not a failure of the measurement; anything
// else is.
function unavailableReason(error) {
  if (error?.code !== 'CG_MODEL_UNAVAILABLE') throw error;
  const pkg = error.details?.package;
  return pkg ? `semantic executor unavailable: model package ${pkg} is not installed` : 'semantic executor unavailable (CG_MODEL_UNAVAILABLE)';
}

/** Opens a graph and answers its first match; the time of both is what a host waits for its first answer. */
async function openAndAsk(config, intent, provider) {
  const started = performance.now();
  const graph = await cg.CapabilityGraph.open(config);
  // The first match waits for the snapshot's index (the semantic executor's vectors of a 10k
  // catalog take minutes to embed): it may take up to the longest deadline a match accepts.
  const first = await ask(graph, intent, provider, FIRST_MATCH_TIMEOUT_MS);
  return { graph, first, coldMs: performance.now() - started };
}

/** Runs every intent of `intents` at `size`; returns one row per intent and the cold start of each catalog. */
async function runSize(size, providers, intents, executor) {
  const rows = [];
  const cold = [];
  const record = (intent, answer) => rows.push({ ...intent, size, ...answer });
  if (size === 'small') {
    for (const p of providers) {
      for (const intent of intents.filter((i) => i.provider === p.providerId)) {
        const capabilities = smallCatalog(p, intent);
        const { graph, first } = await openAndAsk({ providers: [{ definition: { ...p.manifest, capabilities } }], executor }, intent, p.providerId);
        record(intent, first);
        await graph.close();
      }
    }
    return { rows, cold };
  }
  const synthetic = size === '10k' ? await generate(10000) : null;
  for (const p of providers) {
    const mine = intents.filter((i) => i.provider === p.providerId);
    if (mine.length === 0) continue;
    const sources = [{ providerId: p.providerId, authority: { kind: 'file', rootDir: p.rootDir, definitionLayout: 'directory' } }];
    if (synthetic) sources.push({ providerId: 'bench.synthetic', authority: { kind: 'file', rootDir: synthetic, definitionLayout: 'directory' } });
    const { graph, first, coldMs } = await openAndAsk({ providers: sources, executor }, mine[0], p.providerId);
    cold.push({ size, provider: p.providerId, capabilities: p.capabilities.length + (synthetic ? 10000 : 0), coldMs, firstMs: first.ms });
    // The first answer may wait for the index; it is timed as cold start, and asked again warm.
    for (const intent of mine) record(intent, intent === mine[0] ? { ...first, ms: (await ask(graph, intent, p.providerId)).ms } : await ask(graph, intent, p.providerId));
    await graph.close();
  }
  return { rows, cold };
}

const percentile = (sorted, q) => (sorted.length === 0 ? null : Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] * 1000) / 1000);

/**
 * Every measure per executor, split, provider and size (and per kind within each), the match
 * latency per executor and size, and the semantic executor's index cost.
 */
export async function evaluate({ splits = ['tune'], sizes = SIZES, minScore, executors = ['lexical'], toolSearch = false } = {}) {
  const providers = await loadProviders();
  const intents = split(providers).filter((i) => splits.includes(i.split));
  const rows = [];
  const cold = [];
  const unavailable = {};
  const ran = [];
  // Lexical runs first: the semantic index cost is measured against its cold start.
  for (const name of EXECUTORS.filter((e) => executors.includes(e))) {
    const made = makeExecutor(name, minScore);
    if (made.unavailable) {
      unavailable[name] = made.unavailable;
      continue;
    }
    try {
      for (const size of sizes) {
        const out = await runSize(size, providers, intents, made.executor);
        rows.push(...out.rows.map((r) => ({ ...r, executor: name })));
        cold.push(...out.cold.map((c) => ({ ...c, executor: name })));
      }
      ran.push(name);
    } catch (error) {
      unavailable[name] = unavailableReason(error);
      for (let i = rows.length - 1; i >= 0; i--) if (rows[i].executor === name) rows.splice(i, 1);
      for (let i = cold.length - 1; i >= 0; i--) if (cold[i].executor === name) cold.splice(i, 1);
    }
  }
  const report = [];
  for (const executor of ran) {
    for (const s of splits) {
      for (const size of sizes) {
        for (const provider of [...PROVIDERS.map((p) => p.providerId), 'all']) {
          const subset = rows.filter((r) => r.executor === executor && r.split === s && r.size === size && (provider === 'all' || r.provider === provider));
          const byKind = Object.fromEntries(KINDS.map((k) => [k, summarize(subset.filter((r) => r.kind === k))]));
          report.push({ executor, split: s, size, provider, ...summarize(subset), byKind });
        }
      }
    }
  }
  const latency = [];
  for (const executor of ran) {
    for (const size of sizes) {
      const ms = rows.filter((r) => r.executor === executor && r.size === size).map((r) => r.ms).sort((a, b) => a - b);
      latency.push({ executor, size, calls: ms.length, p50Ms: percentile(ms, 0.5), p95Ms: percentile(ms, 0.95) });
    }
  }
  const index = [];
  for (const c of cold.filter((x) => x.executor === 'semantic')) {
    const base = cold.find((x) => x.executor === 'lexical' && x.size === c.size && x.provider === c.provider);
    const ms = base ? Math.max(0, c.coldMs - base.coldMs) : null;
    index.push({ executor: 'semantic', size: c.size, provider: c.provider, capabilities: c.capabilities, coldMs: Math.round(c.coldMs), msPerCapability: ms === null ? null : Math.round((ms / c.capabilities) * 1000) / 1000 });
  }
  // Tool search: the same executors over a host's 150 tools (its own catalog, no sizes or halves).
  const tools = [];
  for (const name of toolSearch ? [...ran] : []) {
    try {
      tools.push({ executor: name, ...(await evaluateToolSearch(makeExecutor(name, minScore).executor)).summary });
    } catch (error) {
      unavailable[name] = unavailableReason(error);
      ran.splice(ran.indexOf(name), 1);
    }
  }
  return { rows, report, latency, index, unavailable, executors: ran, ...(toolSearch ? { toolSearch: tools } : {}) };
}

const isMiss = (r) => (r.expected === null ? r.status !== 'no_match' : r.got[0] !== r.expected);

if (process.argv[1] && import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href) {
  const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const splitArg = arg('split') ?? 'all';
  const splits = splitArg === 'all' ? ['tune', 'heldout'] : [splitArg];
  const sizes = (arg('sizes') ?? SIZES.join(',')).split(',');
  const executorArg = arg('executor') ?? 'both';
  if (!['lexical', 'semantic', 'both'].includes(executorArg)) {
    console.error(`--executor must be lexical, semantic or both, not ${JSON.stringify(executorArg)}`);
    process.exit(2);
  }
  const asked = executorArg === 'both' ? EXECUTORS : [executorArg];
  // The semantic index cost is measured against the lexical cold start: run lexical beside it.
  const executors = asked.includes('semantic') ? EXECUTORS : asked;
  const minScore = arg('min-score') === undefined ? undefined : Number(arg('min-score'));
  const result = await evaluate({ splits, sizes, minScore, executors, toolSearch: true });
  const report = result.report.filter((r) => asked.includes(r.executor));
  const latency = result.latency.filter((r) => asked.includes(r.executor));
  const shown = result.executors.filter((e) => asked.includes(e));
  const unavailable = Object.fromEntries(Object.entries(result.unavailable).filter(([e]) => asked.includes(e)));
  const toolSearch = result.toolSearch.filter((r) => asked.includes(r.executor));
  // Misses are listed for the tuning half only: reading held-out misses would be tuning on them.
  const misses = result.rows.filter((r) => asked.includes(r.executor) && r.split === 'tune' && isMiss(r)).map((r) => ({
    executor: r.executor, size: r.size, provider: r.provider, kind: r.kind, intent: r.intent, expected: r.expected, status: r.status, got: r.got.slice(0, 3),
  }));
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ limit: LIMIT, minScore: minScore ?? null, executors: shown, unavailable, report, latency, index: result.index, toolSearch, misses }, null, 2));
  } else {
    for (const [e, why] of Object.entries(unavailable)) console.log(`${e}: ${why}; ${shown.length ? `running ${shown.join(', ')}` : 'nothing to run'}`);
    const fmt = (v) => (v === null || v === undefined ? '    -' : `${v.toFixed(1).padStart(5)}`);
    const cells = (s) => `${fmt(s.top1)} ${fmt(s.top3)} ${fmt(s.noMatchPrecision)} ${fmt(s.noMatchRecall)}`;
    const header = shown.map((e) => e.padEnd(24)).join('  ');
    console.log(`match eval — limit ${LIMIT}${minScore === undefined ? '' : `, minScore ${minScore}`}; per executor: top-1 top-3 nm-prec nm-recall`);
    for (const s of splits) {
      for (const size of sizes) {
        const of = (e, provider) => report.find((r) => r.executor === e && r.split === s && r.size === size && r.provider === provider);
        const first = of(shown[0], 'all');
        if (!first) continue;
        console.log(`\n${s} · ${size}`);
        console.log(`${''.padEnd(15)} ${'n'.padStart(4)}  ${header}`);
        for (const k of KINDS) console.log(`${k.padEnd(15)} ${String(first.byKind[k].intents).padStart(4)}  ${shown.map((e) => cells(of(e, 'all').byKind[k])).join('  ')}`);
        for (const p of [...PROVIDERS.map((x) => x.providerId), 'all']) console.log(`${p.padEnd(15)} ${String(of(shown[0], p).intents).padStart(4)}  ${shown.map((e) => cells(of(e, p))).join('  ')}`);
      }
    }
    if (latency.length) console.log('\nlatency of one match (ms)   p50     p95');
    for (const l of latency) console.log(`${l.executor.padEnd(9)} ${l.size.padEnd(9)} ${String(l.calls).padStart(5)}  ${String(l.p50Ms).padStart(7)} ${String(l.p95Ms).padStart(7)}`);
    if (result.index.length) {
      console.log('\nsemantic index cost          capabilities  ms/capability');
      for (const x of result.index) console.log(`${x.size.padEnd(9)} ${x.provider.padEnd(16)} ${String(x.capabilities).padStart(8)}  ${String(x.msPerCapability).padStart(10)}`);
    }
    if (toolSearch.length) {
      console.log(`\ntool search: ${toolSearch[0].tools} tools, ${toolSearch[0].intents} requests; top-1 top-3 top-5 no_match`);
      for (const t of toolSearch) console.log(`${t.executor.padEnd(9)} ${fmt(t.top1)} ${fmt(t.top3)} ${fmt(t.top5)} ${String(t.noMatch).padStart(8)}`);
    }
    if (misses.length) {
      console.log(`\nmisses of the tuning half (${misses.length}):`);
      for (const m of misses) {
        console.log(`  [${m.executor} ${m.size} ${m.provider} ${m.kind}] ${JSON.stringify(m.intent)}`);
        console.log(`      expected ${m.expected ?? 'no_match'}; got ${m.status}: ${m.got.join(', ') || '—'}`);
      }
    }
  }
}
