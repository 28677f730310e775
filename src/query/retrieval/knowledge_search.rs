//! `queryKnowledge`: the selected capabilities' knowledge becomes a fixed list of search
//! targets, the host's knowledge retriever searches them, and the engine accepts nothing it
//! cannot check against the mapping it sent. This part turns a query into the targets, the
//! mapping revision that names them and the retriever's request.

use super::knowledge_retrieval::{Held, KnowledgeSearch, Limits};
use crate::definitions::model::{DocumentRef, KnowledgeRef, Locator};
use crate::error::{input_too_large, Code, GraphError, Result};
use crate::hostcall::Started;
use crate::ids::format_qualified;
use crate::json::to_json;
use crate::query::args::{clamped_integer, invalid, target_list, Args};
use crate::query::reads::Filters;
use crate::query::Call;
use crate::scope::{Completeness, Meta, View};
use crate::snapshot::ProviderSnapshot;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const KEYS: [&str; 9] = [
    "text",
    "selected",
    "knowledgeIds",
    "roles",
    "locales",
    "limit",
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
];

/// At most this many per-item failures are summarised in a whole-query error.
const MAX_FAILURE_SUMMARIES: usize = 20;

/// The capability a target belongs to, in canonical key order.
#[derive(Serialize, Clone, Copy)]
struct TargetId<'a> {
    #[serde(rename = "capabilityId")]
    capability_id: &'a str,
    #[serde(rename = "providerId")]
    provider_id: &'a str,
}

/// One document the retriever may search, as it is sent: keys in canonical order, so its
/// JSON is the hashed form too. No root directory or read context leaves the engine.
#[derive(Serialize)]
pub(super) struct Target<'a> {
    #[serde(rename = "canonicalUrl", skip_serializing_if = "Option::is_none")]
    canonical_url: Option<&'a str>,
    id: TargetId<'a>,
    #[serde(rename = "knowledgeId")]
    knowledge_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    locale: Option<&'a str>,
    locator: &'a Locator,
    role: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(rename = "viaCollectionIds")]
    via_collection_ids: Vec<&'a str>,
    #[serde(skip)]
    pub(super) position: usize,
    #[serde(skip)]
    pub(super) node: u32,
    #[serde(skip)]
    pub(super) doc: &'a DocumentRef,
}

/// Where a target's bytes come from, hashed into the mapping revision: a change of binding or
/// root changes the revision even when no document changed. The directory itself never leaves
/// the engine; only its digest does.
fn context_digest(s: &ProviderSnapshot, doc: &DocumentRef) -> String {
    let (dir, identity) = match &doc.locator {
        Locator::Http { .. } => (None, None),
        Locator::RelativeFile { root: None, .. } => {
            (s.roots.default_root.as_deref().map(|r| r.real_path()), None)
        }
        Locator::RelativeFile {
            root: Some(alias), ..
        } => match s.roots.aliases.iter().find(|(a, _)| a == alias) {
            Some((_, bound)) => (Some(bound.dir()), Some(bound.identity.as_str())),
            None => (None, None),
        },
    };
    let context = json!({
        "authorityKind": s.authority.as_str(),
        "knowledgeRootDir": dir.map(|d| d.to_string_lossy()),
        "providerId": s.provider_id(),
        "rootIdentity": identity,
    });
    blake3::hash(context.to_string().as_bytes())
        .to_hex()
        .to_string()
}

/// `"m:"` + blake3 over every target with the digest of where it is read from.
fn mapping_revision(view: &View, targets: &[Target]) -> String {
    #[derive(Serialize)]
    struct Mapped<'a> {
        #[serde(rename = "contextDigest")]
        context_digest: String,
        target: &'a Target<'a>,
    }
    let mapped: Vec<Mapped> = targets
        .iter()
        .map(|t| Mapped {
            context_digest: context_digest(view.snapshot(t.position), t.doc),
            target: t,
        })
        .collect();
    format!("m:{}", blake3::hash(to_json(&mapped).as_bytes()).to_hex())
}

/// The whole-query error when no selected capability resolved: their shared code, or
/// `CG_PARTIAL_ITEM` summarising mixed codes.
fn none_resolved(failures: Vec<(usize, GraphError)>) -> GraphError {
    let first = failures[0].1.code();
    let summaries: Vec<Value> = failures
        .iter()
        .take(MAX_FAILURE_SUMMARIES)
        .map(|(i, e)| json!({ "inputIndex": i, "code": e.code().as_str(), "nextAction": e.next_action().map(|a| a.as_str()) }))
        .collect();
    // Failing alike, the whole query is that failure (its own details kept), summarised the same.
    let error = if failures.iter().all(|(_, e)| e.code() == first) {
        failures[0].1.clone()
    } else {
        GraphError::new(Code::PartialItem)
    };
    error
        .detail("failureCount", failures.len())
        .detail("failures", summaries)
        .detail(
            "omittedFailureCount",
            failures.len().saturating_sub(MAX_FAILURE_SUMMARIES),
        )
}

/// The query turned into its targets (sorted by `<qualifiedId>::<knowledgeId>`), before the
/// retriever is involved.
pub(super) struct Plan<'a> {
    pub(super) targets: Vec<Target<'a>>,
    pub(super) warnings: Vec<Value>,
    /// The state of an answer with no targets.
    empty_state: &'static str,
}

fn plan<'v>(
    call: &Call,
    view: &'v View,
    filters: &Filters,
    refs: &[Result<(&str, &str)>],
) -> Result<Plan<'v>> {
    let mut warnings = Vec::new();
    let mut failures = Vec::new();
    let mut nodes: Vec<(usize, u32)> = Vec::new();
    for (i, r) in refs.iter().enumerate() {
        let found = r
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|&(p, c)| call.locate(view, p, c));
        match found {
            Ok(node) if !nodes.contains(&node) => nodes.push(node),
            Ok(_) => {}
            Err(e) => {
                warnings.push(e.clone().detail("selectedIndex", i).to_warning());
                failures.push((i, e));
            }
        }
    }
    if nodes.is_empty() {
        return Err(none_resolved(failures));
    }
    let knowledge = |&(p, n): &(usize, u32)| &view.snapshot(p).capability(n).knowledge;
    if nodes.iter().all(|n| knowledge(n).is_empty()) {
        let retrieval = if call.backends.knowledge_retriever {
            "configured"
        } else {
            Code::RetrieverUnconfigured.as_str()
        };
        return Err(GraphError::new(Code::KnowledgeNotAssociated).detail("retrieval", retrieval));
    }
    let mut targets: BTreeMap<String, Target> = BTreeMap::new();
    let mut matched: Vec<&str> = Vec::new();
    let mut only_empty_collections = true;
    for &(p, n) in &nodes {
        let s = view.snapshot(p);
        let capability = s.capability(n);
        let qualified = format_qualified(s.provider_id(), capability.id());
        if capability.knowledge.is_empty() {
            warnings.push(
                GraphError::new(Code::KnowledgeNotAssociated)
                    .detail("qualifiedId", qualified)
                    .to_warning(),
            );
            continue;
        }
        let chosen = |id: &str| filters.knowledge_ids.is_none() || filters.names(id);
        for k in &capability.knowledge {
            let (docs, via): (Vec<&DocumentRef>, Option<&str>) = match k {
                KnowledgeRef::Document(d) => {
                    only_empty_collections = false;
                    (
                        chosen(&d.knowledge_id).then_some(d).into_iter().collect(),
                        None,
                    )
                }
                KnowledgeRef::Collection(c) => {
                    only_empty_collections &= c.members.is_empty();
                    let whole = chosen(&c.knowledge_id);
                    if whole && filters.knowledge_ids.is_some() {
                        matched.push(&c.knowledge_id);
                    }
                    let members = c
                        .members
                        .iter()
                        .filter(|m| whole || filters.names(&m.knowledge_id))
                        .collect();
                    (members, Some(c.knowledge_id.as_str()))
                }
            };
            for d in docs {
                matched.push(&d.knowledge_id);
                if !filters.keeps(d) {
                    continue;
                }
                let target = targets
                    .entry(format!("{qualified}::{}", d.knowledge_id))
                    .or_insert_with(|| Target {
                        canonical_url: d.canonical_url.as_deref(),
                        id: TargetId {
                            capability_id: capability.id(),
                            provider_id: s.provider_id(),
                        },
                        knowledge_id: &d.knowledge_id,
                        locale: d.locale.as_deref(),
                        locator: &d.locator,
                        role: &d.role,
                        summary: d.summary.as_deref(),
                        title: d.title.as_deref(),
                        via_collection_ids: Vec::new(),
                        position: p,
                        node: n,
                        doc: d,
                    });
                if let Some(c) = via {
                    if !target.via_collection_ids.contains(&c) {
                        target.via_collection_ids.push(c);
                        target.via_collection_ids.sort_unstable();
                    }
                }
            }
        }
    }
    let mut reported: Vec<&str> = Vec::new();
    for id in filters.knowledge_ids.iter().flatten() {
        if !matched.contains(&id.as_str()) && !reported.contains(&id.as_str()) {
            reported.push(id);
            warnings.push(
                GraphError::new(Code::DocumentNotFound)
                    .detail("knowledgeId", id.as_str())
                    .to_warning(),
            );
        }
    }
    let unfiltered = filters.is_empty();
    Ok(Plan {
        targets: targets.into_values().collect(),
        warnings,
        empty_state: if unfiltered && only_empty_collections {
            "empty_collection"
        } else {
            "filtered_empty"
        },
    })
}

/// A query with nothing to search: no retriever call, no index status.
fn empty_page(mut meta: Meta, state: &str) -> String {
    if !meta.warnings.is_empty() {
        meta.completeness = Completeness::Partial;
    }
    format!(
        r#"{{"items":[],"knowledgeState":"{state}","meta":{}}}"#,
        meta.to_json()
    )
}

pub fn knowledge_start(call: &Call, json: &str, has_readers: bool) -> Result<Started> {
    let args = Args::parse(json, &KEYS)?;
    let budget = &call.budgets.query_knowledge;
    let selected = target_list(&args, "selected", budget.max_selected)?;
    let filters = Filters::parse(&args, budget.max_filter_values_per_dimension)?;
    let text = args
        .string("text")?
        .filter(|t| !crate::json::is_blank(t))
        .ok_or_else(|| invalid("text", "non-blank string"))?;
    if text.len() as u64 > budget.max_text_bytes {
        return Err(input_too_large("text", budget.max_text_bytes)
            .detail("budget", "queryKnowledge.maxTextBytes"));
    }
    if filters.knowledge_ids.as_ref().is_some_and(Vec::is_empty) {
        return Err(invalid("knowledgeIds", "array of 1 or more knowledge IDs"));
    }
    let limit = match args.get("limit")? {
        None => budget.max_hits,
        Some(v) => clamped_integer(v, "limit", 1, budget.max_hits)?,
    };
    let (refs, view) = call.slot_targets(&args, "selected", selected)?;
    let plan = plan(call, &view, &filters, &refs)?;
    let mut meta = Meta::of(&view, false);
    meta.warnings = plan.warnings;
    if plan.targets.is_empty() {
        // Nothing to search: answered here, whether or not a retriever is configured.
        return Ok(Started::Done(empty_page(meta, plan.empty_state)));
    }
    if plan.targets.len() as u64 > budget.max_targets {
        return Err(input_too_large("targets", budget.max_targets)
            .detail("budget", "queryKnowledge.maxTargets"));
    }
    let targets = to_json(&plan.targets);
    if targets.len() as u64 > budget.max_target_bytes {
        return Err(input_too_large("targets", budget.max_target_bytes)
            .detail("budget", "queryKnowledge.maxTargetBytes"));
    }
    if !call.backends.knowledge_retriever {
        return Err(GraphError::new(Code::RetrieverUnconfigured));
    }
    let mapping = mapping_revision(&view, &plan.targets);
    // Only the providers the targets come from: the revisions the retriever must have indexed.
    let mut revisions = Map::new();
    for t in &plan.targets {
        let s = view.snapshot(t.position);
        revisions.insert(s.provider_id().to_owned(), s.static_revision.clone().into());
    }
    let request = format!(
        r#"{{"text":{},"staticRevisionByProvider":{},"mappingRevision":"{mapping}","targets":{targets},"limit":{limit}}}"#,
        Value::from(text),
        Value::Object(revisions),
    );
    let held = plan
        .targets
        .iter()
        .map(|t| Held {
            key: format!(
                "{}::{}",
                format_qualified(t.id.provider_id, t.id.capability_id),
                t.knowledge_id
            ),
            position: t.position,
            node: t.node,
            doc: t.doc.clone(),
        })
        .collect();
    let limits = Limits {
        hits: limit,
        max_snippet_bytes: budget.max_snippet_bytes,
        max_targets: budget.max_targets,
        max_target_bytes: budget.max_target_bytes,
        read_max_bytes: call.budgets.read.max_bytes,
        read_max_response: call.budgets.read.max_response_bytes,
        timeout_ms: budget.timeout_ms,
        reader_timeout_ms: call.budgets.read.reader_timeout_ms,
    };
    let warnings = meta.warnings;
    let mut search =
        KnowledgeSearch::new(request, view, held, mapping, limits, has_readers, warnings);
    search.configured = call.state.providers.keys().cloned().collect();
    Ok(Started::Ask(Box::new(search)))
}
