//! `reload` and `close` (SPEC §6.4, §6.5, §14 D1, D5): publication, current/previous
//! retention, failed candidates, argument errors and the closed graph.

mod common;

use capability_graph::engine::Engine;
use common::*;
use serde_json::{json, Value};

fn def_v(version: u32, caps: Vec<Value>) -> Value {
    let mut d = provider_def("acme", caps);
    d["version"] = json!(version.to_string());
    d
}

fn v1() -> Value {
    def_v(
        1,
        vec![cap_with("a", json!({ "name": "A one" })), cap("gone")],
    )
}

fn v2() -> Value {
    def_v(2, vec![cap_with("a", json!({ "name": "A two" })), cap("b")])
}

fn v3() -> Value {
    def_v(3, vec![cap_with("a", json!({ "name": "A three" }))])
}

fn engine_v1() -> Engine {
    open_ok(&inline_config(vec![v1()]))
}

fn reload_acme(engine: &Engine, def: Value) -> Value {
    reload_ok(engine, &json!({ "definitions": { "acme": def } }))
}

/// Where a call pinned to `revision` is served from: `current` or `previous`.
fn served_from(engine: &Engine, revision: &str) -> Value {
    resolve_a(engine, Some(revision)).unwrap()["meta"]["servedFrom"].clone()
}

fn resolve_a(
    engine: &Engine,
    required: Option<&str>,
) -> Result<Value, capability_graph::error::GraphError> {
    let mut args = json!({ "ids": ["acme::a"] });
    if let Some(rev) = required {
        args["requiredStaticRevision"] = json!(rev);
    }
    resolve(engine, &args)
}

fn entry(r: &Value) -> &Value {
    let providers = r["providers"].as_array().unwrap();
    assert_eq!(providers.len(), 1, "{r}");
    &providers[0]
}

// ---------------------------------------------------------------------------------------------
// Publication and retention

#[test]
fn inline_reload_publishes_a_new_revision() {
    let engine = engine_v1();
    let r1 = revision(&engine, "acme");
    let r = reload_acme(&engine, v2());
    assert_eq!(r["ok"], true);
    assert!(r.get("error").is_none(), "{r}");
    assert!(r.get("meta").is_none(), "reload results carry no meta: {r}");
    let e = entry(&r);
    let r2 = e["staticRevision"].as_str().unwrap().to_owned();
    assert!(is_revision(&r2));
    assert_ne!(r1, r2);
    assert_eq!(
        *e,
        json!({
            "providerId": "acme",
            "ok": true,
            "staticRevision": r2,
            "previousStaticRevision": r1,
            "servedFrom": "current",
            "refreshFailed": false,
        })
    );
    let q = resolve_ok(&engine, &json!({ "ids": ["acme::b"] }));
    assert_eq!(q["meta"]["staticRevision"], r2.as_str());
    assert_eq!(q["meta"]["servedFrom"], "current");
    assert!(q["meta"].get("refreshFailed").is_none());
    let q = resolve_a(&engine, None).unwrap();
    assert_eq!(q["items"][0]["name"], "A two");
}

#[test]
fn the_previous_revision_is_served_when_required() {
    let engine = engine_v1();
    let r1 = revision(&engine, "acme");
    let r2 = entry(&reload_acme(&engine, v2()))["staticRevision"]
        .as_str()
        .unwrap()
        .to_owned();

    let q = resolve_a(&engine, Some(&r1)).unwrap();
    assert_eq!(q["meta"]["servedFrom"], "previous");
    assert_eq!(q["meta"]["staticRevision"], r1.as_str());
    assert_eq!(q["items"][0]["staticRevision"], r1.as_str());
    assert_eq!(q["items"][0]["name"], "A one");

    let q = resolve_a(&engine, Some(&r2)).unwrap();
    assert_eq!(q["meta"]["servedFrom"], "current");
    assert_eq!(q["items"][0]["name"], "A two");

    // A capability that only the previous snapshot has.
    let gone = json!({ "ids": ["acme::gone"], "requiredStaticRevision": r1 });
    resolve(&engine, &gone).unwrap();
    assert_err(
        resolve(&engine, &json!({ "ids": ["acme::gone"] })),
        "CG_CAPABILITY_NOT_FOUND",
        "query",
        Some("refresh"),
    );
}

#[test]
fn the_oldest_revision_is_retired_by_a_second_change() {
    let engine = engine_v1();
    let r1 = revision(&engine, "acme");
    let r2 = entry(&reload_acme(&engine, v2()))["staticRevision"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = reload_acme(&engine, v3());
    let r3 = entry(&r)["staticRevision"].as_str().unwrap().to_owned();
    assert_eq!(entry(&r)["previousStaticRevision"], r2.as_str());
    assert!(r1 != r2 && r2 != r3 && r1 != r3);

    let e = assert_err(
        resolve_a(&engine, Some(&r1)),
        "CG_REVISION_MISMATCH",
        "query",
        Some("refresh"),
    );
    assert!(e.details().is_none());
    assert_eq!(served_from(&engine, &r2), "previous");
    assert_eq!(served_from(&engine, &r3), "current");
}

#[test]
fn an_unchanged_reload_publishes_nothing() {
    let engine = engine_v1();
    let r1 = revision(&engine, "acme");
    // Same definitions on a fresh graph: nothing published, so no previous.
    let r = reload_acme(&engine, v1());
    assert_eq!(r["ok"], true);
    assert_eq!(entry(&r)["staticRevision"], r1.as_str());
    assert!(entry(&r).get("previousStaticRevision").is_none(), "{r}");

    let r2 = entry(&reload_acme(&engine, v2()))["staticRevision"]
        .as_str()
        .unwrap()
        .to_owned();
    // Same definitions again (keys reordered): the previous is not retired.
    let mut same = v2();
    same["capabilities"].as_array_mut().unwrap().reverse();
    let r = reload_acme(&engine, same);
    assert_eq!(entry(&r)["staticRevision"], r2.as_str());
    assert_eq!(entry(&r)["previousStaticRevision"], r1.as_str());
    assert_eq!(served_from(&engine, &r1), "previous");

    // An inline provider reloaded without definitions cannot have changed.
    let r = reload_ok(&engine, &json!({}));
    assert_eq!(entry(&r)["staticRevision"], r2.as_str());
    assert_eq!(entry(&r)["previousStaticRevision"], r1.as_str());
    assert_eq!(served_from(&engine, &r1), "previous");
}

// ---------------------------------------------------------------------------------------------
// Failed candidates (§6.4: ok:false, CG_RELOAD_FAILED, the old current stays in service)

#[test]
fn an_invalid_candidate_keeps_the_old_current() {
    let engine = engine_v1();
    let r1 = revision(&engine, "acme");
    let bad = def_v(9, vec![cap("B")]);
    let r = reload_acme(&engine, bad);
    assert_eq!(r["ok"], false);
    assert_err_json(
        &r["error"],
        "CG_RELOAD_FAILED",
        "load",
        Some("check_config"),
    );
    assert_eq!(
        r["error"]["message"],
        "Provider reload failed; the previous snapshot stays in service"
    );
    let e = entry(&r);
    assert_eq!(e["providerId"], "acme");
    assert_eq!(e["ok"], false);
    assert_eq!(e["staticRevision"], r1.as_str());
    assert_eq!(e["servedFrom"], "current");
    assert_eq!(e["refreshFailed"], true);
    assert!(e.get("previousStaticRevision").is_none(), "{e}");
    assert_err_json(
        &e["error"],
        "CG_DEFINITION_INVALID",
        "load",
        Some("fix_input"),
    );
    check_def_details(
        &e["error"],
        Def {
            provider: Some("acme"),
            field: Some("capabilities[0].capabilityId"),
            reason: "id_invalid",
            ..Def::default()
        },
    );

    // Queries keep working on the old current and say the refresh failed.
    let q = resolve_a(&engine, None).unwrap();
    assert_eq!(q["items"][0]["name"], "A one");
    assert_eq!(q["meta"]["staticRevision"], r1.as_str());
    assert_eq!(q["meta"]["servedFrom"], "current");
    assert_eq!(q["meta"]["refreshFailed"], true);

    // A later good reload clears the flag.
    let r = reload_acme(&engine, v2());
    assert_eq!(r["ok"], true);
    assert_eq!(entry(&r)["refreshFailed"], false);
    assert_eq!(entry(&r)["previousStaticRevision"], r1.as_str());
    assert!(resolve_a(&engine, None).unwrap()["meta"]
        .get("refreshFailed")
        .is_none());
}

#[test]
fn a_failed_reload_retires_nothing() {
    let engine = engine_v1();
    let r1 = revision(&engine, "acme");
    let r2 = entry(&reload_acme(&engine, v2()))["staticRevision"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = reload_acme(
        &engine,
        def_v(9, vec![cap_with("a", json!({ "requires": ["a"] }))]),
    );
    assert_eq!(r["ok"], false);
    let e = entry(&r);
    assert_err_json(&e["error"], "CG_RELATION_CYCLE", "load", Some("fix_input"));
    assert_eq!(e["staticRevision"], r2.as_str());
    assert_eq!(e["previousStaticRevision"], r1.as_str());
    assert_eq!(served_from(&engine, &r1), "previous");
    let q = resolve_a(&engine, Some(&r1)).unwrap();
    assert_eq!(q["meta"]["refreshFailed"], true);
}

#[test]
fn each_provider_publishes_independently() {
    let engine = open_ok(&inline_config(vec![
        v1(),
        provider_def("beta", vec![cap("x")]),
    ]));
    let beta1 = revision(&engine, "beta");
    let r = reload_ok(
        &engine,
        &json!({ "definitions": {
            "acme": v2(),
            "beta": provider_def("beta", vec![cap("X")]),
        } }),
    );
    assert_eq!(r["ok"], false);
    assert_err_json(
        &r["error"],
        "CG_RELOAD_FAILED",
        "load",
        Some("check_config"),
    );
    let providers = r["providers"].as_array().unwrap();
    assert_eq!(providers.len(), 2);
    assert_eq!(providers[0]["providerId"], "acme");
    assert_eq!(providers[0]["ok"], true);
    assert!(providers[0].get("error").is_none());
    assert_eq!(providers[1]["providerId"], "beta");
    assert_eq!(providers[1]["ok"], false);
    assert_eq!(providers[1]["staticRevision"], beta1.as_str());
    assert_eq!(
        resolve_a(&engine, None).unwrap()["items"][0]["name"],
        "A two"
    );
    // Only beta failed, so only beta's results carry refreshFailed.
    let q = resolve(
        &engine,
        &json!({ "ids": ["acme::a"], "requestProviderScope": ["acme"] }),
    )
    .unwrap();
    assert!(q["meta"].get("refreshFailed").is_none(), "{q}");
    let q = resolve(
        &engine,
        &json!({ "ids": ["beta::x"], "requestProviderScope": ["beta"] }),
    )
    .unwrap();
    assert_eq!(q["meta"]["refreshFailed"], true);
}

// ---------------------------------------------------------------------------------------------
// Argument errors (§14 D5: phase lifecycle)

#[test]
fn unknown_provider_id() {
    let e = assert_err(
        reload(&engine_v1(), &json!({ "providerId": "ghost" })),
        "CG_PROVIDER_NOT_FOUND",
        "lifecycle",
        Some("refresh"),
    );
    assert!(e.details().is_none());
}

#[test]
fn definitions_for_an_unknown_provider() {
    assert_err(
        reload(
            &engine_v1(),
            &json!({ "definitions": { "ghost": provider_def("ghost", vec![]) } }),
        ),
        "CG_PROVIDER_NOT_FOUND",
        "lifecycle",
        Some("refresh"),
    );
}

#[test]
fn bad_reload_arguments() {
    let root = seed_copy();
    let engine = open_ok(&json!({ "providers": [
        { "definition": v1() },
        file_source(SEED, root.path(), "directory"),
    ] }));
    let cases = [
        // unknown key
        json!({ "provider": "acme" }),
        // definitions for a file provider
        json!({ "definitions": { SEED: provider_def(SEED, vec![cap("a")]) } }),
        // key differs from the definition's providerId
        json!({ "definitions": { "acme": provider_def("beta", vec![cap("a")]) } }),
        // definition without providerId, or not an object
        json!({ "definitions": { "acme": { "name": "N", "version": "1", "capabilities": [] } } }),
        json!({ "definitions": { "acme": 5 } }),
        // malformed keys and values
        json!({ "definitions": { "Acme": v1() } }),
        json!({ "definitions": [] }),
        json!({ "definitions": null }),
        json!({ "providerId": null }),
        json!({ "providerId": "Acme" }),
        json!({ "providerId": 1 }),
        // a definition for a provider other than the one reloaded
        json!({ "providerId": SEED, "definitions": { "acme": v2() } }),
    ];
    for args in cases {
        let e = reload(&engine, &args)
            .err()
            .unwrap_or_else(|| panic!("{args} was accepted"));
        let j = e.to_json_value();
        assert_eq!(j["code"], "CG_INPUT_INVALID", "{args}: {j}");
        assert_eq!(j["phase"], "lifecycle", "{args}: {j}");
        assert_eq!(j["nextAction"], "fix_input", "{args}: {j}");
        assert_no_absolute_path(&e.to_json());
    }
    for text in ["[]", "\"acme\"", "{", "null"] {
        assert_err(
            engine.reload(text, None),
            "CG_INPUT_INVALID",
            "lifecycle",
            Some("fix_input"),
        );
    }
    // Nothing was reloaded by any of them.
    assert_eq!(
        resolve_a(&engine, None).unwrap()["items"][0]["name"],
        "A one"
    );
}

// ---------------------------------------------------------------------------------------------
// File providers

#[test]
fn file_reload_picks_up_an_edited_file() {
    let root = seed_copy();
    let engine = open_ok(&seed_config(root.path()));
    let before = revision(&engine, SEED);
    let mut c = read_json(&root.join("capabilities/route.json"));
    c["name"] = json!("Routing, edited");
    root.write_json("capabilities/route.json", &c);

    let r = reload_ok(&engine, &json!({ "providerId": SEED }));
    assert_eq!(r["ok"], true);
    let e = entry(&r);
    assert_ne!(e["staticRevision"], before.as_str());
    assert_eq!(e["previousStaticRevision"], before.as_str());
    let q = resolve_ok(&engine, &json!({ "ids": ["seed.http::route"] }));
    assert_eq!(q["items"][0]["name"], "Routing, edited");
    let q = resolve_ok(
        &engine,
        &json!({ "ids": ["seed.http::route"], "requiredStaticRevision": before }),
    );
    assert_eq!(q["items"][0]["name"], "Routing");
    assert_eq!(q["meta"]["servedFrom"], "previous");
}

#[test]
fn reload_without_arguments_covers_every_provider() {
    let root = seed_copy();
    let engine = open_ok(&json!({ "providers": [
        file_source(SEED, root.path(), "directory"),
        { "definition": v1() },
    ] }));
    root.remove("capabilities/request.json");
    let mut c = read_json(&root.join("capabilities/route-validation.json"));
    c["parents"] = json!(["route"]);
    root.write_json("capabilities/route-validation.json", &c);
    let mut s = read_json(&root.join("capabilities/schema-request.json"));
    s.as_object_mut().unwrap().remove("parents");
    root.write_json("capabilities/schema-request.json", &s);

    let r = reload_ok(&engine, &json!({}));
    assert_eq!(r["ok"], true, "{r}");
    let providers = r["providers"].as_array().unwrap();
    assert_eq!(providers.len(), 2);
    assert_eq!(providers[0]["providerId"], SEED);
    assert!(providers[0]["previousStaticRevision"].is_string());
    assert_eq!(providers[1]["providerId"], "acme");
    assert!(providers[1].get("previousStaticRevision").is_none());
    assert_err(
        resolve(&engine, &json!({ "ids": ["seed.http::request"] })),
        "CG_CAPABILITY_NOT_FOUND",
        "query",
        Some("refresh"),
    );
}

#[test]
fn file_reload_with_a_broken_file() {
    let root = seed_copy();
    let engine = open_ok(&seed_config(root.path()));
    let before = revision(&engine, SEED);
    root.write("capabilities/route.json", "{ broken");
    let r = reload_ok(&engine, &json!({ "providerId": SEED }));
    assert_eq!(r["ok"], false);
    assert_err_json(
        &r["error"],
        "CG_RELOAD_FAILED",
        "load",
        Some("check_config"),
    );
    let e = entry(&r);
    assert_eq!(e["refreshFailed"], true);
    assert_eq!(e["staticRevision"], before.as_str());
    assert_err_json(
        &e["error"],
        "CG_DEFINITION_INVALID",
        "load",
        Some("fix_input"),
    );
    check_def_details(
        &e["error"],
        Def {
            provider: Some(SEED),
            file: Some("capabilities/route.json"),
            reason: "invalid_json",
            ..Def::default()
        },
    );
    let q = resolve_ok(&engine, &json!({ "ids": ["seed.http::route"] }));
    assert_eq!(q["meta"]["refreshFailed"], true);
    assert_eq!(q["items"][0]["name"], "Routing");

    // Repaired with the original content: same revision, nothing published, flag cleared.
    std::fs::copy(
        seed_dir().join("capabilities/route.json"),
        root.join("capabilities/route.json"),
    )
    .unwrap();
    let r = reload_ok(&engine, &json!({ "providerId": SEED }));
    assert_eq!(r["ok"], true);
    assert_eq!(entry(&r)["refreshFailed"], false);
    assert_eq!(entry(&r)["staticRevision"], before.as_str());
    assert!(entry(&r).get("previousStaticRevision").is_none());
    let q = resolve_ok(&engine, &json!({ "ids": ["seed.http::route"] }));
    assert!(q["meta"].get("refreshFailed").is_none());
}

#[test]
fn file_reload_after_the_root_disappeared() {
    let root = seed_copy();
    let engine = open_ok(&seed_config(root.path()));
    std::fs::remove_dir_all(root.path()).unwrap();
    let r = reload_ok(&engine, &json!({ "providerId": SEED }));
    assert_eq!(r["ok"], false);
    let e = entry(&r);
    assert_err_json(
        &e["error"],
        "CG_CONFIG_INVALID",
        "load",
        Some("check_config"),
    );
    assert_eq!(
        e["error"]["details"]["path"],
        "providers[0].authority.rootDir"
    );
    resolve_ok(&engine, &json!({ "ids": ["seed.http::route"] }));
}

// ---------------------------------------------------------------------------------------------
// close (§6.5, §14 D1: CG_GRAPH_CLOSED is always lifecycle, with no nextAction)

const CLOSED: &str =
    r#"{"code":"CG_GRAPH_CLOSED","phase":"lifecycle","message":"Capability graph is closed"}"#;

#[test]
fn every_call_after_close_is_graph_closed() {
    let engine = engine_v1();
    assert!(!engine.is_closed());
    engine.close();
    assert!(engine.is_closed());
    let calls: Vec<Result<String, capability_graph::error::GraphError>> = vec![
        engine.resolve(r#"{"ids":["acme::a"]}"#, None),
        engine.resolve(r#"{"ids":["a"]}"#, Some("acme")),
        engine.resolve("not json", None),
        engine.reload("{}", None),
        engine.reload(r#"{"providerId":"acme"}"#, None),
        engine.reload(r#"{"nope":1}"#, None),
        engine.check_bound("\"acme\""),
    ];
    for result in calls {
        let e = assert_err(result, "CG_GRAPH_CLOSED", "lifecycle", None);
        assert_eq!(e.to_json(), CLOSED);
    }
}

#[test]
fn close_is_idempotent() {
    let engine = engine_v1();
    engine.close();
    engine.close();
    assert!(engine.is_closed());
    assert_err(
        resolve_a(&engine, None),
        "CG_GRAPH_CLOSED",
        "lifecycle",
        None,
    );
}

// ---------------------------------------------------------------------------------------------
// Mixed revisions and concurrency (§6.4, §13)

#[test]
fn providers_pinned_to_different_slots_are_served_mixed() {
    let engine = open_ok(&inline_config(vec![
        v1(),
        provider_def("beta", vec![cap("x")]),
    ]));
    let r1 = revision(&engine, "acme");
    let r = reload_ok(
        &engine,
        &json!({ "providerId": "acme", "definitions": { "acme": v2() } }),
    );
    assert_eq!(r["ok"], true);
    assert_eq!(
        r["providers"].as_array().unwrap().len(),
        1,
        "only acme was reloaded: {r}"
    );
    let beta = revision(&engine, "beta");
    let q = resolve_ok(
        &engine,
        &json!({
            "ids": ["acme::a", "beta::x"],
            "requiredStaticRevisionByProvider": { "acme": r1, "beta": beta },
        }),
    );
    assert_eq!(q["meta"]["servedFrom"], "mixed");
    assert_eq!(
        q["meta"]["servedFromByProvider"],
        json!({ "acme": "previous", "beta": "current" })
    );
    assert_eq!(q["meta"]["staticRevisionByProvider"]["acme"], r1.as_str());
    assert_eq!(q["items"][0]["name"], "A one");
}

#[test]
fn queries_never_see_a_half_published_reload() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let engine = Arc::new(engine_v1());
    let r1 = revision(&engine, "acme");
    let r2 = entry(&reload_acme(&engine, v2()))["staticRevision"]
        .as_str()
        .unwrap()
        .to_owned();
    let names = Arc::new([(r1.clone(), "A one"), (r2.clone(), "A two")]);
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (engine, names, stop) = (engine.clone(), names.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) || n < 50 {
                    let q = resolve_a(&engine, None).unwrap();
                    let rev = q["meta"]["staticRevision"].as_str().unwrap();
                    assert_eq!(q["items"][0]["staticRevision"], rev);
                    let want = names
                        .iter()
                        .find(|(r, _)| r == rev)
                        .expect("a known revision")
                        .1;
                    assert_eq!(q["items"][0]["name"], want);
                    n += 1;
                }
            })
        })
        .collect();
    for i in 0..50 {
        let def = if i % 2 == 0 { v1() } else { v2() };
        assert_eq!(reload_acme(&engine, def)["ok"], true);
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
}

/// A reload's entries, checked to name providers `p0`..`p4` in that order.
#[track_caller]
fn entries_in_config_order(r: &Value) -> &Vec<Value> {
    let entries = r["providers"].as_array().unwrap();
    let ids: Vec<&str> = entries
        .iter()
        .map(|e| e["providerId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["p0", "p1", "p2", "p3", "p4"]);
    entries
}

/// Candidates load side by side; each provider's entry is its own, in config order.
#[test]
fn a_reload_of_several_providers_reports_each_in_config_order() {
    let defs: Vec<Value> = (0..5)
        .map(|i| provider_def(&format!("p{i}"), vec![cap("a")]))
        .collect();
    let engine = open_ok(&inline_config(defs));
    let mut replacements = serde_json::Map::new();
    for i in 0..5 {
        let caps = if i % 2 == 1 {
            vec![cap("Bad")]
        } else {
            vec![cap("a"), cap("b")]
        };
        replacements.insert(format!("p{i}"), provider_def(&format!("p{i}"), caps));
    }
    let r = reload(&engine, &json!({ "definitions": replacements })).unwrap();
    assert_eq!(r["ok"], false);
    let entries = entries_in_config_order(&r);
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e["ok"], i % 2 == 0, "{e}");
    }
    let before: Vec<Value> = entries
        .iter()
        .map(|e| e["staticRevision"].clone())
        .collect();

    // Inline providers reloaded without a definition keep their place between loaded ones.
    let fixed = json!({ "definitions": {
        "p1": provider_def("p1", vec![cap("a"), cap("c")]),
        "p3": provider_def("p3", vec![cap("a"), cap("c")]),
    } });
    let r = reload(&engine, &fixed).unwrap();
    assert_eq!(r["ok"], true, "{r}");
    let entries = entries_in_config_order(&r);
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e["staticRevision"] != before[i], i % 2 == 1, "{e}");
    }
}
