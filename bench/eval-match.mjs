// Evaluates `graph.match` with the built-in lexical executor against the eval.webapp provider
// (examples/eval-provider) and its hand-written intents (examples/eval-provider/intents.json).
//
//   node bench/eval-match.mjs            human-readable report, every miss listed
//   node bench/eval-match.mjs --json     JSON summary on stdout
//   node bench/eval-match.mjs --min-score=0.2   pass { minScore } to lexicalExecutor (threshold tuning)
//
// Metrics:
//   top-1      should-match intents answered 'matched' with the expected capability first
//   top-3      ... with the expected capability among the first three matches
//   no-match   intents expected to match nothing that were answered 'no_match'
//   false no-match  should-match intents answered 'no_match'
// The exit code is always 0: this is a measurement, not a test.

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import * as pkg from '@devcodex/capability-graph';

const PROVIDER_ID = 'eval.webapp';
const LIMIT = 5;
const asJson = process.argv.includes('--json');
const minScoreArg = process.argv.find((a) => a.startsWith('--min-score='));
const minScore = minScoreArg === undefined ? undefined : Number(minScoreArg.slice('--min-score='.length));
const rootDir = fileURLToPath(new URL('../examples/eval-provider', import.meta.url));
const intentsFile = fileURLToPath(new URL('../examples/eval-provider/intents.json', import.meta.url));

const { CapabilityGraph } = pkg;
const lexicalExecutor = pkg.lexicalExecutor ?? pkg.default?.lexicalExecutor;

function bail(message) {
  if (asJson) console.log(JSON.stringify({ ok: false, skipped: true, reason: message }, null, 2));
  else console.log(`eval-match: skipped — ${message}`);
  process.exit(0);
}

if (typeof lexicalExecutor !== 'function') {
  bail('@devcodex/capability-graph does not export lexicalExecutor() yet.');
}

const intents = JSON.parse(await readFile(intentsFile, 'utf8'));

let graph;
try {
  graph = await CapabilityGraph.open({
    providers: [{ providerId: PROVIDER_ID, authority: { kind: 'file', rootDir, definitionLayout: 'directory' } }],
    executor: minScore === undefined ? lexicalExecutor() : lexicalExecutor({ minScore }),
  });
} catch (error) {
  bail(`could not open the eval provider: ${describeError(error)}`);
}

function describeError(error) {
  if (error && typeof error.toJSON === 'function') return JSON.stringify(error.toJSON());
  return String(error?.message ?? error);
}

const capabilityIdOf = (match) => match?.id?.capabilityId ?? String(match?.qualifiedId ?? '').split('::').pop();
const pct = (num, den) => (den === 0 ? null : Math.round((num / den) * 1000) / 10);

const results = [];
const started = performance.now();
for (const item of intents) {
  const t0 = performance.now();
  let status;
  let got = [];
  let confidence = [];
  let error;
  try {
    const answer = await graph.match({ intent: item.intent, limit: LIMIT });
    status = answer.status;
    got = (answer.matches ?? []).map(capabilityIdOf);
    confidence = (answer.matches ?? []).map((m) => m.confidence ?? null);
  } catch (e) {
    status = 'error';
    error = e?.code ?? describeError(e);
  }
  const ms = performance.now() - t0;
  const shouldMatch = item.expected !== null;
  const matched = status === 'matched' || status === 'partial';
  const rank = shouldMatch && matched ? got.indexOf(item.expected) : -1;
  results.push({
    ...item,
    status,
    got,
    confidence,
    error,
    ms,
    top1: shouldMatch && matched && rank === 0,
    top3: shouldMatch && matched && rank >= 0 && rank < 3,
    rank: rank >= 0 ? rank + 1 : null,
    correctNoMatch: !shouldMatch && status === 'no_match',
    falseNoMatch: shouldMatch && status === 'no_match',
  });
}
const totalMs = performance.now() - started;
await graph.close();

function summarize(rows) {
  const should = rows.filter((r) => r.expected !== null);
  const none = rows.filter((r) => r.expected === null);
  const top1 = should.filter((r) => r.top1).length;
  const top3 = should.filter((r) => r.top3).length;
  const noMatchOk = none.filter((r) => r.correctNoMatch).length;
  const rr = should.reduce((sum, r) => sum + (r.rank && r.rank <= LIMIT ? 1 / r.rank : 0), 0);
  return {
    intents: rows.length,
    shouldMatch: should.length,
    shouldNotMatch: none.length,
    top1,
    top1Accuracy: pct(top1, should.length),
    top3,
    top3Accuracy: pct(top3, should.length),
    mrr: should.length ? Math.round((rr / should.length) * 1000) / 1000 : null,
    noMatchCorrect: noMatchOk,
    noMatchAccuracy: pct(noMatchOk, none.length),
    falseNoMatch: should.filter((r) => r.falseNoMatch).length,
    errors: rows.filter((r) => r.status === 'error').length,
  };
}

const kinds = [...new Set(intents.map((i) => i.kind))];
const byKind = Object.fromEntries(kinds.map((k) => [k, summarize(results.filter((r) => r.kind === k))]));
const overall = summarize(results);
const isMiss = (r) => (r.expected === null ? !r.correctNoMatch : !r.top1);
const misses = results.filter(isMiss).map((r) => ({
  kind: r.kind,
  intent: r.intent,
  expected: r.expected,
  status: r.status,
  got: r.got.slice(0, 3),
  rank: r.rank,
  ...(r.error ? { error: r.error } : {}),
}));
const timing = {
  totalMs: Math.round(totalMs),
  meanMs: Math.round((totalMs / Math.max(1, results.length)) * 100) / 100,
  maxMs: Math.round(Math.max(0, ...results.map((r) => r.ms)) * 100) / 100,
};

if (asJson) {
  console.log(JSON.stringify({ ok: true, provider: PROVIDER_ID, limit: LIMIT, minScore: minScore ?? null, overall, byKind, misses, timing }, null, 2));
  process.exit(0);
}

const fmt = (v) => (v === null ? '  n/a' : `${v.toFixed(1).padStart(5)}%`);
console.log(`match eval — provider ${PROVIDER_ID}, ${overall.intents} intents, limit ${LIMIT}${minScore === undefined ? '' : `, minScore ${minScore}`}`);
console.log('');
console.log(`  top-1 accuracy     ${fmt(overall.top1Accuracy)}  (${overall.top1}/${overall.shouldMatch})`);
console.log(`  top-3 accuracy     ${fmt(overall.top3Accuracy)}  (${overall.top3}/${overall.shouldMatch})`);
console.log(`  MRR@${LIMIT}             ${overall.mrr ?? 'n/a'}`);
console.log(`  no-match accuracy  ${fmt(overall.noMatchAccuracy)}  (${overall.noMatchCorrect}/${overall.shouldNotMatch})`);
console.log(`  false no-match     ${overall.falseNoMatch}`);
if (overall.errors) console.log(`  errors             ${overall.errors}`);
console.log(`  time               ${timing.totalMs} ms total, ${timing.meanMs} ms mean, ${timing.maxMs} ms max`);
console.log('');
console.log('  kind         n   top-1    top-3    no-match  false-no-match');
for (const [kind, s] of Object.entries(byKind)) {
  const t1 = s.shouldMatch ? fmt(s.top1Accuracy) : '     -';
  const t3 = s.shouldMatch ? fmt(s.top3Accuracy) : '     -';
  const nm = s.shouldNotMatch ? fmt(s.noMatchAccuracy) : '     -';
  console.log(`  ${kind.padEnd(11)} ${String(s.intents).padStart(2)}  ${t1}   ${t3}   ${nm}    ${s.shouldMatch ? s.falseNoMatch : '-'}`);
}
console.log('');
if (misses.length === 0) {
  console.log('no misses');
} else {
  console.log(`misses (${misses.length}):`);
  for (const m of misses) {
    const got = m.got.length ? m.got.join(', ') : '—';
    const where = m.rank ? ` (expected at rank ${m.rank})` : '';
    console.log(`  [${m.kind}] ${JSON.stringify(m.intent)}`);
    console.log(`      expected ${m.expected ?? 'no_match'}; got ${m.status}${m.error ? ` ${m.error}` : ''}: ${got}${where}`);
  }
}
process.exit(0);
