//! Byte-budgeted pages: rows are printed once, measured as they are added, and a page stops at
//! an item boundary when the next row would not fit (reference/core.md §4.3).

use crate::error::{Code, GraphError};
use serde_json::Value;

/// A JSON array of rows being filled under a byte budget that the rest of the page (its
/// skeleton, warnings and cursor) shares.
pub struct Rows {
    json: String,
    count: usize,
}

impl Rows {
    pub fn new() -> Rows {
        Rows::with_capacity(0)
    }

    /// An array whose rows are expected to take about `bytes`.
    pub fn with_capacity(bytes: usize) -> Rows {
        let mut json = String::with_capacity(bytes + 2);
        json.push('[');
        Rows { json, count: 0 }
    }

    /// Bytes the array would take with `row` appended.
    pub fn len_with(&self, row: &str) -> usize {
        self.len() + row.len() + usize::from(self.count > 0)
    }

    pub fn push(&mut self, row: &str) {
        if self.count > 0 {
            self.json.push(',');
        }
        self.json.push_str(row);
        self.count += 1;
    }

    pub fn len(&self) -> usize {
        self.json.len() + 1
    }

    pub fn count(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn finish(mut self) -> String {
        self.json.push(']');
        self.json
    }

    /// Appends a row written in place by `write`, so it is printed once; [`Rows::take_back`]
    /// removes it when it does not fit.
    pub fn append(&mut self, write: impl FnOnce(&mut String)) -> Appended {
        let start = self.json.len();
        if self.count > 0 {
            self.json.push(',');
        }
        let row = self.json.len();
        write(&mut self.json);
        self.count += 1;
        Appended {
            start,
            len: self.json.len() - row,
        }
    }

    /// Removes the row just appended.
    pub fn take_back(&mut self, row: Appended) {
        self.json.truncate(row.start);
        self.count -= 1;
    }

    /// Appends the finished array to `out`.
    pub fn finish_into(&self, out: &mut String) {
        out.push_str(&self.json);
        out.push(']');
    }
}

/// A row appended in place: where it starts in the array, and its own length.
#[derive(Clone, Copy)]
pub struct Appended {
    start: usize,
    pub len: usize,
}

impl Default for Rows {
    fn default() -> Self {
        Rows::new()
    }
}

/// The printed length of a page's warnings, as they accumulate.
#[derive(Clone, Copy, Default)]
pub struct Warnings {
    pub count: usize,
    bytes: usize,
}

impl Warnings {
    pub fn with(self, w: &Value) -> Warnings {
        Warnings {
            count: self.count + 1,
            bytes: self.bytes + crate::json::compact_len(w),
        }
    }

    /// Bytes the warnings add inside their array (elements and separating commas).
    pub fn bytes(&self) -> usize {
        self.bytes + self.count.saturating_sub(1)
    }
}

/// A row that alone exceeds its item budget: left out with a warning, never trimmed.
pub fn oversized_row(qualified_id: &str, budget: &'static str, limit: u64) -> Value {
    GraphError::new(Code::ResultTooLarge)
        .detail("qualifiedId", qualified_id)
        .detail("budget", budget)
        .detail("limit", limit)
        .to_warning()
}

/// A page that cannot hold even its first row.
pub fn no_progress(budget: &'static str, limit: u64) -> GraphError {
    GraphError::new(Code::BudgetExceeded)
        .detail("budget", budget)
        .detail("limit", limit)
}

/// A finished page, refused when it is over its byte budget even without rows (its meta and
/// echoed filters alone): no page ever exceeds its budget.
pub fn within_budget(page: String, budget: &'static str, limit: u64) -> Result<String, GraphError> {
    if page.len() as u64 > limit {
        Err(no_progress(budget, limit))
    } else {
        Ok(page)
    }
}

/// Extra bytes a `"nextCursor":"…"` member adds to an object.
pub fn cursor_member_len(cursor_len: usize) -> usize {
    r#","nextCursor":"""#.len() + cursor_len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_over_its_budget_is_refused_not_served() {
        let page = "x".repeat(301);
        let e = within_budget(page, "catalog.maxBytes", 300).unwrap_err();
        assert_eq!(e.code(), Code::BudgetExceeded);
        assert_eq!(e.details().unwrap()["budget"], "catalog.maxBytes");
        assert_eq!(
            within_budget("ok".into(), "catalog.maxBytes", 2).unwrap(),
            "ok"
        );
    }
}
