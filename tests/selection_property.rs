//! Random DAGs into `resolveSelection` and `resolve`, checked against a naive closure.

mod common;

use capability_graph::engine::Engine;
use common::Rng;
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn id(i: usize) -> String {
    format!("n{i:03}")
}

/// `requires[i]` only points at larger indices, so the graph is a DAG.
fn random_dag(rng: &mut Rng, n: usize) -> Vec<Vec<usize>> {
    (0..n)
        .map(|i| {
            let mut targets = BTreeSet::new();
            for _ in 0..rng.below(4) {
                if i + 1 < n {
                    targets.insert(i + 1 + rng.below((n - i - 1) as u64) as usize);
                }
            }
            targets.into_iter().collect()
        })
        .collect()
}

fn naive_closure(requires: &[Vec<usize>], roots: &[usize]) -> BTreeSet<usize> {
    let mut seen: BTreeSet<usize> = roots.iter().copied().collect();
    let mut changed = true;
    while changed {
        changed = false;
        for from in seen.clone() {
            for &to in &requires[from] {
                changed |= seen.insert(to);
            }
        }
    }
    seen
}

fn open(requires: &[Vec<usize>]) -> Engine {
    let capabilities: Vec<Value> = requires
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({
                "capabilityId": id(i), "name": "N", "description": "D", "whenToUse": "W",
                "requires": r.iter().map(|&t| id(t)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let config = json!({ "providers": [{ "definition": {
        "providerId": "p", "name": "P", "version": "1", "capabilities": capabilities } }],
        "budgets": { "selection": { "maxNodes": 1000, "maxEdges": 5000 }, "resolve": { "maxNodes": 1000, "maxEdges": 5000 } } });
    Engine::open(&config.to_string(), None).expect("random DAG opens")
}

#[test]
fn selection_and_resolve_match_a_naive_closure_on_random_dags() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for round in 0..60 {
        let n = 5 + (round % 40);
        let requires = random_dag(&mut rng, n);
        let engine = open(&requires);
        let roots: Vec<usize> = (0..1 + rng.below(4))
            .map(|_| rng.below(n as u64) as usize)
            .collect();
        let expected: BTreeSet<String> = naive_closure(&requires, &roots)
            .into_iter()
            .map(id)
            .collect();
        let selected: Vec<String> = roots.iter().map(|&r| format!("p::{}", id(r))).collect();

        let out: Value = serde_json::from_str(
            &engine
                .query(
                    "resolveSelection",
                    &json!({ "selected": selected }).to_string(),
                    None,
                )
                .unwrap(),
        )
        .unwrap();
        let resolved: Vec<String> = out["resolved"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["capabilityId"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            resolved.iter().cloned().collect::<BTreeSet<_>>(),
            expected,
            "round {round}"
        );
        let mut sorted = resolved.clone();
        sorted.sort();
        assert_eq!(resolved, sorted, "resolved is sorted");
        let edges = out["requiresEdges"].as_array().unwrap().len();
        let expected_edges: usize = expected
            .iter()
            .map(|c| requires[c[1..].parse::<usize>().unwrap()].len())
            .sum();
        assert_eq!(
            edges, expected_edges,
            "round {round}: every edge inside the closure"
        );

        let out: Value = serde_json::from_str(
            &engine
                .query("resolve", &json!({ "ids": selected }).to_string(), None)
                .unwrap(),
        )
        .unwrap();
        let items: BTreeSet<String> = out["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["id"]["capabilityId"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(items, expected, "round {round}: resolve agrees");
        assert_eq!(out["meta"]["completeness"], "complete");
    }
}
