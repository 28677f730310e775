//! `resolveSelection`: the capabilities an agent selected plus everything they require, all or
//! nothing (the closure engine's strict mode).

use super::closure::{close_over_requires, Limits, Mode, Node};
use crate::error::Result;
use crate::query::args::{target_list, Args};
use crate::query::views::{
    write_budgets_member, write_id, write_ids, write_view_member, CapabilityId, ViewEntry,
};
use crate::query::Call;
use crate::scope::{Meta, View};
use std::collections::BTreeSet;

const KEYS: [&str; 4] = [
    "selected",
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
];

fn id_of(view: &View, (p, n): Node) -> CapabilityId<'_> {
    CapabilityId::of(view.snapshot(p), n)
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

    // Nodes sort as their qualified IDs: a view's providers are in ID order and a snapshot
    // holds its capabilities sorted by ID, so (provider position, node) orders them alike.
    let mut order: Vec<usize> = (0..closure.nodes.len()).collect();
    order.sort_unstable_by_key(|&i| closure.nodes[i]);
    // Each node's place in that order: the other lists sort by these small numbers.
    let mut rank = vec![0u32; order.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r as u32;
    }
    let id = |i: usize| id_of(&view, closure.nodes[i]);
    let mut edges = closure.edges.clone();
    edges.sort_unstable_by_key(|&(f, t)| (rank[f], rank[t]));
    // The answer is IDs through and through: written directly (see `write_id`).
    let mut out = String::with_capacity(1024 + 200 * (closure.nodes.len() * 4 + edges.len() * 2));
    out.push_str(r#"{"requested":"#);
    write_ids(&mut out, (0..closure.requested).map(id));
    out.push_str(r#","resolved":"#);
    write_ids(&mut out, order.iter().map(|&i| id(i)));
    out.push_str(r#","added":"#);
    write_ids(
        &mut out,
        order
            .iter()
            .filter(|&&i| i >= closure.requested)
            .map(|&i| id(i)),
    );
    out.push_str(r#","requiresEdges":["#);
    for (n, &(f, t)) in edges.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(r#"{"from":"#);
        write_id(&mut out, id(f));
        out.push_str(r#","to":"#);
        write_id(&mut out, id(t));
        out.push('}');
    }
    out.push_str(r#"],"reasons":["#);
    let mut by = Vec::new();
    for (n, &i) in order.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(r#"{"id":"#);
        write_id(&mut out, id(i));
        out.push(',');
        closure.write_reason(&mut out, i, |out, required_by| {
            by.clear();
            by.extend_from_slice(required_by);
            by.sort_unstable_by_key(|&j| rank[j]);
            write_ids(out, by.iter().map(|&j| id(j)));
        });
        out.push('}');
    }
    out.push_str(r#"],"meta":"#);
    Meta::of(&view, true).write(&mut out, |out| {
        write_budgets_member(
            out,
            &[
                ("selection.maxSelected", budget.max_selected),
                ("selection.maxNodes", budget.max_nodes),
                ("selection.maxEdges", budget.max_edges),
            ],
        );
        write_view_member(
            out,
            order
                .iter()
                .map(|&i| ViewEntry::new(view.snapshot(closure.nodes[i].0), closure.nodes[i].1)),
        );
    });
    out.push('}');
    Ok(out)
}
