//! The `reason` of a lexical selection: a fixed English template naming what matched, where.
//! Deterministic, at most [`MAX_BYTES`] bytes.

use super::index::{field_texts, Field};
use super::tokenize::Tokenizer;
use super::{QueryTerm, MIN_PREFIX, MIN_PREFIX_SHARE};
use crate::snapshot::ProviderSnapshot;
use std::collections::BTreeSet;

pub const MAX_BYTES: usize = 256;
/// Words listed at most, and the longest word shown whole.
const MAX_WORDS: usize = 5;
const MAX_WORD_BYTES: usize = 24;

fn related(a: &str, b: &str) -> bool {
    let (short, long) = (a.len().min(b.len()), a.len().max(b.len()));
    a == b
        || (short >= MIN_PREFIX
            && short as f64 >= MIN_PREFIX_SHARE * long as f64
            && (a.starts_with(b) || b.starts_with(a)))
}

fn shorten(word: &str) -> &str {
    if word.len() <= MAX_WORD_BYTES {
        return word;
    }
    let mut end = MAX_WORD_BYTES;
    while !word.is_char_boundary(end) {
        end -= 1;
    }
    &word[..end]
}

/// How capability `node` of `s` (the scope's provider at `provider`) matched the request.
pub fn reason(
    s: &ProviderSnapshot,
    provider: usize,
    node: u32,
    by_id: bool,
    by_name: bool,
    terms: &[QueryTerm],
) -> String {
    if by_id {
        let id = s.capability(node).id();
        let text = format!("the request names its ID \"{id}\"");
        if text.len() <= MAX_BYTES {
            return text;
        }
        return "the request names its ID".to_owned();
    }
    let tokenizer = Tokenizer::new();
    let fields: Vec<(Field, Vec<String>)> = Field::ALL
        .iter()
        .map(|&f| {
            let mut out = Vec::new();
            for text in field_texts(s, node, f) {
                tokenizer.terms(text, &mut out);
            }
            (f, out)
        })
        .collect();
    let units: Vec<&QueryTerm> = terms.iter().filter(|t| t.unit).collect();
    // Heaviest words first; ties by the word, so the text never depends on hash order.
    let mut matched: Vec<(&QueryTerm, Vec<Field>)> = units
        .iter()
        .filter_map(|t| {
            let seen: Vec<Field> = fields
                .iter()
                .filter(|(_, ts)| ts.iter().any(|x| related(x, &t.text)))
                .map(|(f, _)| *f)
                .collect();
            (!seen.is_empty()).then_some((*t, seen))
        })
        .collect();
    matched.sort_by(|a, b| {
        b.0.weights[provider]
            .total_cmp(&a.0.weights[provider])
            .then_with(|| a.0.word.cmp(&b.0.word))
    });
    let lead = if by_name {
        "the request uses its name; "
    } else {
        ""
    };
    let mut shown = matched.len().min(MAX_WORDS);
    loop {
        let words: BTreeSet<&str> = matched[..shown]
            .iter()
            .map(|(t, _)| shorten(&t.word))
            .collect();
        let field_set: BTreeSet<usize> = matched
            .iter()
            .flat_map(|(_, fs)| fs.iter().map(|&f| f as usize))
            .collect();
        let listed: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
        let labels: Vec<&str> = field_set.iter().map(|&i| Field::ALL[i].label()).collect();
        let text = if matched.is_empty() {
            format!("{lead}matched 0 of {} request words", units.len())
        } else {
            format!(
                "{lead}matched {} of {} request words ({}) in {}",
                matched.len(),
                units.len(),
                listed.join(", "),
                labels.join(", ")
            )
        };
        if text.len() <= MAX_BYTES || shown <= 1 {
            return text;
        }
        shown -= 1;
    }
}
