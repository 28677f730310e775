//! Terms of a text: English words lower-cased, stop words dropped and Snowball-stemmed (IDs
//! split at `.`, `-`, `_`); CJK text becomes character unigrams and bigrams.

use rust_stemmers::{Algorithm, Stemmer};

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

pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xAC00..=0xD7AF | 0x20000..=0x2FA1F)
}

pub(super) fn is_cjk_term(t: &str) -> bool {
    t.chars().next().is_some_and(is_cjk)
}

/// A CJK bigram only adds to a score; the characters it joins are what a request must cover.
pub(super) fn is_cjk_bigram(t: &str) -> bool {
    is_cjk_term(t) && t.chars().count() == 2
}

/// Turns text into terms.
pub struct Tokenizer {
    stemmer: Stemmer,
}

impl Tokenizer {
    pub fn new() -> Tokenizer {
        Tokenizer {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }

    /// Appends the terms of `text` to `out`, in text order.
    pub fn terms(&self, text: &str, out: &mut Vec<String>) {
        self.scan(text, |term, _| out.push(term));
    }

    /// Calls `f(term, word)` for every term of `text` in text order; `word` is the lower-cased
    /// word the term came from (the term itself for CJK).
    pub fn scan(&self, text: &str, mut f: impl FnMut(String, &str)) {
        self.scan_str(text, |term, word| f(term.to_owned(), word));
    }

    /// [`Tokenizer::scan`] without an allocation per term: `term` is only valid during the
    /// call, so an index can keep one copy of each distinct term instead of one per use.
    pub fn scan_str(&self, text: &str, mut f: impl FnMut(&str, &str)) {
        self.scan_pieces(text, |piece| match piece {
            Piece::Word(word) => f(&self.stem(word), word),
            Piece::Cjk(term) => f(term, term),
        });
    }

    /// Calls `f` for every piece of `text` in text order, before stemming: a word that will
    /// become a term (see [`Tokenizer::stem`]), or a CJK term. An index stems each distinct
    /// word once instead of once per use.
    pub(super) fn scan_pieces(&self, text: &str, mut f: impl FnMut(Piece)) {
        let lower = text.to_lowercase();
        let mut word = String::new();
        let mut cjk: Vec<char> = Vec::new();
        for c in lower.chars().chain(std::iter::once(' ')) {
            if is_cjk(c) {
                flush_word(&mut word, &mut f);
                cjk.push(c);
            } else if c.is_alphanumeric() {
                flush_cjk(&mut cjk, &mut f);
                word.push(c);
            } else {
                flush_word(&mut word, &mut f);
                flush_cjk(&mut cjk, &mut f);
            }
        }
    }

    /// The term of a lower-cased word that [`Tokenizer::scan_pieces`] reported.
    pub(super) fn stem<'a>(&self, word: &'a str) -> std::borrow::Cow<'a, str> {
        self.stemmer.stem(word)
    }
}

/// What [`Tokenizer::scan_pieces`] reports.
pub(super) enum Piece<'a> {
    /// A lower-cased word, not a stop word; its term is its stem. Never contains CJK.
    Word(&'a str),
    /// A CJK character or bigram, itself the term.
    Cjk(&'a str),
}

fn flush_word(word: &mut String, f: &mut impl FnMut(Piece)) {
    // A lone letter (`s` of `what's`) says nothing; a lone digit may (`5xx`, `2 GB`).
    let letter = word.len() == 1 && word.chars().all(|c| c.is_alphabetic());
    if !word.is_empty() && !letter && !STOPWORDS.contains(&word.as_str()) {
        f(Piece::Word(word));
    }
    word.clear();
}

impl Default for Tokenizer {
    fn default() -> Self {
        Tokenizer::new()
    }
}

fn flush_cjk(run: &mut Vec<char>, f: &mut impl FnMut(Piece)) {
    let mut buf = [0u8; 8];
    for (i, &c) in run.iter().enumerate() {
        if !CJK_STOP.contains(&c) {
            let t: &str = c.encode_utf8(&mut buf);
            f(Piece::Cjk(t));
        }
        if let Some(&next) = run.get(i + 1) {
            let n = c.len_utf8();
            c.encode_utf8(&mut buf);
            next.encode_utf8(&mut buf[n..]);
            let t = std::str::from_utf8(&buf[..n + next.len_utf8()]).unwrap_or_default();
            f(Piece::Cjk(t));
        }
    }
    run.clear();
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

    #[test]
    fn scan_reports_the_word_of_each_term() {
        let mut seen = Vec::new();
        Tokenizer::new().scan("Expiring objects", |t, w| seen.push((t, w.to_owned())));
        assert_eq!(
            seen,
            [
                ("expir".to_owned(), "expiring".to_owned()),
                ("object".to_owned(), "objects".to_owned())
            ]
        );
    }
}
