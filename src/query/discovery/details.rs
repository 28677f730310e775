//! `getCapabilities`: one slot per input reference, in input order, with the capability's
//! details, the first neighbours of each kind and a page of its knowledge summaries.

use crate::cursor::{self, Binding};
use crate::definitions::model::{DocumentRef, KnowledgeRef};
use crate::error::{Code, GraphError, Result};
use crate::ids::format_qualified;
use crate::query::args::{clamped_integer, invalid, pair, too_large, Args};
use crate::query::page::Rows;
use crate::query::views::{
    to_json, write_id, write_identity, write_str, write_text_member, write_texts, CapabilityId,
    ViewEntry,
};
use crate::query::Call;
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

/// The first neighbours of one kind, and whether there are more.
struct SummaryGroup<'a> {
    items: Vec<CapabilityId<'a>>,
    names: Vec<&'a str>,
    completeness: Completeness,
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

struct KnowledgePage<'a> {
    items: Vec<KnowledgeSummary<'a>>,
    completeness: Completeness,
    next_cursor: Option<String>,
}

struct Detail<'a> {
    snapshot: &'a ProviderSnapshot,
    node: u32,
    /// The eight summary groups in their fixed order.
    neighbor_summaries: Vec<(&'static str, SummaryGroup<'a>)>,
    knowledge: KnowledgePage<'a>,
}

impl Detail<'_> {
    /// Compact JSON, members in record order; IDs and texts through the direct writers,
    /// knowledge summaries through their serialiser.
    fn to_json(&self) -> String {
        let s = self.snapshot;
        let c = s.capability(self.node);
        let mut out = String::with_capacity(
            512 + c.description.len() + c.when_to_use.len() + 64 * self.neighbor_summaries.len(),
        );
        out.push('{');
        write_identity(
            &mut out,
            CapabilityId {
                provider_id: s.provider_id(),
                capability_id: &c.id,
            },
        );
        write_texts(&mut out, c);
        if let Some(d) = &c.distinction {
            write_text_member(&mut out, "distinction", d);
        }
        out.push_str(r#","staticRevision":""#);
        out.push_str(&s.static_revision);
        out.push_str(r#"","examples":["#);
        for (i, e) in c.examples.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_str(&mut out, e);
        }
        out.push_str(r#"],"neighborSummaries":{"#);
        for (k, (kind, group)) in self.neighbor_summaries.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(kind);
            out.push_str(r#"":{"items":["#);
            for (i, (id, name)) in group.items.iter().zip(&group.names).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(r#"{"id":"#);
                write_id(&mut out, *id);
                out.push_str(r#","name":"#);
                write_str(&mut out, name);
                out.push('}');
            }
            out.push_str(r#"],"completeness":"#);
            out.push_str(&to_json(&group.completeness));
            out.push('}');
        }
        out.push_str(r#"},"knowledge":{"items":"#);
        out.push_str(&to_json(&self.knowledge.items));
        out.push_str(r#","completeness":"#);
        out.push_str(&to_json(&self.knowledge.completeness));
        if let Some(c) = &self.knowledge.next_cursor {
            out.push_str(r#","nextCursor":"#);
            write_str(&mut out, c);
        }
        out.push_str("}}");
        out
    }
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
    let mut neighbor_summaries = Vec::with_capacity(Kind::ALL.len());
    for kind in Kind::ALL {
        let all = s.neighbours(node, kind);
        let shown = &all[..all.len().min(limits.neighbours as usize)];
        let cut = shown.len() < all.len();
        truncated |= cut;
        let group = SummaryGroup {
            items: shown
                .iter()
                .map(|&t| CapabilityId {
                    provider_id,
                    capability_id: &s.capability(t).id,
                })
                .collect(),
            names: shown.iter().map(|&t| &*s.capability(t).name).collect(),
            completeness: if cut {
                Completeness::Truncated
            } else {
                Completeness::Complete
            },
        };
        neighbor_summaries.push((kind.as_str(), group));
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
            snapshot: s,
            node,
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
                let value = d.to_json();
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
