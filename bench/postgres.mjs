// The PostgreSQL example authority (examples/postgres-authority) at bench scale: publishes the
// generated provider of N capabilities into the database the PG* environment variables name
// (schema.sql applied first), then opens it from the database, reloads it unchanged, and prints
// the timings and memory as one JSON line. Not part of CI; bench/README.md says how to start a
// throwaway server for it.
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
const here = path.dirname(fileURLToPath(import.meta.url));
const dir = await generate(n, { log: (m) => console.error(m) });
const pool = new pg.Pool({ max: 2 });
try {
  await pool.query(readFileSync(path.join(here, '..', 'examples', 'postgres-authority', 'schema.sql'), 'utf8'));
  let started = performance.now();
  const published = await publish(pool, dir);
  const publishMs = performance.now() - started;

  const rssBeforeOpenMiB = gcRssMiB();
  started = performance.now();
  const graph = await CapabilityGraph.open({
    providers: [{ providerId: PROVIDER_ID, authority: { kind: 'database', adapter: postgresAuthority(pool, { knowledgeRootDir: dir }) } }],
  });
  const openMs = performance.now() - started;
  const rssAfterOpenMiB = gcRssMiB();
  const [provider] = (await graph.listProviders()).items;
  started = performance.now();
  const reload = await graph.reload();
  const reloadMs = performance.now() - started;
  await graph.close();
  process.stdout.write(`${JSON.stringify({
    capabilities: published.capabilities,
    sameRevisionAsFiles: provider.staticRevision === published.staticRevision,
    publishMs,
    openMs,
    reloadUnchangedMs: reloadMs,
    reloadOk: reload.ok,
    rssBeforeOpenMiB,
    rssAfterOpenMiB,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
  })}\n`);
} finally {
  await pool.end();
}
