//! `resolve` (SPEC §6.1): explicit capabilities plus the closure of what they require.

use super::args::{target_list, Args};
use super::closure::{close_over_requires, Limits, Mode, Node};
use super::views::StaticCapability;
use super::Call;
use crate::error::{Code, GraphError, Result};
use crate::ids::format_qualified;
use crate::scope::{Completeness, Meta, View};
use serde::Serialize;

const KEYS: [&str; 4] = [
    "ids",
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
];

#[derive(Serialize)]
struct Reason {
    requested: bool,
    #[serde(rename = "requiredBy")]
    required_by: Vec<String>,
}

#[derive(Serialize)]
struct Item<'a> {
    #[serde(flatten)]
    capability: StaticCapability<'a>,
    reason: Reason,
}

#[derive(Serialize)]
struct Edge {
    from: String,
    to: String,
}

#[derive(Serialize)]
struct ResolveResult<'a> {
    items: Vec<Item<'a>>,
    requested: Vec<String>,
    added: Vec<String>,
    #[serde(rename = "requiresEdges")]
    requires_edges: Vec<Edge>,
    meta: Meta,
}

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
        format_qualified(s.provider_id(), &s.capability(n).id)
    };
    let names: Vec<String> = closure.nodes.iter().map(|&n| qualified(n)).collect();
    let items = closure
        .nodes
        .iter()
        .enumerate()
        .map(|(i, &(p, n))| {
            let mut required_by: Vec<String> = closure.required_by[i]
                .iter()
                .map(|&j| names[j].clone())
                .collect();
            required_by.sort_unstable();
            Item {
                capability: StaticCapability::new(view.snapshot(p), n),
                reason: Reason {
                    requested: i < closure.requested,
                    required_by,
                },
            }
        })
        .collect();
    let mut requires_edges: Vec<Edge> = closure
        .edges
        .iter()
        .map(|&(f, t)| Edge {
            from: names[f].clone(),
            to: names[t].clone(),
        })
        .collect();
    requires_edges.sort_unstable_by(|a, b| (&a.from, &a.to).cmp(&(&b.from, &b.to)));

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
    let result = ResolveResult {
        items,
        requested: names[..closure.requested].to_vec(),
        added: names[closure.requested..].to_vec(),
        requires_edges,
        meta,
    };
    let json = serde_json::to_string(&result).map_err(|_| GraphError::new(Code::Internal))?;
    if json.len() as u64 > budget.max_bytes {
        return Err(GraphError::new(Code::ResultTooLarge)
            .detail("budget", "resolve.maxBytes")
            .detail("limit", budget.max_bytes));
    }
    Ok((json, partial))
}
