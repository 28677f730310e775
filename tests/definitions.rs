//! Definition validation, inline and from files (SPEC §3.2 CG_DEFINITION_INVALID,
//! CG_RELATION_INVALID, CG_RELATION_CYCLE; §5; §14 D7, D8; reference/definitions.md §2–6).
//! Every error is phase `load`, next action `fix_input`, with details
//! `{ providerId, capabilityId?, field?, file?, reason }`.

mod common;

use common::*;
use serde_json::{json, Value};

const DEF: &str = "CG_DEFINITION_INVALID";
const REL: &str = "CG_RELATION_INVALID";
const CYCLE: &str = "CG_RELATION_CYCLE";

/// `capabilities[i].field` (or `capabilities[i]` for the record itself).
fn inline_field(i: usize, field: &str) -> String {
    if field.is_empty() {
        format!("capabilities[{i}]")
    } else if field.starts_with('[') {
        format!("capabilities[{i}]{field}")
    } else {
        format!("capabilities[{i}].{field}")
    }
}

/// Loads `caps` once inline (provider `acme`) and once from files (`capabilities/c<i>.json` in
/// directory layout) and expects the same error from both: for capability `index`, about
/// `field` (relative to the record), with `capability` and `reason`.
#[track_caller]
fn expect_both(
    caps: Vec<Value>,
    code: &str,
    index: usize,
    field: &str,
    capability: Option<&str>,
    reason: &str,
) {
    let inline = inline_field(index, field);
    assert_def_err(
        open(&acme(caps.clone())),
        code,
        Def {
            provider: Some("acme"),
            capability,
            field: Some(&inline),
            file: None,
            reason,
        },
    );
    let tree = provider_tree("acme", &caps);
    let file = format!("capabilities/c{index}.json");
    assert_def_err(
        open(&file_config("acme", tree.path(), "directory")),
        code,
        Def {
            provider: Some("acme"),
            capability,
            field: (!field.is_empty()).then_some(field),
            file: Some(&file),
            reason,
        },
    );
}

/// One capability `a` with `extra` fields, expected to fail on `field` with `reason`.
#[track_caller]
fn expect_field(extra: Value, field: &str, capability: Option<&str>, reason: &str) {
    expect_both(
        vec![cap_with("a", extra)],
        DEF,
        0,
        field,
        capability,
        reason,
    );
}

fn loads(caps: Vec<Value>) {
    open_ok(&acme(caps.clone()));
    let tree = provider_tree("acme", &caps);
    open_ok(&file_config("acme", tree.path(), "directory"));
}

// ---------------------------------------------------------------------------------------------
// Valid definitions

#[test]
fn the_full_capability_schema_loads() {
    let c = cap_with(
        "route.validation",
        json!({
            "distinction": "Not b.",
            "examples": ["one", "two", "one"],
            "parents": ["route"],
            "specializes": ["route.http"],
            "related": ["route", "route.validation"],
            "requires": ["schema.request"],
            "knowledge": [
                {
                    "kind": "document", "knowledgeId": "D-02", "role": "guide", "locale": "en-us",
                    "title": "T", "summary": "S", "canonicalUrl": "https://example.com/docs",
                    "locator": { "type": "relative-file", "path": "knowledge/中文 guide.md" }
                },
                {
                    "kind": "collection", "knowledgeId": "set", "title": "Set",
                    "members": [
                        { "kind": "document", "knowledgeId": "M-1", "role": "reference",
                          "locator": { "type": "http", "url": "https://example.com/m1" } }
                    ]
                }
            ]
        }),
    );
    loads(vec![
        c,
        cap("route"),
        cap_with("route.http", json!({ "parents": ["route"] })),
        cap("schema.request"),
    ]);
}

#[test]
fn ids_at_their_limits_load() {
    let long = "a".repeat(128);
    loads(vec![cap(&long), cap("a-b_c.d9"), cap("z")]);
}

#[test]
fn empty_provider_loads() {
    open_ok(&acme(vec![]));
    let tree = provider_tree("acme", &[]);
    open_ok(&file_config("acme", tree.path(), "directory"));
}

// ---------------------------------------------------------------------------------------------
// IDs (reference/definitions.md §4)

#[test]
fn invalid_capability_ids() {
    for bad in [
        "A",
        "0a",
        "a b",
        &"a".repeat(129),
        "中",
        "a::b",
        "a\n",
        " a",
    ] {
        expect_both(vec![cap(bad)], DEF, 0, "capabilityId", None, "id_invalid");
    }
}

#[test]
fn capability_id_not_a_non_blank_string() {
    for bad in [json!(""), json!("  "), json!(5), json!(null), json!(["a"])] {
        let mut c = cap("a");
        c["capabilityId"] = bad;
        expect_both(
            vec![c],
            DEF,
            0,
            "capabilityId",
            None,
            "nonempty_string_required",
        );
    }
}

#[test]
fn invalid_inline_provider_ids() {
    for bad in ["A", "0a", "a b", &"a".repeat(129), "中"] {
        let config = inline_config(vec![provider_def(bad, vec![cap("a")])]);
        assert_def_err(
            open(&config),
            DEF,
            Def {
                provider: None,
                capability: None,
                field: Some("providerId"),
                file: None,
                reason: "id_invalid",
            },
        );
    }
}

#[test]
fn invalid_provider_id_in_provider_json() {
    // The configured ID is valid; provider.json's is not.
    let tree = provider_tree("acme", &[cap("a")]);
    tree.write_json(
        "provider.json",
        &json!({ "providerId": "Acme", "name": "N", "version": "1" }),
    );
    assert_def_err(
        open(&file_config("acme", tree.path(), "directory")),
        DEF,
        Def {
            provider: Some("acme"),
            field: Some("providerId"),
            file: Some("provider.json"),
            reason: "id_invalid",
            ..Def::default()
        },
    );
}

#[test]
fn provider_json_id_differs_from_config() {
    let tree = provider_tree("other", &[cap("a")]);
    assert_def_err(
        open(&file_config("acme", tree.path(), "directory")),
        DEF,
        Def {
            provider: Some("acme"),
            field: Some("providerId"),
            file: Some("provider.json"),
            reason: "provider_id_mismatch",
            ..Def::default()
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Text fields, nulls, unknown and missing keys (reference/definitions.md §3, §3.1)

#[test]
fn blank_text_fields() {
    for field in ["name", "description", "whenToUse", "distinction"] {
        for blank in ["", " ", "\n\t "] {
            expect_field(
                json!({ field: blank }),
                field,
                Some("a"),
                "nonempty_string_required",
            );
        }
        expect_field(
            json!({ field: 7 }),
            field,
            Some("a"),
            "nonempty_string_required",
        );
    }
}

#[test]
fn blank_example() {
    expect_field(
        json!({ "examples": ["ok", " "] }),
        "examples[1]",
        Some("a"),
        "nonempty_string_required",
    );
}

#[test]
fn null_for_optional_fields() {
    expect_field(
        json!({ "distinction": null }),
        "distinction",
        Some("a"),
        "nonempty_string_required",
    );
    for field in [
        "examples",
        "parents",
        "specializes",
        "related",
        "requires",
        "knowledge",
    ] {
        expect_field(json!({ field: null }), field, Some("a"), "array_required");
    }
}

#[test]
fn arrays_of_the_wrong_type() {
    for field in ["examples", "parents", "requires", "knowledge"] {
        expect_field(json!({ field: "x" }), field, Some("a"), "array_required");
        expect_field(json!({ field: {} }), field, Some("a"), "array_required");
    }
}

#[test]
fn unknown_capability_keys() {
    for key in ["tags", "aliases", "id", "requiredBy"] {
        expect_both(
            vec![cap_with("a", json!({ key: [] }))],
            DEF,
            0,
            key,
            Some(ANY),
            "unknown_key",
        );
    }
}

#[test]
fn missing_required_capability_fields() {
    for key in ["capabilityId", "name", "description", "whenToUse"] {
        let mut c = cap("a");
        c.as_object_mut().unwrap().remove(key);
        expect_both(vec![c], DEF, 0, key, Some(ANY), "required");
    }
}

#[test]
fn capability_that_is_not_an_object() {
    for bad in [json!(null), json!([]), json!("a"), json!(1)] {
        expect_both(vec![bad], DEF, 0, "", None, "object_required");
    }
}

#[test]
fn inline_provider_fields() {
    // Blank name, missing version, unknown key, capabilities not an array, missing capabilities.
    let cases: Vec<(Value, &str, &str)> = vec![
        (json!({ "name": " " }), "name", "nonempty_string_required"),
        (
            json!({ "version": "" }),
            "version",
            "nonempty_string_required",
        ),
        (json!({ "name": null }), "name", "nonempty_string_required"),
        (json!({ "description": "x" }), "description", "unknown_key"),
        (
            json!({ "capabilities": {} }),
            "capabilities",
            "array_required",
        ),
        (
            json!({ "capabilities": null }),
            "capabilities",
            "array_required",
        ),
        (
            json!({ "specification": null }),
            "specification",
            "object_required",
        ),
    ];
    for (patch, field, reason) in cases {
        let mut def = provider_def("acme", vec![cap("a")]);
        merge(&mut def, patch);
        assert_def_err(
            open(&inline_config(vec![def])),
            DEF,
            Def {
                provider: Some(ANY),
                field: Some(field),
                reason,
                ..Def::default()
            },
        );
    }
    for key in ["version", "capabilities", "name"] {
        let mut def = provider_def("acme", vec![cap("a")]);
        def.as_object_mut().unwrap().remove(key);
        assert_def_err(
            open(&inline_config(vec![def])),
            DEF,
            Def {
                provider: Some(ANY),
                field: Some(key),
                reason: "required",
                ..Def::default()
            },
        );
    }
}

#[test]
fn inline_provider_errors_name_the_provider() {
    // SPEC §14 D7: definition errors carry `{ providerId, … }`; the inline definition's own
    // providerId is valid here, so it is known.
    let mut def = provider_def("acme", vec![cap("a")]);
    def["name"] = json!(" ");
    assert_def_err(
        open(&inline_config(vec![def])),
        DEF,
        Def {
            provider: Some("acme"),
            field: Some("name"),
            reason: "nonempty_string_required",
            ..Def::default()
        },
    );
}

#[test]
fn provider_json_fields() {
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!({ "providerId": "acme", "name": "N", "version": " " }),
            "version",
            "nonempty_string_required",
        ),
        (
            json!({ "providerId": "acme", "name": "N" }),
            "version",
            "required",
        ),
        (
            json!({ "providerId": "acme", "name": "N", "version": "1", "capabilities": [] }),
            "capabilities",
            "unknown_key",
        ),
        (
            json!({ "providerId": "acme", "name": "N", "version": "1", "definitionLayout": "directory" }),
            "definitionLayout",
            "unknown_key",
        ),
    ];
    for (manifest, field, reason) in cases {
        let tree = provider_tree("acme", &[cap("a")]);
        tree.write_json("provider.json", &manifest);
        assert_def_err(
            open(&file_config("acme", tree.path(), "directory")),
            DEF,
            Def {
                provider: Some("acme"),
                field: Some(field),
                file: Some("provider.json"),
                reason,
                ..Def::default()
            },
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Sizes (reference/definitions.md §3.1: canonical record <= 262,144 bytes)

/// A capability whose compact JSON is exactly `bytes` long.
fn cap_of_size(bytes: usize) -> Value {
    let mut c = cap_with("a", json!({ "description": "" }));
    let base = serde_json::to_string(&c).unwrap().len();
    c["description"] = json!("x".repeat(bytes - base));
    assert_eq!(serde_json::to_string(&c).unwrap().len(), bytes);
    c
}

#[test]
fn record_at_the_limit_loads_inline() {
    open_ok(&acme(vec![cap_of_size(262_144)]));
}

#[test]
fn oversize_inline_record() {
    let e = assert_def_err(
        open(&acme(vec![cap("b"), cap_of_size(262_145)])),
        DEF,
        Def {
            provider: Some("acme"),
            capability: Some(ANY),
            field: Some("capabilities[1]"),
            reason: "record_too_large",
            ..Def::default()
        },
    );
    assert_eq!(details(&e)["maxBytes"], 262_144);
}

#[test]
fn oversize_inline_provider_record() {
    let mut def = provider_def("acme", vec![]);
    def["name"] = json!("n".repeat(262_200));
    let e = assert_def_err(
        open(&inline_config(vec![def])),
        DEF,
        Def {
            provider: Some(ANY),
            field: Some(ANY),
            reason: "record_too_large",
            ..Def::default()
        },
    );
    assert_eq!(details(&e)["maxBytes"], 262_144);
}

#[test]
fn oversize_definition_file() {
    let tree = provider_tree("acme", &[cap_of_size(262_145)]);
    // Written compact, so the file is exactly one byte over.
    tree.write(
        "capabilities/c0.json",
        serde_json::to_vec(&cap_of_size(262_145)).unwrap(),
    );
    let e = assert_def_err(
        open(&file_config("acme", tree.path(), "directory")),
        DEF,
        Def {
            provider: Some("acme"),
            file: Some("capabilities/c0.json"),
            reason: "file_too_large",
            ..Def::default()
        },
    );
    assert_eq!(details(&e)["maxBytes"], 262_144);
    // At the limit it loads.
    tree.write(
        "capabilities/c0.json",
        serde_json::to_vec(&cap_of_size(262_144)).unwrap(),
    );
    open_ok(&file_config("acme", tree.path(), "directory"));
}

// ---------------------------------------------------------------------------------------------
// Values that were not plain JSON in JS (§14 D11): the `{"$cgNonJson": kind}` marker

fn marker() -> Value {
    json!({ "$cgNonJson": "function" })
}

#[test]
fn non_json_marker_in_a_text_field() {
    let mut c = cap("a");
    c["description"] = marker();
    assert_def_err(
        open(&acme(vec![c])),
        DEF,
        Def {
            provider: Some("acme"),
            capability: Some("a"),
            field: Some("capabilities[0].description"),
            reason: "non_json_value",
            ..Def::default()
        },
    );
}

#[test]
fn non_json_marker_in_arrays_and_records() {
    let cases: Vec<(Value, &str, Option<&str>)> = vec![
        (
            cap_with("a", json!({ "examples": ["x", marker()] })),
            "capabilities[0].examples[1]",
            Some("a"),
        ),
        (
            cap_with("a", json!({ "parents": [marker()] })),
            "capabilities[0].parents[0]",
            Some("a"),
        ),
        (
            cap_with("a", json!({ "knowledge": [marker()] })),
            "capabilities[0].knowledge[0]",
            Some("a"),
        ),
        (
            cap_with("a", json!({ "examples": marker() })),
            "capabilities[0].examples",
            Some("a"),
        ),
        (
            cap_with("a", json!({ "distinction": marker() })),
            "capabilities[0].distinction",
            Some("a"),
        ),
        (marker(), "capabilities[0]", None),
    ];
    for (c, field, capability) in cases {
        assert_def_err(
            open(&acme(vec![c])),
            DEF,
            Def {
                provider: Some("acme"),
                capability,
                field: Some(field),
                reason: "non_json_value",
                ..Def::default()
            },
        );
    }
}

#[test]
fn non_json_marker_in_provider_fields() {
    let mut def = provider_def("acme", vec![cap("a")]);
    def["version"] = json!({ "$cgNonJson": "bigint" });
    assert_def_err(
        open(&inline_config(vec![def])),
        DEF,
        Def {
            provider: Some(ANY),
            field: Some("version"),
            reason: "non_json_value",
            ..Def::default()
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Relations (reference/definitions.md §5.2–5.3; SPEC §3.2 CG_RELATION_INVALID)

#[test]
fn relation_to_a_missing_capability() {
    for relation in ["parents", "specializes", "related", "requires"] {
        let caps = vec![cap("b"), cap_with("a", json!({ relation: ["b", "ghost"] }))];
        let e = assert_def_err(
            open(&acme(caps.clone())),
            REL,
            Def {
                provider: Some("acme"),
                capability: Some("a"),
                field: Some(ANY),
                reason: "missing_endpoint",
                ..Def::default()
            },
        );
        let d = details(&e);
        assert_eq!(d["endpoint"], "ghost");
        let field = d["field"].as_str().unwrap();
        assert!(field.ends_with(relation), "field {field} names {relation}");

        let tree = provider_tree("acme", &caps);
        let e = assert_def_err(
            open(&file_config("acme", tree.path(), "directory")),
            REL,
            Def {
                provider: Some("acme"),
                capability: Some("a"),
                field: Some(ANY),
                file: Some("capabilities/c1.json"),
                reason: "missing_endpoint",
            },
        );
        assert_eq!(details(&e)["endpoint"], "ghost");
    }
}

#[test]
fn forward_references_are_legal() {
    loads(vec![cap_with("a", json!({ "requires": ["z"] })), cap("z")]);
}

#[test]
fn cross_provider_endpoints() {
    for relation in ["parents", "specializes", "related", "requires"] {
        for endpoint in [
            json!("other::b"),
            json!("acme::b"),
            json!({ "providerId": "acme", "capabilityId": "b" }),
            json!({ "capabilityId": "b" }),
        ] {
            expect_both(
                vec![cap_with("a", json!({ relation: [endpoint] })), cap("b")],
                REL,
                0,
                &format!("{relation}[0]"),
                Some("a"),
                "cross_provider",
            );
        }
    }
}

#[test]
fn endpoints_that_are_not_ids() {
    for endpoint in [
        json!("B"),
        json!(""),
        json!("../x"),
        json!(12),
        json!(null),
        json!([]),
    ] {
        expect_both(
            vec![
                cap_with("a", json!({ "parents": ["b", endpoint] })),
                cap("b"),
            ],
            REL,
            0,
            "parents[1]",
            Some("a"),
            "endpoint_invalid",
        );
    }
}

#[test]
fn duplicate_endpoint() {
    for relation in ["parents", "specializes", "related", "requires"] {
        expect_both(
            vec![
                cap_with("a", json!({ relation: ["b", "c", "b"] })),
                cap("b"),
                cap("c"),
            ],
            REL,
            0,
            &format!("{relation}[2]"),
            Some("a"),
            "duplicate_endpoint",
        );
    }
}

#[track_caller]
fn expect_cycle(caps: Vec<Value>, relation: &str, cycle: &[&str]) {
    for result in [open(&acme(caps.clone())), {
        let tree = provider_tree("acme", &caps);
        open(&file_config("acme", tree.path(), "directory"))
    }] {
        let e = assert_err(result, CYCLE, "load", Some("fix_input"));
        let d = details(&e);
        assert_eq!(d["providerId"], "acme", "{}", e.to_json());
        assert_eq!(d["relation"], relation, "{}", e.to_json());
        assert_eq!(d["cycle"], json!(cycle), "{}", e.to_json());
    }
}

#[test]
fn cycles_of_length_one() {
    for relation in ["parents", "specializes", "requires"] {
        expect_cycle(
            vec![cap("b"), cap_with("a", json!({ relation: ["a"] }))],
            relation,
            &["a", "a"],
        );
    }
}

#[test]
fn cycles_of_length_three() {
    for relation in ["parents", "specializes", "requires"] {
        expect_cycle(
            vec![
                cap_with("c", json!({ relation: ["a"] })),
                cap_with("b", json!({ relation: ["c"] })),
                cap_with("a", json!({ relation: ["b"] })),
                cap("d"),
            ],
            relation,
            &["a", "b", "c", "a"],
        );
    }
}

#[test]
fn a_long_cycle_of_long_ids_stays_a_small_error() {
    // Every error JSON stays within 4 KiB: the cycle is listed while it fits, then counted.
    let id = |i: usize| format!("c{i:03}{}", "x".repeat(124));
    let n = 64;
    let caps: Vec<Value> = (0..n)
        .map(|i| cap_with(&id(i), json!({ "requires": [id((i + 1) % n)] })))
        .collect();
    let e = assert_err(open(&acme(caps)), CYCLE, "load", Some("fix_input"));
    assert!(e.to_json().len() <= 4096, "{} bytes", e.to_json().len());
    let d = details(&e);
    let listed = d["cycle"].as_array().unwrap();
    assert!(!listed.is_empty() && listed.len() < n + 1);
    assert_eq!(listed[0], id(0).as_str());
    assert_eq!(d["cycleLength"], n + 1);
}

#[test]
fn related_cycles_are_allowed() {
    loads(vec![
        cap_with("a", json!({ "related": ["a", "b"] })),
        cap_with("b", json!({ "related": ["c"] })),
        cap_with("c", json!({ "related": ["a"] })),
    ]);
}

#[test]
fn each_relation_is_checked_alone() {
    // parents a→b and specializes b→a: each relation is acyclic on its own.
    loads(vec![
        cap_with("a", json!({ "parents": ["b"], "requires": ["b"] })),
        cap_with("b", json!({ "specializes": ["a"], "related": ["a"] })),
    ]);
}

#[test]
fn duplicate_capability_id() {
    expect_both(
        vec![cap("a"), cap("b"), cap("a")],
        DEF,
        2,
        "capabilityId",
        Some("a"),
        "duplicate_capability",
    );
}

// ---------------------------------------------------------------------------------------------
// Knowledge references (reference/definitions.md §6; SPEC §14 D8: locator syntax at load)

fn with_knowledge(refs: Vec<Value>) -> Value {
    cap_with("a", json!({ "knowledge": refs }))
}

#[test]
fn bad_locator_paths() {
    for path in [
        "../x.md",
        "/x",
        "a\\x",
        "C:/x",
        "~/x",
        "",
        "knowledge/../x.md",
        "./PROVIDER.md",
        "a//b",
        "a/",
        "a:stream",
        "a./b",
        "a /b",
        "a\u{1}b",
    ] {
        expect_both(
            vec![with_knowledge(vec![doc("D-01", path)])],
            DEF,
            0,
            "knowledge[0].locator.path",
            Some("a"),
            "path_invalid",
        );
    }
}

#[test]
fn locator_path_not_a_string() {
    let mut d = doc("D-01", "x.md");
    d["locator"]["path"] = json!(3);
    expect_both(
        vec![with_knowledge(vec![d])],
        DEF,
        0,
        "knowledge[0].locator.path",
        Some("a"),
        "path_string_required",
    );
}

#[test]
fn unicode_and_inner_spaces_in_paths_are_allowed() {
    loads(vec![with_knowledge(vec![doc(
        "D-01",
        "knowledge/中文 guide.mdx",
    )])]);
}

#[test]
fn unbound_root_alias() {
    let mut d = doc("D-01", "x.md");
    d["locator"]["root"] = json!("docs");
    expect_both(
        vec![with_knowledge(vec![d])],
        DEF,
        0,
        "knowledge[0].locator.root",
        Some("a"),
        "root_alias_unbound",
    );
}

#[test]
fn invalid_root_alias() {
    let mut d = doc("D-01", "x.md");
    d["locator"]["root"] = json!("do.cs");
    expect_both(
        vec![with_knowledge(vec![d])],
        DEF,
        0,
        "knowledge[0].locator.root",
        Some("a"),
        "root_alias_invalid",
    );
}

#[test]
fn bound_root_alias_loads() {
    let docs = TempDir::new("docs");
    let mut d = doc("D-01", "x.md");
    d["locator"]["root"] = json!("docs");
    let config = json!({ "providers": [{
        "definition": provider_def("acme", vec![with_knowledge(vec![d])]),
        "knowledgeRoots": { "docs": { "kind": "directory", "rootDir": docs.path().to_string_lossy() } },
    }] });
    open_ok(&config);
}

#[test]
fn http_locator_with_a_non_http_url() {
    for url in [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "not a url",
        "example.com/x",
        "mailto:a@b.c",
    ] {
        let d = json!({
            "kind": "document", "knowledgeId": "D-01", "role": "guide",
            "locator": { "type": "http", "url": url }
        });
        expect_both(
            vec![with_knowledge(vec![d])],
            DEF,
            0,
            "knowledge[0].locator.url",
            Some("a"),
            "http_url_required",
        );
    }
}

#[test]
fn unknown_locator_type() {
    let d = json!({
        "kind": "document", "knowledgeId": "D-01", "role": "guide",
        "locator": { "type": "s3", "path": "x" }
    });
    expect_both(
        vec![with_knowledge(vec![d])],
        DEF,
        0,
        "knowledge[0].locator.type",
        Some("a"),
        "locator_type",
    );
}

#[test]
fn bad_canonical_url() {
    for url in [
        "https://example.com",
        "ftp://example.com/",
        "HTTPS://example.com/",
        "not a url",
        " ",
    ] {
        let mut d = doc("D-01", "x.md");
        d["canonicalUrl"] = json!(url);
        let reason = if url.trim().is_empty() {
            "nonempty_string_required"
        } else {
            "canonical_url_invalid"
        };
        expect_both(
            vec![with_knowledge(vec![d])],
            DEF,
            0,
            "knowledge[0].canonicalUrl",
            Some("a"),
            reason,
        );
    }
    let mut d = doc("D-01", "x.md");
    d["canonicalUrl"] = json!("https://example.com/");
    loads(vec![with_knowledge(vec![d])]);
}

#[test]
fn bad_locale() {
    for locale in ["en_US", "xx-!!", "english", "en-", "x--a"] {
        let mut d = doc("D-01", "x.md");
        d["locale"] = json!(locale);
        expect_both(
            vec![with_knowledge(vec![d])],
            DEF,
            0,
            "knowledge[0].locale",
            Some("a"),
            "locale_invalid",
        );
    }
}

#[test]
fn bad_knowledge_ids_and_roles() {
    expect_both(
        vec![with_knowledge(vec![doc("1x", "x.md")])],
        DEF,
        0,
        "knowledge[0].knowledgeId",
        Some("a"),
        "knowledge_id_invalid",
    );
    let mut d = doc("D-01", "x.md");
    d["role"] = json!("not a role");
    expect_both(
        vec![with_knowledge(vec![d])],
        DEF,
        0,
        "knowledge[0].role",
        Some("a"),
        "role_invalid",
    );
    let mut d = doc("D-01", "x.md");
    d.as_object_mut().unwrap().remove("role");
    expect_both(
        vec![with_knowledge(vec![d])],
        DEF,
        0,
        "knowledge[0].role",
        Some("a"),
        "required",
    );
}

#[test]
fn duplicate_knowledge_id_in_one_capability() {
    expect_both(
        vec![with_knowledge(vec![
            doc("D-01", "x.md"),
            doc("D-01", "x.md"),
        ])],
        DEF,
        0,
        "knowledge[1]",
        Some("a"),
        "duplicate_knowledge_id",
    );
}

#[test]
fn conflicting_knowledge_id_across_capabilities() {
    // Sorted by ID, `a` claims D-01 first; `b` (file c0.json) conflicts with it.
    let caps = vec![
        cap_with("b", json!({ "knowledge": [doc("D-01", "y.md")] })),
        cap_with("a", json!({ "knowledge": [doc("D-01", "x.md")] })),
    ];
    let e = assert_def_err(
        open(&acme(caps.clone())),
        DEF,
        Def {
            provider: Some("acme"),
            capability: Some("b"),
            field: Some(ANY),
            file: None,
            reason: "conflicting_knowledge_id",
        },
    );
    assert_eq!(details(&e)["knowledgeId"], "D-01");

    // §14 D7: a definition error from a file source names the file (relative) it is about.
    let tree = provider_tree("acme", &caps);
    let e = assert_def_err(
        open(&file_config("acme", tree.path(), "directory")),
        DEF,
        Def {
            provider: Some("acme"),
            capability: Some("b"),
            field: Some(ANY),
            file: Some("capabilities/c0.json"),
            reason: "conflicting_knowledge_id",
        },
    );
    assert_eq!(details(&e)["knowledgeId"], "D-01");
}

#[test]
fn the_same_knowledge_ref_may_be_shared() {
    loads(vec![
        cap_with("a", json!({ "knowledge": [doc("D-01", "x.md")] })),
        cap_with("b", json!({ "knowledge": [doc("D-01", "x.md")] })),
    ]);
}

fn spec_doc(role: &str) -> Value {
    json!({
        "kind": "document", "knowledgeId": "SPEC-01", "role": role,
        "locator": { "type": "relative-file", "path": "PROVIDER.md" }
    })
}

#[test]
fn specification_documents_need_the_specification_role() {
    let spec = json!({ "specificationId": "s", "version": "1", "documents": [spec_doc("guide")] });
    // Inline.
    let mut def = provider_def("acme", vec![cap("a")]);
    def["specification"] = spec.clone();
    assert_def_err(
        open(&inline_config(vec![def])),
        DEF,
        Def {
            provider: Some(ANY),
            field: Some("specification.documents[0].role"),
            reason: "specification_role_required",
            ..Def::default()
        },
    );
    // provider.json.
    let tree = provider_tree("acme", &[cap("a")]);
    tree.write_json(
        "provider.json",
        &json!({ "providerId": "acme", "name": "N", "version": "1", "specification": spec }),
    );
    assert_def_err(
        open(&file_config("acme", tree.path(), "directory")),
        DEF,
        Def {
            provider: Some("acme"),
            field: Some("specification.documents[0].role"),
            file: Some("provider.json"),
            reason: "specification_role_required",
            ..Def::default()
        },
    );
}

#[test]
fn specification_needs_documents() {
    let mut def = provider_def("acme", vec![cap("a")]);
    def["specification"] = json!({ "specificationId": "s", "version": "1", "documents": [] });
    assert_def_err(
        open(&inline_config(vec![def])),
        DEF,
        Def {
            provider: Some(ANY),
            field: Some("specification.documents"),
            reason: "documents_required",
            ..Def::default()
        },
    );
}

#[test]
fn specification_and_capability_documents_must_agree() {
    // SPEC-01 names PROVIDER.md in the specification and another file in a capability.
    let mut def = provider_def(
        "acme",
        vec![cap_with(
            "a",
            json!({ "knowledge": [{
            "kind": "document", "knowledgeId": "SPEC-01", "role": "specification",
            "locator": { "type": "relative-file", "path": "OTHER.md" }
        }] }),
        )],
    );
    def["specification"] =
        json!({ "specificationId": "s", "version": "1", "documents": [spec_doc("specification")] });
    let e = assert_def_err(
        open(&inline_config(vec![def])),
        DEF,
        Def {
            provider: Some("acme"),
            capability: Some("a"),
            field: Some(ANY),
            reason: "conflicting_knowledge_id",
            ..Def::default()
        },
    );
    assert_eq!(details(&e)["knowledgeId"], "SPEC-01");
}

// ---------------------------------------------------------------------------------------------
// Which error is reported, and size measurement details

#[test]
fn the_first_bad_record_in_load_order_is_reported() {
    expect_both(
        vec![cap("ok"), cap_with("b", json!({ "name": " " })), cap("C")],
        DEF,
        1,
        "name",
        Some("b"),
        "nonempty_string_required",
    );
}

#[test]
fn the_first_bad_record_is_reported_in_large_providers_too() {
    // Large providers are validated on several threads; the report must not depend on timing.
    let mut caps: Vec<Value> = (0..3000).map(|i| cap(&format!("c{i:04}"))).collect();
    caps[2999] = cap("Z");
    caps[1500] = cap_with("c1500", json!({ "whenToUse": "" }));
    caps[2100] = cap("Y");
    for _ in 0..3 {
        assert_def_err(
            open(&acme(caps.clone())),
            DEF,
            Def {
                provider: Some("acme"),
                capability: Some("c1500"),
                field: Some("capabilities[1500].whenToUse"),
                reason: "nonempty_string_required",
                ..Def::default()
            },
        );
    }
}

#[test]
fn deep_parent_chains_load() {
    // reference/definitions.md §5.3: cycle detection must not recurse.
    let n = 20_000;
    let caps: Vec<Value> = (0..n)
        .map(|i| {
            if i + 1 < n {
                cap_with(
                    &format!("c{i}"),
                    json!({ "parents": [format!("c{}", i + 1)] }),
                )
            } else {
                cap(&format!("c{i}"))
            }
        })
        .collect();
    open_ok(&acme(caps.clone()));
    // Closing the chain makes one long cycle.
    let mut cyclic = caps;
    cyclic[n - 1] = cap_with(&format!("c{}", n - 1), json!({ "parents": ["c0"] }));
    let e = assert_err(open(&acme(cyclic)), CYCLE, "load", Some("fix_input"));
    assert_eq!(details(&e)["relation"], "parents");
}

#[test]
fn record_size_is_checked_before_keys() {
    // reference/definitions.md §3.1: the raw record, unknown keys included, is measured first.
    let mut c = cap_with("a", json!({ "tags": "" }));
    let base = serde_json::to_string(&c).unwrap().len();
    c["tags"] = json!("t".repeat(262_145 - base));
    assert_eq!(serde_json::to_string(&c).unwrap().len(), 262_145);
    assert_def_err(
        open(&acme(vec![c])),
        DEF,
        Def {
            provider: Some("acme"),
            field: Some("capabilities[0]"),
            reason: "record_too_large",
            ..Def::default()
        },
    );
}

/// A capability filled with `unit` until its compact JSON is exactly `bytes` long.
fn cap_filled(bytes: usize, unit: &str) -> Value {
    let mut c = cap_with("a", json!({ "description": "d" }));
    let base = serde_json::to_string(&c).unwrap().len();
    let unit_len = serde_json::to_string(unit).unwrap().len() - 2;
    let n = (bytes - base) / unit_len;
    let rest = bytes - base - n * unit_len;
    c["description"] = json!(format!("d{}{}", unit.repeat(n), "d".repeat(rest)));
    assert_eq!(serde_json::to_string(&c).unwrap().len(), bytes);
    c
}

#[test]
fn record_size_counts_utf8_bytes_and_escapes() {
    for unit in ["中", "é", "\u{1}", "\"", "\\", "\n", "😀"] {
        open_ok(&acme(vec![cap_filled(262_144, unit)]));
        assert_def_err(
            open(&acme(vec![cap_filled(262_145, unit)])),
            DEF,
            Def {
                provider: Some("acme"),
                field: Some("capabilities[0]"),
                reason: "record_too_large",
                ..Def::default()
            },
        );
    }
}

#[test]
fn record_size_prints_numbers_like_javascript() {
    // The canonical size is JSON.stringify's: 1e20 prints as 21 digits, 100.0 as "100".
    for (number, js) in [
        (json!(1e20), "100000000000000000000"),
        (json!(100.0), "100"),
        (json!(1e21), "1e+21"),
    ] {
        // A record whose size, as JavaScript prints it, is `bytes`.
        let with_js_size = |bytes: usize| {
            let mut c = cap_with("a", json!({ "x": number.clone(), "description": "d" }));
            let serde_number = serde_json::to_string(&number).unwrap().len();
            let js_len = serde_json::to_string(&c).unwrap().len() - serde_number + js.len();
            c["description"] = json!("d".repeat(1 + bytes - js_len));
            c
        };
        assert_def_err(
            open(&acme(vec![with_js_size(262_145)])),
            DEF,
            Def {
                provider: Some("acme"),
                field: Some("capabilities[0]"),
                reason: "record_too_large",
                ..Def::default()
            },
        );
        // At the limit the size passes and the unknown key is reported.
        assert_def_err(
            open(&acme(vec![with_js_size(262_144)])),
            DEF,
            Def {
                provider: Some("acme"),
                field: Some("capabilities[0].x"),
                reason: "unknown_key",
                ..Def::default()
            },
        );
    }
}

/// `doctor` lists every problem; `open` reports the first of that same list (checks run in
/// one order), so both agree on what is wrong first.
#[test]
fn diagnose_lists_every_problem_and_open_reports_the_first() {
    let bad_id = json!({ "capabilityId": "Bad", "name": "N", "whenToUse": "W" });
    let broken =
        json!({ "capabilityId": "broken", "name": " ", "description": "D", "whenToUse": "W" });
    let dangling = json!({ "capabilityId": "d", "name": "N", "description": "D", "whenToUse": "W", "requires": ["broken", "ghost"] });
    let dup = cap("d");
    let mut x = cap("x");
    x["parents"] = json!(["y"]);
    let mut y = cap("y");
    y["parents"] = json!(["x"]);
    for caps in [
        vec![
            bad_id.clone(),
            dangling.clone(),
            dup.clone(),
            x.clone(),
            y.clone(),
            broken,
        ],
        vec![dangling.clone(), dup.clone(), x.clone(), y.clone()],
        vec![x.clone(), y.clone(), dangling.clone()],
        vec![x.clone(), y.clone()],
    ] {
        let config = acme(caps.clone());
        let first = open(&config).err().expect("problems");
        let listed: Value = serde_json::from_str(
            &capability_graph::engine::diagnose(&config.to_string(), None).unwrap(),
        )
        .unwrap();
        let problems = listed["providers"][0]["problems"].as_array().unwrap();
        assert!(
            problems.iter().any(|p| p["code"] == first.code().as_str()
                && details(&first)
                    .get("field")
                    .is_none_or(|f| p.get("field") == Some(f))),
            "{first:?} in {problems:?}"
        );
        if caps.len() == 6 {
            let found: Vec<(&str, &str)> = problems
                .iter()
                .map(|p| (p["field"].as_str().unwrap(), p["reason"].as_str().unwrap()))
                .collect();
            // "broken" is declared by a record with a problem of its own, so the edge to it is
            // not reported again. Ordered by capability, then field.
            assert_eq!(
                found,
                [
                    ("capabilities[0].capabilityId", "id_invalid"),
                    ("capabilities[0].description", "required"),
                    ("capabilities[5].name", "nonempty_string_required"),
                    ("capabilities[1].requires", "missing_endpoint"),
                    ("capabilities[2].capabilityId", "duplicate_capability"),
                    ("capabilities[3].parents", "cycle"),
                ]
            );
            assert_eq!(listed["providers"][0]["omitted"], 0);
        }
    }
    let clean = acme(vec![cap("a")]);
    let listed = capability_graph::engine::diagnose(&clean.to_string(), None).unwrap();
    assert_eq!(listed, r#"{"providers":[{"problems":[],"omitted":0}]}"#);
}
