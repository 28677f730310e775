//! `getCapabilities`: one slot per input reference, in input order, with the capability's
//! details, the first neighbours of each kind and a page of its knowledge summaries.

use crate::cursor::{self, Binding};
use crate::definitions::model::{DocumentRef, KnowledgeRef};
use crate::error::{Code, GraphError, Result};
use crate::ids::format_qualified;
use crate::json::to_json;
use crate::query::args::{clamped_integer, invalid, pair, too_large, Args};
use crate::query::views::{
    write_budgets_member, write_distinction, write_examples, write_id, write_identity, write_known,
    write_str, write_texts, write_view_member, CapabilityId, ViewEntry,
};
use crate::query::Call;
use crate::scope::{Completeness, Meta};
use crate::snapshot::{Kind, Plain, ProviderSnapshot};
use serde::Serialize;
use serde_json::{json, Value};
use std::ops::Range;

const KEYS: [&str; 6] = [
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
    "neighborLimitPerKind",
    "knowledgeLimit",
    "knowledgeCursors",
];

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

struct Limits {
    neighbours: u64,
    knowledge: u64,
}

/// One capability's details: what to print, decided before anything is printed (a cursor that
/// fails leaves nothing half-written).
struct Detail<'a> {
    snapshot: &'a ProviderSnapshot,
    node: u32,
    neighbours: usize,
    knowledge: Range<usize>,
    next_cursor: Option<String>,
}

impl Detail<'_> {
    fn new<'a>(
        s: &'a ProviderSnapshot,
        node: u32,
        limits: &Limits,
        cursor: Option<&str>,
    ) -> Result<Detail<'a>> {
        let c = s.capability(node);
        // The binding is only printed where a cursor is read or may be made.
        let paged = cursor.is_some() || c.knowledge.len() as u64 > limits.knowledge;
        let filter = if paged {
            let id = format_qualified(s.provider_id(), c.id());
            json!({ "id": id, "limit": limits.knowledge }).to_string()
        } else {
            String::new()
        };
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
                    .ok_or_else(|| {
                        invalid("knowledgeCursors", "cursor returned for this capability")
                    })?
            }
        };
        let end = (start + limits.knowledge as usize).min(c.knowledge.len());
        let next_cursor = (end < c.knowledge.len() && end > start)
            .then(|| cursor::encode(&binding, c.knowledge[end - 1].knowledge_id()))
            .transpose()?;
        Ok(Detail {
            snapshot: s,
            node,
            neighbours: limits.neighbours as usize,
            knowledge: start..end,
            next_cursor,
        })
    }

    /// Appends the detail as compact JSON, members in record order; IDs and texts through the
    /// direct writers, knowledge summaries through their serialiser. Returns whether any of
    /// its lists was cut.
    fn write(&self, out: &mut String) -> bool {
        let s = self.snapshot;
        let c = s.capability(self.node);
        out.push('{');
        write_identity(out, CapabilityId::of(s, self.node));
        write_texts(out, c);
        write_distinction(out, c);
        out.push_str(r#","staticRevision":""#);
        out.push_str(&s.static_revision);
        out.push('"');
        write_examples(out, c);
        out.push_str(r#","neighborSummaries":{"#);
        let mut cut = false;
        for (k, kind) in Kind::ALL.into_iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            let all = s.neighbours(self.node, kind);
            let shown = &all[..all.len().min(self.neighbours)];
            out.push('"');
            out.push_str(kind.as_str());
            out.push_str(r#"":{"items":["#);
            for (i, &t) in shown.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let neighbour = s.capability(t);
                out.push_str(r#"{"id":"#);
                write_id(out, CapabilityId::of(s, t));
                out.push_str(r#","name":"#);
                write_known(out, neighbour.name(), neighbour.plain.has(Plain::NAME));
                out.push('}');
            }
            let group = completeness(shown.len() < all.len());
            cut |= group != Completeness::Complete;
            out.push_str(r#"],"completeness":"#);
            out.push_str(group.json());
            out.push('}');
        }
        out.push_str(r#"},"knowledge":{"items":["#);
        for (i, r) in c.knowledge[self.knowledge.clone()].iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&to_json(&KnowledgeSummary::from(r)));
        }
        out.push_str(r#"],"completeness":"#);
        out.push_str(completeness(self.next_cursor.is_some()).json());
        if let Some(c) = &self.next_cursor {
            out.push_str(r#","nextCursor":"#);
            write_str(out, c);
        }
        out.push_str("}}");
        cut || self.next_cursor.is_some()
    }
}

fn completeness(cut: bool) -> Completeness {
    if cut {
        Completeness::Truncated
    } else {
        Completeness::Complete
    }
}

/// Appends one failed slot.
fn write_slot_error(out: &mut String, index: usize, e: &GraphError) {
    out.push_str(r#"{"inputIndex":"#);
    out.push_str(&index.to_string());
    out.push_str(r#","ok":false,"error":"#);
    out.push_str(&e.to_json());
    out.push('}');
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

    let mut out = String::with_capacity(4096);
    out.push_str(r#"{"results":["#);
    let mut viewed: Vec<ViewEntry> = Vec::new();
    let (mut failed, mut truncated) = (false, false);
    for (i, r) in refs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let outcome = r.as_ref().map_err(Clone::clone).and_then(|&(p, c)| {
            let (pos, node) = call.locate(&view, p, c)?;
            let cursor = match cursors.is_empty() {
                true => None,
                false => cursors.get(&format_qualified(p, c)).map(String::as_str),
            };
            Ok((pos, Detail::new(view.snapshot(pos), node, &limits, cursor)?))
        });
        let slot = out.len();
        match outcome {
            Ok((pos, detail)) => {
                out.push_str(r#"{"inputIndex":"#);
                out.push_str(&i.to_string());
                out.push_str(r#","ok":true,"value":"#);
                let value = out.len();
                let cut = detail.write(&mut out);
                if (out.len() - value) as u64 > budget.max_item_bytes {
                    out.truncate(slot);
                    failed = true;
                    let e = GraphError::new(Code::ResultTooLarge)
                        .detail("budget", "detail.maxItemBytes")
                        .detail("limit", budget.max_item_bytes);
                    write_slot_error(&mut out, i, &e);
                    continue;
                }
                out.push('}');
                truncated |= cut;
                viewed.push(ViewEntry::new(view.snapshot(pos), detail.node));
            }
            // A pinned revision that cannot be honoured fails the whole call.
            Err(e) if e.code() == Code::RevisionMismatch => return Err(e),
            Err(e) => {
                failed = true;
                write_slot_error(&mut out, i, &e);
            }
        }
    }
    out.push_str(r#"],"meta":"#);
    let mut meta = Meta::of(&view, false);
    meta.completeness = if failed {
        Completeness::Partial
    } else {
        completeness(truncated)
    };
    meta.write(&mut out, |out| {
        write_budgets_member(
            out,
            &[
                ("detail.maxItemBytes", budget.max_item_bytes),
                ("detail.maxBytes", budget.max_bytes),
            ],
        );
        write_view_member(out, viewed);
    });
    out.push('}');
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
