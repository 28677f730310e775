//! The built-in lexical executor: ranked retrieval over a capability's fields, offline and
//! deterministic. Text is split into words (IDs are split at `.`, `-`, `_`), English words are
//! stemmed, CJK text becomes character unigrams and bigrams; fields are weighted (BM25F).
//! A candidate must cover enough of the intent's (idf-weighted) terms, or the answer is
//! `no_match` — a threshold on coverage, not on raw scores, so it means the same for any size
//! of catalog.

use crate::snapshot::ProviderSnapshot;
use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashMap;

/// Default share of the intent's weight a capability must cover to be selected.
pub const DEFAULT_MIN_SCORE: f64 = 0.3;

/// BM25 saturation and length normalisation.
const K1: f32 = 1.2;
const B: f32 = 0.5;
/// A selection after the first must score at least this share of the best one.
const RELATIVE_CUTOFF: f64 = 0.35;

/// Fields and their weights: what a capability is called and when to use it count most; a
/// distinction often names what the capability is *not*, so it counts least.
const FIELDS: usize = 6;
const WEIGHTS: [f32; FIELDS] = [3.0, 2.5, 2.0, 1.5, 1.0, 0.3];

const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can", "could",
    "do", "does", "for", "from", "get", "has", "have", "how", "i", "if", "in", "into", "is", "it",
    "its", "let", "me", "my", "need", "of", "on", "or", "our", "please", "should", "so", "some",
    "that", "the", "their", "them", "then", "there", "these", "this", "to", "too", "us", "want",
    "was", "we", "what", "when", "where", "which", "who", "will", "with", "would", "you", "your",
];

const CJK_STOP: &[char] = &[
    '的', '了', '和', '是', '在', '把', '给', '我', '要', '个', '一', '吗', '呢', '请', '帮',
];

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xAC00..=0xD7AF | 0x20000..=0x2FA1F)
}

/// Terms of a text: stemmed words and CJK unigrams and bigrams.
pub struct Tokenizer {
    stemmer: Stemmer,
}

impl Tokenizer {
    pub fn new() -> Tokenizer {
        Tokenizer {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }

    pub fn terms(&self, text: &str, out: &mut Vec<String>) {
        let lower = text.to_lowercase();
        let mut word = String::new();
        let mut cjk: Vec<char> = Vec::new();
        for c in lower.chars().chain(std::iter::once(' ')) {
            if is_cjk(c) {
                self.flush_word(&mut word, out);
                cjk.push(c);
            } else if c.is_alphanumeric() {
                flush_cjk(&mut cjk, out);
                word.push(c);
            } else {
                self.flush_word(&mut word, out);
                flush_cjk(&mut cjk, out);
            }
        }
    }

    fn flush_word(&self, word: &mut String, out: &mut Vec<String>) {
        if !word.is_empty() && !STOPWORDS.contains(&word.as_str()) {
            out.push(self.stemmer.stem(word).into_owned());
        }
        word.clear();
    }
}

impl Default for Tokenizer {
    fn default() -> Self {
        Tokenizer::new()
    }
}

fn flush_cjk(run: &mut Vec<char>, out: &mut Vec<String>) {
    for (i, &c) in run.iter().enumerate() {
        if !CJK_STOP.contains(&c) {
            out.push(c.to_string());
        }
        if let Some(&next) = run.get(i + 1) {
            out.push([c, next].iter().collect());
        }
    }
    run.clear();
}

/// Per-snapshot index, built once on first use.
#[derive(Debug)]
pub struct LexicalIndex {
    /// term → (capability, saturating weighted term frequency)
    postings: HashMap<String, Vec<(u32, f32)>>,
    /// Every indexed term, sorted, for prefix look-ups.
    vocabulary: Vec<String>,
    pub documents: u32,
}

impl LexicalIndex {
    pub fn build(s: &ProviderSnapshot) -> LexicalIndex {
        let tokenizer = Tokenizer::new();
        let mut fields: Vec<[Vec<String>; FIELDS]> = Vec::with_capacity(s.capabilities.len());
        let mut total_len = [0f32; FIELDS];
        for c in &s.capabilities {
            let mut f: [Vec<String>; FIELDS] = Default::default();
            tokenizer.terms(&c.name, &mut f[0]);
            tokenizer.terms(&c.id, &mut f[1]);
            tokenizer.terms(&c.when_to_use, &mut f[2]);
            tokenizer.terms(&c.description, &mut f[3]);
            for e in &c.examples {
                tokenizer.terms(e, &mut f[4]);
            }
            if let Some(d) = &c.distinction {
                tokenizer.terms(d, &mut f[5]);
            }
            for (i, terms) in f.iter().enumerate() {
                total_len[i] += terms.len() as f32;
            }
            fields.push(f);
        }
        let n = fields.len().max(1) as f32;
        let avg: Vec<f32> = total_len.iter().map(|t| (t / n).max(1.0)).collect();
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        for (doc, f) in fields.iter().enumerate() {
            let mut weighted: HashMap<&str, f32> = HashMap::new();
            for (i, terms) in f.iter().enumerate() {
                let norm = 1.0 - B + B * terms.len() as f32 / avg[i];
                for t in terms {
                    *weighted.entry(t.as_str()).or_default() += WEIGHTS[i] / norm;
                }
            }
            for (t, wtf) in weighted {
                postings
                    .entry(t.to_owned())
                    .or_default()
                    .push((doc as u32, wtf / (K1 + wtf)));
            }
        }
        let mut vocabulary: Vec<String> = postings.keys().cloned().collect();
        vocabulary.sort_unstable();
        LexicalIndex {
            postings,
            vocabulary,
            documents: s.capabilities.len() as u32,
        }
    }

    fn postings(&self, term: &str) -> &[(u32, f32)] {
        self.postings.get(term).map_or(&[], Vec::as_slice)
    }

    fn df(&self, term: &str) -> usize {
        self.postings(term).len()
    }
}

/// A ranked candidate: (provider position in the view, capability, score, coverage).
#[derive(Clone, Debug, PartialEq)]
pub struct Ranked {
    pub provider: usize,
    pub node: u32,
    pub score: f64,
    pub coverage: f64,
}

/// Credit for a word that matches only by a shared stem prefix (`async` ~ `asynchron`).
const PREFIX_CREDIT: f64 = 0.6;
/// Shortest prefix that counts as a shared stem.
const MIN_PREFIX: usize = 4;

fn is_cjk_term(t: &str) -> bool {
    t.chars().next().is_some_and(is_cjk)
}

/// One term of the intent: its weight, and whether it counts towards coverage. A CJK bigram
/// only adds to the score; it covers the characters it joins.
struct QueryTerm {
    text: String,
    weight: f64,
    unit: bool,
}

impl LexicalIndex {
    /// Index terms that share a stem prefix with `q` (each direction), without `q` itself.
    fn prefix_relatives<'a>(&'a self, q: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let longer = {
            let start = self.vocabulary.partition_point(|t| t.as_str() < q);
            self.vocabulary[start..]
                .iter()
                .take_while(move |t| t.starts_with(q))
                .map(String::as_str)
                .filter(move |t| *t != q)
        };
        let shorter = (MIN_PREFIX..q.len())
            .filter(move |&n| q.is_char_boundary(n))
            .map(move |n| &q[..n])
            .filter(move |p| self.postings.contains_key(*p));
        longer.chain(shorter)
    }
}

/// Ranks the capabilities of `indexes` (one per provider of the scope) for `intent`; returns at
/// most `limit` candidates that cover at least `min_score` of the intent, best first, ties by
/// position (providers and capabilities are in ID order).
pub fn rank(indexes: &[&LexicalIndex], intent: &str, limit: usize, min_score: f64) -> Vec<Ranked> {
    let mut texts = Vec::new();
    Tokenizer::new().terms(intent, &mut texts);
    texts.sort();
    texts.dedup();
    let total_docs: usize = indexes.iter().map(|i| i.documents as usize).sum();
    let idf = |df: usize| (1.0 + (total_docs as f64 - df as f64 + 0.5) / (df as f64 + 0.5)).ln();
    let terms: Vec<QueryTerm> = texts
        .into_iter()
        .map(|text| QueryTerm {
            weight: idf(indexes.iter().map(|i| i.df(&text)).sum()),
            unit: !(is_cjk_term(&text) && text.chars().count() == 2),
            text,
        })
        .collect();
    let units: Vec<usize> = (0..terms.len()).filter(|&i| terms[i].unit).collect();
    let intent_weight: f64 = units.iter().map(|&i| terms[i].weight).sum();
    if intent_weight <= 0.0 {
        return Vec::new();
    }
    // Per candidate and query term: the best (score, coverage credit) of any matching index term.
    let mut best: HashMap<(usize, u32), HashMap<usize, (f64, f64)>> = HashMap::new();
    let mut credit = |key: (usize, u32), ti: usize, score: f64, covered: f64| {
        let e = best.entry(key).or_default().entry(ti).or_insert((0.0, 0.0));
        e.0 = e.0.max(score);
        e.1 = e.1.max(covered);
    };
    for (ti, term) in terms.iter().enumerate() {
        for (p, index) in indexes.iter().enumerate() {
            for &(doc, sat) in index.postings(&term.text) {
                credit((p, doc), ti, term.weight * f64::from(sat), term.weight);
                if !term.unit {
                    // A matching bigram covers both of its characters.
                    for c in term.text.chars() {
                        if let Some(ci) =
                            terms.iter().position(|t| t.unit && t.text.chars().eq([c]))
                        {
                            credit((p, doc), ci, 0.0, terms[ci].weight);
                        }
                    }
                }
            }
            if term.unit && !is_cjk_term(&term.text) && term.text.len() >= MIN_PREFIX {
                for relative in index.prefix_relatives(&term.text) {
                    for &(doc, sat) in index.postings(relative) {
                        let w = term.weight * PREFIX_CREDIT;
                        credit((p, doc), ti, w * f64::from(sat), w);
                    }
                }
            }
        }
    }
    let mut ranked: Vec<Ranked> = best
        .into_iter()
        .map(|((provider, node), per_term)| {
            let coverage = per_term.values().map(|v| v.1).sum::<f64>() / intent_weight;
            let score: f64 = per_term.values().map(|v| v.0).sum();
            Ranked {
                provider,
                node,
                score,
                coverage,
            }
        })
        .filter(|r| r.coverage >= min_score)
        .collect();
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then((a.provider, a.node).cmp(&(b.provider, b.node)))
    });
    let top = ranked.first().map_or(0.0, |r| r.score);
    ranked.retain(|r| r.score >= top * RELATIVE_CUTOFF);
    ranked.truncate(limit);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Tokenizer::new().terms(text, &mut out);
        out
    }

    #[test]
    fn words_are_split_stemmed_and_filtered() {
        assert_eq!(
            terms("Validating the route.validation requests"),
            ["valid", "rout", "valid", "request"]
        );
        assert_eq!(
            terms("schema-request_payloads"),
            ["schema", "request", "payload"]
        );
    }

    #[test]
    fn cjk_text_becomes_unigrams_and_bigrams() {
        assert_eq!(
            terms("发送邮件"),
            ["发", "发送", "送", "送邮", "邮", "邮件", "件"]
        );
        assert_eq!(terms("给用户"), ["给用", "用", "用户", "户"]);
        assert_eq!(terms("send 邮件 now"), ["send", "邮", "邮件", "件", "now"]);
    }
}
