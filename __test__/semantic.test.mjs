// The semantic executor with a host embedder: the embedder contract and its bounds, the
// background build of capability vectors (waits, deadlines, close), fusion with the lexical
// evidence, the cache across reloads, and the first-party encoder's missing package.
import assert from 'node:assert/strict';
import test from 'node:test';
import { CapabilityGraph, GraphError, lexicalExecutor, semanticExecutor } from '@devcodex/capability-graph';
import { spawnSync } from 'node:child_process';
import { cap, inline, needsModel, projectWithoutModel, rejectsWith, seedSource } from './helpers.mjs';

/** Words that mean the same thing share one dimension: a tiny stand-in for a sentence encoder. */
const CONCEPTS = [
  ['refund', 'refunds', 'returns', 'reimburse', 'reimbursement'],
  ['customer', 'customers', 'purchaser', 'buyer', 'client'],
  ['invoice', 'invoices', 'bill', 'billing'],
  ['region', 'frankfurt', 'virginia', 'datacenter'],
];
const STOP = new Set(['the', 'and', 'for', 'with', 'what', 'they', 'from', 'after', 'that', 'this', 'their']);

function wordsEmbedder({ id = 'words-test', dimensions = 32, embed } = {}) {
  const calls = [];
  const vectorOf = (text, out, at) => {
    for (const w of text.toLowerCase().split(/[^a-z0-9]+/)) {
      if (w.length < 3 || STOP.has(w)) continue;
      const concept = CONCEPTS.findIndex((c) => c.includes(w));
      let k = concept;
      if (k < 0) k = CONCEPTS.length + ([...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % (dimensions - CONCEPTS.length));
      out[at + k] += 1;
    }
    out[at + dimensions - 1] += 0.01;
  };
  const plain = (texts) => {
    const out = new Float32Array(texts.length * dimensions);
    texts.forEach((t, i) => vectorOf(t, out, i * dimensions));
    return out;
  };
  return {
    id,
    dimensions,
    calls,
    embed(texts, options) {
      calls.push(texts);
      return embed ? embed(texts, options, plain) : plain(texts);
    },
  };
}

const billing = (extra = []) =>
  inline('acme', [
    cap('billing.invoices', {
      name: 'Invoices',
      description: 'Issues invoices with line items and tax.',
      whenToUse: 'Send a customer a bill for what they bought.',
    }),
    cap('billing.refunds', {
      name: 'Refunds',
      description: 'Returns a payment to a customer.',
      whenToUse: 'Give money back after a cancellation.',
    }),
    cap('client.config', {
      name: 'Client configuration',
      description: 'Settings of the SDK client: endpoint region, retries and timeouts.',
      whenToUse: 'Change where or how the client connects.',
    }),
    ...extra,
  ]);

const open = (embedder, options = {}, budgets) =>
  CapabilityGraph.open({ providers: [billing()], executor: semanticExecutor({ embedder, ...options }), ...(budgets ? { budgets } : {}) });

const texts = (embedder) => embedder.calls.flat();

test('a paraphrase that shares no word with a capability is found through the host embedder', async () => {
  const lexical = await CapabilityGraph.open({ providers: [billing()], executor: lexicalExecutor() });
  const intent = 'reimburse the purchaser';
  assert.equal((await lexical.match({ intent })).status, 'no_match');
  await lexical.close();

  const embedder = wordsEmbedder();
  const g = await open(embedder);
  const r = await g.match({ intent });
  assert.equal(r.status, 'matched');
  assert.equal(r.matches[0].qualifiedId, 'acme::billing.refunds');
  assert.equal(r.meta.executor.id, 'semantic');
  for (const m of r.matches) {
    assert.ok(m.confidence > 0 && m.confidence <= 1);
    assert.ok(Buffer.byteLength(m.reason) <= 256);
    assert.match(m.reason, /^close in meaning to "/);
  }
  assert.match(r.matches[0].reason, /Returns a payment to a customer/);
  assert.deepEqual(r.resolution.requested.map((x) => x.qualifiedId ?? x.id?.capabilityId).length, r.matches.length);
  // Capability texts: name, description, whenToUse, examples (never a document body); one
  // intent per call.
  const all = texts(embedder);
  assert.ok(all.includes('Refunds. Returns a payment to a customer. Give money back after a cancellation.'), JSON.stringify(all));
  assert.deepEqual(embedder.calls.at(-1), [intent]);
  await g.close();
});

test('a named ID stays decisive, unrelated requests are no_match, minScore is overridable', async () => {
  const g = await open(wordsEmbedder());
  const named = await g.match({ intent: 'use client.config for this' });
  assert.equal(named.matches[0].qualifiedId, 'acme::client.config');
  assert.equal(named.matches[0].confidence, 1);
  assert.equal((await g.match({ intent: 'bake sourdough bread at home' })).status, 'no_match');
  await g.close();
  const strict = await open(wordsEmbedder(), { minScore: 1 });
  assert.equal((await strict.match({ intent: 'reimburse the purchaser' })).status, 'no_match');
  await strict.close();
});

test("signals: 'dense' (an evaluation option) ranks on the cosine alone: a named ID is only words to it", async () => {
  assert.deepEqual(semanticExecutor().options, { minScore: 0.3, signals: 'fused' });
  const fused = await open(wordsEmbedder());
  const dense = await open(wordsEmbedder(), { signals: 'dense' });
  try {
    const intent = 'use client.config for this';
    const [named] = (await fused.match({ intent })).matches;
    assert.deepEqual([named.qualifiedId, named.confidence], ['acme::client.config', 1]);
    for (const m of (await dense.match({ intent })).matches) {
      assert.ok(m.confidence < 1, JSON.stringify(m));
      assert.match(m.reason, /^close in meaning to "/);
    }
  } finally {
    await fused.close();
    await dense.close();
  }
});

test('semanticExecutor options and the embedder are checked like every host component', async () => {
  for (const bad of [{ minScore: 2 }, { other: 1 }, [], { embedder: null }, { embedder: 'e' }, { signals: 'lexical' }, { signals: 1 }]) {
    assert.throws(() => semanticExecutor(bad), (e) => e instanceof GraphError && e.code === 'CG_CONFIG_INVALID');
  }
  const cases = [
    [{ id: 'e', dimensions: 8 }, 'executor.embedder.embed'],
    [{ id: '', dimensions: 8, embed() {} }, 'executor.embedder.id'],
    [{ id: '../x', dimensions: 8, embed() {} }, 'executor.embedder.id'],
    [{ id: 'e', embed() {} }, 'executor.embedder.dimensions'],
    [{ id: 'e', dimensions: 0, embed() {} }, 'executor.embedder.dimensions'],
    [{ id: 'e', dimensions: 5000, embed() {} }, 'executor.embedder.dimensions'],
  ];
  for (const [embedder, path] of cases) {
    await rejectsWith(open(embedder), 'CG_CONFIG_INVALID', 'config', 'check_config', { path });
  }
});

test('budgets.match embed bounds have defaults and ceilings, and bound what the embedder sees', async () => {
  for (const [field, value] of [['embedBatchSize', 1025], ['maxEmbedTextBytes', 65_537], ['embedTimeoutMs', 2 ** 31], ['embedBatchSize', 0]]) {
    await rejectsWith(open(wordsEmbedder(), {}, { match: { [field]: value } }), 'CG_CONFIG_INVALID', 'config', 'check_config', { path: `budgets.match.${field}` });
  }
  const embedder = wordsEmbedder();
  const g = await open(embedder, {}, { match: { embedBatchSize: 2, maxEmbedTextBytes: 40 } });
  await g.match({ intent: 'reimburse the purchaser of the goods, right away, as soon as possible' });
  assert.ok(embedder.calls.every((batch) => batch.length <= 2), JSON.stringify(embedder.calls));
  assert.ok(texts(embedder).every((t) => Buffer.byteLength(t) <= 40), JSON.stringify(embedder.calls));
  await g.close();
});

const failures = {
  throws: () => {
    throw new Error('secret /home/me/key.pem refused');
  },
  rejects: () => Promise.reject(Object.assign(new Error('/etc/secret'), { code: 'CG_INTERNAL' })),
  'wrong length': (texts) => new Float32Array(texts.length * 32 + 1),
  NaN: (texts) => new Float32Array(texts.length * 32).fill(Number.NaN),
  zero: (texts) => new Float32Array(texts.length * 32),
  array: (texts) => Array.from({ length: texts.length * 32 }, () => 1),
  'never answers': () => new Promise(() => {}),
};
/** The `details.reason` each failure gives: the embedder threw, missed its deadline, or gave no usable vectors. */
const reasons = {
  throws: 'embedder_failed',
  rejects: 'embedder_failed',
  'wrong length': 'embedder_output_invalid',
  NaN: 'embedder_output_invalid',
  zero: 'embedder_output_invalid',
  array: 'embedder_output_invalid',
  'never answers': 'embedder_timeout',
};

test('a failing embedder building vectors fails the match CG_MODEL_UNAVAILABLE / retry, then recovers', async () => {
  for (const [name, fail] of Object.entries(failures)) {
    let broken = true;
    const embedder = wordsEmbedder({ embed: (texts, o, plain) => (broken ? fail(texts) : plain(texts)) });
    const g = await open(embedder, {}, { match: { embedTimeoutMs: 50 } });
    const e = await rejectsWith(g.match({ intent: 'reimburse the purchaser' }), 'CG_MODEL_UNAVAILABLE', 'match', 'retry', { reason: reasons[name] });
    assert.doesNotMatch(JSON.stringify(e.toJSON()) + e.message, /secret|\/etc|\/home/, name);
    broken = false;
    const r = await g.match({ intent: 'reimburse the purchaser' });
    assert.equal(r.matches[0].qualifiedId, 'acme::billing.refunds', name);
    await g.close();
  }
});

test('a failing embedder for the intent fails that match CG_MODEL_UNAVAILABLE / retry', async () => {
  for (const [name, fail] of Object.entries(failures)) {
    const embedder = wordsEmbedder({ embed: (texts, o, plain) => (texts.length === 1 && texts[0].startsWith('reimburse') ? fail(texts) : plain(texts)) });
    const g = await open(embedder, {}, { match: { embedTimeoutMs: 50 } });
    const e = await rejectsWith(g.match({ intent: 'reimburse the purchaser' }), 'CG_MODEL_UNAVAILABLE', 'match', 'retry', { reason: reasons[name] });
    assert.doesNotMatch(JSON.stringify(e.toJSON()) + e.message, /secret|\/etc|\/home/, name);
    assert.equal((await g.match({ intent: 'a bill for the buyer' })).matches[0].qualifiedId, 'acme::billing.invoices', name);
    await g.close();
  }
});

/** An embedder whose capability batches wait until released. */
function heldEmbedder() {
  let release;
  const released = new Promise((r) => {
    release = r;
  });
  const signals = [];
  const embedder = wordsEmbedder({
    embed: async (texts, { signal }, plain) => {
      if (texts.length > 1) {
        signals.push(signal);
        await released;
      }
      return plain(texts);
    },
  });
  return { embedder, release, signals };
}

test('a match before the vectors are built waits within its deadline: CG_MODEL_TIMEOUT past it', async () => {
  const { embedder, release } = heldEmbedder();
  const g = await open(embedder);
  await rejectsWith(g.match({ intent: 'reimburse the purchaser', timeoutMs: 100 }), 'CG_MODEL_TIMEOUT', 'match', 'retry');
  const waiting = g.match({ intent: 'reimburse the purchaser' });
  release();
  assert.equal((await waiting).matches[0].qualifiedId, 'acme::billing.refunds');
  // Other verbs never wait for the build.
  assert.equal((await g.getCapabilities(['acme::billing.refunds'])).results[0].ok, true);
  await g.close();
});

test('close() stops the build: the waiting match rejects CG_GRAPH_CLOSED and the embedder is aborted', async () => {
  const { embedder, signals } = heldEmbedder();
  const g = await open(embedder);
  const waiting = g.match({ intent: 'reimburse the purchaser' });
  while (signals.length === 0) await new Promise((r) => setImmediate(r));
  await g.close();
  await rejectsWith(waiting, 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  assert.equal(signals[0].aborted, true);
  const calls = embedder.calls.length;
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(embedder.calls.length, calls);
});

test('a reload embeds only the capabilities whose text changed', async () => {
  const embedder = wordsEmbedder();
  const g = await CapabilityGraph.open({ providers: [billing()], executor: semanticExecutor({ embedder }) });
  await g.match({ intent: 'reimburse the purchaser' });
  const before = texts(embedder).length;
  assert.equal(before, 3 + 1);
  const changed = billing([cap('billing.disputes', { name: 'Disputes', description: 'A customer contests a charge.', whenToUse: 'A chargeback arrived.' })]);
  await g.reload({ providerId: 'acme', definitions: { acme: changed.definition } });
  const r = await g.match({ intent: 'reimburse the purchaser' });
  assert.equal(r.matches[0].qualifiedId, 'acme::billing.refunds');
  const after = texts(embedder).slice(before);
  assert.deepEqual(after.filter((t) => t !== 'reimburse the purchaser'), ['Disputes. A customer contests a charge. A chargeback arrived.']);
  // Unchanged: nothing embedded but the intent.
  await g.reload({ providerId: 'acme', definitions: { acme: changed.definition } });
  const n = texts(embedder).length;
  await g.match({ intent: 'reimburse the purchaser' });
  assert.equal(texts(embedder).length, n + 1);
  await g.close();
});

test('without an embedder and without the model package, open works and match says which package to install', () => {
  const p = projectWithoutModel();
  try {
    const script = `
      import { CapabilityGraph, semanticExecutor } from '@devcodex/capability-graph';
      const definition = ${JSON.stringify(billing().definition)};
      const g = await CapabilityGraph.open({ providers: [{ definition }], executor: semanticExecutor() });
      const other = await g.getCapabilities(['acme::billing.refunds']);
      const error = await g.match({ intent: 'reimburse the purchaser' }).then(() => null, (e) => e.toJSON());
      console.log(JSON.stringify({ ok: other.results[0].ok, error }));
      await g.close();`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: p.dir, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    const { ok, error } = JSON.parse(r.stdout);
    assert.equal(ok, true);
    assert.deepEqual([error.code, error.phase, error.nextAction, error.details.package], ['CG_MODEL_UNAVAILABLE', 'match', 'check_config', '@devcodex/capability-graph-minilm']);
    assert.equal(r.stdout.includes(p.dir), false);
  } finally {
    p.cleanup();
  }
});

test('with the model package, the first-party encoder builds the vectors in the engine and finds what a request means', { skip: needsModel }, async () => {
  const g = await CapabilityGraph.open({ providers: [seedSource()], executor: semanticExecutor() });
  const r = await g.match({ intent: 'validate the request body before the handler runs' });
  assert.equal(r.matches[0].qualifiedId, 'seed.http::route.validation');
  assert.match(r.matches[0].reason, /^close in meaning to "Check a route's input/);
  const named = await g.match({ intent: 'use route.http here' });
  assert.deepEqual([named.matches[0].qualifiedId, named.matches[0].confidence], ['seed.http::route.http', 1]);
  const [stats] = g[Symbol.for('capability-graph.stats')]().providers;
  assert.ok(stats.vectorBytes > 0 && stats.vectorBytes / stats.capabilities <= 512);
  await g.close();
});

test('signal, scope and revisions hold as for every executor', async () => {
  const { embedder, release } = heldEmbedder();
  const other = inline('zeta', [cap('refunds.ledger', { name: 'Refund ledger', description: 'Returns recorded for each customer.', whenToUse: 'Audit refunds.' })]);
  const g = await CapabilityGraph.open({ providers: [billing(), other], executor: semanticExecutor({ embedder }) });
  const controller = new AbortController();
  const waiting = g.match({ intent: 'reimburse the purchaser', signal: controller.signal });
  controller.abort();
  await rejectsWith(waiting, 'CG_MODEL_CANCELLED', 'match', 'retry');
  release();
  const both = await g.match({ intent: 'reimburse the purchaser' });
  assert.deepEqual(new Set(both.matches.map((m) => m.id.providerId)), new Set(['acme', 'zeta']));
  const narrowed = await g.match({ intent: 'reimburse the purchaser', requestProviderScope: ['zeta'] });
  assert.deepEqual(narrowed.matches.map((m) => m.qualifiedId), ['zeta::refunds.ledger']);
  const bound = await g.forProvider('acme').match({ intent: 'reimburse the purchaser' });
  assert.ok(bound.matches.every((m) => m.id.providerId === 'acme'));
  // The previous revision, once a reload replaced it, is served with vectors of its own.
  const revision = both.meta.staticRevisionByProvider.acme;
  await g.reload({ providerId: 'acme', definitions: { acme: inline('acme', [cap('billing.refunds', { description: 'Nothing like before.' })]).definition } });
  const old = await g.match({ intent: 'reimburse the purchaser', requiredStaticRevisionByProvider: { acme: revision }, requestProviderScope: ['acme'] });
  assert.equal(old.meta.servedFromByProvider.acme, 'previous');
  assert.equal(old.matches[0].qualifiedId, 'acme::billing.refunds');
  assert.match(old.matches[0].reason, /Returns a payment/);
  await g.close();
});
