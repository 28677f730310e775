// The database authority (SPEC §14 D15, D22): read whole at open and reload through the
// adapter's paged scans, validated like files, every relation list read checked; a view that
// names the state the current snapshot was read from is not read.
import test from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { assertError, rejectsWith, seedRoot, seedSource } from './helpers.mjs';

const KINDS = { parents: 'children', specializes: 'specializedBy', related: 'relatedBy', requires: 'requiredBy' };
/** The eight kinds in the order of the bulk relation scan. */
const ORDER = Object.entries(KINDS).flat();

/** An in-memory "database" holding one provider, with the adapter contract on top. */
class MemoryDatabase {
  constructor(provider, records) {
    this.provider = provider;
    this.records = records;
    this.revision = 1;
    this.tamper = {};
    // How the view gives its edges: per capability (`neighbors`), in bulk (`scanRelations`), or
    // not at all (the records' own relations).
    this.edges = 'each';
    this.calls = {};
    // With `changes`, the view offers changedSince from this log of { revision, id } (each
    // record written or removed, under the revision it made); `forget` makes it answer unknown.
    this.changes = false;
    this.log = [];
    // With `text`, pages give their items as one JSON text (`itemsJson`).
    this.text = false;
  }

  /** Changes record `id` (`undefined` removes it) under a new revision. */
  write(id, record) {
    this.records = this.records.filter((r) => r.capabilityId !== id);
    if (record !== undefined) this.records.push(record);
    this.revision += 1;
    this.log.push({ revision: this.revision, id });
  }

  /** The bulk relation scan of `streams`: by capability, then kind, then endpoint. */
  static bulk(streams) {
    const out = [];
    for (const from of Object.keys(streams).sort()) {
      for (const kind of ORDER) for (const to of streams[from][kind]) out.push({ from, kind, to });
    }
    return out;
  }

  count(method) {
    this.calls[method] = (this.calls[method] ?? 0) + 1;
  }

  streams() {
    const out = Object.fromEntries(this.records.map((r) => [r.capabilityId, Object.fromEntries(Object.entries(KINDS).flat().map((k) => [k, []]))]));
    for (const r of [...this.records].sort((a, b) => (a.capabilityId < b.capabilityId ? -1 : 1))) {
      for (const [forward, inverse] of Object.entries(KINDS)) {
        for (const t of [...(r[forward] ?? [])].sort()) {
          out[r.capabilityId][forward].push(t);
          out[t]?.[inverse].push(r.capabilityId);
        }
      }
    }
    return out;
  }

  adapter() {
    const db = this;
    return {
      id: 'memory-db',
      async openView(providerId) {
        db.count('openView');
        if (db.tamper.openView) throw db.tamper.openView;
        db.asked = providerId;
        const sorted = [...db.records].sort((a, b) => (a.capabilityId < b.capabilityId ? -1 : 1));
        const rows = db.tamper.unsorted ? [...sorted].reverse() : sorted;
        const streams = db.streams();
        if (db.tamper.stream) streams[rows[0].capabilityId].children.push('ghost');
        if (db.tamper.endpoints) {
          let n = 0;
          for (const kinds of Object.values(streams)) {
            for (const [kind, list] of Object.entries(kinds)) kinds[kind] = list.map((id) => db.tamper.endpoints(id, n++));
          }
        }
        const page = (list, { limit, cursor }) => {
          const start = cursor ? Number(cursor) : 0;
          const next = start + limit < list.length ? String(start + limit) : undefined;
          const nextCursor = db.tamper.stuckCursor ? cursor ?? '0' : db.tamper.cyclingCursor && start > 0 ? '0' : next;
          const items = list.slice(start, start + limit);
          const given = db.text ? { itemsJson: db.tamper.itemsJson ?? JSON.stringify(items) } : { items };
          return { ...given, ...(next ? { nextCursor } : {}) };
        };
        const relations = db.tamper.relations ? db.tamper.relations(MemoryDatabase.bulk(streams)) : MemoryDatabase.bulk(streams);
        return {
          provider: db.provider,
          sourceRevision: `rev-${db.revision}`,
          knowledgeRootDir: db.root ?? seedRoot,
          scanCapabilities: async ({ limit, maxBytes, cursor }) => {
            db.count('scanCapabilities');
            assert.ok(limit > 0 && maxBytes > 0);
            if (db.tamper.bloated) return { items: Array.from({ length: limit + 1 }, () => rows[0]) };
            return page(rows, { limit: db.tamper.pageSize ?? limit, cursor });
          },
          ...(db.edges === 'each'
            ? {
                neighbors: async (id, kind, options) => {
                  db.count('neighbors');
                  return page(streams[id][kind], options);
                },
              }
            : {}),
          ...(db.edges === 'bulk'
            ? {
                scanRelations: async ({ limit, maxBytes, cursor }) => {
                  db.count('scanRelations');
                  assert.ok(limit > 0 && maxBytes > 0);
                  return page(relations, { limit: db.tamper.pageSize ?? limit, cursor });
                },
              }
            : {}),
          ...(db.changes
            ? {
                changedSince: async (since, options) => {
                  db.count('changedSince');
                  assert.ok(options.limit > 0 && options.maxBytes > 0);
                  if (db.forget) return { unknown: true };
                  const after = Number(since.slice('rev-'.length));
                  const ids = [...new Set(db.log.filter((e) => e.revision > after).map((e) => e.id))].sort();
                  const items = ids.map((id) => {
                    const record = sorted.find((r) => r.capabilityId === id);
                    return record ? { capabilityId: id, record } : { capabilityId: id, removed: true };
                  });
                  return page(items, options);
                },
              }
            : {}),
          close: async () => {
            db.closed = (db.closed ?? 0) + 1;
          },
        };
      },
    };
  }
}

function seedDatabase() {
  const provider = JSON.parse(readFileSync(path.join(seedRoot, 'provider.json'), 'utf8'));
  const dir = path.join(seedRoot, 'capabilities');
  const records = readdirSync(dir).map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')));
  return new MemoryDatabase(provider, records);
}

const source = (db) => ({ providerId: 'seed.http', authority: { kind: 'database', adapter: db.adapter() } });

test('a database provider serves the same revision as its files and reads documents from its root', async () => {
  const db = seedDatabase();
  db.tamper.pageSize = 2; // several scan pages
  const fromDb = await CapabilityGraph.open({ providers: [source(db)] });
  const fromFiles = await CapabilityGraph.open({ providers: [seedSource()] });
  const [a] = (await fromDb.listProviders()).items;
  const [b] = (await fromFiles.listProviders()).items;
  assert.equal(a.authorityKind, 'database');
  assert.equal(a.staticRevision, b.staticRevision, 'same definitions, same revision, whatever the source');
  assert.deepEqual((await fromDb.resolveSelection({ selected: ['seed.http::route.validation'] })).added, [{ providerId: 'seed.http', capabilityId: 'schema.request' }]);
  const read = await fromDb.readDocuments({ selected: ['seed.http::route.validation'] });
  assert.equal(read.results[0].value.knowledgeId, 'D-02');
  assert.ok(db.closed >= 1, 'the view is closed after the read');
  await fromDb.close();
  await fromFiles.close();
});

test('edges read in bulk, per capability or from the records give the revision of the files', async () => {
  const fromFiles = await CapabilityGraph.open({ providers: [seedSource()] });
  const [expected] = (await fromFiles.listProviders()).items;
  const neighbours = await fromFiles.getNeighbors('seed.http::route');
  const calls = {};
  for (const edges of ['bulk', 'each', 'records']) {
    const db = seedDatabase();
    db.edges = edges;
    db.tamper.pageSize = 2; // several pages of every list
    const graph = await CapabilityGraph.open({ providers: [source(db)] });
    assert.equal((await graph.listProviders()).items[0].staticRevision, expected.staticRevision, edges);
    assert.deepEqual(await graph.getNeighbors('seed.http::route'), neighbours, edges);
    calls[edges] = db.calls;
    await graph.close();
  }
  const edgeCount = MemoryDatabase.bulk(seedDatabase().streams()).length;
  assert.deepEqual(calls.bulk, { openView: 1, scanCapabilities: 3, scanRelations: Math.ceil(edgeCount / 2) });
  assert.equal(calls.each.scanRelations, undefined);
  assert.ok(calls.each.neighbors >= 5 * 8, 'eight streams of each of the five records');
  assert.deepEqual(calls.records, { openView: 1, scanCapabilities: 3 });
  // The records' relations are still checked when they are the only edges.
  const db = seedDatabase();
  db.edges = 'records';
  db.records.find((r) => r.capabilityId === 'route').requires = ['ghost'];
  await rejectsWith(CapabilityGraph.open({ providers: [source(db)] }), 'CG_RELATION_INVALID', 'load', 'fix_input', { capabilityId: 'route', reason: 'missing_endpoint' });
  await fromFiles.close();
});

test('a bulk relation scan that lies fails exactly as the same lie told per capability', async () => {
  const other = (id) => ({ providerId: 'other.provider', capabilityId: id });
  const lies = {
    missing: (list) => list.slice(1),
    extra: (list) => [...list, { from: 'schema.request', kind: 'related', to: 'route' }],
    duplicated: (list) => [list[0], ...list],
    reordered: (list) => [list[1], list[0], ...list.slice(2)],
    'endpoint outside the provider': (list) => list.map((e, i) => (i === 0 ? { ...e, to: other(e.to) } : e)),
    'endpoint not in the provider': (list) => list.map((e, i) => (i === 0 ? { ...e, to: `${e.to}.x` } : e)),
  };
  // The same lies told through the streams: the streams a bulk scan of that list would be.
  const asStreams = (list) => {
    const streams = seedDatabase().streams();
    for (const kinds of Object.values(streams)) for (const kind of ORDER) kinds[kind] = [];
    for (const { from, kind, to } of list) streams[from][kind].push(to);
    return streams;
  };
  for (const [lie, tell] of Object.entries(lies)) {
    const bulk = seedDatabase();
    bulk.edges = 'bulk';
    bulk.tamper.relations = tell;
    const e = await rejectsWith(CapabilityGraph.open({ providers: [source(bulk)] }), 'CG_ADAPTER_CONTRACT_INVALID', 'load', 'contact_admin');
    const each = seedDatabase();
    const told = asStreams(tell(MemoryDatabase.bulk(each.streams())));
    each.streams = () => told;
    const expected = await rejectsWith(CapabilityGraph.open({ providers: [source(each)] }), 'CG_ADAPTER_CONTRACT_INVALID', 'load', 'contact_admin');
    assert.deepEqual(e.details, expected.details, lie);
    assert.match(e.details.reason, /_stream_mismatch$|^neighbor_identity_invalid$/, lie);
  }
  // Page rules and bounds hold for the bulk scan as for every list.
  for (const [overrides, database, reason] of [
    [{ view: () => ({ scanRelations: async () => ({ items: [], nextCursor: freshCursor() }) }) }, {}, 'invalid_store_page'],
    [{ view: () => ({ scanRelations: async ({ limit }) => ({ items: Array.from({ length: limit + 1 }, () => ({ from: 'route', kind: 'children', to: 'route.http' })) }) }) }, {}, 'invalid_store_page'],
    [{ view: () => ({ scanRelations: never }) }, { callTimeoutMs: 20 }, 'database_call_timeout'],
    [{ view: () => ({ scanRelations: async () => ({ items: [{ from: 'route', kind: 'children', to: 'x'.repeat(1_000_000) }] }) }) }, { maxBytes: 1_000_000 }, 'database_too_many_bytes'],
  ]) {
    const { source: s } = viewWith(overrides);
    await rejectsWith(CapabilityGraph.open({ providers: [s], budgets: { database } }), 'CG_CONFIG_INVALID', 'load', 'check_config', { reason });
  }
});

test('a reload whose view names the state the snapshot was read from reads nothing more; force reads', async () => {
  const db = seedDatabase();
  db.edges = 'bulk';
  const graph = await CapabilityGraph.open({ providers: [source(db)] });
  try {
    const opened = { ...db.calls };
    const [before] = (await graph.listProviders()).items;
    const unchanged = await graph.reload();
    assert.deepEqual(unchanged, {
      ok: true,
      providers: [{ providerId: 'seed.http', ok: true, staticRevision: before.staticRevision, servedFrom: 'current', refreshFailed: false }],
    });
    assert.deepEqual(db.calls, { ...opened, openView: opened.openView + 1 }, 'the view was opened, nothing was scanned');
    assert.equal(db.closed, 2, 'and it was closed');
    assert.deepEqual(await graph.reload({ providerId: 'seed.http' }), unchanged);
    assert.equal(db.calls.scanCapabilities, opened.scanCapabilities);

    // force: true reads anyway, and finds the same revision.
    assert.deepEqual(await graph.reload({ force: true }), unchanged);
    assert.equal(db.calls.scanCapabilities, opened.scanCapabilities * 2);
    assert.equal(db.calls.scanRelations, opened.scanRelations * 2);
    assert.deepEqual(await graph.reload({ providerId: 'seed.http', force: true }), unchanged);
    assert.equal(db.calls.scanCapabilities, opened.scanCapabilities * 3);
    await rejectsWith(graph.reload({ force: 'yes' }), 'CG_INPUT_INVALID', 'lifecycle', 'fix_input', { field: 'force' });

    // A committed change names a new revision: read and published.
    db.records.find((r) => r.capabilityId === 'route').name = 'Routing (edited)';
    db.revision += 1;
    const changed = await graph.reload();
    assert.notEqual(changed.providers[0].staticRevision, before.staticRevision);
    assert.equal((await graph.getCapabilities(['seed.http::route'])).results[0].value.name, 'Routing (edited)');
    // A new revision with the same definitions publishes nothing, and is then the one known.
    db.revision += 1;
    const scans = db.calls.scanCapabilities;
    assert.equal((await graph.reload()).providers[0].previousStaticRevision, before.staticRevision);
    assert.equal(db.calls.scanCapabilities, scans + 1);
    await graph.reload();
    assert.equal(db.calls.scanCapabilities, scans + 1, 'the same definitions under a new revision are read once');
    // A changed provider record is read, even under the same revision.
    db.provider = { ...db.provider, version: `${db.provider.version}.1` };
    await graph.reload();
    assert.equal(db.calls.scanCapabilities, scans + 2);
    // A failed read keeps the snapshot; an unchanged source after it clears refreshFailed.
    db.tamper.openView = new Error('down');
    assert.equal((await graph.reload()).ok, false);
    assert.equal((await graph.listCatalog()).meta.refreshFailed, true);
    db.tamper.openView = undefined;
    const back = await graph.reload();
    assert.equal(back.ok, true);
    assert.equal(back.providers[0].refreshFailed, false);
    assert.equal(db.calls.scanCapabilities, scans + 2);
  } finally {
    await graph.close();
  }
});

test('a view offering changedSince is read for what changed since the snapshot: the snapshot a forced full read gives', async () => {
  const db = seedDatabase();
  db.changes = true;
  const graph = await CapabilityGraph.open({ providers: [source(db)] });
  const fromFiles = await CapabilityGraph.open({ providers: [seedSource()] });
  try {
    const opened = { ...db.calls };
    assert.equal(opened.changedSince, undefined, 'an open reads whole');
    // One record changed: only it and the streams of what it touches are read.
    const route = db.records.find((r) => r.capabilityId === 'route');
    db.write('route', { ...route, name: 'Routing (edited)' });
    const changed = await graph.reload();
    assert.equal(changed.ok, true, JSON.stringify(changed));
    assert.equal(db.calls.changedSince, 1);
    assert.equal(db.calls.scanCapabilities, opened.scanCapabilities, 'no record was scanned');
    const streamed = db.calls.neighbors - opened.neighbors;
    assert.ok(streamed > 0 && streamed % 8 === 0 && streamed < opened.neighbors, `${streamed} of ${opened.neighbors} streams`);
    assert.equal((await graph.getCapabilities(['seed.http::route'])).results[0].value.name, 'Routing (edited)');
    // Exactly what a forced full read gives.
    const incremental = await graph.listCatalog();
    const neighbours = await graph.getNeighbors('seed.http::route.http');
    const forced = await graph.reload({ force: true });
    assert.equal(forced.providers[0].staticRevision, changed.providers[0].staticRevision);
    assert.equal(db.calls.scanCapabilities, opened.scanCapabilities + 1);
    assert.deepEqual(await graph.listCatalog(), incremental);
    assert.deepEqual(await graph.getNeighbors('seed.http::route.http'), neighbours);

    // Added, then removed: the files' revision again, read incrementally each time.
    db.write('route', route);
    db.write('route.grpc', { capabilityId: 'route.grpc', name: 'gRPC', description: 'D.', whenToUse: 'W.', parents: ['route'] });
    const added = await graph.reload();
    assert.equal(added.ok, true, JSON.stringify(added));
    const children = await graph.getNeighbors('seed.http::route', { kinds: ['children'] });
    assert.deepEqual(children.groups.children.items.map((n) => n.id.capabilityId), ['route.grpc', 'route.http', 'route.validation']);
    db.write('route.grpc', undefined);
    const back = await graph.reload();
    const [files] = (await fromFiles.listProviders()).items;
    assert.equal(back.providers[0].staticRevision, files.staticRevision);
    assert.equal((await graph.getCapabilities(['seed.http::route.grpc'])).results[0].ok, false);
    assert.equal(db.calls.scanCapabilities, opened.scanCapabilities + 1, 'every reload but the forced one was incremental');
    assert.equal(db.calls.changedSince, 3);

    // A change that breaks a relation is refused like any read; the snapshot stays.
    db.write('route.http', { ...db.records.find((r) => r.capabilityId === 'route.http'), parents: ['ghost'] });
    const broken = await graph.reload();
    assert.equal(broken.ok, false);
    assert.equal(broken.providers[0].error.code, 'CG_RELATION_INVALID');
    assert.equal((await graph.listProviders()).items[0].staticRevision, files.staticRevision);
    // A view that cannot tell what changed since is read whole.
    db.write('route.http', JSON.parse(readFileSync(path.join(seedRoot, 'capabilities', 'route-http.json'), 'utf8')));
    db.forget = true;
    const whole = await graph.reload();
    assert.equal(whole.providers[0].staticRevision, files.staticRevision);
    assert.equal(db.calls.scanCapabilities, opened.scanCapabilities + 2);
  } finally {
    await Promise.all([graph.close(), fromFiles.close()]);
  }
});

test('an incremental reload refuses exactly what a forced full read of the same records refuses', async () => {
  const db = seedDatabase();
  db.changes = true;
  const graph = await CapabilityGraph.open({ providers: [source(db)] });
  try {
    const [before] = (await graph.listProviders()).items;
    const original = (id) => db.records.find((r) => r.capabilityId === id);
    const route = original('route');
    const http = original('route.http');
    const cases = [
      // route.http and route.validation (unchanged) are children of route.
      ['a removed parent of unchanged records', () => db.write('route', undefined), () => db.write('route', route)],
      // route (unchanged) is route.http's parent: a cycle through an unchanged record.
      ['a change closing a cycle', () => db.write('route', { ...route, parents: ['route.http'] }), () => db.write('route', route)],
      ['a changed record invalid of its own', () => db.write('route.http', { ...http, name: '' }), () => db.write('route.http', http)],
    ];
    for (const [name, change, undo] of cases) {
      change();
      const incremental = await graph.reload();
      const scans = db.calls.scanCapabilities;
      const forced = await graph.reload({ force: true });
      assert.equal(db.calls.scanCapabilities, scans + 1, `${name}: the forced reload read whole`);
      assert.equal(incremental.ok, false, name);
      const [got, whole] = [incremental.providers[0].error, forced.providers[0].error];
      assertError(got, whole.code, whole.phase, whole.nextAction, whole.details);
      assert.deepEqual(got, whole, name);
      assert.equal((await graph.listProviders()).items[0].staticRevision, before.staticRevision, `${name}: the snapshot stays`);
      undo();
      const back = await graph.reload();
      assert.equal(back.ok, true, `${name}: ${JSON.stringify(back)}`);
      assert.equal(back.providers[0].staticRevision, before.staticRevision, name);
    }
  } finally {
    await graph.close();
  }
});

test('a page may give its items as one JSON text (itemsJson), judged exactly as items are', async () => {
  const fromFiles = await CapabilityGraph.open({ providers: [seedSource()] });
  try {
    const [files] = (await fromFiles.listProviders()).items;
    for (const edges of ['each', 'bulk', 'records']) {
      const db = seedDatabase();
      Object.assign(db, { edges, text: true });
      const graph = await CapabilityGraph.open({ providers: [source(db)] });
      assert.equal((await graph.listProviders()).items[0].staticRevision, files.staticRevision, edges);
      await graph.close();
    }
    for (const itemsJson of [42, '[{"capabilityId": "route"}', '{}', '["\\ud800"]', '[\ud800]']) {
      const db = seedDatabase();
      Object.assign(db, { text: true, tamper: { itemsJson } });
      await rejectsWith(CapabilityGraph.open({ providers: [source(db)] }), 'CG_ADAPTER_CONTRACT_INVALID', 'load', 'contact_admin');
    }
  } finally {
    await fromFiles.close();
  }
});

test('an inconsistent or failing database never becomes a snapshot', async () => {
  for (const [tamper, code] of [
    [{ unsorted: true }, 'CG_ADAPTER_CONTRACT_INVALID'],
    [{ stream: true }, 'CG_ADAPTER_CONTRACT_INVALID'],
    [{ openView: new Error('connection refused to db at /var/run/secret.sock') }, 'CG_CONFIG_INVALID'],
  ]) {
    const db = seedDatabase();
    db.tamper = tamper;
    const e = await rejectsWith(CapabilityGraph.open({ providers: [source(db)] }), code, 'load', code === 'CG_CONFIG_INVALID' ? 'check_config' : 'contact_admin');
    assert.ok(!JSON.stringify(e).includes('secret'), JSON.stringify(tamper));
  }
  const db = seedDatabase();
  db.records.push({ capabilityId: 'broken', name: ' ', description: 'd', whenToUse: 'w' });
  await rejectsWith(CapabilityGraph.open({ providers: [source(db)] }), 'CG_DEFINITION_INVALID', 'load', 'fix_input', { capabilityId: 'broken', reason: 'nonempty_string_required' });
  const other = seedDatabase();
  other.provider = { ...other.provider, providerId: 'someone.else' };
  await rejectsWith(CapabilityGraph.open({ providers: [source(other)] }), 'CG_DEFINITION_INVALID', 'load', 'fix_input', { reason: 'provider_id_mismatch' });
  assert.equal(other.asked, 'seed.http');
});

test('relation streams may list endpoints as { providerId, capabilityId } beside local IDs', async () => {
  const fromFiles = await CapabilityGraph.open({ providers: [seedSource()] });
  const [expected] = (await fromFiles.listProviders()).items;
  const neighbours = await fromFiles.getNeighbors('seed.http::route');
  for (const endpoints of [
    (capabilityId) => ({ providerId: 'seed.http', capabilityId }),
    (capabilityId, n) => (n % 2 ? capabilityId : { providerId: 'seed.http', capabilityId }),
  ]) {
    const db = seedDatabase();
    db.tamper.endpoints = endpoints;
    const graph = await CapabilityGraph.open({ providers: [source(db)] });
    assert.equal((await graph.listProviders()).items[0].staticRevision, expected.staticRevision);
    assert.deepEqual(await graph.getNeighbors('seed.http::route'), neighbours);
    await graph.close();
  }
  // An endpoint in another provider, or of another shape, is a contract violation.
  for (const [endpoints, reason] of [
    [(capabilityId) => ({ providerId: 'other.provider', capabilityId }), 'neighbor_identity_invalid'],
    [(capabilityId) => ({ capabilityId }), 'neighbor_identity_invalid'],
    [(capabilityId) => ({ providerId: 'seed.http', capabilityId, extra: 1 }), 'neighbor_identity_invalid'],
    [() => 7, 'neighbor_identity_invalid'],
    [(capabilityId) => ({ providerId: 'seed.http', capabilityId: `${capabilityId}.x` }), /_stream_mismatch$/],
  ]) {
    const db = seedDatabase();
    db.tamper.endpoints = endpoints;
    const e = await rejectsWith(CapabilityGraph.open({ providers: [source(db)] }), 'CG_ADAPTER_CONTRACT_INVALID', 'load', 'contact_admin');
    assert.match(e.details.reason, reason instanceof RegExp ? reason : new RegExp(`^${reason}$`));
  }
  await fromFiles.close();
});

test('a knowledge root that changes on a same-revision reload replaces the current root in place', async () => {
  const moved = mkdtempSync(path.join(tmpdir(), 'cg-root-'));
  cpSync(path.join(seedRoot, 'knowledge'), path.join(moved, 'knowledge'), { recursive: true });
  writeFileSync(path.join(moved, 'knowledge', 'route-validation.md'), '# Moved\n\nThe validation guide, from its new home.\n');
  const db = seedDatabase();
  const mappings = [];
  const knowledgeRetriever = {
    id: 'mapping-probe',
    async retrieve(input) {
      mappings.push(input.mappingRevision);
      throw new Error('probe only');
    },
  };
  const graph = await CapabilityGraph.open({ providers: [source(db)], knowledgeRetriever });
  try {
    const probe = () => graph.queryKnowledge({ text: 'validation', selected: ['seed.http::route.validation'] }).catch(() => {});
    const [before] = (await graph.listProviders()).items;
    const page = await graph.readDocumentPage({ capability: 'seed.http::route.validation', knowledgeId: 'D-02', maxBytes: 64 });
    assert.ok(page.nextCursor);
    await probe();

    db.root = moved;
    db.revision += 1;
    const report = await graph.reload();
    assert.equal(report.ok, true);
    assert.equal(report.providers[0].staticRevision, before.staticRevision, 'same definitions, same revision');
    assert.equal(report.providers[0].previousStaticRevision, undefined, 'nothing rotated');
    const read = await graph.readDocuments({ selected: ['seed.http::route.validation'] });
    assert.equal(read.results[0].value.text, '# Moved\n\nThe validation guide, from its new home.\n');
    await rejectsWith(
      graph.readDocumentPage({ capability: 'seed.http::route.validation', knowledgeId: 'D-02', maxBytes: 64, cursor: page.nextCursor }),
      'CG_REVISION_MISMATCH', 'document', 'refresh',
    );
    await probe();
    assert.equal(mappings.length, 2);
    assert.notEqual(mappings[1], mappings[0], 'the mapping revision follows the root');
    // Reloading again without a change keeps everything as it is.
    assert.deepEqual(await graph.reload(), report);
  } finally {
    await graph.close();
    rmSync(moved, { recursive: true, force: true });
  }
});

test('hosts sharing one database each pick up a committed change on reload', async () => {
  const db = seedDatabase();
  const hostA = await CapabilityGraph.open({ providers: [source(db)] });
  const hostB = await CapabilityGraph.open({ providers: [source(db)] });
  const before = (await hostA.listProviders()).items[0].staticRevision;
  db.records.find((r) => r.capabilityId === 'route').name = 'Routing (edited)';
  db.revision += 1;
  const report = await hostA.reload();
  assert.equal(report.ok, true);
  assert.notEqual(report.providers[0].staticRevision, before);
  assert.equal((await hostA.getCapabilities(['seed.http::route'])).results[0].value.name, 'Routing (edited)');
  assert.equal((await hostB.getCapabilities(['seed.http::route'])).results[0].value.name, 'Routing', 'B keeps its snapshot until it reloads');
  assert.equal((await hostB.reload({ providerId: 'seed.http' })).providers[0].staticRevision, report.providers[0].staticRevision);
  // A failing database leaves the last good snapshot in service.
  db.tamper.openView = new Error('down');
  const failed = await hostA.reload();
  assert.equal(failed.ok, false);
  assert.equal(failed.providers[0].error.code, 'CG_CONFIG_INVALID');
  assert.equal(failed.providers[0].error.phase, 'load');
  assert.equal((await hostA.listCatalog()).meta.refreshFailed, true);
  await hostA.close();
  await hostB.close();
});

// --- deadlines and bounds (budgets.database) ----------------------------------------------

/** A view over the seed database whose calls can be replaced one by one. */
function viewWith(overrides) {
  const db = seedDatabase();
  const adapter = db.adapter();
  return {
    db,
    source: {
      providerId: 'seed.http',
      authority: {
        kind: 'database',
        adapter: {
          id: 'tampered',
          async openView(providerId) {
            if (overrides.openView) return overrides.openView();
            const view = await adapter.openView(providerId);
            // Descriptors, so that an override may be a getter.
            return Object.defineProperties(view, Object.getOwnPropertyDescriptors(overrides.view?.(view) ?? {}));
          },
        },
      },
    },
  };
}

const never = () => new Promise(() => {});
let fresh = 0;
const freshCursor = () => `c${fresh++}`;

test('a database past a deadline or bound fails the read with its reason, never hangs or grows', async () => {
  const record = JSON.parse(readFileSync(path.join(seedRoot, 'capabilities', readdirSync(path.join(seedRoot, 'capabilities'))[0]), 'utf8'));
  const cases = [
    [{ openView: never }, { callTimeoutMs: 20 }, 'database_call_timeout'],
    [{ view: () => ({ scanCapabilities: never }) }, { callTimeoutMs: 20 }, 'database_call_timeout'],
    [{ view: () => ({ neighbors: never }) }, { callTimeoutMs: 20 }, 'database_call_timeout'],
    // Each call answers in time, the whole read does not end.
    [{ view: () => ({ scanCapabilities: async () => (await new Promise((r) => setTimeout(r, 1)), { items: [record], nextCursor: freshCursor() }) }) }, { readTimeoutMs: 30 }, 'database_read_timeout'],
    [{ view: () => ({ scanCapabilities: async () => ({ items: [record], nextCursor: freshCursor() }) }) }, { maxRecords: 50 }, 'database_too_many_records'],
    [{}, { maxBytes: 2000 }, 'database_too_many_bytes'],
    // Few, huge relation stream items count too.
    [{ view: () => ({ neighbors: async () => ({ items: ['x'.repeat(1_000_000)] }) }) }, { maxBytes: 3_000_000 }, 'database_too_many_bytes'],
    [{ view: () => ({ scanCapabilities: async () => ({ items: [], nextCursor: freshCursor() }) }) }, {}, 'invalid_store_page'],
    [{ view: () => ({ neighbors: async () => ({ items: [], nextCursor: freshCursor() }) }) }, {}, 'invalid_store_page'],
    [{ view: () => ({ neighbors: async () => ({ items: ['route'], nextCursor: freshCursor() }) }) }, {}, 'neighbor_stream_unbounded'],
  ];
  for (const [overrides, database, reason] of cases) {
    const { source: s } = viewWith(overrides);
    await rejectsWith(CapabilityGraph.open({ providers: [s], budgets: { database } }), 'CG_CONFIG_INVALID', 'load', 'check_config', { reason });
  }
  // At reload: that provider's ok:false entry; the last good snapshot stays.
  const tamper = {};
  const { source: s } = viewWith(tamper);
  const graph = await CapabilityGraph.open({ providers: [s], budgets: { database: { callTimeoutMs: 20 } } });
  const before = (await graph.listProviders()).items[0].staticRevision;
  for (const [t, reason] of [
    [{ openView: never }, 'database_call_timeout'],
    [{ view: () => ({ scanCapabilities: async () => ({ items: [], nextCursor: freshCursor() }) }) }, 'invalid_store_page'],
  ]) {
    Object.assign(tamper, { openView: undefined, view: undefined }, t);
    // The source's revision is unchanged: only a forced reload reads it.
    const report = await graph.reload({ force: true });
    assert.equal(report.ok, false);
    assertError(report.providers[0].error, 'CG_CONFIG_INVALID', 'load', 'check_config', { reason });
    assert.equal((await graph.listProviders()).items[0].staticRevision, before);
  }
  await graph.close();
});

test('a page far over its limit or any page\'s bytes is refused before it is walked', async () => {
  const record = JSON.parse(readFileSync(path.join(seedRoot, 'capabilities', readdirSync(path.join(seedRoot, 'capabilities'))[0]), 'utf8'));
  // Work done: the items of a page read (each one's descriptor, as the walk reads it).
  let read = 0;
  const counted = (length) =>
    new Proxy(Array.from({ length }, () => record), {
      getOwnPropertyDescriptor(target, key) {
        if (key !== 'length') read++;
        return Reflect.getOwnPropertyDescriptor(target, key);
      },
    });
  const cases = [
    [{ scanCapabilities: async ({ limit }) => ({ items: counted(limit * 100) }) }, 'CG_CONFIG_INVALID', 'check_config', 'invalid_store_page'],
    [{ scanRelations: async ({ limit }) => ({ items: counted(limit + 1) }) }, 'CG_CONFIG_INVALID', 'check_config', 'invalid_store_page'],
    [{ scanCapabilities: async () => ({ itemsJson: `[${' '.repeat(17 * 1024 * 1024)}]` }) }, 'CG_ADAPTER_CONTRACT_INVALID', 'contact_admin'],
    [{ scanCapabilities: async () => ({ items: [{ ...record, description: 'x'.repeat(17 * 1024 * 1024) }] }) }, 'CG_ADAPTER_CONTRACT_INVALID', 'contact_admin'],
  ];
  for (const [calls, code, action, reason] of cases) {
    read = 0;
    const { source: s } = viewWith({ view: () => calls });
    const e = await rejectsWith(CapabilityGraph.open({ providers: [s] }), code, 'load', action);
    assert.equal(e.details?.reason, reason);
    assert.equal(read, 0, `${code}: ${read} items read`);
  }
});

test('a page over its limit or with a cursor that does not advance fails the read: invalid_store_page', async () => {
  // A cursor equal to the one asked with, or one seen earlier in the same list.
  for (const tamper of [{ bloated: true }, { stuckCursor: true, pageSize: 2 }, { cyclingCursor: true, pageSize: 2 }]) {
    const db = seedDatabase();
    db.tamper = tamper;
    await rejectsWith(CapabilityGraph.open({ providers: [source(db)] }), 'CG_CONFIG_INVALID', 'load', 'check_config', { reason: 'invalid_store_page' });
  }
  const record = JSON.parse(readFileSync(path.join(seedRoot, 'capabilities', readdirSync(path.join(seedRoot, 'capabilities'))[0]), 'utf8'));
  for (const overrides of [
    { view: () => ({ neighbors: async (id, kind, { limit }) => ({ items: Array.from({ length: limit + 1 }, () => 'route') }) }) },
    // An empty cursor would ask for the first page again.
    { view: () => ({ scanCapabilities: async () => ({ items: [record], nextCursor: '' }) }) },
    { view: () => ({ neighbors: async (id, kind, { cursor }) => ({ items: ['route'], nextCursor: cursor ?? 'again' }) }) },
  ]) {
    const { source: s } = viewWith(overrides);
    await rejectsWith(CapabilityGraph.open({ providers: [s] }), 'CG_CONFIG_INVALID', 'load', 'check_config', { reason: 'invalid_store_page' });
  }
  // A page without an items array, or a cursor that is neither a string nor null, breaks the
  // adapter contract.
  for (const scanCapabilities of [async () => null, async () => ({ items: 'x' }), async () => ({ items: [record], nextCursor: 7 }), async () => ({ items: [record], nextCursor: false })]) {
    const { source: s } = viewWith({ view: () => ({ scanCapabilities }) });
    const e = await rejectsWith(CapabilityGraph.open({ providers: [s] }), 'CG_ADAPTER_CONTRACT_INVALID', 'load', 'contact_admin');
    assert.equal(e.details, undefined);
  }
  // A null cursor, like an absent one, marks the last page.
  const { source: lastNull } = viewWith({
    view: (view) => {
      const scan = view.scanCapabilities.bind(view);
      const neighbors = view.neighbors.bind(view);
      const nullEnd = async (page) => ({ ...(await page), nextCursor: (await page).nextCursor ?? null });
      return { scanCapabilities: (...args) => nullEnd(scan(...args)), neighbors: (...args) => nullEnd(neighbors(...args)) };
    },
  });
  const graph = await CapabilityGraph.open({ providers: [lastNull] });
  assert.ok((await graph.listCatalog()).items.length > 1);
  await graph.close();
});

test('a record value that is not plain JSON is CG_DEFINITION_INVALID naming its field, as inline', async () => {
  const record = { capabilityId: 'a', name: 'A', description: 'D.', whenToUse: 'W.' };
  const cyclic = { ...record, examples: [] };
  cyclic.examples.push(cyclic);
  for (const [bad, field] of [
    [{ ...record, name: 1n }, 'capabilities[0].name'],
    [cyclic, 'capabilities[0].examples[0]'],
  ]) {
    const { source: s } = viewWith({ view: () => ({ scanCapabilities: async () => ({ items: [bad] }), neighbors: async () => ({ items: [] }) }) });
    await rejectsWith(CapabilityGraph.open({ providers: [s] }), 'CG_DEFINITION_INVALID', 'load', 'fix_input', { field, reason: 'non_json_value' });
  }
});

test('a page answered after its read passed the deadline never reaches the next provider', async () => {
  const a = seedDatabase();
  const b = seedDatabase();
  b.provider = { ...b.provider, providerId: 'seed.copy' };
  const adapters = { a: a.adapter(), b: b.adapter() };
  const through = (key) => ({ id: key, openView: (providerId) => adapters[key].openView(providerId) });
  const graph = await CapabilityGraph.open({
    providers: [
      { providerId: 'seed.http', authority: { kind: 'database', adapter: through('a') } },
      { providerId: 'seed.copy', authority: { kind: 'database', adapter: through('b') } },
    ],
    budgets: { database: { readTimeoutMs: 1000 } },
  });
  // The first provider's scan answers only once the second provider's read has begun.
  let answer;
  const stale = new Promise((resolve) => (answer = resolve));
  const ghost = { capabilityId: 'zz.ghost', name: 'Ghost', description: 'Late.', whenToUse: 'Never.' };
  const [first, second] = [adapters.a, adapters.b];
  adapters.a = { openView: async (providerId) => ({ ...(await first.openView(providerId)), scanCapabilities: () => stale }) };
  adapters.b = {
    openView: async (providerId) => {
      const view = await second.openView(providerId);
      const scan = view.scanCapabilities;
      view.scanCapabilities = async (page) => {
        answer({ items: [ghost] });
        await new Promise((resolve) => setImmediate(resolve));
        return scan(page);
      };
      return view;
    },
  };
  const report = await graph.reload({ force: true });
  const entry = (id) => report.providers.find((p) => p.providerId === id);
  assertError(entry('seed.http').error, 'CG_CONFIG_INVALID', 'load', 'check_config', { reason: 'database_read_timeout' });
  assert.equal(entry('seed.copy').ok, true, JSON.stringify(entry('seed.copy')));
  await graph.close();
});

test('view fields that change during the read fail it: CG_REVISION_MISMATCH, source_context_changed', async () => {
  for (const field of ['sourceRevision', 'provider', 'knowledgeRootDir']) {
    const { source: s } = viewWith({
      view: (view) => {
        const scan = view.scanCapabilities;
        const original = view[field];
        const changed = { provider: { ...original, name: 'Renamed' }, sourceRevision: 'rev-2', knowledgeRootDir: path.join(seedRoot, 'knowledge') }[field];
        let scanned = false;
        return {
          scanCapabilities: async (page) => ((scanned = true), scan(page)),
          get [field]() {
            return scanned ? changed : original;
          },
        };
      },
    });
    await rejectsWith(CapabilityGraph.open({ providers: [s] }), 'CG_REVISION_MISMATCH', 'load', 'refresh', { reason: 'source_context_changed' });
  }
  // The same provider object changed in place is a changed record too.
  const { source: s } = viewWith({
    view: (view) => {
      const scan = view.scanCapabilities;
      view.provider = { ...view.provider };
      return { scanCapabilities: async (page) => ((view.provider.name = 'Mutated'), scan(page)) };
    },
  });
  await rejectsWith(CapabilityGraph.open({ providers: [s] }), 'CG_REVISION_MISMATCH', 'load', 'refresh', { reason: 'source_context_changed' });
});

test('a relative knowledgeRootDir is taken from the working directory of the moment the view opens', async () => {
  const cwd = process.cwd();
  const { source: s } = viewWith({
    view: (view) => {
      const scan = view.scanCapabilities;
      return {
        knowledgeRootDir: path.basename(seedRoot),
        scanCapabilities: async (page) => {
          process.chdir(cwd); // the host moves on while the view is read
          return scan(page);
        },
      };
    },
  });
  process.chdir(path.dirname(seedRoot));
  let graph;
  try {
    graph = await CapabilityGraph.open({ providers: [s] });
  } finally {
    process.chdir(cwd);
  }
  const read = await graph.readDocuments({ selected: ['seed.http::route.validation'] });
  assert.equal(read.results[0].ok, true, JSON.stringify(read.results[0]));
  await graph.close();
});

test("a host component's optional method given as undefined is absent: a view's relation calls and close, a reader's stream", async () => {
  const fromFiles = await CapabilityGraph.open({ providers: [seedSource()] });
  const [expected] = (await fromFiles.listProviders()).items;
  const neighbours = await fromFiles.getNeighbors('seed.http::route');
  await fromFiles.close();
  for (const edges of ['bulk', 'each', 'records']) {
    const db = seedDatabase();
    db.edges = edges;
    const inner = db.adapter();
    // Every optional method the view lacks is written, as undefined.
    const adapter = {
      id: inner.id,
      openView: async (id) => ({ scanRelations: undefined, neighbors: undefined, changedSince: undefined, ...(await inner.openView(id)), close: undefined }),
      watch: undefined,
    };
    const graph = await CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'database', adapter } }] });
    assert.equal((await graph.listProviders()).items[0].staticRevision, expected.staticRevision, edges);
    assert.deepEqual(await graph.getNeighbors('seed.http::route'), neighbours, edges);
    // No watch to subscribe: nothing is lost, nothing reloads.
    const events = [];
    graph.on('reload', (event) => events.push(event));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(events, [], edges);
    // A reload of another source revision reads the view whole: it offers no changedSince.
    db.revision += 1;
    await graph.reload();
    assert.equal(db.calls.scanCapabilities, 2, edges);
    assert.equal((await graph.listProviders()).items[0].staticRevision, expected.staticRevision, edges);
    await graph.close();
  }
  const knowledge = [{ kind: 'document', knowledgeId: 'WEB', role: 'guide', title: 'Web', locator: { type: 'http', url: 'https://docs.example/guide.md' } }];
  const definition = { providerId: 'acme', name: 'A', version: '1', capabilities: [{ capabilityId: 'x', name: 'X', description: 'X.', whenToUse: 'X.', knowledge }] };
  const reader = { id: 'web', canRead: () => true, stream: undefined, read: async () => ({ bytes: new TextEncoder().encode('# Guide\n'), contentType: 'text/markdown', source: 'https://docs.example/guide.md' }) };
  const graph = await CapabilityGraph.open({ providers: [{ definition }], readers: [reader] });
  try {
    const page = await graph.readDocumentPage({ capability: 'acme::x', knowledgeId: 'WEB' });
    assert.equal(page.text, '# Guide\n');
    assert.equal((await graph.readDocuments({ selected: ['acme::x'] })).results[0].value.text, '# Guide\n');
  } finally {
    await graph.close();
  }
});
