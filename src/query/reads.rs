//! The four body reads: `readDocuments`, `readSpecification` (whole documents, in slots) and
//! `readDocumentPage`, `readSpecificationPage` (byte ranges of any size of document).

use super::args::{clamped_integer, invalid, named_capability, target_list, too_large, Args};
use super::page::Rows;
use super::views::{CapabilityId, ViewEntry};
use super::Call;
use crate::cursor::{self, Binding};
use crate::definitions::locale::normalize_locale;
use crate::definitions::model::Locator;
use crate::definitions::model::{DocumentRef, KnowledgeRef};
use crate::error::{Code, GraphError, Phase, Result};
use crate::ids::{format_qualified, is_id, is_knowledge_id};
use crate::json::to_json;
use crate::knowledge::body::{read_page_until, read_whole, whole_in, Known, Page, Whole};
use crate::knowledge::host::{HostBodies, PageRange};
use crate::knowledge::{content_type, locate, source};
use crate::scope::{Completeness, Meta, View};
use crate::snapshot::ProviderSnapshot;
use serde::Serialize;
use serde_json::{json, Value};

/// Values of one filter dimension (`knowledgeIds`, `roles`, `locales`); `None` when absent.
pub(super) struct Filters {
    pub(super) knowledge_ids: Option<Vec<String>>,
    roles: Option<Vec<String>>,
    locales: Option<Vec<String>>,
}

impl Filters {
    pub(super) fn parse(args: &Args, max_values: u64) -> Result<Filters> {
        let dimension =
            |key: &str, check: &dyn Fn(&str) -> Option<String>| -> Result<Option<Vec<String>>> {
                let Some(values) = args.array(key)? else {
                    return Ok(None);
                };
                if values.len() as u64 > max_values {
                    return Err(too_large(key, max_values));
                }
                values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        v.as_str().and_then(check).ok_or_else(|| {
                            invalid(
                                &format!("{key}[{i}]"),
                                if key == "locales" {
                                    "BCP 47 language tag"
                                } else {
                                    "knowledge ID"
                                },
                            )
                        })
                    })
                    .collect::<Result<Vec<_>>>()
                    .map(Some)
            };
        let id = |s: &str| is_knowledge_id(s).then(|| s.to_owned());
        Ok(Filters {
            knowledge_ids: dimension("knowledgeIds", &id)?,
            roles: dimension("roles", &id)?,
            locales: dimension("locales", &normalize_locale)?,
        })
    }

    /// No dimension given at all.
    pub(super) fn is_empty(&self) -> bool {
        self.knowledge_ids.is_none() && self.roles.is_none() && self.locales.is_none()
    }

    /// Roles and locales: any value within a dimension, every dimension given.
    pub(super) fn keeps(&self, d: &DocumentRef) -> bool {
        self.roles.as_ref().is_none_or(|r| r.contains(&d.role))
            && self
                .locales
                .as_ref()
                .is_none_or(|l| d.locale.as_ref().is_some_and(|x| l.contains(x)))
    }

    pub(super) fn names(&self, id: &str) -> bool {
        self.knowledge_ids
            .as_ref()
            .is_some_and(|k| k.iter().any(|x| x == id))
    }
}

#[derive(Serialize)]
struct DocumentRead<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<CapabilityId<'a>>,
    #[serde(rename = "providerId", skip_serializing_if = "Option::is_none")]
    provider_id: Option<&'a str>,
    #[serde(rename = "knowledgeId")]
    knowledge_id: &'a str,
    #[serde(rename = "contentId")]
    content_id: String,
    source: String,
    #[serde(rename = "contentType")]
    content_type: String,
    text: String,
    #[serde(rename = "byteLength")]
    byte_length: usize,
    #[serde(flatten)]
    about: DocumentAbout<'a>,
}

/// What the definitions say about a document, as every read and search result reports it.
#[derive(Serialize)]
pub(super) struct DocumentAbout<'a> {
    role: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    locale: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'a str>,
    #[serde(rename = "canonicalUrl", skip_serializing_if = "Option::is_none")]
    canonical_url: Option<&'a str>,
}

impl<'a> DocumentAbout<'a> {
    pub(super) fn of(d: &'a DocumentRef) -> DocumentAbout<'a> {
        DocumentAbout {
            role: &d.role,
            locale: d.locale.as_deref(),
            title: d.title.as_deref(),
            summary: d.summary.as_deref(),
            canonical_url: d.canonical_url.as_deref(),
        }
    }
}

/// One slot of a whole-document read.
enum Slot<'a> {
    Read {
        snapshot: &'a ProviderSnapshot,
        /// The capability read for, `None` for a specification document.
        node: Option<u32>,
        doc: &'a DocumentRef,
    },
    Failed(GraphError),
}

struct Batch {
    rows: Rows,
    failed: bool,
    viewed: Vec<Value>,
    knowledge: Vec<Value>,
}

/// A whole body and its content type: from its file, or from a host reader for a URL
/// document (`None` until the host answered).
pub(super) fn whole_body(
    host: &HostBodies,
    s: &ProviderSnapshot,
    doc: &DocumentRef,
    max_bytes: u64,
) -> Result<Option<(Whole, String)>> {
    if let Locator::Http { .. } = doc.locator {
        return host
            .body(s, doc, max_bytes)?
            .map(|b| Ok((whole_in(b.bytes, max_bytes)?, b.content_type)))
            .transpose();
    }
    let whole = read_whole(&locate(s, doc, host.roots())?, max_bytes, host.control())?;
    Ok(Some((whole, content_type(doc).to_owned())))
}

fn answer_too_large(max_bytes: u64) -> GraphError {
    GraphError::new(Code::ResultTooLarge)
        .detail("budget", "read.maxResponseBytes")
        .detail("limit", max_bytes)
}

/// Reads every slot and prints it; a slot's failure stays in its slot (phase `document`). The
/// answer is measured as it grows, a body's printed length before it is printed (escapes can
/// make it several times its bytes): once it cannot fit `max_bytes` the call stops there.
fn read_slots(slots: Vec<Slot>, max_bytes: u64, host: &HostBodies) -> Result<Batch> {
    let mut batch = Batch {
        rows: Rows::new(),
        failed: false,
        viewed: Vec::new(),
        knowledge: Vec::new(),
    };
    for (i, slot) in slots.into_iter().enumerate() {
        let outcome = match slot {
            Slot::Failed(e) => Err(e),
            Slot::Read {
                snapshot,
                node,
                doc,
            } => {
                if let Some(n) = node {
                    batch.viewed.push(json!(ViewEntry::new(snapshot, n)));
                }
                let body = whole_body(host, snapshot, doc, max_bytes)
                    .and_then(|body| body.ok_or_else(|| GraphError::new(Code::Internal)));
                if let Ok((whole, _)) = &body {
                    let printed = crate::json::quoted_len(&whole.text) as u64;
                    if batch.rows.len() as u64 + printed > max_bytes {
                        return Err(answer_too_large(max_bytes));
                    }
                }
                body.map(|(whole, content_type)| {
                        let id = node.map(|n| CapabilityId::of(snapshot, n));
                        if let Some(id) = &id {
                            batch.knowledge.push(json!({ "id": id, "knowledgeId": doc.knowledge_id, "contentId": whole.content_id }));
                        }
                        to_json(&DocumentRead {
                            provider_id: node.is_none().then(|| snapshot.provider_id()),
                            id,
                            knowledge_id: &doc.knowledge_id,
                            content_id: whole.content_id,
                            source: source(doc),
                            content_type,
                            byte_length: whole.text.len(),
                            text: whole.text,
                            about: DocumentAbout::of(doc),
                        })
                    })
            }
        };
        match outcome {
            Ok(value) => {
                batch.rows.push(&format!(
                    r#"{{"inputIndex":{i},"ok":true,"value":{value}}}"#
                ));
                if batch.rows.len() as u64 > max_bytes {
                    return Err(answer_too_large(max_bytes));
                }
            }
            Err(e) => {
                batch.failed = true;
                let e = e.in_verb(Phase::Document);
                batch.rows.push(&format!(
                    r#"{{"inputIndex":{i},"ok":false,"error":{}}}"#,
                    e.to_json()
                ));
            }
        }
    }
    Ok(batch)
}

fn read_budgets(call: &Call) -> Value {
    let b = &call.budgets.read;
    json!({
        "read.maxBytes": b.max_bytes,
        "read.maxDocumentsPerCall": b.max_documents_per_call,
        "read.maxSelected": b.max_selected,
        "read.maxFilterValuesPerDimension": b.max_filter_values_per_dimension,
        "read.maxResponseBytes": b.max_response_bytes,
    })
}

fn too_many_documents(limit: u64) -> GraphError {
    too_large("documents", limit)
}

fn finish(batch: Batch, state: &str, mut meta: Meta, max_bytes: u64) -> Result<String> {
    meta.completeness = if batch.failed {
        Completeness::Partial
    } else {
        Completeness::Complete
    };
    let out = format!(
        r#"{{"results":{},"knowledgeState":"{state}","meta":{}}}"#,
        batch.rows.finish(),
        meta.to_json()
    );
    if out.len() as u64 > max_bytes {
        return Err(answer_too_large(max_bytes));
    }
    Ok(out)
}

const READ_KEYS: [&str; 7] = [
    "selected",
    "knowledgeIds",
    "roles",
    "locales",
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
];

pub fn read_documents(call: &Call, json: &str, host: &HostBodies) -> Result<String> {
    let args = Args::parse(json, &READ_KEYS)?;
    let budget = &call.budgets.read;
    let selected = target_list(&args, "selected", budget.max_selected)?;
    let filters = Filters::parse(&args, budget.max_filter_values_per_dimension)?;
    let (refs, view) = call.slot_targets(&args, "selected", selected)?;

    let mut slots: Vec<Slot> = Vec::new();
    let mut declared: Vec<&str> = Vec::new();
    let mut collections: Vec<&str> = Vec::new();
    let mut seen: Vec<(usize, u32, &str)> = Vec::new();
    let mut any_knowledge = false;
    for r in &refs {
        let (p, node) = match r
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|&(p, c)| call.locate(&view, p, c))
        {
            Ok(found) => found,
            Err(e) => {
                slots.push(Slot::Failed(e));
                continue;
            }
        };
        let snapshot = view.snapshot(p);
        let knowledge = &snapshot.capability(node).knowledge;
        any_knowledge |= !knowledge.is_empty();
        if knowledge.is_empty() && filters.knowledge_ids.is_none() {
            slots.push(Slot::Failed(GraphError::new(Code::KnowledgeNotAssociated)));
            continue;
        }
        for k in knowledge {
            let docs: Vec<&DocumentRef> = match k {
                KnowledgeRef::Document(d) => {
                    declared.push(&d.knowledge_id);
                    if filters.knowledge_ids.is_none() || filters.names(&d.knowledge_id) {
                        vec![d]
                    } else {
                        vec![]
                    }
                }
                // Members are read only when named; a collection is never read whole.
                KnowledgeRef::Collection(c) => {
                    declared.push(&c.knowledge_id);
                    collections.push(&c.knowledge_id);
                    c.members
                        .iter()
                        .inspect(|m| declared.push(&m.knowledge_id))
                        .filter(|m| filters.names(&m.knowledge_id))
                        .collect()
                }
            };
            for d in docs.into_iter().filter(|d| filters.keeps(d)) {
                if seen.contains(&(p, node, d.knowledge_id.as_str())) {
                    continue;
                }
                seen.push((p, node, &d.knowledge_id));
                slots.push(Slot::Read {
                    snapshot,
                    node: Some(node),
                    doc: d,
                });
            }
        }
    }
    let document_slots = slots
        .iter()
        .filter(|s| matches!(s, Slot::Read { .. }))
        .count();
    // Requested IDs that name a collection, or that no selected capability declares.
    let mut reported: Vec<&str> = Vec::new();
    for id in filters.knowledge_ids.iter().flatten() {
        if reported.contains(&id.as_str()) {
            continue;
        }
        reported.push(id);
        if collections.contains(&id.as_str()) {
            slots.push(Slot::Failed(
                invalid(
                    "knowledgeIds",
                    "document ID (collections are listed with listKnowledgeMembers)",
                )
                .detail("knowledgeId", id.as_str()),
            ));
        } else if !declared.contains(&id.as_str()) {
            slots.push(Slot::Failed(
                GraphError::new(Code::DocumentNotFound).detail("knowledgeId", id.as_str()),
            ));
        }
    }
    if document_slots as u64 > budget.max_documents_per_call {
        return Err(too_many_documents(budget.max_documents_per_call));
    }
    let state = if document_slots > 0 {
        "matched"
    } else if any_knowledge {
        "filtered_empty"
    } else {
        "not_associated"
    };
    let batch = read_slots(slots, budget.max_response_bytes, host)?;
    let mut meta = Meta::of(&view, false);
    meta.extra.insert("budgets".into(), read_budgets(call));
    meta.extra.insert(
        "view".into(),
        json!({ "capabilities": batch.viewed, "knowledge": batch.knowledge }),
    );
    finish(batch, state, meta, budget.max_response_bytes)
}

/// A provider named explicitly by a read: valid ID → configured → in scope.
fn provider_target<'v>(call: &Call, view: &'v View, id: &str) -> Result<&'v ProviderSnapshot> {
    if !call.state.providers.contains_key(id) {
        return Err(GraphError::new(Code::ProviderNotFound));
    }
    let p = view
        .position(id)
        .ok_or_else(|| GraphError::new(Code::AccessDenied))?;
    Ok(view.snapshot(p))
}

fn provider_arg<'a>(args: &'a Args, call: &'a Call) -> Result<&'a str> {
    match (args.string("providerId")?, call.bound) {
        (Some(p), _) if is_id(p) => Ok(p),
        (None, Some(p)) => Ok(p),
        _ => Err(invalid("providerId", "provider ID")),
    }
}

pub fn read_specification(call: &Call, json: &str, host: &HostBodies) -> Result<String> {
    let keys = [
        "providerId",
        "knowledgeIds",
        "roles",
        "locales",
        "requestProviderScope",
        "requiredStaticRevision",
        "requiredStaticRevisionByProvider",
    ];
    let args = Args::parse(json, &keys)?;
    let budget = &call.budgets.read;
    let provider = provider_arg(&args, call)?;
    let filters = Filters::parse(&args, budget.max_filter_values_per_dimension)?;
    let view = call.view_of_one(&args, Some(provider))?;
    let snapshot = provider_target(call, &view, provider)?;
    let docs = snapshot
        .provider
        .specification
        .as_ref()
        .map_or(&[][..], |s| &s.documents[..]);
    let mut slots: Vec<Slot> = docs
        .iter()
        .filter(|d| filters.knowledge_ids.is_none() || filters.names(&d.knowledge_id))
        .filter(|d| filters.keeps(d))
        .map(|doc| Slot::Read {
            snapshot,
            node: None,
            doc,
        })
        .collect();
    let document_slots = slots.len();
    if document_slots as u64 > budget.max_documents_per_call {
        return Err(too_many_documents(budget.max_documents_per_call));
    }
    let mut reported: Vec<&str> = Vec::new();
    for id in filters.knowledge_ids.iter().flatten() {
        if !reported.contains(&id.as_str()) && !docs.iter().any(|d| d.knowledge_id == *id) {
            slots.push(Slot::Failed(
                GraphError::new(Code::DocumentNotFound).detail("knowledgeId", id.as_str()),
            ));
        }
        reported.push(id);
    }
    let state = if docs.is_empty() {
        "not_associated"
    } else if document_slots > 0 {
        "matched"
    } else {
        "filtered_empty"
    };
    let batch = read_slots(slots, budget.max_response_bytes, host)?;
    let mut meta = Meta::of(&view, false);
    meta.extra.insert("budgets".into(), read_budgets(call));
    finish(batch, state, meta, budget.max_response_bytes)
}

/// The cursor position of a page: where the next page starts, and what the document was.
#[derive(Serialize, serde::Deserialize)]
struct After {
    offset: u64,
    #[serde(rename = "contentId")]
    content_id: String,
    file: String,
}

const PAGE_KEYS: [&str; 11] = [
    "capability",
    "capabilityId",
    "signal",
    "providerId",
    "knowledgeId",
    "startOffset",
    "maxBytes",
    "cursor",
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
];

/// What both page reads share once their document is found.
struct PageTarget<'a> {
    snapshot: &'a ProviderSnapshot,
    node: Option<u32>,
    doc: &'a DocumentRef,
}

/// Where a page starts and how long it may be, checked before any target is looked up.
struct PageArgs<'a> {
    max_bytes: u64,
    start: Option<u64>,
    cursor: Option<&'a str>,
}

fn page_args<'a>(args: &'a Args, call: &Call) -> Result<PageArgs<'a>> {
    let budget = &call.budgets.read;
    let max_bytes = match args.get("maxBytes")? {
        None => budget.max_bytes,
        Some(v) => clamped_integer(v, "maxBytes", 1, u64::MAX >> 11)?,
    };
    if max_bytes > budget.max_bytes {
        return Err(too_large("maxBytes", budget.max_bytes));
    }
    let start = args
        .get("startOffset")?
        .map(|v| clamped_integer(v, "startOffset", 0, u64::MAX >> 11))
        .transpose()?;
    let cursor = args.string("cursor")?;
    if start.is_some() && cursor.is_some() {
        return Err(invalid("cursor", "either cursor or startOffset"));
    }
    // The JS layer keeps the caller's AbortSignal and leaves its marker here.
    if let Some(v) = args.get("signal")? {
        if v.get(crate::config::HOST_KEY)
            .and_then(serde_json::Value::as_str)
            != Some("signal")
        {
            return Err(invalid("signal", "AbortSignal"));
        }
    }
    Ok(PageArgs {
        max_bytes,
        start,
        cursor,
    })
}

fn page_of(
    call: &Call,
    page_args: PageArgs,
    view: &View,
    target: PageTarget,
    kind: &'static str,
    host: &HostBodies,
) -> Result<String> {
    let budget = &call.budgets.read;
    let max_bytes = page_args.max_bytes;
    let s = target.snapshot;
    let qualified = target
        .node
        .map(|n| format_qualified(s.provider_id(), s.capability(n).id()));
    let src = source(target.doc);
    let filter = json!({ "providerId": s.provider_id(), "id": qualified, "knowledgeId": target.doc.knowledge_id, "source": src }).to_string();
    let binding = Binding {
        kind,
        revision: &s.static_revision,
        filter: &filter,
    };
    let (start, known) = match (page_args.start, page_args.cursor) {
        (Some(start), _) => (start, None),
        (None, Some(c)) => {
            let after: After = serde_json::from_str(&cursor::decode(c, &binding)?)
                .map_err(|_| invalid("cursor", "cursor returned by the same query"))?;
            (
                after.offset,
                Some(Known {
                    content_id: after.content_id,
                    stamp: after.file,
                }),
            )
        }
        (None, None) => (0, None),
    };
    let range = PageRange {
        start,
        page_bytes: max_bytes,
        chunk_bytes: budget.max_bytes,
        max_bytes: budget.max_response_bytes,
    };
    let Some((page, content_type)) = page_body(host, s, target.doc, &range, known.as_ref())? else {
        // The host has not read this URL document yet; the caller asks it and calls again.
        return Ok(String::new());
    };
    let has_more = page.end < page.total;
    let next_cursor = has_more
        .then(|| {
            let after = After {
                offset: page.end,
                content_id: page.known.content_id.clone(),
                file: page.known.stamp.clone(),
            };
            cursor::encode(&binding, &to_json(&after))
        })
        .transpose()?;
    let complete = page.start == 0 && !has_more;
    let mut meta = Meta::of(view, false);
    meta.completeness = if complete {
        Completeness::Complete
    } else {
        Completeness::Partial
    };
    meta.extra.insert(
        "budgets".into(),
        json!({ "read.maxBytes": budget.max_bytes, "read.maxResponseBytes": budget.max_response_bytes }),
    );
    let mut out = serde_json::Map::new();
    if let Some(n) = target.node {
        out.insert("id".into(), json!(CapabilityId::of(s, n)));
    }
    out.insert("providerId".into(), s.provider_id().into());
    out.insert("knowledgeId".into(), target.doc.knowledge_id.clone().into());
    out.insert("contentId".into(), page.known.content_id.clone().into());
    out.insert("pageContentId".into(), page.page_content_id.into());
    out.insert("source".into(), src.into());
    out.insert("contentType".into(), content_type.into());
    out.insert("byteLength".into(), (page.end - page.start).into());
    // Measured before it is printed: escapes can make a page several times its bytes.
    if crate::json::quoted_len(&page.text) as u64 > budget.max_response_bytes {
        return Err(answer_too_large(budget.max_response_bytes));
    }
    out.insert("text".into(), page.text.into());
    out.insert("startOffset".into(), page.start.into());
    out.insert("endOffset".into(), page.end.into());
    out.insert("totalBytes".into(), page.total.into());
    out.insert("complete".into(), complete.into());
    out.insert("hasMore".into(), has_more.into());
    if let Some(c) = next_cursor {
        out.insert("nextCursor".into(), c.into());
    }
    out.insert("meta".into(), meta.to_value());
    let text = Value::Object(out).to_string();
    if text.len() as u64 > budget.max_response_bytes {
        return Err(answer_too_large(budget.max_response_bytes));
    }
    Ok(text)
}

/// One page and its content type, from the file or from a host reader's whole body.
fn page_body(
    host: &HostBodies,
    s: &ProviderSnapshot,
    doc: &DocumentRef,
    range: &PageRange,
    known: Option<&Known>,
) -> Result<Option<(Page, String)>> {
    if let Locator::Http { .. } = doc.locator {
        return host.page(s, doc, range, known);
    }
    let at = locate(s, doc, host.roots())?;
    let page = read_page_until(&at, range.start, range.page_bytes, known, host.control())?;
    Ok(Some((page, content_type(doc).to_owned())))
}

fn knowledge_id_arg(args: &Args) -> Result<&str> {
    args.string("knowledgeId")?
        .filter(|k| is_knowledge_id(k))
        .ok_or_else(|| invalid("knowledgeId", "knowledge ID"))
}

pub fn read_document_page(call: &Call, json: &str, host: &HostBodies) -> Result<String> {
    let args = Args::parse(json, &PAGE_KEYS)?;
    let page_args = page_args(&args, call)?;
    if args.has("providerId") {
        return Err(invalid(
            "providerId",
            "absent (the capability names its provider)",
        ));
    }
    let (provider, capability) = named_capability(&args, call.bound)?;
    let knowledge_id = knowledge_id_arg(&args)?;
    let view = call.view_of_one(&args, Some(provider))?;
    let (p, node) = call.locate(&view, provider, capability)?;
    let s = view.snapshot(p);
    // Top-level documents and collection members can be paged; a collection has no body.
    let mut doc = None;
    for k in &s.capability(node).knowledge {
        match k {
            KnowledgeRef::Document(d) if d.knowledge_id == knowledge_id => doc = Some(d),
            KnowledgeRef::Collection(c) if c.knowledge_id == knowledge_id => {
                return Err(invalid(
                    "knowledgeId",
                    "document ID (collections have no body)",
                ))
            }
            KnowledgeRef::Collection(c) => {
                if let Some(m) = c.members.iter().find(|m| m.knowledge_id == knowledge_id) {
                    doc = Some(m);
                }
            }
            _ => {}
        }
    }
    let doc = doc.ok_or_else(|| {
        GraphError::new(Code::DocumentNotFound).detail("knowledgeId", knowledge_id)
    })?;
    page_of(
        call,
        page_args,
        &view,
        PageTarget {
            snapshot: s,
            node: Some(node),
            doc,
        },
        "document-body",
        host,
    )
}

pub fn read_specification_page(call: &Call, json: &str, host: &HostBodies) -> Result<String> {
    let args = Args::parse(json, &PAGE_KEYS)?;
    let page_args = page_args(&args, call)?;
    for key in ["capability", "capabilityId"] {
        if args.has(key) {
            return Err(invalid(
                key,
                "absent (specification documents belong to the provider)",
            ));
        }
    }
    let provider = provider_arg(&args, call)?;
    let knowledge_id = knowledge_id_arg(&args)?;
    let view = call.view_of_one(&args, Some(provider))?;
    let s = provider_target(call, &view, provider)?;
    let doc = s
        .provider
        .specification
        .as_ref()
        .and_then(|spec| {
            spec.documents
                .iter()
                .find(|d| d.knowledge_id == knowledge_id)
        })
        .ok_or_else(|| {
            GraphError::new(Code::DocumentNotFound).detail("knowledgeId", knowledge_id)
        })?;
    page_of(
        call,
        page_args,
        &view,
        PageTarget {
            snapshot: s,
            node: None,
            doc,
        },
        "specification-body",
        host,
    )
}

pub use crate::knowledge::body::page_read_aborted;
