// The engine's answers on a generated 10k provider, byte for byte: digests of the full
// discovery output (catalog walks, details, neighbours, selections, closures, reads) recorded in
// fixtures/equivalence-10k.json. Work on memory, load time or threading must leave every digest
// unchanged; a deliberate change of answers re-takes the record in the same commit. The record
// holds only what any fresh tree of the generator prints (CI checks it on two of them):
//
//   CG_RECORD_EQUIVALENCE=1 node --test __test__/equivalence.test.mjs
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { family } from './helpers.mjs';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { capabilityId, generate, GENERATOR_VERSION, hasKnowledge, PROVIDER_ID } from '../bench/generate.mjs';

const N = 10_000;
const record = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'equivalence-10k.json');
const id = (i) => `${PROVIDER_ID}::${capabilityId(i)}`;

async function walk(f, graph, query) {
  let cursor;
  do {
    const page = await graph.listCatalog(cursor ? { ...query, cursor } : query);
    await f.add(page);
    cursor = page.nextCursor;
  } while (cursor);
}

/**
 * A page answer as every tree of the same definitions prints it: its cursor names the file it
 * was read from (device, inode, times), which only that tree has, so that part (and the check
 * over it) is replaced by its shape; everything else stays as the engine printed it.
 */
function stable(page) {
  if (page.nextCursor === undefined) return page;
  const { check, after, ...wire } = JSON.parse(Buffer.from(page.nextCursor, 'base64url').toString('utf8'));
  const { file, ...position } = JSON.parse(after);
  assert.match(file, /^[0-9a-f]{16}$/);
  assert.match(check, /^[0-9a-f]{16}$/);
  return { ...page, nextCursor: { ...wire, after: { ...position, file: 'file-stamp' } } };
}

test('a generated 10k provider answers exactly as recorded', { timeout: 600_000 }, async () => {
  const dir = await generate(N);
  const providers = [{ providerId: PROVIDER_ID, authority: { kind: 'file', rootDir: dir, definitionLayout: 'directory' } }];
  const graph = await CapabilityGraph.open({ providers });
  // Small byte budgets: pages filled up to the byte limit rather than the item limit.
  const tight = await CapabilityGraph.open({ providers, budgets: { catalog: { maxBytes: 4096 }, neighbors: { maxBytes: 3072 } } });
  const digests = {};
  try {
    const about = family();
    await about.add(graph.listProviders());
    await about.add(graph.getProvider(PROVIDER_ID));
    await about.add(graph.listSpecificationDocuments({ providerId: PROVIDER_ID }));
    await about.add(graph.readSpecification({ providerId: PROVIDER_ID }));
    digests.providers = about.digest();

    const catalog = family();
    await walk(catalog, graph, {});
    await walk(catalog, graph, { limit: 7 });
    await walk(catalog, tight, {});
    await walk(catalog, graph, { capabilityIdPrefix: 'area3.' });
    await walk(catalog, graph, { parent: id(40) });
    digests.catalog = catalog.digest();

    const details = family();
    for (let i = 0; i < N; i += 16) {
      await details.add(graph.getCapabilities(Array.from({ length: Math.min(16, N - i) }, (_, k) => id(i + k))));
    }
    await details.add(graph.getCapabilities([id(1), 'bench.synthetic::missing', 'bad id']));
    digests.details = details.digest();

    const neighbours = family();
    for (let i = 0; i < N; i++) await neighbours.add(graph.getNeighbors(id(i)));
    for (let i = 0; i < N; i += 97) {
      await neighbours.add(graph.getNeighbors(id(i), { kinds: ['children', 'parents', 'requires'], limitPerKind: 2 }));
      await neighbours.add(tight.getNeighbors(id(i)));
    }
    digests.neighbours = neighbours.digest();

    const selections = family();
    for (let i = 0; i < N; i += 7) {
      await selections.add(graph.resolveSelection({ selected: [id(i), id((i * 31) % N)] }));
      await selections.add(graph.resolve({ ids: [id(i)] }));
    }
    digests.selections = selections.digest();

    const reads = family();
    for (let i = 0; i < N; i += 30) {
      if (!hasKnowledge(i)) continue;
      await reads.add(graph.readDocuments({ selected: [id(i)] }));
      const first = await graph.getCapabilities([id(i)]);
      const knowledgeId = first.results[0].value?.knowledge?.items?.[0]?.knowledgeId;
      if (knowledgeId) await reads.add(graph.readDocumentPage({ capability: id(i), knowledgeId, maxBytes: 256 }).then(stable));
    }
    digests.reads = reads.digest();
  } finally {
    await graph.close();
    await tight.close();
  }

  const current = { generatorVersion: GENERATOR_VERSION, capabilities: N, digests };
  if (process.env.CG_RECORD_EQUIVALENCE === '1') {
    writeFileSync(record, `${JSON.stringify(current, null, 2)}\n`);
    return;
  }
  const expected = JSON.parse(readFileSync(record, 'utf8'));
  assert.equal(expected.generatorVersion, GENERATOR_VERSION, 'the generator changed: re-take the record');
  assert.deepEqual(current, expected);
});
