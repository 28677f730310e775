// Watched providers: a database adapter's watch(providerId, onChange, { signal }) and a file
// provider's `watch: true` reload the provider when told, bursts coalesced and one reload of a
// provider at a time; graph.on('reload') reports every reload entry and every lost watch.
// No timing assertions: every test waits for the events it expects.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs, { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CapabilityGraph, GraphError } from '@devcodex/capability-graph';
import { assertError, cap, nextEvent, repoRoot, seedRoot, throwsWith } from './helpers.mjs';

/** An in-memory database authority whose state `publish()` changes and whose `watch` the test drives. */
function memoryAuthority(providerId = 'acme') {
  const db = {
    revision: 1,
    capabilities: [cap('a')],
    calls: { openView: 0, watch: 0 },
    /** The watches subscribed now: { onChange, signal, lose(error) }. */
    watches: [],
  };
  // The n-th subscription (from 1), once it listens.
  const subscriptions = [];
  const slot = (n) => {
    if (subscriptions[n] === undefined) {
      const s = {};
      s.promise = new Promise((resolve) => (s.resolve = resolve));
      subscriptions[n] = s;
    }
    return subscriptions[n];
  };
  db.subscription = (n) => slot(n).promise;
  db.publish = (capabilities) => {
    db.capabilities = capabilities;
    db.revision += 1;
    for (const w of db.watches) w.onChange();
  };
  db.adapter = {
    id: 'memory',
    openView(id) {
      db.calls.openView += 1;
      const records = db.capabilities.map((c) => ({ ...c }));
      return {
        provider: { providerId: id, name: 'Acme', version: '1' },
        sourceRevision: `r${db.revision}`,
        scanCapabilities: () => ({ items: records }),
      };
    },
    watch(id, onChange, { signal }) {
      assert.equal(id, providerId);
      db.calls.watch += 1;
      return new Promise((resolve, reject) => {
        const entry = { onChange, signal, lose: (error) => (db.watches.splice(db.watches.indexOf(entry), 1), reject(error)) };
        db.watches.push(entry);
        signal.addEventListener('abort', () => {
          db.watches.splice(db.watches.indexOf(entry), 1);
          resolve();
        });
        onChange(); // listening: anything may have changed before
        slot(db.calls.watch).resolve(entry);
      });
    },
  };
  return db;
}

const databaseSource = (db, extra = {}) => ({ providerId: 'acme', authority: { kind: 'database', adapter: db.adapter, ...extra } });

const names = async (graph) => (await graph.listCatalog()).items.map((i) => i.id.capabilityId);

test('a database adapter that offers watch is subscribed; a change is read and reported', async () => {
  const db = memoryAuthority();
  const graph = await CapabilityGraph.open({ providers: [databaseSource(db)] });
  try {
    const watch = await db.subscription(1);
    assert.equal(db.calls.watch, 1);
    assert.ok(watch.signal instanceof AbortSignal);
    const before = (await graph.listProviders()).items[0].staticRevision;
    const changed = nextEvent(graph, (e) => e.entry?.staticRevision !== before);
    db.publish([cap('a'), cap('b')]);
    const event = await changed;
    assert.equal(event.providerId, 'acme');
    assert.equal(event.ok, true);
    assert.equal(event.trigger, 'watch');
    assert.equal(event.error, undefined);
    assert.equal(event.entry.previousStaticRevision, before);
    assert.deepEqual(Object.keys(event.entry).sort(), ['ok', 'previousStaticRevision', 'providerId', 'refreshFailed', 'servedFrom', 'staticRevision']);
    assert.deepEqual(await names(graph), ['a', 'b'], 'the next query answers from the new revision');

    // A host's own reload is reported too.
    const own = nextEvent(graph);
    await graph.reload();
    assert.equal((await own).trigger, 'reload');
  } finally {
    await graph.close();
  }
});

test('a burst of changes is coalesced: one reload running, at most one queued, the last state served', async () => {
  const db = memoryAuthority();
  const graph = await CapabilityGraph.open({ providers: [databaseSource(db)] });
  try {
    await db.subscription(1);
    // Settle the reload the subscription asked for.
    await graph.reload();
    const reads = db.calls.openView;
    const served = new Promise((resolve) => {
      graph.on('reload', async (e) => {
        if (e.ok && e.trigger === 'watch' && (await names(graph)).includes('c20')) resolve();
      });
    });
    for (let i = 1; i <= 20; i++) db.publish([cap('a'), cap(`c${String(i).padStart(2, '0')}`)]);
    await served;
    assert.ok(db.calls.openView - reads <= 2, `20 changes read ${db.calls.openView - reads} times`);
    assert.deepEqual(await names(graph), ['a', 'c20']);
  } finally {
    await graph.close();
  }
});

test('a reload a watch asked for that fails keeps the snapshot and arrives with ok: false', async () => {
  const db = memoryAuthority();
  const graph = await CapabilityGraph.open({ providers: [databaseSource(db)] });
  try {
    await db.subscription(1);
    const failed = nextEvent(graph, (e) => !e.ok);
    db.publish([cap('a', { requires: ['ghost'] })]);
    const event = await failed;
    assert.equal(event.trigger, 'watch');
    assert.ok(event.error instanceof GraphError);
    assertError(event.error, 'CG_RELATION_INVALID', 'load', 'fix_input');
    assert.equal(event.entry.ok, false);
    assert.equal(event.entry.refreshFailed, true);
    assert.equal(event.entry.error.code, 'CG_RELATION_INVALID');
    const catalog = await graph.listCatalog();
    assert.deepEqual(catalog.items.map((i) => i.id.capabilityId), ['a']);
    assert.equal(catalog.meta.refreshFailed, true);
  } finally {
    await graph.close();
  }
});

test('a lost watch is reported and subscribed again, which reads once; the snapshot stays in service', async () => {
  const db = memoryAuthority();
  const graph = await CapabilityGraph.open({ providers: [databaseSource(db)] });
  try {
    const first = await db.subscription(1);
    await graph.reload();
    const lost = nextEvent(graph, (e) => !e.ok);
    const read = nextEvent(graph, (e) => e.ok && e.trigger === 'watch');
    const again = db.subscription(2);
    // A change while nobody listens: the next subscription reads it.
    db.capabilities = [cap('a'), cap('missed')];
    db.revision += 1;
    first.lose(new Error('connection to /secret/socket lost'));
    // The graph waits before it subscribes again, on a timer that keeps no process alive.
    const alive = setInterval(() => {}, 1_000);
    const event = await lost;
    assert.deepEqual([event.providerId, event.trigger, event.entry], ['acme', 'watch', undefined]);
    assertError(event.error, 'CG_CONFIG_INVALID', 'load', 'retry', { providerId: 'acme', reason: 'watch_failed' });
    assert.doesNotMatch(JSON.stringify(event.error.toJSON()), /secret/);
    assert.deepEqual(await names(graph), ['a'], 'the last snapshot is still served');
    await again;
    assert.equal(db.calls.watch, 2);
    await read;
    clearInterval(alive);
    assert.deepEqual(await names(graph), ['a', 'missed']);
  } finally {
    await graph.close();
  }
});

test('watch: false opts a database provider out; a watch flag that is not a boolean is a config error', async () => {
  const db = memoryAuthority();
  const graph = await CapabilityGraph.open({ providers: [databaseSource(db, { watch: false })] });
  await graph.reload();
  assert.equal(db.calls.watch, 0);
  await graph.close();
  for (const source of [databaseSource(db, { watch: 1 }), { providerId: 'seed.http', authority: { kind: 'file', rootDir: seedRoot, watch: 'yes' } }]) {
    const error = await CapabilityGraph.open({ providers: [source] }).then(assert.fail, (e) => e);
    assertError(error, 'CG_CONFIG_INVALID', 'config', 'check_config', { path: 'providers[0].authority.watch', expected: 'boolean' });
  }
});

test('on and off take the event name and a function; a listener that throws harms nobody', async () => {
  const db = memoryAuthority();
  const graph = await CapabilityGraph.open({ providers: [databaseSource(db, { watch: false })] });
  throwsWith(() => graph.on('change', () => {}), 'CG_INPUT_INVALID', 'lifecycle', 'fix_input', { field: 'event' });
  throwsWith(() => graph.on('reload', 'nope'), 'CG_INPUT_INVALID', 'lifecycle', 'fix_input', { field: 'listener' });
  throwsWith(() => graph.off('reload', null), 'CG_INPUT_INVALID', 'lifecycle', 'fix_input', { field: 'listener' });
  const seen = [];
  const throwing = () => {
    seen.push('throwing');
    throw new Error('listener bug');
  };
  const rejecting = async () => {
    seen.push('rejecting');
    throw new Error('async listener bug');
  };
  const counting = (e) => seen.push(e.trigger);
  assert.equal(graph.on('reload', throwing).on('reload', rejecting).on('reload', counting), graph);
  const report = await graph.reload();
  assert.equal(report.ok, true);
  assert.deepEqual(seen, ['throwing', 'rejecting', 'reload']);
  assert.equal(graph.off('reload', counting), graph);
  await graph.reload();
  assert.deepEqual(seen.slice(3), ['throwing', 'rejecting']);
  await graph.close();
  throwsWith(() => graph.on('reload', counting), 'CG_GRAPH_CLOSED', 'lifecycle');
  graph.off('reload', throwing); // never fails
});

test('a file provider with watch: true picks up an edit of its definitions', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'cg-watch-'));
  cpSync(seedRoot, root, { recursive: true });
  const graph = await CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: root, definitionLayout: 'directory', watch: true } }] });
  // A file watch keeps no process alive: this test's own timer does, while it waits.
  const alive = setInterval(() => {}, 1_000);
  try {
    const name = async () => (await graph.getCapabilities(['seed.http::route'])).results[0].value.name;
    assert.equal(await name(), 'Routing');
    const edited = nextEvent(graph, (e) => e.ok && e.entry.previousStaticRevision !== undefined);
    const file = path.join(root, 'capabilities', 'route.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), name: 'Routing, edited' }));
    const event = await edited;
    assert.equal(event.trigger, 'watch');
    assert.equal(await name(), 'Routing, edited');
    // A broken edit keeps the last good snapshot.
    const broken = nextEvent(graph, (e) => !e.ok);
    writeFileSync(file, '{');
    assertError((await broken).error, 'CG_DEFINITION_INVALID', 'load', 'fix_input');
    assert.equal(await name(), 'Routing, edited');
  } finally {
    clearInterval(alive);
    await graph.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('without a recursive fs.watch, each folder is watched, folders that appear included', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'cg-watch-'));
  cpSync(seedRoot, root, { recursive: true });
  const watch = fs.watch;
  fs.watch = (dir, options, listener) => {
    if (options?.recursive) throw Object.assign(new Error('no recursive watch'), { code: 'ERR_FEATURE_UNAVAILABLE_ON_PLATFORM' });
    return watch(dir, options, listener);
  };
  const alive = setInterval(() => {}, 1_000);
  const graph = await CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: root, definitionLayout: 'directory', watch: true } }] });
  try {
    const listing = async () => (await graph.listCatalog()).items.map((i) => i.id.capabilityId);
    const served = (pattern) => new Promise((resolve) => graph.on('reload', async (e) => e.ok && pattern((await graph.getCapabilities(['seed.http::extra'])).results[0]) && resolve()));
    await nextEvent(graph, (e) => e.trigger === 'watch');
    const folder = path.join(root, 'capabilities', 'more');
    const added = served((slot) => slot.ok);
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'extra.json'), JSON.stringify(cap('extra')));
    await added;
    assert.ok((await listing()).includes('extra'));
    // An edit inside the folder that appeared is seen through that folder's own watcher.
    const edited = served((slot) => slot.ok && slot.value.name === 'Extra, edited');
    writeFileSync(path.join(folder, 'extra.json'), JSON.stringify(cap('extra', { name: 'Extra, edited' })));
    await edited;
  } finally {
    fs.watch = watch;
    clearInterval(alive);
    await graph.close();
    rmSync(root, { recursive: true, force: true });
  }
});

/** Runs `script` (an ES module) in a child process; resolves its exit code and output, or fails past `ms`. */
function runChild(script, ms = 20_000) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the process did not exit: ${out}`));
    }, ms);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

test('watches never keep the process alive; close() stops every watch and drops queued reloads', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'cg-watch-'));
  cpSync(seedRoot, root, { recursive: true });
  try {
    const script = (close) => `
      import { CapabilityGraph } from '@devcodex/capability-graph';
      let aborted = false;
      let reads = 0;
      let notify;
      const adapter = {
        id: 'memory',
        openView: (id) => (reads++, { provider: { providerId: id, name: 'A', version: '1' }, sourceRevision: 'r' + reads, scanCapabilities: () => ({ items: [] }) }),
        watch: (id, onChange, { signal }) => new Promise((resolve) => {
          notify = onChange;
          signal.addEventListener('abort', () => { aborted = true; resolve(); });
        }),
      };
      const graph = await CapabilityGraph.open({ providers: [
        { providerId: 'acme', authority: { kind: 'database', adapter } },
        { providerId: 'seed.http', authority: { kind: 'file', rootDir: ${JSON.stringify(root)}, definitionLayout: 'directory', watch: true } },
      ] });
      await new Promise((r) => setImmediate(r));
      if (${close}) {
        notify(); notify();
        const readsAtClose = reads;
        await graph.close();
        notify();
        await new Promise((r) => setTimeout(r, 50));
        console.log(JSON.stringify({ aborted, extraReads: reads - readsAtClose }));
      } else {
        console.log('open');
      }
    `;
    const left = await runChild(script(false));
    assert.equal(left.code, 0, left.out);
    assert.equal(left.out.trim(), 'open');
    const closed = await runChild(script(true));
    assert.equal(closed.code, 0, closed.out);
    assert.deepEqual(JSON.parse(closed.out.trim()), { aborted: true, extraReads: 0 });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a view a reload opened, or was opening, when close() came is still released', { timeout: 10_000 }, async () => {
  for (const stage of ['openView', 'scanCapabilities']) {
    let opens = 0;
    let gate;
    const released = new Promise((resolve) => (gate = { released: resolve }));
    const view = (id) => ({
      provider: { providerId: id, name: 'A', version: '1' },
      sourceRevision: `r${opens}`,
      scanCapabilities: () => (opens > 1 && stage === 'scanCapabilities' ? new Promise((resolve) => (gate.answer = () => resolve({ items: [] }))) : { items: [] }),
      close: () => opens > 1 && gate.released(),
    });
    const adapter = {
      id: 'slow',
      openView: (id) => (++opens > 1 && stage === 'openView' ? new Promise((resolve) => (gate.answer = () => resolve(view(id)))) : view(id)),
    };
    const graph = await CapabilityGraph.open({ providers: [{ providerId: 'acme', authority: { kind: 'database', adapter } }] });
    const reload = graph.reload();
    while (gate.answer === undefined) await new Promise((resolve) => setImmediate(resolve));
    await graph.close();
    const error = await reload.then(assert.fail, (e) => e);
    assertError(error, 'CG_GRAPH_CLOSED', 'lifecycle');
    gate.answer();
    await released; // the adapter's resources (a pooled connection) are not left behind
  }
});
