// A PostgreSQL database authority for @devcodex/capability-graph (tables in schema.sql).
// The engine reads a provider whole through openView() at open, and at a reload whose revision
// changed only what changed since (changedSince, from the change log publish() and the
// triggers keep); queries never reach the database. publish() writes a provider folder into
// the tables.
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { opendir } from 'node:fs/promises';
import path from 'node:path';
import { CapabilityGraph, GraphError, readVectorsFile } from '@devcodex/capability-graph';

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
 * is how views give the engine their edges: `'records'` (the default: none, the records' own
 * relations are the edges, as for files; this schema's triggers derive `cg_relations` from
 * those same records, so scanning it would read every edge twice), `'bulk'` (one keyset scan
 * of `cg_relations`, checked against the records: for a relation table written apart from the
 * records) or `'each'` (eight streams per capability, the original contract).
 * `changedSince` (default true) lets a reload read only the capabilities changed since the
 * host's snapshot, from the change log (`cg_changes`).
 */
export function postgresAuthority(pool, { knowledgeRootDir, edges = 'records', changedSince = true } = {}) {
  if (!['records', 'bulk', 'each'].includes(edges)) throw new TypeError(`edges must be 'records', 'bulk' or 'each'`);
  return {
    id: 'postgres',
    async openView(providerId) {
      const lent = await borrow(pool);
      const { client } = lent;
      try {
        // Every page the engine asks for must come from one snapshot, or it could see half a
        // publish; REPEATABLE READ fixes the snapshot at the first query, just below.
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        // The revision publish() keeps: one row read, however large the provider. A host whose
        // snapshot was read at this revision reads nothing more and closes the view.
        const { rows } = await client.query('SELECT record, revision FROM cg_providers WHERE provider_id = $1', [providerId]);
        if (rows.length === 0) throw new Error(`provider ${providerId} is not in the database`);
        const root = typeof knowledgeRootDir === 'function' ? knowledgeRootDir(providerId) : knowledgeRootDir;
        return openedView(lent, providerId, rows[0], { knowledgeRootDir: root, edges, changedSince, own: true });
      } catch (error) {
        lent.release(error); // a half-open transaction is not worth returning to the pool
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

/**
 * A client of `pool`, lent for as long as a view or a publish needs it, with `release(error?)`
 * to give it back. pg-pool takes its own 'error' listener off a client it lends, and a client
 * that emits 'error' with no listener throws it from the socket's callback, which ends the host
 * process: a backend terminated meanwhile (a restart, a failover, `pg_terminate_backend`) must
 * fail the call it serves, never the process. `lost` is that error: every query after it fails
 * anyway, and the client is dropped, not returned to the pool.
 */
async function borrow(pool) {
  const client = await pool.connect();
  let lost;
  // Kept on a dropped client: one that failed may report again while it ends.
  const onError = (error) => {
    lost ??= error;
  };
  client.on('error', onError);
  return {
    client,
    get lost() {
      return lost;
    },
    release(error) {
      const failed = error ?? lost;
      if (failed === undefined) client.off('error', onError); // the pool listens again
      client.release(failed);
    },
  };
}

/** More changes than this since a host's revision: a full read is cheaper, so changedSince
 *  answers unknown. */
const MAX_CHANGES = 10_000;

/**
 * One keyset page of `scanCapabilities`: the cursor is the last ID served, so a page costs one
 * index range scan however deep the walk goes, and one extra row tells whether another page
 * exists. PostgreSQL cuts the page at maxBytes and joins its records into the one JSON text the
 * engine parses: the page reaches JavaScript as a single string, never as a row per record.
 * Past the first page, only about as many rows as the byte budget takes are asked for (from the
 * records `served` so far, which this counts): the rows of a page that do not fit would be
 * printed only to be asked for again.
 */
async function recordPage(query, providerId, { limit, maxBytes, cursor }, served) {
  const ask = served.records === 0 ? limit : Math.ceil((maxBytes / served.chars) * served.records * 1.25);
  const { rows } = await query(
    `SELECT '[' || string_agg(json, ',' ORDER BY k) FILTER (WHERE fits) || ']' AS items,
            max(id) FILTER (WHERE fits) AS last, count(*) > count(*) FILTER (WHERE fits) AS more,
            count(*) FILTER (WHERE fits) AS n
       FROM (SELECT id, json, k, k = 1 OR (k <= $3 AND bytes <= $4) AS fits
               FROM (SELECT id, json, row_number() OVER w AS k, sum(octet_length(json)) OVER w AS bytes
                       FROM (SELECT capability_id AS id, record::text AS json FROM cg_capabilities
                              WHERE provider_id = $1 AND ($2::text IS NULL OR capability_id > $2 COLLATE "C")
                              ORDER BY capability_id COLLATE "C" LIMIT $3 + 1) AS r
                     WINDOW w AS (ORDER BY id)) AS s) AS t`,
    [providerId, cursor ?? null, Math.max(1, Math.min(limit, ask)), maxBytes],
  );
  const [{ items, last, more, n }] = rows;
  const itemsJson = items ?? '[]';
  served.records += Number(n);
  served.chars += itemsJson.length;
  return more ? { itemsJson, nextCursor: last } : { itemsJson };
}

/**
 * A paged scan over `fetch({ limit, maxBytes, cursor })` whose next page is asked for as soon
 * as one is served, so the database prints it while the engine takes this one. A page asked
 * for ahead is used only if the engine then asks for exactly it.
 */
function readingAhead(fetch) {
  let ahead;
  return async ({ limit, maxBytes, cursor }) => {
    const key = (at) => JSON.stringify([limit, maxBytes, at ?? null]);
    const page = ahead?.key === key(cursor) ? ahead.page : fetch({ limit, maxBytes, cursor });
    ahead = undefined;
    const { itemsJson, nextCursor } = await page;
    if (nextCursor !== undefined) {
      const next = fetch({ limit, maxBytes, cursor: nextCursor });
      next.catch(() => {}); // a page never asked for fails nobody
      ahead = { key: key(nextCursor), page: next };
    }
    return nextCursor === undefined ? { itemsJson } : { itemsJson, nextCursor };
  };
}

/** A view of `providerId` on the client `lent` (borrow), whose transaction it commits and
 *  whose client it releases at close() when `own`. */
function openedView(lent, providerId, { record, revision }, { knowledgeRootDir, edges, changedSince, own }) {
  const { client } = lent;
  let closed = false;
  // The change log position of the host's revision, once looked up (changedSince).
  let after;
  // The records the record scan read, and their JSON's length (sizing its next page).
  const served = { records: 0, chars: 0 };
  // The bytes of an item on the last relation page read, which sizes the next.
  let itemBytes;
  // A released client may already serve someone else; never query through it again.
  const query = (sql, params) => {
    if (closed) throw new Error('view closed');
    return client.query(sql, params);
  };
  const view = {
    provider: record,
    sourceRevision: revision ?? '',
    ...(knowledgeRootDir !== undefined ? { knowledgeRootDir } : {}),

    // Keyset pages of the records in ID order (recordPage), read ahead.
    scanCapabilities: readingAhead((page) => recordPage(query, providerId, page, served)),

    // Every edge in the engine's order (relationPage), read ahead.
    scanRelations: readingAhead(async (page) => {
      const read = await relationPage(query, providerId, page, itemBytes);
      itemBytes = read.itemBytes;
      return read;
    }),

    // What changed since the host's revision: the capabilities the log names after it, each
    // with its record now or as removed, in ID order. Read in this view's snapshot, so the log
    // and the records agree with sourceRevision.
    async changedSince(since, { limit, maxBytes, cursor }) {
      if (after === undefined) {
        const { rows } = await query(
          `SELECT r.seq, (SELECT count(*) FROM cg_changes c WHERE c.provider_id = $1 AND c.seq > r.seq) AS n
             FROM cg_revisions r WHERE r.provider_id = $1 AND r.revision = $2`,
          [providerId, since],
        );
        after = rows.length === 1 && Number(rows[0].n) <= MAX_CHANGES ? rows[0].seq : null;
      }
      if (after === null) return { unknown: true };
      const { rows } = await query(
        `SELECT c.id, r.record::text AS json
           FROM (SELECT DISTINCT capability_id AS id FROM cg_changes
                  WHERE provider_id = $1 AND seq > $2 AND ($3::text IS NULL OR capability_id > $3 COLLATE "C")) AS c
           LEFT JOIN cg_capabilities r ON r.provider_id = $1 AND r.capability_id = c.id
          ORDER BY c.id COLLATE "C" LIMIT $4`,
        [providerId, after, cursor ?? null, limit + 1],
      );
      const json = (r) => `{"capabilityId":${JSON.stringify(r.id)},${r.json === null ? '"removed":true' : `"record":${r.json}`}}`;
      const n = bounded(rows, limit, maxBytes, json);
      return textPage(rows, n, json, rows[n - 1]?.id);
    },

    // Precomputed vectors of one model (cg_vectors), keyset pages in ID order as JSON text;
    // of the capabilities asked for, when the engine names them (an incremental read).
    async vectors(modelId, { limit, maxBytes, cursor, capabilityIds }) {
      const { rows } = await query(
        `SELECT capability_id AS id,
                json_build_object('capabilityId', capability_id, 'textHash', text_hash, 'scale', scale, 'vector', vector)::text AS json
           FROM cg_vectors
          WHERE provider_id = $1 AND model_id = $2 AND ($3::text IS NULL OR capability_id > $3 COLLATE "C")
            AND ($5::text[] IS NULL OR capability_id = ANY($5::text[]))
          ORDER BY capability_id COLLATE "C" LIMIT $4`,
        [providerId, modelId, cursor ?? null, limit + 1, capabilityIds ?? null],
      );
      const n = bounded(rows, limit, maxBytes, (r) => r.json);
      return textPage(rows, n, (r) => r.json, rows[n - 1]?.id);
    },

    async neighbors(capabilityId, kind, { limit, cursor }) {
      const inverse = Object.hasOwn(INVERSE, kind);
      if (!inverse && !FORWARD.has(kind)) throw new Error(`unknown neighbour kind ${kind}`);
      // One range of the index the bulk scan walks for this half (forward or inverse rows).
      const [self, other, order] = inverse ? ['to_id', 'from_id', 'inverse_order'] : ['from_id', 'to_id', 'kind_order'];
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
      if (!own) return;
      try {
        await client.query('COMMIT');
        lent.release();
      } catch (error) {
        lent.release(error);
        throw error;
      }
    },
  };
  if (edges !== 'bulk') delete view.scanRelations;
  // A bulk view keeps the streams for an incremental read, which checks only those of the
  // capabilities a change touched.
  if (edges === 'records') delete view.neighbors;
  if (!changedSince) delete view.changedSince;
  return view;
}

/** The eight kinds in the engine's order as a PostgreSQL array, indexed by kind order + 1. */
const KIND_NAMES = `{${KIND_ORDER.join(',')}}`;

/** The rows of a relation page, from the cursor (the last edge served) in the engine's order:
 *  forward rows by source and inverse rows by target, one index range of each, merged. The
 *  filters stay outside the UNION, so PostgreSQL merges the two ordered ranges instead of
 *  sorting them; `json` is each row's item as compact JSON. */
const RELATION_ROWS = (after) => `
  SELECT '{"from":' || to_json(a) || ',"kind":"' || ($3::text[])[o + 1] || '","to":' || to_json(b) || '}' AS json
    FROM (SELECT provider_id AS p, from_id AS a, kind_order AS o, to_id AS b FROM cg_relations
          UNION ALL
          SELECT provider_id, to_id, inverse_order, from_id FROM cg_relations) AS edges
   WHERE p = $1 ${after ? 'AND (a, o, b) > ($5, $6::smallint, $7)' : ''}
   ORDER BY a, o, b LIMIT $2::int`;

/**
 * A page of the bulk relation scan, printed by PostgreSQL as one JSON text: no row reaches
 * JavaScript. The page is its first `limit` items, or as many as `maxBytes` holds at the
 * `itemBytes` of the last page, when they fit `maxBytes`; else (longer items than the last
 * page's) the items up to `maxBytes` (a lone larger one still goes, for the engine to judge),
 * counted by a second query. The aggregates read the rows in the order the merge gives them
 * (neither sorts again). A page of all the rows asked for has a cursor, possibly before an
 * empty last page; the cursor is the page's last item as printed: `{"` starts an item and
 * nothing inside one (a string escapes its quotes), so the last item is the text from the
 * last `{"from":`. Resolves to `{ itemsJson, nextCursor?, itemBytes }`.
 */
async function relationPage(query, providerId, { limit, maxBytes, cursor }, itemBytes) {
  const after = cursor === undefined ? null : JSON.parse(cursor);
  const rows = Math.max(1, Math.min(limit, itemBytes ? Math.floor((0.9 * maxBytes) / itemBytes) : limit));
  const params = [providerId, rows, KIND_NAMES, maxBytes, ...(after ? [after.from, KIND_ORDER.indexOf(after.kind), after.to] : [])];
  const listed = await query(
    `SELECT coalesce(string_agg(json, ','), '') AS items, count(*)::int AS n,
            coalesce(sum(octet_length(json)), 0)::bigint AS bytes, sum(octet_length(json)) > $4::bigint AS over
       FROM (${RELATION_ROWS(after)}) AS listed`,
    params,
  );
  let [{ items, n, bytes, over }] = listed.rows;
  let more = n === rows;
  if (over && n > 1) {
    const sized = await query(
      `SELECT coalesce(string_agg(json, ','), '') AS items, count(*)::int AS n, coalesce(sum(octet_length(json)), 0)::bigint AS bytes
         FROM (SELECT json, row_number() OVER w AS n, sum(octet_length(json)) OVER w AS through
                 FROM (${RELATION_ROWS(after)}) AS listed
               WINDOW w AS (ROWS UNBOUNDED PRECEDING)) AS sized
        WHERE n = 1 OR through <= $4::bigint`,
      params,
    );
    ({ items, n, bytes } = sized.rows[0]);
    more = true; // cut short by maxBytes
  }
  const itemsJson = `[${items}]`;
  const page = { itemsJson, itemBytes: n > 0 ? Number(bytes) / n : itemBytes };
  return more ? { ...page, nextCursor: items.slice(items.lastIndexOf('{"from":')) } : page;
}

const page = (items, more, last) => (more ? { items, nextCursor: last } : { items });

/** How many of `rows` (up to `limit`) fit `maxBytes` as `json` gives them; a lone oversized
 *  one still goes, for the engine to judge. */
function bounded(rows, limit, maxBytes, json) {
  let bytes = 0;
  let n = 0;
  for (; n < Math.min(limit, rows.length); n++) {
    bytes += Buffer.byteLength(json(rows[n]));
    if (n > 0 && bytes > maxBytes) break;
  }
  return n;
}

/** The first `n` rows as one JSON text the engine parses (`itemsJson`). */
function textPage(rows, n, json, last) {
  let itemsJson = '[';
  for (let i = 0; i < n; i++) itemsJson += (i > 0 ? ',' : '') + json(rows[i]);
  itemsJson += ']';
  return rows.length > n ? { itemsJson, nextCursor: last } : { itemsJson };
}

/** Folders the engine's file sources skip; a publish must not pick up what files would not. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules', 'dist', 'dist-test', 'coverage', '.cache', '.tmp']);

/** Definition files written per statement, and the most bytes of them: a few MiB of JSON in
 *  flight at a time, however large the files. */
const BATCH = 500;
const BATCH_BYTES = 4 << 20;
/** The largest provider.json or definition file read at all: the file source's (the definitions'
 *  record limit, 256 KiB). A larger one is refused by its size, before a byte is read. */
const RECORD_MAX_BYTES = 262_144;
/** Joins a batch's file texts into one parameter, split again in SQL: a JSON text never holds
 *  this control character raw, and one array parameter would be escaped character by character
 *  on both sides. */
const SEPARATOR = '\x1e';
/** A `\u0000` escape (after an even run of backslashes, so not the text `\\u0000`): the engine
 *  accepts U+0000 in a string, but jsonb cannot store it. */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;
/** Opened without blocking on a FIFO swapped in meanwhile; a definition file (refused as a link
 *  when it was listed) also without following a link swapped in. */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;
const NO_LINK = constants.O_NOFOLLOW;
/** Decodes UTF-8 as the file source does: a leading byte order mark dropped, bad bytes refused. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });
/** The engine that validates a publish: rows it validated are not validated again by itself. */
const ENGINE = `capability-graph ${createRequire(import.meta.url)('@devcodex/capability-graph/package.json').version}`;

/**
 * Publishes a directory-layout provider folder (provider.json + capabilities/**\/*.json) in one
 * transaction: upserts the provider and its capabilities (unchanged ones are left alone),
 * deletes the capabilities no longer present, sets the provider's revision
 * (cg_refresh_revision), then has the engine validate exactly what the transaction holds (the
 * rows, as every host will read them) before it commits, so a commit never holds what every
 * host would then refuse. The files are streamed in batches of multi-row inserts, each batch
 * read while the database writes the one before: the provider is never held in the JS heap,
 * and the triggers derive relations and log changes per statement. A folder that changes no
 * provider or capability row commits no definition (only its vectors), notifies nobody and,
 * when the engine already validated those rows (cg_providers.validated), reads nothing back. Hosts see a change at their next reload; hosts
 * that watch are notified on CHANNEL when it commits. Resolves to
 * `{ providerId, staticRevision, capabilities }`; rejects with a GraphError (publishFailure) and
 * commits nothing.
 */
export async function publish(pool, providerDir) {
  let providerId;
  try {
    const provider = readManifest(providerDir);
    providerId = provider.providerId;
    return await writeProvider(pool, providerDir, provider);
  } catch (error) {
    throw await publishFailure(error, providerDir, providerId);
  }
}

/** A file of the folder that publish() will not read (too large, not a regular file, a link, not
 *  UTF-8, not JSON): the engine's file source then says which and why (publishFailure). */
class Refused extends Error {
  constructor(file) {
    super('refused');
    this.file = file;
  }
}

/**
 * What publish() rejects with: a GraphError that names no path and repeats no driver message.
 * A file publish() refused, or one PostgreSQL refused (not JSON, no capabilityId, an ID given
 * twice, a class 21–23 error), is reported as the engine's file source reports the folder;
 * the database failing is `CG_CONFIG_INVALID` (`reason: 'database_failed'`), with `retry` when
 * the connection was lost or the failure passes (SQLSTATE classes 08, 40, 53, 57).
 */
async function publishFailure(error, providerDir, providerId) {
  if (error instanceof GraphError) return error;
  if (error instanceof Refused || /^2[123]/.test(error?.code ?? '')) {
    const found = await folderError(providerDir, providerId);
    if (found !== undefined) return found;
    // The engine read the folder whole and found nothing wrong: a file changed in between.
    if (error instanceof Refused) return fileChanged(providerId, error.file);
  }
  const passing = error?.lost || !/^[0-9A-Z]{5}$/.test(error?.code ?? '') || /^(08|40|53|57)/.test(error.code);
  return new GraphError({
    code: 'CG_CONFIG_INVALID',
    phase: 'load',
    nextAction: passing ? 'retry' : 'check_config',
    details: { ...(providerId === undefined ? {} : { providerId }), reason: 'database_failed' },
  });
}

const fileChanged = (providerId, file) => new GraphError({ code: 'CG_DEFINITION_INVALID', phase: 'load', details: { providerId, file, reason: 'file_changed_while_reading' } });

/**
 * `file` whole, if it is a regular file of at most `maxBytes` (reached through a link only when
 * `follow`): `{ bytes }`, `{ tooLarge: true }`, or undefined when it cannot be read. Its size is
 * checked on the open handle before anything is read, and one byte more than it is asked for,
 * so a file that grows meanwhile is not read whole.
 */
function readBounded(file, maxBytes, follow = false) {
  let fd;
  try {
    fd = openSync(file, OPEN_FLAGS | (follow ? 0 : NO_LINK));
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    if (stat.size > maxBytes) return { tooLarge: true };
    const bytes = Buffer.allocUnsafe(stat.size + 1);
    let length = 0;
    for (let n; length < bytes.length && (n = readSync(fd, bytes, length, bytes.length - length, null)) > 0; ) length += n;
    return length === stat.size ? { bytes: bytes.subarray(0, length) } : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The text of the folder's file `rel` (within the file source's budget, as UTF-8), else Refused. */
function readText(providerDir, rel, follow = false) {
  const read = readBounded(path.join(providerDir, rel), RECORD_MAX_BYTES, follow);
  try {
    if (read?.bytes) return UTF8.decode(read.bytes);
  } catch {
    // not UTF-8: refused below
  }
  throw new Refused(rel);
}

/** A definition file whose text jsonb cannot store: refused before anything is written. */
function refuseNul(text, providerId, file) {
  if (text.includes('\\u0000') && NUL_ESCAPE.test(text)) {
    throw new GraphError({ code: 'CG_DEFINITION_INVALID', phase: 'load', details: { providerId, file, reason: 'nul_character_unsupported' } });
  }
}

/** The folder's provider.json, parsed (an object with a providerId string), else Refused. A
 *  folder that is not one is `CG_CONFIG_INVALID`, as the file source's missing root is. */
function readManifest(providerDir) {
  let folder = false;
  try {
    folder = statSync(providerDir).isDirectory();
  } catch {
    // missing: refused below
  }
  if (!folder) throw new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'load', details: { path: 'providerDir', expected: 'readable directory' } });
  // The file source follows a link here (while it stays inside the folder).
  const text = readText(providerDir, 'provider.json', true);
  let provider;
  try {
    provider = JSON.parse(text);
  } catch {
    throw new Refused('provider.json');
  }
  if (typeof provider?.providerId !== 'string') throw new Refused('provider.json');
  refuseNul(text, provider.providerId, 'provider.json');
  return provider;
}

/** publish() once the manifest is read: the transaction, on a client lent by `pool`. */
async function writeProvider(pool, providerDir, provider) {
  const providerId = provider.providerId;
  const lent = await borrow(pool);
  const { client } = lent;
  let failure;
  try {
    await client.query('BEGIN');
    // The provider row is written (and so locked) first: concurrent publishes queue here. An
    // unchanged record is locked, not rewritten. A row inserted now (xmax 0: no earlier version
    // locked) has no capabilities yet, which the foreign key guarantees.
    const written = await client.query(
      `INSERT INTO cg_providers (provider_id, record, content_hash) VALUES ($1, $2, cg_content_hash($2))
       ON CONFLICT (provider_id) DO UPDATE SET record = EXCLUDED.record, content_hash = EXCLUDED.content_hash
       WHERE cg_providers.content_hash <> EXCLUDED.content_hash
       RETURNING xmax = 0 AS inserted`,
      [providerId, JSON.stringify(provider)],
    );
    // Into a new provider, plain inserts: no probe of the key for a row to update before each
    // insert (its unique check still refuses an ID given twice).
    const fresh = written.rows[0]?.inserted === true;
    const { rows: before } = await client.query('SELECT revision, static_revision, validated FROM cg_providers WHERE provider_id = $1', [providerId]);
    // The IDs published, for the deletion below; a second file with the same ID is refused.
    await client.query('CREATE TEMP TABLE cg_published (capability_id text COLLATE "C" PRIMARY KEY) ON COMMIT DROP');
    let capabilities = 0;
    // Capability rows written or removed.
    let changed = 0;
    let batch = [];
    let batchBytes = 0;
    let writing;
    const flush = async () => {
      const texts = batch;
      batch = [];
      batchBytes = 0;
      await writing;
      if (texts.length === 0) return;
      // Unchanged records are left alone, so their relation rows and log are not rewritten.
      writing = client
        .query(
          `WITH given AS (SELECT r ->> 'capabilityId' AS id, r FROM unnest(string_to_array($2, $3)) AS t(x), LATERAL (SELECT x::jsonb) AS j(r)),
                listed AS (INSERT INTO cg_published SELECT id FROM given)
           INSERT INTO cg_capabilities (provider_id, capability_id, record, content_hash)
           SELECT $1, id, r, cg_content_hash(r) FROM given
           ${fresh ? '' : `ON CONFLICT (provider_id, capability_id) DO UPDATE SET record = EXCLUDED.record, content_hash = EXCLUDED.content_hash
           WHERE cg_capabilities.content_hash <> EXCLUDED.content_hash`}`,
          [providerId, texts.join(SEPARATOR), SEPARATOR],
        )
        .then((result) => {
          changed += result.rowCount;
        });
      // Awaited at the next flush; a failure meanwhile is not unhandled.
      writing.catch(() => {});
    };
    // Read synchronously, a batch between two statements: a small file costs several thread
    // pool round trips read asynchronously, and the batches are what the publish waits on.
    for await (const rel of definitionFiles(providerDir)) {
      const text = readText(providerDir, rel);
      // No JSON text holds the separator raw: the file is not JSON, as the file source says.
      if (text.includes(SEPARATOR)) throw new Refused(rel);
      refuseNul(text, providerId, rel);
      batch.push(text);
      batchBytes += text.length;
      capabilities += 1;
      if (batch.length === BATCH || batchBytes >= BATCH_BYTES) await flush();
    }
    await flush();
    await writing;
    // An anti-join over the published IDs (a hash join), not an array search per row.
    await client.query('ANALYZE cg_published');
    const removed = await client.query(
      `DELETE FROM cg_capabilities AS c WHERE c.provider_id = $1
         AND NOT EXISTS (SELECT 1 FROM cg_published AS p WHERE p.capability_id = c.capability_id)`,
      [providerId],
    );
    changed += removed.rowCount;
    // Vectors are not definitions: replaced whatever else changed, they change no revision.
    await publishVectors(client, providerId, providerDir, capabilities);
    const { revision: previous, static_revision: validatedAs, validated } = before[0];
    if (written.rowCount === 0 && changed === 0 && previous !== null && validated === `${previous} ${ENGINE}`) {
      // The rows this engine validated, as they were: no definition to commit, nobody to tell.
      await client.query('COMMIT');
      return { providerId, staticRevision: validatedAs, capabilities };
    }
    // The new state's revision, in the same commit: hosts read it instead of hashing the rows.
    const { rows } = await client.query('SELECT cg_refresh_revision($1) AS revision', [providerId]);
    const { revision } = rows[0];
    // The planner's statistics know nothing of the rows this transaction wrote (or, analyzed
    // meanwhile by autovacuum, which does not count them, that there are none): the validation's
    // pages walk the key index, never a scan and sort of the whole table for each page.
    await client.query('SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off');
    const staticRevision = await validate(lent, providerId, { record: provider, revision }, providerDir);
    await client.query('UPDATE cg_providers SET static_revision = $2, validated = $3 WHERE provider_id = $1', [providerId, staticRevision, `${revision} ${ENGINE}`]);
    // Delivered to every watching host when (and only if) this transaction commits.
    if (revision !== previous) await client.query(`SELECT pg_notify('${CHANNEL}', $1)`, [providerId]);
    await client.query('COMMIT');
    // Fresh planner statistics after a large change, so the first read walks the indexes rather
    // than sorting the whole table for each page; below a tenth of the provider (the share at
    // which autovacuum analyzes) the statistics still describe it.
    if (changed > capabilities / 10) await client.query('ANALYZE cg_capabilities, cg_relations, cg_changes').catch(() => {});
    return { providerId, staticRevision, capabilities };
  } catch (error) {
    failure = error;
    if (lent.lost !== undefined) throw Object.assign(new Error('connection lost'), { lost: true });
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    lent.release(failure); // a failed connection is dropped, not pooled
  }
}

/** The most bytes a vectors file for `count` capabilities can hold, as the file source bounds
 *  the one it reads: entries for twice the capabilities (and 16), each of the largest ID (512
 *  bytes) and dimensions (4,096) the file format allows, after the largest header. */
const vectorsBudget = (count) => 152 + (2 * count + 16) * (2 + 512 + 16 + 4 + 4096);

/**
 * Replaces the provider's precomputed vectors (cg_vectors) with the entries of the folder's
 * vectors files (`vectors/<model-id>.bin`, from `capability-graph embed`) for the `count`
 * capabilities published, decoded by the engine (`readVectorsFile`); a file the engine refuses
 * (not a vectors file, or entries out of order, repeated or not capability IDs) is refused
 * (`CG_INPUT_INVALID`), one larger than a vectors file for them can be (`CG_INPUT_TOO_LARGE`)
 * before it is read, and without files the provider has none (hosts then embed it). An entry
 * whose capability's text changed since the file was written is stored too but never used:
 * hosts check each one's text hash and embed that capability instead, so run
 * `capability-graph embed` before publishing.
 */
async function publishVectors(client, providerId, providerDir, count) {
  // Called once the capabilities no longer present are deleted: the entries kept are those of
  // the capabilities published.
  await client.query('DELETE FROM cg_vectors WHERE provider_id = $1', [providerId]);
  const maxBytes = vectorsBudget(count);
  for await (const rel of vectorsFiles(providerDir, 'vectors')) {
    const file = readBounded(path.join(providerDir, rel), maxBytes);
    if (file?.tooLarge) throw new GraphError({ code: 'CG_INPUT_TOO_LARGE', phase: 'load', details: { providerId, file: rel, maxBytes } });
    if (file === undefined) continue;
    let read;
    try {
      read = readVectorsFile(file.bytes);
    } catch {
      // Stored as it is, such a file would fail the publish half-way (an ID twice) or give hosts
      // entries their own vectors file would not: refused before anything is written.
      throw new GraphError({ code: 'CG_INPUT_INVALID', phase: 'load', details: { providerId, file: rel, field: 'bytes' } });
    }
    // Written under the model the file names, whatever its path says.
    for (let at = 0; at < read.entries.length; at += BATCH) {
      const batch = read.entries.slice(at, at + BATCH);
      await client.query(
        `INSERT INTO cg_vectors (provider_id, model_id, capability_id, text_hash, scale, vector)
         SELECT $1, $2, e.id, e.hash, e.scale, e.vector
           FROM unnest($3::text[], $4::text[], $5::real[], $6::text[]) AS e(id, hash, scale, vector)
           JOIN cg_capabilities AS c ON c.provider_id = $1 AND c.capability_id = e.id
         ON CONFLICT (provider_id, model_id, capability_id) DO UPDATE
           SET text_hash = EXCLUDED.text_hash, scale = EXCLUDED.scale, vector = EXCLUDED.vector`,
        [providerId, read.modelId, batch.map((e) => e.capabilityId), batch.map((e) => e.textHash), batch.map((e) => e.scale), batch.map((e) => e.vector)],
      );
    }
  }
}

/** Every `.bin` file under the folder's `rel` (model IDs may hold `/`), relative to the folder;
 *  none when it does not exist. */
async function* vectorsFiles(providerDir, rel) {
  let entries;
  try {
    entries = await opendir(path.join(providerDir, rel));
  } catch {
    return;
  }
  for await (const entry of entries) {
    const child = `${rel}/${entry.name}`;
    if (entry.isDirectory()) yield* vectorsFiles(providerDir, child);
    else if (entry.isFile() && entry.name.endsWith('.bin')) yield child;
  }
}

/** The error the engine finds reading `providerDir` as a file provider, if any. Before the
 *  manifest names the provider it is read under a stand-in ID, which the error then omits. */
async function folderError(providerDir, providerId) {
  const id = providerId ?? 'publish';
  try {
    const graph = await CapabilityGraph.open({ providers: [{ providerId: id, authority: { kind: 'file', rootDir: providerDir, definitionLayout: 'directory' } }] });
    await graph.close();
    return undefined;
  } catch (error) {
    if (providerId !== undefined || error.details?.providerId !== id) return error;
    const { providerId: _, ...details } = error.details;
    return new GraphError({ ...error.toJSON(), details });
  }
}

/**
 * Every definition file of the folder (relative to it), as files are found (never listed whole),
 * refusing (Refused) where the file source does: `capabilities` not a folder of its own, a link
 * anywhere in it, anything but a regular file named `*.json`, a folder it cannot list.
 */
async function* definitionFiles(providerDir, rel = 'capabilities') {
  let entries;
  try {
    if (rel === 'capabilities' && !lstatSync(path.join(providerDir, rel)).isDirectory()) throw new Refused(rel);
    entries = await opendir(path.join(providerDir, rel));
  } catch {
    throw new Refused(rel);
  }
  for await (const entry of entries) {
    const child = `${rel}/${entry.name}`;
    if (entry.isSymbolicLink()) throw new Refused(child);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* definitionFiles(providerDir, child);
    } else if (entry.name.endsWith('.json')) {
      if (!entry.isFile()) throw new Refused(child);
      yield child;
    }
  }
}

/** Has the engine read the provider through a view of the publishing transaction (on the client
 *  `lent`), exactly as a host will after the commit (the records, their relations from the
 *  records; documents from the folder), and returns its static revision; rejects with the
 *  engine's error. */
async function validate(lent, providerId, row, knowledgeRootDir) {
  const view = openedView(lent, providerId, row, { knowledgeRootDir: path.resolve(knowledgeRootDir), edges: 'records', changedSince: false, own: false });
  const adapter = { id: 'postgres-publish', openView: async () => view };
  const graph = await CapabilityGraph.open({ providers: [{ providerId, authority: { kind: 'database', adapter } }] });
  try {
    return (await graph.listProviders()).items[0].staticRevision;
  } finally {
    await graph.close();
  }
}
