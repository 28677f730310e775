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
  CHECK (record ->> 'providerId' = provider_id)
);
ALTER TABLE cg_providers ADD COLUMN IF NOT EXISTS revision text;

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

-- The declared relations, one row per edge, so neighbours are an indexed lookup in either
-- direction. Rows are derived from the records by the trigger below, never written by hand:
-- the engine rejects a view whose relation streams disagree with its records.
CREATE TABLE IF NOT EXISTS cg_relations (
  provider_id text COLLATE "C" NOT NULL,
  from_id     text COLLATE "C" NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('parents', 'specializes', 'related', 'requires')),
  to_id       text COLLATE "C" NOT NULL,
  PRIMARY KEY (provider_id, kind, from_id, to_id),
  FOREIGN KEY (provider_id, from_id) REFERENCES cg_capabilities ON DELETE CASCADE ON UPDATE CASCADE
  -- no foreign key on to_id: a dangling endpoint is the engine's to report, with the record's name
);

-- The position of a kind in the engine's order of the eight (parents, children, specializes,
-- specializedBy, related, relatedBy, requires, requiredBy): a forward row's, its inverse's + 1.
CREATE OR REPLACE FUNCTION cg_kind_order(kind text) RETURNS smallint LANGUAGE sql IMMUTABLE
  AS $$ SELECT (CASE kind WHEN 'parents' THEN 0 WHEN 'specializes' THEN 2 WHEN 'related' THEN 4 WHEN 'requires' THEN 6 END)::smallint $$;
-- Every edge by (capability, kind, endpoint) in the engine's order: forward rows by their
-- source, inverse rows (children, specializedBy, relatedBy, requiredBy) by their target. The
-- bulk relation scan merges one range of each; a neighbour stream is one range of one. The
-- forward index also serves a capability's own rows, whatever their kind, which the trigger
-- below replaces on every write and deleting a capability cascades to: without it each of
-- those scans every relation of the provider, and publishing or removing n capabilities costs n².
CREATE INDEX IF NOT EXISTS cg_relations_scan_forward ON cg_relations (provider_id, from_id, cg_kind_order(kind), to_id);
CREATE INDEX IF NOT EXISTS cg_relations_scan_inverse ON cg_relations (provider_id, to_id, (cg_kind_order(kind) + 1), from_id);
-- Indexes of earlier versions of this schema, which the two above replace.
DROP INDEX IF EXISTS cg_relations_inverse;
DROP INDEX IF EXISTS cg_relations_from;

CREATE OR REPLACE FUNCTION cg_derive_relations() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM cg_relations WHERE provider_id = NEW.provider_id AND from_id = NEW.capability_id;
  INSERT INTO cg_relations (provider_id, from_id, kind, to_id)
  SELECT NEW.provider_id, NEW.capability_id, k.kind, t.to_id
  FROM unnest(ARRAY['parents', 'specializes', 'related', 'requires']) AS k(kind)
  -- A malformed field (not an array) derives no rows; the engine then rejects the record itself.
  CROSS JOIN LATERAL jsonb_array_elements_text(
    CASE WHEN jsonb_typeof(NEW.record -> k.kind) = 'array' THEN NEW.record -> k.kind ELSE '[]' END
  ) AS t(to_id)
  ON CONFLICT DO NOTHING;  -- a duplicate endpoint is likewise the engine's to reject
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS cg_capabilities_relations ON cg_capabilities;
CREATE TRIGGER cg_capabilities_relations
  AFTER INSERT OR UPDATE OF record ON cg_capabilities
  FOR EACH ROW EXECUTE FUNCTION cg_derive_relations();

-- A provider's revision: sha256 over its record's and every capability's content hash, so a
-- publish of the same definitions names the same revision. Computed once per commit, never at
-- each read.
CREATE OR REPLACE FUNCTION cg_refresh_revision(provider text) RETURNS text LANGUAGE sql AS $$
  UPDATE cg_providers AS p SET revision = (
    SELECT 'pg:' || encode(sha256(convert_to(p.content_hash || coalesce(
             string_agg(c.capability_id || ':' || c.content_hash, ',' ORDER BY c.capability_id COLLATE "C"),
             ''), 'UTF8')), 'hex')
      FROM cg_capabilities c WHERE c.provider_id = p.provider_id)
  WHERE p.provider_id = provider
  RETURNING revision
$$;
-- Rows written before the column existed.
SELECT cg_refresh_revision(provider_id) FROM cg_providers WHERE revision IS NULL;
