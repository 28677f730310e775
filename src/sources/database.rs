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
    /// The bulk relation scan's items as JSON text, when the read came as text: checked as
    /// they are read, never built into values unless they differ from the records.
    relations: Option<String>,
    /// The capability records as JSON text (a JSON array), when the read came as text and did
    /// not keep them: each is parsed only when it is validated.
    records: Option<String>,
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
                "relations" => relations = Some(raw.get().to_owned()),
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

    /// The records as JSON text, when the read came as text.
    fn records_text(&self) -> Option<&str> {
        self.records
            .as_deref()
            .or_else(|| self.kept.as_ref().map(|k| k.text.as_str()))
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
        }
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
        current: Option<&ProviderSnapshot>,
    ) -> Result<ValidatedProvider> {
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
        let definition = self
            .definition
            .as_ref()
            .ok_or_else(|| contract("capabilities_required"))?;
        let validated = match (self.records_text(), self.reusable(current)) {
            (Some(_), Some((kept, current))) => {
                let texts: Vec<&str> = (0..kept.records.len()).map(|i| kept.record(i)).collect();
                let reuse = |i: usize| {
                    if !kept.reused[i] {
                        return None;
                    }
                    current.find(&kept.records[i].2).map(|n| current.record(n))
                };
                crate::definitions::validate_provider_records(
                    definition,
                    &texts,
                    Some(provider_id),
                    roots,
                    &reuse,
                )?
            }
            (Some(text), None) => {
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
            (None, _) => {
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
                let text = self.relations.as_deref().unwrap_or_default();
                if !relations_text_as_declared(&validated, provider_id, text) {
                    let relations: Vec<Value> =
                        serde_json::from_str(text).map_err(|_| contract("relations_required"))?;
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
        current: Option<&'a ProviderSnapshot>,
    ) -> Option<(&'a KeptRecords, &'a ProviderSnapshot)> {
        let kept = self.kept.as_deref()?;
        let current = current?;
        let base = kept.base.upgrade()?;
        let current_kept = current
            .kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()?;
        let same_root = current.source.as_ref().map(|s| &s["knowledgeRoot"])
            == Some(&self.identity()["knowledgeRoot"]);
        (Arc::ptr_eq(&base, &current_kept) && same_root && kept.reused.len() == kept.records.len())
            .then_some((kept, current))
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

/// Scans come in strictly increasing ID order, each record once.
fn in_scan_order(ids: &[Option<Box<str>>]) -> Result<()> {
    if ids
        .windows(2)
        .any(|w| matches!(w, [Some(a), Some(b)] if a >= b))
    {
        return Err(contract("scan_order_or_duplicate"));
    }
    Ok(())
}

/// The streams `{ capabilityId: { kind: [endpoint…] } }` (left-out ones read empty) must list
/// exactly what the records declare or imply, capability by capability in ID order and kind by
/// kind in the order of [`Kind::ALL`]; the first that does not is the error.
fn check_stream_map(
    v: &ValidatedProvider,
    provider_id: &str,
    streams: &Map<String, Value>,
    only: Option<&HashSet<&str>>,
) -> Result<()> {
    let wanted: Vec<bool> = v
        .capabilities
        .iter()
        .map(|c| only.is_none_or(|only| only.contains(c.texts.capability_id())))
        .collect();
    let expected = expected_lists(v, &wanted);
    for (i, c) in v.capabilities.iter().enumerate() {
        if !wanted[i] {
            continue;
        }
        let kinds = streams.get(c.texts.capability_id());
        for kind in Kind::ALL {
            // Streams read empty are left out (`ReadCollector`); anything else present must
            // be the list.
            let listed = match kinds.and_then(|k| k.get(kind.as_str())) {
                None if kinds.is_none_or(Value::is_object) => Some(&[][..]),
                listed => listed.and_then(Value::as_array).map(Vec::as_slice),
            };
            let mismatch = || {
                contract(&format!("{}_stream_mismatch", kind.as_str()))
                    .detail("capabilityId", c.texts.capability_id())
            };
            let listed = listed.map(|l| {
                l.iter()
                    .map(|item| endpoint(item, provider_id))
                    .collect::<Option<Vec<&str>>>()
            });
            let Some(listed) = listed else {
                return Err(mismatch());
            };
            let Some(listed) = listed else {
                return Err(contract("neighbor_identity_invalid")
                    .detail("capabilityId", c.texts.capability_id()));
            };
            let want = &expected[i][kind as usize];
            let same = listed.len() == want.len()
                && listed
                    .iter()
                    .zip(want)
                    .all(|(&got, &w)| got == v.capabilities[w as usize].texts.capability_id());
            if !same {
                return Err(mismatch());
            }
        }
    }
    Ok(())
}

/// The eight relation lists of each `wanted` capability (the others' stay empty), as indices
/// in ID order: forward from the records, inverse derived. An incremental read wants only the
/// few its changes touched.
fn expected_lists(v: &ValidatedProvider, wanted: &[bool]) -> Vec<[Vec<u32>; 8]> {
    let mut expected: Vec<[Vec<u32>; 8]> = vec![Default::default(); v.capabilities.len()];
    for (i, edges) in v.edges.iter().enumerate() {
        for (r, targets) in edges.iter().enumerate() {
            let (forward, inverse) = (2 * r, 2 * r + 1);
            if wanted[i] {
                expected[i][forward] = targets.clone();
            }
            for &t in targets {
                if wanted[t as usize] {
                    expected[t as usize][inverse].push(i as u32);
                }
            }
        }
    }
    expected
}

/// Whether the bulk relation scan is exactly the sequence the records declare and imply: one
/// pass, nothing built (the scan of a large provider holds a million items). When it is not,
/// [`check_relations`] takes the items apart to name the difference.
fn relations_as_declared(v: &ValidatedProvider, provider_id: &str, items: &[Value]) -> bool {
    let id = |i: usize| v.capabilities[i].texts.capability_id();
    let mut items = items.iter();
    for (i, kinds) in expected_lists(v, &vec![true; v.capabilities.len()])
        .iter()
        .enumerate()
    {
        for (k, targets) in kinds.iter().enumerate() {
            for &t in targets {
                let Some(m) = items.next().and_then(Value::as_object) else {
                    return false;
                };
                let field = |name| m.get(name).and_then(|e| endpoint(e, provider_id));
                let same = m.len() == 3
                    && m.get("kind").and_then(Value::as_str) == Some(Kind::ALL[k].as_str())
                    && field("from") == Some(id(i))
                    && field("to") == Some(id(t as usize));
                if !same {
                    return false;
                }
            }
        }
    }
    items.next().is_none()
}

/// An endpoint of a bulk scan item as read: a local ID, or `{ providerId, capabilityId }`
/// (exactly those two, strings).
enum EndpointItem<'a> {
    Local(std::borrow::Cow<'a, str>),
    Qualified(std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>),
}

impl EndpointItem<'_> {
    fn local(&self, provider_id: &str) -> Option<&str> {
        match self {
            EndpointItem::Local(id) => Some(id),
            EndpointItem::Qualified(p, id) => (p == provider_id).then_some(&**id),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for EndpointItem<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};
        use std::borrow::Cow;
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = EndpointItem<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an endpoint")
            }
            fn visit_borrowed_str<E: Error>(
                self,
                s: &'de str,
            ) -> std::result::Result<Self::Value, E> {
                Ok(EndpointItem::Local(Cow::Borrowed(s)))
            }
            fn visit_str<E: Error>(self, s: &str) -> std::result::Result<Self::Value, E> {
                Ok(EndpointItem::Local(Cow::Owned(s.to_owned())))
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let (mut provider, mut capability) = (None, None);
                while let Some(key) = m.next_key::<Cow<'a, str>>()? {
                    let slot = match &*key {
                        "providerId" => &mut provider,
                        "capabilityId" => &mut capability,
                        _ => return Err(A::Error::custom("unknown field")),
                    };
                    if slot.replace(m.next_value::<Cow<'a, str>>()?).is_some() {
                        return Err(A::Error::custom("duplicate field"));
                    }
                }
                match (provider, capability) {
                    (Some(p), Some(c)) => Ok(EndpointItem::Qualified(p, c)),
                    _ => Err(A::Error::custom("missing field")),
                }
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A bulk scan item as read: exactly `from`, `kind` and `to`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RelationItem<'a> {
    #[serde(borrow)]
    from: EndpointItem<'a>,
    #[serde(borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    to: EndpointItem<'a>,
}

/// [`relations_as_declared`] of the bulk scan as JSON text, read item by item as it is
/// compared: nothing is built, and the first item that differs (or is not a plain `{ from,
/// kind, to }`) ends the pass with `false`.
fn relations_text_as_declared(v: &ValidatedProvider, provider_id: &str, text: &str) -> bool {
    use serde::de::{SeqAccess, Visitor};
    struct Expect<'v> {
        v: &'v ValidatedProvider,
        provider_id: &'v str,
    }
    impl<'de> Visitor<'de> for Expect<'_> {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("the relations")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<bool, A::Error> {
            let id = |i: usize| self.v.capabilities[i].texts.capability_id();
            for (i, kinds) in expected_lists(self.v, &vec![true; self.v.capabilities.len()])
                .iter()
                .enumerate()
            {
                for (k, targets) in kinds.iter().enumerate() {
                    for &t in targets {
                        let Some(item) = seq.next_element::<RelationItem>()? else {
                            return Ok(false);
                        };
                        let same = item.kind == Kind::ALL[k].as_str()
                            && item.from.local(self.provider_id) == Some(id(i))
                            && item.to.local(self.provider_id) == Some(id(t as usize));
                        if !same {
                            return Ok(false);
                        }
                    }
                }
            }
            Ok(seq.next_element::<serde::de::IgnoredAny>()?.is_none())
        }
    }
    use serde::Deserializer;
    let mut d = serde_json::Deserializer::from_str(text);
    let same = (&mut d).deserialize_seq(Expect { v, provider_id });
    matches!(same, Ok(true)) && d.end().is_ok()
}

/// The bulk relation scan must list exactly what the eight streams of every capability would,
/// in one sequence: by capability in ID order, then by kind in the order of [`Kind::ALL`], then
/// by endpoint in ID order. Its items are taken as the streams they form (by capability and
/// kind) and checked as streams are, so a lie the streams could tell fails as it would there;
/// then an item that forms no stream of a record (`neighbor_identity_invalid`, or
/// `<kind>_stream_mismatch` for an edge from a capability not in the provider) and streams out
/// of sequence (`<kind>_stream_mismatch` of the one that comes too late) fail.
fn check_relations(v: &ValidatedProvider, provider_id: &str, items: &[Value]) -> Result<()> {
    if relations_as_declared(v, provider_id, items) {
        return Ok(());
    }
    let id = |i: usize| v.capabilities[i].texts.capability_id();
    let index: std::collections::HashMap<&str, usize> =
        (0..v.capabilities.len()).map(|i| (id(i), i)).collect();
    let mismatch = |k: usize| contract(&format!("{}_stream_mismatch", Kind::ALL[k].as_str()));
    let mut streams = Map::new();
    // The (capability, kind) of each item that forms a stream, in the order listed.
    let mut sequence: Vec<(usize, usize)> = Vec::with_capacity(items.len());
    let mut stray = None;
    for item in items {
        // Exactly `from`, `kind` and `to`; `from` names the item's capability either way.
        let fields = item.as_object().filter(|m| m.len() == 3);
        let field = |name: &str| fields.and_then(|m| m.get(name));
        let from = item.get("from").and_then(|f| endpoint(f, provider_id));
        let record = from.and_then(|f| index.get(f).copied());
        let kind = field("kind")
            .and_then(Value::as_str)
            .and_then(|k| Kind::ALL.iter().position(|kind| kind.as_str() == k));
        match (record, kind, field("to")) {
            (Some(i), Some(k), Some(to)) => {
                sequence.push((i, k));
                let kinds = streams
                    .entry(id(i))
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(list) = kinds
                    .as_object_mut()
                    .map(|m| m.entry(Kind::ALL[k].as_str()).or_insert_with(|| json!([])))
                    .and_then(Value::as_array_mut)
                {
                    list.push(to.clone());
                }
            }
            _ if stray.is_some() => {}
            // An edge of a capability this provider does not have.
            (None, Some(k), Some(to)) if from.is_some() && endpoint(to, provider_id).is_some() => {
                stray = Some(mismatch(k));
            }
            _ => {
                let error = contract("neighbor_identity_invalid");
                stray = Some(match record {
                    Some(i) => error.detail("capabilityId", id(i)),
                    None => error,
                });
            }
        }
    }
    check_stream_map(v, provider_id, &streams, None)?;
    if let Some(error) = stray {
        return Err(error);
    }
    match sequence.windows(2).find(|w| w[1] < w[0]) {
        Some(w) => Err(mismatch(w[1].1).detail("capabilityId", id(w[1].0))),
        None => Ok(()),
    }
}

/// The capability records of a read as they came (JSON text), kept with its snapshot when the
/// view offers `changedSince`: an incremental read takes every record it does not read again
/// from here, so the candidate it validates is exactly the one a full read would give.
#[derive(Debug, Default)]
pub struct KeptRecords {
    /// The records' JSON, comma-separated.
    text: String,
    /// Each record in ID order: its span of `text`, its capability ID and the relations it
    /// declares.
    records: Vec<(usize, usize, Box<str>, u32)>,
    /// Of records an incremental read gave: the records its changes were applied to (not kept
    /// alive by these), and by position which records were taken from them unchanged (empty
    /// when the read was whole). The snapshot built from those holds them validated: they are
    /// taken from it instead of being parsed and checked one by one again.
    base: Weak<KeptRecords>,
    reused: Vec<bool>,
}

impl KeptRecords {
    /// Heap bytes held.
    pub fn bytes(&self) -> usize {
        self.text.capacity()
            + self.reused.capacity()
            + self.records.capacity() * std::mem::size_of::<(usize, usize, Box<str>, u32)>()
            + self.records.iter().map(|r| r.2.len()).sum::<usize>()
    }

    fn record(&self, i: usize) -> &str {
        let (start, len, _, _) = self.records[i];
        &self.text[start..start + len]
    }
}

/// What the JS layer gathered for one open or reload: the reads as JSON by provider ID (`None`
/// when no database authority was read), and the records to keep with each snapshot.
#[derive(Debug, Default)]
pub struct DatabaseReads {
    pub json: Option<String>,
    pub kept: BTreeMap<String, Arc<KeptRecords>>,
    /// By provider ID, the records (unless kept) and the bulk relation scan, as JSON arrays.
    pub texts: BTreeMap<String, (Option<String>, Option<String>)>,
}

impl DatabaseReads {
    /// Reads given as JSON only (nothing kept).
    pub fn of_json(json: Option<&str>) -> DatabaseReads {
        DatabaseReads {
            json: json.map(str::to_owned),
            ..DatabaseReads::default()
        }
    }
}

/// A change a view's `changedSince` lists: `{ capabilityId, record }` (changed or added) or
/// `{ capabilityId, removed: true }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangeItem<'a> {
    #[serde(rename = "capabilityId")]
    capability_id: String,
    #[serde(borrow, default)]
    record: Option<&'a RawValue>,
    #[serde(default)]
    removed: Option<bool>,
}

/// The changes of an incremental read so far, and the records they apply to.
struct Changes {
    base: Arc<KeptRecords>,
    /// The source revision the changes are asked since.
    since: String,
    /// By capability ID in strictly increasing order: its record now, or `None` (removed).
    items: Vec<(Box<str>, Option<String>)>,
}

/// The local IDs of the relations a record declares (string entries, or `{ capabilityId }`).
fn targets(head: &RecordHead) -> Vec<String> {
    [head.parents, head.specializes, head.related, head.requires]
        .into_iter()
        .flatten()
        .filter_map(|raw| serde_json::from_str::<Vec<Value>>(raw.get()).ok())
        .flatten()
        .filter_map(|t| match t {
            Value::String(id) => Some(id),
            Value::Object(mut m) => match m.remove("capabilityId") {
                Some(Value::String(id)) => Some(id),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The items a page is asked for (`limit`); a page holding more breaks the page rules.
pub const PAGE_LIMIT: usize = 100;
/// The items a page of the capability records or of the changes is asked for: the byte
/// budget of a page (`maxBytes`) is what bounds it, so a scan takes few round trips.
pub const SCAN_PAGE_LIMIT: usize = 1_000;
/// The items a page of the bulk relation scan is asked for: its items are small.
pub const RELATION_PAGE_LIMIT: usize = 5_000;
/// The bytes of JSON a scan page is asked for at most (`maxBytes`).
pub const PAGE_MAX_BYTES: u64 = 262_144;

/// The reads of one open or reload, gathered page by page as the JS layer receives them from
/// each database authority's adapter: the JS layer never holds more than one page. The
/// collector leads each read: it names the adapter call to make next and judges every page
/// against the page rules and the bounds of `budgets.database` (records, bytes of JSON); a read
/// that breaks one is recorded as failed at once and ends. The pages are kept as JSON text
/// (records, the bulk relation scan or the non-empty relation streams), which becomes the
/// [`DatabaseRead`] of each provider.
pub struct ReadCollector {
    max_records: u64,
    max_bytes: u64,
    /// By provider ID, the state its current snapshot was read from (see [`identity_of`]): a
    /// view naming it again is not read.
    known: BTreeMap<String, Value>,
    /// By provider ID, the records its current snapshot was read from, when it kept them: a
    /// view offering `changedSince` is then asked what changed since, and only that is read.
    records: BTreeMap<String, Arc<KeptRecords>>,
    /// (provider ID, the read as JSON) of each provider read so far.
    done: Vec<(String, String)>,
    /// The records to keep with each snapshot, by provider ID.
    kept: BTreeMap<String, Arc<KeptRecords>>,
    /// By provider ID, the records (unless kept) and the bulk relation scan of each read, as
    /// JSON arrays.
    texts: BTreeMap<String, ReadTexts>,
    current: Option<Pending>,
}

/// A read's records (`None` when they were kept) and bulk relation scan, as JSON arrays.
type ReadTexts = (Option<String>, Option<String>);

impl Default for ReadCollector {
    fn default() -> Self {
        ReadCollector::new(&Database::default())
    }
}

/// What the JS layer does next for the provider being read.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// Calls the view: `{ call, args }` (JSON), the method and its arguments.
    Ask(String),
    /// Every list was read: the read ends.
    Done,
    /// The view names the state the current snapshot was read from: nothing is read, and the
    /// read is over (recorded as unchanged).
    Unchanged,
    /// A bound or page rule stopped the read; its failure is recorded.
    Stopped,
}

/// A list of the provider being read: its capability records, its bulk relation scan, or the
/// `kind` (index into [`Kind::ALL`]) relation stream of record `index`, or the changes since
/// the source revision the current snapshot was read from (`changedSince`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum List {
    Scan,
    Changes,
    Relations,
    Stream { index: usize, kind: usize },
}

impl List {
    /// The items a page of this list is asked for, and may hold.
    fn limit(self) -> usize {
        match self {
            List::Relations => RELATION_PAGE_LIMIT,
            List::Scan | List::Changes => SCAN_PAGE_LIMIT,
            List::Stream { .. } => PAGE_LIMIT,
        }
    }
}

/// A provider being read.
struct Pending {
    provider_id: String,
    /// The view's source fields and working directory at open, as a JSON object.
    context: String,
    /// The capability records so far, comma-separated JSON.
    records: String,
    /// Each record's capability ID, if a string: the records whose streams are read.
    ids: Vec<Option<Box<str>>>,
    /// The relations the records declare (forward ones; each implies one inverse edge).
    declared: u64,
    /// Where the edges come from, by what the view offers.
    edges: Edges,
    /// The items of the bulk relation scan so far, comma-separated JSON.
    relations: String,
    /// `"capabilityId":{kind:[…]}` entries, comma-separated, for capabilities with a non-empty
    /// stream.
    streams: String,
    /// The streams of the capability being read (its index, non-empty kinds and their items).
    node: Option<(u32, Vec<Stream>)>,
    /// Bytes of JSON read so far: the provider record, every record and stream item.
    bytes: u64,
    /// The list being read; `None` once every list was read.
    list: Option<List>,
    /// Items of that list so far.
    listed: usize,
    /// The cursor to ask that list with next, and every cursor it gave (a cursor seen before
    /// would read the same pages again, without end).
    cursor: Option<String>,
    cursors: HashSet<String>,
    /// Whether the view offers `changedSince`: the records are then kept with the snapshot,
    /// each one's span of `records` and declared relations in `spans`.
    keep: bool,
    spans: Vec<(usize, usize, u32)>,
    /// Whether the view offers `neighbors`: an incremental read checks the streams of the
    /// capabilities the change touched.
    offers_streams: bool,
    /// The changes of an incremental read, until they are applied to the records.
    changes: Option<Changes>,
    /// Of an incremental read, which records' streams are read: those the change touched.
    only: Option<Vec<bool>>,
    /// The contract rule a change list broke, if any: the read ends there and is refused.
    violation: Option<&'static str>,
    /// Of an incremental read, the records its changes were applied to, and which records were
    /// taken from them unchanged (see [`KeptRecords::reused`]).
    base: Option<Weak<KeptRecords>>,
    reused: Vec<bool>,
}

/// A relation stream read so far: its kind and items.
type Stream = (String, Vec<Value>);

/// A page as the JS layer hands it over: the page's `items` and `nextCursor`, when it had them.
#[derive(Deserialize)]
struct WirePage<'a> {
    #[serde(borrow, default)]
    items: Option<&'a RawValue>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<Value>,
    #[serde(default)]
    unknown: Option<Value>,
}

/// A record's capability ID and relation fields, read without building the rest of it.
#[derive(Deserialize)]
struct RecordHead<'a> {
    #[serde(rename = "capabilityId")]
    capability_id: Value,
    #[serde(borrow, default)]
    parents: Option<&'a RawValue>,
    #[serde(borrow, default)]
    specializes: Option<&'a RawValue>,
    #[serde(borrow, default)]
    related: Option<&'a RawValue>,
    #[serde(borrow, default)]
    requires: Option<&'a RawValue>,
}

impl RecordHead<'_> {
    /// The relations the record declares: the entries of its relation arrays (validation
    /// judges them later).
    fn declared(&self) -> u64 {
        [self.parents, self.specializes, self.related, self.requires]
            .into_iter()
            .flatten()
            .map(|raw| {
                serde_json::from_str::<Vec<serde::de::IgnoredAny>>(raw.get())
                    .map_or(0, |l| l.len() as u64)
            })
            .sum()
    }
}

fn internal<E>(_: E) -> GraphError {
    GraphError::new(Code::Internal)
}

fn text(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(internal)
}

/// Appends `item` to the comma-separated JSON `list`.
fn join(list: &mut String, item: &str) {
    if !list.is_empty() {
        list.push(',');
    }
    list.push_str(item);
}

impl Pending {
    fn flush_node(&mut self) -> Result<()> {
        let Some((index, kinds)) = self.node.take() else {
            return Ok(());
        };
        let Some(Some(id)) = self.ids.get(index as usize) else {
            return Err(GraphError::new(Code::Internal));
        };
        if kinds.is_empty() {
            return Ok(());
        }
        let map: Map<String, Value> = kinds
            .into_iter()
            .map(|(k, v)| (k, Value::Array(v)))
            .collect();
        if !self.streams.is_empty() {
            self.streams.push(',');
        }
        self.streams.push_str(&text(&id.as_ref())?);
        self.streams.push(':');
        self.streams.push_str(&text(&map)?);
        Ok(())
    }

    /// Keeps a page of capability records.
    fn keep_records(&mut self, page: &[&RawValue]) {
        for record in page {
            let head = serde_json::from_str::<RecordHead>(record.get()).ok();
            let declared = head.as_ref().map_or(0, RecordHead::declared);
            let id = head.and_then(|r| r.capability_id.as_str().map(Box::from));
            self.keep_record(record.get(), id, declared);
        }
    }

    fn keep_record(&mut self, record: &str, id: Option<Box<str>>, declared: u64) {
        self.declared += declared;
        self.ids.push(id);
        join(&mut self.records, record);
        if self.keep {
            let start = self.records.len() - record.len();
            let declared = u32::try_from(declared).unwrap_or(u32::MAX);
            self.spans.push((start, record.len(), declared));
        }
    }

    /// Keeps a page of the changes: each item once, in strictly increasing ID order, a record
    /// of the ID it is listed under or a removal. Answers the rule an item broke.
    fn keep_changes(&mut self, page: &[&RawValue]) -> std::result::Result<(), &'static str> {
        let changes = self.changes.as_mut().ok_or("change_list_invalid")?;
        for item in page {
            let item = serde_json::from_str::<ChangeItem>(item.get())
                .map_err(|_| "change_item_invalid")?;
            let record = match (item.record, item.removed) {
                (Some(record), None) => {
                    let head = serde_json::from_str::<RecordHead>(record.get()).ok();
                    if head.as_ref().and_then(|h| h.capability_id.as_str())
                        != Some(item.capability_id.as_str())
                    {
                        return Err("change_item_invalid");
                    }
                    Some(record.get().to_owned())
                }
                (None, Some(true)) => None,
                _ => return Err("change_item_invalid"),
            };
            if changes
                .items
                .last()
                .is_some_and(|(last, _)| **last >= *item.capability_id)
            {
                return Err("change_order_or_duplicate");
            }
            changes.items.push((item.capability_id.into(), record));
        }
        Ok(())
    }

    /// Applies the changes to the records they were asked against: the records read now are
    /// those a full read would give, in ID order. The capabilities a change touched (a changed
    /// or added one, and those its relations, old or new, name) have their streams read, when
    /// the view has them.
    fn apply_changes(&mut self) -> Result<()> {
        let Some(changes) = self.changes.take() else {
            return Err(GraphError::new(Code::Internal));
        };
        let base = &changes.base;
        let mut touched: HashSet<String> = HashSet::new();
        let mut touch = |record: &str, own: bool| {
            if let Ok(head) = serde_json::from_str::<RecordHead>(record) {
                touched.extend(targets(&head));
                if own {
                    touched.extend(head.capability_id.as_str().map(str::to_owned));
                }
            }
        };
        let mut b = 0;
        let keep_base = |p: &mut Pending, b: usize| {
            let (_, _, id, declared) = &base.records[b];
            p.keep_record(base.record(b), Some(id.clone()), u64::from(*declared));
            p.reused.push(true);
        };
        for (id, record) in &changes.items {
            while b < base.records.len() && base.records[b].2 < *id {
                keep_base(self, b);
                b += 1;
            }
            if b < base.records.len() && base.records[b].2 == *id {
                touch(base.record(b), false);
                b += 1;
            }
            if let Some(record) = record {
                touch(record, true);
                let declared =
                    serde_json::from_str::<RecordHead>(record).map_or(0, |h| h.declared());
                self.keep_record(record, Some(id.clone()), declared);
                self.reused.push(false);
            }
        }
        while b < base.records.len() {
            keep_base(self, b);
            b += 1;
        }
        self.base = Some(Arc::downgrade(base));
        if self.offers_streams {
            self.edges = Edges::Streams;
            let mask = self
                .ids
                .iter()
                .map(|id| id.as_deref().is_some_and(|id| touched.contains(id)))
                .collect();
            self.only = Some(mask);
        }
        Ok(())
    }

    /// Keeps a page of the bulk relation scan, as it came.
    fn keep_relations(&mut self, page: &[&RawValue]) {
        for item in page {
            join(&mut self.relations, item.get());
        }
    }

    /// Keeps a page of the `kind` stream of record `index`; records are read in order, each
    /// one's kinds in order.
    fn keep_stream(&mut self, index: usize, kind: &str, page: &[&RawValue]) -> Result<()> {
        let index = u32::try_from(index).map_err(internal)?;
        if self.node.as_ref().is_some_and(|(i, _)| *i != index) {
            self.flush_node()?;
        }
        let (_, kinds) = self.node.get_or_insert_with(|| (index, Vec::new()));
        if page.is_empty() {
            return Ok(());
        }
        let items = page
            .iter()
            .map(|item| serde_json::from_str(item.get()))
            .collect::<serde_json::Result<Vec<Value>>>()
            .map_err(internal)?;
        match kinds.last_mut() {
            Some((k, listed)) if k == kind => listed.extend(items),
            _ => kinds.push((kind.to_owned(), items)),
        }
        Ok(())
    }

    /// Moves on to the next list: after the records, the bulk relation scan or the first
    /// stream of the first record with a string ID (by what the view offers); after a stream,
    /// the next one, of this record or the next with a string ID; none after the last.
    fn advance(&mut self) {
        self.listed = 0;
        self.cursor = None;
        self.cursors.clear();
        let from = match self.list {
            Some(List::Stream { index, kind }) if kind + 1 < Kind::ALL.len() => {
                self.list = Some(List::Stream {
                    index,
                    kind: kind + 1,
                });
                return;
            }
            Some(List::Stream { index, .. }) => index + 1,
            Some(List::Scan | List::Changes) if self.edges == Edges::Streams => 0,
            Some(List::Scan | List::Changes) if self.edges == Edges::Scan => {
                self.list = Some(List::Relations);
                return;
            }
            Some(List::Scan | List::Changes | List::Relations) => {
                self.list = None;
                return;
            }
            None => return,
        };
        let only = self.only.as_deref();
        self.list = (from..self.ids.len())
            .find(|&i| self.ids[i].is_some() && only.is_none_or(|m| m[i]))
            .map(|index| List::Stream { index, kind: 0 });
    }

    /// The call that reads the next page of the current list.
    fn next(&self) -> Result<Next> {
        let Some(list) = self.list else {
            return Ok(Next::Done);
        };
        let mut page = Map::new();
        page.insert("limit".into(), list.limit().into());
        let (call, mut args) = match list {
            List::Scan => {
                page.insert("maxBytes".into(), PAGE_MAX_BYTES.into());
                ("scanCapabilities", Vec::new())
            }
            List::Relations => {
                page.insert("maxBytes".into(), PAGE_MAX_BYTES.into());
                ("scanRelations", Vec::new())
            }
            List::Changes => {
                let since = self.changes.as_ref().map(|c| c.since.as_str());
                let since = since.ok_or_else(|| GraphError::new(Code::Internal))?;
                page.insert("maxBytes".into(), PAGE_MAX_BYTES.into());
                ("changedSince", vec![Value::from(since)])
            }
            List::Stream { index, kind } => {
                let Some(Some(id)) = self.ids.get(index) else {
                    return Err(GraphError::new(Code::Internal));
                };
                let kind = Kind::ALL[kind].as_str();
                (
                    "neighbors",
                    vec![Value::from(id.as_ref()), Value::from(kind)],
                )
            }
        };
        if let Some(cursor) = &self.cursor {
            page.insert("cursor".into(), cursor.as_str().into());
        }
        args.push(Value::Object(page));
        Ok(Next::Ask(text(
            &serde_json::json!({ "call": call, "args": args }),
        )?))
    }
}

impl ReadCollector {
    /// A collector for reads within `bounds` (`budgets.database`).
    pub fn new(bounds: &Database) -> ReadCollector {
        ReadCollector {
            max_records: bounds.max_records,
            max_bytes: bounds.max_bytes,
            known: BTreeMap::new(),
            records: BTreeMap::new(),
            done: Vec::new(),
            kept: BTreeMap::new(),
            texts: BTreeMap::new(),
            current: None,
        }
    }

    /// A collector for reads within `budgets` (JSON with `maxRecords` and `maxBytes`, as
    /// `database_sources` gives them).
    pub fn with_budgets(budgets: &str) -> Result<ReadCollector> {
        let budgets: Value = serde_json::from_str(budgets).map_err(internal)?;
        let field = |name: &str| budgets.get(name).and_then(Value::as_u64);
        match (field("maxRecords"), field("maxBytes")) {
            (Some(max_records), Some(max_bytes)) => Ok(ReadCollector::new(&Database {
                max_records,
                max_bytes,
                ..Database::default()
            })),
            _ => Err(GraphError::new(Code::Internal)),
        }
    }

    /// The collector of a reload: `known` holds, by provider ID, the state each current
    /// snapshot was read from ([`DatabaseRead::identity`]); a view that names it again is not
    /// read ([`Next::Unchanged`]).
    pub fn knowing(mut self, known: BTreeMap<String, Value>) -> ReadCollector {
        self.known = known;
        self
    }

    /// The collector of a reload that also knows, by provider ID, the records each current
    /// snapshot was read from (kept when its view offered `changedSince`).
    pub fn knowing_records(mut self, records: BTreeMap<String, Arc<KeptRecords>>) -> ReadCollector {
        self.records = records;
        self
    }

    fn pending(&mut self) -> Result<&mut Pending> {
        self.current
            .as_mut()
            .ok_or_else(|| GraphError::new(Code::Internal))
    }

    /// A read of `provider_id` starts; `context` is the view's source fields and the working
    /// directory, as a JSON object, and `offers` the names of the view's relation calls it has
    /// (`scanRelations`, `neighbors`; JSON array). Answers the first call to make, or that the
    /// view names the state the current snapshot was read from: then nothing is read.
    ///
    /// The edges are read through `scanRelations` when the view has it, else through
    /// `neighbors`, else not at all (the records' relations are the edges). A view offering
    /// `changedSince` whose provider's current snapshot kept its records is asked first what
    /// changed since the revision that snapshot was read from.
    pub fn begin(&mut self, provider_id: &str, context: &str, offers: &str) -> Result<Next> {
        let offers: Vec<String> = serde_json::from_str(offers).map_err(internal)?;
        let offers = |call: &str| offers.iter().any(|o| o == call);
        let keep = offers("changedSince");
        let edges = if offers("scanRelations") {
            Edges::Scan
        } else if offers("neighbors") {
            Edges::Streams
        } else {
            Edges::Records
        };
        if let Some(known) = self.known.get(provider_id) {
            let opened: Value = serde_json::from_str(context).map_err(internal)?;
            let identity = identity_of(&opened);
            if identity == *known {
                self.current = None;
                let read = text(&serde_json::json!({ "unchanged": identity }))?;
                self.done.push((provider_id.to_owned(), read));
                return Ok(Next::Unchanged);
            }
        }
        // The provider record counts against the bytes of the read, as the JSON it came as.
        let fields: BTreeMap<String, &RawValue> =
            serde_json::from_str(context).map_err(internal)?;
        let bytes = fields.get("provider").map_or(0, |p| p.get().len() as u64);
        let since = self
            .known
            .get(provider_id)
            .and_then(|k| k.get("sourceRevision"))
            .and_then(Value::as_str);
        let changes = match (keep, since, self.records.get(provider_id)) {
            (true, Some(since), Some(base)) => Some(Changes {
                base: base.clone(),
                since: since.to_owned(),
                items: Vec::new(),
            }),
            _ => None,
        };
        let pending = Pending {
            provider_id: provider_id.to_owned(),
            context: context.to_owned(),
            records: String::new(),
            ids: Vec::new(),
            declared: 0,
            edges,
            relations: String::new(),
            streams: String::new(),
            node: None,
            bytes,
            list: Some(if changes.is_some() {
                List::Changes
            } else {
                List::Scan
            }),
            listed: 0,
            cursor: None,
            cursors: HashSet::new(),
            keep,
            spans: Vec::new(),
            offers_streams: offers("neighbors"),
            changes,
            only: None,
            violation: None,
            base: None,
            reused: Vec::new(),
        };
        let next = pending.next();
        self.current = Some(pending);
        next
    }

    /// One page of the current list, `{ items, nextCursor }` as the view answered them (absent
    /// when the page had none). Answers the call to make next, or that the read is over.
    ///
    /// A page must hold an array of at most the items it was asked for ([`SCAN_PAGE_LIMIT`]
    /// for records and changes, [`RELATION_PAGE_LIMIT`] for the bulk relation scan,
    /// [`PAGE_LIMIT`] for a stream); a page with a cursor must hold one
    /// item at least, and its cursor must be a string the list did not give before — otherwise
    /// the list would never end (`invalid_store_page`). The records stay within `maxRecords`,
    /// all JSON read within `maxBytes`, and a relation stream never lists more items than there
    /// are records (`neighbor_stream_unbounded`). The bulk relation scan ends at the first item
    /// past twice the relations the records declare (each declared edge and its inverse): the
    /// list then differs from the records, which validation reports as the streams' difference.
    ///
    /// The changes (`changedSince`) are judged like records (`maxRecords`, `maxBytes`); a first
    /// page `{ unknown: true }` turns the read into a full one. Once they are all read they are
    /// applied to the kept records, and the records then stay within `maxRecords`.
    pub fn page(&mut self, page: &str) -> Result<Next> {
        self.page_of(page, None)
    }

    /// [`ReadCollector::page`] of a page that gave its items as JSON text (`itemsJson`: one
    /// JSON array, parsed here instead of walked item by item in JavaScript); `page` then holds
    /// no `items`. The text must be a JSON array, like `items`; it is judged exactly as they are.
    pub fn page_of(&mut self, page: &str, items_json: Option<&str>) -> Result<Next> {
        let mut page: WirePage = serde_json::from_str(page).map_err(internal)?;
        if let Some(json) = items_json {
            if page.items.is_some() {
                return self
                    .stop(serde_json::json!({ "code": Code::AdapterContractInvalid.as_str() }));
            }
            // Scanning a value as raw text lets an escaped lone surrogate through, which no
            // walked item can hold: text with escapes is parsed whole once.
            let escapes = json.contains("\\u");
            page.items = serde_json::from_str::<&RawValue>(json)
                .ok()
                .filter(|_| !escapes || serde_json::from_str::<Value>(json).is_ok());
            if page.items.is_none() {
                return self
                    .stop(serde_json::json!({ "code": Code::AdapterContractInvalid.as_str() }));
            }
        }
        if let Some(unknown) = &page.unknown {
            let p = self.pending()?;
            let first = p.list == Some(List::Changes) && p.listed == 0 && p.cursor.is_none();
            if *unknown == Value::Bool(true) && first && page.items.is_none() {
                // The view cannot tell what changed: the provider is read whole.
                p.changes = None;
                p.list = Some(List::Scan);
                return p.next();
            }
            if *unknown != Value::Bool(false) {
                return self
                    .stop(serde_json::json!({ "code": Code::AdapterContractInvalid.as_str() }));
            }
        }
        let Some(items) = page
            .items
            .and_then(|raw| serde_json::from_str::<Vec<&RawValue>>(raw.get()).ok())
        else {
            return self.stop(serde_json::json!({ "code": Code::AdapterContractInvalid.as_str() }));
        };
        let (max_records, max_bytes) = (self.max_records, self.max_bytes);
        let list = self
            .pending()?
            .list
            .ok_or_else(|| GraphError::new(Code::Internal))?;
        if items.len() > list.limit() {
            return self.stop_for("invalid_store_page");
        }
        let p = self.pending()?;
        let n = items.len();
        let over = match list {
            List::Scan => {
                ((p.ids.len() + n) as u64 > max_records).then_some("database_too_many_records")
            }
            List::Changes => {
                let listed = p.changes.as_ref().map_or(0, |c| c.items.len());
                ((listed + n) as u64 > max_records).then_some("database_too_many_records")
            }
            List::Stream { .. } => {
                (p.listed + n > p.ids.len()).then_some("neighbor_stream_unbounded")
            }
            List::Relations => None,
        };
        if let Some(reason) = over {
            return self.stop_for(reason);
        }
        p.bytes = items.iter().fold(p.bytes, |sum, item| {
            sum.saturating_add(item.get().len() as u64)
        });
        if p.bytes > max_bytes {
            return self.stop_for("database_too_many_bytes");
        }
        // The bulk scan lists each declared edge and its inverse: an item past twice the
        // declared relations is one too many, and the list as kept so far (that item
        // included) already differs from the records where it first does. Nothing more is
        // read; validation names that difference.
        let room = p.declared.saturating_mul(2);
        if list == List::Relations && (p.listed + n) as u64 > room {
            let keep = usize::try_from(room + 1).map_or(n, |r| (r - p.listed).min(n));
            p.keep_relations(&items[..keep]);
            p.listed += keep;
            p.list = None;
            return p.next();
        }
        match list {
            List::Scan => p.keep_records(&items),
            List::Changes => {
                if let Err(rule) = p.keep_changes(&items) {
                    // Nothing more is read; validation refuses the read for that rule.
                    p.violation = Some(rule);
                    p.changes = None;
                    p.list = None;
                    return p.next();
                }
            }
            List::Relations => p.keep_relations(&items),
            List::Stream { index, kind } => {
                p.keep_stream(index, Kind::ALL[kind].as_str(), &items)?
            }
        }
        p.listed += n;
        match page.next_cursor {
            None if list == List::Changes => {
                p.apply_changes()?;
                if p.ids.len() as u64 > max_records {
                    return self.stop_for("database_too_many_records");
                }
                let p = self.pending()?;
                p.advance();
                p.next()
            }
            None => {
                p.advance();
                p.next()
            }
            Some(_) if n == 0 => self.stop_for("invalid_store_page"),
            Some(Value::String(cursor)) => {
                if cursor.is_empty() || !p.cursors.insert(cursor.clone()) {
                    return self.stop_for("invalid_store_page");
                }
                p.cursor = Some(cursor);
                p.next()
            }
            Some(_) => {
                self.stop(serde_json::json!({ "code": Code::AdapterContractInvalid.as_str() }))
            }
        }
    }

    /// Ends the current read as failed for `reason`.
    fn stop_for(&mut self, reason: &str) -> Result<Next> {
        debug_assert!(STOPPED.contains(&reason));
        self.stop(serde_json::json!({ "reason": reason }))
    }

    /// Ends the current read as failed (`{ code }` or `{ reason }`).
    fn stop(&mut self, failed: Value) -> Result<Next> {
        let p = self
            .current
            .take()
            .ok_or_else(|| GraphError::new(Code::Internal))?;
        self.record_failure(p.provider_id, &failed)?;
        Ok(Next::Stopped)
    }

    /// The read finished (every list read); `after` is the view's source fields as read after
    /// the scans.
    pub fn end(&mut self, after: &str) -> Result<()> {
        let after: Value = serde_json::from_str(after).map_err(internal)?;
        if self.pending()?.list.is_some() {
            return Err(GraphError::new(Code::Internal));
        }
        let Some(mut p) = self.current.take() else {
            return Err(GraphError::new(Code::Internal));
        };
        p.flush_node()?;
        // `{…context, "edges": …, "streams": {…}, "after": …}`; the records and the bulk
        // relation scan go beside it as JSON arrays, never copied into it.
        let context = p.context.trim_end();
        let mut read = String::with_capacity(context.len() + p.streams.len() + 64);
        read.push_str(&context[..context.len() - 1]);
        if !crate::json::is_blank(&context[1..context.len() - 1]) {
            read.push(',');
        }
        read.push_str(r#""edges":"#);
        read.push_str(&text(&p.edges.as_str())?);
        if p.edges == Edges::Streams {
            read.push_str(r#","streams":{"#);
            read.push_str(&p.streams);
            read.push('}');
        }
        if let Some(only) = &p.only {
            let ids: Vec<&str> = (p.ids.iter().zip(only))
                .filter_map(|(id, &read)| id.as_deref().filter(|_| read))
                .collect();
            read.push_str(r#","streamsOf":"#);
            read.push_str(&text(&ids)?);
        }
        if let Some(rule) = p.violation {
            read.push_str(r#","violation":"#);
            read.push_str(&text(&rule)?);
        }
        read.push_str(r#","after":"#);
        read.push_str(&text(&after)?);
        read.push('}');
        let bracket = |mut list: String| {
            list.insert(0, '[');
            list.push(']');
            list
        };
        let records = bracket(std::mem::take(&mut p.records));
        let relations = (p.edges == Edges::Scan).then(|| bracket(std::mem::take(&mut p.relations)));
        let mut records = Some(records);
        if p.keep && p.violation.is_none() && p.spans.len() == p.ids.len() {
            let kept = p
                .ids
                .into_iter()
                .zip(p.spans)
                // Spans of the list without its opening bracket.
                .map(|(id, (start, len, declared))| id.map(|id| (start + 1, len, id, declared)))
                .collect::<Option<Vec<_>>>();
            if let Some(kept) = kept {
                let reused = p.base.is_some().then(|| std::mem::take(&mut p.reused));
                let kept = KeptRecords {
                    text: records.take().unwrap_or_default(),
                    records: kept,
                    base: p.base.take().unwrap_or_default(),
                    reused: reused.unwrap_or_default(),
                };
                self.kept.insert(p.provider_id.clone(), Arc::new(kept));
            }
        }
        self.texts
            .insert(p.provider_id.clone(), (records, relations));
        self.done.push((p.provider_id, read));
        Ok(())
    }

    /// The read of `provider_id` failed: `failed` is `{ code }` or `{ reason }` (JSON). A read
    /// that failed past its deadline after it had ended, or been stopped, fails for that.
    pub fn fail(&mut self, provider_id: &str, failed: &str) -> Result<()> {
        let failed: Value = serde_json::from_str(failed).map_err(internal)?;
        self.current = None;
        self.record_failure(provider_id.to_owned(), &failed)
    }

    fn record_failure(&mut self, provider_id: String, failed: &Value) -> Result<()> {
        self.kept.remove(&provider_id);
        self.texts.remove(&provider_id);
        let read = text(&serde_json::json!({ "failed": failed }))?;
        match self.done.last_mut() {
            Some((id, earlier)) if *id == provider_id => *earlier = read,
            _ => self.done.push((provider_id, read)),
        }
        Ok(())
    }

    /// Every read, as the JSON object by provider ID the engine takes; `None` when no database
    /// authority was read.
    pub fn into_json(self) -> Result<Option<String>> {
        let mut reads = self.into_reads()?;
        let Some(json) = reads.json.take() else {
            return Ok(None);
        };
        let heads: BTreeMap<String, Box<RawValue>> =
            serde_json::from_str(&json).map_err(internal)?;
        let mut out = Map::new();
        for (id, head) in heads {
            let mut read: Value = serde_json::from_str(head.get()).map_err(internal)?;
            let (records, relations) = reads.texts.remove(&id).unwrap_or_default();
            let records = records.or_else(|| reads.kept.get(&id).map(|k| k.text.clone()));
            for (field, list) in [("capabilities", records), ("relations", relations)] {
                if let (Some(list), Some(read)) = (list, read.as_object_mut()) {
                    read.insert(field.into(), serde_json::from_str(&list).map_err(internal)?);
                }
            }
            out.insert(id, read);
        }
        Ok(Some(Value::Object(out).to_string()))
    }

    /// Every read (as JSON by provider ID, without its records and bulk relation scan), the
    /// records to keep with each snapshot, and the records and relation scans as JSON arrays.
    pub fn into_reads(self) -> Result<DatabaseReads> {
        if self.done.is_empty() {
            return Ok(DatabaseReads::default());
        }
        let mut out = String::from("{");
        for (i, (id, read)) in self.done.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&text(id)?);
            out.push(':');
            out.push_str(read);
        }
        out.push('}');
        Ok(DatabaseReads {
            json: Some(out),
            kept: self.kept,
            texts: self.texts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The error of validating `v`, or `None` when it validates.
    fn error(v: Value) -> Option<GraphError> {
        let roots = Roots {
            aliases: &[],
            default_root: false,
        };
        DatabaseRead::new(v).validate("p", &roots).err()
    }

    #[test]
    fn a_stopped_read_names_its_reason_and_unknown_reasons_name_none() {
        for reason in STOPPED {
            let e = error(json!({ "failed": { "reason": reason } })).unwrap();
            assert_eq!((e.code(), e.phase()), (Code::ConfigInvalid, Phase::Load));
            assert_eq!(e.details().unwrap()["reason"], reason);
        }
        let e = error(json!({ "failed": { "reason": "/srv/secret" } })).unwrap();
        assert_eq!((e.code(), e.details()), (Code::ConfigInvalid, None));
    }

    #[test]
    fn source_fields_must_not_change_after_open() {
        let provider = json!({ "providerId": "p", "name": "P", "version": "1" });
        let opened = json!({ "provider": provider, "sourceRevision": "r1" });
        for after in [
            json!({ "provider": provider, "sourceRevision": "r2" }),
            json!({ "provider": provider, "sourceRevision": "r1", "knowledgeRootDir": "k" }),
            json!({ "provider": { "providerId": "p", "name": "Q", "version": "1" }, "sourceRevision": "r1" }),
            Value::Null,
        ] {
            let mut v = opened.clone();
            v["capabilities"] = json!([]);
            v["streams"] = json!({});
            v["after"] = after.clone();
            let e = error(v).unwrap();
            assert_eq!(
                (e.code(), e.phase()),
                (Code::RevisionMismatch, Phase::Load),
                "{after}"
            );
            assert_eq!(e.details().unwrap()["reason"], "source_context_changed");
        }
        let mut same = opened.clone();
        same["capabilities"] = json!([]);
        same["streams"] = json!({});
        same["after"] = opened;
        assert!(error(same).is_none());
    }

    fn context() -> Value {
        json!({
            "provider": { "providerId": "p", "name": "P", "version": "1" },
            "sourceRevision": "r1",
        })
    }

    /// Reads provider `p` through `c` as the JS layer does: each call the collector names
    /// (`{ call, args }`) is answered with the page `answer` gives, until the read is over.
    /// The calls made, and how the read ended.
    fn drive(c: &mut ReadCollector, answer: impl FnMut(&Value) -> Value) -> (Vec<Value>, Next) {
        drive_offering(c, &["neighbors"], answer)
    }

    /// [`drive`] for a view that has the relation calls `offers`.
    fn drive_offering(
        c: &mut ReadCollector,
        offers: &[&str],
        mut answer: impl FnMut(&Value) -> Value,
    ) -> (Vec<Value>, Next) {
        let mut opened = context();
        opened["cwd"] = json!("/srv");
        let offers = json!(offers).to_string();
        let mut next = c.begin("p", &opened.to_string(), &offers).unwrap();
        let mut calls = Vec::new();
        while let Next::Ask(call) = next {
            let call: Value = serde_json::from_str(&call).unwrap();
            let page = answer(&call);
            calls.push(call);
            next = c.page(&page.to_string()).unwrap();
        }
        (calls, next)
    }

    /// An adapter over `records` and `streams` (`{ capabilityId: { kind: [item…] } }`, absent
    /// ones empty), serving pages of `size` items with the next index as the cursor.
    fn store(records: Vec<Value>, streams: Value, size: usize) -> impl FnMut(&Value) -> Value {
        move |call| {
            let args = call["args"].as_array().unwrap();
            let (list, page) = match call["call"].as_str().unwrap() {
                "scanCapabilities" => (records.clone(), &args[0]),
                "scanRelations" => (bulk(&records, &streams), &args[0]),
                "neighbors" => {
                    let (id, kind) = (args[0].as_str().unwrap(), args[1].as_str().unwrap());
                    let list = streams[id][kind].as_array().cloned().unwrap_or_default();
                    (list, &args[2])
                }
                other => panic!("{other}"),
            };
            let start: usize = page["cursor"].as_str().map_or(0, |c| c.parse().unwrap());
            let end = (start + size).min(list.len());
            let mut out = json!({ "items": list[start..end] });
            if end < list.len() {
                out["nextCursor"] = json!(end.to_string());
            }
            out
        }
    }

    /// The bulk relation scan of `records` whose streams are `streams`: every stream's items in
    /// the documented order (by capability, then kind, then endpoint).
    fn bulk(records: &[Value], streams: &Value) -> Vec<Value> {
        let mut out = Vec::new();
        for r in records {
            let Some(id) = r["capabilityId"].as_str() else {
                continue;
            };
            for kind in Kind::ALL {
                for to in streams[id][kind.as_str()].as_array().into_iter().flatten() {
                    out.push(json!({ "from": id, "kind": kind.as_str(), "to": to }));
                }
            }
        }
        out
    }

    /// Provider `p` as a collector that read it whole hands it over.
    fn finished(mut c: ReadCollector) -> DatabaseRead {
        c.end(&context().to_string()).unwrap();
        handed_over(c)
    }

    /// Provider `p`'s read as the engine takes it: from the collector's text.
    fn handed_over(c: ReadCollector) -> DatabaseRead {
        let mut reads = c.into_reads().unwrap();
        let json = reads.json.unwrap();
        let reads_by_id: BTreeMap<String, &RawValue> = serde_json::from_str(&json).unwrap();
        let texts = reads.texts.remove("p").unwrap_or_default();
        DatabaseRead::from_text(reads_by_id["p"].get(), reads.kept.remove("p"), texts).unwrap()
    }

    /// The failure recorded for provider `p`.
    fn failed(c: ReadCollector) -> Value {
        let json: Value = serde_json::from_str(&c.into_json().unwrap().unwrap()).unwrap();
        json["p"]["failed"].clone()
    }

    /// The failure of a read through `answer` within `bounds`, which must stop it.
    fn stopped(bounds: Database, answer: impl FnMut(&Value) -> Value) -> Value {
        let mut c = ReadCollector::new(&bounds);
        let (_, next) = drive(&mut c, answer);
        assert_eq!(next, Next::Stopped);
        // The read is over: a late page has nothing to join.
        assert_eq!(
            c.page(r#"{"items":[]}"#).err().map(|e| e.code()),
            Some(Code::Internal)
        );
        failed(c)
    }

    /// An adapter's answer to a call.
    type Answer<'a> = dyn FnMut(&Value) -> Value + 'a;

    fn reason(r: &str) -> Value {
        json!({ "reason": r })
    }

    fn rec(id: &str, extra: Value) -> Value {
        let mut r =
            json!({ "capabilityId": id, "name": id, "description": "D.", "whenToUse": "W." });
        if let (Value::Object(r), Value::Object(extra)) = (&mut r, extra) {
            r.extend(extra);
        }
        r
    }

    fn roots() -> Roots<'static> {
        Roots {
            aliases: &[],
            default_root: false,
        }
    }

    /// Three records, `b` and `c` children of `a`.
    fn family() -> (Vec<Value>, Value) {
        let records = vec![
            rec("a", json!({})),
            rec("b", json!({ "parents": ["a"] })),
            rec("c", json!({ "parents": ["a"] })),
        ];
        let streams = json!({
            "a": { "children": ["b", "c"] },
            "b": { "parents": ["a"] },
            "c": { "parents": ["a"] },
        });
        (records, streams)
    }

    #[test]
    fn the_collector_names_every_call_of_a_read_in_order() {
        let (records, streams) = family();
        let mut c = ReadCollector::default();
        let (calls, next) = drive(&mut c, store(records, streams.clone(), 1));
        assert_eq!(next, Next::Done);
        let scan = |cursor: Option<&str>| {
            let mut page = json!({ "limit": 1000, "maxBytes": 262_144 });
            if let Some(c) = cursor {
                page["cursor"] = json!(c);
            }
            json!({ "call": "scanCapabilities", "args": [page] })
        };
        assert_eq!(calls[..3], [scan(None), scan(Some("1")), scan(Some("2"))]);
        // Then the eight streams of each record in turn, every page of each.
        let neighbors = |id: &str, kind: &str, cursor: Option<&str>| {
            let mut page = json!({ "limit": 100 });
            if let Some(c) = cursor {
                page["cursor"] = json!(c);
            }
            json!({ "call": "neighbors", "args": [id, kind, page] })
        };
        let mut expected = Vec::new();
        for id in ["a", "b", "c"] {
            for kind in Kind::ALL {
                expected.push(neighbors(id, kind.as_str(), None));
                if (id, kind) == ("a", Kind::Children) {
                    expected.push(neighbors(id, kind.as_str(), Some("1")));
                }
            }
        }
        assert_eq!(calls[3..], expected[..]);
        let v = finished(c).validate("p", &roots()).unwrap();
        assert_eq!(v.capabilities.len(), 3);

        // A record without a string ID has no streams to read (validation rejects it).
        let mut c = ReadCollector::default();
        let records = vec![rec("a", json!({})), json!({ "capabilityId": 7 })];
        let (calls, next) = drive(&mut c, store(records, json!({}), 100));
        assert_eq!(next, Next::Done);
        assert_eq!(calls.len(), 1 + 8);
        assert!(calls[1..].iter().all(|c| c["args"][0] == "a"));
    }

    #[test]
    fn pages_gathered_one_at_a_time_validate_like_a_whole_read() {
        let (records, mut streams) = family();
        let read = |streams: &Value| {
            let mut c = ReadCollector::default();
            let (_, next) = drive(&mut c, store(records.clone(), streams.clone(), 2));
            assert_eq!(next, Next::Done);
            finished(c)
        };
        let whole = read(&streams);
        assert_eq!(whole.knowledge_root(), None);
        assert_eq!(whole.validate("p", &roots()).unwrap().capabilities.len(), 3);

        // A stream missing an edge the records declare is still caught.
        streams["a"]["children"] = json!(["b"]);
        let e = read(&streams).validate("p", &roots()).err().unwrap();
        assert_eq!(e.code(), Code::AdapterContractInvalid);
        assert_eq!(e.details().unwrap()["reason"], "children_stream_mismatch");

        // Nothing read from a database: nothing to hand over.
        assert_eq!(ReadCollector::default().into_json().unwrap(), None);
    }

    #[test]
    fn records_stay_within_max_records() {
        let (records, streams) = family();
        let bounds = |max_records| Database {
            max_records,
            ..Database::default()
        };
        let mut c = ReadCollector::new(&bounds(3));
        assert_eq!(
            drive(&mut c, store(records.clone(), streams.clone(), 2)).1,
            Next::Done
        );
        // Counted across pages: the second page goes past the bound.
        let failure = stopped(bounds(2), store(records, streams, 2));
        assert_eq!(failure, reason("database_too_many_records"));

        // The bounds come as `databaseSources` gives them.
        let c = ReadCollector::with_budgets(
            r#"{"callTimeoutMs":1,"readTimeoutMs":2,"maxRecords":3,"maxBytes":4}"#,
        )
        .unwrap();
        assert_eq!((c.max_records, c.max_bytes), (3, 4));
        assert!(ReadCollector::with_budgets(r#"{"maxRecords":3}"#).is_err());
    }

    #[test]
    fn all_json_read_counts_against_max_bytes() {
        let (records, streams) = family();
        // The provider record, every record and every stream item, as the JSON they came as.
        let provider = context()["provider"].to_string().len();
        let items: usize = records.iter().map(|r| r.to_string().len()).sum();
        let endpoints = 4 * r#""a""#.len();
        let total = (provider + items + endpoints) as u64;
        let bounds = |max_bytes| Database {
            max_bytes,
            ..Database::default()
        };
        let mut c = ReadCollector::new(&bounds(total));
        assert_eq!(
            drive(&mut c, store(records.clone(), streams.clone(), 2)).1,
            Next::Done
        );
        let failure = stopped(bounds(total - 1), store(records, streams, 2));
        assert_eq!(failure, reason("database_too_many_bytes"));
    }

    #[test]
    fn a_page_over_its_limit_or_whose_cursor_does_not_advance_is_an_invalid_store_page() {
        let (records, streams) = family();
        let is_scan = |call: &Value| call["call"] == "scanCapabilities";
        let many = |n: usize| json!(vec![json!("a"); n]);
        let mut cursors = ["1", "2", "1"].into_iter();
        let cases: Vec<Box<Answer<'_>>> = vec![
            Box::new(|_| json!({ "items": vec![rec("a", json!({})); SCAN_PAGE_LIMIT + 1] })),
            // A stream page over its limit, however many records there are.
            Box::new(|call| {
                if is_scan(call) {
                    json!({ "items": [rec("a", json!({}))] })
                } else {
                    json!({ "items": many(PAGE_LIMIT + 1) })
                }
            }),
            Box::new(|_| json!({ "items": [], "nextCursor": "x" })),
            // The cursor asked with, one seen earlier in the list, an empty one.
            Box::new(|call| {
                let cursor = call["args"][0]["cursor"]
                    .as_str()
                    .unwrap_or("first")
                    .to_owned();
                json!({ "items": [rec("a", json!({}))], "nextCursor": cursor })
            }),
            Box::new(
                move |_| json!({ "items": [rec("a", json!({}))], "nextCursor": cursors.next() }),
            ),
            Box::new(|_| json!({ "items": [rec("a", json!({}))], "nextCursor": "" })),
        ];
        for (i, answer) in cases.into_iter().enumerate() {
            let failure = stopped(Database::default(), answer);
            assert_eq!(failure, reason("invalid_store_page"), "case {i}");
        }
        // Every list has cursors of its own: the same strings in the next list are new ones.
        let mut c = ReadCollector::default();
        assert_eq!(drive(&mut c, store(records, streams, 1)).1, Next::Done);
    }

    #[test]
    fn a_stream_never_lists_more_items_than_there_are_records() {
        let (records, mut streams) = family();
        // As many as there are records is not this rule's concern (validation's, later).
        streams["a"]["related"] = json!(["a", "b", "c"]);
        let mut c = ReadCollector::default();
        assert_eq!(
            drive(&mut c, store(records.clone(), streams.clone(), 2)).1,
            Next::Done
        );
        // Counted across the stream's pages.
        streams["a"]["related"] = json!(["a", "b", "c", "c"]);
        let failure = stopped(Database::default(), store(records, streams, 2));
        assert_eq!(failure, reason("neighbor_stream_unbounded"));
    }

    #[test]
    fn a_page_without_an_items_array_or_with_a_cursor_not_a_string_breaks_the_contract() {
        let contract = json!({ "code": "CG_ADAPTER_CONTRACT_INVALID" });
        for page in [
            json!({}),
            json!({ "items": "x" }),
            json!({ "items": { "$cgNonJson": "class_instance" } }),
            json!({ "items": [rec("a", json!({}))], "nextCursor": 7 }),
            json!({ "items": [rec("a", json!({}))], "nextCursor": { "$cgNonJson": "function" } }),
        ] {
            let failure = stopped(Database::default(), |_| page.clone());
            assert_eq!(failure, contract, "{page}");
        }
        let e = error(json!({ "failed": contract })).unwrap();
        assert_eq!(
            (e.code(), e.phase(), e.details()),
            (Code::AdapterContractInvalid, Phase::Load, None)
        );
        // A null cursor marks the last page.
        let mut c = ReadCollector::default();
        let (_, next) = drive(&mut c, |_| json!({ "items": [], "nextCursor": null }));
        assert_eq!(next, Next::Done);
    }

    #[test]
    fn a_later_failure_of_the_same_provider_replaces_what_was_recorded() {
        // Stopped by a page rule, then past the read deadline while the view closed.
        let mut c = ReadCollector::default();
        let (_, next) = drive(&mut c, |_| json!({ "items": [], "nextCursor": "x" }));
        assert_eq!(next, Next::Stopped);
        c.fail("p", r#"{"reason":"database_read_timeout"}"#)
            .unwrap();
        assert_eq!(failed(c), reason("database_read_timeout"));
        // Read whole, then past the deadline.
        let mut c = ReadCollector::default();
        assert_eq!(drive(&mut c, store(vec![], json!({}), 1)).1, Next::Done);
        c.end(&context().to_string()).unwrap();
        c.fail("p", r#"{"reason":"database_read_timeout"}"#)
            .unwrap();
        assert_eq!(failed(c), reason("database_read_timeout"));
        // Another provider's failure is its own.
        let mut c = ReadCollector::default();
        c.fail("q", r#"{"code":null}"#).unwrap();
        c.fail("p", r#"{"reason":"invalid_store_page"}"#).unwrap();
        let json: Value = serde_json::from_str(&c.into_json().unwrap().unwrap()).unwrap();
        assert_eq!(json["q"]["failed"], json!({ "code": null }));
        let e = DatabaseRead::new(json["p"].clone())
            .validate("p", &roots())
            .err()
            .unwrap();
        assert_eq!(e.details().unwrap()["reason"], "invalid_store_page");
    }

    #[test]
    fn a_read_ends_only_once_every_list_was_read() {
        let (records, streams) = family();
        let mut c = ReadCollector::default();
        let mut answer = store(records, streams, 100);
        let Next::Ask(first) = c
            .begin("p", &context().to_string(), r#"["neighbors"]"#)
            .unwrap()
        else {
            panic!("a read starts with a scan");
        };
        let page = answer(&serde_json::from_str(&first).unwrap());
        assert!(matches!(c.page(&page.to_string()).unwrap(), Next::Ask(_)));
        let e = c.end(&context().to_string()).err().unwrap();
        assert_eq!(e.code(), Code::Internal);
    }

    /// How a read through a view with the relation calls `offers` over `records` and `streams`
    /// (the bulk scan derived from them unless `relations` is given) ends: its calls, and its
    /// validation.
    fn read_offering(
        offers: &[&str],
        records: &[Value],
        streams: &Value,
        relations: Option<Vec<Value>>,
    ) -> (Vec<Value>, Result<ValidatedProvider>) {
        let mut inner = store(records.to_vec(), streams.clone(), 2);
        let answer = move |call: &Value| match (call["call"].as_str(), &relations) {
            (Some("scanRelations"), Some(items)) => {
                let cursor = call["args"][0]["cursor"].as_str();
                let start: usize = cursor.map_or(0, |c| c.parse().unwrap());
                let end = (start + 2).min(items.len());
                let mut out = json!({ "items": items[start..end] });
                if end < items.len() {
                    out["nextCursor"] = json!(end.to_string());
                }
                out
            }
            _ => inner(call),
        };
        let mut c = ReadCollector::default();
        let (calls, next) = drive_offering(&mut c, offers, answer);
        assert_eq!(next, Next::Done);
        (calls, finished(c).validate("p", &roots()))
    }

    #[test]
    fn edges_come_from_the_bulk_scan_the_streams_or_the_records_by_what_the_view_offers() {
        let (records, streams) = family();
        let names = |calls: &[Value]| -> Vec<String> {
            calls
                .iter()
                .map(|c| c["call"].as_str().unwrap().to_owned())
                .collect()
        };
        // The bulk scan, when the view has it, whatever else it has: pages of up to
        // RELATION_PAGE_LIMIT items, after the records.
        let (calls, bulk) =
            read_offering(&["neighbors", "scanRelations"], &records, &streams, None);
        let mut expected = vec!["scanCapabilities".to_owned(); 2];
        expected.extend(vec!["scanRelations".to_owned(); 2]);
        assert_eq!(names(&calls), expected);
        assert_eq!(
            calls[2],
            json!({ "call": "scanRelations", "args": [{ "limit": RELATION_PAGE_LIMIT, "maxBytes": PAGE_MAX_BYTES }] })
        );
        assert_eq!(calls[3]["args"][0]["cursor"], "2");
        // Without it, every stream of every record; with neither, the records only.
        let (calls, each) = read_offering(&["neighbors"], &records, &streams, None);
        assert_eq!(calls.len(), 2 + 3 * 8);
        let (calls, own) = read_offering(&[], &records, &streams, None);
        assert_eq!(names(&calls), vec!["scanCapabilities".to_owned(); 2]);
        // The same definitions, whichever way their edges came.
        let revision = |v: Result<ValidatedProvider>| {
            crate::snapshot::ProviderSnapshot::build(
                v.unwrap(),
                crate::snapshot::AuthorityKind::Database,
                Default::default(),
            )
            .static_revision
        };
        let bulk = revision(bulk);
        assert_eq!(bulk, revision(each));
        assert_eq!(bulk, revision(own));
        // Records-only still rejects a relation the records declare to nowhere.
        let mut dangling = records.clone();
        dangling[0]["requires"] = json!(["ghost"]);
        let (_, v) = read_offering(&[], &dangling, &streams, None);
        assert_eq!(v.err().unwrap().code(), Code::RelationInvalid);
    }

    #[test]
    fn a_bulk_scan_that_lies_fails_as_the_same_lie_in_the_streams_does() {
        let (records, streams) = family();
        let error = |v: Result<ValidatedProvider>| {
            let e = v.err().expect("the read is refused");
            assert_eq!(
                (e.code(), e.phase()),
                (Code::AdapterContractInvalid, Phase::Load)
            );
            e.details().cloned()
        };
        let other = json!({ "providerId": "q", "capabilityId": "b" });
        type Tamper = Box<dyn Fn(&mut Value)>;
        let lies: Vec<(&str, Tamper)> = vec![
            ("missing", Box::new(|s| s["a"]["children"] = json!(["b"]))),
            ("extra", Box::new(|s| s["b"]["related"] = json!(["c"]))),
            (
                "reordered",
                Box::new(|s| s["a"]["children"] = json!(["c", "b"])),
            ),
            (
                "duplicated",
                Box::new(|s| s["a"]["children"] = json!(["b", "b", "c"])),
            ),
            (
                "unknown endpoint",
                Box::new(|s| s["b"]["parents"] = json!(["z"])),
            ),
            (
                "another provider's",
                Box::new(move |s| s["c"]["parents"] = json!([other.clone()])),
            ),
        ];
        for (lie, tamper) in lies {
            let mut told = streams.clone();
            tamper(&mut told);
            let (_, each) = read_offering(&["neighbors"], &records, &told, None);
            let relations = Some(bulk(&records, &told));
            let (_, scanned) = read_offering(&["scanRelations"], &records, &streams, relations);
            let (each, scanned) = (error(each), error(scanned));
            assert!(each.is_some(), "{lie}");
            assert_eq!(scanned, each, "{lie}");
        }
        // Out of order across capabilities or kinds: named by the first list that differs.
        let mut swapped = bulk(&records, &streams);
        let last = swapped.len() - 1;
        swapped.swap(0, last);
        let (_, v) = read_offering(&["scanRelations"], &records, &streams, Some(swapped));
        let details = error(v).unwrap();
        assert_eq!(
            (details["reason"].as_str(), details["capabilityId"].as_str()),
            (Some("children_stream_mismatch"), Some("a"))
        );
        // Items that are not `{ from, kind, to }` with one of the eight kinds.
        for item in [
            json!({ "from": "a", "kind": "cousins", "to": "b" }),
            json!({ "from": "a", "to": "b" }),
            json!({ "from": "a", "kind": "children", "to": { "providerId": "p" } }),
            json!("a"),
        ] {
            let mut items = bulk(&records, &streams);
            items.insert(0, item.clone());
            let (_, v) = read_offering(&["scanRelations"], &records, &streams, Some(items));
            let details = error(v).unwrap();
            assert_eq!(details["reason"], "neighbor_identity_invalid", "{item}");
            // Named by its capability, when it names one.
            let named = item.get("from").map(|_| json!("a"));
            assert_eq!(details.get("capabilityId"), named.as_ref(), "{item}");
        }
        // An edge of a capability the provider does not have.
        let mut items = bulk(&records, &streams);
        items.push(json!({ "from": "z", "kind": "requires", "to": "a" }));
        let (_, v) = read_offering(&["scanRelations"], &records, &streams, Some(items));
        assert_eq!(
            Value::Object(error(v).unwrap()),
            json!({ "reason": "requires_stream_mismatch" })
        );
    }

    #[test]
    fn a_bulk_scan_stays_within_the_page_rules_and_bounds() {
        let (records, streams) = family();
        let bulk_view = |relations: Value| {
            let mut records_page = store(records.clone(), streams.clone(), 100);
            move |call: &Value| {
                if call["call"] == "scanRelations" {
                    relations.clone()
                } else {
                    records_page(call)
                }
            }
        };
        let read = |bounds: Database, answer: Box<Answer<'_>>| {
            let mut c = ReadCollector::new(&bounds);
            let (_, next) = drive_offering(&mut c, &["scanRelations"], answer);
            (next, c)
        };
        let edge = json!({ "from": "a", "kind": "children", "to": "b" });
        let (next, c) = read(
            Database::default(),
            Box::new(bulk_view(
                json!({ "items": vec![edge.clone(); RELATION_PAGE_LIMIT + 1] }),
            )),
        );
        assert_eq!(
            (next, failed(c)),
            (Next::Stopped, reason("invalid_store_page"))
        );
        // Two declared relations: the fifth item is one too many. Nothing more is asked for,
        // and the read is refused as the streams would be.
        let mut all = bulk(&records, &streams);
        all.push(edge.clone());
        let endless = |call: &Value| {
            let start: usize = call["args"][0]["cursor"]
                .as_str()
                .map_or(0, |c| c.parse().unwrap());
            let item = all.get(start).cloned().unwrap_or(edge.clone());
            json!({ "items": [item], "nextCursor": (start + 1).to_string() })
        };
        let mut c = ReadCollector::default();
        let mut records_page = store(records.clone(), streams.clone(), 100);
        let (calls, next) = drive_offering(&mut c, &["scanRelations"], |call: &Value| {
            if call["call"] == "scanRelations" {
                endless(call)
            } else {
                records_page(call)
            }
        });
        assert_eq!((calls.len(), next), (1 + 5, Next::Done));
        let e = finished(c).validate("p", &roots()).err().unwrap();
        assert_eq!(e.code(), Code::AdapterContractInvalid);
        assert_eq!(e.details().unwrap()["reason"], "children_stream_mismatch");
        let (next, c) = read(
            Database::default(),
            Box::new(bulk_view(
                json!({ "items": [edge.clone()], "nextCursor": "" }),
            )),
        );
        assert_eq!(
            (next, failed(c)),
            (Next::Stopped, reason("invalid_store_page"))
        );
        // Its items count against maxBytes like every other JSON read.
        let all = bulk(&records, &streams);
        let whole = context()["provider"].to_string().len()
            + records.iter().map(|r| r.to_string().len()).sum::<usize>()
            + all.iter().map(|i| i.to_string().len()).sum::<usize>();
        let bounds = |max_bytes| Database {
            max_bytes: max_bytes as u64,
            ..Database::default()
        };
        let (next, _) = read(bounds(whole), Box::new(bulk_view(json!({ "items": all }))));
        assert_eq!(next, Next::Done);
        let (next, c) = read(
            bounds(whole - 1),
            Box::new(bulk_view(json!({ "items": all }))),
        );
        assert_eq!(
            (next, failed(c)),
            (Next::Stopped, reason("database_too_many_bytes"))
        );
    }

    #[test]
    fn a_view_naming_the_state_the_current_snapshot_was_read_from_is_not_read() {
        let (records, streams) = family();
        let mut c = ReadCollector::default();
        drive(&mut c, store(records.clone(), streams.clone(), 100));
        let identity = finished(c).identity();
        assert_eq!(
            identity,
            json!({ "provider": context()["provider"], "sourceRevision": "r1", "knowledgeRoot": null })
        );
        let known = |identity: &Value| {
            ReadCollector::default().knowing(BTreeMap::from([("p".to_owned(), identity.clone())]))
        };
        let mut c = known(&identity);
        let (calls, next) = drive(&mut c, |_| panic!("nothing is read"));
        assert_eq!((calls.len(), next), (0, Next::Unchanged));
        let json: Value = serde_json::from_str(&c.into_json().unwrap().unwrap()).unwrap();
        assert_eq!(
            DatabaseRead::new(json["p"].clone()).unchanged(),
            Some(&identity)
        );
        // Another revision, provider record or document root is read whole.
        for field in ["sourceRevision", "provider", "knowledgeRoot"] {
            let mut other = identity.clone();
            other[field] = json!("changed");
            let mut c = known(&other);
            let (calls, next) = drive(&mut c, store(records.clone(), streams.clone(), 100));
            assert_eq!(next, Next::Done, "{field}");
            assert_eq!(calls.len(), 1 + 3 * 8, "{field}");
        }
        // A relative root names another directory from another working directory.
        let at = |cwd: &str| identity_of(&json!({ "knowledgeRootDir": "docs", "cwd": cwd }));
        assert_ne!(at("/srv/a"), at("/srv/b"));
        assert_eq!(at("/srv/a")["knowledgeRoot"], "/srv/a/docs");
    }

    /// A read of `p` at source revision `revision` through a view with the calls `offers`,
    /// by a collector that knows the state and records of an earlier read (`known`): the calls
    /// made, how the read ended and what it gave.
    fn read_at(
        revision: &str,
        offers: &[&str],
        known: Option<&(Value, Arc<KeptRecords>)>,
        answer: impl FnMut(&Value) -> Value,
    ) -> (Vec<Value>, Next, Option<DatabaseRead>) {
        let (calls, next, read) =
            read_within(&Database::default(), revision, offers, known, answer);
        (calls, next, read.ok())
    }

    /// [`read_at`] within `bounds`; a stopped read gives its failure.
    fn read_within(
        bounds: &Database,
        revision: &str,
        offers: &[&str],
        known: Option<&(Value, Arc<KeptRecords>)>,
        mut answer: impl FnMut(&Value) -> Value,
    ) -> (Vec<Value>, Next, std::result::Result<DatabaseRead, Value>) {
        let mut c = ReadCollector::new(bounds);
        if let Some((identity, kept)) = known {
            c = c
                .knowing(BTreeMap::from([("p".to_owned(), identity.clone())]))
                .knowing_records(BTreeMap::from([("p".to_owned(), kept.clone())]));
        }
        let mut opened = context();
        opened["sourceRevision"] = json!(revision);
        let after = opened.clone();
        opened["cwd"] = json!("/srv");
        let mut next = c
            .begin("p", &opened.to_string(), &json!(offers).to_string())
            .unwrap();
        let mut calls = Vec::new();
        while let Next::Ask(call) = next {
            let call: Value = serde_json::from_str(&call).unwrap();
            let page = answer(&call);
            calls.push(call);
            next = c.page(&page.to_string()).unwrap();
        }
        if next != Next::Done {
            return (calls, next, Err(failed(c)));
        }
        c.end(&after.to_string()).unwrap();
        (calls, Next::Done, Ok(handed_over(c)))
    }

    /// `changes` served as pages of `size` items (the cursor is the next index); the other
    /// calls by `rest`.
    fn with_changes(
        changes: Vec<Value>,
        size: usize,
        mut rest: impl FnMut(&Value) -> Value,
    ) -> impl FnMut(&Value) -> Value {
        move |call| {
            if call["call"] != "changedSince" {
                return rest(call);
            }
            assert_eq!(call["args"][0], "r1", "asked since the snapshot's revision");
            let start: usize = call["args"][1]["cursor"]
                .as_str()
                .map_or(0, |c| c.parse().unwrap());
            let end = (start + size).min(changes.len());
            let mut out = json!({ "items": changes[start..end] });
            if end < changes.len() {
                out["nextCursor"] = json!(end.to_string());
            }
            out
        }
    }

    fn names(calls: &[Value]) -> Vec<&str> {
        calls.iter().map(|c| c["call"].as_str().unwrap()).collect()
    }

    /// Records and their streams.
    type Definitions = (Vec<Value>, Value);

    /// Before: `a`, `b` and `c` (children of `a`) and `d`. After: `b` renamed and no longer a
    /// child, `c` removed, `e` added, related to `d`.
    fn before_and_after() -> (Definitions, Definitions, Vec<Value>) {
        let (mut records, mut streams) = family();
        records.push(rec("d", json!({})));
        streams["d"] = json!({});
        let b = rec("b", json!({ "name": "B, renamed" }));
        let e = rec("e", json!({ "related": ["d"] }));
        let after = vec![records[0].clone(), b.clone(), records[3].clone(), e.clone()];
        let after_streams = json!({ "d": { "relatedBy": ["e"] }, "e": { "related": ["d"] } });
        let changes = vec![
            json!({ "capabilityId": "b", "record": b }),
            json!({ "capabilityId": "c", "removed": true }),
            json!({ "capabilityId": "e", "record": e }),
        ];
        ((records, streams), (after, after_streams), changes)
    }

    fn revision_of(read: &DatabaseRead) -> String {
        let v = read.validate("p", &roots()).unwrap();
        crate::snapshot::ProviderSnapshot::build(
            v,
            crate::snapshot::AuthorityKind::Database,
            Default::default(),
        )
        .static_revision
    }

    #[test]
    fn a_view_offering_changed_since_is_read_for_the_changes_only_and_gives_what_a_full_read_gives()
    {
        let ((records, streams), (after, after_streams), changes) = before_and_after();
        let offers = ["neighbors", "changedSince"];
        let (_, _, first) = read_at("r1", &offers, None, store(records, streams, 100));
        let first = first.unwrap();
        let known = (
            first.identity(),
            first.kept().expect("the records are kept"),
        );
        // The changes, in pages of two; then the streams of what they touched: b and e
        // themselves, a (b's and c's parent before) and d (e's relation now).
        let answer = with_changes(changes, 2, store(after.clone(), after_streams.clone(), 100));
        let (calls, next, incremental) = read_at("r2", &offers, Some(&known), answer);
        assert_eq!(next, Next::Done);
        let mut expected = vec!["changedSince"; 2];
        expected.extend(vec!["neighbors"; 4 * 8]);
        assert_eq!(names(&calls), expected);
        let streamed: HashSet<&str> = calls[2..]
            .iter()
            .map(|c| c["args"][0].as_str().unwrap())
            .collect();
        assert_eq!(streamed, HashSet::from(["a", "b", "d", "e"]));
        assert_eq!(
            calls[0]["args"],
            json!(["r1", { "limit": SCAN_PAGE_LIMIT, "maxBytes": PAGE_MAX_BYTES }])
        );
        // The same snapshot as a full read of the definitions now, and the same records kept.
        let incremental = incremental.unwrap();
        let (_, _, full) = read_at("r2", &offers, None, store(after, after_streams, 100));
        let full = full.unwrap();
        assert_eq!(revision_of(&incremental), revision_of(&full));
        assert_eq!(incremental.identity(), full.identity());
        let (kept, whole) = (incremental.kept().unwrap(), full.kept().unwrap());
        assert_eq!((&kept.text, &kept.records), (&whole.text, &whole.records));
    }

    #[test]
    fn a_view_that_cannot_tell_what_changed_is_read_whole() {
        let ((records, streams), (after, after_streams), _) = before_and_after();
        let offers = ["scanRelations", "changedSince"];
        let (calls, _, first) = read_at("r1", &offers, None, store(records, streams, 100));
        assert_eq!(names(&calls), ["scanCapabilities", "scanRelations"]);
        let first = first.unwrap();
        let known = (first.identity(), first.kept().unwrap());
        let mut rest = store(after.clone(), after_streams.clone(), 100);
        let answer = |call: &Value| match call["call"].as_str() {
            Some("changedSince") => json!({ "unknown": true }),
            _ => rest(call),
        };
        let (calls, _, read) = read_at("r2", &offers, Some(&known), answer);
        assert_eq!(
            names(&calls),
            ["changedSince", "scanCapabilities", "scanRelations"]
        );
        let (_, _, full) = read_at("r2", &offers, None, store(after, after_streams, 100));
        assert_eq!(revision_of(&read.unwrap()), revision_of(&full.unwrap()));
        // A view without changedSince keeps nothing; a forced reload knows nothing: both read
        // whole.
        let (records, streams) = family();
        let (_, _, plain) = read_at("r1", &["scanRelations"], None, store(records, streams, 9));
        assert!(plain.unwrap().kept().is_none());
    }

    #[test]
    fn changes_are_checked_like_scans_and_the_streams_they_touch_like_every_stream() {
        let ((records, streams), (after, after_streams), changes) = before_and_after();
        let (_, _, first) = read_at(
            "r1",
            &["neighbors", "changedSince"],
            None,
            store(records, streams, 100),
        );
        let first = first.unwrap();
        let known = (first.identity(), first.kept().unwrap());
        let refused = |offers: &[&str], changes: Vec<Value>, streams: &Value| {
            let answer = with_changes(changes, 100, store(after.clone(), streams.clone(), 100));
            let (_, next, read) = read_at("r2", offers, Some(&known), answer);
            assert_eq!(next, Next::Done);
            let e = read
                .unwrap()
                .validate("p", &roots())
                .err()
                .expect("refused");
            assert_eq!(
                (e.code(), e.phase()),
                (Code::AdapterContractInvalid, Phase::Load)
            );
            e.details().cloned().unwrap()
        };
        let offers = ["neighbors", "changedSince"];
        let mut reordered = changes.clone();
        reordered.swap(0, 2);
        let mut repeated = changes.clone();
        repeated.insert(1, changes[0].clone());
        for (lie, list, reason) in [
            ("reordered", reordered, "change_order_or_duplicate"),
            ("repeated", repeated, "change_order_or_duplicate"),
            (
                "another record's",
                vec![json!({ "capabilityId": "b", "record": rec("z", json!({})) })],
                "change_item_invalid",
            ),
            (
                "neither",
                vec![json!({ "capabilityId": "b" })],
                "change_item_invalid",
            ),
            (
                "both",
                vec![
                    json!({ "capabilityId": "c", "removed": true, "record": rec("c", json!({})) }),
                ],
                "change_item_invalid",
            ),
            (
                "not removed",
                vec![json!({ "capabilityId": "c", "removed": false })],
                "change_item_invalid",
            ),
            ("not an object", vec![json!("b")], "change_item_invalid"),
        ] {
            assert_eq!(
                refused(&offers, list, &after_streams)["reason"],
                reason,
                "{lie}"
            );
        }
        // A touched stream that lies fails as it would in a full read.
        let mut stale = after_streams.clone();
        stale["a"] = json!({ "children": ["b"] });
        let details = refused(&offers, changes.clone(), &stale);
        assert_eq!(
            (details["reason"].as_str(), details["capabilityId"].as_str()),
            (Some("children_stream_mismatch"), Some("a"))
        );
        // The changes count against maxRecords, and so does the provider they give.
        for (max_records, changes) in [(2, changes.clone()), (3, changes[..1].to_vec())] {
            let bounds = Database {
                max_records,
                ..Database::default()
            };
            let answer = with_changes(changes, 100, |_| unreachable!());
            let (_, next, read) = read_within(&bounds, "r2", &offers, Some(&known), answer);
            assert_eq!(
                (next, read.err()),
                (Next::Stopped, Some(reason("database_too_many_records")))
            );
        }
        // A page rule is a page rule: `unknown` beside items, or past the first page.
        let unknown_pages = [
            vec![json!({ "items": [], "unknown": true })],
            vec![
                json!({ "items": [changes[0]], "nextCursor": "1" }),
                json!({ "unknown": true }),
            ],
        ];
        for pages in unknown_pages {
            let mut pages = pages.into_iter();
            let (_, next, read) =
                read_within(&Database::default(), "r2", &offers, Some(&known), |_| {
                    pages.next().unwrap()
                });
            assert_eq!(
                (next, read.err()),
                (
                    Next::Stopped,
                    Some(json!({ "code": "CG_ADAPTER_CONTRACT_INVALID" }))
                )
            );
        }
    }

    #[test]
    fn a_page_given_as_json_text_is_judged_as_its_items_are() {
        let (records, streams) = family();
        // Every page of the read handed over as text: the same read as the items give.
        let read = |as_text: &dyn Fn(&Value) -> (String, Option<String>)| {
            let mut c = ReadCollector::default();
            let mut answer = store(records.clone(), streams.clone(), 2);
            let mut opened = context();
            opened["cwd"] = json!("/srv");
            let mut next = c
                .begin("p", &opened.to_string(), r#"["scanRelations"]"#)
                .unwrap();
            while let Next::Ask(call) = next {
                let (page, text) = as_text(&answer(&serde_json::from_str(&call).unwrap()));
                next = c.page_of(&page, text.as_deref()).unwrap();
            }
            (next, c)
        };
        let split = |page: &Value| {
            let mut rest = page.clone();
            let items = rest.as_object_mut().unwrap().remove("items").unwrap();
            (
                rest.to_string(),
                Some(serde_json::to_string_pretty(&items).unwrap()),
            )
        };
        let (next, c) = read(&split);
        assert_eq!(next, Next::Done);
        let (_, whole) = read(&|page: &Value| (page.to_string(), None));
        assert_eq!(revision_of(&finished(c)), revision_of(&finished(whole)));
        // Text that is not one JSON array, or text beside items, breaks the contract.
        for (page, text) in [
            (json!({}), "[{\"capabilityId\": \"a\"}"),
            (json!({}), "{\"capabilityId\": \"a\"}"),
            (json!({}), "[\"\\ud800\"]"),
            (json!({ "items": [] }), "[]"),
        ] {
            let mut c = ReadCollector::default();
            let mut opened = context();
            opened["cwd"] = json!("/srv");
            c.begin("p", &opened.to_string(), "[]").unwrap();
            let next = c.page_of(&page.to_string(), Some(text)).unwrap();
            assert_eq!(next, Next::Stopped, "{text}");
            assert_eq!(
                failed(c),
                json!({ "code": "CG_ADAPTER_CONTRACT_INVALID" }),
                "{text}"
            );
        }
    }

    #[test]
    fn a_bulk_scan_read_as_text_is_compared_item_by_item_and_any_doubt_goes_the_long_way() {
        let (records, streams) = family();
        let v = validate_provider(
            &json!({ "providerId": "p", "name": "P", "version": "1", "capabilities": records }),
            Some("p"),
            &roots(),
        )
        .unwrap();
        let text = |items: &[Value]| json!(items).to_string();
        let scan = bulk(&records, &streams);
        assert!(relations_text_as_declared(&v, "p", &text(&scan)));
        // Qualified endpoints of this provider and escaped text are the same items.
        let mut qualified = scan.clone();
        qualified[0]["to"] = json!({ "capabilityId": "b", "providerId": "p" });
        assert!(relations_text_as_declared(&v, "p", &text(&qualified)));
        let escaped = text(&scan).replacen("\"a\"", "\"\\u0061\"", 1);
        assert!(escaped.contains("\\u0061"));
        assert!(relations_text_as_declared(&v, "p", &escaped));
        // Anything else is not taken as declared here (check_relations then names it).
        let mut other = scan.clone();
        other[0]["to"] = json!({ "capabilityId": "b", "providerId": "q" });
        let mut extra_key = scan.clone();
        extra_key[0]["note"] = json!(1);
        let mut extra_endpoint_key = scan.clone();
        extra_endpoint_key[0]["to"] = json!({ "capabilityId": "b", "providerId": "p", "x": 1 });
        let mut longer = scan.clone();
        longer.push(scan[0].clone());
        for items in [
            other,
            extra_key,
            extra_endpoint_key,
            longer,
            scan[1..].to_vec(),
        ] {
            assert!(
                !relations_text_as_declared(&v, "p", &text(&items)),
                "{items:?}"
            );
        }
        let duplicated_key = text(&scan).replacen("\"kind\"", "\"from\":\"a\",\"kind\"", 1);
        assert!(!relations_text_as_declared(&v, "p", &duplicated_key));
        assert!(!relations_text_as_declared(
            &v,
            "p",
            &format!("{} x", text(&scan))
        ));
    }

    #[test]
    fn a_relative_root_is_taken_from_the_directory_at_open() {
        let r = DatabaseRead::new(json!({ "knowledgeRootDir": "docs", "cwd": "/srv/host" }));
        assert_eq!(r.knowledge_root(), Some(PathBuf::from("/srv/host/docs")));
        let abs = DatabaseRead::new(json!({ "knowledgeRootDir": "/abs", "cwd": "/srv/host" }));
        assert_eq!(abs.knowledge_root(), Some(PathBuf::from("/abs")));
    }

    /// A snapshot built from `read`, keeping its records as the engine does.
    fn built(read: &DatabaseRead) -> std::result::Result<crate::snapshot::ProviderSnapshot, Value> {
        let v = read
            .validate_after("p", &roots(), None)
            .map_err(|e| e.to_json_value())?;
        let mut s = crate::snapshot::ProviderSnapshot::build(
            v,
            crate::snapshot::AuthorityKind::Database,
            Default::default(),
        );
        *s.kept.lock().unwrap() = read.kept();
        s.source = Some(Arc::new(read.identity()));
        Ok(s)
    }

    /// Twenty records `c00`… (each a child of `c00`, `c05` requiring `c04`, `c07` related to
    /// `c06`), read whole, and its snapshot.
    fn twenty() -> (Vec<Value>, crate::snapshot::ProviderSnapshot) {
        let records: Vec<Value> = (0..20)
            .map(|i| {
                let mut extra = json!({});
                if i > 0 {
                    extra["parents"] = json!(["c00"]);
                }
                if i == 5 {
                    extra["requires"] = json!(["c04"]);
                }
                if i == 7 {
                    extra["related"] = json!(["c06"]);
                }
                rec(&format!("c{i:02}"), extra)
            })
            .collect();
        let (_, _, first) = read_at(
            "r1",
            &["changedSince"],
            None,
            store(records.clone(), json!({}), 100),
        );
        let snapshot = built(&first.unwrap()).unwrap();
        (records, snapshot)
    }

    #[test]
    fn an_incremental_read_validates_only_the_changed_records_and_refuses_what_a_full_read_refuses()
    {
        use crate::opcount::{count, reset, Op};
        let (records, before) = twenty();
        let known = (
            before.source.as_deref().cloned().unwrap(),
            before.kept.lock().unwrap().clone().unwrap(),
        );
        let full_of = |after: &[Value]| {
            let (_, _, read) = read_at(
                "r2",
                &["changedSince"],
                None,
                store(after.to_vec(), json!({}), 100),
            );
            built(&read.unwrap()).map(|s| s.static_revision)
        };
        let renamed = rec("c03", json!({ "parents": ["c00"], "name": "Renamed" }));
        let mut cases: Vec<(&str, Vec<Value>)> = vec![
            (
                "a renamed record",
                vec![json!({ "capabilityId": "c03", "record": renamed })],
            ),
            (
                "an added record",
                vec![
                    json!({ "capabilityId": "c30", "record": rec("c30", json!({ "specializes": ["c02"] })) }),
                ],
            ),
            // c05 (unchanged) requires c04.
            (
                "a removed capability an unchanged one requires",
                vec![json!({ "capabilityId": "c04", "removed": true })],
            ),
            // Every other record (unchanged) is a child of c00.
            (
                "a removed parent",
                vec![json!({ "capabilityId": "c00", "removed": true })],
            ),
            (
                "a changed record naming a capability that does not exist",
                vec![
                    json!({ "capabilityId": "c09", "record": rec("c09", json!({ "related": ["nowhere"] })) }),
                ],
            ),
            // c00 becomes a child of c01, itself a child of c00 (unchanged).
            (
                "a changed record closing a cycle",
                vec![
                    json!({ "capabilityId": "c00", "record": rec("c00", json!({ "parents": ["c01"] })) }),
                ],
            ),
            (
                "a changed record invalid of its own",
                vec![
                    json!({ "capabilityId": "c08", "record": { "capabilityId": "c08", "name": "" } }),
                ],
            ),
            (
                "a changed record with a key no record has",
                vec![json!({ "capabilityId": "c08", "record": rec("c08", json!({ "tags": [] })) })],
            ),
        ];
        // No change can duplicate an ID: each replaces the record of its own ID, and a list
        // naming an ID twice is refused as it is read (`change_order_or_duplicate`).
        cases.push(("two changes at once", vec![
            json!({ "capabilityId": "c02", "removed": true }),
            json!({ "capabilityId": "c11", "record": rec("c11", json!({ "parents": ["c00"], "specializes": ["c12"] })) }),
        ]));
        for (case, changes) in cases {
            // What the definitions are after the changes, read whole.
            let mut after: BTreeMap<String, Value> = records
                .iter()
                .map(|r| (r["capabilityId"].as_str().unwrap().to_owned(), r.clone()))
                .collect();
            for c in &changes {
                let id = c["capabilityId"].as_str().unwrap().to_owned();
                match c.get("record") {
                    Some(r) => after.insert(id, r.clone()),
                    None => after.remove(&id),
                };
            }
            let after: Vec<Value> = after.into_values().collect();
            let full = full_of(&after);
            let answer = with_changes(changes.clone(), 10, store(Vec::new(), json!({}), 100));
            let (_, next, read) = read_at("r2", &["changedSince"], Some(&known), answer);
            assert_eq!(next, Next::Done, "{case}");
            let read = read.unwrap();
            reset();
            let incremental = read
                .validate_after("p", &roots(), Some(&before))
                .map(|v| {
                    crate::snapshot::ProviderSnapshot::build(
                        v,
                        crate::snapshot::AuthorityKind::Database,
                        Default::default(),
                    )
                    .static_revision
                })
                .map_err(|e| e.to_json_value());
            // Only the records the changes list are parsed and checked one by one; the
            // provider-wide rules still run over the whole candidate.
            let listed = changes.iter().filter(|c| c.get("record").is_some()).count();
            assert_eq!(count(Op::RecordChecked), listed as u64, "{case}");
            assert_eq!(incremental, full, "{case}");
        }
    }

    #[test]
    fn records_of_another_snapshot_or_document_root_are_checked_again() {
        use crate::opcount::{count, reset, Op};
        let (_, before) = twenty();
        let known = (
            before.source.as_deref().cloned().unwrap(),
            before.kept.lock().unwrap().clone().unwrap(),
        );
        let changes = vec![json!({ "capabilityId": "c03", "removed": true })];
        let answer = with_changes(changes, 10, store(Vec::new(), json!({}), 100));
        let (_, _, read) = read_at("r2", &["changedSince"], Some(&known), answer);
        let read = read.unwrap();
        // The snapshot given is not the one whose records the changes were applied to.
        let (_, other) = twenty();
        reset();
        read.validate_after("p", &roots(), Some(&other)).unwrap();
        assert_eq!(count(Op::RecordChecked), 19);
        // Records checked under another document root are checked again.
        let mut moved = before;
        moved.source = Some(Arc::new(json!({ "knowledgeRoot": "/elsewhere" })));
        reset();
        read.validate_after("p", &roots(), Some(&moved)).unwrap();
        assert_eq!(count(Op::RecordChecked), 19);
    }
}
