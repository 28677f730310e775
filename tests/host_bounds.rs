//! What the engine sends host components is bounded before any component sees it, and every
//! call it hands to one carries its deadline (SPEC §14 D17).

mod common;

use capability_graph::engine::Engine;
use capability_graph::error::GraphError;
use capability_graph::hostcall::{HostCall, Started};
use common::*;
use serde_json::{json, Value};

/// The seed provider with both retrievers and a runtime adapter (host handles as the JS layer
/// writes them), and `budgets`.
fn hosted(budgets: Value) -> Engine {
    let mut config = seed_config(&seed_dir());
    config["capabilityRetriever"] = json!({ "$cgHost": 1, "id": "caps", "methods": ["retrieve"] });
    config["knowledgeRetriever"] = json!({ "$cgHost": 2, "id": "docs", "methods": ["retrieve"] });
    config["runtimeAdapters"] =
        json!([{ "$cgHost": 3, "id": "rt", "providerId": SEED, "methods": ["query"] }]);
    config["budgets"] = budgets;
    open_ok(&config)
}

fn start(engine: &Engine, verb: &str, args: Value) -> Result<Box<dyn HostCall>, GraphError> {
    match engine.start(verb, &args.to_string(), None)? {
        Started::Ask(call) => Ok(call),
        Started::Done(json) => panic!("{verb} answered without its component: {json}"),
    }
}

fn knowledge(text: &str) -> Value {
    json!({ "text": text, "selected": ["seed.http::route"] })
}

#[test]
fn texts_over_their_budget_never_reach_a_component() {
    let engine = hosted(json!({}));
    let at_limit = "é".repeat(2048); // 4,096 bytes of UTF-8
    let over = format!("{at_limit}x");
    assert!(start(&engine, "retrieveCapabilities", json!({ "text": at_limit })).is_ok());
    assert!(start(&engine, "queryKnowledge", knowledge(&at_limit)).is_ok());
    for (verb, args, budget) in [
        (
            "retrieveCapabilities",
            json!({ "text": over }),
            "retrieveCapabilities.maxTextBytes",
        ),
        (
            "queryKnowledge",
            knowledge(&over),
            "queryKnowledge.maxTextBytes",
        ),
    ] {
        let e = assert_err(
            start(&engine, verb, args),
            "CG_INPUT_TOO_LARGE",
            "query",
            Some("narrow_scope"),
        );
        assert_eq!(
            (
                &details(&e)["field"],
                &details(&e)["limit"],
                &details(&e)["budget"]
            ),
            (&json!("text"), &json!(4096), &json!(budget))
        );
    }
    let context = "x".repeat(256);
    let runtime = |project: &str, environment: &str| {
        start(
            &engine,
            "queryRuntime",
            json!({ "project": project, "environment": environment }),
        )
    };
    assert!(runtime(&context, &context).is_ok());
    for (project, environment, field) in [
        (format!("{context}x"), "e".to_owned(), "project"),
        ("p".to_owned(), format!("{context}x"), "environment"),
    ] {
        let e = assert_err(
            runtime(&project, &environment),
            "CG_INPUT_TOO_LARGE",
            "query",
            Some("narrow_scope"),
        );
        assert_eq!(details(&e)["field"], field);
        assert_eq!(details(&e)["limit"], 256);
    }
}

#[test]
fn text_budgets_can_be_overridden() {
    let engine = hosted(json!({
        "retrieveCapabilities": { "maxTextBytes": 3 },
        "queryKnowledge": { "maxTextBytes": 5 },
    }));
    assert!(start(&engine, "retrieveCapabilities", json!({ "text": "abc" })).is_ok());
    assert_err(
        start(&engine, "retrieveCapabilities", json!({ "text": "abcd" })),
        "CG_INPUT_TOO_LARGE",
        "query",
        Some("narrow_scope"),
    );
    assert!(start(&engine, "queryKnowledge", knowledge("abcde")).is_ok());
    assert_err(
        start(&engine, "queryKnowledge", knowledge("abcdef")),
        "CG_INPUT_TOO_LARGE",
        "query",
        Some("narrow_scope"),
    );
}

#[test]
fn every_retriever_call_carries_its_deadline() {
    let defaults = hosted(json!({}));
    let caps = start(&defaults, "retrieveCapabilities", json!({ "text": "x" })).unwrap();
    let docs = start(&defaults, "queryKnowledge", knowledge("x")).unwrap();
    assert_eq!(
        (caps.timeout_ms(), docs.timeout_ms()),
        (Some(30_000), Some(30_000))
    );
    let tight = hosted(json!({
        "retrieveCapabilities": { "timeoutMs": 7 },
        "queryKnowledge": { "timeoutMs": 9 },
    }));
    let caps = start(&tight, "retrieveCapabilities", json!({ "text": "x" })).unwrap();
    let docs = start(&tight, "queryKnowledge", knowledge("x")).unwrap();
    assert_eq!((caps.timeout_ms(), docs.timeout_ms()), (Some(7), Some(9)));
    // Past it the call is the retriever's unavailability, to be retried.
    let e = caps.fail(None, None);
    assert_eq!(
        (e.code().as_str(), e.next_action().map(|a| a.as_str())),
        ("CG_RETRIEVER_UNAVAILABLE", Some("retry"))
    );
}

#[test]
fn every_reader_request_carries_the_reader_deadline() {
    let knowledge = json!([{ "kind": "document", "knowledgeId": "WEB", "role": "guide",
        "locator": { "type": "http", "url": "https://docs.example/guide.md" } }]);
    let mut capability = cap("x");
    capability["knowledge"] = knowledge;
    let definition =
        json!({ "providerId": "acme", "name": "A", "version": "1", "capabilities": [capability] });
    let requests = |budgets: Value| {
        let engine = open_ok(&json!({
            "providers": [{ "definition": definition }],
            "readers": [{ "$cgHost": 0, "id": "web", "methods": ["canRead", "read"] }],
            "budgets": budgets,
        }));
        let args = json!({ "selected": ["acme::x"] }).to_string();
        let answer = engine
            .read(
                engine.pin(),
                "readDocuments",
                &args,
                None,
                None,
                Vec::new(),
                Default::default(),
            )
            .unwrap();
        let pending = answer.strip_prefix('?').expect("the reader is asked first");
        serde_json::from_str::<Value>(pending).unwrap()
    };
    assert_eq!(requests(json!({}))[0]["timeoutMs"], 10_000);
    assert_eq!(
        requests(json!({ "read": { "readerTimeoutMs": 25 } }))[0]["timeoutMs"],
        25
    );
}
