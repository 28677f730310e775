// The PostgreSQL example authority (examples/postgres-authority) at bench scale: publishes the
// generated provider of N capabilities into the database the PG* environment variables name
// (schema.sql applied first), then, for each way a view gives its edges (CG_BENCH_EDGES, a
// comma-separated list of `bulk`, `each`, `records`; default `bulk,records`), opens it from the
// database, reloads it unchanged and forced, and prints the timings, the adapter calls each made
// and memory as one JSON line. Then (unless CG_BENCH_WATCH=0) it times how long a second
// host, watching, takes to serve a one-capability publish: from the commit to its next query
// answering from the new revision (`watch`). Not part of CI; bench/README.md says how to start a
// throwaway server for it.
//
//   PGHOST=/tmp/cg-pg PGDATABASE=cg node --expose-gc bench/postgres.mjs 100000

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { postgresAuthority, publish } from '../examples/postgres-authority/adapter.mjs';
import { capabilityId, generate, PROVIDER_ID } from './generate.mjs';
import { gcRssMiB } from './memory.mjs';

const n = Number(process.argv[2] ?? 10000);
const modes = (process.env.CG_BENCH_EDGES ?? 'bulk,records').split(',');
const here = path.dirname(fileURLToPath(import.meta.url));
const dir = await generate(n, { log: (m) => console.error(m) });
const pool = new pg.Pool({ max: 2 });

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
      for (const name of ['scanCapabilities', 'scanRelations', 'neighbors', 'close']) {
        const inner = view[name];
        if (typeof inner === 'function') view[name] = (...args) => count(name, () => inner.apply(view, args));
      }
      return view;
    },
  };
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

/**
 * A second host that watches (its own pool, the adapter's LISTEN) and a publish of the provider
 * with one capability renamed: the time from the publish's commit to the moment the host's next
 * query answers from the new revision, and what that host's reload read.
 */
async function secondHostServes(dir) {
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

const timed = async (fn) => {
  const started = performance.now();
  const value = await fn();
  return [value, performance.now() - started];
};

try {
  await pool.query(readFileSync(path.join(here, '..', 'examples', 'postgres-authority', 'schema.sql'), 'utf8'));
  const [published, publishMs] = await timed(() => publish(pool, dir));
  const out = { capabilities: published.capabilities, publishMs };
  for (const edges of modes) {
    const calls = {};
    const adapter = counted(postgresAuthority(pool, { knowledgeRootDir: dir, edges }), calls);
    const rssBeforeOpenMiB = gcRssMiB();
    const [graph, openMs] = await timed(() => CapabilityGraph.open({ providers: [{ providerId: PROVIDER_ID, authority: { kind: 'database', adapter } }] }));
    const rssAfterOpenMiB = gcRssMiB();
    const openCalls = { ...calls };
    const [provider] = (await graph.listProviders()).items;
    for (const key of Object.keys(calls)) delete calls[key];
    const [reload, reloadUnchangedMs] = await timed(() => graph.reload());
    const reloadUnchangedCalls = { ...calls };
    for (const key of Object.keys(calls)) delete calls[key];
    const [forced, reloadForcedMs] = await timed(() => graph.reload({ force: true }));
    await graph.close();
    out[edges] = {
      sameRevisionAsFiles: provider.staticRevision === published.staticRevision,
      openMs,
      openCalls,
      reloadUnchangedMs,
      reloadUnchangedCalls,
      reloadForcedMs,
      reloadOk: reload.ok && forced.ok,
      rssBeforeOpenMiB,
      rssAfterOpenMiB,
    };
  }
  if (process.env.CG_BENCH_WATCH !== '0') out.watch = await secondHostServes(dir);
  out.peakRssMiB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
  await pool.end();
}
