//! The database authority (SPEC §14 D15, D22): a provider is read whole through the adapter's
//! paged scans — its provider record, every capability record in ID order, and its edges: one
//! bulk relation scan (`scanRelations`) when the view offers it, else the eight relation streams
//! of every capability (`neighbors`), else none (the records' own relations are the edges, as
//! for files). A view whose source fields name the state the current snapshot was read from is
//! not read at all. The [`ReadCollector`] leads the read: it names each call, the JS layer makes
//! it (within the deadlines of `budgets.database`) and hands the page here as it arrives, so
//! JavaScript holds one page at a time; the collector judges each page against the page rules
//! and bounds (D17). The records are validated like any definitions; the scan order and every
//! relation list read are checked against them, so an inconsistent database never becomes a
//! snapshot.

use crate::config::budgets::Database;
use crate::definitions::{validate_provider, Roots, ValidatedProvider};
use crate::error::{project_component_error, Code, Component, GraphError, Phase, Result};
use crate::snapshot::{Kind, ProviderSnapshot};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Weak};

fn contract(reason: &str) -> GraphError {
    GraphError::new(Code::AdapterContractInvalid)
        .with_phase(Phase::Load)
        .detail("reason", reason)
}

/// The local ID a stream item names: a local ID string, or `{ providerId, capabilityId }` of
/// this provider (relations never cross providers).
fn endpoint<'v>(item: &'v Value, provider_id: &str) -> Option<&'v str> {
    match item {
        Value::String(id) => Some(id),
        Value::Object(m) if m.len() == 2 => {
            (m.get("providerId")?.as_str()? == provider_id).then_some(())?;
            m.get("capabilityId")?.as_str()
        }
        _ => None,
    }
}

/// Why a read failed when a deadline of `budgets.database` (the JS layer's), or a bound or page
/// rule ([`ReadCollector`]) stopped it (`{ failed: { reason } }`).
const STOPPED: [&str; 6] = [
    "database_call_timeout",
    "database_read_timeout",
    "database_too_many_records",
    "database_too_many_bytes",
    "invalid_store_page",
    "neighbor_stream_unbounded",
];

/// The view fields that describe the source; read when the view is opened and again after the
/// scans, they must not change in between.
const CONTEXT: [&str; 3] = ["provider", "sourceRevision", "knowledgeRootDir"];

/// The document root a read's source fields name (`knowledgeRootDir`); a relative one is taken
/// from the working directory of the moment the view was opened (`cwd`).
fn root_of(value: &Value) -> Option<PathBuf> {
    let dir = value
        .get("knowledgeRootDir")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)?;
    match value.get("cwd").and_then(Value::as_str) {
        Some(cwd) if dir.is_relative() => Some(PathBuf::from(cwd).join(dir)),
        _ => Some(dir),
    }
}

/// The state a view reads, as its source fields name it: the provider record, the source
/// revision and the document root (resolved). Two views with the same identity read the same
/// definitions (the adapter changes `sourceRevision` with every committed change), so a
/// snapshot read from one stands for the other.
fn identity_of(value: &Value) -> Value {
    let mut identity = Map::new();
    identity.insert(
        "provider".into(),
        value.get("provider").cloned().unwrap_or(Value::Null),
    );
    identity.insert(
        "sourceRevision".into(),
        value.get("sourceRevision").cloned().unwrap_or(Value::Null),
    );
    identity.insert(
        "knowledgeRoot".into(),
        root_of(value).map_or(Value::Null, |p| p.to_string_lossy().into_owned().into()),
    );
    Value::Object(identity)
}

/// Where a read's edges came from: the per-capability streams, one bulk relation scan, or
/// nowhere (the records' own relations).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Edges {
    Streams,
    Scan,
    Records,
}

impl Edges {
    fn as_str(self) -> &'static str {
        match self {
            Edges::Streams => "streams",
            Edges::Scan => "scan",
            Edges::Records => "records",
        }
    }
}

/// What the JS layer read from the adapter: `{ provider, sourceRevision, knowledgeRootDir?, cwd,
/// capabilities: [record…], edges, streams | relations, after }`, where the first three fields
/// were read when the view was opened (`cwd` is the working directory then) and `after` holds
/// them as read after the scans. `edges` says where the edges came from: `"streams"` (the
/// default) with `streams: { capabilityId: { kind: [capabilityId…] } }` (a stream left out was
/// read empty), `"scan"` with `relations: [{ from, kind, to }…]` as the bulk scan listed them, or
/// `"records"` (none read). Or `{ failed: { code, reason? } }` when the adapter threw or the read
/// was stopped, or `{ unchanged: identity }` when the view named the state the current snapshot
/// was read from and nothing was read.
pub struct DatabaseRead {
    value: Value,
    /// The provider record with the capability records moved in: the inline definition the
    /// records are validated as (built once, so the records are never copied).
    definition: Option<Value>,
    /// The records as read, kept with the snapshot when the view offers `changedSince`.
    kept: Option<Arc<KeptRecords>>,
    /// The bulk relation scan, when the read came as text: checked as it was kept, never built
    /// into values unless it differs from the records.
    relations: Option<Scanned>,
    /// The capability records as JSON text (a JSON array), when the read came as text and did
    /// not keep them: each is parsed only when it is validated.
    records: Option<String>,
    /// The vectors the view offered (`vectors()`), until its snapshot takes them.
    vectors: std::sync::Mutex<Option<crate::matching::semantic::file::Offered>>,
}

impl DatabaseRead {
    /// The read `value`, with the records to keep with its snapshot (see [`KeptRecords`]).
    pub fn with_kept(value: Value, kept: Option<Arc<KeptRecords>>) -> DatabaseRead {
        DatabaseRead {
            kept,
            ..DatabaseRead::new(value)
        }
    }

    /// The read as the collector gave it (JSON text), with the records to keep and the
    /// records and bulk relation scan as JSON arrays (`texts`); `None` when the text is not a
    /// JSON object. Records and relations, given apart or inside the text, stay text.
    pub fn from_text(
        text: &str,
        kept: Option<Arc<KeptRecords>>,
        texts: ReadTexts,
    ) -> Option<DatabaseRead> {
        let fields: BTreeMap<String, &RawValue> = serde_json::from_str(text).ok()?;
        let (mut records, mut relations) = texts;
        let mut value = Map::new();
        for (name, raw) in fields {
            match name.as_str() {
                "relations" => relations = Some(Scanned::Json(raw.get().to_owned())),
                "capabilities" => records = Some(raw.get().to_owned()),
                _ => {
                    value.insert(name, serde_json::from_str(raw.get()).ok()?);
                }
            }
        }
        // Read records are validated from their text: the definition holds none of them.
        let given = records.is_some() || kept.is_some();
        let mut read = DatabaseRead::with_kept(Value::Object(value), kept);
        if given {
            read.definition = match read.value.get("provider") {
                Some(Value::Object(provider)) => {
                    let mut definition = provider.clone();
                    definition.insert("capabilities".into(), Value::Array(Vec::new()));
                    Some(Value::Object(definition))
                }
                _ => None,
            };
        }
        read.relations = relations;
        read.records = records;
        Some(read)
    }

    /// Whether the read came as text (its records given apart, or kept).
    fn has_records_text(&self) -> bool {
        self.records.is_some() || self.kept.is_some()
    }

    /// The records as JSON text (a JSON array), when the read came as text and holds every
    /// record's (an incremental read takes those it did not read from its snapshot).
    fn records_text(&self) -> Option<&str> {
        match (&self.records, &self.kept) {
            (Some(text), _) => Some(text),
            (None, Some(kept)) => kept.whole_text(),
            (None, None) => None,
        }
    }

    /// The records to keep with this read's snapshot: a later read through `changedSince`
    /// reads only what changed and takes the rest from them.
    pub fn kept(&self) -> Option<Arc<KeptRecords>> {
        self.kept.clone()
    }

    pub fn new(mut value: Value) -> DatabaseRead {
        let records = value
            .as_object_mut()
            .and_then(|o| o.remove("capabilities"))
            .filter(Value::is_array);
        let definition = match (value.get("provider").and_then(Value::as_object), records) {
            (Some(provider), Some(records)) => {
                let mut definition: Map<String, Value> = provider.clone();
                definition.insert("capabilities".into(), records);
                Some(Value::Object(definition))
            }
            _ => None,
        };
        DatabaseRead {
            value,
            definition,
            kept: None,
            relations: None,
            records: None,
            vectors: std::sync::Mutex::new(None),
        }
    }

    /// This read with the vectors its view offered.
    pub fn with_vectors(self, vectors: Option<crate::matching::semantic::file::Offered>) -> Self {
        DatabaseRead {
            vectors: std::sync::Mutex::new(vectors),
            ..self
        }
    }

    /// The vectors the view offered, for the snapshot read (taken once).
    pub fn take_vectors(&self) -> Option<crate::matching::semantic::file::Offered> {
        self.vectors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// The adapter's failure, projected: a few codes pass through, the rest is
    /// `CG_CONFIG_INVALID` (phase `load`).
    fn failure(&self) -> Option<GraphError> {
        let failed = self.value.get("failed")?;
        if let Some(reason) = failed
            .get("reason")
            .and_then(Value::as_str)
            .and_then(|r| STOPPED.iter().find(|s| **s == r))
        {
            return Some(
                GraphError::new(Code::ConfigInvalid)
                    .with_phase(Phase::Load)
                    .detail("reason", *reason),
            );
        }
        let code = failed.get("code").and_then(Value::as_str);
        Some(project_component_error(
            Component::DatabaseAuthority,
            code,
            Phase::Load,
        ))
    }

    /// The provider's default document root, if the view named one; a relative one is taken
    /// from the working directory of the moment the view was opened.
    pub fn knowledge_root(&self) -> Option<PathBuf> {
        root_of(&self.value)
    }

    /// The state this read is of (see [`identity_of`]): what a later view must name for the
    /// snapshot read here to stand for it.
    pub fn identity(&self) -> Value {
        identity_of(&self.value)
    }

    /// The identity a view named when it was not read because the current snapshot was read
    /// from that state.
    pub fn unchanged(&self) -> Option<&Value> {
        self.value.get("unchanged")
    }

    /// The source's context must be the one the view was opened with.
    fn check_context(&self) -> Result<()> {
        let after = self.value.get("after");
        let changed = CONTEXT
            .iter()
            .any(|field| self.value.get(*field) != after.and_then(|a| a.get(*field)));
        if changed {
            return Err(GraphError::new(Code::RevisionMismatch)
                .with_phase(Phase::Load)
                .detail("reason", "source_context_changed"));
        }
        Ok(())
    }

    /// Validates the read for the configured provider `provider_id`.
    pub fn validate(&self, provider_id: &str, roots: &Roots) -> Result<ValidatedProvider> {
        self.validate_after(provider_id, roots, None)
    }

    /// The definition the read's records are validated as, once the read's own rules hold: the
    /// adapter did not fail, the source's context did not change, a source revision and a
    /// provider record were given.
    fn definition_checked(&self) -> Result<&Value> {
        if let Some(e) = self.failure() {
            return Err(e);
        }
        self.check_context()?;
        let v = &self.value;
        if let Some(rule) = v.get("violation").and_then(Value::as_str) {
            return Err(contract(rule));
        }
        if v.get("sourceRevision")
            .and_then(Value::as_str)
            .is_none_or(crate::json::is_blank)
        {
            return Err(contract("source_revision_required"));
        }
        v.get("provider")
            .and_then(Value::as_object)
            .ok_or_else(|| contract("provider_required"))?;
        self.definition
            .as_ref()
            .ok_or_else(|| contract("capabilities_required"))
    }

    /// [`DatabaseRead::validate`], where `current` is the provider's current snapshot. An
    /// incremental read of the records `current` kept takes each record it did not change from
    /// `current`, validated when `current` was built under the same document root: only the
    /// changed records are parsed and checked one by one, while the provider-wide rules (unique
    /// IDs, relation endpoints, acyclic relations, knowledge IDs) run over the whole candidate,
    /// so it is refused exactly as a full read of the same records would be.
    pub fn validate_after(
        &self,
        provider_id: &str,
        roots: &Roots,
        current: Option<Current>,
    ) -> Result<ValidatedProvider> {
        let definition = self.definition_checked()?;
        let v = &self.value;
        let validated = match (self.has_records_text(), self.reusable(current)) {
            (true, Some((kept, current))) => {
                let texts: Vec<&str> = (0..kept.records.len()).map(|i| kept.record(i)).collect();
                let reuse = |i: usize| {
                    if !kept.reused[i] {
                        return None;
                    }
                    current.find(&kept.records[i].id).map(|n| current.record(n))
                };
                crate::definitions::validate_provider_records(
                    definition,
                    &texts,
                    Some(provider_id),
                    roots,
                    &reuse,
                )?
            }
            (true, None) => {
                // The records an incremental read took unchanged have no text: only the snapshot
                // they were taken from can give them. Such a read starts only where that is the
                // current snapshot, under the same document root (see [`ReadCollector::begin`]),
                // and reloads of a provider do not overlap, so this is never another.
                let text = self
                    .records_text()
                    .ok_or_else(|| GraphError::new(Code::Internal).with_phase(Phase::Load))?;
                let records: Vec<&RawValue> =
                    serde_json::from_str(text).map_err(|_| contract("capabilities_required"))?;
                let ids: Vec<Option<Box<str>>> = records
                    .iter()
                    .map(|r| {
                        let head = serde_json::from_str::<RecordHead>(r.get()).ok()?;
                        head.capability_id.as_str().map(Box::from)
                    })
                    .collect();
                in_scan_order(&ids)?;
                let texts: Vec<&str> = records.iter().map(|r| r.get()).collect();
                crate::definitions::validate_provider_records(
                    definition,
                    &texts,
                    Some(provider_id),
                    roots,
                    &|_| None,
                )?
            }
            (false, _) => {
                let records = definition["capabilities"]
                    .as_array()
                    .map_or(&[][..], Vec::as_slice);
                let ids: Vec<Option<Box<str>>> = records
                    .iter()
                    .map(|r| r.get("capabilityId").and_then(Value::as_str).map(Box::from))
                    .collect();
                in_scan_order(&ids)?;
                validate_provider(definition, Some(provider_id), roots)?
            }
        };
        match v.get("edges").and_then(Value::as_str) {
            None | Some("streams") => self.check_streams(&validated, provider_id)?,
            Some("scan") if self.relations.is_some() => {
                let as_declared = match &self.relations {
                    Some(Scanned::Edges(edges)) => edges_as_declared(&validated, edges),
                    Some(Scanned::Json(text)) => {
                        relations_text_as_declared(&validated, provider_id, text)
                    }
                    None => false,
                };
                if !as_declared {
                    let id = |i: u32| validated.capabilities[i as usize].texts.capability_id();
                    let text = self.relations.as_ref().map(|s| s.json(id)).transpose()?;
                    let relations: Vec<Value> = serde_json::from_str(text.as_deref().unwrap_or(""))
                        .map_err(|_| contract("relations_required"))?;
                    check_relations(&validated, provider_id, &relations)?;
                }
            }
            Some("scan") => {
                let relations = v
                    .get("relations")
                    .and_then(Value::as_array)
                    .ok_or_else(|| contract("relations_required"))?;
                check_relations(&validated, provider_id, relations)?;
            }
            // The records' own relations are the edges; validation checked them.
            Some("records") => {}
            Some(_) => return Err(GraphError::new(Code::Internal)),
        }
        Ok(validated)
    }

    /// The records of an incremental read and the snapshot whose records its changes were
    /// applied to, when that is `current` and `current` was read under the same document root.
    /// The records come in strictly increasing ID order: the changes are checked for it as
    /// they are read, and the records they were applied to were checked when first read.
    fn reusable<'a>(
        &'a self,
        current: Option<Current<'a>>,
    ) -> Option<(&'a KeptRecords, &'a ProviderSnapshot)> {
        let kept = self.kept.as_deref()?;
        let current = current?;
        let base = kept.base.upgrade()?;
        let current_kept = current.kept?;
        let same_root = current_kept.identity["knowledgeRoot"] == self.identity()["knowledgeRoot"];
        (Arc::ptr_eq(&base, &current_kept.records)
            && same_root
            && kept.reused.len() == kept.records.len())
        .then_some((kept, current.snapshot))
    }

    /// Every relation stream the adapter serves must list exactly the edges the records declare
    /// (forward) or imply (inverse), in ID order.
    /// An incremental read lists `streamsOf`: the capabilities whose streams it read (those
    /// the change touched); the others' were checked when first read.
    fn check_streams(&self, v: &ValidatedProvider, provider_id: &str) -> Result<()> {
        let streams = self
            .value
            .get("streams")
            .and_then(Value::as_object)
            .ok_or_else(|| contract("streams_required"))?;
        let only = match self.value.get("streamsOf") {
            None => None,
            Some(Value::Array(ids)) => Some(ids.iter().filter_map(Value::as_str).collect()),
            Some(_) => return Err(GraphError::new(Code::Internal)),
        };
        check_stream_map(v, provider_id, streams, only.as_ref())
    }
}

mod collector;
mod edges;
mod incremental;
mod kept;
mod scan;
#[cfg(test)]
mod tests;
mod vectors;

pub use collector::*;
use edges::*;
pub use incremental::*;
pub use kept::*;
pub use scan::*;
pub use vectors::MAX_VECTOR_IDS;
