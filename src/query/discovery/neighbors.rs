//! `getNeighbors`: the eight relation groups of one capability, each paged with its own
//! cursor, all sharing one byte budget (reference/core.md §6.2).

use crate::cursor::{self, Binding};
use crate::error::Result;
use crate::ids::format_qualified;
use crate::query::args::{capability_ref, clamped_integer, invalid, pair, Args};
use crate::query::page::{
    cursor_member_len, no_progress, oversized_row, within_budget, Rows, Warnings,
};
use crate::query::views::{
    catalog_row_estimate, write_budgets_member, write_catalog_row, write_id, write_view_member,
    CapabilityId, ViewEntry,
};
use crate::query::Call;
use crate::scope::{Completeness, Meta};
use crate::snapshot::{Kind, ProviderSnapshot};
use serde_json::{json, Value};
use std::cell::OnceCell;

const KEYS: [&str; 6] = [
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
    "kinds",
    "limitPerKind",
    "cursors",
];

fn parse_kind(v: &Value) -> Option<Kind> {
    Kind::ALL
        .into_iter()
        .find(|k| v.as_str() == Some(k.as_str()))
}

struct Group {
    rows: Rows,
    /// Position of the next row to serve, when rows remain.
    next: Option<usize>,
    omitted: bool,
}

/// What the printed length of one group depends on.
#[derive(Clone, Copy)]
struct Shape {
    /// Bytes of its items array.
    rows: usize,
    /// Bytes of its `nextCursor` member, when it has one.
    cursor: Option<usize>,
    omitted: bool,
}

/// Completeness words in the order page measurements index them.
const COMPLETENESS: [Completeness; 3] = [
    Completeness::Complete,
    Completeness::Truncated,
    Completeness::Partial,
];

fn completeness_word(c: Completeness) -> usize {
    c.json().len()
}

/// Bytes of the whole page: `skeletons` holds the page without groups' contents for each
/// page completeness.
fn page_len(skeletons: &[usize; 3], shapes: &[Shape], warnings: &Warnings) -> usize {
    let mut truncated = false;
    let groups: usize = shapes
        .iter()
        .map(|g| {
            truncated |= g.cursor.is_some();
            let c = if g.omitted {
                Completeness::Partial
            } else if g.cursor.is_some() {
                Completeness::Truncated
            } else {
                Completeness::Complete
            };
            r#"{"items":,"completeness":}"#.len()
                + g.rows
                + completeness_word(c)
                + g.cursor.unwrap_or(0)
        })
        .sum();
    let page = if warnings.count > 0 {
        2
    } else if truncated {
        1
    } else {
        0
    };
    skeletons[page] + groups + warnings.bytes()
}

/// Where the row a cursor names sits in a neighbour list. Lists are sorted by ID (endpoints are
/// sorted at validation, capabilities by ID, adjacency lists keep that order), so a lookup costs
/// a binary search: walking a list of n neighbours page by page stays linear.
fn cursor_position(s: &ProviderSnapshot, list: &[u32], after: &str) -> Option<usize> {
    list.binary_search_by(|&t| {
        crate::opcount::tick(crate::opcount::Op::NeighbourStep);
        s.capability(t).id().cmp(after)
    })
    .ok()
}

pub fn get_neighbors(call: &Call, json: &str) -> Result<String> {
    let (target, query) = pair(json)?;
    let args = Args::from_value(query, &KEYS)?;
    let budget = &call.budgets.neighbors;
    let (provider, capability) = capability_ref(&target, "id", call.bound)?;
    let kinds: Vec<Kind> = match args.array("kinds")? {
        None => Kind::ALL.to_vec(),
        Some(items) => {
            let mut kinds = Vec::new();
            for (i, v) in items.iter().enumerate() {
                let k = parse_kind(v)
                    .filter(|k| !kinds.contains(k))
                    .ok_or_else(|| invalid(&format!("kinds[{i}]"), "distinct neighbour kind"))?;
                kinds.push(k);
            }
            kinds
        }
    };
    let limit = match args.get("limitPerKind")? {
        None => budget.default_page_size,
        Some(v) => clamped_integer(v, "limitPerKind", 1, budget.max_page_size)?,
    } as usize;
    // Shapes first: cursors by requested kind, each a string.
    let mut cursors: Vec<(String, Kind, &str)> = Vec::new();
    for (key, c) in args.object("cursors")?.into_iter().flatten() {
        let field = format!("cursors.{key}");
        let kind = parse_kind(&Value::from(key.as_str()))
            .filter(|k| kinds.contains(k))
            .ok_or_else(|| invalid(&field, "one of the requested kinds"))?;
        let c = c.as_str().ok_or_else(|| invalid(&field, "cursor"))?;
        cursors.push((field, kind, c));
    }
    let view = call.view_of_one(&args, Some(provider))?;
    let (p, node) = call.locate(&view, provider, capability)?;
    let s = view.snapshot(p);
    let qualified_id = format_qualified(provider, capability);
    // A group's cursor binds its filter; only groups with a cursor in or out need one.
    let filters: [OnceCell<String>; 8] = Default::default();
    let binding = |k: Kind| Binding {
        kind: "neighbors",
        revision: &s.static_revision,
        filter: filters[k as usize].get_or_init(|| {
            json!({ "id": qualified_id, "kind": k.as_str(), "limit": limit }).to_string()
        }),
    };

    // Where each requested group starts.
    let mut starts = [0usize; 8];
    for &(ref field, kind, c) in &cursors {
        let after = cursor::decode(c, &binding(kind))?;
        starts[kind as usize] = cursor_position(s, s.neighbours(node, kind), &after)
            .ok_or_else(|| invalid(field, "cursor returned by the same query"))?;
    }

    let mut meta = Meta::of(&view, false);
    // The verb's own meta members: the kinds served, the budgets in force, what was read.
    let write_meta = |out: &mut String, meta: &Meta| {
        meta.write(out, |out| {
            out.push_str(r#","filter":{"kinds":["#);
            for (i, k) in kinds.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('"');
                out.push_str(k.as_str());
                out.push('"');
            }
            out.push_str("]}");
            write_budgets_member(
                out,
                &[
                    ("neighbors.maxPageSize", budget.max_page_size),
                    ("neighbors.maxBytes", budget.max_bytes),
                    ("neighbors.maxItemBytes", budget.max_item_bytes),
                ],
            );
            write_view_member(out, [ViewEntry::new(s, node)]);
        })
    };
    let mut id_json = String::with_capacity(64);
    write_id(
        &mut id_json,
        CapabilityId {
            provider_id: provider,
            capability_id: capability,
        },
    );
    // Every page is measured as it would be printed: each group with its completeness word and
    // the real cursor of the row it would continue at.
    // The meta of each page completeness differs only in its completeness word.
    meta.completeness = Completeness::Complete;
    let mut printed_meta = String::with_capacity(512);
    write_meta(&mut printed_meta, &meta);
    let skeleton = r#"{"id":,"groups":{},"meta":}"#.len()
        + id_json.len()
        + printed_meta.len()
        + Kind::ALL
            .iter()
            .map(|k| k.as_str().len() + 3)
            .sum::<usize>()
        // the commas between the groups
        + (Kind::ALL.len() - 1);
    let skeletons = COMPLETENESS
        .map(|c| skeleton + completeness_word(c) - completeness_word(Completeness::Complete));
    // Groups' bindings differ only in the hash of their filter, which has one length.
    let lengths = cursor::Lengths::new(&Binding {
        kind: "neighbors",
        revision: &s.static_revision,
        filter: "",
    })?;
    let cursor_len = |kind: Kind, pos: usize| {
        cursor_member_len(lengths.of(s.capability(s.neighbours(node, kind)[pos]).id()))
    };
    let max = budget.max_bytes as usize;
    let mut groups: Vec<Group> = Kind::ALL
        .iter()
        .map(|&k| {
            let list = s.neighbours(node, k);
            let start = starts[k as usize];
            let has_rows = kinds.contains(&k) && start < list.len();
            let expected = match has_rows {
                true => list[start..(start + limit).min(list.len())]
                    .iter()
                    .map(|&t| catalog_row_estimate(s, t) + 1)
                    .sum::<usize>()
                    .min(max),
                false => 0,
            };
            Group {
                rows: Rows::with_capacity(expected),
                next: has_rows.then_some(starts[k as usize]),
                omitted: false,
            }
        })
        .collect();
    let mut shapes: Vec<Shape> = Kind::ALL
        .iter()
        .zip(&groups)
        .map(|(&k, g)| Shape {
            rows: g.rows.len(),
            cursor: g.next.map(|pos| cursor_len(k, pos)),
            omitted: false,
        })
        .collect();
    let mut warnings = Warnings::default();
    let streams = groups.iter().filter(|g| g.next.is_some()).count();
    if page_len(&skeletons, &shapes, &warnings) > max {
        return Err(no_progress("neighbors.maxBytes", budget.max_bytes));
    }

    let mut consumed_any = false;
    for kind in Kind::ALL {
        let k = kind as usize;
        let group = &mut groups[k];
        let list = s.neighbours(node, kind);
        let mut served = 0;
        while let Some(pos) = group.next.filter(|_| served < limit) {
            crate::opcount::tick(crate::opcount::Op::NeighbourStep);
            let target = list[pos];
            let following = (pos + 1 < list.len()).then_some(pos + 1);
            let before = shapes[k];
            shapes[k].cursor = following.map(|f| cursor_len(kind, f));
            let row = group.rows.append(|out| write_catalog_row(out, s, target));
            if row.len as u64 > budget.max_item_bytes {
                group.rows.take_back(row);
                let mut w = oversized_row(
                    &format_qualified(provider, s.capability(target).id()),
                    "neighbors.maxItemBytes",
                    budget.max_item_bytes,
                );
                if let Value::Object(m) = &mut w {
                    if let Some(Value::Object(d)) = m.get_mut("details") {
                        d.insert("kind".into(), kind.as_str().into());
                    }
                }
                shapes[k].omitted = true;
                if page_len(&skeletons, &shapes, &warnings.with(&w)) > max {
                    shapes[k] = before;
                    break;
                }
                warnings = warnings.with(&w);
                meta.warnings.push(w);
                group.omitted = true;
            } else {
                shapes[k].rows = group.rows.len();
                if page_len(&skeletons, &shapes, &warnings) > max {
                    group.rows.take_back(row);
                    shapes[k] = before;
                    break;
                }
            }
            consumed_any = true;
            served += 1;
            group.next = following;
        }
    }
    if streams > 0 && !consumed_any {
        return Err(no_progress("neighbors.maxBytes", budget.max_bytes));
    }

    let (mut partial, mut truncated) = (false, false);
    let mut page =
        String::with_capacity(skeleton + shapes.iter().map(|g| g.rows).sum::<usize>() + 256);
    page.push_str(r#"{"id":"#);
    page.push_str(&id_json);
    page.push_str(r#","groups":{"#);
    for (kind, group) in Kind::ALL.into_iter().zip(groups) {
        let next_cursor = group
            .next
            .map(|pos| {
                cursor::encode(
                    &binding(kind),
                    s.capability(s.neighbours(node, kind)[pos]).id(),
                )
            })
            .transpose()?;
        let completeness = if group.omitted {
            Completeness::Partial
        } else if next_cursor.is_some() {
            Completeness::Truncated
        } else {
            Completeness::Complete
        };
        partial |= group.omitted;
        truncated |= next_cursor.is_some();
        if kind != Kind::ALL[0] {
            page.push(',');
        }
        page.push('"');
        page.push_str(kind.as_str());
        page.push_str(r#"":{"items":"#);
        group.rows.finish_into(&mut page);
        page.push_str(r#","completeness":"#);
        page.push_str(completeness.json());
        if let Some(c) = next_cursor {
            page.push_str(r#","nextCursor":""#);
            page.push_str(&c);
            page.push('"');
        }
        page.push('}');
    }
    meta.completeness = if partial {
        Completeness::Partial
    } else if truncated {
        Completeness::Truncated
    } else {
        Completeness::Complete
    };
    page.push_str(r#"},"meta":"#);
    write_meta(&mut page, &meta);
    page.push('}');
    debug_assert_eq!(page.len(), page_len(&skeletons, &shapes, &warnings));
    within_budget(page, "neighbors.maxBytes", budget.max_bytes)
}
