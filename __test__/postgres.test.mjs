// The PostgreSQL database authority (examples/postgres-authority) against a real server
// (postgres-server.mjs): two hosts sharing one database, a committed change picked up on reload.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { CapabilityGraph, semanticExecutor } from '@devcodex/capability-graph';
import { postgresAuthority, publish } from '../examples/postgres-authority/adapter.mjs';
import { nextEvent, repoRoot, seedRoot, seedSource } from './helpers.mjs';
import { pool, server, skip, usePostgres } from './postgres-server.mjs';

usePostgres();

const seedFromDatabase = (db, extra = {}) => ({ providerId: 'seed.http', authority: { kind: 'database', adapter: postgresAuthority(db, { knowledgeRootDir: seedRoot }), ...extra } });
const revisionOf = async (graph) => (await graph.listProviders()).items[0].staticRevision;
const nameOf = async (graph, id) => (await graph.getCapabilities([`seed.http::${id}`])).results[0].value.name;

/** A copy of the seed provider with `route` renamed and a `route_grpc` child added (removed with the server's folder). */
function changedSeed() {
  const dir = mkdtempSync(path.join(server.dir, 'seed-'));
  cpSync(seedRoot, dir, { recursive: true });
  const routeFile = path.join(dir, 'capabilities', 'route.json');
  writeFileSync(routeFile, JSON.stringify({ ...JSON.parse(readFileSync(routeFile, 'utf8')), name: 'Routing (edited)' }));
  // '_' sorts before '.' in a language collation but after it in byte order.
  const grpc = { capabilityId: 'route_grpc', name: 'gRPC routes', description: 'Bind a gRPC method to a handler.', whenToUse: 'Add a gRPC endpoint.', parents: ['route'] };
  writeFileSync(path.join(dir, 'capabilities', 'route-grpc.json'), JSON.stringify(grpc));
  return dir;
}

/** A page's items, whether given as items or as one JSON text. */
const itemsOf = (page) => page.items ?? JSON.parse(page.itemsJson);

/** Every page of a view's paged call. */
async function drain(fetch) {
  const items = [];
  let cursor;
  do {
    const page = await fetch(cursor);
    items.push(...itemsOf(page));
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

test('two hosts on one database serve the seed provider exactly as its files do', { skip, timeout: 20_000 }, async () => {
  const db = pool();
  const published = await publish(db, seedRoot);
  const [hostA, hostB, fromFiles] = await Promise.all([
    CapabilityGraph.open({ providers: [seedFromDatabase(pool())] }),
    CapabilityGraph.open({ providers: [seedFromDatabase(pool())] }),
    CapabilityGraph.open({ providers: [seedSource()] }),
  ]);
  try {
    const [row] = (await hostA.listProviders()).items;
    assert.equal(row.authorityKind, 'database');
    assert.equal(row.staticRevision, await revisionOf(fromFiles), 'same definitions, same revision');
    assert.equal(await revisionOf(hostB), row.staticRevision);
    assert.equal(published.staticRevision, row.staticRevision);
    const selection = await hostA.resolveSelection({ selected: ['seed.http::route.validation'] });
    assert.deepEqual(selection.added, [{ providerId: 'seed.http', capabilityId: 'schema.request' }]);
    const read = await hostB.readDocuments({ selected: ['seed.http::route.validation'] });
    assert.equal(read.results[0].value.knowledgeId, 'D-02');
    assert.equal(read.results[0].value.text, readFileSync(path.join(seedRoot, 'knowledge', 'route-validation.md'), 'utf8'));
  } finally {
    await Promise.all([hostA.close(), hostB.close(), fromFiles.close()]);
  }
});

test('a view pages through one snapshot while a publish commits', { skip, timeout: 20_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const changed = changedSeed();
  const view = await postgresAuthority(db, { edges: 'each' }).openView('seed.http');
  try {
    const first = await view.scanCapabilities({ limit: 2, maxBytes: 1 << 20 });
    assert.deepEqual(itemsOf(first).map((r) => r.capabilityId), ['request', 'route']);
    await publish(db, changed); // commits between two pages of the open view
    const rest = await drain((cursor) => view.scanCapabilities({ limit: 2, maxBytes: 1 << 20, cursor: cursor ?? first.nextCursor }));
    assert.deepEqual(rest.map((r) => r.capabilityId), ['route.http', 'route.validation', 'schema.request'], 'no route_grpc: the view kept its snapshot');
    assert.deepEqual(await drain((cursor) => view.neighbors('route', 'children', { limit: 1, cursor })), ['route.http', 'route.validation']);
    assert.deepEqual(await drain((cursor) => view.neighbors('schema.request', 'requiredBy', { limit: 1, cursor })), ['route.validation']);
    // A byte budget ends a page early, at a record boundary.
    const small = await view.scanCapabilities({ limit: 100, maxBytes: 1 });
    assert.equal(itemsOf(small).length, 1);
    assert.equal(small.nextCursor, 'request');
  } finally {
    await view.close();
  }
  const fresh = await postgresAuthority(db, { edges: 'each' }).openView('seed.http');
  try {
    assert.notEqual(fresh.sourceRevision, view.sourceRevision);
    assert.deepEqual(await drain((cursor) => fresh.neighbors('route', 'children', { limit: 2, cursor })), ['route.http', 'route.validation', 'route_grpc']);
  } finally {
    await fresh.close();
  }
  await assert.rejects(view.scanCapabilities({ limit: 1, maxBytes: 1 }), /view closed/);
});

test('a committed publish reaches each host on its own reload', { skip, timeout: 20_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  // Hosts that do not watch (watch: false) move only when they reload.
  const hostA = await CapabilityGraph.open({ providers: [seedFromDatabase(pool(), { watch: false })] });
  const hostB = await CapabilityGraph.open({ providers: [seedFromDatabase(pool(), { watch: false })] });
  const changed = changedSeed();
  try {
    const before = await revisionOf(hostA);
    const published = await publish(db, changed);
    const report = await hostA.reload();
    assert.equal(report.ok, true, JSON.stringify(report));
    assert.equal(report.providers[0].staticRevision, published.staticRevision);
    assert.notEqual(published.staticRevision, before);
    assert.equal(await nameOf(hostA, 'route'), 'Routing (edited)');
    const { groups } = await hostA.getNeighbors('seed.http::route', { kinds: ['children'] });
    assert.deepEqual(groups.children.items.map((n) => n.id.capabilityId), ['route.http', 'route.validation', 'route_grpc']);
    assert.equal(await nameOf(hostB, 'route'), 'Routing', 'B serves its snapshot until it reloads');
    assert.equal(await revisionOf(hostB), before);
    assert.equal((await hostB.reload()).providers[0].staticRevision, published.staticRevision);
    assert.equal(await nameOf(hostB, 'route'), 'Routing (edited)');
    // Both hosts still serve the revision before the change as `previous`, when a call pins it.
    for (const host of [hostA, hostB]) {
      const pinned = await host.getCapabilities(['seed.http::route'], { requiredStaticRevision: before });
      assert.deepEqual([pinned.results[0].value.name, pinned.meta.servedFrom], ['Routing', 'previous']);
    }

    // A change written in a transaction that rolls back is never served, not even while open.
    const writer = await db.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(`UPDATE cg_capabilities SET record = jsonb_set(record, '{name}', '"Half written"') WHERE capability_id = 'route'`);
      await writer.query(`UPDATE cg_capabilities SET content_hash = cg_content_hash(record) WHERE capability_id = 'route'`);
      await writer.query(`SELECT cg_refresh_revision('seed.http')`);
      const during = await hostA.reload();
      assert.equal(during.ok, true);
      assert.equal(await nameOf(hostA, 'route'), 'Routing (edited)');
      await writer.query('ROLLBACK');
    } finally {
      writer.release();
    }
    assert.equal((await hostA.reload()).providers[0].staticRevision, published.staticRevision);
    assert.equal(await nameOf(hostA, 'route'), 'Routing (edited)');

    // Publishing the original again removes route_grpc: back to the files' revision.
    assert.equal((await publish(db, seedRoot)).staticRevision, before);
    assert.equal((await hostA.reload()).providers[0].staticRevision, before);

    // A row written by hand that the engine refuses never replaces the served snapshot.
    await db.query(`UPDATE cg_capabilities SET record = record || '{"requires": ["ghost"]}' WHERE capability_id = 'route';
                    UPDATE cg_capabilities SET content_hash = cg_content_hash(record) WHERE capability_id = 'route';
                    SELECT cg_refresh_revision('seed.http')`);
    const failed = await hostA.reload();
    assert.equal(failed.ok, false);
    assert.equal(failed.providers[0].error.code, 'CG_RELATION_INVALID');
    assert.equal(await revisionOf(hostA), before);
    assert.equal((await hostA.listCatalog()).meta.refreshFailed, true);
  } finally {
    await Promise.all([hostA.close(), hostB.close()]);
  }
});

/** `adapter` with every call of its views counted in `calls`. */
function counted(adapter, calls) {
  const count = (name) => (calls[name] = (calls[name] ?? 0) + 1);
  return {
    id: adapter.id,
    async openView(providerId) {
      count('openView');
      const view = await adapter.openView(providerId);
      for (const name of ['scanCapabilities', 'scanRelations', 'neighbors', 'changedSince', 'close']) {
        const inner = view[name];
        if (typeof inner === 'function') view[name] = (...args) => (count(name), inner.apply(view, args));
      }
      return view;
    },
  };
}

test('edges read in bulk, per capability or from the records give the files\' revision; a relation row that lies fails every path alike', { skip, timeout: 30_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const fromFiles = await CapabilityGraph.open({ providers: [seedSource()] });
  const open = (edges, calls = {}) =>
    CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'database', adapter: counted(postgresAuthority(db, { knowledgeRootDir: seedRoot, edges }), calls) } }] });
  try {
    const expected = await revisionOf(fromFiles);
    const calls = {};
    for (const edges of ['bulk', 'each', 'records']) {
      calls[edges] = {};
      const graph = await open(edges, calls[edges]);
      assert.equal(await revisionOf(graph), expected, edges);
      assert.deepEqual(await graph.getNeighbors('seed.http::route'), await fromFiles.getNeighbors('seed.http::route'), edges);
      await graph.close();
    }
    assert.deepEqual(calls.bulk, { openView: 1, scanCapabilities: 1, scanRelations: 1, close: 1 });
    assert.deepEqual(calls.records, { openView: 1, scanCapabilities: 1, close: 1 });
    assert.equal(calls.each.neighbors, 5 * 8);

    // Relation rows written by hand, past the trigger: the bulk scan and the streams report the
    // same difference; the records alone do not see it.
    for (const [lie, undo] of [
      [`INSERT INTO cg_relations VALUES ('seed.http', 'route', 'related', 'request')`, `DELETE FROM cg_relations WHERE from_id = 'route' AND kind = 'related'`],
      [`DELETE FROM cg_relations WHERE from_id = 'route.http' AND kind = 'parents'`, `INSERT INTO cg_relations VALUES ('seed.http', 'route.http', 'parents', 'route')`],
      [`INSERT INTO cg_relations VALUES ('seed.http', 'request', 'requires', 'ghost')`, `DELETE FROM cg_relations WHERE to_id = 'ghost'`],
      // An endpoint JSON must escape: the bulk scan prints it escaped, the stream as a string.
      [`INSERT INTO cg_relations VALUES ('seed.http', 'request', 'requires', E'gh"o\\\\st\\n')`, `DELETE FROM cg_relations WHERE to_id LIKE 'gh%'`],
    ]) {
      await db.query(lie);
      try {
        const errors = [];
        for (const edges of ['bulk', 'each']) {
          const error = await open(edges).then(
            (graph) => (graph.close(), assert.fail(`${edges} opened despite ${lie}`)),
            (e) => e,
          );
          assert.equal(error.code, 'CG_ADAPTER_CONTRACT_INVALID', `${edges}: ${lie}`);
          errors.push(error.details);
        }
        assert.deepEqual(errors[0], errors[1], lie);
        assert.match(errors[0].reason, /_stream_mismatch$/);
        const graph = await open('records');
        assert.equal(await revisionOf(graph), expected);
        await graph.close();
      } finally {
        await db.query(undo);
      }
    }
  } finally {
    await fromFiles.close();
  }
});

test('the bulk relation scan pages by limit and maxBytes as PostgreSQL prints them, the same edges however it is paged', { skip, timeout: 30_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const view = await postgresAuthority(db, { knowledgeRootDir: seedRoot, edges: 'bulk' }).openView('seed.http');
  try {
    const whole = await view.scanRelations({ limit: 10_000, maxBytes: 1_048_576 });
    assert.equal(whole.nextCursor, undefined);
    const edges = JSON.parse(whole.itemsJson);
    assert.ok(edges.length > 10);
    assert.deepEqual(Object.keys(edges[0]), ['from', 'kind', 'to']);
    const bytes = (items) => items.reduce((sum, item) => sum + Buffer.byteLength(JSON.stringify(item)), 0);
    // Pages of a few items, of fewer bytes than one item, and sizes changing from call to call
    // (a page asked for ahead with other sizes is not the one served).
    for (const sizes of [() => ({ limit: 3, maxBytes: 1_048_576 }), () => ({ limit: 100, maxBytes: 1 }), () => ({ limit: 100, maxBytes: 150 }), (i) => ({ limit: 1 + (i % 4), maxBytes: i % 2 ? 1_048_576 : 120 })]) {
      const items = [];
      let cursor;
      let i = 0;
      do {
        const { limit, maxBytes } = sizes(i++);
        const page = await view.scanRelations({ limit, maxBytes, ...(cursor === undefined ? {} : { cursor }) });
        const listed = JSON.parse(page.itemsJson);
        assert.ok(listed.length <= limit);
        assert.ok(listed.length === 1 || bytes(listed) <= maxBytes, page.itemsJson);
        if (page.nextCursor !== undefined) assert.ok(listed.length > 0);
        items.push(...listed);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      assert.deepEqual(items, edges);
    }
  } finally {
    await view.close();
  }
});

test('an unchanged source costs a reload one row; a publish or force: true reads it again', { skip, timeout: 30_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const calls = {};
  const graph = await CapabilityGraph.open({
    providers: [{ providerId: 'seed.http', authority: { kind: 'database', adapter: counted(postgresAuthority(db, { knowledgeRootDir: seedRoot }), calls) } }],
  });
  try {
    const before = await revisionOf(graph);
    const opened = { ...calls };
    const report = await graph.reload();
    assert.deepEqual(report.providers, [{ providerId: 'seed.http', ok: true, staticRevision: before, servedFrom: 'current', refreshFailed: false }]);
    assert.deepEqual(calls, { ...opened, openView: 2, close: 2 }, 'no scan: the view named the snapshot\'s revision');
    // Publishing the same definitions again names the same revision.
    await publish(db, seedRoot);
    await graph.reload();
    assert.equal(calls.scanCapabilities, opened.scanCapabilities);
    // force: true reads anyway.
    assert.deepEqual((await graph.reload({ force: true })).providers, report.providers);
    assert.equal(calls.scanCapabilities, opened.scanCapabilities + 1);
    // By default the records' own relations are the edges: no relation row is read.
    assert.equal(calls.scanRelations, undefined);
    // A publish of a change is read (what changed only: changedSince) and published.
    const published = await publish(db, changedSeed());
    const changed = await graph.reload();
    assert.equal(changed.providers[0].staticRevision, published.staticRevision);
    assert.equal(calls.scanCapabilities, opened.scanCapabilities + 1);
    assert.equal(calls.changedSince, 1);
    assert.equal(calls.neighbors, undefined);
    assert.equal(await nameOf(graph, 'route'), 'Routing (edited)');
    await publish(db, seedRoot);
  } finally {
    await graph.close();
  }
});

/** A copy of the seed provider whose `route` is named `name`. */
function seedNamed(name) {
  const dir = mkdtempSync(path.join(server.dir, 'seed-'));
  cpSync(seedRoot, dir, { recursive: true });
  const routeFile = path.join(dir, 'capabilities', 'route.json');
  writeFileSync(routeFile, JSON.stringify({ ...JSON.parse(readFileSync(routeFile, 'utf8')), name }));
  return dir;
}

/** The adapter of `db` whose views wait for `gate()` (when set) before they open. */
function gated(adapter, calls) {
  const gate = { wait: null, opened: 0 };
  return {
    gate,
    adapter: {
      id: adapter.id,
      async openView(providerId) {
        calls.openView = (calls.openView ?? 0) + 1;
        if (gate.wait) await gate.wait;
        return adapter.openView(providerId);
      },
      watch: (...args) => adapter.watch(...args),
    },
  };
}

test('a publish reaches a watching host without a reload call; a burst of 20 is coalesced and the last one served', { skip, timeout: 60_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const calls = {};
  const { adapter, gate } = gated(postgresAuthority(pool(), { knowledgeRootDir: seedRoot }), calls);
  // The watch keeps no process alive; this test's timer does while it waits.
  const alive = setInterval(() => {}, 1_000);
  const listening = (graph) => nextEvent(graph, (e) => e.trigger === 'watch' && e.ok);
  const host = await CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'database', adapter } }] });
  try {
    // Subscribed: it read once, as after every subscription (a change may have come before).
    await listening(host);
    const published = await publish(db, seedNamed('Routing (watched)'));
    await nextEvent(host, (e) => e.ok && e.entry.staticRevision === published.staticRevision);
    assert.equal(await nameOf(host, 'route'), 'Routing (watched)', 'the next query answers from the new revision');

    // 20 commits while the host's reload waits: one reload running, one queued, the last served.
    let release;
    gate.wait = new Promise((resolve) => (release = resolve));
    const before = calls.openView;
    let last;
    const served = new Promise((resolve) => {
      host.on('reload', (e) => e.ok && last !== undefined && e.entry.staticRevision === last.staticRevision && resolve(e));
    });
    for (let i = 1; i <= 20; i++) last = await publish(db, seedNamed(`Routing ${i}`));
    gate.wait = null;
    release();
    await served;
    assert.ok(calls.openView - before <= 2, `20 publishes opened ${calls.openView - before} views`);
    assert.equal(await nameOf(host, 'route'), 'Routing 20');
  } finally {
    clearInterval(alive);
    await host.close();
    await publish(db, seedRoot);
  }
});

test('a watch whose connection drops keeps serving, reports it, reconnects and reads once', { skip, timeout: 60_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const listeners = async () => (await db.query(`SELECT pid FROM pg_stat_activity WHERE query = 'LISTEN cg_provider_changed'`)).rows.map((r) => r.pid);
  // close() ends a watch's connection without waiting for it: wait until earlier hosts' are gone.
  const noListener = async () => {
    for (let i = 0; i < 200 && (await listeners()).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(await listeners(), []);
  };
  await noListener();
  const alive = setInterval(() => {}, 1_000);
  const host = await CapabilityGraph.open({ providers: [seedFromDatabase(pool())] });
  try {
    await nextEvent(host, (e) => e.trigger === 'watch' && e.ok);
    const before = await revisionOf(host);
    const pids = await listeners();
    assert.equal(pids.length, 1, 'a dedicated connection listens');
    const lost = nextEvent(host, (e) => !e.ok);
    const back = nextEvent(host, (e) => e.ok && e.trigger === 'watch');
    await db.query('SELECT pg_terminate_backend($1)', [pids[0]]);
    const event = await lost;
    assert.equal(event.providerId, 'seed.http');
    assert.equal(event.error.code, 'CG_CONFIG_INVALID');
    assert.equal(event.error.phase, 'load');
    assert.equal(event.error.nextAction, 'retry');
    assert.deepEqual(event.error.details, { providerId: 'seed.http', reason: 'watch_failed' });
    assert.equal(await revisionOf(host), before, 'the last snapshot is still served');
    assert.equal(await nameOf(host, 'route'), 'Routing');
    // Reconnected, it reads once; then publishes reach it again.
    await back;
    const again = await listeners();
    assert.equal(again.length, 1);
    assert.notEqual(again[0], pids[0], 'a new connection listens');
    const published = await publish(db, seedNamed('Routing (after the drop)'));
    await nextEvent(host, (e) => e.ok && e.entry.staticRevision === published.staticRevision);
    assert.equal(await nameOf(host, 'route'), 'Routing (after the drop)');
  } finally {
    clearInterval(alive);
    await host.close();
    await publish(db, seedRoot);
  }
  // close() ends the listening connection.
  await noListener();
});

test('a reload after a publish reads what changed since the host\'s revision from the change log: the snapshot a full read gives', { skip, timeout: 30_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const fromFiles = await CapabilityGraph.open({ providers: [seedSource()] });
  // Views that scan the relation table in bulk also serve the streams an incremental read
  // checks for the capabilities a change touched.
  const open = (options, calls) =>
    CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'database', adapter: counted(postgresAuthority(db, { knowledgeRootDir: seedRoot, edges: 'bulk', ...options }), calls) } }] });
  const calls = {};
  const graph = await open({}, calls);
  const plainCalls = {};
  const plain = await open({ changedSince: false }, plainCalls);
  try {
    const opened = { ...calls };
    const published = await publish(db, changedSeed());
    for (const key of Object.keys(calls)) delete calls[key];
    const changed = await graph.reload();
    assert.equal(changed.providers[0].staticRevision, published.staticRevision);
    // route changed and route_grpc was added: their streams and those of what they name (none
    // for route; route for route_grpc) are read, and no record was scanned.
    assert.deepEqual(calls, { openView: 1, changedSince: 1, neighbors: 2 * 8, close: 1 });
    const incremental = { catalog: await graph.listCatalog(), neighbours: await graph.getNeighbors('seed.http::route') };
    assert.deepEqual((await graph.reload({ force: true })).providers[0].staticRevision, published.staticRevision);
    assert.deepEqual({ catalog: await graph.listCatalog(), neighbours: await graph.getNeighbors('seed.http::route') }, incremental);
    // A view without changedSince reads whole, to the same revision.
    assert.equal((await plain.reload()).providers[0].staticRevision, published.staticRevision);
    assert.equal(plainCalls.scanCapabilities, 2);

    // Back to the files (route_grpc removed, route restored): read incrementally again.
    for (const key of Object.keys(calls)) delete calls[key];
    await publish(db, seedRoot);
    assert.equal((await graph.reload()).providers[0].staticRevision, await revisionOf(fromFiles));
    assert.equal(calls.changedSince, 1);
    assert.equal(calls.scanCapabilities, undefined);

    // A change written by hand (the triggers log it) is read the same way.
    await db.query(`BEGIN;
                    UPDATE cg_capabilities SET record = jsonb_set(record, '{name}', '"By hand"') WHERE capability_id = 'request';
                    UPDATE cg_capabilities SET content_hash = cg_content_hash(record) WHERE capability_id = 'request';
                    SELECT cg_refresh_revision('seed.http');
                    COMMIT`);
    assert.equal((await graph.reload()).ok, true);
    assert.equal(await nameOf(graph, 'request'), 'By hand');
    assert.equal(calls.changedSince, 2);

    // A host whose revision the log no longer answers for reads whole.
    const { rows } = await db.query(`SELECT max(seq) AS seq FROM cg_changes WHERE provider_id = 'seed.http'`);
    await db.query(`SELECT cg_prune_changes('seed.http', $1)`, [rows[0].seq]);
    await publish(db, seedRoot);
    assert.equal((await graph.reload()).providers[0].staticRevision, await revisionOf(fromFiles));
    assert.equal(calls.changedSince, 3);
    assert.equal(calls.scanCapabilities, 1);
  } finally {
    await Promise.all([graph.close(), plain.close(), fromFiles.close()]);
  }
});

test('publish refuses a folder the engine refuses, naming the engine\'s error, and commits nothing', { skip, timeout: 30_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const { rows: before } = await db.query(`SELECT revision FROM cg_providers WHERE provider_id = 'seed.http'`);
  const broken = (edit) => {
    const dir = mkdtempSync(path.join(server.dir, 'seed-'));
    cpSync(seedRoot, dir, { recursive: true });
    edit(dir);
    return dir;
  };
  const file = (dir, name) => path.join(dir, 'capabilities', name);
  for (const [what, dir, code] of [
    ['a dangling relation', broken((d) => writeFileSync(file(d, 'route.json'), JSON.stringify({ ...JSON.parse(readFileSync(file(d, 'route.json'), 'utf8')), requires: ['ghost'] }))), 'CG_RELATION_INVALID'],
    ['an ID given twice', broken((d) => cpSync(file(d, 'route.json'), file(d, 'route-again.json'))), 'CG_DEFINITION_INVALID'],
    ['a file that is not JSON', broken((d) => writeFileSync(file(d, 'route.json'), '{ not json')), 'CG_DEFINITION_INVALID'],
    // Two records in one file, apart by a raw control character (no JSON text holds one).
    ['a file holding a raw control character', broken((d) => writeFileSync(file(d, 'route.json'), `${readFileSync(file(d, 'route.json'), 'utf8')}\x1e{"capabilityId":"split","name":"Split","description":"d","whenToUse":"w"}`)), 'CG_DEFINITION_INVALID'],
  ]) {
    const error = await publish(db, dir).then(
      () => assert.fail(`${what} was published`),
      (e) => e,
    );
    assert.equal(error.name, 'GraphError', `${what}: ${error}`);
    assert.equal(error.code, code, what);
    const { rows } = await db.query(`SELECT revision FROM cg_providers WHERE provider_id = 'seed.http'`);
    assert.deepEqual(rows, before, `${what}: nothing committed`);
  }
  // Into a provider the database does not have yet (plain inserts), likewise.
  await db.query(`DELETE FROM cg_providers WHERE provider_id = 'seed.http'`);
  try {
    const error = await publish(db, broken((d) => cpSync(file(d, 'route.json'), file(d, 'route-again.json')))).then(
      () => assert.fail('an ID given twice was published'),
      (e) => e,
    );
    assert.equal(error.code, 'CG_DEFINITION_INVALID');
    assert.equal((await db.query(`SELECT count(*)::int AS n FROM cg_capabilities WHERE provider_id = 'seed.http'`)).rows[0].n, 0);
    assert.equal((await db.query(`SELECT count(*)::int AS n FROM cg_providers WHERE provider_id = 'seed.http'`)).rows[0].n, 0, 'nothing committed');
  } finally {
    await publish(db, seedRoot);
  }
});

test('hosts read the vectors publish() stored from the folder\'s vectors file: a current entry is never embedded', { skip, timeout: 60_000 }, async () => {
  const db = pool();
  const dir = mkdtempSync(path.join(server.dir, 'seed-vectors-'));
  cpSync(seedRoot, dir, { recursive: true });
  const words = (texts) => {
    const out = new Float32Array(texts.length * 16);
    texts.forEach((t, i) => {
      for (const w of t.toLowerCase().split(/[^a-z0-9]+/)) if (w.length > 2) out[i * 16 + ([...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % 16)] += 1;
      out[i * 16] += 0.01;
    });
    return out;
  };
  writeFileSync(path.join(dir, 'embedder.mjs'), `const words = ${words.toString()};\nexport default { id: 'words-test', dimensions: 16, embed: words };\n`);
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ providers: [], executor: { kind: 'semantic', embedder: './embedder.mjs' } }));
  const embed = await promisify(execFile)(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'embed', dir, '--config', path.join(dir, 'config.json'), '--json'], { cwd: dir });
  assert.deepEqual(JSON.parse(embed.stdout).written, ['vectors/words-test.bin']);
  const { capabilities } = await publish(db, dir);
  const stored = await db.query(`SELECT count(*)::int AS n FROM cg_vectors WHERE provider_id = 'seed.http' AND model_id = 'words-test'`);
  assert.equal(stored.rows[0].n, capabilities);

  const counting = () => {
    const calls = [];
    return { id: 'words-test', dimensions: 16, calls, embed: (texts) => (calls.push(...texts), words(texts)) };
  };
  const embedder = counting();
  const host = await CapabilityGraph.open({ providers: [seedFromDatabase(db)], executor: semanticExecutor({ embedder }) });
  const fromFiles = await CapabilityGraph.open({ providers: [{ ...seedSource(), authority: { kind: 'file', rootDir: dir, definitionLayout: 'directory' } }], executor: semanticExecutor({ embedder: counting() }) });
  try {
    const intent = 'validate the request body';
    const answer = await host.match({ intent });
    assert.deepEqual(embedder.calls, [intent]);
    assert.deepEqual((await host.status()).providers[0].vectors, { source: 'view', state: 'used', reason: null, entries: capabilities, used: capabilities, stale: 0, embedded: 0 });
    assert.deepEqual(answer, await fromFiles.match({ intent }));

    // A definition changed since the file was written: its stored entry is stale, and a reload
    // asks for the changed record's entry only, embedding it alone.
    const routeFile = path.join(dir, 'capabilities', 'route.json');
    writeFileSync(routeFile, JSON.stringify({ ...JSON.parse(readFileSync(routeFile, 'utf8')), description: 'Binds paths to handlers, edited.' }));
    await publish(db, dir);
    assert.equal((await host.reload()).providers[0].ok, true);
    await host.match({ intent });
    assert.equal(embedder.calls.length, 3);
    assert.match(embedder.calls[1], /edited/);
    assert.deepEqual((await host.status()).providers[0].vectors, { source: 'view', state: 'stale', reason: null, entries: 1, used: 0, stale: 1, embedded: 1 });
  } finally {
    await Promise.all([host.close(), fromFiles.close()]);
  }
});

test('publishing a folder that changes no row commits nothing: no change logged, nobody notified, the same source and static revisions', { skip, timeout: 30_000 }, async () => {
  const db = pool();
  const first = await publish(db, seedRoot);
  const state = async () => (await db.query(`SELECT revision, (SELECT count(*)::int FROM cg_changes WHERE provider_id = 'seed.http') AS changes FROM cg_providers WHERE provider_id = 'seed.http'`)).rows[0];
  const listener = await db.connect();
  const notified = [];
  let next;
  listener.on('notification', ({ payload }) => (notified.push(payload), next?.()));
  try {
    await listener.query('LISTEN cg_provider_changed');
    const before = await state();
    const again = await publish(db, seedRoot);
    assert.deepEqual(again, first);
    assert.deepEqual(await state(), before);
    // Notifications arrive in commit order: once the change's has come, an earlier one would have.
    const arrived = new Promise((resolve) => (next = resolve));
    const changed = await publish(db, seedNamed('Routing (noticed)'));
    await arrived;
    assert.deepEqual(notified, ['seed.http'], 'only the publish that changed a row notified');
    assert.notEqual(changed.staticRevision, first.staticRevision);
    assert.notEqual((await state()).revision, before.revision);
  } finally {
    listener.release();
    await publish(db, seedRoot);
  }
});

test('a publish that changes no row still has the engine validate rows it never validated: rows written by hand that the engine refuses are refused', { skip, timeout: 30_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const dir = mkdtempSync(path.join(server.dir, 'seed-'));
  cpSync(seedRoot, dir, { recursive: true });
  const routeFile = path.join(dir, 'capabilities', 'route.json');
  const ghostly = JSON.stringify({ ...JSON.parse(readFileSync(routeFile, 'utf8')), requires: ['ghost'] });
  writeFileSync(routeFile, ghostly);
  // The same record written by hand, as the folder holds it: the publish below changes no row.
  await db.query(`BEGIN;
                  UPDATE cg_capabilities SET record = '${ghostly}'::jsonb, content_hash = cg_content_hash('${ghostly}'::jsonb) WHERE capability_id = 'route';
                  SELECT cg_refresh_revision('seed.http');
                  COMMIT`);
  const revision = async () => (await db.query(`SELECT revision FROM cg_providers WHERE provider_id = 'seed.http'`)).rows[0].revision;
  const before = await revision();
  try {
    const error = await publish(db, dir).then(
      () => assert.fail('rows the engine refuses were published'),
      (e) => e,
    );
    assert.equal(error.name, 'GraphError');
    assert.equal(error.code, 'CG_RELATION_INVALID');
    assert.equal(await revision(), before);
  } finally {
    await publish(db, seedRoot);
  }
});
