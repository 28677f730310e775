// The lexical executor's answers, byte for byte: digests of the full `match` output (statuses,
// rankings, confidences, reasons) for every intent of the evaluation providers
// (examples/eval-provider, examples/eval-objstore), alone and mixed into a generated 10k catalog,
// and for generated intents over the generated catalog alone. Recorded in
// fixtures/lexical-equivalence.json. Work on the index's memory or build time must leave every
// digest unchanged; a deliberate change of answers re-takes the record in the same commit:
//
//   CG_RECORD_LEXICAL=1 node --test __test__/lexical-equivalence.test.mjs
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { family } from './helpers.mjs';
import { CapabilityGraph, lexicalExecutor } from '@devcodex/capability-graph';
import { capabilityId, generate, GENERATOR_VERSION, PROVIDER_ID, prng } from '../bench/generate.mjs';

const N = 10_000;
const here = path.dirname(fileURLToPath(import.meta.url));
const record = path.join(here, 'fixtures', 'lexical-equivalence.json');
const examples = path.join(here, '..', 'examples');
const EVAL = [
  { providerId: 'eval.webapp', dir: 'eval-provider' },
  { providerId: 'eval.objstore', dir: 'eval-objstore' },
];

const fileSource = (providerId, rootDir) => ({ providerId, authority: { kind: 'file', rootDir, definitionLayout: 'directory' } });
const intentsOf = (p) => JSON.parse(readFileSync(path.join(examples, p.dir, 'intents.json'), 'utf8')).map((i) => i.intent);

/** Requests over the generated catalog's vocabulary: words, names, IDs, stems, CJK, nonsense. */
function generatedIntents() {
  const rnd = prng(0x1e71ca1);
  const verbs = ['validate', 'route', 'cache', 'render', 'schedule', 'migrate', 'index', 'export', 'encrypt', 'publish'];
  const nouns = ['request', 'payload', 'session', 'invoice', 'report', 'webhook', 'queue', 'ledger', 'tenant', 'cursor'];
  const qualifiers = ['incoming', 'stored', 'pending', 'signed', 'nested', 'versioned', 'expired', 'streamed'];
  const out = [
    'validation of incoming requests',
    'serializing nested payloads',
    'encryption of stored invoices before it is persisted',
    'throttl',
    'paginating versioned cursors behind the public API',
    '发送邮件',
    'quantum chess openings',
    '',
    'the the the',
    `please use ${capabilityId(4321)}`,
    `${PROVIDER_ID}::${capabilityId(17)} and ${capabilityId(9999)}`,
    `synthetic.${capabilityId(250)}`,
    'cap4321',
    'area3 group80',
    'reconcile ledgers 4321',
  ];
  for (let i = 0; i < 40; i++) {
    const words = [rnd.pick(verbs), rnd.pick(qualifiers), `${rnd.pick(nouns)}s`];
    if (i % 4 === 1) words.push(String(rnd.int(N)));
    if (i % 5 === 2) words.push('during nightly maintenance');
    out.push(words.join(' '));
  }
  return out;
}

test('the lexical executor answers exactly as recorded', { timeout: 600_000 }, async () => {
  const synthetic = await generate(N);
  const digests = {};
  const variants = [
    { key: 'default', executor: lexicalExecutor(), query: { limit: 5 } },
    { key: 'wide', executor: lexicalExecutor({ minScore: 0.05 }), query: { limit: 20 } },
  ];
  for (const { key, executor, query } of variants) {
    for (const p of EVAL) {
      const f = family();
      const graph = await CapabilityGraph.open({ providers: [fileSource(p.providerId, path.join(examples, p.dir))], executor });
      try {
        for (const intent of intentsOf(p)) await f.add(graph.match({ ...query, intent }));
      } finally {
        await graph.close();
      }
      digests[`${key}:${p.providerId}`] = f.digest();
    }
  }

  // Both evaluation providers and the generated catalog in one scope.
  const mixed = await CapabilityGraph.open({
    providers: [...EVAL.map((p) => fileSource(p.providerId, path.join(examples, p.dir))), fileSource(PROVIDER_ID, synthetic)],
    executor: lexicalExecutor(),
  });
  try {
    const f = family();
    for (const p of EVAL) for (const intent of intentsOf(p)) await f.add(mixed.match({ intent, limit: 5 }));
    digests['mixed-10k'] = f.digest();
  } finally {
    await mixed.close();
  }

  for (const { key, executor, query } of variants) {
    const graph = await CapabilityGraph.open({ providers: [fileSource(PROVIDER_ID, synthetic)], executor });
    try {
      const f = family();
      for (const intent of generatedIntents()) await f.add(graph.match({ ...query, intent }));
      digests[`${key}:generated-10k`] = f.digest();
    } finally {
      await graph.close();
    }
  }

  const current = { generatorVersion: GENERATOR_VERSION, capabilities: N, digests };
  if (process.env.CG_RECORD_LEXICAL === '1') {
    writeFileSync(record, `${JSON.stringify(current, null, 2)}\n`);
    return;
  }
  const expected = JSON.parse(readFileSync(record, 'utf8'));
  assert.equal(expected.generatorVersion, GENERATOR_VERSION, 'the generator changed: re-take the record');
  assert.deepEqual(current, expected);
});
