//! `doctor`'s list of a provider's problems: one entry per problem, the way a compiler lists
//! them, ordered and bounded so a provider with thousands of broken files stays readable.

use crate::error::GraphError;
use serde::Serialize;
use serde_json::Value;

/// Most problems listed for one provider; the rest are counted in `omitted`.
pub const MAX_PROBLEMS: usize = 100;

#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(rename = "capabilityId", skip_serializing_if = "Option::is_none")]
    pub capability_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub code: &'static str,
    pub reason: String,
}

impl Problem {
    pub fn of(e: &GraphError) -> Problem {
        let detail = |key: &str| {
            e.details()
                .and_then(|d| d.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        // A cycle has no reason of its own: it is the relation that loops.
        let reason = detail("reason").unwrap_or_else(|| match detail("relation") {
            Some(_) => "cycle".to_owned(),
            None => "invalid".to_owned(),
        });
        Problem {
            file: detail("file"),
            capability_id: detail("capabilityId"),
            field: detail("field"),
            code: e.code().as_str(),
            reason,
        }
    }
}

/// `{ problems, omitted }`: sorted by file, capability, field and code, at most
/// [`MAX_PROBLEMS`].
pub fn report(errors: &[GraphError]) -> Value {
    let mut problems: Vec<Problem> = errors.iter().map(Problem::of).collect();
    problems.sort();
    problems.dedup();
    let omitted = problems.len().saturating_sub(MAX_PROBLEMS);
    problems.truncate(MAX_PROBLEMS);
    serde_json::json!({ "problems": problems, "omitted": omitted })
}
