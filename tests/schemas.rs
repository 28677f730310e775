//! The JSON Schemas the package ships (schema/*.json) against the engine: the shared corpus of
//! definition fixtures (tests/fixtures/definitions, also run against the schemas by
//! __test__/schema.test.mjs), `$schema` accepted and ignored, and the limits a schema repeats
//! (ID patterns, budget fields and ceilings) equal to the engine's.

mod common;

use capability_graph::config::Budgets;
use common::*;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// `(file name, fixture)` of every fixture in `tests/fixtures/definitions/<folder>`.
fn fixtures(folder: &str) -> Vec<(String, Value)> {
    let dir = repo("tests/fixtures/definitions").join(folder);
    let mut out: Vec<(String, Value)> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, read_json(&path))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 10, "fixtures in {}", dir.display());
    out
}

const PROVIDER: &str = "acme";

/// Each way the engine loads a fixture's value: its config, the tree it reads (kept alive
/// while it opens), the file the value is in and the prefix of its fields' paths.
struct Load {
    how: String,
    config: Value,
    _tree: Option<TempDir>,
    file: Option<&'static str>,
    prefix: &'static str,
}

fn tree_with(provider: &Value, capability: Option<(&str, &Value)>) -> TempDir {
    let dir = TempDir::new("schema");
    dir.write_json("provider.json", provider);
    dir.mkdir("capabilities");
    if let Some((file, value)) = capability {
        dir.write_json(file, value);
    }
    dir
}

fn loads(kind: &str, value: &Value) -> Vec<Load> {
    let provider = json!({ "providerId": PROVIDER, "name": "Acme", "version": "1" });
    let inline = |definition: Value, prefix| Load {
        how: "inline".into(),
        config: inline_config(vec![definition]),
        _tree: None,
        file: None,
        prefix,
    };
    let in_file = |layout: &str, file: &'static str, tree: TempDir| Load {
        how: format!("{layout} layout"),
        config: file_config(PROVIDER, tree.path(), layout),
        _tree: Some(tree),
        file: Some(file),
        prefix: "",
    };
    match kind {
        "capability" => {
            let mut definition = provider.clone();
            definition["capabilities"] = json!([value]);
            let (dir_file, legacy_file) = ("capabilities/fixture.json", "fixture.capability.json");
            vec![
                in_file(
                    "directory",
                    dir_file,
                    tree_with(&provider, Some((dir_file, value))),
                ),
                in_file(
                    "legacy",
                    legacy_file,
                    tree_with(&provider, Some((legacy_file, value))),
                ),
                inline(definition, "capabilities[0]"),
            ]
        }
        "provider" => vec![in_file(
            "directory",
            "provider.json",
            tree_with(value, None),
        )],
        "definition" => vec![inline(value.clone(), "")],
        other => panic!("unknown fixture kind {other:?}"),
    }
}

fn prefixed(prefix: &str, field: &str) -> String {
    match (prefix, field) {
        ("", f) => f.to_owned(),
        (p, "") => p.to_owned(),
        (p, f) if f.starts_with('[') => format!("{p}{f}"),
        (p, f) => format!("{p}.{f}"),
    }
}

#[test]
fn every_valid_fixture_loads_every_way() {
    for (name, fixture) in fixtures("valid") {
        assert!(fixture.get("engine").is_none(), "{name}: a valid fixture");
        for load in loads(fixture["kind"].as_str().unwrap(), &fixture["value"]) {
            if let Err(e) = open(&load.config) {
                panic!("{name} ({}) was refused: {}", load.how, e.to_json());
            }
        }
    }
}

#[test]
fn every_invalid_fixture_is_refused_with_its_code_and_details() {
    let mut wrong = Vec::new();
    for (name, fixture) in fixtures("invalid") {
        let expected = &fixture["engine"];
        let code = expected["code"].as_str().expect("engine.code");
        assert!(
            fixture["schema"].is_boolean(),
            "{name}: says whether a schema refuses it"
        );
        for load in loads(fixture["kind"].as_str().unwrap(), &fixture["value"]) {
            let e = match open(&load.config) {
                Ok(_) => {
                    wrong.push(format!("{name} ({}) was accepted", load.how));
                    continue;
                }
                Err(e) => e.to_json_value(),
            };
            let context = format!("{name} ({}): {e}", load.how);
            let details = &e["details"];
            let mut want = vec![("code", e["code"].clone(), Value::from(code))];
            want.push(("phase", e["phase"].clone(), Value::from("load")));
            for (key, value) in expected["details"].as_object().expect("engine.details") {
                let value = match (key.as_str(), value) {
                    ("field", Value::String(f)) => Value::from(prefixed(load.prefix, f)),
                    _ => value.clone(),
                };
                want.push((key, details[key].clone(), value));
            }
            if let (Some(file), Some(found)) = (load.file, details.get("file")) {
                want.push(("file", found.clone(), Value::from(file)));
            }
            for (key, found, value) in want {
                if found != value {
                    wrong.push(format!("{key} is not {value} in {context}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The seed provider as a file tree, with `$schema` written in provider.json and in each
/// capability file when `with_schema`.
fn seed_tree(with_schema: bool) -> TempDir {
    let tree = seed_copy();
    if with_schema {
        let mut provider = seed_provider_json();
        provider["$schema"] =
            json!("../node_modules/@devcodex/capability-graph/schema/provider.json");
        tree.write_json("provider.json", &provider);
        for (file, mut capability) in seed_capabilities() {
            capability["$schema"] =
                json!("../../node_modules/@devcodex/capability-graph/schema/capability.json");
            tree.write_json(&format!("capabilities/{file}"), &capability);
        }
    }
    tree
}

#[test]
fn schema_keys_are_ignored_and_never_change_the_static_revision() {
    let plain = seed_tree(false);
    let marked = seed_tree(true);
    let file_revision = revision_of(&seed_config(plain.path()), SEED);
    assert_eq!(
        revision_of(&seed_config(marked.path()), SEED),
        file_revision
    );

    let definition = seed_inline_definition();
    let mut with_schema = definition.clone();
    with_schema["$schema"] = json!("schema/definition.json");
    for capability in with_schema["capabilities"].as_array_mut().unwrap() {
        capability["$schema"] = json!("schema/capability.json");
    }
    let inline_revision = revision_of(&inline_config(vec![definition]), SEED);
    assert_eq!(
        revision_of(&inline_config(vec![with_schema]), SEED),
        inline_revision
    );
    // The same records, wherever they come from, hash the same.
    assert_eq!(inline_revision, file_revision);
}

#[test]
fn an_open_config_may_name_its_schema() {
    let mut config = seed_config(&seed_dir());
    config["$schema"] = json!("./node_modules/@devcodex/capability-graph/schema/config.json");
    open_ok(&config);
    config["$schema"] = json!(5);
    assert_config_err(open(&config), "config", "$schema", "non-empty string");
}

fn shipped(name: &str) -> Value {
    read_json(&repo(&format!("schema/{name}.json")))
}

#[test]
fn the_schemas_id_patterns_are_the_engines() {
    for name in ["provider", "capability", "definition", "config"] {
        let defs = &shipped(name)["$defs"];
        assert_eq!(defs["id"]["pattern"], capability_graph::ids::ID_PATTERN);
        assert_eq!(
            defs["knowledgeId"]["pattern"],
            capability_graph::ids::KNOWLEDGE_ID_PATTERN
        );
    }
}

/// The names in an engine message `one of: a, b, c`.
fn one_of(expected: &str) -> Vec<String> {
    let list = expected
        .strip_prefix("one of: ")
        .unwrap_or_else(|| panic!("{expected:?}"));
    let mut names: Vec<String> = list.split(", ").map(str::to_owned).collect();
    names.sort();
    names
}

fn sorted_keys(v: &Value) -> Vec<String> {
    let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

#[test]
fn the_config_schema_has_every_budget_with_the_engines_ceiling() {
    let groups = &shipped("config")["$defs"]["budgets"]["properties"];
    let refused = |overrides: Value| Budgets::from_overrides(Some(&overrides)).unwrap_err();

    // The engine names every group it knows when a group is unknown, and every field of a group
    // when a field is unknown: the schema lists exactly those.
    let e = refused(json!({ "unknown": {} }));
    assert_eq!(sorted_keys(groups), one_of(&e.expected));
    for (group, schema) in groups.as_object().unwrap() {
        let fields = &schema["properties"];
        let e = refused(json!({ group: { "unknown": 1 } }));
        assert_eq!(sorted_keys(fields), one_of(&e.expected), "budgets.{group}");
        for (field, rule) in fields.as_object().unwrap() {
            let path = format!("budgets.{group}.{field}");
            assert_eq!(rule["minimum"], 1, "{path}");
            let max = rule["maximum"].as_u64().unwrap();
            let e = refused(json!({ group: { field: max + 1 } }));
            assert_eq!(
                (e.path.as_str(), e.expected.as_str()),
                (path.as_str(), format!("integer <= {max}").as_str()),
            );
            let default = rule["default"].as_u64().unwrap();
            let engine_default =
                Budgets::from_overrides(Some(&json!({ group: { field: default } })))
                    .unwrap_or_else(|e| panic!("{path} = {default}: {e:?}"));
            assert_eq!(engine_default, Budgets::default(), "default of {path}");
        }
    }
}
