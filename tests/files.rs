//! File sources and static revisions (SPEC §5, §3.4; reference/definitions.md §8–9): layouts,
//! what does and does not change a revision, unreadable files, and that no absolute path
//! reaches an error.

mod common;

use common::*;
use serde_json::{json, Map, Value};
use std::fs;

const DEF: &str = "CG_DEFINITION_INVALID";

/// A file-level failure of the seed copy: `{ providerId, file, reason }`, nothing else.
#[track_caller]
fn expect_file_error(root: &TempDir, layout: &str, file: &str, reason: &str) {
    assert_def_err(
        open(&file_config(SEED, root.path(), layout)),
        DEF,
        Def {
            provider: Some(SEED),
            file: Some(file),
            reason,
            ..Def::default()
        },
    );
}

/// `v` with every object's keys in reverse order.
fn reverse_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m.iter().rev() {
                out.insert(k.clone(), reverse_keys(x));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(reverse_keys).collect()),
        other => other.clone(),
    }
}

/// The seed in legacy layout: `*.capability.json` files at names and depths of their own.
fn seed_legacy() -> TempDir {
    let dir = TempDir::new("legacy");
    copy_dir(&seed_dir().join("knowledge"), &dir.join("knowledge"));
    fs::copy(seed_dir().join("PROVIDER.md"), dir.join("PROVIDER.md")).unwrap();
    dir.write_json("provider.json", &seed_provider_json());
    let names = [
        "zz-last.capability.json",
        "nested/one.capability.json",
        "nested/deeper/two.capability.json",
        "a.capability.json",
        "knowledge/kept-with-docs.capability.json",
    ];
    for ((_, c), name) in seed_capabilities().into_iter().zip(names) {
        dir.write_json(name, &c);
    }
    dir
}

fn seed_revision() -> String {
    revision_of(&seed_config(&seed_dir()), SEED)
}

// ---------------------------------------------------------------------------------------------
// Layouts

#[test]
fn seed_copy_loads_in_directory_layout() {
    let root = seed_copy();
    let engine = open_ok(&seed_config(root.path()));
    let rev = revision(&engine, SEED);
    assert!(is_revision(&rev), "{rev}");
    assert_eq!(rev, seed_revision(), "a copy has the original's revision");
    let r = resolve_ok(&engine, &json!({ "ids": ["seed.http::route.http"] }));
    assert_eq!(r["items"][0]["name"], "HTTP routes");
}

#[test]
fn legacy_layout_gives_the_same_revision() {
    let legacy = seed_legacy();
    assert_eq!(
        revision_of(&file_config(SEED, legacy.path(), "legacy"), SEED),
        seed_revision()
    );
}

#[test]
fn legacy_is_the_default_layout() {
    let legacy = seed_legacy();
    let mut config = file_config(SEED, legacy.path(), "legacy");
    config["providers"][0]["authority"]
        .as_object_mut()
        .unwrap()
        .remove("definitionLayout");
    assert_eq!(revision_of(&config, SEED), seed_revision());
}

#[test]
fn legacy_layout_ignores_plain_json_files() {
    let legacy = seed_legacy();
    legacy.write("notes.json", "not even json");
    legacy.write("capabilities/route.json", "{}");
    assert_eq!(
        revision_of(&file_config(SEED, legacy.path(), "legacy"), SEED),
        seed_revision()
    );
}

#[test]
fn directory_layout_ignores_files_outside_capabilities() {
    let root = seed_copy();
    root.write("knowledge/catalog.json", "not json");
    root.write("capabilities/README.md", "not a definition");
    root.write("notes.json", "{");
    assert_eq!(
        revision_of(&seed_config(root.path()), SEED),
        seed_revision()
    );
}

#[test]
fn skipped_directories_are_not_inspected() {
    let root = seed_copy();
    for dir in [
        ".git",
        "node_modules",
        "dist",
        "coverage",
        ".cache",
        "capabilities/node_modules",
    ] {
        root.write(&format!("{dir}/broken.json"), "{");
        root.write(&format!("{dir}/x.capability.json"), "{");
        root.write(&format!("{dir}/provider.json"), "{");
    }
    assert_eq!(
        revision_of(&seed_config(root.path()), SEED),
        seed_revision()
    );
}

#[test]
fn definitions_in_nested_capability_folders_are_found() {
    let root = seed_copy();
    fs::create_dir_all(root.join("capabilities/http/routes")).unwrap();
    fs::rename(
        root.join("capabilities/route-http.json"),
        root.join("capabilities/http/routes/anything.json"),
    )
    .unwrap();
    assert_eq!(
        revision_of(&seed_config(root.path()), SEED),
        seed_revision()
    );
}

#[test]
fn empty_providers_load_in_both_layouts() {
    let dir = TempDir::new("empty");
    dir.write_json(
        "provider.json",
        &json!({ "providerId": "acme", "name": "N", "version": "1" }),
    );
    open_ok(&file_config("acme", dir.path(), "legacy"));
    dir.mkdir("capabilities");
    open_ok(&file_config("acme", dir.path(), "directory"));
}

#[test]
fn directory_layout_requires_capabilities_folder() {
    let root = seed_copy();
    fs::remove_dir_all(root.join("capabilities")).unwrap();
    expect_file_error(
        &root,
        "directory",
        "capabilities",
        "definition_directory_required",
    );
}

#[test]
fn missing_provider_json() {
    let root = seed_copy();
    root.remove("provider.json");
    expect_file_error(
        &root,
        "directory",
        "provider.json",
        "provider_manifest_required",
    );
}

#[test]
fn provider_json_that_is_not_json() {
    let root = seed_copy();
    root.write("provider.json", "{ \"providerId\": ");
    expect_file_error(&root, "directory", "provider.json", "invalid_json");
}

#[test]
fn nested_provider_manifest() {
    let root = seed_copy();
    root.write("sub/provider.json", "{}");
    expect_file_error(
        &root,
        "directory",
        "sub/provider.json",
        "nested_provider_manifest",
    );
}

#[test]
fn bare_capability_json_name() {
    let legacy = seed_legacy();
    legacy.write("sub/capability.json", "{}");
    expect_file_error(
        &legacy,
        "legacy",
        "sub/capability.json",
        "use_directory_layout_or_capability_suffix",
    );
}

#[test]
fn mixed_definition_layout() {
    let root = seed_copy();
    root.write("old.capability.json", "{}");
    expect_file_error(
        &root,
        "directory",
        "old.capability.json",
        "mixed_definition_layout",
    );
}

#[test]
fn definition_case_collision() {
    let root = seed_copy();
    root.write_json("capabilities/Route.json", &cap("other"));
    // Sorted by code units: "Route.json" < "route.json"; the later one is reported.
    expect_file_error(
        &root,
        "directory",
        "capabilities/route.json",
        "definition_case_collision",
    );
}

// ---------------------------------------------------------------------------------------------
// Unreadable definitions (§3.4: anything inside the root → CG_DEFINITION_INVALID with a
// relative `details.file`)

#[test]
fn definition_file_that_is_not_json() {
    let root = seed_copy();
    root.write("capabilities/broken.json", "{ \"capabilityId\": \"x\", ");
    expect_file_error(
        &root,
        "directory",
        "capabilities/broken.json",
        "invalid_json",
    );
}

#[test]
fn definition_file_that_is_empty() {
    let root = seed_copy();
    root.write("capabilities/empty.json", "");
    expect_file_error(
        &root,
        "directory",
        "capabilities/empty.json",
        "invalid_json",
    );
}

#[test]
fn definition_file_that_is_not_utf8() {
    let root = seed_copy();
    let mut bytes = br#"{"capabilityId":"x","name":""#.to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    bytes.extend_from_slice(br#"","description":"d","whenToUse":"w"}"#);
    root.write("capabilities/latin1.json", bytes);
    expect_file_error(
        &root,
        "directory",
        "capabilities/latin1.json",
        "invalid_utf8",
    );
}

#[test]
fn the_lowest_failing_file_is_reported() {
    let root = seed_copy();
    root.write("capabilities/b-broken.json", "{");
    root.write("capabilities/a-broken.json", "[");
    expect_file_error(
        &root,
        "directory",
        "capabilities/a-broken.json",
        "invalid_json",
    );
}

#[test]
fn valid_json_with_a_bad_shape_goes_to_validation() {
    let root = seed_copy();
    root.write("capabilities/shape.json", "{}");
    assert_def_err(
        open(&seed_config(root.path())),
        DEF,
        Def {
            provider: Some(SEED),
            field: Some("capabilityId"),
            file: Some("capabilities/shape.json"),
            reason: "required",
            ..Def::default()
        },
    );
}

#[test]
fn a_leading_bom_is_accepted() {
    let root = seed_copy();
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(fs::read(root.join("capabilities/route.json")).unwrap());
    root.write("capabilities/route.json", bytes);
    assert_eq!(
        revision_of(&seed_config(root.path()), SEED),
        seed_revision()
    );
}

#[cfg(unix)]
#[test]
fn legacy_symlink_out_of_the_root() {
    let legacy = seed_legacy();
    let outside = TempDir::new("outside");
    outside.write_json("evil.capability.json", &cap("evil"));
    std::os::unix::fs::symlink(
        outside.join("evil.capability.json"),
        legacy.join("evil.capability.json"),
    )
    .unwrap();
    expect_file_error(&legacy, "legacy", "evil.capability.json", "outside_root");
    let e = open(&file_config(SEED, legacy.path(), "legacy"))
        .err()
        .unwrap();
    assert!(!e.to_json().contains(&*outside.path().to_string_lossy()));
}

#[cfg(unix)]
#[test]
fn legacy_symlink_inside_the_root_is_followed() {
    let legacy = seed_legacy();
    legacy.write_json("store/extra.json", &cap("extra"));
    std::os::unix::fs::symlink(
        legacy.join("store/extra.json"),
        legacy.join("extra.capability.json"),
    )
    .unwrap();
    let engine = open_ok(&file_config(SEED, legacy.path(), "legacy"));
    resolve_ok(&engine, &json!({ "ids": ["seed.http::extra"] }));
}

#[cfg(unix)]
#[test]
fn directory_layout_refuses_symlinked_definitions() {
    let root = seed_copy();
    root.write_json("store/extra.json", &cap("extra"));
    std::os::unix::fs::symlink(
        root.join("store/extra.json"),
        root.join("capabilities/extra.json"),
    )
    .unwrap();
    expect_file_error(
        &root,
        "directory",
        "capabilities/extra.json",
        "definition_symlink_unsupported",
    );
}

#[cfg(unix)]
#[test]
fn symlinked_capabilities_folder_is_not_a_definition_directory() {
    let root = seed_copy();
    let elsewhere = TempDir::new("elsewhere");
    copy_dir(&root.join("capabilities"), &elsewhere.join("caps"));
    fs::remove_dir_all(root.join("capabilities")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("caps"), root.join("capabilities")).unwrap();
    expect_file_error(
        &root,
        "directory",
        "capabilities",
        "definition_directory_required",
    );
}

#[cfg(unix)]
#[test]
fn fifo_posing_as_a_definition() {
    let root = seed_copy();
    let status = std::process::Command::new("mkfifo")
        .arg(root.join("capabilities/pipe.json"))
        .status()
        .unwrap();
    assert!(status.success());
    expect_file_error(
        &root,
        "directory",
        "capabilities/pipe.json",
        "not_regular_file",
    );
}

/// A provider tree, its layout, and how to break it.
type BrokenTree = (TempDir, &'static str, Box<dyn Fn(&TempDir)>);

#[test]
fn no_absolute_path_in_any_error() {
    // A spread of failures in one place; assert_err already checks each JSON, this also checks
    // the specific root directory of each case.
    let cases: Vec<BrokenTree> = vec![
        (
            seed_copy(),
            "directory",
            Box::new(|d: &TempDir| {
                d.write("capabilities/x.json", "{");
            }),
        ),
        (
            seed_copy(),
            "directory",
            Box::new(|d: &TempDir| {
                d.remove("provider.json");
            }),
        ),
        (
            seed_copy(),
            "directory",
            Box::new(|d: &TempDir| {
                fs::remove_dir_all(d.join("capabilities")).unwrap();
            }),
        ),
        (
            seed_copy(),
            "directory",
            Box::new(|d: &TempDir| {
                d.write_json("capabilities/x.json", &cap("B"));
            }),
        ),
        (
            seed_copy(),
            "directory",
            Box::new(|d: &TempDir| {
                d.write_json(
                    "capabilities/x.json",
                    &cap_with("x", json!({"requires": ["ghost"]})),
                );
            }),
        ),
        (
            seed_copy(),
            "directory",
            Box::new(|d: &TempDir| {
                d.write_json(
                    "capabilities/x.json",
                    &cap_with("x", json!({"requires": ["x"]})),
                );
            }),
        ),
        (
            seed_copy(),
            "directory",
            Box::new(|d: &TempDir| {
                fs::remove_dir_all(d.path()).unwrap();
            }),
        ),
    ];
    for (dir, layout, break_it) in cases {
        break_it(&dir);
        let e = open(&file_config(SEED, dir.path(), layout))
            .err()
            .expect("open fails");
        let text = e.to_json();
        assert!(!text.contains(&*dir.path().to_string_lossy()), "{text}");
        assert_no_absolute_path(&text);
        if let Some(file) = e
            .details()
            .and_then(|d| d.get("file"))
            .and_then(Value::as_str)
        {
            assert!(!file.starts_with('/') && !file.contains('\\'), "{text}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What changes a static revision (SPEC §5; reference/definitions.md §9)

#[test]
fn key_order_whitespace_and_file_names_do_not_change_the_revision() {
    let dir = TempDir::new("reordered");
    dir.write(
        "provider.json",
        format!(
            "\n\t {}  \n",
            serde_json::to_string(&reverse_keys(&seed_provider_json())).unwrap()
        ),
    );
    for (i, (_, c)) in seed_capabilities().into_iter().enumerate() {
        let text = if i % 2 == 0 {
            serde_json::to_string(&reverse_keys(&c)).unwrap()
        } else {
            serde_json::to_string_pretty(&reverse_keys(&c))
                .unwrap()
                .replace("  ", "\t\t ")
        };
        let name = if i % 2 == 0 {
            format!("capabilities/n{i}.json")
        } else {
            format!("capabilities/deep/er{i}/{i}.json")
        };
        dir.write(&name, text);
    }
    dir.mkdir("capabilities");
    assert_eq!(
        revision_of(&file_config(SEED, dir.path(), "directory"), SEED),
        seed_revision()
    );
}

#[test]
fn relation_array_order_does_not_change_the_revision() {
    let root = seed_copy();
    let path = root.join("capabilities/route-validation.json");
    let mut c = read_json(&path);
    assert_eq!(c["parents"], json!(["request", "route"]));
    c["parents"] = json!(["route", "request"]);
    root.write_json("capabilities/route-validation.json", &c);
    assert_eq!(
        revision_of(&seed_config(root.path()), SEED),
        seed_revision()
    );
}

#[test]
fn examples_order_changes_the_revision() {
    let root = seed_copy();
    let mut c = read_json(&root.join("capabilities/route.json"));
    c["examples"] = json!(["first", "second"]);
    root.write_json("capabilities/route.json", &c);
    let before = revision_of(&seed_config(root.path()), SEED);
    c["examples"] = json!(["second", "first"]);
    root.write_json("capabilities/route.json", &c);
    let after = revision_of(&seed_config(root.path()), SEED);
    assert_ne!(before, after);
    assert!(is_revision(&before) && is_revision(&after));
}

#[test]
fn knowledge_order_does_not_change_the_revision() {
    let refs = vec![doc("D-02", "b.md"), doc("D-01", "a.md"), doc("Z", "z.md")];
    let mut reversed = refs.clone();
    reversed.reverse();
    let one = revision_of(
        &acme(vec![cap_with("a", json!({ "knowledge": refs }))]),
        "acme",
    );
    let two = revision_of(
        &acme(vec![cap_with("a", json!({ "knowledge": reversed }))]),
        "acme",
    );
    assert_eq!(one, two);
}

#[test]
fn omitted_optional_arrays_hash_like_empty_ones() {
    let plain = revision_of(&acme(vec![cap("a")]), "acme");
    let explicit = revision_of(
        &acme(vec![cap_with(
            "a",
            json!({ "examples": [], "parents": [], "specializes": [], "related": [], "requires": [], "knowledge": [] }),
        )]),
        "acme",
    );
    assert_eq!(plain, explicit);
}

#[test]
fn every_formal_field_changes_the_revision() {
    let base = revision_of(&acme(vec![cap("a"), cap("b")]), "acme");
    let variants: Vec<Value> = vec![
        acme(vec![cap_with("a", json!({ "name": "Other" })), cap("b")]),
        acme(vec![cap_with("a", json!({ "distinction": "D" })), cap("b")]),
        acme(vec![cap_with("a", json!({ "examples": ["e"] })), cap("b")]),
        acme(vec![cap_with("a", json!({ "requires": ["b"] })), cap("b")]),
        acme(vec![cap_with("a", json!({ "related": ["b"] })), cap("b")]),
        acme(vec![
            cap_with("a", json!({ "knowledge": [doc("D", "x.md")] })),
            cap("b"),
        ]),
        acme(vec![cap("a")]),
        {
            let mut d = provider_def("acme", vec![cap("a"), cap("b")]);
            d["version"] = json!("2");
            inline_config(vec![d])
        },
    ];
    let mut seen = vec![base];
    for v in variants {
        let rev = revision_of(&v, "acme");
        assert!(!seen.contains(&rev), "{rev} repeats for {v}");
        seen.push(rev);
    }
}

#[test]
fn locale_case_does_not_change_the_revision() {
    let mut lower = doc("D-01", "x.md");
    lower["locale"] = json!("zh-cn");
    let mut canonical = doc("D-01", "x.md");
    canonical["locale"] = json!("zh-CN");
    assert_eq!(
        revision_of(
            &acme(vec![cap_with("a", json!({ "knowledge": [lower] }))]),
            "acme"
        ),
        revision_of(
            &acme(vec![cap_with("a", json!({ "knowledge": [canonical] }))]),
            "acme"
        ),
    );
}

#[test]
fn inline_and_file_sources_give_the_same_revision() {
    let inline = inline_config(vec![seed_inline_definition()]);
    assert_eq!(revision_of(&inline, SEED), seed_revision());
    // Capability order inside the inline array does not matter either.
    let mut shuffled = seed_inline_definition();
    shuffled["capabilities"].as_array_mut().unwrap().reverse();
    assert_eq!(
        revision_of(&inline_config(vec![shuffled]), SEED),
        seed_revision()
    );
}

#[test]
fn knowledge_bodies_do_not_change_the_revision() {
    let root = seed_copy();
    root.write("knowledge/route-http.md", "changed body");
    root.write("PROVIDER.md", "changed spec body");
    assert_eq!(
        revision_of(&seed_config(root.path()), SEED),
        seed_revision()
    );
    // Even a missing body is fine at load (§14 D8: existence is checked at read).
    root.remove("knowledge/route-validation.md");
    assert_eq!(
        revision_of(&seed_config(root.path()), SEED),
        seed_revision()
    );
}
