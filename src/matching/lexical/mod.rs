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
use std::collections::BTreeMap;
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

/// For coverage, inverse document frequency is computed as if the catalog held at least this
/// many capabilities. In a catalog of three, a word every capability shares is still a word the
/// request chose; without a floor it would weigh nothing and nothing could be accepted. Ranking
/// uses the catalog's own frequencies: there, a word every capability shares tells nothing.
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
    /// How much of the request the word is, for coverage (see [`MIN_CATALOG`]).
    pub weight: f64,
    /// Its inverse document frequency in this catalog, for ranking.
    pub rank_weight: f64,
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
    let idf = |n: f64, df: f64| (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
    let terms: Vec<QueryTerm> = words
        .into_iter()
        .map(|(text, word)| {
            let df = indexes.iter().map(|i| i.df(&text)).sum::<usize>() as f64;
            QueryTerm {
                weight: idf((total_docs as f64).max(MIN_CATALOG), df),
                rank_weight: idf(total_docs as f64, df),
                unit: !is_cjk_bigram(&text),
                text,
                word,
            }
        })
        .collect();
    let intent_weight: f64 = terms.iter().filter(|t| t.unit).map(|t| t.weight).sum();
    let mut evidence = term_evidence(&indexes, &terms);
    let by_id = named_by_id(snapshots, intent);
    let by_name = named_by_name(&indexes, &sequence);
    for e in &mut evidence {
        e.1.by_id = by_id.binary_search(&e.0).is_ok();
        e.1.by_name = by_name.binary_search(&e.0).is_ok();
    }
    // Named candidates that share no word with the request still count.
    for (key, id) in by_id
        .iter()
        .map(|k| (k, true))
        .chain(by_name.iter().map(|k| (k, false)))
    {
        if !evidence.iter().any(|(k, _)| k == key) {
            evidence.push((*key, Evidence::default()));
        }
        if let Some((_, e)) = evidence.iter_mut().find(|(k, _)| k == key) {
            e.by_id |= id;
            e.by_name |= !id;
        }
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
    // Only what is close to the best is ever returned: cut before sorting.
    let top = ranked.iter().map(|r| r.score).fold(0.0, f64::max);
    ranked.retain(|r| r.score >= top * RELATIVE_CUTOFF);
    ranked.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then_with(|| {
            let id = |r: &Ranked| {
                let s = snapshots[r.provider];
                (s.provider_id(), s.capability(r.node).id.as_str())
            };
            id(a).cmp(&id(b))
        })
    });
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

/// Per-candidate accumulator: totals over terms, and the best credit of the current term.
#[derive(Clone, Copy, Default)]
struct Slot {
    score: f64,
    covered: f64,
    words: u32,
    seen: bool,
    /// Which term `term_score` and `term_covered` belong to (its position + 1).
    stamp: u32,
    term_score: f64,
    term_covered: f64,
}

/// Score and covered weight of every candidate sharing a term with the request. Each unit term
/// adds the best credit any of its forms earns in a candidate: itself, a shared-stem relative,
/// or (for a CJK character) a matching bigram of the request that contains it; bigrams add
/// score only. Accumulators are dense arrays: a common word touches a large share of a large
/// catalog, where hashing every candidate would cost more than the scoring.
fn term_evidence(indexes: &[&LexicalIndex], terms: &[QueryTerm]) -> Vec<((usize, u32), Evidence)> {
    let mut out = Vec::new();
    let mut local: Vec<u32> = Vec::new();
    for (p, index) in indexes.iter().enumerate() {
        let mut slots = vec![Slot::default(); index.documents as usize];
        let mut touched: Vec<u32> = Vec::new();
        for (k, term) in terms.iter().enumerate() {
            let stamp = k as u32 + 1;
            let mut offer = |doc: u32, score: f64, covered: f64| {
                let s = &mut slots[doc as usize];
                if s.stamp != stamp {
                    s.stamp = stamp;
                    s.term_score = 0.0;
                    s.term_covered = 0.0;
                    local.push(doc);
                }
                s.term_score = s.term_score.max(score);
                s.term_covered = s.term_covered.max(covered);
            };
            let cover = if term.unit { term.weight } else { 0.0 };
            for (doc, sat) in index.postings(&term.text) {
                offer(doc, term.rank_weight * f64::from(sat), cover);
            }
            if term.unit && is_cjk_term(&term.text) {
                for bigram in terms
                    .iter()
                    .filter(|t| !t.unit && t.text.contains(term.text.as_str()))
                {
                    for (doc, _) in index.postings(&bigram.text) {
                        offer(doc, 0.0, term.weight);
                    }
                }
            } else if term.unit && term.text.len() >= MIN_PREFIX {
                let w = term.weight * PREFIX_CREDIT;
                let rank = term.rank_weight * PREFIX_CREDIT;
                for relative in index.prefix_relatives(&term.text, MIN_PREFIX, MIN_PREFIX_SHARE) {
                    for (doc, sat) in index.postings(relative) {
                        offer(doc, rank * f64::from(sat), w);
                    }
                }
            }
            for doc in local.drain(..) {
                let s = &mut slots[doc as usize];
                if !s.seen {
                    s.seen = true;
                    touched.push(doc);
                }
                s.score += s.term_score;
                s.covered += s.term_covered;
                if s.term_covered > 0.0 {
                    s.words += 1;
                }
            }
        }
        out.extend(touched.into_iter().map(|doc| {
            let s = &slots[doc as usize];
            let e = Evidence {
                score: s.score,
                covered: s.covered,
                words: s.words,
                ..Evidence::default()
            };
            ((p, doc), e)
        }));
    }
    out
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
        if !index.has_names() {
            continue;
        }
        for start in 0..sequence.len() {
            let mut phrase: Vec<&str> = vec![&sequence[start]];
            for next in sequence.iter().skip(start + 1).take(5) {
                phrase.push(next);
                found.extend(index.named(&phrase).map(|d| (p, d)));
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}
