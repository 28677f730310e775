//! The loops that grow with a provider stay linear: on a generated 200k-capability provider,
//! operation counters (`crate::opcount`) bound validation, cycle checks, closures, neighbour
//! paging and the lexical index build by a small multiple of the graph's size. Counts, never
//! timings, so the tests say the same on any machine.

use crate::engine::Engine;
use crate::opcount::{count, reset, Op};
use serde_json::{json, Value};

const N: usize = 200_000;

fn id(i: usize) -> String {
    format!("c{i:06}")
}

/// One hub (`c000000`, parent of every other capability) and one `requires` chain through all
/// of them (`c199999` → … → `c000000`): the deepest cycle search, the longest closure and the
/// longest neighbour list a provider of this size can have.
fn open_generated() -> Engine {
    let capabilities: Vec<Value> = (0..N)
        .map(|i| {
            let mut c = json!({
                "capabilityId": id(i),
                "name": format!("Capability {i}"),
                "description": format!("Validates batch {} of signed payloads.", i % 97),
                "whenToUse": "When a payload arrives.",
            });
            if i > 0 {
                c["parents"] = json!([id(0)]);
                c["requires"] = json!([id(i - 1)]);
            }
            c
        })
        .collect();
    let config = json!({
        "providers": [{ "definition": {
            "providerId": "gen", "name": "Generated", "version": "1", "capabilities": capabilities,
        } }],
        "budgets": { "selection": { "maxNodes": N, "maxEdges": N } },
    });
    match Engine::open(&config.to_string(), None) {
        Ok(engine) => engine,
        Err(e) => panic!("open failed: {}", e.to_json()),
    }
}

fn query(engine: &Engine, verb: &str, args: Value) -> Value {
    match engine.query(verb, &args.to_string(), None) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(e) => panic!("{verb} failed: {}", e.to_json()),
    }
}

#[test]
fn the_largest_loops_stay_linear_on_200k_capabilities() {
    let n = N as u64;
    let edges = 2 * (n - 1);

    reset();
    let engine = open_generated();
    // Each declared endpoint is resolved once.
    assert_eq!(count(Op::Endpoint), edges, "validation: endpoints resolved");
    // Per acyclic relation the search enters each node once and follows each edge once.
    let cycle_steps = count(Op::CycleStep);
    assert!(
        cycle_steps <= 3 * n + edges,
        "cycle checks: {cycle_steps} steps for {n} capabilities"
    );

    // The closure of the chain's far end follows every `requires` edge once.
    reset();
    let resolved = query(
        &engine,
        "resolveSelection",
        json!({ "selected": [format!("gen::{}", id(N - 1))] }),
    );
    assert_eq!(resolved["resolved"].as_array().map(Vec::len), Some(N));
    assert_eq!(
        count(Op::ClosureEdge),
        n - 1,
        "closure: requires edges followed"
    );

    // Walking the hub's children page by page looks at each child a bounded number of times,
    // however far into the list a cursor points.
    reset();
    let mut seen = 0;
    let mut cursor: Option<String> = None;
    loop {
        let mut q = json!({ "kinds": ["children"], "limitPerKind": 100 });
        if let Some(c) = &cursor {
            q["cursors"] = json!({ "children": c });
        }
        let page = query(
            &engine,
            "getNeighbors",
            json!([format!("gen::{}", id(0)), q]),
        );
        let group = &page["groups"]["children"];
        seen += group["items"].as_array().map_or(0, Vec::len);
        match group["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, N - 1);
    let steps = count(Op::NeighbourStep);
    assert!(
        steps <= 3 * n,
        "neighbour paging: {steps} steps for {} children",
        N - 1
    );

    // The index posts each term of each capability once.
    reset();
    engine.build_indexes_here();
    let postings = count(Op::IndexPosting);
    assert!(
        postings > n && postings <= 40 * n,
        "index build: {postings} postings for {n} capabilities"
    );
}
