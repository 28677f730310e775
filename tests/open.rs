//! `open`: the shape of the configuration (SPEC §4, §3.2 CG_CONFIG_INVALID, §14 D1, D7, D14).
//! Shape errors are phase `config`; a source that cannot be read is phase `load`.

mod common;

use common::*;
use serde_json::{json, Value};

fn acme_def() -> Value {
    provider_def("acme", vec![cap("a")])
}

fn with(mut config: Value, extra: Value) -> Value {
    merge(&mut config, extra);
    config
}

// ---------------------------------------------------------------------------------------------
// Success

#[test]
fn minimal_inline_config_opens() {
    let engine = open_ok(&acme(vec![cap("a")]));
    assert!(is_revision(&revision(&engine, "acme")));
}

#[test]
fn empty_provider_list_opens() {
    open_ok(&json!({ "providers": [] }));
}

#[test]
fn scope_lists_that_cover_every_provider_are_accepted() {
    let config = with(
        acme(vec![cap("a")]),
        json!({ "hostAllowedProviders": ["acme", "other"], "integrationEnabledProviders": ["acme"] }),
    );
    open_ok(&config);
}

#[test]
fn valid_budget_overrides_are_accepted() {
    let config = with(
        acme(vec![cap("a")]),
        json!({ "budgets": { "resolve": { "maxIds": 2, "maxNodes": 4 }, "catalog": {} } }),
    );
    open_ok(&config);
}

// ---------------------------------------------------------------------------------------------
// The root object

#[test]
fn config_that_is_not_an_object() {
    for config in [json!([]), json!("x"), json!(1), json!(null), json!(true)] {
        assert_config_err(open(&config), "config", "$", "object");
    }
}

#[test]
fn config_that_is_not_json_text() {
    let r = capability_graph::engine::Engine::open("{not json", None);
    assert_config_err(r, "config", "$", "object");
}

#[test]
fn config_that_is_a_non_json_marker() {
    assert_config_err(
        open(&json!({ "$cgNonJson": "function" })),
        "config",
        "$",
        "object",
    );
}

#[test]
fn missing_providers() {
    // SPEC §3.2 / §14 D7: `details.expected` names the type expected at the path.
    assert_config_err(open(&json!({})), "config", "providers", "array");
}

#[test]
fn providers_not_an_array() {
    for providers in [json!({}), json!("acme"), json!(1), json!(null)] {
        assert_config_err(
            open(&json!({ "providers": providers })),
            "config",
            "providers",
            "array",
        );
    }
}

#[test]
fn provider_entry_null_or_wrong_type() {
    for entry in [
        json!(null),
        json!(1),
        json!("acme"),
        json!([]),
        json!({ "$cgNonJson": "function" }),
    ] {
        assert_config_err(
            open(&json!({ "providers": [entry] })),
            "config",
            "providers[0]",
            "object",
        );
    }
    // The index is the entry's own.
    assert_config_err(
        open(&json!({ "providers": [{ "definition": acme_def() }, null] })),
        "config",
        "providers[1]",
        "object",
    );
}

#[test]
fn unknown_top_level_key() {
    let config = with(acme(vec![cap("a")]), json!({ "providerz": [] }));
    assert_config_err_prefix(open(&config), "config", "providerz", "one of: ");
}

#[test]
fn unknown_inline_provider_key() {
    let config = json!({ "providers": [{ "definition": acme_def(), "rootDir": "/x" }] });
    assert_config_err_prefix(open(&config), "config", "providers[0].rootDir", "one of: ");
}

#[test]
fn unknown_file_provider_key() {
    let root = seed_copy();
    let mut source = file_source(SEED, root.path(), "directory");
    source["definitionLayout"] = json!("directory");
    let config = json!({ "providers": [source] });
    assert_config_err_prefix(
        open(&config),
        "config",
        "providers[0].definitionLayout",
        "one of: ",
    );
}

#[test]
fn unknown_file_authority_key() {
    let root = seed_copy();
    let mut source = file_source(SEED, root.path(), "directory");
    source["authority"]["adapter"] = json!({});
    assert_config_err_prefix(
        open(&json!({ "providers": [source] })),
        "config",
        "providers[0].authority.adapter",
        "one of: ",
    );
}

#[test]
fn inline_definition_that_is_not_an_object() {
    for definition in [json!(null), json!([]), json!("acme")] {
        assert_config_err(
            open(&json!({ "providers": [{ "definition": definition }] })),
            "config",
            "providers[0].definition",
            "object",
        );
    }
}

#[test]
fn file_provider_without_provider_id() {
    let root = seed_copy();
    let mut source = file_source(SEED, root.path(), "directory");
    source.as_object_mut().unwrap().remove("providerId");
    // §14 D7: expected names the type (an ID).
    assert_config_err(
        open(&json!({ "providers": [source] })),
        "config",
        "providers[0].providerId",
        "ID",
    );
}

#[test]
fn file_provider_with_invalid_provider_id() {
    let root = seed_copy();
    for bad in [json!("Seed"), json!("0a"), json!(""), json!(1), json!(null)] {
        let mut source = file_source(SEED, root.path(), "directory");
        source["providerId"] = bad;
        assert_config_err(
            open(&json!({ "providers": [source] })),
            "config",
            "providers[0].providerId",
            "ID",
        );
    }
}

#[test]
fn authority_kind_missing_or_unknown() {
    let root = seed_copy();
    for kind in [None, Some(json!("http")), Some(json!(null))] {
        let mut source = file_source(SEED, root.path(), "directory");
        match kind {
            None => {
                source["authority"].as_object_mut().unwrap().remove("kind");
            }
            Some(k) => source["authority"]["kind"] = k,
        }
        assert_config_err_prefix(
            open(&json!({ "providers": [source] })),
            "config",
            "providers[0].authority.kind",
            "one of: ",
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Duplicates and scope (SPEC §4; §3.4: CG_DUAL_AUTHORITY and CG_SCOPE_DENIED raised by open are
// CG_CONFIG_INVALID / config)

#[test]
fn duplicate_inline_providers() {
    let config = inline_config(vec![acme_def(), provider_def("acme", vec![cap("b")])]);
    assert_config_path(open(&config), "config", "providers[1]");
}

#[test]
fn duplicate_file_and_inline_provider() {
    let root = seed_copy();
    let config = json!({
        "providers": [
            file_source(SEED, root.path(), "directory"),
            { "definition": provider_def(SEED, vec![cap("a")]) },
        ]
    });
    assert_config_path(open(&config), "config", "providers[1]");
}

#[test]
fn duplicate_inline_then_file_provider() {
    let root = seed_copy();
    let config = json!({
        "providers": [
            { "definition": provider_def(SEED, vec![cap("a")]) },
            file_source(SEED, root.path(), "directory"),
        ]
    });
    assert_config_path(open(&config), "config", "providers[1]");
}

#[test]
fn duplicate_file_providers() {
    let root = seed_copy();
    let config = json!({
        "providers": [
            file_source(SEED, root.path(), "directory"),
            file_source(SEED, root.path(), "directory"),
        ]
    });
    assert_config_path(open(&config), "config", "providers[1]");
}

#[test]
fn provider_outside_host_allowed_providers() {
    let config = with(
        acme(vec![cap("a")]),
        json!({ "hostAllowedProviders": ["other"] }),
    );
    assert_config_path(open(&config), "config", "providers[0]");
}

#[test]
fn provider_outside_integration_enabled_providers() {
    let config = with(
        acme(vec![cap("a")]),
        json!({ "hostAllowedProviders": ["acme"], "integrationEnabledProviders": [] }),
    );
    assert_config_path(open(&config), "config", "providers[0]");
}

#[test]
fn provider_outside_the_intersection_of_both_lists() {
    // acme is allowed by the host but not enabled by the integration; beta by both.
    let config = with(
        inline_config(vec![acme_def(), provider_def("beta", vec![cap("b")])]),
        json!({
            "hostAllowedProviders": ["acme", "beta"],
            "integrationEnabledProviders": ["beta", "gamma"],
        }),
    );
    assert_config_path(open(&config), "config", "providers[0]");
}

#[test]
fn scoped_provider_without_source() {
    let config = with(
        acme(vec![cap("a")]),
        json!({
            "hostAllowedProviders": ["acme", "ghost"],
            "integrationEnabledProviders": ["ghost", "acme"],
        }),
    );
    assert_config_path(open(&config), "config", "hostAllowedProviders[1]");
}

#[test]
fn provider_in_one_list_only_needs_no_source() {
    // ghost is not in host ∩ integration, so it is not in scope and needs no source.
    let config = with(
        acme(vec![cap("a")]),
        json!({
            "hostAllowedProviders": ["acme", "ghost"],
            "integrationEnabledProviders": ["acme"],
        }),
    );
    open_ok(&config);
}

#[test]
fn invalid_ids_in_scope_lists() {
    for key in ["hostAllowedProviders", "integrationEnabledProviders"] {
        for bad in [json!("A"), json!("a b"), json!(""), json!(1), json!(null)] {
            let config = with(acme(vec![cap("a")]), json!({ key: ["acme", bad] }));
            assert_config_err(open(&config), "config", &format!("{key}[1]"), "ID");
        }
        for not_array in [json!("acme"), json!({}), json!(null)] {
            let config = with(acme(vec![cap("a")]), json!({ key: not_array }));
            assert_config_err(open(&config), "config", key, "array");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// File authority

#[test]
fn file_root_dir_missing() {
    let root = seed_copy();
    let mut source = file_source(SEED, root.path(), "directory");
    source["authority"]
        .as_object_mut()
        .unwrap()
        .remove("rootDir");
    // §14 D7: expected names the type.
    assert_config_err(
        open(&json!({ "providers": [source] })),
        "config",
        "providers[0].authority.rootDir",
        "non-empty string",
    );
}

#[test]
fn file_root_dir_empty_or_wrong_type() {
    let root = seed_copy();
    for bad in [json!(""), json!(1), json!(null), json!(["x"])] {
        let mut source = file_source(SEED, root.path(), "directory");
        source["authority"]["rootDir"] = bad;
        assert_config_err(
            open(&json!({ "providers": [source] })),
            "config",
            "providers[0].authority.rootDir",
            "non-empty string",
        );
    }
}

#[test]
fn file_root_dir_that_does_not_exist_is_a_load_error() {
    let dir = TempDir::new("missing-root");
    let missing = dir.join("does-not-exist");
    let e = assert_config_path(
        open(&file_config(SEED, &missing, "directory")),
        "load",
        "providers[0].authority.rootDir",
    );
    assert!(!e.to_json().contains("does-not-exist"));
}

#[test]
fn file_root_dir_that_is_a_file_is_a_load_error() {
    let dir = TempDir::new("file-root");
    dir.write("plain.txt", "x");
    let config = json!({ "providers": [
        { "definition": acme_def() },
        file_source(SEED, &dir.join("plain.txt"), "legacy"),
    ] });
    assert_config_path(open(&config), "load", "providers[1].authority.rootDir");
}

#[test]
fn bad_definition_layout() {
    let root = seed_copy();
    for bad in [
        json!("flat"),
        json!("Directory"),
        json!(""),
        json!(1),
        json!(null),
    ] {
        let mut source = file_source(SEED, root.path(), "directory");
        source["authority"]["definitionLayout"] = bad;
        assert_config_err(
            open(&json!({ "providers": [source] })),
            "config",
            "providers[0].authority.definitionLayout",
            "one of: legacy, directory",
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Budgets (§14 D14)

#[test]
fn budgets_unknown_group() {
    let config = with(acme(vec![cap("a")]), json!({ "budgets": { "nope": {} } }));
    assert_config_err_prefix(open(&config), "config", "budgets.nope", "one of: ");
}

#[test]
fn budgets_unknown_field() {
    let config = with(
        acme(vec![cap("a")]),
        json!({ "budgets": { "resolve": { "maxWhat": 1 } } }),
    );
    assert_config_err_prefix(
        open(&config),
        "config",
        "budgets.resolve.maxWhat",
        "one of: ",
    );
}

#[test]
fn budgets_non_positive_or_non_integer() {
    for bad in [
        json!(0),
        json!(1.5),
        json!(-1),
        json!("8"),
        json!(null),
        json!(1e300),
    ] {
        let config = with(
            acme(vec![cap("a")]),
            json!({ "budgets": { "catalog": { "maxItems": bad } } }),
        );
        assert_config_err(
            open(&config),
            "config",
            "budgets.catalog.maxItems",
            "integer >= 1",
        );
    }
}

#[test]
fn budgets_default_above_max() {
    let config = with(
        acme(vec![cap("a")]),
        json!({ "budgets": { "neighbors": { "defaultPageSize": 101 } } }),
    );
    assert_config_err_prefix(
        open(&config),
        "config",
        "budgets.neighbors.defaultPageSize",
        "integer <= ",
    );
    let config = with(
        acme(vec![cap("a")]),
        json!({ "budgets": { "match": { "defaultLimit": 9, "maxLimit": 8 } } }),
    );
    assert_config_err_prefix(
        open(&config),
        "config",
        "budgets.match.defaultLimit",
        "integer <= ",
    );
}

#[test]
fn budgets_group_not_an_object() {
    for bad in [json!([]), json!(3), json!(null)] {
        let config = with(
            acme(vec![cap("a")]),
            json!({ "budgets": { "resolve": bad } }),
        );
        assert_config_err(open(&config), "config", "budgets.resolve", "object");
    }
}

// ---------------------------------------------------------------------------------------------
// `null` is never "omitted" (SPEC §2, §14 D3)

#[test]
fn null_budgets() {
    let config = with(acme(vec![cap("a")]), json!({ "budgets": null }));
    assert_config_err(open(&config), "config", "budgets", "object");
}

#[test]
fn null_document_root() {
    let config = json!({ "providers": [{ "definition": acme_def(), "documentRoot": null }] });
    assert_config_err(
        open(&config),
        "config",
        "providers[0].documentRoot",
        "non-empty string",
    );
}

#[test]
fn empty_document_root() {
    let config = json!({ "providers": [{ "definition": acme_def(), "documentRoot": "" }] });
    assert_config_err(
        open(&config),
        "config",
        "providers[0].documentRoot",
        "non-empty string",
    );
}

#[test]
fn null_knowledge_roots() {
    let config = json!({ "providers": [{ "definition": acme_def(), "knowledgeRoots": null }] });
    assert_config_err(
        open(&config),
        "config",
        "providers[0].knowledgeRoots",
        "object",
    );
}

#[test]
fn null_scope_lists() {
    let config = with(
        acme(vec![cap("a")]),
        json!({ "integrationEnabledProviders": null }),
    );
    assert_config_err(
        open(&config),
        "config",
        "integrationEnabledProviders",
        "array",
    );
}

// ---------------------------------------------------------------------------------------------
// Knowledge roots (reference/definitions.md §1)

#[test]
fn knowledge_root_alias_and_kind() {
    let bad_alias = json!({ "providers": [{
        "definition": acme_def(),
        "knowledgeRoots": { "do.cs": { "kind": "directory", "rootDir": "/tmp" } }
    }] });
    let e = assert_err(
        open(&bad_alias),
        "CG_CONFIG_INVALID",
        "config",
        Some("check_config"),
    );
    assert_eq!(
        details(&e)["path"],
        "providers[0].knowledgeRoots[\"do.cs\"]"
    );

    let bad_kind = json!({ "providers": [{
        "definition": acme_def(),
        "knowledgeRoots": { "docs": { "kind": "zip", "rootDir": "/tmp" } }
    }] });
    assert_config_err_prefix(
        open(&bad_kind),
        "config",
        "providers[0].knowledgeRoots[\"docs\"].kind",
        "one of: ",
    );

    let empty_root = json!({ "providers": [{
        "definition": acme_def(),
        "knowledgeRoots": { "docs": { "kind": "directory", "rootDir": "" } }
    }] });
    assert_config_err(
        open(&empty_root),
        "config",
        "providers[0].knowledgeRoots[\"docs\"].rootDir",
        "non-empty string",
    );
}

// ---------------------------------------------------------------------------------------------
// Load failures reject open (SPEC §4: any provider failing its first load rejects open)

#[test]
fn one_bad_provider_rejects_the_whole_open() {
    let config = inline_config(vec![acme_def(), provider_def("beta", vec![cap("B")])]);
    let e = assert_err(
        open(&config),
        "CG_DEFINITION_INVALID",
        "load",
        Some("fix_input"),
    );
    assert_eq!(details(&e)["providerId"], "beta");
}

#[test]
fn knowledge_root_that_does_not_exist_fails_open() {
    // reference/definitions.md §6.4: alias roots are bound once per load and must be
    // directories; a binding failure rejects the load. SPEC §3.4 translates a root that cannot
    // be read to CG_CONFIG_INVALID / load.
    let dir = TempDir::new("no-docs");
    let config = json!({ "providers": [{
        "definition": acme_def(),
        "knowledgeRoots": { "docs": { "kind": "directory", "rootDir": dir.join("missing").to_string_lossy() } }
    }] });
    let e = assert_err(
        open(&config),
        "CG_CONFIG_INVALID",
        "load",
        Some("check_config"),
    );
    assert_eq!(
        details(&e)["path"],
        "providers[0].knowledgeRoots[\"docs\"].rootDir"
    );
}

#[test]
fn knowledge_root_package_that_cannot_be_found_fails_open() {
    // reference/definitions.md §6.4: a package root is bound at load by walking node_modules
    // from resolveFrom; any binding failure rejects the load (SPEC §3.4: CG_CONFIG_INVALID).
    let dir = TempDir::new("no-pkg");
    let config = json!({ "providers": [{
        "definition": acme_def(),
        "knowledgeRoots": { "pkg": {
            "kind": "package",
            "packageName": "definitely-not-installed-cg",
            "resolveFrom": dir.path().to_string_lossy(),
        } }
    }] });
    let e = assert_err(
        open(&config),
        "CG_CONFIG_INVALID",
        "load",
        Some("check_config"),
    );
    let path = details(&e)["path"].as_str().unwrap().to_owned();
    assert!(
        path.starts_with("providers[0].knowledgeRoots[\"pkg\"]"),
        "{}",
        e.to_json()
    );
}

// ---------------------------------------------------------------------------------------------
// Several providers (loaded side by side)

/// Providers load in parallel, yet the failure reported is the first in config order, however
/// quickly the others fail.
#[test]
fn the_first_failing_provider_in_config_order_is_reported() {
    let bad = |p: &str, cap_id: &str| provider_def(p, vec![cap(cap_id)]);
    for first in 0..6 {
        let definitions: Vec<Value> = (0..6)
            .map(|i| match i {
                i if i < first => provider_def(&format!("p{i}"), vec![cap("a")]),
                _ => bad(&format!("p{i}"), "Bad"),
            })
            .collect();
        let Err(e) = open(&inline_config(definitions)) else {
            panic!("open succeeded with failing providers");
        };
        assert_eq!(
            details(&e)["providerId"],
            format!("p{first}"),
            "{}",
            e.to_json()
        );
    }
}

#[test]
fn many_providers_open_in_config_order() {
    let definitions: Vec<Value> = (0..40)
        .map(|i| provider_def(&format!("p{i:02}"), vec![cap("a"), cap("b")]))
        .collect();
    let engine = open_ok(&inline_config(definitions));
    for i in 0..40 {
        assert!(is_revision(&revision(&engine, &format!("p{i:02}"))));
    }
}
