// The PostgreSQL example authority (examples/postgres-authority) at bench scale: publishes the
// generated provider of N capabilities into the database the PG* environment variables name
// (schema.sql applied first), then, for each way a view gives its edges (CG_BENCH_EDGES, a
// comma-separated list of `bulk`, `each`, `records`; default `bulk,records`), opens it from the
// database, reloads it unchanged and forced, and prints the timings, the adapter calls each made
// and memory as one JSON line. Not part of CI; bench/README.md says how to start a throwaway
// server for it.
//
//   PGHOST=/tmp/cg-pg PGDATABASE=cg node --expose-gc bench/postgres.mjs 100000

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { postgresAuthority, publish } from '../examples/postgres-authority/adapter.mjs';
import { generate, PROVIDER_ID } from './generate.mjs';
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
  out.peakRssMiB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
  await pool.end();
}
