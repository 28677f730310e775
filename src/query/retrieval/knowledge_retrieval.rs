//! The knowledge retriever at work: the documents it may read through the engine while it
//! searches, and the checks on what it returns — its index evidence must prove it indexed
//! exactly the mapping sent and the content the engine sees now, and every hit must be the
//! bytes it claims to be. Nothing unproven becomes a result; stale evidence is never an empty one.

use super::backends::epoch_millis;
use crate::definitions::model::DocumentRef;
use crate::definitions::model::Locator;
use crate::error::{project_component_error, Code, Component, GraphError, Phase, Result};
use crate::hostcall::{Host, HostCall};
use crate::ids::{format_qualified, is_knowledge_id};
use crate::json::to_json;
use crate::knowledge::body::{identify, page_in, read_page, read_range, whole_in, Known};
use crate::knowledge::host::{HostBodies, Scanned};
use crate::knowledge::{content_type, locate, source, Located};
use crate::query::args::capability_ref;
use crate::query::reads::{whole_body, DocumentAbout};
use crate::query::views::{CapabilityId, ViewEntry};
use crate::scope::{Completeness, Meta, View};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// A target as the engine keeps it while the retriever runs.
pub(super) struct Held {
    pub(super) key: String,
    pub(super) position: usize,
    pub(super) node: u32,
    pub(super) doc: DocumentRef,
}

/// The content of a target as the engine read it during this call.
struct Observed {
    content_id: String,
    body: Body,
}

/// Where a hit's bytes are checked: a body held whole, a file identified without holding it
/// (read again at the hit's range, and only while unchanged), or a URL document streamed
/// without holding it: the hits' ranges are streamed again before they are checked.
enum Body {
    Bytes(Vec<u8>),
    File {
        at: Located,
        known: Known,
    },
    Streamed {
        total: u64,
    },
    /// A streamed document's bytes at the hits' ranges (`None`: it changed since its scan).
    Ranges(Option<Vec<Kept>>),
}

/// The bytes of one `[start, end)` range of a document.
type Kept = ((u64, u64), Vec<u8>);

impl Body {
    fn range(&self, start: u64, end: u64) -> Result<Option<Vec<u8>>> {
        match self {
            Body::Bytes(b) => Ok(b.get(start as usize..end as usize).map(<[u8]>::to_vec)),
            Body::File { at, known } => read_range(at, start, end, known),
            Body::Streamed { .. } => Ok(None),
            Body::Ranges(None) => Err(stale("content_changed")),
            Body::Ranges(Some(ranges)) => Ok(ranges
                .iter()
                .find(|(r, _)| *r == (start, end))
                .map(|(_, b)| b.clone())),
        }
    }
}

struct Access {
    /// Operations numbered up to this one started while `retrieve` ran; set when it settled.
    /// Their later questions (a URL read's next round, a scan's chunks) are still answered;
    /// an operation started after is expired.
    started: Option<u64>,
    observed: Vec<Option<Observed>>,
}

pub(super) struct Limits {
    pub(super) hits: u64,
    pub(super) max_snippet_bytes: u64,
    pub(super) max_targets: u64,
    pub(super) max_target_bytes: u64,
    /// `read.maxBytes`: the largest document the engine reads whole for a retriever.
    pub(super) read_max_bytes: u64,
    /// `read.maxResponseBytes`: the cap of one `access.read`.
    pub(super) read_max_response: u64,
    /// `queryKnowledge.timeoutMs`: how long the retriever may run.
    pub(super) timeout_ms: u64,
    /// `read.readerTimeoutMs`: how long one host reader call may take.
    pub(super) reader_timeout_ms: u64,
}

pub(super) struct KnowledgeSearch {
    pub(super) request: String,
    pub(super) view: View,
    pub(super) targets: Vec<Held>,
    pub(super) mapping: String,
    pub(super) limits: Limits,
    pub(super) has_readers: bool,
    pub(super) warnings: Vec<Value>,
    /// Every configured provider, in ID order: a target outside the view is in one of them
    /// (`CG_ACCESS_DENIED`) or in none (`CG_PROVIDER_NOT_FOUND`).
    pub(super) configured: Vec<String>,
    access: Mutex<Access>,
}

fn contract(reason: &str) -> GraphError {
    GraphError::new(Code::AdapterContractInvalid).detail("reason", reason)
}

fn stale(reason: &str) -> GraphError {
    GraphError::new(Code::IndexStale).detail("reason", reason)
}

fn is_content_id(s: &str) -> bool {
    s.len() == 18
        && s.starts_with("k:")
        && s[2..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn not_positive(field: &str) -> GraphError {
    GraphError::new(Code::InputInvalid)
        .detail("field", field)
        .detail("expected", "integer > 0")
}

fn safe_offset(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64).filter(|n| *n < (1u64 << 53))
}

#[derive(Serialize)]
struct Hit<'a> {
    id: CapabilityId<'a>,
    #[serde(rename = "knowledgeId")]
    knowledge_id: &'a str,
    #[serde(rename = "contentId")]
    content_id: &'a str,
    source: String,
    #[serde(rename = "startOffset")]
    start_offset: u64,
    #[serde(rename = "endOffset")]
    end_offset: u64,
    snippet: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(flatten)]
    about: DocumentAbout<'a>,
}

impl KnowledgeSearch {
    pub(super) fn new(
        request: String,
        view: View,
        targets: Vec<Held>,
        mapping: String,
        limits: Limits,
        has_readers: bool,
        warnings: Vec<Value>,
    ) -> KnowledgeSearch {
        let observed = targets.iter().map(|_| None).collect();
        KnowledgeSearch {
            request,
            view,
            targets,
            mapping,
            limits,
            has_readers,
            warnings,
            configured: Vec::new(),
            access: Mutex::new(Access {
                started: None,
                observed,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Access> {
        self.access.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An explicit target's provider (SPEC §14 D2): configured, then inside this call's view.
    fn in_view(&self, provider: &str) -> Result<()> {
        if self.view.position(provider).is_some() {
            return Ok(());
        }
        if self
            .configured
            .binary_search_by(|p| p.as_str().cmp(provider))
            .is_err()
        {
            return Err(GraphError::new(Code::ProviderNotFound));
        }
        Err(GraphError::new(Code::AccessDenied))
    }

    /// The target a `{ id, knowledgeId }` names: the checks of `access.read` and `access.scan`.
    fn target_of(&self, v: &Value) -> Result<usize> {
        let bad = || {
            GraphError::new(Code::InputInvalid)
                .detail("field", "target")
                .detail("expected", "{ id, knowledgeId }")
        };
        let m = v.as_object().ok_or_else(bad)?;
        let knowledge_id = m
            .get("knowledgeId")
            .and_then(Value::as_str)
            .filter(|k| is_knowledge_id(k))
            .ok_or_else(bad)?;
        let (p, c) = m
            .get("id")
            .ok_or_else(bad)
            .and_then(|id| capability_ref(id, "target.id", None))?;
        if m.keys().any(|k| k != "id" && k != "knowledgeId") {
            return Err(contract("retrieval_target_override"));
        }
        self.in_view(p)?;
        let key = format!("{}::{knowledge_id}", format_qualified(p, c));
        self.targets
            .binary_search_by(|t| t.key.as_str().cmp(&key))
            .map_err(|_| contract("retrieval_target_not_selected"))
    }

    /// Reads target `i` whole (at most `max_bytes`) and records what was seen.
    fn read(&self, i: usize, max_bytes: u64, host: &HostBodies) -> Result<Option<Value>> {
        let t = &self.targets[i];
        let s = self.view.snapshot(t.position);
        let Some((whole, content_type)) = whole_body(host, s, &t.doc, max_bytes)? else {
            return Ok(None);
        };
        let answer = json!({
            "text": whole.text,
            "contentType": content_type,
            "contentId": whole.content_id,
            "source": source(&t.doc),
        });
        self.lock().observed[i] = Some(Observed {
            content_id: whole.content_id,
            body: Body::Bytes(whole.text.into_bytes()),
        });
        Ok(Some(answer))
    }

    /// Identifies target `i` whole, of any size, and records it: a file, or a URL document
    /// streamed by its reader (handed on in chunks of at most `emit` bytes for a scan; a
    /// reader without `stream()` reads it whole, up to `read.maxResponseBytes`). The answer
    /// says whether the chunks were handed on while streaming (`streamed`).
    fn identify(&self, i: usize, host: &HostBodies, emit: Option<u64>) -> Result<Option<Value>> {
        let t = &self.targets[i];
        let s = self.view.snapshot(t.position);
        let mut streamed = false;
        let (content_id, total, content_type, body) = match &t.doc.locator {
            Locator::Http { .. } => {
                let (chunk, max) = (self.limits.read_max_bytes, self.limits.read_max_response);
                match host.scan(s, &t.doc, chunk, emit, max)? {
                    None => return Ok(None),
                    Some(Scanned::Streamed {
                        content_id,
                        total,
                        content_type,
                    }) => {
                        streamed = true;
                        (content_id, total, content_type, Body::Streamed { total })
                    }
                    Some(Scanned::Whole(body)) => {
                        let whole = whole_in(body.bytes, max)?;
                        let bytes = whole.text.into_bytes();
                        let total = bytes.len() as u64;
                        (
                            whole.content_id,
                            total,
                            body.content_type,
                            Body::Bytes(bytes),
                        )
                    }
                }
            }
            Locator::RelativeFile { .. } => {
                let at = locate(s, &t.doc, host.roots())?;
                let (known, total) = identify(&at)?;
                let content_type = content_type(&t.doc).to_owned();
                (
                    known.content_id.clone(),
                    total,
                    content_type,
                    Body::File { at, known },
                )
            }
        };
        let answer = json!({
            "contentId": content_id,
            "totalBytes": total,
            "contentType": content_type,
            "source": source(&t.doc),
            "streamed": streamed,
        });
        self.lock().observed[i] = Some(Observed { content_id, body });
        Ok(Some(answer))
    }

    /// Streams again each URL document the engine identified without holding it and the
    /// retriever's `hits` (as it answered them) point into, keeping only their ranges, so that
    /// its hits can be checked. At most `maxHits` hits count; one that is malformed is left to
    /// the checks of the answer. `Ok(false)` while the host's readers still have to stream.
    fn read_ranges(&self, hits: Option<&Value>, host: &HostBodies) -> Result<bool> {
        let mut wanted: BTreeMap<usize, Vec<(u64, u64)>> = BTreeMap::new();
        let hits = hits
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        {
            let access = self.lock();
            for h in hits.iter().take(self.limits.hits as usize) {
                let Ok(i) = self
                    .target_of(&json!({ "id": h.get("id"), "knowledgeId": h.get("knowledgeId") }))
                else {
                    continue;
                };
                let Some(Observed {
                    body: Body::Streamed { total },
                    ..
                }) = &access.observed[i]
                else {
                    continue;
                };
                match (
                    safe_offset(h.get("startOffset")),
                    safe_offset(h.get("endOffset")),
                ) {
                    (Some(a), Some(b))
                        if a <= b && b <= *total && b - a <= self.limits.max_snippet_bytes =>
                    {
                        wanted.entry(i).or_default().push((a, b));
                    }
                    _ => {}
                }
            }
        }
        let mut done = true;
        for (i, ranges) in wanted {
            let t = &self.targets[i];
            let s = self.view.snapshot(t.position);
            let chunk = self.limits.read_max_bytes;
            let Some((bytes, content_id)) = host.ranges(s, &t.doc, chunk, &ranges)? else {
                done = false;
                continue;
            };
            let mut access = self.lock();
            let Some(observed) = access.observed[i].as_mut() else {
                continue;
            };
            let kept = (observed.content_id == content_id).then(|| {
                let mut rest = bytes.as_slice();
                ranges
                    .iter()
                    .map(|&(a, b)| {
                        let (range, tail) = rest.split_at(((b - a) as usize).min(rest.len()));
                        rest = tail;
                        ((a, b), range.to_vec())
                    })
                    .collect()
            });
            observed.body = Body::Ranges(kept);
        }
        Ok(done)
    }

    /// The chunk of an identified target that starts at `offset`: at most `chunk` bytes, cut
    /// on a character boundary.
    fn chunk(&self, i: usize, offset: u64, chunk: u64) -> Result<Value> {
        let access = self.lock();
        let observed = access.observed[i]
            .as_ref()
            .ok_or_else(|| GraphError::new(Code::Internal))?;
        let page = match &observed.body {
            Body::Bytes(b) => page_in(b, offset, chunk, None)?,
            Body::File { at, known } => read_page(at, offset, chunk, Some(known))?,
            // A streamed scan handed its chunks on as they came.
            Body::Streamed { .. } | Body::Ranges(_) => return Err(GraphError::new(Code::Internal)),
        };
        Ok(json!({ "text": page.text, "end": page.end }))
    }

    fn access_read(&self, q: &Map<String, Value>, host: &HostBodies) -> Result<Option<Value>> {
        let operation = q.get("operation").and_then(Value::as_u64);
        if self
            .lock()
            .started
            .is_some_and(|last| operation.is_none_or(|op| op > last))
        {
            return Err(contract("retrieval_access_expired"));
        }
        let op = q.get("op").and_then(Value::as_str);
        let target = self.target_of(q.get("target").unwrap_or(&Value::Null))?;
        let positive = |key: &str, field: &str| -> Result<Option<u64>> {
            match q.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => safe_offset(Some(v))
                    .filter(|n| *n > 0)
                    .map(Some)
                    .ok_or_else(|| not_positive(field)),
            }
        };
        let chunk = || -> Result<u64> {
            Ok(positive("chunkBytes", "options.chunkBytes")?
                .unwrap_or(self.limits.read_max_bytes)
                .min(self.limits.read_max_bytes))
        };
        match op {
            Some("read") => {
                let max = positive("maxBytes", "budget.maxBytes")?
                    .ok_or_else(|| not_positive("budget.maxBytes"))?;
                self.read(target, max.min(self.limits.read_max_response), host)
            }
            Some("scan") => {
                let chunk = chunk()?;
                Ok(self.identify(target, host, Some(chunk))?.map(|mut a| {
                    a["chunkBytes"] = chunk.into();
                    a
                }))
            }
            _ => {
                let offset = q.get("offset").and_then(Value::as_u64).unwrap_or_default();
                self.chunk(target, offset, chunk()?).map(Some)
            }
        }
    }

    /// Reads every target the retriever did not read itself: the evidence is checked against
    /// all of them.
    fn read_rest(&self, host: &HostBodies) -> Result<bool> {
        let missing: Vec<usize> = {
            let access = self.lock();
            (0..self.targets.len())
                .filter(|i| access.observed[*i].is_none())
                .collect()
        };
        let mut done = true;
        for i in missing {
            done &= self
                .identify(i, host, None)
                .map_err(|e| e.with_phase(Phase::Query))?
                .is_some();
        }
        Ok(done)
    }

    /// Whether a target was identified without holding it: the retriever's hits in it are
    /// checked after [`KnowledgeSearch::read_ranges`].
    fn any_streamed(&self) -> bool {
        self.lock().observed.iter().any(|o| {
            matches!(
                o,
                Some(Observed {
                    body: Body::Streamed { .. },
                    ..
                })
            )
        })
    }

    /// The evidence's `observedAt` once every check passed.
    fn evidence(&self, v: Option<&Value>, access: &Access) -> Result<String> {
        let e = v
            .and_then(Value::as_object)
            .ok_or_else(|| stale("evidence_missing"))?;
        let mut expected: BTreeMap<&str, &str> = BTreeMap::new();
        for t in &self.targets {
            let s = self.view.snapshot(t.position);
            expected.insert(s.provider_id(), &s.static_revision);
        }
        let given: Option<BTreeMap<&str, &str>> = e
            .get("staticRevisionByProvider")
            .and_then(Value::as_object)
            .and_then(|m| {
                m.iter()
                    .map(|(k, v)| v.as_str().map(|v| (k.as_str(), v)))
                    .collect()
            });
        if given.as_ref() != Some(&expected) {
            return Err(GraphError::new(Code::RevisionMismatch));
        }
        if e.get("mappingRevision").and_then(Value::as_str) != Some(self.mapping.as_str()) {
            return Err(stale("mapping_revision_mismatch"));
        }
        if e.get("freshness").and_then(Value::as_str) != Some("current") {
            return Err(stale("freshness_not_current"));
        }
        let observed_at = e
            .get("observedAt")
            .and_then(Value::as_str)
            .filter(|s| epoch_millis(s).is_some_and(|t| t <= now_millis() + 1000))
            .ok_or_else(|| stale("observed_at_invalid"))?;
        let config = e
            .get("sourceConfigRevision")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        if config.is_none() || config != e.get("indexedConfigRevision").and_then(Value::as_str) {
            return Err(stale("config_revision_mismatch"));
        }
        let documents = e
            .get("documents")
            .and_then(Value::as_array)
            .filter(|d| d.len() == self.targets.len())
            .ok_or_else(|| stale("documents_mismatch"))?;
        let mut proven = vec![false; self.targets.len()];
        for d in documents {
            let i = self
                .target_of(&json!({ "id": d.get("id"), "knowledgeId": d.get("knowledgeId") }))
                .map_err(|_| stale("document_not_a_target"))?;
            if proven[i] {
                return Err(stale("document_duplicate"));
            }
            let source_id = d.get("sourceContentId").and_then(Value::as_str);
            let source_id = source_id
                .filter(|s| is_content_id(s))
                .ok_or_else(|| stale("content_id_invalid"))?;
            if d.get("indexedContentId").and_then(Value::as_str) != Some(source_id)
                || access.observed[i].as_ref().map(|o| o.content_id.as_str()) != Some(source_id)
            {
                return Err(stale("content_changed"));
            }
            proven[i] = true;
        }
        Ok(observed_at.to_owned())
    }

    /// One hit: the target it belongs to, its score, or the warning that drops it.
    fn hit(&self, v: &Value, access: &Access) -> Result<(usize, Option<f64>, u64)> {
        let m = v
            .as_object()
            .ok_or_else(|| contract("knowledge_hit_invalid"))?;
        let snippet = m
            .get("snippet")
            .and_then(Value::as_str)
            .ok_or_else(|| contract("knowledge_hit_invalid"))?;
        if snippet.len() as u64 > self.limits.max_snippet_bytes {
            return Err(GraphError::new(Code::ResultTooLarge)
                .detail("budget", "queryKnowledge.maxSnippetBytes")
                .detail("limit", self.limits.max_snippet_bytes));
        }
        let (p, _) = m
            .get("id")
            .and_then(|id| capability_ref(id, "id", None).ok())
            .ok_or_else(|| contract("knowledge_hit_invalid"))?;
        self.in_view(p)?;
        let mismatch = || contract("knowledge_hit_mismatch");
        let i = self
            .target_of(&json!({ "id": m.get("id"), "knowledgeId": m.get("knowledgeId") }))
            .map_err(|_| mismatch())?;
        let observed = access.observed[i].as_ref().ok_or_else(mismatch)?;
        if m.get("contentId").and_then(Value::as_str) != Some(observed.content_id.as_str())
            || m.get("source").and_then(Value::as_str)
                != Some(source(&self.targets[i].doc).as_str())
        {
            return Err(mismatch());
        }
        let (start, end) = match (
            safe_offset(m.get("startOffset")),
            safe_offset(m.get("endOffset")),
        ) {
            (Some(s), Some(e)) if e >= s && e - s == snippet.len() as u64 => {
                (s as usize, e as usize)
            }
            _ => return Err(mismatch()),
        };
        let score = match m.get("score") {
            None => None,
            Some(s) => Some(s.as_f64().filter(|f| f.is_finite()).ok_or_else(mismatch)?),
        };
        // A file that changed since the evidence was checked proves nothing any more.
        let bytes = observed
            .body
            .range(start as u64, end as u64)
            .map_err(|_| stale("content_changed"))?;
        if bytes.as_deref() != Some(snippet.as_bytes()) {
            return Err(contract("knowledge_hit_content_mismatch"));
        }
        Ok((i, score, start as u64))
    }
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl HostCall for KnowledgeSearch {
    fn host(&self) -> Host {
        Host::KnowledgeRetriever
    }

    fn request(&self) -> &str {
        &self.request
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(self.limits.timeout_ms)
    }

    /// `{op: "read"|"scan"|"chunk", operation, target, maxBytes?, chunkBytes?, offset?}` from
    /// the retriever's access (`operation` numbers its reads and scans from 1);
    /// `{op: "expire", started}` once it settled, with the number of operations it started
    /// (answers `{unread, readerTimeoutMs}`: how long those may still take); `{op: "rest"}`
    /// before its answer is judged.
    fn ask(
        &self,
        question: &str,
        answers: Option<&str>,
        bodies: Vec<Option<Vec<u8>>>,
    ) -> Result<String> {
        let q: Map<String, Value> =
            serde_json::from_str(question).map_err(|_| GraphError::new(Code::Internal))?;
        let host = HostBodies::new(self.has_readers, answers, bodies)
            .with_reader_timeout(self.limits.reader_timeout_ms);
        let answer = match q.get("op").and_then(Value::as_str) {
            Some("read" | "scan" | "chunk") => self
                .access_read(&q, &host)
                .map(|a| a.map(|a| a.to_string()))
                .map_err(|e| e.with_phase(Phase::Query)),
            Some("rest") => self
                .read_rest(&host)
                .map(|done| done.then(|| format!(r#"{{"ranges":{}}}"#, self.any_streamed()))),
            Some("ranges") => self
                .read_ranges(q.get("hits"), &host)
                .map_err(|e| e.with_phase(Phase::Query))
                .map(|done| done.then(|| "{}".to_owned())),
            Some("expire") => {
                let mut access = self.lock();
                let started = q.get("started").and_then(Value::as_u64).unwrap_or_default();
                access.started.get_or_insert(started);
                // How many targets the engine still has to read before the answer is judged.
                let unread = access.observed.iter().filter(|o| o.is_none()).count();
                let ms = self.limits.reader_timeout_ms;
                Ok(Some(format!(
                    r#"{{"unread":{unread},"readerTimeoutMs":{ms}}}"#
                )))
            }
            _ => Err(GraphError::new(Code::Internal)),
        };
        if let Some(requests) = host.pending() {
            return Ok(format!("?{requests}"));
        }
        answer.and_then(|a| a.ok_or_else(|| GraphError::new(Code::Internal)))
    }

    fn finish(&self, output: &str) -> Result<String> {
        let page = || contract("knowledge_page_invalid");
        let v: Value = serde_json::from_str(output).map_err(|_| page())?;
        let hits = v
            .get("hits")
            .and_then(Value::as_array)
            .filter(|h| h.len() as u64 <= self.limits.hits)
            .ok_or_else(page)?;
        let access = self.lock();
        let observed_at = self.evidence(v.get("evidence"), &access)?;
        let mut meta = Meta::of(&self.view, false);
        meta.warnings = self.warnings.clone();
        let mut accepted: Vec<(usize, Option<f64>, u64, &str)> = Vec::new();
        for (i, h) in hits.iter().enumerate() {
            match self.hit(h, &access) {
                Ok((t, score, start)) => {
                    accepted.push((t, score, start, h["snippet"].as_str().unwrap_or_default()))
                }
                Err(e) => meta.warnings.push(e.detail("hitIndex", i).to_warning()),
            }
        }
        let items: Vec<Hit> = accepted
            .iter()
            .map(|&(t, score, start, snippet)| {
                let held = &self.targets[t];
                let s = self.view.snapshot(held.position);
                let d = &held.doc;
                Hit {
                    id: CapabilityId::of(s, held.node),
                    knowledge_id: &d.knowledge_id,
                    content_id: access.observed[t]
                        .as_ref()
                        .map(|o| o.content_id.as_str())
                        .unwrap_or_default(),
                    source: source(d),
                    start_offset: start,
                    end_offset: start + snippet.len() as u64,
                    snippet,
                    score,
                    about: DocumentAbout::of(d),
                }
            })
            .collect();
        if !meta.warnings.is_empty() {
            meta.completeness = Completeness::Partial;
        }
        let l = &self.limits;
        meta.extra.insert(
            "budgets".into(),
            json!({
                "queryKnowledge.maxHits": l.hits,
                "queryKnowledge.maxSnippetBytes": l.max_snippet_bytes,
                "queryKnowledge.maxTargets": l.max_targets,
                "queryKnowledge.maxTargetBytes": l.max_target_bytes,
            }),
        );
        let mut nodes: Vec<(usize, u32)> =
            self.targets.iter().map(|t| (t.position, t.node)).collect();
        nodes.dedup();
        let viewed: Vec<ViewEntry> = nodes
            .iter()
            .map(|&(p, n)| ViewEntry::new(self.view.snapshot(p), n))
            .collect();
        let knowledge: Vec<Value> = items
            .iter()
            .map(
                |h| json!({ "id": h.id, "knowledgeId": h.knowledge_id, "contentId": h.content_id }),
            )
            .collect();
        meta.extra.insert(
            "view".into(),
            json!({ "capabilities": viewed, "knowledge": knowledge }),
        );
        let status = json!({
            "mappingRevision": self.mapping,
            "observedAt": observed_at,
            "freshness": "current",
            "validatedDocuments": self.targets.len(),
        });
        Ok(format!(
            r#"{{"items":{},"knowledgeState":"searched","indexStatus":{},"meta":{}}}"#,
            to_json(&items),
            status,
            meta.to_json()
        ))
    }

    fn fail(&self, code: Option<&str>, _next_action: Option<&str>) -> GraphError {
        project_component_error(Component::KnowledgeRetriever, code, Phase::Query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ids_are_k_and_16_lowercase_hex() {
        assert!(is_content_id("k:0123456789abcdef"));
        for bad in [
            "k:0123456789ABCDEF",
            "k:0123",
            "x:0123456789abcdef",
            &format!("k:{}", "a".repeat(64)),
        ] {
            assert!(!is_content_id(bad), "{bad}");
        }
    }

    #[test]
    fn timestamps_become_epoch_milliseconds() {
        assert_eq!(epoch_millis("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            epoch_millis("2000-03-01T00:00:00.5Z"),
            Some(951_868_800_500)
        );
        assert_eq!(
            epoch_millis("2026-11-30T12:00:00+01:00"),
            epoch_millis("2026-11-30T11:00:00Z")
        );
        assert_eq!(
            epoch_millis("2024-02-29T00:00:00Z").map(|t| t % 86_400_000),
            Some(0)
        );
        for bad in [
            "2023-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "yesterday",
        ] {
            assert_eq!(epoch_millis(bad), None, "{bad}");
        }
    }
}
