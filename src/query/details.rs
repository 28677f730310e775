//! `getCapabilities`: one slot per input reference, in input order, with the capability's
//! details, the first neighbours of each kind and a page of its knowledge summaries.

use super::args::{clamped_integer, invalid, pair, too_large, Args};
use super::page::Rows;
use super::views::{to_json, CapabilityId, ViewEntry};
use super::Call;
use crate::cursor::{self, Binding};
use crate::definitions::model::{DocumentRef, KnowledgeRef};
use crate::error::{Code, GraphError, Result};
use crate::ids::format_qualified;
use crate::scope::{Completeness, Meta};
use crate::snapshot::{Kind, ProviderSnapshot};
use serde::Serialize;
use serde_json::{json, Value};

const KEYS: [&str; 6] = [
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
    "neighborLimitPerKind",
    "knowledgeLimit",
    "knowledgeCursors",
];

#[derive(Serialize)]
struct NeighbourSummary<'a> {
    id: CapabilityId<'a>,
    name: &'a str,
}

#[derive(Serialize)]
struct SummaryGroup<'a> {
    items: Vec<NeighbourSummary<'a>>,
    completeness: Completeness,
}

/// The eight summary groups, keyed by relation kind in their fixed order; serialised straight
/// into the answer (no intermediate JSON tree).
struct Summaries<'a>(Vec<(&'static str, SummaryGroup<'a>)>);

impl Serialize for Summaries<'_> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(kind, group)| (kind, group)))
    }
}

/// How a knowledge reference is listed in details: documents whole, collections summarised.
#[derive(Serialize)]
#[serde(untagged)]
enum KnowledgeSummary<'a> {
    Document(&'a DocumentRef),
    Collection {
        kind: &'static str,
        #[serde(rename = "knowledgeId")]
        knowledge_id: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<&'a str>,
        #[serde(rename = "memberCount")]
        member_count: usize,
    },
}

impl<'a> From<&'a KnowledgeRef> for KnowledgeSummary<'a> {
    fn from(r: &'a KnowledgeRef) -> Self {
        match r {
            KnowledgeRef::Document(d) => KnowledgeSummary::Document(d),
            KnowledgeRef::Collection(c) => KnowledgeSummary::Collection {
                kind: "collection",
                knowledge_id: &c.knowledge_id,
                title: c.title.as_deref(),
                summary: c.summary.as_deref(),
                member_count: c.members.len(),
            },
        }
    }
}

#[derive(Serialize)]
struct KnowledgePage<'a> {
    items: Vec<KnowledgeSummary<'a>>,
    completeness: Completeness,
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
}

#[derive(Serialize)]
struct Detail<'a> {
    id: CapabilityId<'a>,
    #[serde(rename = "qualifiedId")]
    qualified_id: String,
    name: &'a str,
    description: &'a str,
    #[serde(rename = "whenToUse")]
    when_to_use: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    distinction: Option<&'a str>,
    #[serde(rename = "staticRevision")]
    static_revision: &'a str,
    examples: &'a [Box<str>],
    #[serde(rename = "neighborSummaries")]
    neighbor_summaries: Summaries<'a>,
    knowledge: KnowledgePage<'a>,
}

struct Limits {
    neighbours: u64,
    knowledge: u64,
}

/// A detail, and whether any of its lists was cut.
fn detail<'a>(
    s: &'a ProviderSnapshot,
    node: u32,
    limits: &Limits,
    cursor: Option<&str>,
) -> Result<(Detail<'a>, bool)> {
    let c = s.capability(node);
    let provider_id = s.provider_id();
    let qualified_id = format_qualified(provider_id, &c.id);
    let mut truncated = false;
    let mut neighbor_summaries = Summaries(Vec::with_capacity(Kind::ALL.len()));
    for kind in Kind::ALL {
        let all = s.neighbours(node, kind);
        let shown = &all[..all.len().min(limits.neighbours as usize)];
        let cut = shown.len() < all.len();
        truncated |= cut;
        let group = SummaryGroup {
            items: shown
                .iter()
                .map(|&t| NeighbourSummary {
                    id: CapabilityId {
                        provider_id,
                        capability_id: &s.capability(t).id,
                    },
                    name: &s.capability(t).name,
                })
                .collect(),
            completeness: if cut {
                Completeness::Truncated
            } else {
                Completeness::Complete
            },
        };
        neighbor_summaries.0.push((kind.as_str(), group));
    }
    let filter = json!({ "id": qualified_id, "limit": limits.knowledge }).to_string();
    let binding = Binding {
        kind: "detail-knowledge",
        revision: &s.static_revision,
        filter: &filter,
    };
    let start = match cursor {
        None => 0,
        Some(cur) => {
            let after = cursor::decode(cur, &binding)?;
            c.knowledge
                .iter()
                .position(|k| k.knowledge_id() == after)
                .map(|i| i + 1)
                .ok_or_else(|| invalid("knowledgeCursors", "cursor returned for this capability"))?
        }
    };
    let end = (start + limits.knowledge as usize).min(c.knowledge.len());
    let next_cursor = (end < c.knowledge.len() && end > start)
        .then(|| cursor::encode(&binding, c.knowledge[end - 1].knowledge_id()))
        .transpose()?;
    truncated |= next_cursor.is_some();
    let knowledge = KnowledgePage {
        items: c.knowledge[start..end]
            .iter()
            .map(KnowledgeSummary::from)
            .collect(),
        completeness: if next_cursor.is_some() {
            Completeness::Truncated
        } else {
            Completeness::Complete
        },
        next_cursor,
    };
    Ok((
        Detail {
            id: CapabilityId {
                provider_id,
                capability_id: &c.id,
            },
            qualified_id,
            name: &c.name,
            description: &c.description,
            when_to_use: &c.when_to_use,
            distinction: c.distinction.as_deref(),
            static_revision: &s.static_revision,
            examples: &c.examples,
            neighbor_summaries,
            knowledge,
        },
        truncated,
    ))
}

fn slot_error(index: usize, e: &GraphError) -> String {
    format!(
        r#"{{"inputIndex":{index},"ok":false,"error":{}}}"#,
        e.to_json()
    )
}

pub fn get_capabilities(call: &Call, json: &str) -> Result<String> {
    let (ids, query) = pair(json)?;
    let args = Args::from_value(query, &KEYS)?;
    let budget = &call.budgets.detail;
    let ids = ids
        .as_array()
        .ok_or_else(|| invalid("ids", "array of capability IDs"))?;
    if ids.len() as u64 > budget.max_capabilities {
        return Err(too_large("ids", budget.max_capabilities));
    }
    let (refs, view) = call.slot_targets(&args, "ids", ids)?;
    let neighbours = call.budgets.neighbors.max_page_size;
    let limits = Limits {
        neighbours: match args.get("neighborLimitPerKind")? {
            None => call.budgets.neighbors.default_page_size,
            Some(v) => clamped_integer(v, "neighborLimitPerKind", 0, neighbours)?,
        },
        knowledge: match args.get("knowledgeLimit")? {
            None => budget.default_knowledge_page_size,
            Some(v) => clamped_integer(v, "knowledgeLimit", 1, budget.max_knowledge_page_size)?,
        },
    };
    let cursors = knowledge_cursors(&args, &refs)?;

    let mut slots = Rows::new();
    let mut viewed: Vec<ViewEntry> = Vec::new();
    let (mut failed, mut truncated) = (false, false);
    for (i, r) in refs.iter().enumerate() {
        let outcome = r.as_ref().map_err(Clone::clone).and_then(|&(p, c)| {
            let (pos, node) = call.locate(&view, p, c)?;
            let cursor = cursors.get(&format_qualified(p, c)).map(String::as_str);
            Ok((
                pos,
                node,
                detail(view.snapshot(pos), node, &limits, cursor)?,
            ))
        });
        match outcome {
            Ok((pos, node, (d, cut))) => {
                let value = to_json(&d);
                if value.len() as u64 > budget.max_item_bytes {
                    failed = true;
                    let e = GraphError::new(Code::ResultTooLarge)
                        .detail("budget", "detail.maxItemBytes")
                        .detail("limit", budget.max_item_bytes);
                    slots.push(&slot_error(i, &e));
                    continue;
                }
                truncated |= cut;
                viewed.push(ViewEntry::new(view.snapshot(pos), node));
                slots.push(&format!(
                    r#"{{"inputIndex":{i},"ok":true,"value":{value}}}"#
                ));
            }
            // A pinned revision that cannot be honoured fails the whole call.
            Err(e) if e.code() == Code::RevisionMismatch => return Err(e),
            Err(e) => {
                failed = true;
                slots.push(&slot_error(i, &e));
            }
        }
    }
    let mut meta = Meta::of(&view, false);
    meta.completeness = if failed {
        Completeness::Partial
    } else if truncated {
        Completeness::Truncated
    } else {
        Completeness::Complete
    };
    meta.extra.insert(
        "budgets".into(),
        json!({ "detail.maxItemBytes": budget.max_item_bytes, "detail.maxBytes": budget.max_bytes }),
    );
    meta.extra
        .insert("view".into(), json!({ "capabilities": viewed }));
    let out = format!(
        r#"{{"results":{},"meta":{}}}"#,
        slots.finish(),
        to_json(&meta)
    );
    if out.len() as u64 > budget.max_bytes {
        return Err(GraphError::new(Code::ResultTooLarge)
            .detail("budget", "detail.maxBytes")
            .detail("limit", budget.max_bytes));
    }
    Ok(out)
}

/// `knowledgeCursors`: qualified ID of a requested capability → its knowledge cursor.
fn knowledge_cursors(
    args: &Args,
    refs: &[Result<(&str, &str)>],
) -> Result<std::collections::HashMap<String, String>> {
    let mut out = std::collections::HashMap::new();
    let Some(map) = args.object("knowledgeCursors")? else {
        return Ok(out);
    };
    for (key, cursor) in map {
        let field = format!("knowledgeCursors[{}]", Value::from(key.as_str()));
        let requested = refs.iter().any(|r| {
            r.as_ref()
                .is_ok_and(|(p, c)| format_qualified(p, c) == *key)
        });
        if !requested {
            return Err(invalid(&field, "qualified ID of a requested capability"));
        }
        let cursor = cursor.as_str().ok_or_else(|| invalid(&field, "cursor"))?;
        out.insert(key.clone(), cursor.to_owned());
    }
    Ok(out)
}
