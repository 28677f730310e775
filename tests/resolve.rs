//! `resolve` (SPEC §6.1, §6.3, §14 D2–D4): the requires closure, item order, target
//! precedence, scope, budgets, bound facades, revisions and meta.

mod common;

use capability_graph::engine::Engine;
use common::*;
use serde_json::{json, Value};

const RV: &str = "seed.http::route.validation";
const SR: &str = "seed.http::schema.request";

fn seed() -> Engine {
    open_ok(&seed_config(&seed_dir()))
}

/// The seed (file) and `acme` (inline): a requires [c, b], b requires [d].
fn two_providers() -> Engine {
    open_ok(&json!({ "providers": [
        file_source(SEED, &seed_dir(), "directory"),
        { "definition": provider_def("acme", vec![
            cap_with("a", json!({ "requires": ["c", "b"] })),
            cap_with("b", json!({ "requires": ["d"] })),
            cap("c"),
            cap("d"),
        ]) },
    ] }))
}

/// `acme` with a requires chain c0 → c1 → … → c<n-1>, and `budgets`.
fn chain(n: usize, budgets: Value) -> Engine {
    let caps = (0..n)
        .map(|i| {
            if i + 1 < n {
                cap_with(
                    &format!("c{i}"),
                    json!({ "requires": [format!("c{}", i + 1)] }),
                )
            } else {
                cap(&format!("c{i}"))
            }
        })
        .collect();
    let mut config = acme(caps);
    config["budgets"] = budgets;
    open_ok(&config)
}

fn ids_of(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["qualifiedId"].as_str().unwrap().to_owned())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The closure and its order

#[test]
fn seed_route_validation_adds_schema_request() {
    let r = resolve_ok(&seed(), &json!({ "ids": [RV] }));
    assert_eq!(ids_of(&r["items"]), [RV, SR]);
    assert_eq!(r["requested"], json!([RV]));
    assert_eq!(r["added"], json!([SR]));
    assert_eq!(r["requiresEdges"], json!([{ "from": RV, "to": SR }]));
    assert_eq!(
        r["items"][0]["reason"],
        json!({ "requested": true, "requiredBy": [] })
    );
    assert_eq!(
        r["items"][1]["reason"],
        json!({ "requested": false, "requiredBy": [RV] })
    );
}

#[test]
fn items_carry_the_full_static_record() {
    let r = resolve_ok(&seed(), &json!({ "ids": [RV] }));
    let item = &r["items"][0];
    let id = |c: &str| json!({ "providerId": SEED, "capabilityId": c });
    assert_eq!(item["id"], id("route.validation"));
    assert_eq!(item["qualifiedId"], RV);
    assert_eq!(item["name"], "Route input validation");
    assert!(item["description"].is_string() && item["whenToUse"].is_string());
    assert!(item["distinction"].is_string());
    assert_eq!(item["examples"].as_array().unwrap().len(), 1);
    assert_eq!(item["parents"], json!([id("request"), id("route")]));
    assert_eq!(item["specializes"], json!([id("route.http")]));
    assert_eq!(item["related"], json!([id("schema.request")]));
    assert_eq!(item["requires"], json!([id("schema.request")]));
    assert_eq!(item["knowledge"][0]["knowledgeId"], "D-02");
    assert_eq!(item["knowledge"][0]["locale"], "en");
    assert_eq!(item["staticRevision"], r["meta"]["staticRevision"]);
}

#[test]
fn absent_distinction_is_omitted_and_locales_are_canonical() {
    let mut d = doc("D-01", "x.md");
    d["locale"] = json!("en-latn-us");
    let engine = open_ok(&acme(vec![cap_with("a", json!({ "knowledge": [d] }))]));
    let r = resolve_ok(&engine, &json!({ "ids": ["acme::a"] }));
    let item = &r["items"][0];
    assert!(item.get("distinction").is_none(), "{item}");
    assert_eq!(item["examples"], json!([]));
    assert_eq!(item["knowledge"][0]["locale"], "en-Latn-US");
}

#[test]
fn requested_items_keep_input_order_even_when_required() {
    let r = resolve_ok(&seed(), &json!({ "ids": [SR, RV] }));
    assert_eq!(ids_of(&r["items"]), [SR, RV]);
    assert_eq!(r["requested"], json!([SR, RV]));
    assert_eq!(r["added"], json!([]));
    assert_eq!(
        r["items"][0]["reason"],
        json!({ "requested": true, "requiredBy": [RV] })
    );
    assert_eq!(r["requiresEdges"], json!([{ "from": RV, "to": SR }]));
}

#[test]
fn items_are_requested_then_added_in_breadth_first_order() {
    let engine = two_providers();
    let r = resolve_ok(&engine, &json!({ "ids": ["acme::a"] }));
    assert_eq!(
        ids_of(&r["items"]),
        ["acme::a", "acme::b", "acme::c", "acme::d"]
    );
    assert_eq!(r["added"], json!(["acme::b", "acme::c", "acme::d"]));

    let r = resolve_ok(&engine, &json!({ "ids": ["acme::c", "acme::a"] }));
    assert_eq!(
        ids_of(&r["items"]),
        ["acme::c", "acme::a", "acme::b", "acme::d"]
    );
    assert_eq!(r["requested"], json!(["acme::c", "acme::a"]));
    assert_eq!(r["added"], json!(["acme::b", "acme::d"]));
    assert_eq!(
        r["requiresEdges"],
        json!([
            { "from": "acme::a", "to": "acme::b" },
            { "from": "acme::a", "to": "acme::c" },
            { "from": "acme::b", "to": "acme::d" },
        ])
    );
}

#[test]
fn duplicates_collapse() {
    let r = resolve_ok(
        &seed(),
        &json!({ "ids": ["seed.http::route", { "providerId": SEED, "capabilityId": "route" }, "seed.http::route"] }),
    );
    assert_eq!(r["requested"], json!(["seed.http::route"]));
    assert_eq!(r["items"].as_array().unwrap().len(), 1);
}

#[test]
fn ids_across_providers() {
    let r = resolve_ok(
        &two_providers(),
        &json!({ "ids": ["acme::d", "seed.http::route"] }),
    );
    assert_eq!(ids_of(&r["items"]), ["acme::d", "seed.http::route"]);
}

// ---------------------------------------------------------------------------------------------
// Input errors (CG_INPUT_INVALID / query / fix_input)

#[test]
fn malformed_ids() {
    let engine = seed();
    for bad in [
        json!("a::b::c"),
        json!("::x"),
        json!("a::"),
        json!("seed.http:::route"),
        json!("A::b"),
        json!("route"),
        json!(""),
        json!(5),
        json!(null),
        json!(true),
        json!([]),
        json!({ "providerId": SEED }),
        json!({ "capabilityId": "route" }),
        json!({ "providerId": SEED, "capabilityId": "Route" }),
        json!({ "providerId": 1, "capabilityId": "route" }),
        json!({ "providerId": SEED, "capabilityId": "route", "extra": 1 }),
        json!({ "$cgNonJson": "symbol" }),
    ] {
        let e = assert_err(
            resolve(&engine, &json!({ "ids": [bad] })),
            "CG_INPUT_INVALID",
            "query",
            Some("fix_input"),
        );
        let field = details(&e)["field"].as_str().unwrap().to_owned();
        assert!(field.starts_with("ids[0]"), "{bad}: {}", e.to_json());
    }
}

#[test]
fn syntax_is_checked_before_any_target() {
    let e = assert_err(
        resolve(
            &seed(),
            &json!({ "ids": ["ghost::x", "seed.http::missing", "bad"] }),
        ),
        "CG_INPUT_INVALID",
        "query",
        Some("fix_input"),
    );
    assert_eq!(details(&e)["field"], "ids[2]");
}

#[test]
fn empty_missing_or_mistyped_ids() {
    let engine = seed();
    for args in [
        json!({ "ids": [] }),
        json!({}),
        json!({ "ids": "seed.http::route" }),
        json!({ "ids": null }),
        json!({ "ids": { "0": "seed.http::route" } }),
    ] {
        let e = assert_err(
            resolve(&engine, &args),
            "CG_INPUT_INVALID",
            "query",
            Some("fix_input"),
        );
        assert_eq!(details(&e)["field"], "ids", "{args}");
    }
}

#[test]
fn unknown_query_key() {
    let e = assert_err(
        resolve(&seed(), &json!({ "ids": [RV], "limit": 3 })),
        "CG_INPUT_INVALID",
        "query",
        Some("fix_input"),
    );
    assert_eq!(details(&e)["field"], "limit");
}

#[test]
fn arguments_that_are_not_an_object() {
    let engine = seed();
    for args in ["[]", "null", "\"x\"", "{", "{\"$cgNonJson\":\"function\"}"] {
        assert_err(
            engine.resolve(args, None),
            "CG_INPUT_INVALID",
            "query",
            Some("fix_input"),
        );
    }
}

#[test]
fn null_is_never_omitted() {
    let engine = seed();
    for key in [
        "requestProviderScope",
        "requiredStaticRevision",
        "requiredStaticRevisionByProvider",
    ] {
        let e = assert_err(
            resolve(&engine, &json!({ "ids": [RV], key: null })),
            "CG_INPUT_INVALID",
            "query",
            Some("fix_input"),
        );
        assert_eq!(details(&e)["field"], key);
    }
}

#[test]
fn too_many_ids() {
    let caps: Vec<Value> = (0..40).map(|i| cap(&format!("c{i}"))).collect();
    let engine = open_ok(&acme(caps));
    let ids = |n: usize| (0..n).map(|i| format!("acme::c{i}")).collect::<Vec<_>>();
    let r = resolve_ok(&engine, &json!({ "ids": ids(32) }));
    assert_eq!(r["items"].as_array().unwrap().len(), 32);
    let e = assert_err(
        resolve(&engine, &json!({ "ids": ids(33) })),
        "CG_INPUT_TOO_LARGE",
        "query",
        Some("narrow_scope"),
    );
    assert_eq!(details(&e)["limit"], 32);
}

#[test]
fn max_ids_budget_is_honoured() {
    let mut config = acme(vec![cap("a"), cap("b"), cap("c")]);
    config["budgets"] = json!({ "resolve": { "maxIds": 2 } });
    let engine = open_ok(&config);
    resolve_ok(&engine, &json!({ "ids": ["acme::a", "acme::b"] }));
    assert_err(
        resolve(
            &engine,
            &json!({ "ids": ["acme::a", "acme::b", "acme::c"] }),
        ),
        "CG_INPUT_TOO_LARGE",
        "query",
        Some("narrow_scope"),
    );
}

// ---------------------------------------------------------------------------------------------
// Targets (§14 D2 precedence; thrown not-found and scope errors carry no details)

#[test]
fn unknown_provider() {
    let e = assert_err(
        resolve(&seed(), &json!({ "ids": ["ghost::route"] })),
        "CG_PROVIDER_NOT_FOUND",
        "query",
        Some("refresh"),
    );
    assert!(e.details().is_none(), "{}", e.to_json());
    assert_eq!(
        e.to_json(),
        r#"{"code":"CG_PROVIDER_NOT_FOUND","phase":"query","message":"Requested provider does not exist","nextAction":"refresh"}"#
    );
}

#[test]
fn unknown_capability() {
    let e = assert_err(
        resolve(&seed(), &json!({ "ids": ["seed.http::missing"] })),
        "CG_CAPABILITY_NOT_FOUND",
        "query",
        Some("refresh"),
    );
    assert!(e.details().is_none());
}

#[test]
fn the_error_example_line_is_exact() {
    // SPEC §1: the seed `error.mjs` prints exactly this line.
    let engine = open_ok(&inline_config(vec![json!({
        "providerId": "acme", "name": "Error example", "version": "1", "capabilities": []
    })]));
    let e = resolve(&engine, &json!({ "ids": ["acme::missing"] }))
        .err()
        .unwrap();
    assert_eq!(
        e.to_json(),
        r#"{"code":"CG_CAPABILITY_NOT_FOUND","phase":"query","message":"Requested capability does not exist","nextAction":"refresh"}"#
    );
}

#[test]
fn targets_fail_in_input_order() {
    let engine = seed();
    assert_err(
        resolve(
            &engine,
            &json!({ "ids": ["seed.http::missing", "ghost::x"] }),
        ),
        "CG_CAPABILITY_NOT_FOUND",
        "query",
        Some("refresh"),
    );
    assert_err(
        resolve(
            &engine,
            &json!({ "ids": ["ghost::x", "seed.http::missing"] }),
        ),
        "CG_PROVIDER_NOT_FOUND",
        "query",
        Some("refresh"),
    );
    // One bad root fails the whole call.
    assert_err(
        resolve(&engine, &json!({ "ids": [RV, "seed.http::missing"] })),
        "CG_CAPABILITY_NOT_FOUND",
        "query",
        Some("refresh"),
    );
}

#[test]
fn request_scope_excluding_the_provider() {
    let engine = two_providers();
    let e = assert_err(
        resolve(
            &engine,
            &json!({ "ids": ["seed.http::route"], "requestProviderScope": ["acme"] }),
        ),
        "CG_ACCESS_DENIED",
        "query",
        Some("check_config"),
    );
    assert!(e.details().is_none());
    // Scope is checked before the capability's existence.
    assert_err(
        resolve(
            &engine,
            &json!({ "ids": ["seed.http::missing"], "requestProviderScope": ["acme"] }),
        ),
        "CG_ACCESS_DENIED",
        "query",
        Some("check_config"),
    );
    // An empty request scope narrows to nothing.
    assert_err(
        resolve(
            &engine,
            &json!({ "ids": ["acme::a"], "requestProviderScope": [] }),
        ),
        "CG_ACCESS_DENIED",
        "query",
        Some("check_config"),
    );
    // An unconfigured provider is still not found, whatever the scope.
    assert_err(
        resolve(
            &engine,
            &json!({ "ids": ["ghost::x"], "requestProviderScope": ["acme"] }),
        ),
        "CG_PROVIDER_NOT_FOUND",
        "query",
        Some("refresh"),
    );
}

#[test]
fn request_scope_naming_an_unconfigured_provider() {
    let engine = two_providers();
    for scope in [json!(["ghost"]), json!(["acme", "ghost"])] {
        let e = assert_err(
            resolve(
                &engine,
                &json!({ "ids": ["acme::a"], "requestProviderScope": scope }),
            ),
            "CG_SCOPE_DENIED",
            "query",
            Some("narrow_scope"),
        );
        assert!(e.details().is_none());
    }
}

#[test]
fn malformed_request_scope() {
    let engine = two_providers();
    for scope in [json!("acme"), json!(["Acme"]), json!([1]), json!({})] {
        assert_err(
            resolve(
                &engine,
                &json!({ "ids": ["acme::a"], "requestProviderScope": scope }),
            ),
            "CG_INPUT_INVALID",
            "query",
            Some("fix_input"),
        );
    }
}

#[test]
fn request_scope_narrows_meta() {
    let r = resolve_ok(
        &two_providers(),
        &json!({ "ids": ["acme::a"], "requestProviderScope": ["acme", "acme"] }),
    );
    assert_eq!(r["meta"]["scope"], json!(["acme"]));
    assert!(is_revision(r["meta"]["staticRevision"].as_str().unwrap()));
    assert!(r["meta"].get("staticRevisionByProvider").is_none());
}

// ---------------------------------------------------------------------------------------------
// Budgets (§6.1)

#[test]
fn closure_over_max_nodes_is_partial_with_a_warning() {
    let engine = chain(10, json!({ "resolve": { "maxIds": 1, "maxNodes": 3 } }));
    let r = resolve_ok(&engine, &json!({ "ids": ["acme::c0"] }));
    assert_eq!(ids_of(&r["items"]), ["acme::c0", "acme::c1", "acme::c2"]);
    assert_eq!(r["meta"]["completeness"], "partial");
    let warnings = r["meta"]["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0]["code"], "CG_RESULT_TOO_LARGE");
    assert_eq!(warnings[0]["message"], "Result exceeds the response budget");
    // A warning is `{ code, message, details? }` (§14 D2).
    assert!(warnings[0].get("phase").is_none() && warnings[0].get("nextAction").is_none());
}

#[test]
fn closure_at_max_nodes_is_complete() {
    let engine = chain(3, json!({ "resolve": { "maxIds": 1, "maxNodes": 3 } }));
    let r = resolve_ok(&engine, &json!({ "ids": ["acme::c0"] }));
    assert_eq!(r["items"].as_array().unwrap().len(), 3);
    assert_eq!(r["meta"]["completeness"], "complete");
    assert_eq!(r["meta"]["warnings"], json!([]));
}

#[test]
fn closure_longer_than_the_default_max_nodes() {
    let engine = chain(200, json!({}));
    let r = resolve_ok(&engine, &json!({ "ids": ["acme::c0"] }));
    assert_eq!(r["items"].as_array().unwrap().len(), 128);
    assert_eq!(r["meta"]["completeness"], "partial");
    assert_eq!(r["meta"]["warnings"][0]["code"], "CG_RESULT_TOO_LARGE");
}

#[test]
fn closure_over_max_edges_is_partial() {
    let mut config = acme(vec![
        cap_with("a", json!({ "requires": ["b", "c", "d", "e"] })),
        cap("b"),
        cap("c"),
        cap("d"),
        cap("e"),
    ]);
    config["budgets"] = json!({ "resolve": { "maxEdges": 2 } });
    let r = resolve_ok(&open_ok(&config), &json!({ "ids": ["acme::a"] }));
    assert_eq!(r["meta"]["completeness"], "partial");
    assert_eq!(r["meta"]["warnings"][0]["code"], "CG_RESULT_TOO_LARGE");
    assert!(r["requiresEdges"].as_array().unwrap().len() <= 2);
}

#[test]
fn result_over_max_bytes_fails_the_call() {
    let mut config = seed_config(&seed_dir());
    config["budgets"] = json!({ "resolve": { "maxBytes": 512 } });
    let engine = open_ok(&config);
    assert_err(
        resolve(&engine, &json!({ "ids": [RV] })),
        "CG_RESULT_TOO_LARGE",
        "query",
        Some("narrow_scope"),
    );
}

// ---------------------------------------------------------------------------------------------
// Bound facade (§6.2, §14 D2)

#[test]
fn bound_facade_takes_local_ids() {
    let engine = two_providers();
    for id in [
        json!("route.validation"),
        json!({ "capabilityId": "route.validation" }),
        json!(RV),
        json!({ "providerId": SEED, "capabilityId": "route.validation" }),
    ] {
        let r = resolve_bound(&engine, &json!({ "ids": [id] }), Some(SEED))
            .unwrap_or_else(|e| panic!("{id}: {}", e.to_json()));
        assert_eq!(r["requested"], json!([RV]));
        assert_eq!(r["added"], json!([SR]));
        assert_eq!(r["meta"]["scope"], json!([SEED]));
        assert!(r["meta"]["staticRevision"].is_string());
    }
}

#[test]
fn bound_facade_rejects_request_scope() {
    let engine = two_providers();
    for scope in [json!([SEED]), json!([])] {
        let e = assert_err(
            resolve_bound(
                &engine,
                &json!({ "ids": ["route"], "requestProviderScope": scope }),
                Some(SEED),
            ),
            "CG_INPUT_INVALID",
            "query",
            Some("fix_input"),
        );
        assert_eq!(details(&e)["field"], "requestProviderScope");
    }
}

#[test]
fn bound_facade_denies_other_providers() {
    let engine = two_providers();
    let e = assert_err(
        resolve_bound(&engine, &json!({ "ids": ["acme::a"] }), Some(SEED)),
        "CG_ACCESS_DENIED",
        "query",
        Some("check_config"),
    );
    assert!(e.details().is_none());
    assert_err(
        resolve_bound(&engine, &json!({ "ids": ["ghost::a"] }), Some(SEED)),
        "CG_PROVIDER_NOT_FOUND",
        "query",
        Some("refresh"),
    );
    assert_err(
        resolve_bound(&engine, &json!({ "ids": ["missing"] }), Some(SEED)),
        "CG_CAPABILITY_NOT_FOUND",
        "query",
        Some("refresh"),
    );
    assert_err(
        resolve_bound(&engine, &json!({ "ids": ["Route"] }), Some(SEED)),
        "CG_INPUT_INVALID",
        "query",
        Some("fix_input"),
    );
}

#[test]
fn check_bound_validates_the_provider() {
    let engine = seed();
    assert_eq!(
        engine.check_bound("\"seed.http\"").unwrap(),
        "\"seed.http\""
    );
    let e = engine.check_bound("\"ghost\"").err().unwrap();
    assert_eq!(e.to_json_value()["code"], "CG_PROVIDER_NOT_FOUND");
    assert!(e.details().is_none());
    let e = engine.check_bound("\"Bad\"").err().unwrap();
    assert_eq!(e.to_json_value()["code"], "CG_INPUT_INVALID");
}

// ---------------------------------------------------------------------------------------------
// Revisions (§6.1, §6.4)

#[test]
fn required_static_revision_current() {
    let engine = seed();
    let rev = revision(&engine, SEED);
    let r = resolve_ok(
        &engine,
        &json!({ "ids": [RV], "requiredStaticRevision": rev }),
    );
    assert_eq!(r["meta"]["staticRevision"], rev.as_str());
    assert_eq!(r["meta"]["servedFrom"], "current");
}

#[test]
fn required_static_revision_unknown() {
    let engine = seed();
    for rev in ["s:0000000000000000", "nope"] {
        let e = assert_err(
            resolve(
                &engine,
                &json!({ "ids": [RV], "requiredStaticRevision": rev }),
            ),
            "CG_REVISION_MISMATCH",
            "query",
            Some("refresh"),
        );
        assert!(e.details().is_none());
    }
}

#[test]
fn required_static_revision_of_the_wrong_type() {
    let engine = seed();
    for rev in [json!(""), json!(1), json!(["s:0000000000000000"])] {
        assert_err(
            resolve(
                &engine,
                &json!({ "ids": [RV], "requiredStaticRevision": rev }),
            ),
            "CG_INPUT_INVALID",
            "query",
            Some("fix_input"),
        );
    }
}

#[test]
fn required_static_revision_with_ids_in_two_providers() {
    let engine = two_providers();
    let rev = revision(&engine, SEED);
    let e = assert_err(
        resolve(
            &engine,
            &json!({ "ids": [RV, "acme::a"], "requiredStaticRevision": rev }),
        ),
        "CG_INPUT_INVALID",
        "query",
        Some("fix_input"),
    );
    assert_eq!(details(&e)["field"], "requiredStaticRevision");
}

#[test]
fn required_static_revision_by_provider() {
    let engine = two_providers();
    let seed_rev = revision(&engine, SEED);
    let acme_rev = revision(&engine, "acme");
    let r = resolve_ok(
        &engine,
        &json!({
            "ids": [RV, "acme::a"],
            "requiredStaticRevisionByProvider": { SEED: seed_rev, "acme": acme_rev },
        }),
    );
    assert_eq!(r["meta"]["servedFrom"], "current");
    assert_err(
        resolve(
            &engine,
            &json!({ "ids": [RV, "acme::a"], "requiredStaticRevisionByProvider": { SEED: "s:0000000000000000", "acme": acme_rev } }),
        ),
        "CG_REVISION_MISMATCH",
        "query",
        Some("refresh"),
    );
    // The keys must be exactly the providers the targets name.
    assert_err(
        resolve(
            &engine,
            &json!({ "ids": [RV, "acme::a"], "requiredStaticRevisionByProvider": { SEED: seed_rev } }),
        ),
        "CG_INPUT_INVALID",
        "query",
        Some("fix_input"),
    );
    // Not both forms at once.
    assert_err(
        resolve(
            &engine,
            &json!({ "ids": [RV], "requiredStaticRevision": seed_rev, "requiredStaticRevisionByProvider": { SEED: seed_rev } }),
        ),
        "CG_INPUT_INVALID",
        "query",
        Some("fix_input"),
    );
}

// ---------------------------------------------------------------------------------------------
// Meta (§14 D4)

#[test]
fn meta_for_one_provider() {
    let r = resolve_ok(&seed(), &json!({ "ids": [RV] }));
    let meta = &r["meta"];
    assert_eq!(meta["completeness"], "complete");
    assert_eq!(meta["warnings"], json!([]));
    assert_eq!(meta["scope"], json!([SEED]));
    assert_eq!(meta["servedFrom"], "current");
    assert!(
        is_revision(meta["compositeStaticRevision"].as_str().unwrap()),
        "{meta}"
    );
    assert!(
        is_revision(meta["staticRevision"].as_str().unwrap()),
        "{meta}"
    );
    assert_ne!(meta["compositeStaticRevision"], meta["staticRevision"]);
    assert!(meta.get("staticRevisionByProvider").is_none(), "{meta}");
    assert!(meta.get("servedFromByProvider").is_none(), "{meta}");
    assert!(meta.get("refreshFailed").is_none(), "{meta}");
}

#[test]
fn meta_for_several_providers() {
    let engine = two_providers();
    let r = resolve_ok(&engine, &json!({ "ids": ["acme::a"] }));
    let meta = &r["meta"];
    assert_eq!(meta["scope"], json!(["acme", SEED]));
    assert!(meta.get("staticRevision").is_none(), "{meta}");
    let by = meta["staticRevisionByProvider"].as_object().unwrap();
    assert_eq!(by.len(), 2);
    assert_eq!(by[SEED], revision(&engine, SEED).as_str());
    assert_eq!(by["acme"], revision(&engine, "acme").as_str());
    assert_eq!(
        meta["servedFromByProvider"],
        json!({ "acme": "current", SEED: "current" })
    );
    assert_eq!(meta["servedFrom"], "current");
    assert!(is_revision(
        meta["compositeStaticRevision"].as_str().unwrap()
    ));
}

#[test]
fn composite_revision_depends_only_on_the_scope_and_its_revisions() {
    let alone = resolve_ok(&seed(), &json!({ "ids": [RV] }));
    let engine = two_providers();
    let narrowed = resolve_ok(
        &engine,
        &json!({ "ids": [RV], "requestProviderScope": [SEED] }),
    );
    let wide = resolve_ok(&engine, &json!({ "ids": [RV] }));
    assert_eq!(
        alone["meta"]["compositeStaticRevision"],
        narrowed["meta"]["compositeStaticRevision"]
    );
    assert_ne!(
        wide["meta"]["compositeStaticRevision"],
        narrowed["meta"]["compositeStaticRevision"]
    );
    // Same inputs, same answer.
    let again = resolve_ok(&seed(), &json!({ "ids": [RV] }));
    assert_eq!(alone, again);
}
