//! `queryKnowledge` in the core: the targets and mapping revision a retriever receives, the
//! access checks, and the evidence and hit checks on what it returns.

mod common;

use capability_graph::engine::Engine;
use capability_graph::hostcall::{HostCall, Started};
use common::*;
use serde_json::{json, Value};

/// A config with `providers` and a knowledge retriever (a host handle as the JS layer writes it).
fn with_retriever(mut config: Value) -> Value {
    config["knowledgeRetriever"] = json!({ "$cgHost": 1, "id": "test", "methods": ["retrieve"] });
    config
}

fn start(engine: &Engine, args: Value) -> Box<dyn HostCall> {
    match engine.start("queryKnowledge", &args.to_string(), None) {
        Ok(Started::Ask(call)) => call,
        Ok(Started::Done(json)) => panic!("answered without the retriever: {json}"),
        Err(e) => panic!("failed: {}", e.to_json()),
    }
}

fn request(call: &dyn HostCall) -> Value {
    serde_json::from_str(call.request()).unwrap()
}

fn ask(call: &dyn HostCall, question: Value) -> Value {
    let answer = call
        .ask(&question.to_string(), None, Vec::new())
        .unwrap_or_else(|e| panic!("ask failed: {}", e.to_json()));
    serde_json::from_str(&answer).unwrap()
}

/// The error JSON a question fails with.
fn ask_err(call: &dyn HostCall, question: Value) -> Value {
    call.ask(&question.to_string(), None, Vec::new())
        .expect_err("the question should fail")
        .to_json_value()
}

/// Evidence that proves the index matches `req` at the content IDs given per target.
fn evidence(req: &Value, content_ids: &[String]) -> Value {
    let documents: Vec<Value> = req["targets"]
        .as_array()
        .unwrap()
        .iter()
        .zip(content_ids)
        .map(|(t, c)| json!({ "id": t["id"], "knowledgeId": t["knowledgeId"], "sourceContentId": c, "indexedContentId": c }))
        .collect();
    json!({
        "staticRevisionByProvider": req["staticRevisionByProvider"],
        "mappingRevision": req["mappingRevision"],
        "observedAt": "2026-01-01T00:00:00Z",
        "freshness": "current",
        "sourceConfigRevision": "c",
        "indexedConfigRevision": "c",
        "documents": documents,
    })
}

fn seed_query() -> Value {
    json!({ "text": "routes", "selected": ["seed.http::route", "seed.http::route.http"] })
}

#[test]
fn targets_are_sorted_merged_and_carry_no_root() {
    let engine = open_ok(&with_retriever(seed_config(&seed_dir())));
    let call = start(&engine, seed_query());
    let req = request(call.as_ref());
    let targets: Vec<(String, String, Value)> = req["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"]["capabilityId"].as_str().unwrap().to_owned(),
                t["knowledgeId"].as_str().unwrap().to_owned(),
                t["viaCollectionIds"].clone(),
            )
        })
        .collect();
    // route brings D-01 and D-02 through ROUTING; route.http declares D-01 directly. Sorted by
    // `<qualifiedId>::<knowledgeId>` in byte order ('.' before ':').
    assert_eq!(
        targets,
        vec![
            ("route.http".into(), "D-01".into(), json!([])),
            ("route".into(), "D-01".into(), json!(["ROUTING"])),
            ("route".into(), "D-02".into(), json!(["ROUTING"])),
        ]
    );
    let text = call.request();
    assert!(!text.contains(seed_dir().to_string_lossy().as_ref()));
    assert_eq!(req["limit"], 8);
    assert_eq!(
        req["staticRevisionByProvider"],
        json!({ SEED: revision(&engine, SEED) })
    );
}

#[test]
fn the_mapping_revision_follows_the_root_not_the_content() {
    let a = seed_copy();
    let b = seed_copy();
    let mapping = |root: &std::path::Path| {
        let engine = open_ok(&with_retriever(seed_config(root)));
        request(start(&engine, seed_query()).as_ref())["mappingRevision"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let first = mapping(a.path());
    assert!(first.starts_with("m:") && first.len() == 66);
    assert_eq!(first, mapping(a.path()), "deterministic");
    a.write("knowledge/route-http.md", "# Changed body\n");
    assert_eq!(
        first,
        mapping(a.path()),
        "document content is not part of the mapping"
    );
    assert_ne!(first, mapping(b.path()), "another root is another mapping");
}

#[test]
fn access_checks_the_target_and_expires() {
    let engine = open_ok(&with_retriever(seed_config(&seed_dir())));
    let call = start(&engine, seed_query());
    let target = json!({ "providerId": SEED, "capabilityId": "route" });
    let read = ask(
        call.as_ref(),
        json!({ "op": "read", "target": { "id": target, "knowledgeId": "D-02" }, "maxBytes": 1_000_000 }),
    );
    assert!(read["text"].as_str().unwrap().starts_with('#'));
    assert_eq!(read["source"], "knowledge/route-validation.md");
    let contract = ("CG_ADAPTER_CONTRACT_INVALID", "contact_admin");
    let cases = [
        (
            json!({ "id": target, "knowledgeId": "D-02", "role": "x" }),
            contract,
            Some("retrieval_target_override"),
        ),
        (
            json!({ "id": target, "knowledgeId": "D-03" }),
            contract,
            Some("retrieval_target_not_selected"),
        ),
        (
            json!({ "id": "other::route", "knowledgeId": "D-01" }),
            ("CG_PROVIDER_NOT_FOUND", "refresh"),
            None,
        ),
        (json!("D-01"), ("CG_INPUT_INVALID", "fix_input"), None),
    ];
    for (t, (code, action), reason) in cases {
        let e = ask_err(
            call.as_ref(),
            json!({ "op": "read", "target": t, "maxBytes": 10 }),
        );
        assert_err_json(&e, code, "query", Some(action));
        assert_eq!(e["details"]["reason"].as_str(), reason, "{t}");
    }
    let own = json!({ "id": target, "knowledgeId": "D-02" });
    let e = ask_err(
        call.as_ref(),
        json!({ "op": "read", "target": own, "maxBytes": 0 }),
    );
    assert_err_json(&e, "CG_INPUT_INVALID", "query", Some("fix_input"));
    // The retriever settled after starting two operations: they may still finish, a third
    // (or an unnumbered one) is expired.
    ask(call.as_ref(), json!({ "op": "expire", "started": 2 }));
    let own = json!({ "id": target, "knowledgeId": "D-02" });
    ask(
        call.as_ref(),
        json!({ "op": "read", "operation": 2, "target": own, "maxBytes": 1_000_000 }),
    );
    for operation in [json!(3), Value::Null] {
        let e = ask_err(
            call.as_ref(),
            json!({ "op": "read", "operation": operation, "target": own, "maxBytes": 10 }),
        );
        assert_err_json(&e, contract.0, "query", Some(contract.1));
        assert_eq!(e["details"]["reason"], "retrieval_access_expired");
    }
}

#[test]
fn evidence_and_hits_are_checked_against_what_the_engine_read() {
    let engine = open_ok(&with_retriever(seed_config(&seed_dir())));
    let call = start(&engine, seed_query());
    let req = request(call.as_ref());
    ask(call.as_ref(), json!({ "op": "rest" }));
    let body = std::fs::read(seed_dir().join("knowledge/route-http.md")).unwrap();
    let content_id = |i: usize| {
        let t = &req["targets"][i];
        let scanned = ask(
            call.as_ref(),
            json!({ "op": "scan", "target": { "id": t["id"], "knowledgeId": t["knowledgeId"] } }),
        );
        scanned["contentId"].as_str().unwrap().to_owned()
    };
    let ids: Vec<String> = (0..3).map(content_id).collect();
    let d01 = ids[0].clone();
    assert_eq!(ids[1], d01, "one document, one content ID");
    assert_ne!(ids[2], d01);
    let snippet = std::str::from_utf8(&body[..10]).unwrap();
    let hit = json!({ "id": req["targets"][0]["id"], "knowledgeId": "D-01", "contentId": d01, "source": "knowledge/route-http.md", "startOffset": 0, "endOffset": 10, "snippet": snippet });
    let ok: Value = serde_json::from_str(
        &call
            .finish(&json!({ "hits": [hit], "evidence": evidence(&req, &ids) }).to_string())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(ok["knowledgeState"], "searched");
    assert_eq!(ok["items"][0]["snippet"], snippet);
    assert_eq!(ok["indexStatus"]["validatedDocuments"], 3);

    let mut stale = evidence(&req, &ids);
    stale["documents"][1]["sourceContentId"] = json!("k:0000000000000000");
    stale["documents"][1]["indexedContentId"] = json!("k:0000000000000000");
    let e = call
        .finish(&json!({ "hits": [], "evidence": stale }).to_string())
        .unwrap_err();
    assert_err_json(
        &e.to_json_value(),
        "CG_INDEX_STALE",
        "query",
        Some("refresh"),
    );
    let mut foreign = evidence(&req, &ids);
    foreign["staticRevisionByProvider"] = json!({ SEED: "s:0000000000000000" });
    let e = call
        .finish(&json!({ "hits": [], "evidence": foreign }).to_string())
        .unwrap_err();
    assert_err_json(
        &e.to_json_value(),
        "CG_REVISION_MISMATCH",
        "query",
        Some("refresh"),
    );
    let e = call.finish(&json!({ "hits": [] }).to_string()).unwrap_err();
    assert_eq!(
        e.code().as_str(),
        "CG_INDEX_STALE",
        "evidence is required with zero hits"
    );
}
