use super::build::{embedded, Model, Semantic};
use super::testing::Hashed;
use super::*;
use crate::error::Code;
use crate::matching::derived::Derived;
use crate::matching::lexical::LexicalIndex;
use crate::matching::mode::{Mode, Wanted};
use crate::snapshot::ProviderSnapshot;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn snapshot(extra: &str) -> Arc<ProviderSnapshot> {
    let caps: Vec<_> = [
        ("billing.refunds", "Refunds", "Returns a payment to a customer."),
        ("billing.invoices", "Invoices", "Issues invoices with line items."),
        ("client.config", "Client configuration", "Endpoint region and retries."),
    ]
    .iter()
    .map(|(id, name, d)| {
        json!({ "capabilityId": id, "name": name, "description": format!("{d}{extra}"), "whenToUse": "When needed." })
    })
    .collect();
    Arc::new(ProviderSnapshot::of_inline(&json!({
        "providerId": "acme", "name": "Acme", "version": "1", "capabilities": caps,
    })))
}

fn accept(limit: usize, min_score: f64) -> Wanted {
    Wanted {
        limit,
        min_score,
        mode: Mode::Accept,
    }
}

fn semantic(model: Model) -> Arc<Semantic> {
    Arc::new(Semantic::new(
        model,
        DEFAULT_MIN_SCORE,
        &crate::config::budgets::Match::default(),
        Arc::default(),
    ))
}

/// What the executor derived from `s`.
fn derived(sem: &Semantic, s: &Arc<ProviderSnapshot>) -> Arc<Derived> {
    sem.derived().of(s)
}

fn later(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

#[test]
fn rows_are_normalised_and_quantised() {
    let (scale, q) = quantise(&[3.0, 4.0, 0.0]).unwrap();
    assert!((scale - 0.8 / 127.0).abs() < 1e-6);
    assert_eq!(q, vec![95, 127, 0]);
    assert!((cosine(&q, scale, &q, scale) - 1.0).abs() < 0.01);
    assert!(quantise(&[0.0, 0.0]).is_none());
    assert!(quantise(&[f32::NAN, 1.0]).is_none());
    assert!(quantise(&[f32::INFINITY, 1.0]).is_none());
}

#[test]
fn the_engine_builds_with_the_first_party_encoder_on_its_pool() {
    let s = snapshot("");
    let sem = semantic(Model::Builtin(Arc::new(Hashed(64))));
    sem.plan(std::slice::from_ref(&s), std::slice::from_ref(&s), true);
    sem.build_on_pool();
    sem.build_on_pool();
    sem.wait(&[&derived(&sem, &s)], later(60_000)).unwrap();
    assert_eq!(sem.embedded(), 3, "each text embedded once");
    let d = derived(&sem, &s);
    let v = d.vectors().unwrap();
    assert_eq!((v.dims, v.scales.len(), v.data.len()), (64, 3, 192));
    let query = Hashed(64)
        .embed(&["refunds payment customer"], 1, &|| false)
        .unwrap();
    let ranked = rank(
        &[&s],
        &[&LexicalIndex::build(&s)],
        &[v],
        "refunds payment customer",
        &query,
        accept(5, 0.32),
        Signals::Fused,
    )
    .unwrap()
    .selected;
    assert_eq!(s.capability(ranked[0].node).id(), "billing.refunds");
    assert!(ranked[0]
        .reason
        .starts_with("close in meaning to \"Returns a payment"));
    assert!(ranked.iter().all(|r| r.reason.len() <= 256));
    // A vector of other dimensions is no answer.
    assert!(rank(
        &[&s],
        &[&LexicalIndex::build(&s)],
        &[v],
        "x",
        &[1.0; 8],
        accept(5, 0.32),
        Signals::Fused
    )
    .is_none());
}

#[test]
fn a_later_snapshot_embeds_only_texts_no_earlier_vector_has() {
    let first = snapshot("");
    let sem = semantic(Model::Host {
        id: "host".into(),
        dims: 8,
    });
    sem.plan(
        std::slice::from_ref(&first),
        std::slice::from_ref(&first),
        true,
    );
    let batch = sem.claim().unwrap();
    assert_eq!(batch.texts.len(), 3);
    sem.put(batch.id, Ok(&[1.0; 24])).unwrap();
    assert!(derived(&sem, &first).vectors().is_some());
    // Same texts: nothing to embed.
    let same = snapshot("");
    sem.plan(
        std::slice::from_ref(&same),
        &[same.clone(), first.clone()],
        true,
    );
    assert!(derived(&sem, &same).vectors().is_some() && sem.claim().is_none());
    // Changed texts: all three, each once.
    let changed = snapshot(" Now different.");
    sem.plan(
        std::slice::from_ref(&changed),
        &[changed.clone(), first.clone()],
        true,
    );
    assert_eq!(sem.claim().unwrap().texts.len(), 3);
    // A reload superseding it before it is built: its build stops, the new snapshot's starts.
    let newer = snapshot(" Newer still.");
    sem.plan(
        std::slice::from_ref(&newer),
        &[newer.clone(), changed.clone()],
        true,
    );
    let batch = sem.claim().unwrap();
    assert!(batch.texts[0].contains("Newer still"), "{:?}", batch.texts);
    assert!(sem.claim().is_none());
}

#[test]
fn a_bad_batch_fails_the_wait_and_is_handed_out_again() {
    let s = snapshot("");
    let sem = semantic(Model::Host {
        id: "host".into(),
        dims: 4,
    });
    sem.plan(std::slice::from_ref(&s), std::slice::from_ref(&s), true);
    for bad in [
        None,
        Some(vec![1.0; 11]),
        Some(vec![f32::NAN; 12]),
        Some(vec![0.0; 12]),
    ] {
        let batch = sem.claim().unwrap();
        let e = sem
            .put(batch.id, embedded(bad.as_deref(), None))
            .unwrap_err();
        assert_eq!(e.code(), Code::ModelUnavailable);
        let e = sem.wait(&[&derived(&sem, &s)], later(60_000)).unwrap_err();
        assert_eq!(e.code(), Code::ModelUnavailable);
    }
    let batch = sem.claim().unwrap();
    assert_eq!(batch.texts.len(), 3);
    sem.put(batch.id, Ok(&[0.5; 12])).unwrap();
    sem.wait(&[&derived(&sem, &s)], later(60_000)).unwrap();
}

#[test]
fn waits_end_at_their_deadline_and_at_close() {
    let s = snapshot("");
    let loading = semantic(Model::Loading);
    let e = loading
        .wait(&[&derived(&loading, &s)], Instant::now())
        .unwrap_err();
    assert_eq!(e.code(), Code::ModelTimeout);
    assert_eq!(
        loading.encoder(Instant::now()).err().map(|e| e.code()),
        Some(Code::ModelTimeout)
    );
    let waiter = loading.clone();
    let s2 = s.clone();
    let thread = std::thread::spawn(move || waiter.wait(&[&derived(&waiter, &s2)], later(600_000)));
    loading.close();
    assert_eq!(
        thread.join().unwrap().unwrap_err().code(),
        Code::GraphClosed
    );
    assert!(loading.claim().is_none());
    let missing = semantic(Model::Unavailable(package_missing(MODEL_PACKAGE)));
    let e = missing
        .wait(&[&derived(&missing, &s)], later(60_000))
        .unwrap_err();
    assert_eq!(e.code(), Code::ModelUnavailable);
    assert_eq!(e.details().unwrap()["package"], MODEL_PACKAGE);
}

#[test]
fn vectors_files_round_trip_and_refuse_what_they_cannot_be() {
    let s = snapshot("");
    let sem = semantic(Model::Host {
        id: "host-1".into(),
        dims: 4,
    });
    sem.plan(std::slice::from_ref(&s), std::slice::from_ref(&s), true);
    let batch = sem.claim().unwrap();
    let rows: Vec<f32> = (0..12).map(|i| (i % 5) as f32 - 2.0).collect();
    sem.put(batch.id, Ok(&rows)).unwrap();
    let d = derived(&sem, &s);
    let v = d.vectors().unwrap();
    let bytes = file::encode(&s, v);
    let back = file::decode(&bytes, "host-1", 4).unwrap();
    assert_eq!(
        (&back.data, &back.scales, &back.hashes),
        (&v.data, &v.scales, &v.hashes)
    );
    assert_eq!(
        file::decode(&bytes, "host-2", 4).unwrap_err(),
        file::Ignored::Foreign
    );
    assert_eq!(
        file::decode(&bytes, "host-1", 8).unwrap_err(),
        file::Ignored::Foreign
    );
    for cut in [0, 7] {
        assert_eq!(
            file::decode(&bytes[..cut], "host-1", 4).unwrap_err(),
            file::Ignored::Corrupt
        );
    }
    for cut in [12, 20, bytes.len() - 1] {
        assert_eq!(
            file::decode(&bytes[..cut], "host-1", 4).unwrap_err(),
            file::Ignored::Truncated
        );
    }
    let mut huge = bytes.clone();
    let at = 8 + 4 + 4 + 6 + 4;
    huge[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(
        file::decode(&huge, "host-1", 4).unwrap_err(),
        file::Ignored::Corrupt
    );
    // The file's entries as a view's page gives them, read back by the page's rules.
    let json = file::entries_json(&bytes).unwrap();
    assert_eq!(
        (json["modelId"].as_str(), json["dimensions"].as_u64()),
        (Some("host-1"), Some(4))
    );
    let items: Vec<Box<serde_json::value::RawValue>> = json["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| serde_json::value::to_raw_value(e).unwrap())
        .collect();
    let items: Vec<&serde_json::value::RawValue> = items.iter().map(|b| &**b).collect();
    let mut paged = file::empty("host-1", 4);
    file::push_page(&mut paged, &items, &mut None).unwrap();
    assert_eq!(
        (&paged.data, &paged.scales, &paged.hashes),
        (&v.data, &v.scales, &v.hashes)
    );
    // Page by page, each after the last ID of the one before; never an ID again.
    let mut last = None;
    let mut twice = file::empty("host-1", 4);
    file::push_page(&mut twice, &items[..1], &mut last).unwrap();
    assert_eq!(
        file::push_page(&mut twice, &items[..1], &mut last),
        Err(file::Ignored::Corrupt)
    );
    let mut wide = file::empty("host-1", 8);
    assert_eq!(
        file::push_page(&mut wide, &items, &mut None),
        Err(file::Ignored::Foreign)
    );
    assert!(file::entries_json(&bytes[..bytes.len() - 1]).is_err());
    assert!(crate::config::model::is_model_id("all-MiniLM-L6-v2.int8"));
    assert!(crate::config::model::is_model_id(
        "all-MiniLM-L6-v2/int8-1-1a2b3c4d"
    ));
    for bad in [
        "", "../x", ".hidden", "a/../b", "a//b", "/a", "a/", "a b", "a\\b",
    ] {
        assert!(!crate::config::model::is_model_id(bad), "{bad}");
    }
}

#[test]
fn capability_texts_hold_the_fields_and_their_bound() {
    let s = snapshot("");
    let c = s.capability(s.find("billing.refunds").unwrap());
    assert_eq!(
        capability_text(c, 2048),
        "Refunds. Returns a payment to a customer. When needed."
    );
    assert_eq!(capability_text(c, 9), "Refunds.");
    assert_eq!(cut("héllo", 2), "h");
}

/// Vectors of `snapshot("")` whose cosines with the query `[1, 0, 0]` are those given.
fn vectors_with_cosines(cosines: [f32; 3]) -> Vectors {
    let mut data = Vec::new();
    let mut scales = Vec::new();
    for c in cosines {
        let (scale, row) = quantise(&[c, (1.0 - c * c).sqrt(), 0.0]).unwrap();
        data.extend(row);
        scales.push(scale);
    }
    Vectors {
        model: "test".into(),
        dims: 3,
        data,
        scales,
        hashes: vec![[0; 16]; 3],
    }
}

#[test]
fn the_best_capability_decides_the_answer_and_the_next_need_half_the_threshold() {
    let s = snapshot("");
    let ids = |v: &Vectors, min: f64| -> Vec<String> {
        rank(
            &[&s],
            &[&LexicalIndex::build(&s)],
            &[v],
            "zzz",
            &[1.0, 0.0, 0.0],
            accept(5, min),
            Signals::Fused,
        )
        .unwrap()
        .selected
        .iter()
        .map(|r| s.capability(r.node).id().to_owned())
        .collect()
    };
    // Capabilities in ID order: billing.invoices, billing.refunds, client.config.
    let v = vectors_with_cosines([0.2, 0.6, 0.1]);
    // The best is over the threshold: the one at 0.2 follows (>= 0.15), the one at 0.1 does not.
    assert_eq!(ids(&v, 0.3), ["billing.refunds", "billing.invoices"]);
    // minScore stays the caller's: with 0.5 the follower needs 0.25.
    assert_eq!(ids(&v, 0.5), ["billing.refunds"]);
    // No capability reaches the threshold: no answer, however close the others are to it.
    let v = vectors_with_cosines([0.28, 0.29, 0.27]);
    assert!(ids(&v, 0.3).is_empty());
}

#[test]
fn dense_signals_rank_on_the_cosine_alone_without_the_lexical_evidence() {
    let s = snapshot("");
    // Capabilities in ID order: billing.invoices, billing.refunds, client.config.
    let v = vectors_with_cosines([0.2, 0.6, 0.1]);
    let first = |intent: &str, signals: Signals| -> (String, f64) {
        let ranked = rank(
            &[&s],
            &[&LexicalIndex::build(&s)],
            &[&v],
            intent,
            &[1.0, 0.0, 0.0],
            accept(5, 0.3),
            signals,
        )
        .unwrap()
        .selected;
        (
            s.capability(ranked[0].node).id().to_owned(),
            ranked[0].confidence,
        )
    };
    // A named ID is decisive for the executor, and only a word for the cosine.
    assert_eq!(
        first("use billing.invoices", Signals::Fused),
        ("billing.invoices".to_owned(), 1.0)
    );
    let (id, confidence) = first("use billing.invoices", Signals::Dense);
    assert_eq!(id, "billing.refunds");
    assert!((confidence - 0.6).abs() < 0.01, "{confidence}");
    // Words a capability covers add to its cosine in the executor, not in the cosine alone.
    let (_, fused) = first("refunds of a payment to a customer", Signals::Fused);
    let (_, dense) = first("refunds of a payment to a customer", Signals::Dense);
    assert!(fused > dense + 0.3, "{fused} {dense}");
}

#[test]
fn rank_mode_keeps_what_the_threshold_refuses_and_a_no_match_names_the_nearest() {
    let s = snapshot("");
    let run = |v: &Vectors, mode: Mode| {
        let wanted = Wanted {
            limit: 2,
            min_score: 0.3,
            mode,
        };
        let ranking = rank(
            &[&s],
            &[&LexicalIndex::build(&s)],
            &[v],
            "zzz",
            &[1.0, 0.0, 0.0],
            wanted,
            Signals::Fused,
        )
        .unwrap();
        let ids = |found: &[Scored]| -> Vec<String> {
            found
                .iter()
                .map(|r| s.capability(r.node).id().to_owned())
                .collect()
        };
        (ids(&ranking.selected), ids(&ranking.nearest))
    };
    // Capabilities in ID order: billing.invoices, billing.refunds, client.config.
    let v = vectors_with_cosines([0.28, 0.29, 0.05]);
    assert_eq!(
        run(&v, Mode::Accept),
        (
            vec![],
            vec![
                "billing.refunds".to_owned(),
                "billing.invoices".to_owned(),
                "client.config".to_owned()
            ]
        ),
        "no match; every capability with a positive score is near, best first"
    );
    assert_eq!(
        run(&v, Mode::Rank),
        (
            vec!["billing.refunds".to_owned(), "billing.invoices".to_owned()],
            vec![]
        )
    );
    // Nothing with a positive score: no evidence, in either mode.
    let v = vectors_with_cosines([-0.2, -0.1, 0.0]);
    assert_eq!(run(&v, Mode::Accept), (vec![], vec![]));
    assert_eq!(run(&v, Mode::Rank), (vec![], vec![]));
    // An answer names no nearest.
    let v = vectors_with_cosines([0.2, 0.6, 0.1]);
    assert_eq!(run(&v, Mode::Accept).1, Vec::<String>::new());
}
