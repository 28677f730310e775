-- Capability graph definitions in PostgreSQL, read by adapter.mjs, written by publish().
--
-- IDs use COLLATE "C": the engine orders and compares IDs by bytes, and the adapter's scans
-- must come back in exactly that order (a locale collation would sort '-' or '.' differently).

CREATE TABLE IF NOT EXISTS cg_providers (
  provider_id  text COLLATE "C" PRIMARY KEY,
  record       jsonb NOT NULL,        -- provider.json: { providerId, name, version, specification? }
  content_hash text  NOT NULL,        -- cg_content_hash(record), set by whoever writes the row
  -- The state of the provider's rows, read by every view as its sourceRevision: hosts whose
  -- snapshot was read at this revision skip the read. cg_refresh_revision() sets it; every
  -- transaction that changes the provider's rows must call it before it commits.
  revision     text,
  -- The engine's static revision of the rows publish() last had it validate, and the revision
  -- and engine version it validated: a publish that leaves those rows as they are need not
  -- read them all back again.
  static_revision text,
  validated       text,
  CHECK (record ->> 'providerId' = provider_id)
);
ALTER TABLE cg_providers ADD COLUMN IF NOT EXISTS revision text;
ALTER TABLE cg_providers ADD COLUMN IF NOT EXISTS static_revision text;
ALTER TABLE cg_providers ADD COLUMN IF NOT EXISTS validated text;

CREATE TABLE IF NOT EXISTS cg_capabilities (
  provider_id   text COLLATE "C" NOT NULL REFERENCES cg_providers ON DELETE CASCADE,
  capability_id text COLLATE "C" NOT NULL,
  record        jsonb NOT NULL,       -- one capability definition, exactly as the engine reads it
  content_hash  text  NOT NULL,
  PRIMARY KEY (provider_id, capability_id),
  CHECK (record ->> 'capabilityId' = capability_id)
);

-- sha256 of a record's jsonb text (jsonb fixes the key order), so reformatting a file changes
-- nothing. Writers set it (convert_to is only STABLE, so it cannot be a generated column).
CREATE OR REPLACE FUNCTION cg_content_hash(record jsonb) RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT encode(sha256(convert_to(record::text, 'UTF8')), 'hex') $$;

-- The position of a kind in the engine's order of the eight (parents, children, specializes,
-- specializedBy, related, relatedBy, requires, requiredBy): a forward row's, its inverse's + 1.
CREATE OR REPLACE FUNCTION cg_kind_order(kind text) RETURNS smallint LANGUAGE sql IMMUTABLE
  AS $$ SELECT (CASE kind WHEN 'parents' THEN 0 WHEN 'specializes' THEN 2 WHEN 'related' THEN 4 WHEN 'requires' THEN 6 END)::smallint $$;

-- The declared relations, one row per edge, so neighbours are an indexed lookup in either
-- direction. Rows are derived from the records by the trigger below, never written by hand:
-- the engine rejects a view whose relation streams disagree with its records.
-- The triggers below also remove a capability's rows with it: no foreign key, whose check of
-- every row written would cost a publish as much again. No key on to_id either: a dangling
-- endpoint is the engine's to report, with the record's name.
CREATE TABLE IF NOT EXISTS cg_relations (
  provider_id   text COLLATE "C" NOT NULL,
  from_id       text COLLATE "C" NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('parents', 'specializes', 'related', 'requires')),
  to_id         text COLLATE "C" NOT NULL,
  -- The row's place in the engine's order of kinds, as its source's edge and as its target's
  -- (inverse) edge: stored, so the indexes below hold every column a scan reads (index-only
  -- scans) and both halves of the bulk scan order by plain smallint columns, which PostgreSQL
  -- merges without a sort.
  kind_order    smallint GENERATED ALWAYS AS (cg_kind_order(kind)) STORED,
  inverse_order smallint GENERATED ALWAYS AS (cg_kind_order(kind) + 1) STORED
);
-- Earlier versions of this schema had a foreign key and a primary key besides the indexes,
-- and no stored kind order (adding it rewrites the table once).
ALTER TABLE cg_relations DROP CONSTRAINT IF EXISTS cg_relations_provider_id_from_id_fkey;
ALTER TABLE cg_relations DROP CONSTRAINT IF EXISTS cg_relations_pkey;
ALTER TABLE cg_relations
  ADD COLUMN IF NOT EXISTS kind_order smallint GENERATED ALWAYS AS (cg_kind_order(kind)) STORED,
  ADD COLUMN IF NOT EXISTS inverse_order smallint GENERATED ALWAYS AS (cg_kind_order(kind) + 1) STORED;

-- Every edge by (capability, kind, endpoint) in the engine's order: forward rows by their
-- source, inverse rows (children, specializedBy, relatedBy, requiredBy) by their target. The
-- bulk relation scan merges one range of each; a neighbour stream is one range of one. The
-- source index, unique (an edge once), also serves a capability's own rows, whatever their
-- kind, which the triggers below replace on every write and remove with the capability:
-- without it each of those scans every relation of the provider, and publishing or removing n
-- capabilities costs n².
CREATE UNIQUE INDEX IF NOT EXISTS cg_relations_by_source ON cg_relations (provider_id, from_id, kind_order, to_id);
CREATE INDEX IF NOT EXISTS cg_relations_by_target ON cg_relations (provider_id, to_id, inverse_order, from_id);
-- Indexes of earlier versions of this schema, which the two above replace.
DROP INDEX IF EXISTS cg_relations_forward;
DROP INDEX IF EXISTS cg_relations_scan_inverse;
DROP INDEX IF EXISTS cg_relations_scan_forward;
DROP INDEX IF EXISTS cg_relations_inverse;
DROP INDEX IF EXISTS cg_relations_from;

-- Relation rows are derived per statement from the rows it wrote or removed (transition
-- tables), so a publish of n capabilities costs one set-based insert, not n trigger calls.
CREATE OR REPLACE FUNCTION cg_derive_relations() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    DELETE FROM cg_relations AS r USING before AS c
     WHERE r.provider_id = c.provider_id AND r.from_id = c.capability_id;
  END IF;
  IF TG_OP = 'DELETE' THEN
    RETURN NULL;
  END IF;
  INSERT INTO cg_relations (provider_id, from_id, kind, to_id)
  SELECT c.provider_id, c.capability_id, k.kind, t.to_id
  FROM changed AS c
  CROSS JOIN unnest(ARRAY['parents', 'specializes', 'related', 'requires']) AS k(kind)
  -- A malformed field (not an array) derives no rows; the engine then rejects the record itself.
  CROSS JOIN LATERAL jsonb_array_elements_text(
    CASE WHEN jsonb_typeof(c.record -> k.kind) = 'array' THEN c.record -> k.kind ELSE '[]' END
  ) AS t(to_id)
  ON CONFLICT DO NOTHING;  -- a duplicate endpoint is likewise the engine's to reject
  RETURN NULL;
END $$;

-- Earlier versions of this schema derived relations row by row.
DROP TRIGGER IF EXISTS cg_capabilities_relations ON cg_capabilities;
DROP TRIGGER IF EXISTS cg_capabilities_relations_insert ON cg_capabilities;
CREATE TRIGGER cg_capabilities_relations_insert
  AFTER INSERT ON cg_capabilities REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION cg_derive_relations();
DROP TRIGGER IF EXISTS cg_capabilities_relations_update ON cg_capabilities;
CREATE TRIGGER cg_capabilities_relations_update
  AFTER UPDATE ON cg_capabilities REFERENCING OLD TABLE AS before NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION cg_derive_relations();
DROP TRIGGER IF EXISTS cg_capabilities_relations_delete ON cg_capabilities;
CREATE TRIGGER cg_capabilities_relations_delete
  AFTER DELETE ON cg_capabilities REFERENCING OLD TABLE AS before
  FOR EACH STATEMENT EXECUTE FUNCTION cg_derive_relations();

-- The change log that answers a view's changedSince: one row per capability written or
-- removed, numbered from one sequence. The numbers of one provider grow in commit order: the
-- trigger locks the provider's row before it numbers the changes, so a second writer of the
-- provider waits for the first to commit (write the provider row first, as publish() does,
-- or a hand-written change that touches capabilities first may deadlock with it).
CREATE SEQUENCE IF NOT EXISTS cg_change_seq;
CREATE TABLE IF NOT EXISTS cg_changes (
  provider_id   text COLLATE "C" NOT NULL,
  seq           bigint NOT NULL,
  capability_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (provider_id, seq, capability_id)
);
-- Each revision the provider's rows had, with the last change it includes: the changes since
-- revision R are those numbered above R's. A revision not listed (never recorded, or pruned
-- with cg_prune_changes) makes changedSince answer "unknown", and hosts read whole.
CREATE TABLE IF NOT EXISTS cg_revisions (
  provider_id text COLLATE "C" NOT NULL,
  revision    text NOT NULL,
  seq         bigint NOT NULL,
  PRIMARY KEY (provider_id, revision)
);

CREATE OR REPLACE FUNCTION cg_log_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM cg_providers WHERE provider_id IN (SELECT provider_id FROM changed)
    ORDER BY provider_id FOR UPDATE;
  INSERT INTO cg_changes (provider_id, seq, capability_id)
  SELECT provider_id, nextval('cg_change_seq'), capability_id FROM changed;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS cg_capabilities_log_insert ON cg_capabilities;
CREATE TRIGGER cg_capabilities_log_insert
  AFTER INSERT ON cg_capabilities REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION cg_log_changes();
DROP TRIGGER IF EXISTS cg_capabilities_log_update ON cg_capabilities;
CREATE TRIGGER cg_capabilities_log_update
  AFTER UPDATE ON cg_capabilities REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION cg_log_changes();
DROP TRIGGER IF EXISTS cg_capabilities_log_delete ON cg_capabilities;
CREATE TRIGGER cg_capabilities_log_delete
  AFTER DELETE ON cg_capabilities REFERENCING OLD TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION cg_log_changes();

-- A provider removed takes its log along.
CREATE OR REPLACE FUNCTION cg_forget_provider() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM cg_changes WHERE provider_id IN (SELECT provider_id FROM gone);
  DELETE FROM cg_revisions WHERE provider_id IN (SELECT provider_id FROM gone);
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS cg_providers_forget ON cg_providers;
CREATE TRIGGER cg_providers_forget
  AFTER DELETE ON cg_providers REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION cg_forget_provider();

-- A provider's revision: sha256 over its record's and every capability's content hash, so a
-- publish of the same definitions names the same revision. Computed once per commit, never at
-- each read; recorded with the last change it includes.
CREATE OR REPLACE FUNCTION cg_refresh_revision(provider text) RETURNS text LANGUAGE sql AS $$
  WITH refreshed AS (
    UPDATE cg_providers AS p SET revision = (
      SELECT 'pg:' || encode(sha256(convert_to(p.content_hash || coalesce(
               string_agg(c.capability_id || ':' || c.content_hash, ',' ORDER BY c.capability_id COLLATE "C"),
               ''), 'UTF8')), 'hex')
        FROM cg_capabilities c WHERE c.provider_id = p.provider_id)
    WHERE p.provider_id = provider
    RETURNING p.provider_id, p.revision
  )
  INSERT INTO cg_revisions (provider_id, revision, seq)
  SELECT provider_id, revision,
         (SELECT coalesce(max(seq), 0) FROM cg_changes WHERE cg_changes.provider_id = provider)
    FROM refreshed
  ON CONFLICT (provider_id, revision) DO UPDATE SET seq = EXCLUDED.seq
  RETURNING revision
$$;
-- Rows written before the column existed.
SELECT cg_refresh_revision(provider_id) FROM cg_providers WHERE revision IS NULL;

-- Drops a provider's changes numbered up to `upto` and the revisions they answer for: hosts
-- whose snapshot is of such a revision read whole at their next reload.
CREATE OR REPLACE FUNCTION cg_prune_changes(provider text, upto bigint) RETURNS void LANGUAGE sql AS $$
  DELETE FROM cg_revisions WHERE provider_id = provider AND seq <= upto;
  DELETE FROM cg_changes WHERE provider_id = provider AND seq <= upto;
$$;

-- Precomputed capability vectors by model: the entries `capability-graph embed` writes in a
-- provider folder's vectors/<model-id>.bin, which publish() copies here, so hosts whose
-- semantic executor uses that model read them (vectors()) instead of embedding the provider.
-- Never trusted: a host uses an entry only when its text hash matches the capability's text
-- today. Not definitions: writing them changes no revision.
CREATE TABLE IF NOT EXISTS cg_vectors (
  provider_id   text COLLATE "C" NOT NULL REFERENCES cg_providers ON DELETE CASCADE,
  model_id      text NOT NULL,
  capability_id text COLLATE "C" NOT NULL,
  text_hash     text NOT NULL,        -- 32 hex digits
  scale         real NOT NULL,
  vector        text NOT NULL,        -- base64 of the int8 components
  PRIMARY KEY (provider_id, model_id, capability_id)
);
