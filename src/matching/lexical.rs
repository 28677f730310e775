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
        let tokenize = |caps: &[crate::snapshot::Capability]| -> Vec<[Vec<String>; FIELDS]> {
            let tokenizer = Tokenizer::new();
            caps.iter()
                .map(|c| {
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
                    f
                })
                .collect()
        };
        // Tokenising and stemming dominate; large providers use every core.
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        let fields: Vec<[Vec<String>; FIELDS]> = if s.capabilities.len() < 4096 || threads < 2 {
            tokenize(&s.capabilities)
        } else {
            let chunk = s.capabilities.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let parts: Vec<_> = s
                    .capabilities
                    .chunks(chunk)
                    .map(|c| scope.spawn(move || tokenize(c)))
                    .collect();
                parts
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_default())
                    .collect()
            })
        };
        let mut total_len = [0f32; FIELDS];
        for f in &fields {
            for (i, terms) in f.iter().enumerate() {
                total_len[i] += terms.len() as f32;
            }
        }
        let n = fields.len().max(1) as f32;
        let avg: Vec<f32> = total_len.iter().map(|t| (t / n).max(1.0)).collect();
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        for (doc, f) in fields.iter().enumerate() {
            let mut weighted: HashMap<&str, f32> = HashMap::new();
            for (i, terms) in f.iter().enumerate() {
                let norm = 1.0 - B + B * terms.len() as f32 / avg[i];
                for t in terms {
                    crate::opcount::tick(crate::opcount::Op::IndexPosting);
                    *weighted.entry(t.as_str()).or_default() += WEIGHTS[i] / norm;
                }
            }
            for (t, wtf) in weighted {
                let entry = (doc as u32, wtf / (K1 + wtf));
                // Look up first: most terms are already known, and a key costs an allocation.
                match postings.get_mut(t) {
                    Some(list) => list.push(entry),
                    None => {
                        postings.insert(t.to_owned(), vec![entry]);
                    }
                }
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
    let intent_weight: f64 = terms.iter().filter(|t| t.unit).map(|t| t.weight).sum();
    if intent_weight <= 0.0 {
        return Vec::new();
    }
    // Per candidate: (score, covered weight). Each unit term adds the best credit any of its
    // forms earns in a candidate: itself, a shared-stem relative, or (for a CJK character) a
    // matching bigram of the intent that contains it; bigrams add score only.
    let mut totals: HashMap<(usize, u32), (f64, f64)> = HashMap::new();
    let mut local: HashMap<(usize, u32), (f64, f64)> = HashMap::new();
    for term in &terms {
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
                for relative in index.prefix_relatives(&term.text) {
                    for &(doc, sat) in index.postings(relative) {
                        offer(doc, w * f64::from(sat), w);
                    }
                }
            }
        }
        for (&key, &(score, covered)) in &local {
            let e = totals.entry(key).or_insert((0.0, 0.0));
            e.0 += score;
            e.1 += covered;
        }
    }
    let mut ranked: Vec<Ranked> = totals
        .into_iter()
        .map(|((provider, node), (score, covered))| Ranked {
            provider,
            node,
            score,
            coverage: covered / intent_weight,
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
