//! `resolve` (SPEC §6.1): explicit capabilities plus the closure of what they require.

use super::closure::{close_over_requires, Limits, Mode, Node};
use crate::error::{Code, GraphError, Result};
use crate::ids::format_qualified;
use crate::query::args::{target_list, Args};
use crate::query::views::write_static_members;
use crate::query::Call;
use crate::scope::{Completeness, Meta, View};

const KEYS: [&str; 4] = [
    "ids",
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
];

pub fn resolve(call: &Call, json: &str) -> Result<String> {
    let args = Args::parse(json, &KEYS)?;
    let budget = &call.budgets.resolve;
    let ids = target_list(&args, "ids", budget.max_ids)?;
    let (view, roots) = call.locate_all(&args, "ids", ids)?;
    resolution(&view, &roots, budget, Meta::of(&view, false)).map(|(json, _)| json)
}

/// The resolve result for `roots` (distinct, in order) on `view`, also `match`'s resolution,
/// and whether it is partial (its closure stopped at a budget).
pub fn resolution(
    view: &View,
    roots: &[Node],
    budget: &crate::config::budgets::Resolve,
    mut meta: Meta,
) -> Result<(String, bool)> {
    let limits = Limits {
        max_nodes: budget.max_nodes as usize,
        max_edges: budget.max_edges as usize,
        nodes_budget: "resolve.maxNodes",
        edges_budget: "resolve.maxEdges",
    };
    let closure = close_over_requires(view, roots, limits, Mode::Partial)?;

    let qualified = |(p, n): Node| {
        let s = view.snapshot(p);
        format_qualified(s.provider_id(), s.capability(n).id())
    };
    let names: Vec<String> = closure.nodes.iter().map(|&n| qualified(n)).collect();
    // Qualified IDs match the ID pattern on both sides of `::`: written as they are.
    let write_names = |out: &mut String, list: &mut dyn Iterator<Item = usize>| {
        out.push('[');
        for (k, i) in list.enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(&names[i]);
            out.push('"');
        }
        out.push(']');
    };
    let mut out = String::with_capacity(2048 * closure.nodes.len() + 1024);
    out.push_str(r#"{"items":["#);
    for (i, &(p, n)) in closure.nodes.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        write_static_members(&mut out, view.snapshot(p), n);
        out.push(',');
        closure.write_reason(&mut out, i, |out, by| {
            let mut by = by.to_vec();
            by.sort_unstable_by(|&a, &b| names[a].cmp(&names[b]));
            write_names(out, &mut by.into_iter());
        });
        out.push('}');
    }
    out.push_str(r#"],"requested":"#);
    write_names(&mut out, &mut (0..closure.requested));
    out.push_str(r#","added":"#);
    write_names(&mut out, &mut (closure.requested..closure.nodes.len()));
    let mut edges = closure.edges.clone();
    edges.sort_unstable_by(|&(f1, t1), &(f2, t2)| {
        (&names[f1], &names[t1]).cmp(&(&names[f2], &names[t2]))
    });
    out.push_str(r#","requiresEdges":["#);
    for (k, &(f, t)) in edges.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(r#"{"from":""#);
        out.push_str(&names[f]);
        out.push_str(r#"","to":""#);
        out.push_str(&names[t]);
        out.push_str(r#""}"#);
    }
    out.push(']');

    if let Some((name, limit)) = closure.budget_hit {
        meta.completeness = Completeness::Partial;
        meta.warnings.push(
            GraphError::new(Code::ResultTooLarge)
                .detail("budget", name)
                .detail("limit", limit)
                .to_warning(),
        );
    }
    let partial = meta.completeness == Completeness::Partial;
    out.push_str(r#","meta":"#);
    out.push_str(&meta.to_json());
    out.push('}');
    let json = out;
    if json.len() as u64 > budget.max_bytes {
        return Err(GraphError::new(Code::ResultTooLarge)
            .detail("budget", "resolve.maxBytes")
            .detail("limit", budget.max_bytes));
    }
    Ok((json, partial))
}
