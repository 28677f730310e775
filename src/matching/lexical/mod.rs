//! The built-in lexical executor: ranked retrieval over a capability's fields, offline and
//! deterministic. Text becomes stemmed words and CJK unigrams and bigrams ([`tokenize`]);
//! fields are weighted (BM25F, [`index`]). A capability named by its dotted ID, or by its
//! multi-word name, is strong evidence. Otherwise a candidate is accepted when it covers enough
//! of the request's informative words; see [`confidence`].

mod index;
mod reason;
mod tokenize;

pub use index::LexicalIndex;
pub use tokenize::Tokenizer;

use crate::snapshot::ProviderSnapshot;
use std::collections::{BTreeMap, HashMap};
use tokenize::{is_cjk_bigram, is_cjk_term};

/// Default `minScore`: the confidence a capability needs to be selected.
pub const DEFAULT_MIN_SCORE: f64 = 0.3;

/// A selection after the first must score at least this share of the best one.
const RELATIVE_CUTOFF: f64 = 0.35;

/// Credit for a word that matches only by a shared stem prefix (`async` ~ `asynchron`).
const PREFIX_CREDIT: f64 = 0.6;
/// Shortest prefix that counts as a shared stem, and the least share of the longer stem it must
/// be (`rest` is not `restaur`).
const MIN_PREFIX: usize = 4;
const MIN_PREFIX_SHARE: f64 = 0.5;

/// Inverse document frequency is computed as if the catalog held at least this many
/// capabilities. In a catalog of three, a word every capability shares is still a word the
/// request chose; without a floor it would weigh nothing and nothing could be accepted.
const MIN_CATALOG: f64 = 1000.0;

/// A request is never asked to be covered by more than this many of its words (by weight):
/// a long, descriptive request that clearly names what one capability does is accepted.
const LONG_REQUEST_TERMS: f64 = 4.0;

/// A ranked candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranked {
    pub provider: usize,
    pub node: u32,
    pub score: f64,
    /// In 0..=1; compared with `minScore`.
    pub confidence: f64,
    pub reason: String,
    by_id: bool,
    by_name: bool,
}

/// One distinct term of the request.
pub(super) struct QueryTerm {
    pub text: String,
    /// The request's word it came from, for reasons.
    pub word: String,
    pub weight: f64,
    /// Whether it counts towards coverage (a CJK bigram does not: its characters do).
    pub unit: bool,
}

/// What a candidate earned.
#[derive(Default, Clone)]
struct Evidence {
    score: f64,
    covered: f64,
    /// How many of the request's words it contains.
    words: u32,
    /// Named by its dotted ID in the request.
    by_id: bool,
    /// Named by its multi-word name in the request.
    by_name: bool,
}

/// Ranks the capabilities of `snapshots` (the providers of the scope, in ID order) for
/// `intent`; returns at most `limit` candidates whose confidence is at least `min_score`, best
/// first, ties by provider and capability ID.
pub fn rank(
    snapshots: &[&ProviderSnapshot],
    intent: &str,
    limit: usize,
    min_score: f64,
) -> Vec<Ranked> {
    let indexes: Vec<&LexicalIndex> = snapshots.iter().map(|s| s.lexical()).collect();
    let tokenizer = Tokenizer::new();
    let mut sequence: Vec<String> = Vec::new();
    let mut words: BTreeMap<String, String> = BTreeMap::new();
    tokenizer.scan(intent, |term, word| {
        words.entry(term.clone()).or_insert_with(|| word.to_owned());
        sequence.push(term);
    });
    let total_docs: usize = indexes.iter().map(|i| i.documents as usize).sum();
    let n = (total_docs as f64).max(MIN_CATALOG);
    let idf = |df: usize| (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln();
    let terms: Vec<QueryTerm> = words
        .into_iter()
        .map(|(text, word)| QueryTerm {
            weight: idf(indexes.iter().map(|i| i.df(&text)).sum()),
            unit: !is_cjk_bigram(&text),
            text,
            word,
        })
        .collect();
    let intent_weight: f64 = terms.iter().filter(|t| t.unit).map(|t| t.weight).sum();
    let mut evidence = term_evidence(&indexes, &terms);
    for key in named_by_id(snapshots, intent) {
        evidence.entry(key).or_default().by_id = true;
    }
    for key in named_by_name(&indexes, &sequence) {
        evidence.entry(key).or_default().by_name = true;
    }
    if evidence.is_empty() || intent_weight <= 0.0 {
        return Vec::new();
    }
    let mut ranked: Vec<Ranked> = evidence
        .into_iter()
        .map(|((provider, node), e)| {
            let confidence = confidence(&e, intent_weight, &terms);
            // Naming a capability outranks any amount of shared vocabulary.
            let bonus = if e.by_id {
                2.0 * intent_weight
            } else if e.by_name {
                0.5 * intent_weight
            } else {
                0.0
            };
            Ranked {
                provider,
                node,
                score: e.score + bonus,
                confidence,
                reason: String::new(),
                by_id: e.by_id,
                by_name: e.by_name,
            }
        })
        .filter(|r| r.confidence >= min_score && r.confidence > 0.0)
        .collect();
    ranked.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then_with(|| {
            let id = |r: &Ranked| {
                let s = snapshots[r.provider];
                (s.provider_id(), s.capability(r.node).id.as_str())
            };
            id(a).cmp(&id(b))
        })
    });
    let top = ranked.first().map_or(0.0, |r| r.score);
    ranked.retain(|r| r.score >= top * RELATIVE_CUTOFF);
    ranked.truncate(limit);
    for r in &mut ranked {
        r.reason = reason::reason(snapshots[r.provider], r.node, r.by_id, r.by_name, &terms);
    }
    ranked
}

/// How sure the executor is that a candidate is what the request asks for, in 0..=1.
///
/// Named by its dotted ID: 1. Otherwise the share of the request's informative words (each
/// weighted by how rare it is in the catalog) that the candidate contains, where a request is
/// never asked to be covered by more than [`LONG_REQUEST_TERMS`] words' worth of weight; a
/// multi-word name in the request counts as at least half. One shared word is weak evidence
/// (a request about chess rules is not about lifecycle rules): it counts half.
fn confidence(e: &Evidence, intent_weight: f64, terms: &[QueryTerm]) -> f64 {
    if e.by_id {
        return 1.0;
    }
    let units = terms.iter().filter(|t| t.unit).count();
    let mean = intent_weight / units.max(1) as f64;
    let needed = intent_weight.min(LONG_REQUEST_TERMS * mean);
    let mut covered = (e.covered / needed).min(1.0);
    if e.words < 2 {
        covered *= 0.5;
    }
    if e.by_name {
        covered.max(0.5)
    } else {
        covered
    }
}

/// Score and covered weight of every candidate sharing a term with the request. Each unit term
/// adds the best credit any of its forms earns in a candidate: itself, a shared-stem relative,
/// or (for a CJK character) a matching bigram of the request that contains it; bigrams add
/// score only.
fn term_evidence(
    indexes: &[&LexicalIndex],
    terms: &[QueryTerm],
) -> HashMap<(usize, u32), Evidence> {
    let mut totals: HashMap<(usize, u32), Evidence> = HashMap::new();
    let mut local: HashMap<(usize, u32), (f64, f64)> = HashMap::new();
    for term in terms {
        local.clear();
        for (p, index) in indexes.iter().enumerate() {
            let mut offer = |doc: u32, score: f64, covered: f64| {
                let e = local.entry((p, doc)).or_insert((0.0, 0.0));
                e.0 = e.0.max(score);
                e.1 = e.1.max(covered);
            };
            let cover = if term.unit { term.weight } else { 0.0 };
            for &(doc, sat) in index.postings(&term.text) {
                offer(doc, term.weight * f64::from(sat), cover);
            }
            if !term.unit {
                continue;
            }
            if is_cjk_term(&term.text) {
                for bigram in terms
                    .iter()
                    .filter(|t| !t.unit && t.text.contains(term.text.as_str()))
                {
                    for &(doc, _) in index.postings(&bigram.text) {
                        offer(doc, 0.0, term.weight);
                    }
                }
            } else if term.text.len() >= MIN_PREFIX {
                let w = term.weight * PREFIX_CREDIT;
                for relative in index.prefix_relatives(&term.text, MIN_PREFIX, MIN_PREFIX_SHARE) {
                    for &(doc, sat) in index.postings(relative) {
                        offer(doc, w * f64::from(sat), w);
                    }
                }
            }
        }
        for (&key, &(score, covered)) in &local {
            let e = totals.entry(key).or_default();
            e.score += score;
            e.covered += covered;
            if covered > 0.0 {
                e.words += 1;
            }
        }
    }
    totals
}

/// Dotted capability IDs written in the request (`objects.checksum`, `eval.objstore::objects.get`,
/// or the ID behind leading words such as a provider name: `objstore.objects.get`). A single
/// word is never taken for an ID: it is an ordinary word of the request.
fn named_by_id(snapshots: &[&ProviderSnapshot], intent: &str) -> Vec<(usize, u32)> {
    let mut found = Vec::new();
    let is_id_char = |c: char| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | ':');
    for token in intent.split(|c: char| !is_id_char(c)) {
        let token = token.trim_matches(|c: char| matches!(c, '.' | '-' | '_' | ':'));
        let (provider, id) = match token.split_once("::") {
            Some((p, id)) => (Some(p), id),
            None => (None, token),
        };
        if !id.contains('.') {
            continue;
        }
        for (p, s) in snapshots.iter().enumerate() {
            if provider.is_some_and(|want| want != s.provider_id()) {
                continue;
            }
            let mut rest = id;
            while rest.contains('.') {
                if let Some(node) = s.find(rest) {
                    found.push((p, node));
                    break;
                }
                rest = match rest.split_once('.') {
                    Some((_, r)) => r,
                    None => break,
                };
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// Capabilities whose multi-word name appears, word for word, in the request.
fn named_by_name(indexes: &[&LexicalIndex], sequence: &[String]) -> Vec<(usize, u32)> {
    let mut found = Vec::new();
    for (p, index) in indexes.iter().enumerate() {
        if index.names.is_empty() {
            continue;
        }
        for start in 0..sequence.len() {
            let mut phrase = sequence[start].clone();
            for next in sequence.iter().skip(start + 1).take(5) {
                phrase.push(' ');
                phrase.push_str(next);
                if let Some(docs) = index.names.get(&phrase) {
                    found.extend(docs.iter().map(|&d| (p, d)));
                }
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}
