//! The evaluation set of `match` (examples/eval-*/intents.json) is what its kinds claim: every
//! expected capability exists, and a `paraphrase` shares no content word with the capability it
//! expects, as the engine's own tokenizer and stemmer see words.

use capability_graph::matching::lexical::Tokenizer;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

const PROVIDERS: [&str; 3] = ["eval-provider", "eval-objstore", "eval-payments"];
const KINDS: [&str; 5] = ["direct", "paraphrase", "id", "chinese", "no-match"];

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn capability_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            capability_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

/// Every text a capability declares about itself: ID, name, description, whenToUse,
/// distinction, examples and the titles of its knowledge references.
fn own_texts(record: &Value) -> Vec<String> {
    let mut texts = Vec::new();
    for key in [
        "capabilityId",
        "name",
        "description",
        "whenToUse",
        "distinction",
    ] {
        if let Some(s) = record[key].as_str() {
            texts.push(s.to_owned());
        }
    }
    for e in record["examples"].as_array().into_iter().flatten() {
        texts.push(e.as_str().unwrap().to_owned());
    }
    for k in record["knowledge"].as_array().into_iter().flatten() {
        if let Some(t) = k["title"].as_str() {
            texts.push(t.to_owned());
        }
    }
    texts
}

fn terms(tokenizer: &Tokenizer, text: &str) -> BTreeSet<String> {
    let mut out = Vec::new();
    tokenizer.terms(text, &mut out);
    out.into_iter().collect()
}

#[test]
fn paraphrases_share_no_content_word_with_their_capability() {
    let tokenizer = Tokenizer::new();
    let mut total = 0;
    let mut failures = Vec::new();
    for provider in PROVIDERS {
        let root = examples().join(provider);
        let mut files = Vec::new();
        capability_files(&root.join("capabilities"), &mut files);
        let words: HashMap<String, BTreeSet<String>> = files
            .iter()
            .map(|f| {
                let record = read_json(f);
                let id = record["capabilityId"].as_str().unwrap().to_owned();
                let words = own_texts(&record)
                    .iter()
                    .flat_map(|t| terms(&tokenizer, t))
                    .collect();
                (id, words)
            })
            .collect();
        assert!(words.len() >= 60, "{provider}: a real provider");
        let intents = read_json(&root.join("intents.json"));
        for item in intents.as_array().unwrap() {
            total += 1;
            let intent = item["intent"].as_str().unwrap();
            let kind = item["kind"].as_str().unwrap();
            assert!(KINDS.contains(&kind), "{provider}: kind {kind}");
            let expected = item["expected"].as_str();
            assert_eq!(expected.is_none(), kind == "no-match", "{intent}");
            let Some(expected) = expected else { continue };
            let own = words
                .get(expected)
                .unwrap_or_else(|| panic!("{provider}: {expected} does not exist"));
            if kind == "paraphrase" {
                let shared: Vec<_> = terms(&tokenizer, intent)
                    .intersection(own)
                    .cloned()
                    .collect();
                if !shared.is_empty() {
                    failures.push(format!(
                        "{provider}: {intent:?} shares {shared:?} with {expected}"
                    ));
                }
            }
        }
    }
    assert!(total >= 240, "{total} intents");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
