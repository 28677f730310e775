//! `listCatalog`: every capability in scope, providers in ID order then capabilities in ID
//! order, filtered by ID prefix or direct parent, paged by count and bytes.

use crate::cursor::{self, Binding};
use crate::error::Result;
use crate::ids::{format_qualified, parse_qualified, ID_MAX_BYTES};
use crate::query::args::{capability_ref, clamped_integer, invalid, too_large, Args};
use crate::query::page::{
    cursor_member_len, no_progress, oversized_row, within_budget, Rows, Warnings,
};
use crate::query::views::catalog_row;
use crate::query::Call;
use crate::scope::{Completeness, Meta, View};
use crate::snapshot::Kind;
use serde_json::json;

/// Completeness words in the order page measurements index them.
const COMPLETENESS: [Completeness; 3] = [
    Completeness::Complete,
    Completeness::Truncated,
    Completeness::Partial,
];

const KEYS: [&str; 7] = [
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
    "capabilityIdPrefix",
    "parent",
    "cursor",
    "limit",
];

/// Rows of one provider that pass the filters, in ID order, from node `from` on.
fn provider_rows<'v>(
    view: &'v View,
    p: usize,
    prefix: &'v str,
    parent: Option<u32>,
    from: u32,
) -> Box<dyn Iterator<Item = u32> + 'v> {
    let s = view.snapshot(p);
    let matches = move |n: &u32| s.capability(*n).id().starts_with(prefix);
    match parent {
        Some(parent) => {
            let children = s.neighbours(parent, Kind::Children);
            let start = children.partition_point(|&c| c < from);
            Box::new(children[start..].iter().copied().filter(matches))
        }
        None => {
            let first = s.capabilities.partition_point(|c| c.id() < prefix) as u32;
            let total = s.capabilities.len() as u32;
            Box::new((first.max(from)..total).take_while(move |n| matches(n)))
        }
    }
}

pub fn list_catalog(call: &Call, json: &str) -> Result<String> {
    let args = Args::parse(json, &KEYS)?;
    let budget = &call.budgets.catalog;
    let prefix = args.string("capabilityIdPrefix")?.unwrap_or("");
    // No capability ID is longer, and the page echoes the prefix in its meta.
    if prefix.len() > ID_MAX_BYTES {
        return Err(too_large("capabilityIdPrefix", ID_MAX_BYTES as u64));
    }
    let limit = match args.get("limit")? {
        None => budget.max_items,
        Some(v) => clamped_integer(v, "limit", 1, budget.max_items)?,
    };
    let cursor_arg = args.string("cursor")?;
    let parent_ref = args
        .get("parent")?
        .map(|v| capability_ref(v, "parent", call.bound))
        .transpose()?;
    let view = call.view(&args, parent_ref.map(|r| std::iter::once(r.0)))?;
    let parent = parent_ref
        .map(|(p, c)| call.locate(&view, p, c))
        .transpose()?;

    let filter = json!({
        "scope": view.scope,
        "prefix": args.string("capabilityIdPrefix")?,
        "parent": parent_ref.map(|(p, c)| json!({ "providerId": p, "capabilityId": c })),
        "limit": limit,
    });
    let mut meta = Meta::of(&view, false);
    let filter_text = filter.to_string();
    let binding = Binding {
        kind: "catalog",
        revision: &meta.composite_static_revision,
        filter: &filter_text,
    };

    // Where this page starts: the first provider, or the row a cursor names.
    let (mut start_p, mut start_node) = (0usize, 0u32);
    if let Some(c) = cursor_arg {
        let after = cursor::decode(c, &binding)?;
        let (p, n) = parse_qualified(&after)
            .and_then(|(p, c)| {
                let i = view.position(p)?;
                Some((i, view.snapshot(i).find(c)?))
            })
            .ok_or_else(|| invalid("cursor", "cursor returned by the same query"))?;
        (start_p, start_node) = (p, n);
    }
    let providers: Vec<usize> = match parent {
        Some((p, _)) => vec![p],
        None => (0..view.scope.len()).collect(),
    };
    let rows = providers
        .into_iter()
        .filter(|&p| p >= start_p)
        .flat_map(|p| {
            let from = if p == start_p { start_node } else { 0 };
            provider_rows(&view, p, prefix, parent.map(|x| x.1), from).map(move |n| (p, n))
        });

    meta.extra.insert("filter".into(), filter);
    meta.extra.insert(
        "budgets".into(),
        json!({
            "catalog.maxBytes": budget.max_bytes,
            "catalog.maxItems": budget.max_items,
            "catalog.maxItemBytes": budget.max_item_bytes,
        }),
    );
    // A page is measured as it would be printed: its completeness word and the cursor of the
    // row that would follow it.
    let mut skeletons = [0usize; 3];
    for (i, c) in COMPLETENESS.into_iter().enumerate() {
        meta.completeness = c;
        skeletons[i] = r#"{"items":,"meta":}"#.len() + meta.to_json().len();
    }
    let lengths = cursor::Lengths::new(&binding)?;
    let cursor_len = |(p, n): (usize, u32)| {
        let s = view.snapshot(p);
        cursor_member_len(lengths.of(&format_qualified(s.provider_id(), s.capability(n).id())))
    };
    let page_len = |items: usize, warnings: &Warnings, following: Option<(usize, u32)>| {
        let completeness = if warnings.count > 0 {
            2
        } else if following.is_some() {
            1
        } else {
            0
        };
        skeletons[completeness] + items + warnings.bytes() + following.map_or(0, cursor_len)
    };
    let max_bytes = budget.max_bytes as usize;

    let mut rows = rows.peekable();
    let mut items = Rows::new();
    let mut warnings = Warnings::default();
    let mut consumed = 0u64;
    let mut next: Option<(usize, u32)> = None;
    while let Some((p, n)) = rows.next() {
        if consumed == limit {
            next = Some((p, n));
            break;
        }
        let following = rows.peek().copied();
        let s = view.snapshot(p);
        let row = catalog_row(s, n);
        if row.len() as u64 > budget.max_item_bytes {
            let w = oversized_row(
                &format_qualified(s.provider_id(), s.capability(n).id()),
                "catalog.maxItemBytes",
                budget.max_item_bytes,
            );
            if page_len(items.len(), &warnings.with(&w), following) > max_bytes {
                next = Some((p, n));
                break;
            }
            warnings = warnings.with(&w);
            meta.warnings.push(w);
            consumed += 1;
            continue;
        }
        if page_len(items.len_with(&row), &warnings, following) > max_bytes {
            next = Some((p, n));
            break;
        }
        items.push(&row);
        consumed += 1;
    }
    if next.is_some() && items.is_empty() && meta.warnings.is_empty() {
        return Err(no_progress("catalog.maxBytes", budget.max_bytes));
    }
    let next_cursor = next
        .map(|(p, n)| {
            let s = view.snapshot(p);
            cursor::encode(
                &binding,
                &format_qualified(s.provider_id(), s.capability(n).id()),
            )
        })
        .transpose()?;
    meta.completeness = if !meta.warnings.is_empty() {
        Completeness::Partial
    } else if next_cursor.is_some() {
        Completeness::Truncated
    } else {
        Completeness::Complete
    };
    let items_len = items.len();
    let mut out = format!(r#"{{"items":{},"meta":{}"#, items.finish(), meta.to_json());
    if let Some(c) = next_cursor {
        out.push_str(&format!(r#","nextCursor":"{c}""#));
    }
    out.push('}');
    debug_assert_eq!(out.len(), page_len(items_len, &warnings, next));
    within_budget(out, "catalog.maxBytes", budget.max_bytes)
}
