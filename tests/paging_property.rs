//! Byte-budgeted pages on generated graphs, over many `maxBytes` values: no page exceeds its
//! budget, and no page could have held one more row (its real cursor included).

mod common;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use capability_graph::engine::Engine;
use common::Rng;
use serde_json::{json, Value};

/// An ID of 1 to 128 characters, so that cursors of different lengths meet the budget.
fn random_id(rng: &mut Rng, prefix: &str) -> String {
    let span = if rng.below(4) == 0 { 120 } else { 24 };
    let len = 1 + rng.below(span) as usize;
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789._-";
    let mut id = prefix.to_owned();
    while id.len() < prefix.len() + len && id.len() < 128 {
        id.push(alphabet[rng.below(alphabet.len() as u64) as usize] as char);
    }
    id
}

/// Providers with capabilities of varied ID and text lengths and random relations between them.
fn random_config(rng: &mut Rng, max_bytes: u64) -> (Value, Vec<(String, Vec<String>)>) {
    let mut providers = Vec::new();
    let mut ids = Vec::new();
    for p in 0..1 + rng.below(3) {
        let provider_id = random_id(rng, &format!("p{p}"));
        let mut capability_ids: Vec<String> = Vec::new();
        while capability_ids.len() < 3 + rng.below(30) as usize {
            let id = random_id(rng, "c");
            if !capability_ids.contains(&id) {
                capability_ids.push(id);
            }
        }
        let n = capability_ids.len();
        let capabilities: Vec<Value> = (0..n)
            .map(|i| {
                // Forward edges point at later entries, so `parents` and `specializes` stay acyclic.
                let pick = |rng: &mut Rng| {
                    let mut targets: Vec<String> = Vec::new();
                    for _ in 0..rng.below(5) {
                        if i + 1 < n {
                            let t = &capability_ids[i + 1 + rng.below((n - i - 1) as u64) as usize];
                            if !targets.contains(t) {
                                targets.push(t.clone());
                            }
                        }
                    }
                    targets
                };
                json!({
                    "capabilityId": capability_ids[i],
                    "name": "N".repeat(1 + rng.below(40) as usize),
                    "description": "d".repeat(1 + rng.below(300) as usize),
                    "whenToUse": "w",
                    "parents": pick(rng),
                    "specializes": pick(rng),
                    "related": pick(rng),
                    "requires": pick(rng),
                })
            })
            .collect();
        providers.push(json!({ "definition": {
            "providerId": provider_id, "name": "P", "version": "1", "capabilities": capabilities } }));
        ids.push((provider_id, capability_ids));
    }
    let config = json!({ "providers": providers, "budgets": {
        "catalog": { "maxBytes": max_bytes, "maxItemBytes": 1_000_000 },
        "neighbors": { "maxBytes": max_bytes, "maxItemBytes": 1_000_000 },
        "selection": { "maxNodes": 1000, "maxEdges": 5000 },
        "resolve": { "maxNodes": 1000, "maxEdges": 5000 } } });
    (config, ids)
}

fn parse(text: &str) -> Value {
    let v: Value = serde_json::from_str(text).unwrap();
    // Pages are compact JSON in key order, so a page rebuilt from its parse measures the same.
    assert_eq!(v.to_string(), text, "pages print as compact JSON");
    v
}

/// The cursor the same query would hand out for a page stopping at `after`: cursors of one
/// query differ only in their position.
fn cursor_at(cursor: &str, after: &str) -> String {
    let mut wire: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(cursor).unwrap()).unwrap();
    wire["after"] = after.into();
    URL_SAFE_NO_PAD.encode(wire.to_string())
}

fn budget_error(result: Result<String, capability_graph::error::GraphError>) -> Option<String> {
    match result {
        Ok(text) => Some(text),
        Err(e) => {
            assert_eq!(e.code().as_str(), "CG_BUDGET_EXCEEDED", "{e:?}");
            None
        }
    }
}

/// The page of only the next row, as a query under a budget of `max_bytes` would print it, built
/// from a page served under a larger budget.
fn catalog_one_row(
    whole: &Engine,
    all: &[Value],
    served: usize,
    cursor: &Option<String>,
    max_bytes: usize,
) -> usize {
    let args = match cursor {
        Some(c) => json!({ "cursor": c }),
        None => json!({}),
    };
    let mut page = parse(&whole.query("listCatalog", &args.to_string(), None).unwrap());
    page["meta"]["budgets"]["catalog.maxBytes"] = max_bytes.into();
    page["items"] = json!([all[served]]);
    match all.get(served + 1) {
        Some(after) => {
            let template = parse(&whole.query("listCatalog", r#"{"limit":1}"#, None).unwrap());
            let template = template["nextCursor"].as_str().unwrap();
            page["nextCursor"] = cursor_at(template, after["qualifiedId"].as_str().unwrap()).into();
            page["meta"]["completeness"] = "truncated".into();
        }
        None => {
            page.as_object_mut().unwrap().remove("nextCursor");
            page["meta"]["completeness"] = "complete".into();
        }
    }
    page.to_string().len()
}

/// Walks every catalog page.
fn check_catalog(engine: &Engine, whole: &Engine, all: &[Value], max_bytes: usize, round: &str) {
    let mut cursor: Option<String> = None;
    let mut served = 0;
    loop {
        let args = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let Some(text) = budget_error(engine.query("listCatalog", &args.to_string(), None)) else {
            // No progress is allowed only when the next row alone does not fit.
            let len = catalog_one_row(whole, all, served, &cursor, max_bytes);
            assert!(
                len > max_bytes,
                "{round}: refused a page of one row ({len} bytes)"
            );
            return;
        };
        assert!(
            text.len() <= max_bytes,
            "{round}: page of {} bytes",
            text.len()
        );
        let page = parse(&text);
        let items = page["items"].as_array().unwrap();
        assert!(!items.is_empty(), "{round}: an empty page with a cursor");
        served += items.len();
        let Some(next) = page["nextCursor"].as_str() else {
            assert_eq!(served, all.len(), "{round}: every row served");
            return;
        };
        // One more row: the next one, with the cursor the page would then carry.
        let mut bigger = page.clone();
        bigger["items"]
            .as_array_mut()
            .unwrap()
            .push(all[served].clone());
        match all.get(served + 1) {
            Some(after) => {
                bigger["nextCursor"] =
                    cursor_at(next, after["qualifiedId"].as_str().unwrap()).into();
            }
            None => {
                bigger.as_object_mut().unwrap().remove("nextCursor");
                bigger["meta"]["completeness"] = "complete".into();
            }
        }
        let len = bigger.to_string().len();
        assert!(
            len > max_bytes,
            "{round}: page of {} rows ({} bytes) could have held one more ({len} bytes)",
            items.len(),
            text.len()
        );
        cursor = Some(next.to_owned());
    }
}

const KINDS: [&str; 8] = [
    "parents",
    "children",
    "specializes",
    "specializedBy",
    "related",
    "relatedBy",
    "requires",
    "requiredBy",
];

fn group_list<'a>(all: &'a Value, kind: &str) -> &'a [Value] {
    all["groups"][kind]["items"].as_array().unwrap()
}

/// Asserts that no group of `page` could take its next row: every group with a cursor is
/// given its next row (and the cursor it would then carry) and the page no longer fits.
fn no_group_takes_one_more(
    page: &Value,
    all: &Value,
    served: &[usize; 8],
    max_bytes: usize,
    round: &str,
) {
    for (k, kind) in KINDS.iter().enumerate() {
        let Some(next) = page["groups"][kind]["nextCursor"].as_str() else {
            continue;
        };
        let list = group_list(all, kind);
        let mut bigger = page.clone();
        let g = &mut bigger["groups"][kind];
        g["items"]
            .as_array_mut()
            .unwrap()
            .push(list[served[k]].clone());
        match list.get(served[k] + 1) {
            Some(after) => {
                g["nextCursor"] =
                    cursor_at(next, after["id"]["capabilityId"].as_str().unwrap()).into();
            }
            None => {
                g.as_object_mut().unwrap().remove("nextCursor");
                g["completeness"] = "complete".into();
            }
        }
        if !KINDS
            .iter()
            .any(|k| bigger["groups"][k].get("nextCursor").is_some())
        {
            bigger["meta"]["completeness"] = "complete".into();
        }
        let len = bigger.to_string().len();
        assert!(
            len > max_bytes,
            "{round}: {kind} could have held one more row ({len} bytes)"
        );
    }
}

/// Walks every neighbour page of one capability.
fn check_neighbors(
    engine: &Engine,
    whole: &Engine,
    id: &str,
    all: &Value,
    max_bytes: usize,
    round: &str,
) {
    let mut cursors = serde_json::Map::new();
    let mut served = [0usize; 8];
    let mut kinds: Vec<&str> = KINDS.to_vec();
    loop {
        let query = json!({ "kinds": kinds, "cursors": cursors, "limitPerKind": 100 });
        let args = json!([id, query]).to_string();
        let Some(text) = budget_error(engine.query("getNeighbors", &args, None)) else {
            // Refused: either the skeleton with its real cursors is over budget, or no group
            // can take its first row.
            let template = parse(
                &whole
                    .query(
                        "getNeighbors",
                        &json!([id, { "limitPerKind": 1 }]).to_string(),
                        None,
                    )
                    .unwrap(),
            );
            let Some(template) = KINDS
                .iter()
                .find_map(|k| template["groups"][k]["nextCursor"].as_str())
            else {
                return;
            };
            let mut page = parse(&whole.query("getNeighbors", &args, None).unwrap());
            page["meta"]["budgets"]["neighbors.maxBytes"] = max_bytes.into();
            page["meta"]["completeness"] = "truncated".into();
            for (k, kind) in KINDS.iter().enumerate() {
                let g = &mut page["groups"][kind];
                g["items"] = json!([]);
                if kinds.contains(kind) && served[k] < group_list(all, kind).len() {
                    let first = &group_list(all, kind)[served[k]]["id"]["capabilityId"];
                    g["completeness"] = "truncated".into();
                    g["nextCursor"] = cursor_at(template, first.as_str().unwrap()).into();
                }
            }
            if page.to_string().len() <= max_bytes {
                no_group_takes_one_more(&page, all, &served, max_bytes, round);
            }
            return;
        };
        assert!(
            text.len() <= max_bytes,
            "{round}: page of {} bytes",
            text.len()
        );
        let page = parse(&text);
        let mut progress = false;
        for (k, kind) in KINDS.iter().enumerate() {
            let items = page["groups"][kind]["items"].as_array().unwrap();
            progress |= !items.is_empty();
            served[k] += items.len();
        }
        no_group_takes_one_more(&page, all, &served, max_bytes, round);
        let next_cursors: serde_json::Map<String, Value> = KINDS
            .iter()
            .filter_map(|k| {
                Some((
                    (*k).to_owned(),
                    page["groups"][k].get("nextCursor")?.clone(),
                ))
            })
            .collect();
        for (k, kind) in KINDS.iter().enumerate() {
            if kinds.contains(kind) && !next_cursors.contains_key(*kind) {
                assert_eq!(
                    served[k],
                    group_list(all, kind).len(),
                    "{round}: all of {kind}"
                );
            }
        }
        if next_cursors.is_empty() {
            return;
        }
        assert!(progress, "{round}: a page without progress");
        kinds = KINDS
            .iter()
            .copied()
            .filter(|k| next_cursors.contains_key(*k))
            .collect();
        cursors = next_cursors;
    }
}

/// A budget of exactly the size a page has under a larger budget serves it whole.
fn whole_page_fits(config: &Value, args: &str, verb: &str, group: &str, round: &str) {
    let engine = Engine::open(&config.to_string(), None).unwrap();
    let text = engine.query(verb, args, None).unwrap();
    let mut config = config.clone();
    config["budgets"][group]["maxBytes"] = text.len().into();
    let engine = Engine::open(&config.to_string(), None).unwrap();
    let fitted = engine.query(verb, args, None);
    let fitted =
        fitted.unwrap_or_else(|e| panic!("{round}: {verb} at {} bytes: {e:?}", text.len()));
    assert_eq!(
        parse(&fitted)["meta"]["completeness"],
        "complete",
        "{round}: {verb}"
    );
}

#[test]
fn catalog_and_neighbour_pages_are_full_and_within_budget() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for graph in 0..12 {
        let (config, ids) = random_config(&mut rng, 1_000_000);
        let whole = Engine::open(&config.to_string(), None).unwrap();
        let all: Vec<Value> = parse(&whole.query("listCatalog", "{}", None).unwrap())["items"]
            .as_array()
            .unwrap()
            .clone();
        let neighbours: Vec<(String, Value)> = ids
            .iter()
            .flat_map(|(p, cs)| cs.iter().take(6).map(move |c| format!("{p}::{c}")))
            .map(|id| {
                let args = json!([id, { "limitPerKind": 100 }]).to_string();
                let all = parse(&whole.query("getNeighbors", &args, None).unwrap());
                (id, all)
            })
            .collect();
        whole_page_fits(
            &config,
            "{}",
            "listCatalog",
            "catalog",
            &format!("graph {graph}"),
        );
        for (id, _) in &neighbours {
            let args = json!([id, { "limitPerKind": 100 }]).to_string();
            whole_page_fits(
                &config,
                &args,
                "getNeighbors",
                "neighbors",
                &format!("graph {graph}"),
            );
        }
        for step in 0..14 {
            let max_bytes = 1_200 + rng.below(9_000) + step * 50;
            let mut config = config.clone();
            config["budgets"]["catalog"]["maxBytes"] = max_bytes.into();
            config["budgets"]["neighbors"]["maxBytes"] = max_bytes.into();
            let engine = Engine::open(&config.to_string(), None).unwrap();
            let round = format!("graph {graph}, maxBytes {max_bytes}");
            check_catalog(&engine, &whole, &all, max_bytes as usize, &round);
            for (id, all) in &neighbours {
                let round = format!("{round}, {id}");
                check_neighbors(&engine, &whole, id, all, max_bytes as usize, &round);
            }
        }
    }
}
