// Precomputed vectors from a database view (`vectors()`, optional): asked for only by the
// semantic executor, for its model, in bounded pages; an entry is used only when its text hash
// matches; a broken vectors() is ignored (the provider embedded as if it had none) and never
// fails the read. `graph.status()` tells the host, per provider, what became of its vectors.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CapabilityGraph, readVectorsFile, semanticExecutor } from '@devcodex/capability-graph';
import { needsModel, rejectsWith, repoRoot, throwsWith } from './helpers.mjs';
import { vectors } from './fixtures/words-embedder.mjs';
import { vectorsFileBytes } from './fixtures/vectors-file.mjs';

/** The embedder module the CLI loads, the one this process embeds with. */
const EMBEDDER = path.join(repoRoot, '__test__', 'fixtures', 'words-embedder.mjs');
const INTENT = 'handles job number 3';
const N = 24;

function counting(id = 'words-test') {
  const calls = [];
  return { id, dimensions: 16, calls, embed: (texts) => (calls.push(...texts), vectors(texts, 16)) };
}

function capability(i, extra = {}) {
  return {
    capabilityId: `area${Math.floor(i / 10)}.task${String(i).padStart(2, '0')}`,
    name: `Task ${i}`,
    description: `Handles job number ${i} of the catalog for tenant ${i % 7}.`,
    whenToUse: `Work item ${i} needs doing.`,
    ...extra,
  };
}
const PROVIDER = { providerId: 'acme', name: 'Acme', version: '1' };

/** The entries `capability-graph embed` writes for `records` under `model`, as view items. */
function entriesFor(records, model = 'words-test') {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-vview-'));
  try {
    mkdirSync(path.join(dir, 'node_modules', '@devcodex'), { recursive: true });
    symlinkSync(repoRoot, path.join(dir, 'node_modules', '@devcodex', 'capability-graph'), 'dir');
    const root = path.join(dir, 'acme');
    mkdirSync(path.join(root, 'capabilities'), { recursive: true });
    writeFileSync(path.join(root, 'provider.json'), JSON.stringify(PROVIDER));
    records.forEach((r, i) => writeFileSync(path.join(root, 'capabilities', `c${i}.json`), JSON.stringify(r)));
    copyFileSync(EMBEDDER, path.join(dir, 'embedder.mjs'));
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ providers: [], executor: { kind: 'semantic', embedder: './embedder.mjs' } }));
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'embed', 'acme', '--config', 'config.json', '--json'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, CG_TEST_MODEL: model },
    });
    assert.equal(r.status, 0, r.stderr);
    const file = readVectorsFile(readFileSync(path.join(root, 'vectors', `${model}.bin`)));
    assert.deepEqual([file.modelId, file.dimensions, file.entries.length], [model, 16, records.length]);
    return file.entries;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An in-memory database: records, a change log for changedSince, and stored vectors by model. */
class VectorsDb {
  constructor(records) {
    this.records = new Map(records.map((r) => [r.capabilityId, r]));
    this.revision = 1;
    this.log = [];
    this.stored = new Map();
    this.asked = [];
    this.offers = true;
    this.changes = false;
    this.vectors = undefined; // a replacement for vectors() (a broken one)
  }

  write(record) {
    this.records.set(record.capabilityId, record);
    this.revision += 1;
    this.log.push({ revision: this.revision, id: record.capabilityId });
  }

  adapter() {
    const db = this;
    const sorted = (list) => [...list].sort((a, b) => (a.capabilityId < b.capabilityId ? -1 : 1));
    const keyset = (items, { limit, cursor }) => {
      const rest = items.filter((x) => cursor === undefined || x.capabilityId > cursor);
      const page = rest.slice(0, limit);
      return rest.length > limit ? { items: page, nextCursor: page.at(-1).capabilityId } : { items: page };
    };
    return {
      id: 'vectors-db',
      async openView() {
        const view = {
          provider: PROVIDER,
          sourceRevision: String(db.revision),
          scanCapabilities: async (page) => keyset(sorted(db.records.values()), page),
        };
        if (db.changes) {
          view.changedSince = async (since, page) => {
            const ids = [...new Set(db.log.filter((c) => c.revision > Number(since)).map((c) => c.id))];
            return keyset(sorted(ids.map((id) => ({ capabilityId: id, record: db.records.get(id) }))), page);
          };
        }
        if (db.offers) {
          view.vectors = async (modelId, page) => {
            db.asked.push({ modelId, ...page });
            if (db.vectors) return db.vectors(modelId, page);
            const entries = sorted(db.stored.get(modelId) ?? []).filter((e) => page.capabilityIds === undefined || page.capabilityIds.includes(e.capabilityId));
            return keyset(entries, page);
          };
        }
        return view;
      },
    };
  }
}

async function open(db, embedder, budgets) {
  const g = await CapabilityGraph.open({
    providers: [{ providerId: 'acme', authority: { kind: 'database', adapter: db.adapter() } }],
    executor: semanticExecutor({ embedder }),
    ...(budgets ? { budgets } : {}),
  });
  // The first match waits for the vectors.
  await g.match({ intent: INTENT });
  return g;
}

const records = Array.from({ length: N }, (_, i) => capability(i));
const entries = entriesFor(records);

async function vectorsStatus(g) {
  const { providers } = await g.status();
  assert.equal(providers.length, 1);
  assert.equal(providers[0].providerId, 'acme');
  return providers[0].vectors;
}

test('a view whose entries are current embeds no capability, and answers as one without them', async () => {
  const db = new VectorsDb(records);
  db.stored.set('words-test', entries);
  const embedder = counting();
  const g = await open(db, embedder);
  assert.deepEqual(embedder.calls, [INTENT]);
  assert.deepEqual(await vectorsStatus(g), { source: 'view', state: 'used', reason: null, entries: N, used: N, stale: 0, embedded: 0 });
  // Asked once for the executor's model, in pages within the scans' bounds.
  assert.deepEqual(db.asked, [{ modelId: 'words-test', limit: 1000, maxBytes: 262144 }]);

  const plain = new VectorsDb(records);
  plain.offers = false;
  const bare = counting();
  const without = await open(plain, bare);
  assert.equal(bare.calls.length, N + 1);
  assert.deepEqual(await vectorsStatus(without), { source: null, state: 'absent', reason: null, entries: 0, used: 0, stale: 0, embedded: N });
  for (const intent of [INTENT, 'work item 7 needs doing', 'tenant 5 catalog job', 'something unrelated entirely']) {
    assert.deepEqual(await g.match({ intent, limit: 5 }), await without.match({ intent, limit: 5 }), intent);
  }
  await g.close();
  await without.close();
});

test('pages are followed by their cursor; a view is not asked without the semantic executor', async () => {
  const db = new VectorsDb(records);
  db.stored.set('words-test', entries);
  db.vectors = (modelId, page) => {
    const rest = entries.filter((e) => page.cursor === undefined || e.capabilityId > page.cursor);
    const items = rest.slice(0, 5);
    return rest.length > 5 ? { itemsJson: JSON.stringify(items), nextCursor: items.at(-1).capabilityId } : { itemsJson: JSON.stringify(items) };
  };
  const embedder = counting();
  const g = await open(db, embedder);
  assert.deepEqual(embedder.calls, [INTENT]);
  assert.equal(db.asked.length, Math.ceil(N / 5));
  assert.equal((await vectorsStatus(g)).used, N);
  await g.close();

  db.asked = [];
  const lexical = await CapabilityGraph.open({ providers: [{ providerId: 'acme', authority: { kind: 'database', adapter: db.adapter() } }] });
  assert.deepEqual(db.asked, []);
  assert.deepEqual(await lexical.status(), { providers: [{ providerId: 'acme', vectors: null }] });
  await lexical.close();
});

test('stale entries are embedded and foreign entries ignored, never trusted', async () => {
  // One record changed since its entry was computed: only it is embedded.
  const changed = records.map((r, i) => (i === 3 ? capability(3, { description: 'Something else entirely.' }) : r));
  const db = new VectorsDb(changed);
  db.stored.set('words-test', entries);
  const embedder = counting();
  const g = await open(db, embedder);
  assert.equal(embedder.calls.length, 2);
  assert.match(embedder.calls[0], /Something else entirely/);
  assert.deepEqual(await vectorsStatus(g), { source: 'view', state: 'partial', reason: null, entries: N, used: N - 1, stale: 1, embedded: 1 });
  await g.close();

  // Another model's entries, even served under this model's name, match no text of this one.
  const foreign = new VectorsDb(records);
  foreign.stored.set('words-test', entriesFor(records, 'other-model'));
  const e2 = counting();
  const g2 = await open(foreign, e2);
  assert.equal(e2.calls.length, N + 1);
  assert.deepEqual(await vectorsStatus(g2), { source: 'view', state: 'stale', reason: null, entries: N, used: 0, stale: N, embedded: N });
  await g2.close();

  // A database holding only another model's entries gives none for this one.
  const other = new VectorsDb(records);
  other.stored.set('other-model', entries);
  const e3 = counting();
  const g3 = await open(other, e3);
  assert.equal(e3.calls.length, N + 1);
  assert.equal((await vectorsStatus(g3)).state, 'absent');
  await g3.close();
});

test('a broken vectors() is ignored: the provider opens and is embedded, the reason is reported', async () => {
  const good = entries.slice(0, 4);
  const cases = [
    ['throws', () => Promise.reject(new Error('connection to 10.0.0.7 refused at /srv/secret')), 'failed'],
    ['not a page', () => 42, 'corrupt'],
    ['items and itemsJson', () => ({ items: good, itemsJson: '[]' }), 'corrupt'],
    ['itemsJson not JSON', () => ({ itemsJson: '[{' }), 'corrupt'],
    ['an unknown field', () => ({ items: [{ ...good[0], extra: 1 }] }), 'corrupt'],
    ['a bad text hash', () => ({ items: [{ ...good[0], textHash: 'XYZ' }] }), 'corrupt'],
    ['a bad scale', () => ({ items: [{ ...good[0], scale: 2 }] }), 'corrupt'],
    ['not base64', () => ({ items: [{ ...good[0], vector: '!'.repeat(good[0].vector.length) }] }), 'corrupt'],
    ['wrong dimensions', () => ({ items: [{ ...good[0], vector: Buffer.alloc(32, 1).toString('base64') }] }), 'foreign'],
    ['out of order', () => ({ items: [good[1], good[0]] }), 'corrupt'],
    ['a capability twice', () => ({ items: [good[0], good[0]] }), 'corrupt'],
    ['more items than asked', (_, { limit }) => ({ items: Array.from({ length: limit + 1 }, (_, i) => ({ ...good[0], capabilityId: `x${String(i).padStart(5, '0')}` })) }), 'corrupt'],
    ['a cursor with no items', () => ({ items: [], nextCursor: 'again' }), 'corrupt'],
    ['a cursor given twice', () => ({ items: good.slice(0, 1), nextCursor: 'same' }), 'corrupt'],
    ['a cursor not a string', () => ({ items: good.slice(0, 1), nextCursor: 7 }), 'corrupt'],
    ['more entries than records', (_, { cursor }) => {
      const all = entries.concat({ ...good[0], capabilityId: 'zz' });
      const at = Number(cursor ?? 0);
      return at + 10 < all.length ? { items: all.slice(at, at + 10), nextCursor: String(at + 10) } : { items: all.slice(at) };
    }, 'too_large'],
    ['never answers', () => new Promise(() => {}), 'timeout'],
  ];
  for (const [name, vectorsCall, reason] of cases) {
    const db = new VectorsDb(records);
    db.vectors = vectorsCall;
    const embedder = counting();
    const g = await open(db, embedder, { database: { callTimeoutMs: 200 } });
    assert.equal(embedder.calls.length, N + 1, name);
    const status = await vectorsStatus(g);
    assert.deepEqual(status, { source: 'view', state: 'ignored', reason, entries: 0, used: 0, stale: 0, embedded: N }, name);
    assert.equal(JSON.stringify(await g.status()).includes('10.0.0.7'), false);
    assert.equal((await g.match({ intent: INTENT })).status, 'matched', name);
    assert.equal((await g.listProviders()).items[0].capabilityCount ?? N, N);
    await g.close();
  }
});

test('vectors count against the read\'s bytes: past maxBytes they are ignored, the read stands', async () => {
  const db = new VectorsDb(records);
  db.stored.set('words-test', entries);
  const bytes = JSON.stringify([...db.records.values()]).length + JSON.stringify(PROVIDER).length;
  const embedder = counting();
  const g = await open(db, embedder, { database: { maxBytes: bytes + 2000 } });
  assert.equal(embedder.calls.length, N + 1);
  assert.equal((await vectorsStatus(g)).reason, 'too_large');
  await g.close();
});

test('a reload through changedSince asks only for the changed records\' vectors; unchanged ones come from the cache', async () => {
  const db = new VectorsDb(records);
  db.changes = true;
  db.stored.set('words-test', entries);
  const embedder = counting();
  const g = await open(db, embedder);
  assert.deepEqual(embedder.calls, [INTENT]);

  const updated = capability(5, { description: 'Rebuilds the nightly search index.' });
  db.write(updated);
  const [fresh] = entriesFor([updated]);
  db.stored.set('words-test', entries.map((e) => (e.capabilityId === fresh.capabilityId ? fresh : e)));
  db.asked = [];
  const result = await g.reload();
  assert.equal(result.providers[0].ok, true);
  await g.match({ intent: INTENT });
  assert.deepEqual(db.asked, [{ modelId: 'words-test', limit: 1000, maxBytes: 262144, capabilityIds: [updated.capabilityId] }]);
  assert.deepEqual(embedder.calls, [INTENT, INTENT]);
  assert.deepEqual(await vectorsStatus(g), { source: 'view', state: 'used', reason: null, entries: 1, used: 1, stale: 0, embedded: 0 });

  // Its entry not updated: only the changed record is embedded.
  db.write(capability(6, { description: 'Archives old tickets.' }));
  db.asked = [];
  await g.reload();
  await g.match({ intent: INTENT });
  assert.equal(embedder.calls.length, 4);
  assert.match(embedder.calls[2], /Archives old tickets/);
  assert.deepEqual(await vectorsStatus(g), { source: 'view', state: 'stale', reason: null, entries: 1, used: 0, stale: 1, embedded: 1 });
  await g.close();
});

test('status() and readVectorsFile() reject what they cannot take', async () => {
  const db = new VectorsDb(records);
  const g = await open(db, counting());
  await rejectsWith(CapabilityGraph.prototype.status.call({}), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'this' });
  await g.close();
  await rejectsWith(g.status(), 'CG_GRAPH_CLOSED', 'lifecycle', undefined);
  throwsWith(() => readVectorsFile('not bytes'), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'bytes' });
  throwsWith(() => readVectorsFile(new Uint8Array([1, 2, 3])), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'bytes' });
});

test('readVectorsFile() holds a file to the rule a view\'s vectors() pages are held to: capability IDs, each once, in order', async () => {
  const read = readVectorsFile(vectorsFileBytes(['a.one', 'a.two']));
  assert.deepEqual(read.entries.map((e) => e.capabilityId), ['a.one', 'a.two']);
  for (const ids of [['a.one', 'a.one'], ['A0'], ['a.two', 'a.one'], ['a.one', 'x'.repeat(129)]]) {
    throwsWith(() => readVectorsFile(vectorsFileBytes(ids)), 'CG_INPUT_INVALID', 'query', 'fix_input', { field: 'bytes' });
  }
});

test('with the first-party encoder, a view\'s current entries are used before it loads: none embedded', { skip: needsModel }, async () => {
  const few = records.slice(0, 6);
  // The entries the CLI writes with the first-party encoder (no embedder configured).
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-vview-model-'));
  let file;
  try {
    const root = path.join(dir, 'acme');
    mkdirSync(path.join(root, 'capabilities'), { recursive: true });
    writeFileSync(path.join(root, 'provider.json'), JSON.stringify(PROVIDER));
    few.forEach((r, i) => writeFileSync(path.join(root, 'capabilities', `c${i}.json`), JSON.stringify(r)));
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'embed', root, '--json'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const [written] = JSON.parse(r.stdout).written;
    file = readVectorsFile(readFileSync(path.join(root, written)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const db = new VectorsDb(few);
  db.stored.set(file.modelId, file.entries);
  const g = await CapabilityGraph.open({
    providers: [{ providerId: 'acme', authority: { kind: 'database', adapter: db.adapter() } }],
    executor: semanticExecutor(),
  });
  const answer = await g.match({ intent: INTENT });
  assert.equal(db.asked[0].modelId, file.modelId);
  assert.deepEqual(await vectorsStatus(g), { source: 'view', state: 'used', reason: null, entries: 6, used: 6, stale: 0, embedded: 0 });
  await g.close();

  const plain = new VectorsDb(few);
  plain.offers = false;
  const without = await CapabilityGraph.open({
    providers: [{ providerId: 'acme', authority: { kind: 'database', adapter: plain.adapter() } }],
    executor: semanticExecutor(),
  });
  assert.deepEqual(await without.match({ intent: INTENT }), answer);
  assert.equal((await vectorsStatus(without)).embedded, 6);
  await without.close();
});
