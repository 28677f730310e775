//! The database authority (SPEC §14 D15): the JS layer reads a provider whole through the
//! adapter's paged scans — its provider record, every capability record in ID order, and the
//! eight relation streams of every capability — handing each page here as it arrives
//! ([`ReadCollector`]), so JavaScript holds one page at a time. The records are validated like
//! any definitions; the scan order and every relation stream are checked against them, so an
//! inconsistent database never becomes a snapshot.

use crate::definitions::{validate_provider, Roots, ValidatedProvider};
use crate::error::{project_component_error, Code, Component, GraphError, Phase, Result};
use crate::snapshot::Kind;
use serde_json::{Map, Value};
use std::path::PathBuf;

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

/// Why a read the JS layer stopped failed, when a bound or deadline of `budgets.database` or a
/// page rule stopped it (`{ failed: { reason } }`).
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

/// What the JS layer read from the adapter: `{ provider, sourceRevision, knowledgeRootDir?, cwd,
/// capabilities: [record…], streams: { capabilityId: { kind: [capabilityId…] } }, after }`, where
/// the first three fields were read when the view was opened (`cwd` is the working directory
/// then) and `after` holds them as read after the scans; or `{ failed: { code, reason? } }` when
/// the adapter threw or the read was stopped. A stream left out of `streams` was read empty.
pub struct DatabaseRead {
    value: Value,
    /// The provider record with the capability records moved in: the inline definition the
    /// records are validated as (built once, so the records are never copied).
    definition: Option<Value>,
}

impl DatabaseRead {
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
        DatabaseRead { value, definition }
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
        let dir = self
            .value
            .get("knowledgeRootDir")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)?;
        match self.value.get("cwd").and_then(Value::as_str) {
            Some(cwd) if dir.is_relative() => Some(PathBuf::from(cwd).join(dir)),
            _ => Some(dir),
        }
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
        if let Some(e) = self.failure() {
            return Err(e);
        }
        self.check_context()?;
        let v = &self.value;
        if v.get("sourceRevision")
            .and_then(Value::as_str)
            .is_none_or(|s| s.trim().is_empty())
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
        let records = definition["capabilities"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        // Scans come in strictly increasing ID order, each record once.
        let ids: Vec<Option<&str>> = records
            .iter()
            .map(|r| r.get("capabilityId").and_then(Value::as_str))
            .collect();
        if ids
            .windows(2)
            .any(|w| matches!(w, [Some(a), Some(b)] if a >= b))
        {
            return Err(contract("scan_order_or_duplicate"));
        }
        let validated = validate_provider(definition, Some(provider_id), roots)?;
        self.check_streams(&validated, provider_id)?;
        Ok(validated)
    }

    /// Every relation stream the adapter serves must list exactly the edges the records declare
    /// (forward) or imply (inverse), in ID order.
    fn check_streams(&self, v: &ValidatedProvider, provider_id: &str) -> Result<()> {
        let streams = self
            .value
            .get("streams")
            .and_then(Value::as_object)
            .ok_or_else(|| contract("streams_required"))?;
        let n = v.capabilities.len();
        // Expected lists per kind, as indices: forward from the records, inverse derived.
        let mut expected: Vec<[Vec<u32>; 8]> = vec![Default::default(); n];
        for (i, edges) in v.edges.iter().enumerate() {
            for (r, targets) in edges.iter().enumerate() {
                let (forward, inverse) = (2 * r, 2 * r + 1);
                expected[i][forward] = targets.clone();
                for &t in targets {
                    expected[t as usize][inverse].push(i as u32);
                }
            }
        }
        for (i, c) in v.capabilities.iter().enumerate() {
            let kinds = streams.get(&c.capability_id);
            for kind in Kind::ALL {
                // Streams read empty are left out (`ReadCollector`); anything else present must
                // be the list.
                let listed = match kinds.and_then(|k| k.get(kind.as_str())) {
                    None if kinds.is_none_or(Value::is_object) => Some(&[][..]),
                    listed => listed.and_then(Value::as_array).map(Vec::as_slice),
                };
                let mismatch = || {
                    contract(&format!("{}_stream_mismatch", kind.as_str()))
                        .detail("capabilityId", c.capability_id.as_str())
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
                        .detail("capabilityId", c.capability_id.as_str()));
                };
                let want = &expected[i][kind as usize];
                let same = listed.len() == want.len()
                    && listed
                        .iter()
                        .zip(want)
                        .all(|(&got, &w)| got == v.capabilities[w as usize].capability_id);
                if !same {
                    return Err(mismatch());
                }
            }
        }
        Ok(())
    }
}

/// The reads of one open or reload, gathered page by page as the JS layer receives them from
/// each database authority's adapter: the JS layer never holds more than one page. The pages
/// are kept as JSON text (records and non-empty relation streams), which becomes the
/// [`DatabaseRead`] of each provider.
#[derive(Default)]
pub struct ReadCollector {
    /// (provider ID, the read as JSON) of each provider read so far.
    done: Vec<(String, String)>,
    current: Option<Pending>,
}

/// A provider being read.
struct Pending {
    provider_id: String,
    /// The view's source fields and working directory at open, as a JSON object.
    context: String,
    /// The capability records so far, comma-separated JSON.
    records: String,
    /// Each record's capability ID, if a string: which streams the JS layer reads next.
    ids: Vec<Option<Box<str>>>,
    /// `"capabilityId":{kind:[…]}` entries, comma-separated, for capabilities with a non-empty
    /// stream.
    streams: String,
    /// The streams of the capability being read (its index, non-empty kinds and their items).
    node: Option<(u32, Vec<Stream>)>,
}

/// A relation stream read so far: its kind and items.
type Stream = (String, Vec<Value>);

fn items(json: &str) -> Result<Vec<Value>> {
    serde_json::from_str(json).map_err(|_| GraphError::new(Code::Internal))
}

fn text(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|_| GraphError::new(Code::Internal))
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
}

impl ReadCollector {
    fn pending(&mut self) -> Result<&mut Pending> {
        self.current
            .as_mut()
            .ok_or_else(|| GraphError::new(Code::Internal))
    }

    /// A read of `provider_id` starts; `context` is the view's source fields and the working
    /// directory, as a JSON object.
    pub fn begin(&mut self, provider_id: &str, context: &str) -> Result<()> {
        if !matches!(serde_json::from_str(context), Ok(Value::Object(_))) {
            return Err(GraphError::new(Code::Internal));
        }
        self.current = Some(Pending {
            provider_id: provider_id.to_owned(),
            context: context.to_owned(),
            records: String::new(),
            ids: Vec::new(),
            streams: String::new(),
            node: None,
        });
        Ok(())
    }

    /// One page of capability records (a JSON array); returns how many records were read.
    pub fn records(&mut self, page: &str) -> Result<usize> {
        let p = self.pending()?;
        for record in items(page)? {
            p.ids.push(
                record
                    .get("capabilityId")
                    .and_then(Value::as_str)
                    .map(Box::from),
            );
            if !p.records.is_empty() {
                p.records.push(',');
            }
            p.records.push_str(&text(&record)?);
        }
        Ok(p.ids.len())
    }

    /// The capability ID of record `index`, when it is a string (only those have streams).
    pub fn capability_id(&self, index: usize) -> Option<&str> {
        self.current.as_ref()?.ids.get(index)?.as_deref()
    }

    /// One page (a JSON array) of the `kind` stream of record `index`; records are read in
    /// order, each one's kinds in order.
    pub fn stream(&mut self, index: usize, kind: &str, page: &str) -> Result<()> {
        let page = items(page)?;
        let p = self.pending()?;
        let index = u32::try_from(index).map_err(|_| GraphError::new(Code::Internal))?;
        if p.node.as_ref().is_some_and(|(i, _)| *i != index) {
            p.flush_node()?;
        }
        let (_, kinds) = p.node.get_or_insert_with(|| (index, Vec::new()));
        if page.is_empty() {
            return Ok(());
        }
        match kinds.last_mut() {
            Some((k, listed)) if k == kind => listed.extend(page),
            _ => kinds.push((kind.to_owned(), page)),
        }
        Ok(())
    }

    /// The read finished; `after` is the view's source fields as read after the scans.
    pub fn end(&mut self, after: &str) -> Result<()> {
        let after: Value =
            serde_json::from_str(after).map_err(|_| GraphError::new(Code::Internal))?;
        let mut p = self
            .current
            .take()
            .ok_or_else(|| GraphError::new(Code::Internal))?;
        p.flush_node()?;
        // `{…context, "capabilities": […], "streams": {…}, "after": …}`
        let context = p.context.trim_end();
        let mut read =
            String::with_capacity(context.len() + p.records.len() + p.streams.len() + 64);
        read.push_str(&context[..context.len() - 1]);
        if context[1..context.len() - 1].trim().is_empty() {
            read.push_str(r#""capabilities":["#);
        } else {
            read.push_str(r#","capabilities":["#);
        }
        read.push_str(&p.records);
        read.push_str(r#"],"streams":{"#);
        read.push_str(&p.streams);
        read.push_str(r#"},"after":"#);
        read.push_str(&text(&after)?);
        read.push('}');
        self.done.push((p.provider_id, read));
        Ok(())
    }

    /// The read of `provider_id` failed: `failed` is `{ code }` or `{ reason }` (JSON).
    pub fn fail(&mut self, provider_id: &str, failed: &str) -> Result<()> {
        let failed: Value =
            serde_json::from_str(failed).map_err(|_| GraphError::new(Code::Internal))?;
        self.current = None;
        let read = text(&serde_json::json!({ "failed": failed }))?;
        self.done.push((provider_id.to_owned(), read));
        Ok(())
    }

    /// Every read, as the JSON object by provider ID the engine takes; `None` when no database
    /// authority was read.
    pub fn into_json(self) -> Result<Option<String>> {
        if self.done.is_empty() {
            return Ok(None);
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
        Ok(Some(out))
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

    /// The read the collector gathers for provider `p` from `pages` of records and the
    /// `(record index, kind, page)` stream pages.
    fn collected(pages: &[Value], streams: &[(usize, &str, Value)]) -> DatabaseRead {
        let context = json!({
            "provider": { "providerId": "p", "name": "P", "version": "1" },
            "sourceRevision": "r1",
        });
        let mut opened = context.clone();
        opened["cwd"] = json!("/srv");
        let mut c = ReadCollector::default();
        c.begin("p", &opened.to_string()).unwrap();
        for page in pages {
            c.records(&page.to_string()).unwrap();
        }
        for (i, kind, page) in streams {
            c.stream(*i, kind, &page.to_string()).unwrap();
        }
        c.end(&context.to_string()).unwrap();
        let json: Value = serde_json::from_str(&c.into_json().unwrap().unwrap()).unwrap();
        DatabaseRead::new(json["p"].clone())
    }

    fn rec(id: &str, extra: Value) -> Value {
        let mut r =
            json!({ "capabilityId": id, "name": id, "description": "D.", "whenToUse": "W." });
        if let (Value::Object(r), Value::Object(extra)) = (&mut r, extra) {
            r.extend(extra);
        }
        r
    }

    #[test]
    fn pages_gathered_one_at_a_time_validate_like_a_whole_read() {
        let roots = Roots {
            aliases: &[],
            default_root: false,
        };
        let pages = [
            json!([rec("a", json!({})), rec("b", json!({ "parents": ["a"] }))]),
            json!([rec("c", json!({ "parents": ["a"] }))]),
        ];
        // Every stream is read; empty ones leave nothing behind. `a`'s children come in two
        // pages.
        let mut streams = Vec::new();
        for i in 0..3 {
            for kind in Kind::ALL {
                let page = match (i, kind) {
                    (0, Kind::Children) => json!(["b"]),
                    (1 | 2, Kind::Parents) => json!(["a"]),
                    _ => json!([]),
                };
                streams.push((i, kind.as_str(), page));
                if (i, kind) == (0, Kind::Children) {
                    streams.push((i, kind.as_str(), json!(["c"])));
                }
            }
        }
        let read = collected(&pages, &streams);
        assert_eq!(read.knowledge_root(), None);
        let v = read.validate("p", &roots).unwrap();
        assert_eq!(v.capabilities.len(), 3);

        // A stream missing an edge the records declare is still caught.
        streams
            .retain(|(i, kind, page)| !(*i == 0 && *kind == "children" && page == &json!(["c"])));
        let e = collected(&pages, &streams)
            .validate("p", &roots)
            .err()
            .unwrap();
        assert_eq!(e.code(), Code::AdapterContractInvalid);
        assert_eq!(e.details().unwrap()["reason"], "children_stream_mismatch");

        // Nothing read from a database: nothing to hand over.
        assert_eq!(ReadCollector::default().into_json().unwrap(), None);
        let mut failed = ReadCollector::default();
        failed
            .fail("p", r#"{"reason":"invalid_store_page"}"#)
            .unwrap();
        let json: Value = serde_json::from_str(&failed.into_json().unwrap().unwrap()).unwrap();
        let e = DatabaseRead::new(json["p"].clone())
            .validate("p", &roots)
            .err()
            .unwrap();
        assert_eq!(e.details().unwrap()["reason"], "invalid_store_page");
    }

    #[test]
    fn a_relative_root_is_taken_from_the_directory_at_open() {
        let r = DatabaseRead::new(json!({ "knowledgeRootDir": "docs", "cwd": "/srv/host" }));
        assert_eq!(r.knowledge_root(), Some(PathBuf::from("/srv/host/docs")));
        let abs = DatabaseRead::new(json!({ "knowledgeRootDir": "/abs", "cwd": "/srv/host" }));
        assert_eq!(abs.knowledge_root(), Some(PathBuf::from("/abs")));
    }
}
