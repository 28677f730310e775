// A PostgreSQL database authority for @devcodex/capability-graph (tables in schema.sql).
// The engine reads a provider whole through openView() at open and at every reload; queries
// never reach the database. publish() writes a provider folder into the tables.
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { CapabilityGraph } from '@devcodex/capability-graph';

/** Inverse neighbour kinds, each read from the forward relation it mirrors. */
const INVERSE = { children: 'parents', specializedBy: 'specializes', relatedBy: 'related', requiredBy: 'requires' };
const FORWARD = new Set(Object.values(INVERSE));

/**
 * The adapter for `{ providerId, authority: { kind: 'database', adapter } }`. `pool` is a
 * `pg.Pool` the caller owns (views borrow one client each and never end the pool).
 * `knowledgeRootDir` (an absolute path, or `(providerId) => path`) is where the definitions'
 * relative-file documents live: the database holds definitions, not document bodies.
 */
export function postgresAuthority(pool, { knowledgeRootDir } = {}) {
  return {
    id: 'postgres',
    async openView(providerId) {
      const client = await pool.connect();
      try {
        // Every page the engine asks for must come from one snapshot, or it could see half a
        // publish; REPEATABLE READ fixes the snapshot at the first query, just below.
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const { rows } = await client.query(
          `SELECT p.record,
                  'pg:' || encode(sha256(convert_to(p.content_hash || coalesce(
                    string_agg(c.capability_id || ':' || c.content_hash, ',' ORDER BY c.capability_id COLLATE "C"),
                    ''), 'UTF8')), 'hex') AS revision
             FROM cg_providers p LEFT JOIN cg_capabilities c USING (provider_id)
            WHERE p.provider_id = $1
            GROUP BY p.provider_id`,
          [providerId],
        );
        if (rows.length === 0) throw new Error(`provider ${providerId} is not in the database`);
        const root = typeof knowledgeRootDir === 'function' ? knowledgeRootDir(providerId) : knowledgeRootDir;
        return openedView(client, providerId, rows[0], root);
      } catch (error) {
        client.release(error); // a half-open transaction is not worth returning to the pool
        throw error;
      }
    },
  };
}

function openedView(client, providerId, { record, revision }, knowledgeRootDir) {
  let closed = false;
  // A released client may already serve someone else; never query through it again.
  const query = (sql, params) => {
    if (closed) throw new Error('view closed');
    return client.query(sql, params);
  };
  return {
    provider: record,
    sourceRevision: revision,
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

    async neighbors(capabilityId, kind, { limit, cursor }) {
      const inverse = Object.hasOwn(INVERSE, kind);
      if (!inverse && !FORWARD.has(kind)) throw new Error(`unknown neighbour kind ${kind}`);
      const [self, other] = inverse ? ['to_id', 'from_id'] : ['from_id', 'to_id'];
      const { rows } = await query(
        `SELECT ${other} AS id FROM cg_relations
          WHERE provider_id = $1 AND kind = $2 AND ${self} = $3
            AND ($4::text IS NULL OR ${other} > $4 COLLATE "C")
          ORDER BY ${other} COLLATE "C" LIMIT $5`,
        [providerId, inverse ? INVERSE[kind] : kind, capabilityId, cursor ?? null, limit + 1],
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
}

const page = (items, more, last) => (more ? { items, nextCursor: last } : { items });

/** Folders the engine's file sources skip; a publish must not pick up what files would not. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules', 'dist', 'dist-test', 'coverage', '.cache', '.tmp']);

/**
 * Publishes a directory-layout provider folder (provider.json + capabilities/**\/*.json) in one
 * transaction: upserts the provider and its capabilities and deletes the capabilities no
 * longer present. Hosts see the change at their next reload. The definitions are validated by
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
    await client.query('COMMIT');
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
