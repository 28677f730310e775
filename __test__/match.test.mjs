// match (SPEC §8, §3.3, §14 D6): statuses, the executor contract, the projection, deadlines,
// cancellation and close, scope, and the lexical executor on the seed provider.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CapabilityGraph, GraphError, lexicalExecutor } from '@devcodex/capability-graph';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { cap, inline, needsModel, rejectsWith, repoRoot, seedSource, throwsWith } from './helpers.mjs';

const providers = () => [inline('acme', [cap('a', { requires: ['b'] }), cap('b'), cap('c')]), inline('beta', [cap('x')])];
const withExecutor = (match, extra = {}) => CapabilityGraph.open({ providers: providers(), executor: { id: 'test', match }, ...extra });
const answer = (output) => withExecutor(async () => output);

test('statuses: matched with its resolution, no_match, unknown, empty', async () => {
  let g = await answer({ status: 'matched', selections: [{ id: 'acme::a', reason: 'because', confidence: 0.75 }] });
  let r = await g.match({ intent: 'anything' });
  assert.equal(r.status, 'matched');
  assert.deepEqual(r.matches, [{ id: { providerId: 'acme', capabilityId: 'a' }, qualifiedId: 'acme::a', reason: 'because', confidence: 0.75 }]);
  assert.deepEqual(r.resolution.added, ['acme::b']);
  assert.deepEqual(r.meta.executor, { id: 'test' });
  assert.equal(r.meta.candidates, 4);
  assert.deepEqual(r.meta.staticRevisionByProvider && Object.keys(r.meta.staticRevisionByProvider), ['acme', 'beta']);
  await g.close();
  for (const status of ['no_match', 'unknown']) {
    g = await answer({ status, selections: [] });
    r = await g.match({ intent: 'anything' });
    assert.equal(r.status, status);
    assert.deepEqual(r.matches, []);
    assert.equal(r.resolution, undefined);
    await g.close();
  }
  let called = false;
  const empty = await CapabilityGraph.open({ providers: [inline('acme')], executor: { id: 't', match: () => { called = true; } } });
  r = await empty.match({ intent: 'anything' });
  assert.equal(r.status, 'empty');
  assert.equal(called, false, 'the executor is not called for an empty catalog');
  await empty.close();
});

test('a closure cut by its budget makes the status partial', async () => {
  const chain = Array.from({ length: 6 }, (_, i) => cap(`c${i}`, i < 5 ? { requires: [`c${i + 1}`] } : {}));
  const g = await CapabilityGraph.open({
    providers: [inline('acme', chain)],
    budgets: { resolve: { maxNodes: 3, maxIds: 3 } },
    executor: { id: 't', match: async () => ({ status: 'matched', selections: [{ id: 'acme::c0' }] }) },
  });
  const r = await g.match({ intent: 'x' });
  assert.equal(r.status, 'partial');
  assert.equal(r.resolution.meta.completeness, 'partial');
  await g.close();
});

test('the executor sees a fresh request with only the authorized catalog', async () => {
  const seen = [];
  const g = await withExecutor(async (request, options) => {
    seen.push(structuredClone(request));
    assert.ok(options.signal instanceof AbortSignal);
    request.candidates.length = 0; // mutating it changes nothing for the next call
    return { status: 'no_match', selections: [] };
  });
  await g.match({ intent: ' find things ', context: { tenant: 't1', n: 2, ok: true, none: null }, limit: 50, requestProviderScope: ['beta'] });
  await g.forProvider('acme').match({ intent: 'again' });
  assert.deepEqual(Object.keys(seen[0]), ['intent', 'context', 'limit', 'mode', 'deadline', 'candidates']);
  assert.equal(seen[0].intent, ' find things ');
  assert.equal(seen[0].mode, 'accept', 'the default mode is accept');
  assert.deepEqual(seen[0].context, { tenant: 't1', n: 2, ok: true, none: null });
  assert.equal(seen[0].limit, 20, 'limits above the maximum are clamped');
  assert.ok(seen[0].deadline > Date.now());
  assert.deepEqual(seen[0].candidates, [
    { qualifiedId: 'beta::x', name: 'Capability x', description: 'What x does.', whenToUse: 'When x is needed.', examples: [] },
  ]);
  assert.deepEqual(seen[1].candidates.map((c) => c.qualifiedId), ['acme::a', 'acme::b', 'acme::c']);
  assert.deepEqual(seen[1].context, {});
  assert.equal(seen[1].limit, 5);
  await g.close();
});

test('executor output is validated in the documented order', async () => {
  const cases = [
    [null, 'CG_MODEL_OUTPUT_INVALID'],
    ['matched', 'CG_MODEL_OUTPUT_INVALID'],
    [{ status: 'maybe', selections: [] }, 'CG_MODEL_OUTPUT_INVALID'],
    [{ status: 'matched', selections: [] }, 'CG_MODEL_OUTPUT_INVALID'],
    [{ status: 'no_match', selections: [{ id: 'acme::a' }] }, 'CG_MODEL_OUTPUT_INVALID'],
    [{ status: 'matched', selections: [{ id: 'acme:a' }] }, 'CG_MODEL_OUTPUT_INVALID'],
    [{ status: 'matched', selections: [{ id: 'acme::a' }, { id: 'acme::a' }] }, 'CG_MODEL_OUTPUT_INVALID'],
    [{ status: 'matched', selections: [{ id: 'acme::a', confidence: 1.5 }] }, 'CG_MODEL_OUTPUT_INVALID'],
    [{ status: 'matched', selections: [{ id: 'acme::a', reason: 'x'.repeat(1025) }] }, 'CG_MODEL_OUTPUT_INVALID'],
    [{ status: 'matched', selections: [{ id: 'acme::a', extra: 1 }] }, 'CG_MODEL_OUTPUT_INVALID'],
    [{ status: 'matched', selections: [{ id: 'acme::a' }], debug: true }, 'CG_MODEL_OUTPUT_INVALID'],
    [{ status: 'matched', selections: [{ id: 'acme::a' }, { id: 'acme::b' }, { id: 'acme::c' }] }, 'CG_MODEL_OUTPUT_TOO_LARGE'],
    [{ status: 'matched', selections: [{ id: 'acme::ghost' }] }, 'CG_MODEL_INVALID_SELECTION'],
    [{ status: 'matched', selections: [{ id: 'beta::x' }] }, 'CG_MODEL_INVALID_SELECTION'],
    [{ status: 'refused', selections: [] }, 'CG_MODEL_REFUSED'],
  ];
  for (const [output, code] of cases) {
    const g = await answer(output);
    const e = await g.match({ intent: 'x', limit: 2, requestProviderScope: ['acme'] }).catch((error) => error);
    assert.ok(e instanceof GraphError, JSON.stringify(output));
    assert.equal(e.code, code, JSON.stringify(output));
    assert.equal(e.phase, 'match');
    await g.close();
  }
  const big = await CapabilityGraph.open({
    providers: providers(),
    budgets: { match: { maxOutputBytes: 100 } },
    executor: { id: 't', match: async () => ({ status: 'matched', selections: [{ id: 'acme::a', reason: 'x'.repeat(200) }] }) },
  });
  await rejectsWith(big.match({ intent: 'x' }), 'CG_MODEL_OUTPUT_TOO_LARGE', 'match', 'narrow_scope');
  await big.close();
});

// SPEC §14 D6, row by row: [thrown code, thrown action] → [code, action].
const PROJECTION = [
  [['CG_MODEL_UNAVAILABLE', undefined], ['CG_MODEL_UNAVAILABLE', 'retry']],
  [['CG_MODEL_UNAVAILABLE', 'check_config'], ['CG_MODEL_UNAVAILABLE', 'check_config']],
  [['CG_MODEL_EXECUTOR_UNSAFE', 'retry'], ['CG_MODEL_EXECUTOR_UNSAFE', 'check_config']],
  [['CG_MODEL_CONTEXT_EXCEEDED', undefined], ['CG_MODEL_CONTEXT_EXCEEDED', 'narrow_scope']],
  [['CG_MODEL_OUTPUT_TOO_LARGE', 'retry'], ['CG_MODEL_OUTPUT_TOO_LARGE', 'retry']],
  [['CG_MODEL_OUTPUT_TOO_LARGE', 'fix_input'], ['CG_MODEL_OUTPUT_TOO_LARGE', 'narrow_scope']],
  [['CG_MODEL_OUTPUT_INVALID', 'refresh'], ['CG_MODEL_OUTPUT_INVALID', 'retry']],
  [['CG_MODEL_INVALID_SELECTION', undefined], ['CG_MODEL_INVALID_SELECTION', 'refresh']],
  [['CG_MODEL_INVALID_SELECTION', 'retry'], ['CG_MODEL_INVALID_SELECTION', 'retry']],
  [['CG_MODEL_REFUSED', 'retry'], ['CG_MODEL_REFUSED', 'fix_input']],
  [['CG_MODEL_TIMEOUT', undefined], ['CG_MODEL_TIMEOUT', 'retry']],
  [['CG_MODEL_CANCELLED', 'check_config'], ['CG_MODEL_CANCELLED', 'check_config']],
  [['CG_MODEL_NOT_CONFIGURED', undefined], ['CG_MODEL_NOT_CONFIGURED', 'retry']],
  [['CG_CONFIG_INVALID', 'retry'], ['CG_CONFIG_INVALID', 'check_config']],
  [['CG_CONTEXT_INVALID', undefined], ['CG_CONTEXT_INVALID', 'fix_input']],
  [['CG_CAPABILITY_NOT_FOUND', 'refresh'], ['CG_MODEL_UNAVAILABLE', 'retry']],
  [['ECONNRESET', 'check_config'], ['CG_MODEL_UNAVAILABLE', 'retry']],
  [[undefined, 'check_config'], ['CG_MODEL_UNAVAILABLE', 'retry']],
];

test('whatever an executor throws is projected, with catalog messages and no details', async () => {
  for (const [[code, nextAction], [expectedCode, expectedAction]] of PROJECTION) {
    const thrown = Object.assign(new Error('secret: /home/user/.codex token sk-123'), { code, nextAction, details: { secret: 1 } });
    const g = await withExecutor(async () => {
      throw thrown;
    });
    const e = await rejectsWith(g.match({ intent: 'x' }), expectedCode, 'match', expectedAction);
    assert.equal(e.details, undefined);
    assert.ok(!e.message.includes('secret'));
    assert.equal(e.message, new GraphError({ code: expectedCode }).message);
    await g.close();
  }
  for (const thrown of ['plain string', 42, null, undefined, new GraphError({ code: 'CG_MODEL_REFUSED' })]) {
    const g = await withExecutor(() => {
      throw thrown;
    });
    const expected = thrown instanceof GraphError ? ['CG_MODEL_REFUSED', 'fix_input'] : ['CG_MODEL_UNAVAILABLE', 'retry'];
    await rejectsWith(g.match({ intent: 'x' }), expected[0], 'match', expected[1]);
    await g.close();
  }
});

test('an executor missing an optional package names it; no other detail passes', async () => {
  const cases = [
    [{ code: 'CG_MODEL_UNAVAILABLE', nextAction: 'check_config', details: { package: '@openai/codex-sdk', path: '/home/x' } }, { package: '@openai/codex-sdk' }],
    [{ code: 'CG_MODEL_UNAVAILABLE', nextAction: 'check_config', details: { package: '/home/user/.codex token sk-123' } }, undefined],
    [{ code: 'CG_MODEL_UNAVAILABLE', nextAction: 'retry', details: { package: 'left-pad' } }, undefined],
    [{ code: 'CG_MODEL_REFUSED', details: { package: 'left-pad' } }, undefined],
  ];
  for (const [thrown, details] of cases) {
    const g = await withExecutor(async () => {
      throw thrown;
    });
    const e = await rejectsWith(g.match({ intent: 'x' }), thrown.code, 'match', thrown.nextAction ?? 'fix_input');
    assert.deepEqual(e.details, details, JSON.stringify(thrown));
    await g.close();
  }
});

test('deadlines, cancellation and close end a match; late answers are discarded', async () => {
  let lastSignal;
  let release;
  const slow = (request, { signal }) => {
    lastSignal = signal;
    return new Promise((resolve) => {
      release = () => resolve({ status: 'matched', selections: [{ id: 'acme::a' }] });
    });
  };
  const g = await withExecutor(slow);
  await rejectsWith(g.match({ intent: 'x', timeoutMs: 20 }), 'CG_MODEL_TIMEOUT', 'match', 'retry');
  assert.equal(lastSignal.aborted, true);
  release();

  const controller = new AbortController();
  const pending = g.match({ intent: 'x', signal: controller.signal });
  setTimeout(() => controller.abort(), 10);
  await rejectsWith(pending, 'CG_MODEL_CANCELLED', 'match', 'retry');
  assert.equal(lastSignal.aborted, true);
  release();

  const aborted = new AbortController();
  aborted.abort();
  await rejectsWith(g.match({ intent: 'x', signal: aborted.signal }), 'CG_MODEL_CANCELLED', 'match', 'retry');

  const open = g.match({ intent: 'x' });
  await new Promise((r) => setTimeout(r, 5));
  await g.close();
  await rejectsWith(open, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  assert.equal(lastSignal.aborted, true);
  release();
  await rejectsWith(g.match({ intent: 'x' }), 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  await new Promise((r) => setTimeout(r, 10));
});

test('input rules: intent, context, limits, signal, scope and a missing executor', async () => {
  const g = await answer({ status: 'no_match', selections: [] });
  const bad = (q, code, action) => rejectsWith(g.match(q), code, 'match', action);
  await bad({}, 'CG_INPUT_INVALID', 'fix_input');
  await bad({ intent: '   ' }, 'CG_INPUT_INVALID', 'fix_input');
  await bad({ intent: 'x'.repeat(4097) }, 'CG_INPUT_TOO_LARGE', 'narrow_scope');
  await bad({ intent: 'x', context: null }, 'CG_CONTEXT_INVALID', 'fix_input');
  await bad({ intent: 'x', context: [] }, 'CG_CONTEXT_INVALID', 'fix_input');
  await bad({ intent: 'x', context: { a: { b: 1 } } }, 'CG_CONTEXT_INVALID', 'fix_input');
  await bad({ intent: 'x', context: { a: 'x'.repeat(1025) } }, 'CG_CONTEXT_INVALID', 'fix_input');
  await bad({ intent: 'x', context: { ['k'.repeat(65)]: 1 } }, 'CG_CONTEXT_INVALID', 'fix_input');
  await bad({ intent: 'x', context: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])) }, 'CG_CONTEXT_INVALID', 'fix_input');
  await bad({ intent: 'x', context: { n: NaN } }, 'CG_CONTEXT_INVALID', 'fix_input');
  await bad({ intent: 'x', limit: 0 }, 'CG_INPUT_INVALID', 'fix_input');
  await bad({ intent: 'x', timeoutMs: -1 }, 'CG_INPUT_INVALID', 'fix_input');
  await bad({ intent: 'x', signal: 'soon' }, 'CG_INPUT_INVALID', 'fix_input');
  await bad({ intent: 'x', extra: 1 }, 'CG_INPUT_INVALID', 'fix_input');
  await bad({ intent: 'x', requestProviderScope: ['zeta'] }, 'CG_SCOPE_DENIED', 'narrow_scope');
  await bad({ intent: 'x', requiredStaticRevision: 's:0000000000000000', requestProviderScope: ['acme'] }, 'CG_REVISION_MISMATCH', 'refresh');
  await rejectsWith(g.forProvider('acme').match({ intent: 'x', requestProviderScope: ['acme'] }), 'CG_INPUT_INVALID', 'match', 'fix_input');
  await g.close();
  const none = await CapabilityGraph.open({ providers: providers() });
  await rejectsWith(none.match({ intent: 'x' }), 'CG_MODEL_NOT_CONFIGURED', 'match', 'check_config');
  assert.equal((await none.listCatalog()).items.length, 4, 'static queries keep working');
  await none.close();
  const tiny = await CapabilityGraph.open({ providers: providers(), budgets: { match: { maxCatalogBytes: 200 } }, executor: { id: 't', match: () => assert.fail('not called') } });
  await rejectsWith(tiny.match({ intent: 'x' }), 'CG_CATALOG_TOO_LARGE', 'match', 'narrow_scope');
  await tiny.close();
});

test('lexicalExecutor options are validated; the seed provider matches as documented', async () => {
  throwsWith(() => lexicalExecutor({ minScore: 2 }), 'CG_CONFIG_INVALID', 'config', 'check_config', { path: 'minScore' });
  throwsWith(() => lexicalExecutor({ other: 1 }), 'CG_CONFIG_INVALID', 'config', 'check_config');
  throwsWith(() => lexicalExecutor('strict'), 'CG_CONFIG_INVALID', 'config', 'check_config');
  const g = await CapabilityGraph.open({ providers: [seedSource()], executor: lexicalExecutor() });
  const r = await g.match({ intent: 'validate the request body before the handler runs' });
  assert.equal(r.status, 'matched');
  assert.equal(r.matches[0].qualifiedId, 'seed.http::route.validation');
  assert.ok(r.resolution.items.some((i) => i.qualifiedId === 'seed.http::schema.request'));
  assert.deepEqual(r.meta.executor, { id: 'lexical' });
  const none = await g.match({ intent: 'bake a loaf of sourdough bread' });
  assert.equal(none.status, 'no_match');
  const again = await g.match({ intent: 'validate the request body before the handler runs' });
  assert.deepEqual(again.matches, r.matches, 'deterministic');
  const bound = await g.forProvider('seed.http').match({ intent: 'add an HTTP endpoint' });
  assert.equal(bound.matches[0].qualifiedId, 'seed.http::route.http');
  await g.close();
});

test('the match evaluation covers three providers, every kind and every catalog size', async () => {
  const { loadProviders, split, KINDS, PROVIDERS } = await import('../bench/eval-match.mjs');
  const providers = await loadProviders();
  const intents = split(providers);
  assert.deepEqual(PROVIDERS.map((p) => p.providerId), ['eval.webapp', 'eval.objstore', 'eval.payments']);
  assert.ok(intents.length >= 480, `${intents.length} intents`);
  for (const { providerId } of PROVIDERS) {
    for (const kind of KINDS) {
      const stratum = intents.filter((i) => i.provider === providerId && i.kind === kind);
      const tune = stratum.filter((i) => i.split === 'tune').length;
      assert.ok(stratum.length >= 6, `${providerId} ${kind}`);
      assert.equal(tune, Math.ceil(stratum.length / 2), `${providerId} ${kind} halved`);
    }
  }
  const heldout = intents.filter((i) => i.split === 'heldout');
  const count = (kind) => heldout.filter((i) => i.kind === kind).length;
  assert.ok(heldout.length >= 200, `${heldout.length} held-out intents`);
  for (const kind of ['chinese', 'id', 'no-match']) assert.ok(count(kind) >= 30, `${count(kind)} held-out ${kind}`);
  assert.deepEqual(split(await loadProviders()), intents, 'the split is fixed');
  // A provider added later leaves the halves of the providers before it as they were.
  const key = (i) => `${i.provider} ${i.n} ${i.split}`;
  const firstTwo = split(providers.slice(0, 2)).map(key);
  assert.deepEqual(intents.filter((i) => i.provider !== 'eval.payments').map(key), firstTwo);
});

test('the evaluation names the executors it could not run and runs the others', async () => {
  const { evaluate, makeExecutor } = await import('../bench/eval-match.mjs');
  const cg = await import('@devcodex/capability-graph');
  const semantic = makeExecutor('semantic');
  if (typeof cg.semanticExecutor !== 'function') assert.deepEqual(semantic, { unavailable: 'semantic executor not available in this build' });
  const { report, latency, unavailable, executors } = await evaluate({ splits: ['tune'], sizes: ['provider'], executors: ['lexical', 'semantic'] });
  assert.ok(executors.includes('lexical'));
  assert.equal(executors.includes('semantic'), !('semantic' in unavailable));
  const all = report.find((r) => r.executor === 'lexical' && r.provider === 'all');
  assert.deepEqual(Object.keys(all.byKind), ['direct', 'paraphrase', 'id', 'chinese', 'no-match']);
  const l = latency.find((x) => x.executor === 'lexical' && x.size === 'provider');
  assert.equal(l.calls, all.intents);
  assert.ok(l.p50Ms > 0 && l.p95Ms >= l.p50Ms);
});

// The lexical executor is judged on the kinds it serves (a paraphrase shares no word with its
// capability, and only a semantic executor can bridge it). Goals: direct top-3 >= 93% at every
// size, dotted-ID and Chinese top-3 >= 97%, no-match recall >= 95%. Each floor is the held-out
// figure as measured (bench/eval-match-executors.json), so a ranker change that loses ground
// fails here. No-match recall is short of its goal at provider size and 10k (87.9%): requests
// near the payments domain that share two generic words with a capability ("apply", "business")
// are accepted.
const LEXICAL_FLOOR = {
  small: { direct: { top3: 96.2 }, id: { top3: 100 }, chinese: { top3: 100 }, 'no-match': { noMatchRecall: 97 } },
  provider: { direct: { top3: 96.2 }, id: { top3: 100 }, chinese: { top3: 97 }, 'no-match': { noMatchRecall: 87.9 } },
  '10k': { direct: { top3: 96.2 }, id: { top3: 100 }, chinese: { top3: 97 }, 'no-match': { noMatchRecall: 87.9 } },
};
// Every kind together, as measured: what the kinds above cost the whole (paraphrases included).
const LEXICAL_ALL = {
  small: { top1: 68.9, top3: 68.9, noMatchPrecision: 36.4, noMatchRecall: 97 },
  provider: { top1: 66, top3: 67.9, noMatchPrecision: 60.4, noMatchRecall: 87.9 },
  '10k': { top1: 66, top3: 67.9, noMatchPrecision: 60.4, noMatchRecall: 87.9 },
};

test('the lexical executor holds its floor on the held-out intents, by kind, at every catalog size', async () => {
  const { evaluate, SIZES } = await import('../bench/eval-match.mjs');
  const { report } = await evaluate({ splits: ['heldout'], executors: ['lexical'] });
  const failures = [];
  for (const size of SIZES) {
    const all = report.find((r) => r.executor === 'lexical' && r.size === size && r.provider === 'all');
    for (const [kind, measures] of Object.entries(LEXICAL_FLOOR[size])) {
      for (const [measure, floor] of Object.entries(measures)) {
        if (!(all.byKind[kind][measure] >= floor)) failures.push(`${size} ${kind} ${measure}: ${all.byKind[kind][measure]} < ${floor}`);
      }
    }
    for (const [measure, floor] of Object.entries(LEXICAL_ALL[size])) {
      if (!(all[measure] >= floor)) failures.push(`${size} all ${measure}: ${all[measure]} < ${floor}`);
    }
  }
  assert.deepEqual(failures, []);
});

// The semantic executor's goals (held-out half). It runs when this build has semanticExecutor
// and its model package is installed; CG_REQUIRE_MODEL=1 makes it required (CI with the model).
// `measured` is the floor each assertion holds: the figures as last measured, at most the goal.
// Direct requests are held to the lexical executor's goal: meaning must not cost what words find.
const SEMANTIC = {
  provider: {
    all: { top3: { goal: 90, measured: 89 }, top1: { goal: 80, measured: 82.8 }, noMatchPrecision: { goal: 85, measured: 75.7 }, noMatchRecall: { goal: 95, measured: 84.8 } },
    direct: { top3: { goal: 93, measured: 97.5 } },
    paraphrase: { top3: { goal: 75, measured: 68.3 } },
    id: { top3: { goal: 95, measured: 100 } },
    chinese: { top3: { goal: 95, measured: 97 } },
  },
};
// The 10k catalog's goal (top-3 >= 85%) is measured by `npm run eval:match -- --executor=semantic`
// on a release build (docs/match-and-executors.md): embedding 10,000 generated capabilities with
// the debug build this suite runs would take most of an hour.

test('the semantic executor holds its floor on the held-out intents', { skip: needsModel }, async (t) => {
  const { evaluate, makeExecutor } = await import('../bench/eval-match.mjs');
  const required = process.env.CG_REQUIRE_MODEL === '1';
  const made = makeExecutor('semantic');
  if (made.unavailable && !required) return t.skip(made.unavailable);
  assert.equal(made.unavailable, undefined, 'CG_REQUIRE_MODEL=1: the semantic executor must run');
  const { report, unavailable } = await evaluate({ splits: ['heldout'], sizes: Object.keys(SEMANTIC), executors: ['semantic'] });
  if (unavailable.semantic && !required) return t.skip(unavailable.semantic);
  assert.equal(unavailable.semantic, undefined, 'CG_REQUIRE_MODEL=1: the semantic executor must run');
  const failures = [];
  for (const [size, kinds] of Object.entries(SEMANTIC)) {
    const all = report.find((r) => r.executor === 'semantic' && r.size === size && r.provider === 'all');
    for (const [kind, measures] of Object.entries(kinds)) {
      const figures = kind === 'all' ? all : all.byKind[kind];
      for (const [measure, { goal, measured }] of Object.entries(measures)) {
        const value = figures[measure];
        assert.equal(typeof value, 'number', `${size} ${kind} ${measure} is measured`);
        if (value < goal) t.diagnostic(`${size} ${kind} ${measure}: ${value} (goal ${goal})`);
        if (measured !== null && !(value >= Math.min(measured, goal))) failures.push(`${size} ${kind} ${measure}: ${value} < ${measured}`);
      }
    }
  }
  assert.deepEqual(failures, []);
});

test('executor output is checked for size and count before any other rule', async () => {
  // Three duplicates with limit 2: the count is checked before the duplicate.
  const dup = { id: 'acme::a' };
  let g = await answer({ status: 'matched', selections: [dup, dup, dup] });
  await rejectsWith(g.match({ intent: 'x', limit: 2 }), 'CG_MODEL_OUTPUT_TOO_LARGE', 'match', 'narrow_scope', { limit: 2 });
  await g.close();
  // Past maxOutputBytes even an answer of the wrong shape is too large.
  g = await CapabilityGraph.open({ providers: providers(), budgets: { match: { maxOutputBytes: 100 } }, executor: { id: 't', match: async () => 'x'.repeat(200) } });
  await rejectsWith(g.match({ intent: 'x' }), 'CG_MODEL_OUTPUT_TOO_LARGE', 'match', 'narrow_scope', { limit: 100 });
  await g.close();
});

test('an executor answering 100k selections is refused without walking them all', async () => {
  const ids = Array.from({ length: 100_000 }, (_, i) => ({ id: `acme::c${i}` }));
  let read = 0;
  // Counts the elements the pure-JSON walk reads (it reads each through its descriptor).
  const counted = new Proxy(ids, {
    getOwnPropertyDescriptor(target, key) {
      read++;
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
  });
  const g = await answer({ status: 'matched', selections: counted });
  await rejectsWith(g.match({ intent: 'x' }), 'CG_MODEL_OUTPUT_TOO_LARGE', 'match', 'narrow_scope', { limit: 65536 });
  assert.ok(read <= 65536 / 10, `${read} selections read for a 64 KiB bound`);
  await g.close();
});

test('an executor answering 200k selections leaves the event loop free (child process, deadline)', () => {
  const script = `
    import { CapabilityGraph } from '@devcodex/capability-graph';
    const selections = Array.from({ length: 200000 }, (_, i) => ({ id: 'acme::c' + i }));
    const budgets = { match: { maxLimit: 1000000, maxOutputBytes: 100000000 } };
    const capabilities = [{ capabilityId: 'a', name: 'A', description: 'a', whenToUse: 'a' }];
    const g = await CapabilityGraph.open({ providers: [{ definition: { providerId: 'acme', name: 'acme', version: '1', capabilities } }], budgets,
      executor: { id: 't', match: async () => ({ status: 'matched', selections: [...selections, selections[0]] }) } });
    const outcome = await g.match({ intent: 'x', limit: 1000000 }).catch((e) => e.code + ' ' + e.details?.reason);
    console.log(outcome);
    await g.close();
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.signal, null, 'settled within the deadline');
  // With raised budgets every selection is checked: the duplicate at the end is found.
  assert.equal(r.stdout.trim(), 'CG_MODEL_OUTPUT_INVALID duplicate_selection');
});

test('the lexical executor is held to the match contract while it waits for its index', async () => {
  const require = createRequire(import.meta.url);
  const { holdLexicalIndexBuilds } = require('../binding.js');
  const stats = (g) => g[Symbol.for('capability-graph.stats')]().providers[0];
  const custom = await withExecutor(() => new Promise(() => {}));
  const intent = 'Capability a';
  const before = holdLexicalIndexBuilds(true);
  let g;
  try {
    g = await CapabilityGraph.open({ providers: providers().slice(0, 1), executor: lexicalExecutor() });
    assert.equal(stats(g).lexicalIndexBytes, null, 'the index build is held');
    const outcomes = async (graph) => {
      const aborted = new AbortController();
      aborted.abort();
      const pre = await graph.match({ intent, signal: aborted.signal }).catch((e) => e);
      const later = new AbortController();
      const waiting = graph.match({ intent, signal: later.signal }).catch((e) => e);
      setImmediate(() => later.abort());
      const timeout = await graph.match({ intent, timeoutMs: 1 }).catch((e) => e);
      return [pre, await waiting, timeout].map((e) => [e.code, e.phase, e.nextAction]);
    };
    const expected = [
      ['CG_MODEL_CANCELLED', 'match', 'retry'],
      ['CG_MODEL_CANCELLED', 'match', 'retry'],
      ['CG_MODEL_TIMEOUT', 'match', 'retry'],
    ];
    assert.deepEqual(await outcomes(custom), expected, 'a custom executor');
    assert.deepEqual(await outcomes(g), expected, 'the lexical executor');
    // Nothing settled these calls but their signal and deadline: the index is still held.
    assert.equal(stats(g).lexicalIndexBytes, null);
  } finally {
    assert.equal(holdLexicalIndexBuilds(false), before + 1, 'one build for the snapshot');
  }
  const r = await g.match({ intent });
  assert.equal(r.status, 'matched');
  assert.ok(stats(g).lexicalIndexBytes > 0);
  assert.equal(holdLexicalIndexBuilds(false), before + 1, 'the build that waited is the one the next match used');
  await g.close();
  await custom.close();
});

test('close() during the lexical executor wait answers CG_GRAPH_CLOSED', async () => {
  const require = createRequire(import.meta.url);
  const { holdLexicalIndexBuilds } = require('../binding.js');
  const before = holdLexicalIndexBuilds(true);
  try {
    const g = await CapabilityGraph.open({ providers: providers().slice(0, 1), executor: lexicalExecutor() });
    const pending = g.match({ intent: 'Capability a' }).catch((e) => e);
    // Close only once a build waits at the gate (its thread may start late on a busy machine),
    // so the match is surely waiting for a held index.
    while (holdLexicalIndexBuilds(true) === before) await new Promise((resolve) => setTimeout(resolve, 5));
    await g.close();
    const e = await pending;
    assert.deepEqual([e.code, e.phase, e.nextAction], ['CG_GRAPH_CLOSED', 'lifecycle', undefined]);
  } finally {
    holdLexicalIndexBuilds(false);
  }
});

test('an intent of white space and byte order marks only is blank', async () => {
  const g = await CapabilityGraph.open({ providers: [inline('acme', [cap('x')])], executor: lexicalExecutor() });
  try {
    for (const intent of ['', '  \t', '\uFEFF', ' \uFEFF\n']) {
      await rejectsWith(g.match({ intent }), 'CG_INPUT_INVALID', 'match', 'fix_input', { field: 'intent' });
    }
    assert.ok(['matched', 'no_match'].includes((await g.match({ intent: '\uFEFFx' })).status));
  } finally {
    await g.close();
  }
});

test('npm run eval:match measures tool search over 150 tools per executor, printed and in --json', async () => {
  const { spawnSync } = await import('node:child_process');
  const cg = await import('@devcodex/capability-graph');
  const script = new URL('../bench/eval-match.mjs', import.meta.url).pathname;
  // The lexical executor through the script (the semantic one's match figures take minutes in a
  // debug build); every executor in process, with no catalog sizes.
  const args = [script, '--sizes=small', '--split=tune', '--executor=lexical'];
  const json = spawnSync(process.execPath, [...args, '--json'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(json.status, 0, json.stderr);
  const { toolSearch } = JSON.parse(json.stdout);
  assert.deepEqual(toolSearch.map((r) => r.executor), ['lexical']);
  const { evaluate, EXECUTORS } = await import('../bench/eval-match.mjs');
  const all = await evaluate({ sizes: [], executors: EXECUTORS, toolSearch: true });
  // One row per executor that ran, none for one this machine cannot run.
  assert.deepEqual(all.toolSearch.map((r) => r.executor), all.executors);
  assert.ok(all.executors.includes('lexical'));
  if (typeof cg.semanticExecutor !== 'function') assert.ok('semantic' in all.unavailable);
  assert.deepEqual(all.toolSearch[0], toolSearch[0]);
  for (const row of all.toolSearch) {
    assert.equal(row.tools, 150);
    assert.ok(row.intents >= 60);
    assert.ok(row.top1 <= row.top3 && row.top3 <= row.top5, JSON.stringify(row));
    assert.equal(row.top3, Math.round((row.counts.top3 / row.intents) * 1000) / 10);
  }
  const text = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 120_000 });
  assert.equal(text.status, 0, text.stderr);
  const lexical = toolSearch.find((r) => r.executor === 'lexical');
  assert.match(text.stdout, /\ntool search: 150 tools, \d+ requests; top-1 top-3 top-5 no_match\n/);
  assert.ok(text.stdout.includes(`lexical   ${lexical.top1.toFixed(1).padStart(5)} ${lexical.top3.toFixed(1).padStart(5)} ${lexical.top5.toFixed(1).padStart(5)}`), text.stdout);
});
