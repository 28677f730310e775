//! The encoder against a frozen reference (`fixture.json`): token IDs from the reference
//! tokenizer of all-MiniLM-L6-v2 — always checked, over the part of the vocabulary the texts
//! use — and, when the weights package is built, the first dimensions of each vector and the
//! cosines of some pairs from a numpy forward pass over the same int8 weights.
//! `CG_REQUIRE_MODEL=1` (CI) makes a missing weights package a failure instead of a skip.

use super::*;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

fn fixture() -> &'static Value {
    static F: OnceLock<Value> = OnceLock::new();
    F.get_or_init(|| serde_json::from_str(include_str!("fixture.json")).unwrap())
}

fn cases() -> Vec<(String, Vec<u32>, Vec<f32>)> {
    fixture()["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let ids = c["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u32);
            let head = c["head"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32);
            (
                c["text"].as_str().unwrap().to_owned(),
                ids.collect(),
                head.collect(),
            )
        })
        .collect()
}

fn model_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("packages/minilm")
}

/// The built encoder, or None (skip) when the weights package is not built and not required.
fn encoder() -> Option<&'static Encoder> {
    static E: OnceLock<Option<Encoder>> = OnceLock::new();
    E.get_or_init(|| match Encoder::load(&model_dir()) {
        Ok(e) => Some(e),
        Err(LoadError::Missing) if std::env::var("CG_REQUIRE_MODEL").as_deref() != Ok("1") => {
            eprintln!(
                "encoder tests skipped: run `npm run build:model` (CG_REQUIRE_MODEL=1 requires it)"
            );
            None
        }
        Err(e) => panic!("the weights package does not load: {e}"),
    })
    .as_ref()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn an_encoder_is_shared_across_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Encoder>();
}

#[test]
fn token_ids_are_the_reference_tokenizers() {
    let vocab: HashMap<String, u32> = fixture()["vocab"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e[0].as_str().unwrap().to_owned(),
                e[1].as_u64().unwrap() as u32,
            )
        })
        .collect();
    let t = Tokenizer::from_map(vocab).unwrap();
    let cases = cases();
    assert!(cases.len() >= 20);
    for (text, ids, _) in &cases {
        assert_eq!(&t.encode(text), ids, "{text:?}");
    }
    // The fixture covers truncation, an over-long word and the empty text.
    assert!(cases.iter().any(|c| c.1.len() == MAX_TOKENS));
    assert!(cases.iter().any(|c| c.1 == [101, 100, 7929, 102]));
    assert!(cases.iter().any(|c| c.1 == [101, 102]));
}

#[test]
fn vectors_match_the_reference() {
    let Some(enc) = encoder() else { return };
    assert_eq!(enc.dimensions(), 384);
    assert!(
        enc.id().starts_with("all-MiniLM-L6-v2/int8-1-"),
        "{}",
        enc.id()
    );
    let cases = cases();
    for (text, ids, _) in &cases {
        assert_eq!(&enc.tokenize(text), ids, "{text:?}");
    }
    let texts: Vec<&str> = cases.iter().map(|c| c.0.as_str()).collect();
    let vecs = enc.embed(&texts, 2, &|| false).unwrap();
    assert_eq!(vecs.len(), texts.len() * 384);
    for (i, (text, _, head)) in cases.iter().enumerate() {
        let v = &vecs[i * 384..(i + 1) * 384];
        assert!(
            (cosine(v, v) - 1.0).abs() < 1e-5,
            "{text:?} is not unit length"
        );
        for (d, (got, want)) in v.iter().zip(head).enumerate() {
            assert!(
                (got - want).abs() < 1e-3,
                "{text:?} dim {d}: {got} vs {want}"
            );
        }
    }
    for p in fixture()["pairs"].as_array().unwrap() {
        let (a, b) = (
            p[0].as_u64().unwrap() as usize,
            p[1].as_u64().unwrap() as usize,
        );
        let got = cosine(&vecs[a * 384..(a + 1) * 384], &vecs[b * 384..(b + 1) * 384]);
        let want = p[2].as_f64().unwrap() as f32;
        assert!((got - want).abs() < 1e-3, "pair {a}, {b}: {got} vs {want}");
    }
}

#[test]
fn a_vector_does_not_depend_on_its_batch_or_threads() {
    let Some(enc) = encoder() else { return };
    let cases = cases();
    let texts: Vec<&str> = cases.iter().map(|c| c.0.as_str()).collect();
    let batched = enc.embed(&texts, 1, &|| false).unwrap();
    let threaded = enc.embed(&texts, 3, &|| false).unwrap();
    for (i, text) in texts.iter().enumerate() {
        let alone = enc.embed(&[text], 1, &|| false).unwrap();
        let row = |v: &[f32]| v[i * 384..(i + 1) * 384].to_vec();
        assert!(cosine(&alone, &row(&batched)) > 0.99999, "{text:?}");
        assert!(cosine(&alone, &row(&threaded)) > 0.99999, "{text:?}");
    }
    assert_eq!(enc.embed(&[], 2, &|| false).unwrap(), Vec::<f32>::new());
}

#[test]
fn cancelled_embedding_answers_none() {
    let Some(enc) = encoder() else { return };
    let texts = ["configure the client region"; 40];
    assert_eq!(enc.embed(&texts, 1, &|| true), None);
    assert_eq!(enc.embed(&texts, 2, &|| true), None);
    // Cancelled after a few polls: between layers, not only before the first.
    let polls = std::sync::atomic::AtomicUsize::new(0);
    let later = || polls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 3;
    assert_eq!(enc.embed(&texts, 2, &later), None);
    assert!(polls.load(std::sync::atomic::Ordering::Relaxed) >= 4);
    assert!(enc.embed(&texts[..2], 2, &|| false).is_some());
}

#[test]
fn damaged_packages_are_refused_without_a_path() {
    let Some(_) = encoder() else { return };
    let dir = std::env::temp_dir().join(format!("cg-encoder-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = std::fs::read(model_dir().join("model.bin")).unwrap();
    let vocab = std::fs::read(model_dir().join("vocab.txt")).unwrap();
    let load = |bin: &[u8], vocab: &[u8]| {
        std::fs::write(dir.join("model.bin"), bin).unwrap();
        std::fs::write(dir.join("vocab.txt"), vocab).unwrap();
        Encoder::load(&dir).err()
    };
    let reason = |e: Option<LoadError>| match e {
        Some(LoadError::Corrupt { reason }) => reason,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        reason(load(&bin[..bin.len() / 2], &vocab)),
        "the weights file's checksum does not match"
    );
    let mut flipped = bin.clone();
    flipped[bin.len() / 2] ^= 0x40;
    assert_eq!(
        reason(load(&flipped, &vocab)),
        "the weights file's checksum does not match"
    );
    let mut other_vocab = vocab.clone();
    other_vocab.extend_from_slice(b"extra\n");
    let e = load(&bin, &other_vocab);
    assert!(!e
        .as_ref()
        .unwrap()
        .to_string()
        .contains("cg-encoder-damaged"));
    assert_eq!(reason(e), "the vocabulary does not belong to these weights");
    assert!(load(&bin, &vocab).is_none());
    std::fs::remove_file(dir.join("vocab.txt")).unwrap();
    assert_eq!(Encoder::load(&dir).err(), Some(LoadError::Missing));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_header_names_the_id_and_dimensions_the_loaded_encoder_has() {
    let Some(enc) = encoder() else { return };
    assert_eq!(
        Encoder::peek_id(&model_dir()),
        Some((enc.id().to_owned(), enc.dimensions()))
    );
    assert_eq!(Encoder::peek_id(&model_dir().join("missing")), None);
}

/// Throwaway check against a numpy forward pass (`CG_ENCODER_REFERENCE=ref.json`: per text the
/// reference IDs, its f32 vector from the original weights and its vector from model.bin's).
#[test]
fn full_vectors_against_a_reference_file() {
    let Ok(path) = std::env::var("CG_ENCODER_REFERENCE") else {
        return;
    };
    let Some(enc) = encoder() else { return };
    let refs: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let floats = |v: &Value| -> Vec<f32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect()
    };
    let (mut min_same, mut min_f32) = (1f32, 1f32);
    for r in refs.as_array().unwrap() {
        let text = r["text"].as_str().unwrap();
        let ids: Vec<u32> = r["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(enc.tokenize(text), ids, "{text:?}");
        let v = enc.embed(&[text], 1, &|| false).unwrap();
        let same = cosine(&v, &floats(&r["int8"]));
        let f32s = cosine(&v, &floats(&r["f32"]));
        eprintln!(
            "{same:.6} {f32s:.6} {:?}",
            text.chars().take(40).collect::<String>()
        );
        min_same = min_same.min(same);
        min_f32 = min_f32.min(f32s);
    }
    eprintln!("min cosine: same weights {min_same:.6}, original f32 weights {min_f32:.6}");
    assert!(min_same >= 0.9999);
    assert!(min_f32 >= 0.998);
}
