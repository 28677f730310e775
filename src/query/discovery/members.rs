//! `listKnowledgeMembers`: the member documents of one collection of one capability, paged.
//! Metadata only; bodies are read by the document verbs.

use super::documents::{doc_page, DocLimits};
use crate::cursor::Binding;
use crate::definitions::model::KnowledgeRef;
use crate::error::{Code, GraphError, Result};
use crate::ids::{format_qualified, is_knowledge_id};
use crate::json::to_json;
use crate::query::args::{clamped_integer, invalid, named_capability, Args};
use crate::query::views::{CapabilityId, ViewEntry};
use crate::query::Call;
use crate::scope::{Completeness, Meta};
use serde_json::json;

const KEYS: [&str; 8] = [
    "capability",
    "capabilityId",
    "collectionId",
    "cursor",
    "limit",
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
];

pub fn list_knowledge_members(call: &Call, json: &str) -> Result<String> {
    let args = Args::parse(json, &KEYS)?;
    let budget = &call.budgets.detail;
    let (provider, capability) = named_capability(&args, call.bound)?;
    let collection_id = args
        .string("collectionId")?
        .filter(|s| is_knowledge_id(s))
        .ok_or_else(|| invalid("collectionId", "knowledge ID"))?;
    let limit = match args.get("limit")? {
        None => budget.default_knowledge_page_size,
        Some(v) => clamped_integer(v, "limit", 1, budget.max_knowledge_page_size)?,
    };
    let cursor = args.string("cursor")?;
    let view = call.view_of_one(&args, Some(provider))?;
    let (p, node) = call.locate(&view, provider, capability)?;
    let s = view.snapshot(p);
    let collection = match s
        .capability(node)
        .knowledge
        .iter()
        .find(|k| k.knowledge_id() == collection_id)
    {
        Some(KnowledgeRef::Collection(c)) => c,
        Some(KnowledgeRef::Document(_)) => {
            return Err(invalid(
                "collectionId",
                "ID of a collection, not a document",
            ))
        }
        None => {
            return Err(GraphError::new(Code::DocumentNotFound).detail("knowledgeId", collection_id))
        }
    };
    let qualified_id = format_qualified(provider, capability);
    let filter =
        json!({ "id": qualified_id, "collectionId": collection_id, "limit": limit }).to_string();
    let binding = Binding {
        kind: "knowledge-members",
        revision: &s.static_revision,
        filter: &filter,
    };
    let mut meta = Meta::of(&view, false);
    meta.extra.insert(
        "budgets".into(),
        json!({ "detail.maxBytes": budget.max_bytes, "detail.maxItemBytes": budget.max_item_bytes }),
    );
    meta.extra.insert(
        "view".into(),
        json!({ "capabilities": [ViewEntry::new(s, node)] }),
    );
    meta.completeness = Completeness::Truncated;
    let id_json = to_json(&CapabilityId {
        provider_id: provider,
        capability_id: capability,
    });
    let collection_json = to_json(&collection_id);
    let fixed = r#"{"id":,"collectionId":,"items":,"completeness":"truncated","meta":}"#.len()
        + id_json.len()
        + collection_json.len()
        + meta.to_json().len();
    let limits = DocLimits {
        count: limit,
        max_item_bytes: budget.max_item_bytes,
        item_budget: "detail.maxItemBytes",
        max_bytes: budget.max_bytes,
        page_budget: "detail.maxBytes",
    };
    let page = doc_page(&collection.members, cursor, &binding, &limits, fixed)?;
    meta.completeness = page.completeness();
    let mut out = format!(
        r#"{{"id":{id_json},"collectionId":{collection_json},"items":{},"completeness":{}"#,
        page.items,
        to_json(&meta.completeness)
    );
    if let Some(c) = &page.next_cursor {
        out.push_str(&format!(r#","nextCursor":"{c}""#));
    }
    out.push_str(&format!(r#","meta":{}}}"#, meta.to_json()));
    crate::query::page::within_budget(out, "detail.maxBytes", budget.max_bytes)
}
