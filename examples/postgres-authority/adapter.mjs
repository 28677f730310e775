// A PostgreSQL database authority for @devcodex/capability-graph (tables in schema.sql).
// The engine reads a provider whole through openView() at open and at every reload whose
// revision changed; queries never reach the database. publish() writes a provider folder into
// the tables.
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { CapabilityGraph } from '@devcodex/capability-graph';

/** Inverse neighbour kinds, each read from the forward relation it mirrors. */
const INVERSE = { children: 'parents', specializedBy: 'specializes', relatedBy: 'related', requiredBy: 'requires' };
const FORWARD = new Set(Object.values(INVERSE));
/** The eight kinds in the engine's order: the bulk relation scan lists edges by capability, then kind, then endpoint. */
const KIND_ORDER = ['parents', 'children', 'specializes', 'specializedBy', 'related', 'relatedBy', 'requires', 'requiredBy'];
/** The channel publish() notifies with the provider ID when its commit changed a provider. */
export const CHANNEL = 'cg_provider_changed';

/**
 * The adapter for `{ providerId, authority: { kind: 'database', adapter } }`. `pool` is a
 * `pg.Pool` the caller owns (views borrow one client each and never end the pool).
 * `knowledgeRootDir` (an absolute path, or `(providerId) => path`) is where the definitions'
 * relative-file documents live: the database holds definitions, not document bodies. `edges`
 * is how views give the engine their edges: `'bulk'` (the default: one keyset scan of
 * `cg_relations`, checked against the records), `'each'` (eight streams per capability, the
 * original contract) or `'records'` (none: the records' own relations are the edges).
 */
export function postgresAuthority(pool, { knowledgeRootDir, edges = 'bulk' } = {}) {
  if (!['bulk', 'each', 'records'].includes(edges)) throw new TypeError(`edges must be 'bulk', 'each' or 'records'`);
  return {
    id: 'postgres',
    async openView(providerId) {
      const client = await pool.connect();
      try {
        // Every page the engine asks for must come from one snapshot, or it could see half a
        // publish; REPEATABLE READ fixes the snapshot at the first query, just below.
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        // The revision publish() keeps: one row read, however large the provider. A host whose
        // snapshot was read at this revision reads nothing more and closes the view.
        const { rows } = await client.query('SELECT record, revision FROM cg_providers WHERE provider_id = $1', [providerId]);
        if (rows.length === 0) throw new Error(`provider ${providerId} is not in the database`);
        const root = typeof knowledgeRootDir === 'function' ? knowledgeRootDir(providerId) : knowledgeRootDir;
        return openedView(client, providerId, rows[0], root, edges);
      } catch (error) {
        client.release(error); // a half-open transaction is not worth returning to the pool
        throw error;
      }
    },

    // LISTEN on a connection of its own (a pooled one would be held for the host's lifetime)
    // with the pool's settings. The promise settles when the watch ends: it resolves once the
    // graph aborts `signal`, and rejects when the connection fails or ends, so the graph
    // reports the lost watch and calls watch() again after its backoff. Once listening it
    // calls onChange() once, since a publish may have committed while nobody listened.
    watch(providerId, onChange, { signal }) {
      return new Promise((resolve, reject) => {
        const client = new pool.Client({ ...pool.options, application_name: 'capability-graph watch' });
        // A watch never keeps the host's process alive on its own.
        client.connection.stream.unref();
        let ended = false;
        const end = (error) => {
          if (ended) return;
          ended = true;
          signal.removeEventListener('abort', onAbort);
          client.end().catch(() => {});
          if (error === undefined || signal.aborted) resolve();
          else reject(error);
        };
        const onAbort = () => end();
        signal.addEventListener('abort', onAbort, { once: true });
        client.on('error', end);
        client.on('end', () => end(new Error('connection ended')));
        client.on('notification', ({ channel, payload }) => {
          if (channel === CHANNEL && payload === providerId) onChange();
        });
        client
          .connect()
          .then(() => client.query(`LISTEN ${CHANNEL}`))
          .then(() => ended || onChange(), end);
      });
    },
  };
}

function openedView(client, providerId, { record, revision }, knowledgeRootDir, edges) {
  let closed = false;
  // A released client may already serve someone else; never query through it again.
  const query = (sql, params) => {
    if (closed) throw new Error('view closed');
    return client.query(sql, params);
  };
  const view = {
    provider: record,
    sourceRevision: revision ?? '',
    ...(knowledgeRootDir !== undefined ? { knowledgeRootDir } : {}),

    // Keyset pages: the cursor is the last ID served, so a page costs one index range scan
    // however deep the walk goes. One extra row tells whether another page exists.
    async scanCapabilities({ limit, maxBytes, cursor }) {
      const { rows } = await query(
        `SELECT record::text AS json FROM cg_capabilities
          WHERE provider_id = $1 AND ($2::text IS NULL OR capability_id > $2 COLLATE "C")
          ORDER BY capability_id COLLATE "C" LIMIT $3`,
        [providerId, cursor ?? null, limit + 1],
      );
      const items = [];
      let bytes = 0;
      for (const { json } of rows.slice(0, limit)) {
        bytes += Buffer.byteLength(json);
        if (items.length > 0 && bytes > maxBytes) break; // a lone oversized record still goes, for the engine to judge
        items.push(JSON.parse(json));
      }
      return page(items, rows.length > items.length, items.at(-1)?.capabilityId);
    },

    // Every edge in the engine's order, forward rows by source and inverse rows by target,
    // each half one index range from the cursor (the last edge served, as JSON), merged.
    async scanRelations({ limit, maxBytes, cursor }) {
      const after = cursor === undefined ? null : JSON.parse(cursor);
      const from = (a, o, b) => (after ? `AND (${a}, ${o}, ${b}) > ($3, $4::smallint, $5)` : '');
      const { rows } = await query(
        `(SELECT from_id AS a, cg_kind_order(kind) AS o, to_id AS b FROM cg_relations
           WHERE provider_id = $1 ${from('from_id', 'cg_kind_order(kind)', 'to_id')}
           ORDER BY 1, 2, 3 LIMIT $2)
         UNION ALL
         (SELECT to_id, cg_kind_order(kind) + 1, from_id FROM cg_relations
           WHERE provider_id = $1 ${from('to_id', 'cg_kind_order(kind) + 1', 'from_id')}
           ORDER BY 1, 2, 3 LIMIT $2)
         ORDER BY 1, 2, 3 LIMIT $2`,
        after ? [providerId, limit + 1, ...after] : [providerId, limit + 1],
      );
      const items = [];
      let bytes = 0;
      for (const { a, o, b } of rows.slice(0, limit)) {
        const item = { from: a, kind: KIND_ORDER[o], to: b };
        bytes += Buffer.byteLength(JSON.stringify(item));
        if (items.length > 0 && bytes > maxBytes) break;
        items.push(item);
      }
      const last = rows[items.length - 1];
      return page(items, rows.length > items.length, last && JSON.stringify([last.a, last.o, last.b]));
    },

    async neighbors(capabilityId, kind, { limit, cursor }) {
      const inverse = Object.hasOwn(INVERSE, kind);
      if (!inverse && !FORWARD.has(kind)) throw new Error(`unknown neighbour kind ${kind}`);
      // One range of the index the bulk scan walks for this half (forward or inverse rows).
      const [self, other, order] = inverse ? ['to_id', 'from_id', 'cg_kind_order(kind) + 1'] : ['from_id', 'to_id', 'cg_kind_order(kind)'];
      const { rows } = await query(
        `SELECT ${other} AS id FROM cg_relations
          WHERE provider_id = $1 AND ${self} = $3 AND ${order} = $2
            AND ($4::text IS NULL OR ${other} > $4 COLLATE "C")
          ORDER BY ${other} COLLATE "C" LIMIT $5`,
        [providerId, KIND_ORDER.indexOf(kind), capabilityId, cursor ?? null, limit + 1],
      );
      const items = rows.slice(0, limit).map((r) => r.id);
      return page(items, rows.length > limit, items.at(-1));
    },

    async close() {
      if (closed) return;
      closed = true;
      try {
        await client.query('COMMIT');
        client.release();
      } catch (error) {
        client.release(error);
        throw error;
      }
    },
  };
  if (edges !== 'bulk') delete view.scanRelations;
  if (edges !== 'each') delete view.neighbors;
  return view;
}

const page = (items, more, last) => (more ? { items, nextCursor: last } : { items });

/** Folders the engine's file sources skip; a publish must not pick up what files would not. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules', 'dist', 'dist-test', 'coverage', '.cache', '.tmp']);

/**
 * Publishes a directory-layout provider folder (provider.json + capabilities/**\/*.json) in one
 * transaction: upserts the provider and its capabilities, deletes the capabilities no longer
 * present and sets the provider's revision (cg_refresh_revision). Hosts see the change at their
 * next reload; hosts that watch are notified on CHANNEL when it commits. The definitions are validated by
 * the engine first, so a commit never holds what every host would then refuse.
 * Resolves to `{ providerId, staticRevision, capabilities }`.
 */
export async function publish(pool, providerDir) {
  const provider = JSON.parse(await readFile(path.join(providerDir, 'provider.json'), 'utf8'));
  const records = [];
  for (const file of await definitionFiles(path.join(providerDir, 'capabilities'))) {
    records.push(JSON.parse(await readFile(file, 'utf8')));
  }
  const staticRevision = await validate({ ...provider, capabilities: records });

  const client = await pool.connect();
  let failure;
  try {
    await client.query('BEGIN');
    // The provider row is written (and so locked) first: concurrent publishes queue here.
    await client.query(
      `INSERT INTO cg_providers (provider_id, record, content_hash) VALUES ($1, $2, cg_content_hash($2))
       ON CONFLICT (provider_id) DO UPDATE SET record = EXCLUDED.record, content_hash = EXCLUDED.content_hash`,
      [provider.providerId, JSON.stringify(provider)],
    );
    // Unchanged records are left alone, so their relation rows are not rewritten.
    await client.query(
      `INSERT INTO cg_capabilities (provider_id, capability_id, record, content_hash)
       SELECT $1, r ->> 'capabilityId', r, cg_content_hash(r) FROM jsonb_array_elements($2::jsonb) AS r
       ON CONFLICT (provider_id, capability_id) DO UPDATE SET record = EXCLUDED.record, content_hash = EXCLUDED.content_hash
       WHERE cg_capabilities.content_hash <> EXCLUDED.content_hash`,
      [provider.providerId, JSON.stringify(records)],
    );
    // An anti-join over the published IDs (a hash join), not an array search per row.
    await client.query(
      `DELETE FROM cg_capabilities AS c WHERE c.provider_id = $1
         AND NOT EXISTS (SELECT 1 FROM unnest($2::text[]) AS p(id) WHERE p.id = c.capability_id)`,
      [provider.providerId, records.map((r) => r.capabilityId)],
    );
    // The new state's revision, in the same commit: hosts read it instead of hashing the rows.
    await client.query('SELECT cg_refresh_revision($1)', [provider.providerId]);
    // Delivered to every watching host when (and only if) this transaction commits.
    await client.query(`SELECT pg_notify('${CHANNEL}', $1)`, [provider.providerId]);
    await client.query('COMMIT');
    // Fresh planner statistics, so the first read after a large publish walks its indexes
    // rather than sorting the whole table for each page.
    await client.query('ANALYZE cg_capabilities, cg_relations').catch(() => {});
  } catch (error) {
    failure = error;
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release(failure); // a failed connection is dropped, not pooled
  }
  return { providerId: provider.providerId, staticRevision, capabilities: records.length };
}

async function definitionFiles(dir) {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) out.push(...(await definitionFiles(full)));
    else if (entry.isFile() && entry.name.endsWith('.json')) out.push(full);
  }
  return out;
}

/** Validates exactly what will be written (as an inline provider) and returns its static revision. */
async function validate(definition) {
  const graph = await CapabilityGraph.open({ providers: [{ definition }] });
  try {
    return (await graph.listProviders()).items[0].staticRevision;
  } finally {
    await graph.close();
  }
}
