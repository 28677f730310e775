//! A URL document read through a host reader's `stream()`: each chunk is checked as it
//! arrives (its size, its source, one content type), the whole stream is hashed and checked as
//! UTF-8, and only the bytes of one page are kept, so a page of a document of any size costs
//! one pass over it and one page of memory. A knowledge retriever's scan keeps no page: the
//! stream is handed on in chunks cut as pages are, while it arrives; checking the retriever's
//! hits in such a document keeps only their ranges.

use super::body::page_window;
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
    #[serde(default)]
    start: u64,
    #[serde(default)]
    keep: u64,
    /// Instead of one page: the `[start, end)` byte ranges to keep, each on its own.
    #[serde(default)]
    ranges: Option<Vec<[u64; 2]>>,
    /// A scan: the stream is handed on in chunks of at most this many bytes ([`StreamCheck::take`]).
    #[serde(default)]
    emit: Option<u64>,
}

/// Why a stream was refused, as it is reported.
#[derive(Clone, Copy)]
enum Refusal {
    /// A chunk that breaks the `stream` contract (`CG_ADAPTER_CONTRACT_INVALID`).
    Contract,
    /// Bytes that are not UTF-8.
    NotUtf8,
    /// A scan's chunk size smaller than a character it meets.
    TooSmall,
}

pub struct StreamCheck {
    request: Request,
    hasher: blake3::Hasher,
    content_type: Option<String>,
    total: u64,
    /// The ranges kept, and the bytes of each so far.
    ranges: Vec<(u64, u64)>,
    windows: Vec<Vec<u8>>,
    /// A scan's bytes not handed on yet, and the offset of the first of them.
    out: Vec<u8>,
    out_start: u64,
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
        let ranges: Vec<(u64, u64)> = match &request.ranges {
            Some(ranges) => ranges.iter().map(|&[a, b]| (a, b.max(a))).collect(),
            None => vec![(request.start, request.start.saturating_add(request.keep))],
        };
        Ok(StreamCheck {
            request,
            hasher: blake3::Hasher::new(),
            content_type: None,
            total: 0,
            windows: vec![Vec::new(); ranges.len()],
            ranges,
            out: Vec::new(),
            out_start: 0,
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
        // Keep the part of the chunk that falls in each range.
        let (from, to) = (self.total, self.total + bytes.len() as u64);
        for (&(start, end), window) in self.ranges.iter().zip(&mut self.windows) {
            if from < end && to > start {
                let a = start.max(from) - from;
                let b = end.min(to) - from;
                window.extend_from_slice(&bytes[a as usize..b as usize]);
            }
        }
        if self.request.emit.is_some() {
            self.out.extend_from_slice(bytes);
        }
        self.total = to;
        true
    }

    /// A scan's next chunk and its offset: at most `emit` bytes, cut where a page would be
    /// (see [`page_window`]); `None` until more bytes arrive. With `last` (the stream ended),
    /// the rest too. A chunk size smaller than a character refuses the stream.
    pub fn take(&mut self, last: bool) -> Option<(Vec<u8>, u64)> {
        let emit = self.request.emit?;
        // A stream ending inside a character is not UTF-8: `finish` refuses it.
        let ends_cut = last && !self.pending.is_empty();
        if self.refused.is_some()
            || self.out.is_empty()
            || ends_cut
            || (!last && self.out.len() as u64 <= emit)
        {
            return None;
        }
        // Bytes past the chunk's end show whether it ends on a character boundary; the end
        // of the stream is the end of the document.
        let end = self.out_start + self.out.len() as u64;
        let total = if last { end } else { u64::MAX };
        let window = &self.out[..self.out.len().min(emit as usize + 1)];
        match page_window(window, self.out_start, total, String::new(), emit) {
            Ok(page) => {
                let n = (page.end - page.start) as usize;
                let chunk: Vec<u8> = self.out.drain(..n).collect();
                let at = self.out_start;
                self.out_start += n as u64;
                Some((chunk, at))
            }
            Err(_) => {
                // The bytes are UTF-8 (checked as they came): what fails is a character larger
                // than the chunk.
                self.refused = Some(Refusal::TooSmall);
                None
            }
        }
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
            Some(Refusal::TooSmall) => {
                json!({ "kind": "refused", "reason": "page_smaller_than_character" })
            }
            None => json!({
                "kind": "streamed",
                "contentId": content_id_of(self.hasher.finalize()),
                "totalBytes": self.total,
                "contentType": self.content_type,
            }),
        };
        (answer.to_string(), self.windows.concat())
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
    fn a_scan_hands_the_stream_on_in_page_cut_chunks_and_keeps_ranges() {
        let text = "héllo wörld ✓ done".as_bytes();
        let request = json!({ "source": "https://x/d.md", "chunkBytes": 4, "emit": 5,
            "ranges": [[1, 3], [0, 2], [14, 99]] });
        let mut c = StreamCheck::new(&request.to_string()).unwrap();
        let mut chunks = Vec::new();
        for chunk in text.chunks(4) {
            assert!(c.push(Some(chunk), Some("text/plain"), Some("https://x/d.md")));
            while let Some(taken) = c.take(false) {
                chunks.push(taken);
            }
        }
        while let Some(taken) = c.take(true) {
            chunks.push(taken);
        }
        let mut offset = 0;
        for (bytes, at) in &chunks {
            assert_eq!(*at, offset);
            assert!(bytes.len() <= 5 && std::str::from_utf8(bytes).is_ok());
            offset += bytes.len() as u64;
        }
        let joined: Vec<u8> = chunks.iter().flat_map(|(b, _)| b.clone()).collect();
        assert_eq!(joined, text);
        let (answer, window) = c.finish();
        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["contentId"], content_id(text));
        assert_eq!(window, [&text[1..3], &text[0..2], &text[14..]].concat());
        // A character larger than the chunk refuses the scan.
        let request = json!({ "source": "s", "chunkBytes": 8, "emit": 2 });
        let mut c = StreamCheck::new(&request.to_string()).unwrap();
        assert!(c.push(Some("✓✓".as_bytes()), Some("t"), Some("s")));
        assert_eq!(c.take(false), None);
        assert!(!c.push(Some(b"a"), Some("t"), Some("s")));
        let (answer, _) = c.finish();
        assert!(answer.contains("page_smaller_than_character"));
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
