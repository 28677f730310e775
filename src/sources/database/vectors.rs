//! A view's precomputed capability vectors (`vectors()`, optional): read after the records and
//! edges, only for a semantic executor's model, in bounded pages. An accelerator never fails a
//! read: a throw, a missed deadline, a page that breaks the page rules or the file's entry
//! rules, or one past the bounds ends the vectors (ignored whole, the provider embedded as if it
//! had none) and the read stands.

use super::*;
use crate::matching::semantic::file::{self, Ignored, Offered};
use crate::matching::semantic::Vectors;

/// The vectors of the provider being read, so far.
pub(super) struct VectorRead {
    pub(super) provider_id: String,
    vectors: Vectors,
    /// The capability IDs asked for (of an incremental read: the records it changed), if not all.
    ids: Option<Vec<Box<str>>>,
    /// The most entries the read may give: one per record read (or asked for).
    max_entries: usize,
    /// Bytes of JSON the read may still give, within `maxBytes` with the records'.
    bytes_left: u64,
    last: Option<String>,
    cursor: Option<String>,
    cursors: HashSet<String>,
}

/// An incremental read asks for the vectors of at most this many changed records by ID; past
/// it, for all (a change that large is nearly a full read).
pub const MAX_VECTOR_IDS: usize = SCAN_PAGE_LIMIT;

impl ReadCollector {
    /// The collector asks views that offer `vectors()` for the entries of `model` (`None`:
    /// the executor is not the semantic one, or its model is not known).
    pub fn wanting_vectors(mut self, model: Option<(String, usize)>) -> ReadCollector {
        self.vectors_model = model;
        self
    }

    /// After the read of `p` ended: the first `vectors()` call, if the view offers it, the
    /// executor wants vectors and the read needs any; `Done` otherwise.
    pub(super) fn start_vectors(&mut self, p: &Pending) -> Result<Next> {
        let Some((model, dims)) = self.vectors_model.clone() else {
            return Ok(Next::Done);
        };
        if !p.offers_vectors || p.violation.is_some() {
            return Ok(Next::Done);
        }
        let ids = match &p.changed {
            Some(ids) if ids.is_empty() => return Ok(Next::Done),
            Some(ids) if ids.len() <= MAX_VECTOR_IDS => Some(ids.clone()),
            _ => None,
        };
        let max_entries = ids.as_ref().map_or(p.ids.len(), Vec::len);
        self.vector_read = Some(VectorRead {
            provider_id: p.provider_id.clone(),
            vectors: file::empty(&model, dims),
            ids,
            max_entries,
            bytes_left: self.max_bytes.saturating_sub(p.bytes),
            last: None,
            cursor: None,
            cursors: HashSet::new(),
        });
        self.vectors_call()
    }

    fn vectors_call(&self) -> Result<Next> {
        let Some(r) = &self.vector_read else {
            return Err(GraphError::new(Code::Internal));
        };
        let mut page = Map::new();
        page.insert("limit".into(), SCAN_PAGE_LIMIT.into());
        page.insert("maxBytes".into(), PAGE_MAX_BYTES.into());
        if let Some(cursor) = &r.cursor {
            page.insert("cursor".into(), cursor.as_str().into());
        }
        if let Some(ids) = &r.ids {
            let ids = ids.iter().map(|id| Value::from(&**id)).collect();
            page.insert("capabilityIds".into(), Value::Array(ids));
        }
        let args = vec![Value::from(r.vectors.model.as_str()), Value::Object(page)];
        let bound = page_bound(SCAN_PAGE_LIMIT);
        Ok(Next::Ask(text(
            &json!({ "call": "vectors", "args": args, "bound": bound }),
        )?))
    }

    /// Whether a page now is one of `vectors()`.
    pub(super) fn reading_vectors(&self) -> bool {
        self.vector_read.is_some()
    }

    /// A page of `vectors()` (see [`ReadCollector::page_of`]): judged by the page rules of
    /// every scan and the file's entry rules, within the read's bounds; what breaks them ends
    /// the vectors, never the read.
    pub(super) fn vectors_page(&mut self, page: &str, items_json: Option<&str>) -> Result<Next> {
        match self.judge_vectors_page(page, items_json) {
            Ok(true) => self.vectors_call(),
            Ok(false) => self.end_vectors(None),
            Err(reason) => self.end_vectors(Some(reason)),
        }
    }

    /// `Ok(true)` when another page follows.
    fn judge_vectors_page(
        &mut self,
        page: &str,
        items_json: Option<&str>,
    ) -> std::result::Result<bool, Ignored> {
        let corrupt = Ignored::Corrupt;
        let page: WirePage = serde_json::from_str(page).map_err(|_| corrupt)?;
        if page.unknown.is_some() {
            return Err(corrupt);
        }
        let text = match (page.items, items_json) {
            (Some(items), None) => items.get(),
            (None, Some(json)) => json,
            _ => return Err(corrupt),
        };
        let Some(r) = self.vector_read.as_mut() else {
            return Err(corrupt);
        };
        r.bytes_left = r
            .bytes_left
            .checked_sub(text.len() as u64)
            .ok_or(Ignored::TooLarge)?;
        let items: Vec<&RawValue> = serde_json::from_str(text).map_err(|_| corrupt)?;
        if items.len() > SCAN_PAGE_LIMIT {
            return Err(corrupt);
        }
        if r.vectors.scales.len() + items.len() > r.max_entries {
            return Err(Ignored::TooLarge);
        }
        file::push_page(&mut r.vectors, &items, &mut r.last)?;
        match page.next_cursor {
            None | Some(Value::Null) => Ok(false),
            Some(Value::String(cursor)) if !items.is_empty() && !cursor.is_empty() => {
                if !r.cursors.insert(cursor.clone()) {
                    return Err(corrupt);
                }
                r.cursor = Some(cursor);
                Ok(true)
            }
            Some(_) => Err(corrupt),
        }
    }

    /// The vectors of the provider being read end: kept, or ignored for `reason`.
    fn end_vectors(&mut self, reason: Option<Ignored>) -> Result<Next> {
        let r = self
            .vector_read
            .take()
            .ok_or_else(|| GraphError::new(Code::Internal))?;
        let offered = match reason {
            None => Offered::Entries(r.vectors),
            Some(reason) => Offered::Ignored(reason),
        };
        self.vectors.insert(r.provider_id, offered);
        Ok(Next::Done)
    }

    /// The read of `provider_id` failed while its vectors were read (`failed` as
    /// [`ReadCollector::fail`] takes it): the vectors are ignored, the read stands. `false`
    /// when its vectors were not being read.
    pub(super) fn fail_vectors(&mut self, provider_id: &str, failed: &Value) -> Result<bool> {
        if self
            .vector_read
            .as_ref()
            .is_none_or(|r| r.provider_id != provider_id)
        {
            return Ok(false);
        }
        let reason = match failed.get("reason").and_then(Value::as_str) {
            Some("database_call_timeout" | "database_read_timeout") => Ignored::Timeout,
            _ => Ignored::Failed,
        };
        self.end_vectors(Some(reason))?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> String {
        json!({ "provider": { "providerId": "p", "name": "P", "version": "1" }, "sourceRevision": "r1" })
            .to_string()
    }

    /// A collector that read provider `p`'s one record through a view offering `vectors()`:
    /// the call it names once the read ended.
    fn ended(model: Option<(String, usize)>) -> (ReadCollector, Next) {
        let mut c = ReadCollector::default().wanting_vectors(model);
        let first = c.begin("p", &context(), r#"["vectors"]"#).unwrap();
        assert!(matches!(&first, Next::Ask(call) if call.contains("scanCapabilities")));
        let page = json!({ "items": [{ "capabilityId": "a", "name": "A", "description": "D", "whenToUse": "W" }] });
        assert_eq!(c.page(&page.to_string()).unwrap(), Next::Done);
        let next = c.end(&context()).unwrap();
        (c, next)
    }

    fn entry(id: &str) -> Value {
        json!({ "capabilityId": id, "textHash": "00".repeat(16), "scale": 0.5, "vector": "AQID" })
    }

    #[test]
    fn vectors_are_asked_for_after_the_read_and_only_for_a_model() {
        let (_, next) = ended(None);
        assert_eq!(next, Next::Done);
        let (mut c, next) = ended(Some(("m".into(), 3)));
        let Next::Ask(call) = next else {
            panic!("{next:?}")
        };
        let call: Value = serde_json::from_str(&call).unwrap();
        assert_eq!(
            call,
            json!({ "call": "vectors", "args": ["m", { "limit": 1000, "maxBytes": 262144 }], "bound": page_bound(1000) })
        );
        let page = json!({ "items": [entry("a")] });
        assert_eq!(c.page(&page.to_string()).unwrap(), Next::Done);
        let mut reads = c.into_reads().unwrap();
        assert!(matches!(
            reads.vectors.remove("p"),
            Some(Offered::Entries(v)) if v.scales == [0.5] && v.data == [1, 2, 3]
        ));
    }

    #[test]
    fn a_failure_while_vectors_are_read_ignores_them_and_keeps_the_read() {
        for (failed, reason) in [
            (json!({ "code": null }), Ignored::Failed),
            (
                json!({ "reason": "database_call_timeout" }),
                Ignored::Timeout,
            ),
            (
                json!({ "reason": "database_read_timeout" }),
                Ignored::Timeout,
            ),
        ] {
            let (mut c, _) = ended(Some(("m".into(), 3)));
            c.fail("p", &failed.to_string()).unwrap();
            let mut reads = c.into_reads().unwrap();
            assert!(matches!(reads.vectors.remove("p"), Some(Offered::Ignored(r)) if r == reason));
            assert!(!reads.json.unwrap().contains("failed"));
        }
        // A bad page ends the vectors there; the read is over.
        let (mut c, _) = ended(Some(("m".into(), 3)));
        let page = json!({ "items": [entry("a"), entry("b")] });
        assert_eq!(c.page(&page.to_string()).unwrap(), Next::Done);
        let mut reads = c.into_reads().unwrap();
        assert!(matches!(
            reads.vectors.remove("p"),
            Some(Offered::Ignored(Ignored::TooLarge))
        ));
    }
}
