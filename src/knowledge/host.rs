//! Bodies of URL documents, read by the host's readers. The engine never fetches: a read that
//! meets a URL document asks the JS layer to run the host's readers (the first whose `canRead`
//! accepts the document), then validates what they returned before using a byte of it.

use super::body::{check_known, page_in, page_window, Known, Page};
use super::source;
use crate::definitions::model::DocumentRef;
use crate::error::{project_component_error, Code, Component, GraphError, Phase, Result};
use crate::snapshot::revision::content_id;
use crate::snapshot::ProviderSnapshot;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::HashMap;

/// What the host's readers answered for one document.
pub enum Answer {
    Body {
        bytes: Option<Vec<u8>>,
        content_type: Option<String>,
        /// The content ID the reader stated: absent (`None`), or what it gave — which must be
        /// a string.
        content_id: Option<Value>,
        source: Option<String>,
    },
    /// A reader's `stream()`, as the engine's stream check summed it up: the page's bytes
    /// (`window`), the whole document's content ID, size and content type.
    Streamed {
        window: Option<Vec<u8>>,
        content_id: Option<String>,
        total: Option<u64>,
        content_type: Option<String>,
    },
    /// A stream the check refused (`reader_stream_invalid`, `invalid_utf8`).
    Refused { reason: Option<String> },
    /// No reader accepts the document.
    NoReader,
    /// A reader threw; `code` is the thrown value's string `code`, if any.
    Failed { code: Option<String> },
}

/// A validated host body.
pub struct HostBody {
    pub bytes: Vec<u8>,
    pub content_type: String,
}

/// A URL document identified whole for a knowledge retriever: streamed by a reader that has
/// `stream()` (nothing held), else read whole.
pub enum Scanned {
    Streamed {
        content_id: String,
        total: u64,
        content_type: String,
    },
    Whole(HostBody),
}

/// What one page read of a URL document asks for.
#[derive(Clone, Copy)]
pub struct PageRange {
    /// The page's first byte.
    pub start: u64,
    /// At most this many bytes in the page.
    pub page_bytes: u64,
    /// Chunks a reader's `stream()` delivers (`read.maxBytes`).
    pub chunk_bytes: u64,
    /// A reader without `stream()` reads the whole document, up to `read.maxResponseBytes`.
    pub max_bytes: u64,
}

/// The host answers a read call has so far, and the documents it still needs.
#[derive(Default)]
pub struct HostBodies {
    /// Whether the host configured any reader at all.
    pub enabled: bool,
    /// `read.readerTimeoutMs`, sent with every request.
    reader_timeout_ms: u64,
    /// The caller's abort of a page read, for the files the engine reads itself.
    control: super::body::ReadControl,
    answers: HashMap<String, Answer>,
    requests: RefCell<Vec<Value>>,
    /// The alias roots the call's file reads checked.
    roots: super::RootChecks,
}

fn key(s: &ProviderSnapshot, doc: &DocumentRef) -> String {
    format!(
        "{}\u{1f}{}\u{1f}{}",
        s.provider_id(),
        doc.knowledge_id,
        source(doc)
    )
}

fn contract(reason: &str) -> GraphError {
    GraphError::new(Code::AdapterContractInvalid)
        .with_phase(Phase::Document)
        .detail("reason", reason)
}

/// The error of a stream the engine's check refused.
fn refused(reason: Option<&str>) -> GraphError {
    match reason {
        Some("invalid_utf8") => super::body::not_utf8(),
        Some("page_smaller_than_character") => {
            GraphError::new(Code::BudgetExceeded).detail("reason", "page_smaller_than_character")
        }
        _ => contract("reader_stream_invalid"),
    }
}

impl HostBodies {
    /// Parses the answers the JS layer collected: `[{ key, kind, contentType?, contentId?,
    /// source?, code?, buffer? }]`, with the bodies in `buffers`.
    pub fn new(
        enabled: bool,
        answers: Option<&str>,
        mut buffers: Vec<Option<Vec<u8>>>,
    ) -> HostBodies {
        let mut map = HashMap::new();
        let parsed: Vec<Value> = answers
            .and_then(|a| serde_json::from_str(a).ok())
            .unwrap_or_default();
        for a in parsed {
            let Some(k) = a.get("key").and_then(Value::as_str) else {
                continue;
            };
            let field = |name: &str| a.get(name).and_then(Value::as_str).map(str::to_owned);
            // The bytes a reader delivered travel beside the answers; each is taken once.
            let mut buffer = || {
                a.get("buffer")
                    .and_then(Value::as_u64)
                    .and_then(|i| buffers.get_mut(i as usize))
                    .and_then(Option::take)
            };
            let answer = match a.get("kind").and_then(Value::as_str) {
                Some("body") => Answer::Body {
                    bytes: buffer(),
                    content_type: field("contentType"),
                    content_id: a.get("contentId").cloned(),
                    source: field("source"),
                },
                Some("streamed") => Answer::Streamed {
                    window: buffer(),
                    content_id: field("contentId"),
                    total: a.get("totalBytes").and_then(Value::as_u64),
                    content_type: field("contentType"),
                },
                Some("refused") => Answer::Refused {
                    reason: field("reason"),
                },
                Some("none") => Answer::NoReader,
                _ => Answer::Failed {
                    code: a.get("code").and_then(Value::as_str).map(str::to_owned),
                },
            };
            map.insert(k.to_owned(), answer);
        }
        HostBodies {
            enabled,
            reader_timeout_ms: crate::config::Budgets::default().read.reader_timeout_ms,
            control: super::body::ReadControl::default(),
            answers: map,
            requests: RefCell::new(Vec::new()),
            roots: super::RootChecks::default(),
        }
    }

    /// How long the JS layer waits for one reader call before the document is unreadable.
    pub fn with_reader_timeout(mut self, ms: u64) -> HostBodies {
        self.reader_timeout_ms = ms;
        self
    }

    /// The caller's abort of this read: a local file's scan checks it between chunks.
    pub fn with_control(mut self, control: super::body::ReadControl) -> HostBodies {
        self.control = control;
        self
    }

    pub fn control(&self) -> &super::body::ReadControl {
        &self.control
    }

    /// The alias roots this call checked: its file reads check each once.
    pub fn roots(&self) -> &super::RootChecks {
        &self.roots
    }

    /// The documents still to be read by the host, as the JS layer receives them.
    pub fn pending(&self) -> Option<String> {
        let requests = self.requests.borrow();
        (!requests.is_empty()).then(|| Value::Array(requests.clone()).to_string())
    }

    /// The host body of a URL document: `Ok(None)` while the host has not answered yet.
    pub fn body(
        &self,
        s: &ProviderSnapshot,
        doc: &DocumentRef,
        max_bytes: u64,
    ) -> Result<Option<HostBody>> {
        match self.answer(s, doc, max_bytes, None)? {
            None => Ok(None),
            Some(answer) => self.judge(doc, answer, max_bytes).map(Some),
        }
    }

    /// The answer for `doc`, or `None` after asking the host for it (with `stream`, the page a
    /// reader's `stream()` should be checked for, when it has one).
    fn answer(
        &self,
        s: &ProviderSnapshot,
        doc: &DocumentRef,
        max_bytes: u64,
        stream: Option<Value>,
    ) -> Result<Option<&Answer>> {
        if !self.enabled {
            return Err(GraphError::new(Code::DocumentReferenceOnly));
        }
        let key = key(s, doc);
        if let Some(answer) = self.answers.get(&key) {
            return Ok(Some(answer));
        }
        let mut request = Map::new();
        request.insert("key".into(), key.into());
        request.insert("providerId".into(), s.provider_id().into());
        request.insert("staticRevision".into(), s.static_revision.clone().into());
        request.insert("ref".into(), serde_json::to_value(doc).unwrap_or_default());
        request.insert("maxBytes".into(), max_bytes.into());
        request.insert("timeoutMs".into(), self.reader_timeout_ms.into());
        if let Some(stream) = stream {
            request.insert("stream".into(), stream);
        }
        let mut requests = self.requests.borrow_mut();
        let value = Value::Object(request);
        if !requests.contains(&value) {
            requests.push(value);
        }
        Ok(None)
    }

    /// One page of a URL document: streamed by a reader that has `stream()` (no total limit),
    /// else read whole up to `max_bytes`. `Ok(None)` while the host has not answered yet.
    pub fn page(
        &self,
        s: &ProviderSnapshot,
        doc: &DocumentRef,
        range: &PageRange,
        known: Option<&Known>,
    ) -> Result<Option<(Page, String)>> {
        let PageRange {
            start,
            page_bytes,
            chunk_bytes,
            max_bytes,
        } = *range;
        let stream = serde_json::json!({
            "source": source(doc),
            "chunkBytes": chunk_bytes,
            "start": start,
            "keep": page_bytes + 1,
        });
        let Some(answer) = self.answer(s, doc, max_bytes, Some(stream))? else {
            return Ok(None);
        };
        match answer {
            Answer::Streamed {
                window,
                content_id,
                total,
                content_type,
            } => {
                let (Some(window), Some(content_id), Some(total), Some(content_type)) =
                    (window, content_id, total, content_type)
                else {
                    return Err(GraphError::new(Code::Internal));
                };
                check_known(known, content_id)?;
                let page = page_window(window, start, *total, content_id.clone(), page_bytes)?;
                Ok(Some((page, content_type.clone())))
            }
            Answer::Refused { reason } => Err(refused(reason.as_deref())),
            other => {
                let body = self.judge(doc, other, max_bytes)?;
                let page = page_in(&body.bytes, start, page_bytes, known)?;
                Ok(Some((page, body.content_type)))
            }
        }
    }

    /// A URL document identified whole, of any size when its reader has `stream()`: chunks of
    /// at most `chunk_bytes` from the reader, handed on in chunks of at most `emit` bytes (a
    /// scan), or only hashed; without `stream()` it is read whole up to `max_bytes`.
    /// `Ok(None)` while the host has not answered yet.
    pub fn scan(
        &self,
        s: &ProviderSnapshot,
        doc: &DocumentRef,
        chunk_bytes: u64,
        emit: Option<u64>,
        max_bytes: u64,
    ) -> Result<Option<Scanned>> {
        let mut stream = serde_json::json!({ "source": source(doc), "chunkBytes": chunk_bytes });
        if let Some(emit) = emit {
            stream["emit"] = emit.into();
        }
        let Some(answer) = self.answer(s, doc, max_bytes, Some(stream))? else {
            return Ok(None);
        };
        match answer {
            Answer::Streamed {
                content_id: Some(content_id),
                total: Some(total),
                content_type: Some(content_type),
                ..
            } => Ok(Some(Scanned::Streamed {
                content_id: content_id.clone(),
                total: *total,
                content_type: content_type.clone(),
            })),
            Answer::Streamed { .. } => Err(GraphError::new(Code::Internal)),
            Answer::Refused { reason } => Err(refused(reason.as_deref())),
            other => self
                .judge(doc, other, max_bytes)
                .map(|b| Some(Scanned::Whole(b))),
        }
    }

    /// The bytes of `ranges` (each within the document) of a URL document streamed again, one
    /// after the other, with the content ID of the stream: what checks a retriever's hits in
    /// a document it scanned. `Ok(None)` while the host has not answered yet.
    pub fn ranges(
        &self,
        s: &ProviderSnapshot,
        doc: &DocumentRef,
        chunk_bytes: u64,
        ranges: &[(u64, u64)],
    ) -> Result<Option<(Vec<u8>, String)>> {
        let ranges: Vec<[u64; 2]> = ranges.iter().map(|&(a, b)| [a, b]).collect();
        let stream = serde_json::json!({ "source": source(doc), "chunkBytes": chunk_bytes,
            "ranges": ranges });
        let Some(answer) = self.answer(s, doc, 0, Some(stream))? else {
            return Ok(None);
        };
        match answer {
            Answer::Streamed {
                window: Some(window),
                content_id: Some(content_id),
                ..
            } => Ok(Some((window.clone(), content_id.clone()))),
            Answer::Refused { reason } => Err(refused(reason.as_deref())),
            // Only a reader with `stream()` gave a streamed scan; one that no longer streams
            // cannot show the ranges.
            _ => Err(contract("reader_stream_invalid")),
        }
    }

    /// Checks what a reader's `read()` answered.
    fn judge(&self, doc: &DocumentRef, answer: &Answer, max_bytes: u64) -> Result<HostBody> {
        match answer {
            Answer::NoReader => Err(GraphError::new(Code::DocumentReferenceOnly)),
            Answer::Failed { code } => Err(project_component_error(
                Component::Reader,
                code.as_deref(),
                Phase::Document,
            )),
            Answer::Body {
                bytes,
                content_type,
                content_id: claimed,
                source: said,
            } => {
                let bytes = bytes
                    .clone()
                    .ok_or_else(|| contract("reader_bytes_required"))?;
                let content_type = content_type
                    .as_deref()
                    .filter(|t| !crate::json::is_blank(t) && t.len() <= 256)
                    .ok_or_else(|| contract("reader_content_type_required"))?
                    .to_owned();
                if said.as_deref() != Some(source(doc).as_str()) {
                    return Err(contract("reader_source_mismatch"));
                }
                if bytes.len() as u64 > max_bytes {
                    return Err(GraphError::new(Code::DocumentTooLarge)
                        .detail("budget", "read.maxResponseBytes")
                        .detail("limit", max_bytes));
                }
                // A reader may state the content ID it expects; the engine computes its own.
                match claimed {
                    None => {}
                    Some(Value::String(c)) if *c == content_id(&bytes) => {}
                    Some(Value::String(_)) => {
                        return Err(contract("reader_content_identity_mismatch"))
                    }
                    Some(_) => return Err(contract("reader_content_id_invalid")),
                }
                Ok(HostBody {
                    bytes,
                    content_type,
                })
            }
            // A whole read never asks for a stream.
            Answer::Streamed { .. } | Answer::Refused { .. } => {
                Err(GraphError::new(Code::Internal))
            }
        }
    }
}

/// For tests and callers without readers.
pub fn none() -> HostBodies {
    HostBodies::new(false, None, Vec::new())
}
