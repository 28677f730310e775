//! BERT uncased WordPiece, rule for rule the reference tokenizer of all-MiniLM-L6-v2 (its
//! `tokenizer.json`: BertNormalizer with clean_text, handle_chinese_chars, lowercase and
//! accents stripped; BertPreTokenizer; WordPiece with `##`, `[UNK]`, 100 characters a word;
//! `[CLS] … [SEP]`, truncated to 128 tokens). Token IDs must agree exactly, or the vectors
//! drift from the ones the model was trained to produce.

use std::collections::HashMap;
use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

/// The most tokens a text is encoded to, `[CLS]` and `[SEP]` included (the reference
/// tokenizer's own truncation); the rest of a longer text is not seen by the encoder.
pub const MAX_TOKENS: usize = 128;

/// A word longer than this many characters is one `[UNK]`.
const MAX_WORD_CHARS: usize = 100;

/// A vocabulary read from `vocab.txt` (one token a line, its ID the line number).
pub struct Tokenizer {
    vocab: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
    pad: u32,
}

impl Tokenizer {
    /// Builds the tokenizer from the text of `vocab.txt`; `None` when a special token is missing
    /// or a token appears twice.
    pub fn from_vocab(text: &str) -> Option<Tokenizer> {
        let mut vocab = HashMap::new();
        // A trailing newline ends the last token; it does not start an empty one.
        let body = text.strip_suffix('\n').unwrap_or(text);
        for (i, line) in body.split('\n').enumerate() {
            let token = line.strip_suffix('\r').unwrap_or(line);
            let id = u32::try_from(i).ok()?;
            if vocab.insert(token.to_owned(), id).is_some() {
                return None;
            }
        }
        Tokenizer::from_map(vocab)
    }

    /// A tokenizer over `token → id` entries (a part of a vocabulary, for fixtures).
    pub(crate) fn from_map(vocab: HashMap<String, u32>) -> Option<Tokenizer> {
        let get = |t: &str| vocab.get(t).copied();
        Some(Tokenizer {
            unk: get("[UNK]")?,
            cls: get("[CLS]")?,
            sep: get("[SEP]")?,
            pad: get("[PAD]")?,
            vocab,
        })
    }

    /// How many tokens the vocabulary has.
    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    /// The ID of `[PAD]`.
    pub fn pad_id(&self) -> u32 {
        self.pad
    }

    /// The token IDs of `text`: `[CLS]`, at most [`MAX_TOKENS`]` - 2` word pieces, `[SEP]`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![self.cls];
        let limit = MAX_TOKENS - 1;
        // Whitespace-separated runs one at a time, so a long text stops being read once the
        // tokens are complete. The same result as the whole text at once: whitespace ends a
        // word, and NFD never reorders across it (a space is a starter).
        'text: for run in text.split(becomes_space).filter(|r| !r.is_empty()) {
            let normalized = normalize(run);
            for word in pre_tokenize(&normalized) {
                for id in self.word_pieces(word) {
                    if ids.len() == limit {
                        break 'text;
                    }
                    ids.push(id);
                }
            }
        }
        ids.push(self.sep);
        ids
    }

    /// Greedy longest match from the left; a word with any unmatched rest is one `[UNK]`.
    fn word_pieces(&self, word: &str) -> Vec<u32> {
        if word.chars().count() > MAX_WORD_CHARS {
            return vec![self.unk];
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut candidate = String::new();
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                candidate.clear();
                if start > 0 {
                    candidate.push_str("##");
                }
                candidate.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(candidate.as_str()) {
                    found = Some(id);
                    break;
                }
                end = word[..end]
                    .char_indices()
                    .next_back()
                    .map_or(start, |(i, _)| i);
            }
            match found {
                Some(id) => pieces.push(id),
                None => return vec![self.unk],
            }
            start = end;
        }
        pieces
    }
}

/// Controls, NUL and U+FFFD dropped, whitespace made a space, spaces around CJK ideographs,
/// accents stripped (NFD without nonspacing marks), then lowercase — in the reference's order.
fn normalize(text: &str) -> String {
    let mut spaced = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_dropped(c) {
            continue;
        }
        if is_whitespace(c) {
            spaced.push(' ');
        } else if is_cjk(c) {
            spaced.push(' ');
            spaced.push(c);
            spaced.push(' ');
        } else {
            spaced.push(c);
        }
    }
    let mut out = String::with_capacity(spaced.len());
    for c in spaced.nfd().filter(|c| !c.is_mark_nonspacing()) {
        out.extend(c.to_lowercase());
    }
    out
}

/// Words split on whitespace, each punctuation character a word of its own.
fn pre_tokenize(text: &str) -> impl Iterator<Item = &str> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                words.push(&text[s..i]);
            }
        } else if is_punctuation(c) {
            if let Some(s) = start.take() {
                words.push(&text[s..i]);
            }
            words.push(&text[i..i + c.len_utf8()]);
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(&text[s..]);
    }
    words.into_iter()
}

fn is_dropped(c: char) -> bool {
    c == '\0' || c == '\u{FFFD}' || is_control(c)
}

/// What cleaning turns into a space (a control that is also whitespace, like U+000B, is dropped).
fn becomes_space(c: char) -> bool {
    !is_dropped(c) && is_whitespace(c)
}

fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Every "other" category (Cc, Cf, Co, Cn) but the three whitespace controls.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// The CJK Unified Ideographs blocks BERT treats as words of their own (not Hangul or kana).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Tokenizer {
        let vocab = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", ",", "un", "##aff", "##able",
            "cafe", "中", "文", ".", "client", "config", "##s",
        ];
        Tokenizer::from_vocab(&(vocab.join("\n") + "\n")).unwrap()
    }

    #[test]
    fn normalizes_like_the_reference() {
        assert_eq!(normalize("Héllo\u{0}\u{7}\tWORLD\u{200B}"), "hello world");
        assert_eq!(normalize("中文ab"), " 中  文 ab");
        assert_eq!(normalize("Ça\u{3000}va"), "ca va");
    }

    #[test]
    fn splits_punctuation_into_words() {
        let words: Vec<_> = pre_tokenize("client.config, ok!").collect();
        assert_eq!(words, ["client", ".", "config", ",", "ok", "!"]);
    }

    #[test]
    fn greedy_word_pieces_and_unknowns() {
        let t = tiny();
        assert_eq!(t.encode("Hello, unaffable world"), [2, 4, 6, 7, 8, 9, 5, 3]);
        assert_eq!(t.encode("unaffx"), [2, 1, 3]);
        assert_eq!(t.encode("Café 中文"), [2, 10, 11, 12, 3]);
        assert_eq!(t.encode("client.configs"), [2, 14, 13, 15, 16, 3]);
        assert_eq!(t.encode(&"a".repeat(101)), [2, 1, 3]);
        assert_eq!(t.encode(""), [2, 3]);
        // U+000B and U+0085 are controls, dropped before whitespace is made a space: they join.
        assert_eq!(
            t.encode("hel\u{b}lo wor\u{85}ld\u{2028}cafe"),
            [2, 4, 5, 10, 3]
        );
    }

    #[test]
    fn truncates_to_the_maximum() {
        let t = tiny();
        let ids = t.encode(&"hello ".repeat(500));
        assert_eq!(ids.len(), MAX_TOKENS);
        assert_eq!((ids[0], ids[MAX_TOKENS - 1]), (2, 3));
    }

    #[test]
    fn refuses_a_vocabulary_without_its_special_tokens() {
        assert!(Tokenizer::from_vocab("[PAD]\n[UNK]\n[CLS]\n").is_none());
        assert!(Tokenizer::from_vocab("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[SEP]\n").is_none());
    }
}
