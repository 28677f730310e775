// Evaluates `graph.match` with the built-in lexical executor on the evaluation providers
// (examples/eval-provider: a web application framework; examples/eval-objstore: an object
// storage SDK and CLI) and their hand-written intents (`intents.json` beside each provider).
//
//   node bench/eval-match.mjs                    both halves, every size; misses of the tuning half
//   node bench/eval-match.mjs --split=tune       the tuning half only (what a ranker change is tuned on)
//   node bench/eval-match.mjs --split=heldout    the held-out half only (its misses are never listed)
//   node bench/eval-match.mjs --json             JSON summary on stdout
//   node bench/eval-match.mjs --sizes=small,provider,10k   catalog sizes to run
//   node bench/eval-match.mjs --min-score=0.2    pass { minScore } to lexicalExecutor
//
// The intents are split in half by a fixed seed, stratified by provider and kind (direct,
// paraphrase, id, chinese, no-match): `tune` is what the ranker may be tuned on, `heldout` is not.
//
// Catalog sizes, each intent against:
//   small     its expected capability and 1–4 neighbours from the same provider (siblings under a
//             shared parent first), picked by a fixed seed; a no-match intent gets 2–5 capabilities
//   provider  the whole provider
//   10k       the provider mixed into a generated catalog of 10,000 capabilities (bench/generate.mjs)
//
// Measures:
//   top-k               of the intents that should match, the share whose expected capability is
//                       among the first k matches (a `no_match` answer counts as a miss)
//   no-match precision  of all `no_match` answers, the share given to intents that should match
//                       nothing
//   no-match recall     of the intents that should match nothing, the share answered `no_match`
// The exit code is 0 unless the engine fails: this is a measurement, not a test.
// bench/eval-match-baseline.json and bench/eval-match-final.json hold the figures of both halves
// before the ranker was tuned and after (the held-out half evaluated once, at the end).

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CapabilityGraph, lexicalExecutor } from '@devcodex/capability-graph';
import { generate, prng } from './generate.mjs';

export const PROVIDERS = [
  { providerId: 'eval.webapp', dir: 'eval-provider' },
  { providerId: 'eval.objstore', dir: 'eval-objstore' },
];
export const KINDS = ['direct', 'paraphrase', 'id', 'chinese', 'no-match'];
export const SIZES = ['small', 'provider', '10k'];
const SPLIT_SEED = 0x5eed16;
const SMALL_SEED = 0xca7a106;
const LIMIT = 5;
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

async function ask(graph, intent, provider) {
  const answer = await graph.match({ intent: intent.intent, limit: LIMIT });
  const matched = answer.status === 'matched' || answer.status === 'partial';
  // Matches from the generated catalog count as what they are: wrong answers.
  const got = matched ? answer.matches.map((m) => (m.id.providerId === provider ? m.id.capabilityId : m.qualifiedId)) : [];
  const top = matched ? answer.matches[0] : null;
  return { status: answer.status, got, reason: top?.reason ?? null, confidence: top?.confidence ?? null };
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

/** Runs every intent of `intents` at `size`; returns one row per intent. */
async function runSize(size, providers, intents, executor) {
  const rows = [];
  const record = (intent, answer) => rows.push({ ...intent, size, ...answer });
  if (size === 'small') {
    for (const p of providers) {
      for (const intent of intents.filter((i) => i.provider === p.providerId)) {
        const capabilities = smallCatalog(p, intent);
        const graph = await CapabilityGraph.open({
          providers: [{ definition: { ...p.manifest, capabilities } }],
          executor,
        });
        record(intent, await ask(graph, intent, p.providerId));
        await graph.close();
      }
    }
    return rows;
  }
  const synthetic = size === '10k' ? await generate(10000) : null;
  for (const p of providers) {
    const sources = [{ providerId: p.providerId, authority: { kind: 'file', rootDir: p.rootDir, definitionLayout: 'directory' } }];
    if (synthetic) sources.push({ providerId: 'bench.synthetic', authority: { kind: 'file', rootDir: synthetic, definitionLayout: 'directory' } });
    const graph = await CapabilityGraph.open({ providers: sources, executor });
    for (const intent of intents.filter((i) => i.provider === p.providerId)) {
      record(intent, await ask(graph, intent, p.providerId));
    }
    await graph.close();
  }
  return rows;
}

/** Every measure per split, provider and size (and per kind within each). */
export async function evaluate({ splits = ['tune'], sizes = SIZES, minScore } = {}) {
  const providers = await loadProviders();
  const intents = split(providers).filter((i) => splits.includes(i.split));
  const executor = minScore === undefined ? lexicalExecutor() : lexicalExecutor({ minScore });
  const rows = [];
  for (const size of sizes) rows.push(...(await runSize(size, providers, intents, executor)));
  const report = [];
  for (const s of splits) {
    for (const size of sizes) {
      for (const provider of [...PROVIDERS.map((p) => p.providerId), 'all']) {
        const subset = rows.filter((r) => r.split === s && r.size === size && (provider === 'all' || r.provider === provider));
        const byKind = Object.fromEntries(KINDS.map((k) => [k, summarize(subset.filter((r) => r.kind === k))]));
        report.push({ split: s, size, provider, ...summarize(subset), byKind });
      }
    }
  }
  return { rows, report };
}

const isMiss = (r) => (r.expected === null ? r.status !== 'no_match' : r.got[0] !== r.expected);

if (process.argv[1] && import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href) {
  const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const splitArg = arg('split') ?? 'all';
  const splits = splitArg === 'all' ? ['tune', 'heldout'] : [splitArg];
  const sizes = (arg('sizes') ?? SIZES.join(',')).split(',');
  const minScore = arg('min-score') === undefined ? undefined : Number(arg('min-score'));
  const { rows, report } = await evaluate({ splits, sizes, minScore });
  // Misses are listed for the tuning half only: reading held-out misses would be tuning on them.
  const misses = rows.filter((r) => r.split === 'tune' && isMiss(r)).map((r) => ({
    size: r.size, provider: r.provider, kind: r.kind, intent: r.intent, expected: r.expected, status: r.status, got: r.got.slice(0, 3),
  }));
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ limit: LIMIT, minScore: minScore ?? null, report, misses }, null, 2));
  } else {
    const fmt = (v) => (v === null ? '    -' : `${v.toFixed(1).padStart(5)}`);
    console.log(`match eval — lexical executor, limit ${LIMIT}${minScore === undefined ? '' : `, minScore ${minScore}`}`);
    console.log('split    size      provider         n   top-1  top-3  nm-prec nm-recall');
    for (const r of report) {
      console.log(`${r.split.padEnd(8)} ${r.size.padEnd(9)} ${r.provider.padEnd(14)} ${String(r.intents).padStart(4)}  ${fmt(r.top1)}  ${fmt(r.top3)}  ${fmt(r.noMatchPrecision)}  ${fmt(r.noMatchRecall)}`);
    }
    if (process.argv.includes('--kinds')) {
      for (const r of report.filter((x) => x.provider === 'all')) {
        for (const [k, s] of Object.entries(r.byKind)) {
          console.log(`  ${r.split} ${r.size} ${k.padEnd(10)} n=${s.intents} top-1 ${fmt(s.top1)} top-3 ${fmt(s.top3)} nm-recall ${fmt(s.noMatchRecall)}`);
        }
      }
    }
    if (misses.length) {
      console.log(`\nmisses of the tuning half (${misses.length}):`);
      for (const m of misses) {
        console.log(`  [${m.size} ${m.provider} ${m.kind}] ${JSON.stringify(m.intent)}`);
        console.log(`      expected ${m.expected ?? 'no_match'}; got ${m.status}: ${m.got.join(', ') || '—'}`);
      }
    }
  }
}
