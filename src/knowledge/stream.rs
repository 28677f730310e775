//! A URL document read through a host reader's `stream()`: each chunk is checked as it
//! arrives (its size, its source, one content type), the whole stream is hashed and checked as
//! UTF-8, and only the bytes of one page are kept, so a page of a document of any size costs
//! one pass over it and one page of memory.

use crate::error::{Code, GraphError, Result};
use crate::snapshot::revision::content_id_of;
use serde::Deserialize;
use serde_json::json;

/// What a page read asks of a stream: where the page starts and how many bytes to keep.
#[derive(Deserialize)]
struct Request {
    source: String,
    #[serde(rename = "chunkBytes")]
    chunk_bytes: u64,
    start: u64,
    keep: u64,
}

/// Why a stream was refused, as it is reported.
#[derive(Clone, Copy)]
enum Refusal {
    /// A chunk that breaks the `stream` contract (`CG_ADAPTER_CONTRACT_INVALID`).
    Contract,
    /// Bytes that are not UTF-8.
    NotUtf8,
}

pub struct StreamCheck {
    request: Request,
    hasher: blake3::Hasher,
    content_type: Option<String>,
    total: u64,
    window: Vec<u8>,
    /// The start of a code point cut at the end of the last chunk.
    pending: Vec<u8>,
    chunks: u64,
    refused: Option<Refusal>,
}

impl StreamCheck {
    /// `request`: `{ source, chunkBytes, start, keep }` as the engine asked for the page.
    pub fn new(request: &str) -> Result<StreamCheck> {
        let request: Request =
            serde_json::from_str(request).map_err(|_| GraphError::new(Code::Internal))?;
        Ok(StreamCheck {
            request,
            hasher: blake3::Hasher::new(),
            content_type: None,
            total: 0,
            window: Vec::new(),
            pending: Vec::new(),
            chunks: 0,
            refused: None,
        })
    }

    /// Takes one chunk; `false` once the stream is refused (the caller stops reading).
    pub fn push(
        &mut self,
        bytes: Option<&[u8]>,
        content_type: Option<&str>,
        source: Option<&str>,
    ) -> bool {
        if self.refused.is_some() {
            return false;
        }
        let content_type = content_type.filter(|t| !crate::json::is_blank(t) && t.len() <= 256);
        let same_type = match (&self.content_type, content_type) {
            (_, None) => false,
            (None, Some(t)) => {
                self.content_type = Some(t.to_owned());
                true
            }
            (Some(first), Some(t)) => first == t,
        };
        let Some(bytes) = bytes.filter(|b| {
            b.len() as u64 <= self.request.chunk_bytes
                && same_type
                && source == Some(self.request.source.as_str())
        }) else {
            self.refused = Some(Refusal::Contract);
            return false;
        };
        if !self.utf8(bytes) {
            self.refused = Some(Refusal::NotUtf8);
            return false;
        }
        self.chunks += 1;
        self.hasher.update(bytes);
        // Keep the part of the chunk that falls in [start, start + keep).
        let (start, end) = (
            self.request.start,
            self.request.start.saturating_add(self.request.keep),
        );
        let (from, to) = (self.total, self.total + bytes.len() as u64);
        if from < end && to > start {
            let a = start.max(from) - from;
            let b = end.min(to) - from;
            self.window
                .extend_from_slice(&bytes[a as usize..b as usize]);
        }
        self.total = to;
        true
    }

    /// Validates the chunk's bytes as the continuation of the stream's UTF-8.
    fn utf8(&mut self, bytes: &[u8]) -> bool {
        let mut joined = std::mem::take(&mut self.pending);
        joined.extend_from_slice(bytes);
        match std::str::from_utf8(&joined) {
            Ok(_) => true,
            // A code point cut by the chunk's end is completed by the next chunk.
            Err(e) if e.error_len().is_none() => {
                self.pending = joined[e.valid_up_to()..].to_vec();
                true
            }
            Err(_) => false,
        }
    }

    /// The answer for the engine (JSON), and the bytes kept for the page.
    pub fn finish(self) -> (String, Vec<u8>) {
        let refused = match self.refused {
            Some(r) => Some(r),
            // A stream without a chunk delivered nothing, not an empty document.
            None if self.chunks == 0 => Some(Refusal::Contract),
            None if !self.pending.is_empty() => Some(Refusal::NotUtf8),
            None => None,
        };
        let answer = match refused {
            Some(Refusal::Contract) => {
                json!({ "kind": "refused", "reason": "reader_stream_invalid" })
            }
            Some(Refusal::NotUtf8) => json!({ "kind": "refused", "reason": "invalid_utf8" }),
            None => json!({
                "kind": "streamed",
                "contentId": content_id_of(self.hasher.finalize()),
                "totalBytes": self.total,
                "contentType": self.content_type,
            }),
        };
        (answer.to_string(), self.window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::revision::content_id;

    fn check(start: u64, keep: u64) -> StreamCheck {
        let request =
            json!({ "source": "https://x/d.md", "chunkBytes": 4, "start": start, "keep": keep });
        StreamCheck::new(&request.to_string()).unwrap()
    }

    #[test]
    fn hashes_the_whole_stream_and_keeps_one_window() {
        let text = "héllo wörld ✓ done".as_bytes();
        let mut c = check(3, 7);
        for chunk in text.chunks(4) {
            assert!(c.push(Some(chunk), Some("text/plain"), Some("https://x/d.md")));
        }
        let (answer, window) = c.finish();
        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["contentId"], content_id(text));
        assert_eq!(answer["totalBytes"], text.len());
        assert_eq!(window, &text[3..10]);
    }

    #[test]
    fn refuses_what_breaks_the_contract_or_utf8() {
        let src = Some("https://x/d.md");
        let refused = |c: StreamCheck| {
            let (answer, _) = c.finish();
            serde_json::from_str::<serde_json::Value>(&answer).unwrap()["reason"].clone()
        };
        let mut c = check(0, 10);
        assert!(!c.push(Some(b"12345"), Some("t"), src));
        assert_eq!(refused(c), "reader_stream_invalid");
        let mut c = check(0, 10);
        assert!(c.push(Some(b"ab"), Some("t"), src));
        assert!(!c.push(Some(b"ab"), Some("u"), src));
        assert_eq!(refused(c), "reader_stream_invalid");
        let mut c = check(0, 10);
        assert!(!c.push(Some(b"ab"), Some("t"), Some("https://y/")));
        assert_eq!(refused(c), "reader_stream_invalid");
        assert_eq!(refused(check(0, 10)), "reader_stream_invalid");
        let mut c = check(0, 10);
        assert!(c.push(Some(&[0xc3]), Some("t"), src));
        assert_eq!(refused(c), "invalid_utf8");
        let mut c = check(0, 10);
        assert!(!c.push(Some(&[0xff]), Some("t"), src));
        assert_eq!(refused(c), "invalid_utf8");
        let mut c = check(0, 10);
        assert!(
            c.push(Some(&[]), Some("t"), src),
            "an empty document is one empty chunk"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&c.finish().0).unwrap()["kind"],
            "streamed"
        );
    }
}
