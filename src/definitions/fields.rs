//! Typed access to raw JSON definition values with precise errors: every failure names the
//! provider, capability, field path, file and a stable reason (SPEC §14 D7).

use crate::error::{Code, GraphError};
use crate::json::{compact_len, is_non_json_marker};
use serde_json::{Map, Value};

/// Canonical JSON of one provider or capability record may not exceed this many bytes.
pub const RECORD_MAX_BYTES: usize = 262_144;

/// Who a definition error is about.
#[derive(Clone, Copy, Default)]
pub struct Origin<'a> {
    pub provider_id: Option<&'a str>,
    pub capability_id: Option<&'a str>,
    pub file: Option<&'a str>,
}

impl<'a> Origin<'a> {
    pub fn with_capability(self, capability_id: &'a str) -> Origin<'a> {
        Origin {
            capability_id: Some(capability_id),
            ..self
        }
    }

    pub fn fail(&self, code: Code, field: Option<&str>, reason: &str) -> GraphError {
        let mut e = GraphError::new(code);
        if let Some(p) = self.provider_id {
            e = e.detail("providerId", p);
        }
        if let Some(c) = self.capability_id {
            e = e.detail("capabilityId", c);
        }
        if let Some(f) = field.filter(|f| !f.is_empty()) {
            e = e.detail("field", f);
        }
        if let Some(f) = self.file {
            e = e.detail("file", f);
        }
        e.detail("reason", reason)
    }

    /// A `CG_DEFINITION_INVALID` about `field`.
    pub fn invalid(&self, field: &str, reason: &str) -> GraphError {
        self.fail(Code::DefinitionInvalid, Some(field), reason)
    }
}

/// `prefix` + `key` as a JS accessor path (`knowledge[0].title`).
pub fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

pub fn index(prefix: &str, i: usize) -> String {
    format!("{prefix}[{i}]")
}

/// The reason for a value of the wrong type: a marker left by the JS pure-JSON walk says why.
fn type_reason(v: &Value, reason: &'static str) -> &'static str {
    if is_non_json_marker(v) {
        "non_json_value"
    } else {
        reason
    }
}

pub fn check_record_size(o: &Origin, v: &Value, field: &str) -> Result<(), GraphError> {
    if compact_len(v) > RECORD_MAX_BYTES {
        return Err(o
            .invalid(field, "record_too_large")
            .detail("maxBytes", RECORD_MAX_BYTES));
    }
    Ok(())
}

pub fn object<'v>(
    o: &Origin,
    v: &'v Value,
    field: &str,
) -> Result<&'v Map<String, Value>, GraphError> {
    match v {
        Value::Object(m) if !is_non_json_marker(v) => Ok(m),
        _ => Err(o.invalid(field, type_reason(v, "object_required"))),
    }
}

/// Rejects unknown keys (the first, in input order) and then missing required keys.
pub fn check_keys(
    o: &Origin,
    map: &Map<String, Value>,
    allowed: &[&str],
    required: &[&str],
    prefix: &str,
) -> Result<(), GraphError> {
    match key_problems(o, map, allowed, required, prefix)
        .into_iter()
        .next()
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Every unknown key (in input order), then every missing required key.
pub fn key_problems(
    o: &Origin,
    map: &Map<String, Value>,
    allowed: &[&str],
    required: &[&str],
    prefix: &str,
) -> Vec<GraphError> {
    // A key that was not well-formed text (the JS walk printed a stand-in and marked its value)
    // is not plain JSON, as a value would not be, wherever it stands.
    let unknown = map
        .iter()
        .filter(|(k, _)| !allowed.contains(&k.as_str()))
        .map(|(key, v)| {
            let reason = if crate::json::is_lone_surrogate_key(v) {
                "non_json_value"
            } else {
                "unknown_key"
            };
            o.invalid(&join(prefix, key), reason)
        });
    let missing = required
        .iter()
        .filter(|k| !map.contains_key(**k))
        .map(|key| o.invalid(&join(prefix, key), "required"));
    unknown.chain(missing).collect()
}

/// A non-blank string (never trimmed or normalised).
pub fn text(o: &Origin, v: &Value, field: &str) -> Result<String, GraphError> {
    match v {
        Value::String(s) if !crate::json::is_blank(s) => Ok(s.clone()),
        _ => Err(o.invalid(field, type_reason(v, "nonempty_string_required"))),
    }
}

pub fn optional_text(
    o: &Origin,
    map: &Map<String, Value>,
    key: &str,
    prefix: &str,
) -> Result<Option<String>, GraphError> {
    map.get(key)
        .map(|v| text(o, v, &join(prefix, key)))
        .transpose()
}

/// A non-blank string of at most `max_bytes` UTF-8 bytes.
pub fn bounded_text(
    o: &Origin,
    map: &Map<String, Value>,
    key: &str,
    prefix: &str,
    max_bytes: usize,
) -> Result<Option<String>, GraphError> {
    let value = optional_text(o, map, key, prefix)?;
    if value.as_ref().is_some_and(|s| s.len() > max_bytes) {
        return Err(o
            .invalid(&join(prefix, key), "too_long")
            .detail("maxBytes", max_bytes));
    }
    Ok(value)
}

pub fn array<'v>(o: &Origin, v: &'v Value, field: &str) -> Result<&'v Vec<Value>, GraphError> {
    match v {
        Value::Array(items) => Ok(items),
        _ => Err(o.invalid(field, type_reason(v, "array_required"))),
    }
}

pub fn is_marker(v: &Value) -> bool {
    is_non_json_marker(v)
}
