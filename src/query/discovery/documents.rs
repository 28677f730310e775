//! Pages of knowledge document references (specification documents, collection members):
//! sorted by `knowledgeId`, resumed after the last ID served, bounded by count and bytes.
//! Bodies are never read here.

use crate::cursor::{self, Binding};
use crate::definitions::model::DocumentRef;
use crate::error::{Code, GraphError, Result};
use crate::json::to_json;
use crate::query::args::invalid;
use crate::query::page::{cursor_member_len, no_progress, Rows};
use crate::scope::Completeness;

pub struct DocPage {
    /// The JSON array of the page's documents.
    pub items: String,
    pub next_cursor: Option<String>,
}

impl DocPage {
    pub fn completeness(&self) -> Completeness {
        if self.next_cursor.is_some() {
            Completeness::Truncated
        } else {
            Completeness::Complete
        }
    }
}

pub struct DocLimits {
    pub count: u64,
    pub max_item_bytes: u64,
    pub item_budget: &'static str,
    pub max_bytes: u64,
    pub page_budget: &'static str,
}

/// One page of `docs` (sorted by ID). `fixed` is what the rest of the result takes.
pub fn doc_page(
    docs: &[DocumentRef],
    cursor: Option<&str>,
    binding: &Binding,
    limits: &DocLimits,
    fixed: usize,
) -> Result<DocPage> {
    let start = match cursor {
        None => 0,
        Some(c) => {
            let after = cursor::decode(c, binding)?;
            docs.iter()
                .position(|d| d.knowledge_id == after)
                .map(|i| i + 1)
                .ok_or_else(|| invalid("cursor", "cursor returned by the same query"))?
        }
    };
    let longest = "K".repeat(128);
    let reserve = cursor_member_len(cursor::encode(binding, &longest)?.len());
    let mut rows = Rows::new();
    let mut end = start;
    for doc in &docs[start..] {
        if rows.count() as u64 == limits.count {
            break;
        }
        let row = to_json(doc);
        if row.len() as u64 > limits.max_item_bytes {
            return Err(GraphError::new(Code::ResultTooLarge)
                .detail("knowledgeId", doc.knowledge_id.as_str())
                .detail("budget", limits.item_budget)
                .detail("limit", limits.max_item_bytes));
        }
        if (fixed + rows.len_with(&row) + reserve) as u64 > limits.max_bytes {
            if rows.is_empty() {
                return Err(no_progress(limits.page_budget, limits.max_bytes));
            }
            break;
        }
        rows.push(&row);
        end += 1;
    }
    let next_cursor = (end > start && end < docs.len())
        .then(|| cursor::encode(binding, &docs[end - 1].knowledge_id))
        .transpose()?;
    Ok(DocPage {
        items: rows.finish(),
        next_cursor,
    })
}

/// `{"items":[…],"completeness":"…","nextCursor"?}` — a document page embedded in a result.
pub fn embedded(page: &DocPage) -> String {
    match &page.next_cursor {
        Some(c) => format!(
            r#"{{"items":{},"completeness":"truncated","nextCursor":"{c}"}}"#,
            page.items
        ),
        None => format!(r#"{{"items":{},"completeness":"complete"}}"#, page.items),
    }
}
