//! `resolveSelection`: the capabilities an agent selected plus everything they require, all or
//! nothing (the closure engine's strict mode).

use super::args::{target_list, Args};
use super::closure::{close_over_requires, Limits, Mode, Node};
use super::views::{to_json, CapabilityId, ViewEntry};
use super::Call;
use crate::error::Result;
use crate::scope::{Meta, View};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeSet;

const KEYS: [&str; 4] = [
    "selected",
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
];

#[derive(Serialize)]
struct Edge<'a> {
    from: CapabilityId<'a>,
    to: CapabilityId<'a>,
}

#[derive(Serialize)]
struct Reason<'a> {
    requested: bool,
    #[serde(rename = "requiredBy")]
    required_by: Vec<CapabilityId<'a>>,
}

#[derive(Serialize)]
struct ReasonEntry<'a> {
    id: CapabilityId<'a>,
    reason: Reason<'a>,
}

#[derive(Serialize)]
struct SelectionResult<'a> {
    requested: Vec<CapabilityId<'a>>,
    resolved: Vec<CapabilityId<'a>>,
    added: Vec<CapabilityId<'a>>,
    #[serde(rename = "requiresEdges")]
    requires_edges: Vec<Edge<'a>>,
    reasons: Vec<ReasonEntry<'a>>,
    meta: Meta,
}

fn id_of(view: &View, (p, n): Node) -> CapabilityId<'_> {
    let s = view.snapshot(p);
    CapabilityId {
        provider_id: s.provider_id(),
        capability_id: &s.capability(n).id,
    }
}

/// Orders nodes as their qualified IDs sort: by provider ID, then capability ID.
fn qualified_order(view: &View, a: Node, b: Node) -> std::cmp::Ordering {
    let (x, y) = (id_of(view, a), id_of(view, b));
    (x.provider_id, x.capability_id).cmp(&(y.provider_id, y.capability_id))
}

pub fn resolve_selection(call: &Call, json: &str) -> Result<String> {
    let args = Args::parse(json, &KEYS)?;
    let budget = &call.budgets.selection;
    let selected = target_list(&args, "selected", budget.max_selected)?;
    let (full, roots) = call.locate_all(&args, "selected", selected)?;
    // The result speaks for the selected providers only.
    let providers: BTreeSet<usize> = roots.iter().map(|n| n.0).collect();
    let view = View {
        scope: providers.iter().map(|&p| full.scope[p].clone()).collect(),
        served: providers.iter().map(|&p| full.served[p].clone()).collect(),
        refresh_failed: full.refresh_failed,
    };
    let remap = |p: usize| providers.iter().position(|&x| x == p).unwrap_or(0);
    let roots: Vec<Node> = roots.iter().map(|&(p, n)| (remap(p), n)).collect();
    let limits = Limits {
        max_nodes: budget.max_nodes as usize,
        max_edges: budget.max_edges as usize,
        nodes_budget: "selection.maxNodes",
        edges_budget: "selection.maxEdges",
    };
    let closure = close_over_requires(&view, &roots, limits, Mode::AllOrNothing)?;

    let mut order: Vec<usize> = (0..closure.nodes.len()).collect();
    order.sort_by(|&a, &b| qualified_order(&view, closure.nodes[a], closure.nodes[b]));
    let id = |i: usize| id_of(&view, closure.nodes[i]);
    let mut edges = closure.edges.clone();
    edges.sort_by(|&(f1, t1), &(f2, t2)| {
        qualified_order(&view, closure.nodes[f1], closure.nodes[f2])
            .then_with(|| qualified_order(&view, closure.nodes[t1], closure.nodes[t2]))
    });
    let reasons = order
        .iter()
        .map(|&i| {
            let mut by = closure.required_by[i].clone();
            by.sort_by(|&a, &b| qualified_order(&view, closure.nodes[a], closure.nodes[b]));
            ReasonEntry {
                id: id(i),
                reason: Reason {
                    requested: i < closure.requested,
                    required_by: by.into_iter().map(id).collect(),
                },
            }
        })
        .collect();
    let mut meta = Meta::of(&view, true);
    meta.extra.insert(
        "budgets".into(),
        json!({
            "selection.maxSelected": budget.max_selected,
            "selection.maxNodes": budget.max_nodes,
            "selection.maxEdges": budget.max_edges,
        }),
    );
    let viewed: Vec<ViewEntry> = order
        .iter()
        .map(|&i| ViewEntry::new(view.snapshot(closure.nodes[i].0), closure.nodes[i].1))
        .collect();
    meta.extra
        .insert("view".into(), json!({ "capabilities": viewed }));
    let result = SelectionResult {
        requested: (0..closure.requested).map(id).collect(),
        resolved: order.iter().map(|&i| id(i)).collect(),
        added: order
            .iter()
            .filter(|&&i| i >= closure.requested)
            .map(|&i| id(i))
            .collect(),
        requires_edges: edges
            .iter()
            .map(|&(f, t)| Edge {
                from: id(f),
                to: id(t),
            })
            .collect(),
        reasons,
        meta,
    };
    Ok(to_json(&result))
}
