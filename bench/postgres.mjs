// The PostgreSQL example authority (examples/postgres-authority) at bench scale: for each size
// N given (default 1000 10000 100000), the figures of the database goal table, one JSON line per
// size and a table at the end:
//
// - publish: the generated provider of N capabilities published into an empty provider
//   (schema.sql applied first, the provider's rows deleted, the tables vacuumed and
//   checkpointed), and again unchanged;
// - open, each in a process of its own that only opens (its time and peak RSS), for each way a
//   view gives its edges (CG_BENCH_EDGES, a comma-separated list of `bulk`, `records`, `each`;
//   default `bulk,records`), beside the file authority's open of the same definitions;
// - unless CG_BENCH_WATCH=0, a second host that watches: from a one-capability publish's commit
//   to its next query answering from the new revision;
// - reload unchanged, reload forced, and reload after one capability changed (written by hand,
//   logged by the triggers), with and without changedSince; the adapter calls each made.
//
// With `--in-memory N` it runs the 1M-record in-memory adapter figure instead
// (__test__/fixtures/database-scale.mjs under a 256 MiB heap: time and peak RSS). Not part of
// CI; bench/README.md says how to start a throwaway server for it.
//
//   PGHOST=/tmp/cg-pg PGDATABASE=cg node --expose-gc bench/postgres.mjs 1000 10000 100000
//   node bench/postgres.mjs --in-memory 1000000

import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { postgresAuthority, publish } from '../examples/postgres-authority/adapter.mjs';
import { capabilityId, generate, PROVIDER_ID } from './generate.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const self = fileURLToPath(import.meta.url);
const modes = (process.env.CG_BENCH_EDGES ?? 'bulk,records').split(',');

/** `adapter` with every call of its views counted into `calls`, and the time spent in them
 *  (awaiting the database) summed into `calls.adapterMs`. */
function counted(adapter, calls) {
  const count = async (name, invoke) => {
    calls[name] = (calls[name] ?? 0) + 1;
    const started = performance.now();
    try {
      return await invoke();
    } finally {
      calls.adapterMs = (calls.adapterMs ?? 0) + performance.now() - started;
    }
  };
  return {
    id: adapter.id,
    async openView(providerId) {
      const view = await count('openView', () => adapter.openView(providerId));
      for (const name of ['scanCapabilities', 'scanRelations', 'neighbors', 'changedSince', 'close']) {
        const inner = view[name];
        if (typeof inner === 'function') view[name] = (...args) => count(name, () => inner.apply(view, args));
      }
      return view;
    },
  };
}

const timed = async (fn) => {
  const started = performance.now();
  const value = await fn();
  return [value, performance.now() - started];
};
const peakMiB = () => process.resourceUsage().maxRSS / 1024;
const reset = (calls) => {
  for (const key of Object.keys(calls)) delete calls[key];
};
const snapshotOf = (calls) => ({ ...calls, adapterMs: Math.round(calls.adapterMs ?? 0) });

/** Opens once and reports, in a process that does nothing else: `spec` names the authority. */
async function openChild(spec) {
  const calls = {};
  let pool;
  let source;
  if (spec.kind === 'file') {
    source = { providerId: PROVIDER_ID, authority: { kind: 'file', rootDir: spec.dir, definitionLayout: 'directory' } };
  } else {
    pool = new pg.Pool({ max: 2 });
    const adapter = counted(postgresAuthority(pool, { knowledgeRootDir: spec.dir, edges: spec.edges }), calls);
    source = { providerId: PROVIDER_ID, authority: { kind: 'database', adapter } };
  }
  try {
    const [graph, openMs] = await timed(() => CapabilityGraph.open({ providers: [source] }));
    const [provider] = (await graph.listProviders()).items;
    await graph.close();
    return { openMs, staticRevision: provider.staticRevision, calls: snapshotOf(calls), peakRssMiB: peakMiB() };
  } finally {
    await pool?.end();
  }
}

async function inChild(spec) {
  const { stdout } = await promisify(execFile)(process.execPath, [self, '--child', JSON.stringify(spec)], { maxBuffer: 1 << 20, env: process.env });
  return JSON.parse(stdout);
}

/** Changes one capability's name by hand, as a writer of the tables would (the triggers log
 *  it), and refreshes the revision. */
async function changeOne(pool, id, name) {
  await pool.query(
    `BEGIN;
     UPDATE cg_capabilities SET record = jsonb_set(record, '{name}', to_jsonb('${name}'::text))
      WHERE provider_id = '${PROVIDER_ID}' AND capability_id = '${id}';
     UPDATE cg_capabilities SET content_hash = cg_content_hash(record)
      WHERE provider_id = '${PROVIDER_ID}' AND capability_id = '${id}';
     SELECT cg_refresh_revision('${PROVIDER_ID}');
     COMMIT`,
  );
}

/** `pool` whose clients note when a COMMIT they sent was acknowledged (`clock.committedAt`). */
function commitClock(pool) {
  const clock = { committedAt: undefined };
  clock.pool = new Proxy(pool, {
    get(target, name) {
      if (name !== 'connect') return Reflect.get(target, name);
      return async () => {
        const client = await target.connect();
        return new Proxy(client, {
          get(c, key) {
            if (key !== 'query') return Reflect.get(c, key);
            return async (sql, ...rest) => {
              const answer = await c.query(sql, ...rest);
              if (sql === 'COMMIT') clock.committedAt = performance.now();
              return answer;
            };
          },
        });
      };
    },
  });
  return clock;
}

/** A second host that watches: from a one-capability publish's commit to its next query
 *  answering from the new revision. */
async function secondHostServes(pool, dir) {
  const hostPool = new pg.Pool({ max: 2 });
  const calls = {};
  const authority = postgresAuthority(hostPool, { knowledgeRootDir: dir });
  const adapter = { ...counted(authority, calls), watch: authority.watch };
  const graph = await CapabilityGraph.open({ providers: [{ providerId: PROVIDER_ID, authority: { kind: 'database', adapter } }] });
  const alive = setInterval(() => {}, 1_000);
  const changed = mkdtempSync(path.join(tmpdir(), 'cg-bench-watch-'));
  try {
    // Subscribed once the watch has read (it reads once as it starts listening).
    await new Promise((resolve) => graph.on('reload', function first(e) {
      if (e.trigger === 'watch') graph.off('reload', first), resolve();
    }));
    cpSync(path.join(dir, 'provider.json'), path.join(changed, 'provider.json'));
    cpSync(path.join(dir, 'capabilities'), path.join(changed, 'capabilities'), { recursive: true });
    const id = capabilityId(0);
    const file = path.join(changed, `capabilities/${id.split('.').slice(0, 2).join('/')}/cap0.json`);
    const name = `Renamed ${Date.now()}`;
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), name }));
    for (const key of Object.keys(calls)) delete calls[key];
    const clock = commitClock(pool);
    const answered = new Promise((resolve, reject) => {
      graph.on('reload', async (e) => {
        if (e.trigger !== 'watch') return;
        if (!e.ok) return reject(e.error);
        const details = await graph.getCapabilities([`${PROVIDER_ID}::${id}`]);
        if (details.results[0].value.name === name) resolve(performance.now());
      });
    });
    const published = await publish(clock.pool, changed);
    const at = await answered;
    return { commitToServedMs: at - clock.committedAt, staticRevision: published.staticRevision, reloadCalls: { ...calls } };
  } finally {
    clearInterval(alive);
    rmSync(changed, { recursive: true, force: true });
    await graph.close();
    await hostPool.end();
  }
}

async function atSize(n, pool) {
  const dir = await generate(n, { log: (m) => console.error(m) });
  await pool.query(`DELETE FROM cg_providers WHERE provider_id = $1`, [PROVIDER_ID]);
  // The rows just deleted are cleaned up, and what the setup wrote is checkpointed, before the
  // publish is timed: else autovacuum and a checkpoint do that work while the publish runs, and
  // the figure is the setup's as much as this publish's. (CHECKPOINT needs a superuser or
  // pg_checkpoint; without either the figure includes whatever checkpoint comes.)
  await pool.query('VACUUM (ANALYZE) cg_providers, cg_capabilities, cg_relations, cg_changes, cg_revisions, cg_vectors');
  await pool.query('CHECKPOINT').catch(() => {});
  const [published, publishMs] = await timed(() => publish(pool, dir));
  const [, republishMs] = await timed(() => publish(pool, dir));
  const out = { capabilities: published.capabilities, publishMs, republishUnchangedMs: republishMs, open: {} };

  // Open, each in its own process.
  const files = await inChild({ kind: 'file', dir });
  out.open.files = files;
  for (const edges of modes) {
    const opened = await inChild({ kind: 'database', dir, edges });
    out.open[edges] = { ...opened, sameRevisionAsFiles: opened.staticRevision === files.staticRevision };
  }

  // Reloads, on two hosts in this process: one whose views offer changedSince, one without.
  const hosts = {};
  for (const changedSince of [true, false]) {
    const calls = {};
    const adapter = counted(postgresAuthority(pool, { knowledgeRootDir: dir, changedSince }), calls);
    const graph = await CapabilityGraph.open({ providers: [{ providerId: PROVIDER_ID, authority: { kind: 'database', adapter } }] });
    hosts[changedSince ? 'changedSince' : 'whole'] = { graph, calls };
  }
  const id = capabilityId(Math.floor(n / 2));
  try {
    const reload = async (name, options) => {
      const { graph, calls } = hosts[name];
      reset(calls);
      const [report, ms] = await timed(() => graph.reload(options));
      if (!report.ok) throw new Error(`${name} reload failed: ${JSON.stringify(report.providers[0].error)}`);
      return { ms, calls: snapshotOf(calls), staticRevision: report.providers[0].staticRevision };
    };
    out.reloadUnchanged = await reload('changedSince');
    await changeOne(pool, id, 'Changed once');
    out.reloadOneChanged = { changedSince: await reload('changedSince'), whole: await reload('whole') };
    out.reloadOneChanged.sameRevision = out.reloadOneChanged.changedSince.staticRevision === out.reloadOneChanged.whole.staticRevision;
    out.reloadForced = await reload('changedSince', { force: true });
    out.reloadForced.sameRevision = out.reloadForced.staticRevision === out.reloadOneChanged.changedSince.staticRevision;
  } finally {
    await Promise.all(Object.values(hosts).map((h) => h.graph.close()));
  }
  if (process.env.CG_BENCH_WATCH !== '0') out.watch = await secondHostServes(pool, dir);
  out.peakRssMiB = peakMiB();
  return out;
}

const s = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

if (process.argv[2] === '--child') {
  process.stdout.write(`${JSON.stringify(await openChild(JSON.parse(process.argv[3])))}\n`);
} else if (process.argv[2] === '--in-memory') {
  // The 1M-record in-memory adapter figure: the fixture under a 256 MiB heap, in its own process.
  const n = Number(process.argv[3] ?? 1_000_000);
  const script = path.join(here, '..', '__test__', 'fixtures', 'database-scale.mjs');
  const started = performance.now();
  const child = await promisify(execFile)('/usr/bin/time', ['-f', 'peakKiB=%M', process.execPath, '--max-old-space-size=256', script, String(n)], { maxBuffer: 1 << 20 });
  const peak = Number(/peakKiB=(\d+)/.exec(child.stderr)?.[1]);
  process.stdout.write(`${JSON.stringify({ records: n, ms: performance.now() - started, peakRssMiB: peak / 1024, served: JSON.parse(child.stdout) })}\n`);
} else {
  const sizes = process.argv.slice(2).map(Number);
  const pool = new pg.Pool({ max: 2 });
  const rows = [];
  try {
    await pool.query(readFileSync(path.join(here, '..', 'examples', 'postgres-authority', 'schema.sql'), 'utf8'));
    for (const n of sizes.length > 0 ? sizes : [1000, 10000, 100000]) {
      const out = await atSize(n, pool);
      process.stdout.write(`${JSON.stringify(out)}\n`);
      rows.push(out);
    }
  } finally {
    await pool.end();
  }
  // The goal table, one column per size.
  const line = (label, f) => console.error(`| ${label} | ${rows.map(f).join(' | ')} |`);
  console.error(`| measure | ${rows.map((r) => r.capabilities.toLocaleString('en')).join(' | ')} |`);
  console.error(`|---|${rows.map(() => '---').join('|')}|`);
  for (const edges of modes) line(`open (${edges}), own process`, (r) => s(r.open[edges].openMs));
  line('open (files), own process', (r) => s(r.open.files.openMs));
  line('reload, unchanged', (r) => s(r.reloadUnchanged.ms));
  line('reload after one capability changed, changedSince', (r) => s(r.reloadOneChanged.changedSince.ms));
  line('reload after one capability changed, read whole', (r) => s(r.reloadOneChanged.whole.ms));
  line('reload, forced', (r) => s(r.reloadForced.ms));
  line('publish (into an empty provider)', (r) => s(r.publishMs));
  line('publish again, unchanged', (r) => s(r.republishUnchangedMs));
  for (const edges of modes) line(`peak RSS, open only (${edges})`, (r) => `${Math.round(r.open[edges].peakRssMiB)} MiB`);
  line('peak RSS, open only (files)', (r) => `${Math.round(r.open.files.peakRssMiB)} MiB`);
}
