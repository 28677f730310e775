//! Query arguments: plain JSON objects (the JS layer walked them strictly) whose keys are
//! checked here, once. Unknown keys and `null` are `CG_INPUT_INVALID` with
//! `details { field, expected }`.

use crate::error::Result;
use crate::ids::{is_id, parse_qualified};
use crate::json::is_non_json_marker;
use serde_json::{Map, Value};

pub use crate::error::{input_invalid as invalid, input_too_large as too_large};

/// A query object with its keys checked against the verb's list.
pub struct Args {
    map: Map<String, Value>,
}

impl Args {
    /// Parses `json` (an object, or `null`/absent meaning `{}` where the verb allows it).
    pub fn parse(json: &str, allowed: &[&str]) -> Result<Args> {
        let v: Value = serde_json::from_str(json).map_err(|_| invalid("$", "object"))?;
        Args::from_value(v, allowed)
    }

    pub fn from_value(v: Value, allowed: &[&str]) -> Result<Args> {
        if is_non_json_marker(&v) {
            return Err(invalid("$", "object"));
        }
        let Value::Object(map) = v else {
            return Err(invalid("$", "object"));
        };
        if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(invalid(k, &format!("one of: {}", allowed.join(", "))));
        }
        Ok(Args { map })
    }

    /// The value of `key`; `null` is never "omitted".
    pub fn get(&self, key: &str) -> Result<Option<&Value>> {
        match self.map.get(key) {
            Some(Value::Null) => Err(invalid(key, "a value (omit the key instead of null)")),
            other => Ok(other),
        }
    }

    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    pub fn string(&self, key: &str) -> Result<Option<&str>> {
        match self.get(key)? {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(key, "string")),
        }
    }

    pub fn array(&self, key: &str) -> Result<Option<&Vec<Value>>> {
        match self.get(key)? {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(_) => Err(invalid(key, "array")),
        }
    }

    pub fn object(&self, key: &str) -> Result<Option<&Map<String, Value>>> {
        match self.get(key)? {
            None => Ok(None),
            Some(v @ Value::Object(m)) if !is_non_json_marker(v) => Ok(Some(m)),
            Some(_) => Err(invalid(key, "object")),
        }
    }
}

/// A required, non-empty list of at most `max` references (`ids`, `selected`).
pub fn target_list<'a>(args: &'a Args, key: &str, max: u64) -> Result<&'a Vec<Value>> {
    let list = args
        .array(key)?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid(key, "array of 1 or more capability IDs"))?;
    if list.len() as u64 > max {
        return Err(too_large(key, max));
    }
    Ok(list)
}

/// The two arguments of a verb called as `verb(target, query)`, sent as a JSON pair.
pub fn pair(json: &str) -> Result<(Value, Value)> {
    match serde_json::from_str(json) {
        Ok(Value::Array(mut items)) if items.len() == 2 => {
            let query = items.pop().unwrap_or_default();
            Ok((items.pop().unwrap_or_default(), query))
        }
        _ => Err(invalid("$", "two arguments")),
    }
}

/// A capability reference as a verb receives it: `provider::capability`, `{ providerId,
/// capabilityId }`, or — on a bound facade — a local ID or `{ capabilityId }`.
pub fn capability_ref<'v>(
    v: &'v Value,
    field: &str,
    bound: Option<&'v str>,
) -> Result<(&'v str, &'v str)> {
    capability_ref_at(v, || field.to_owned(), bound)
}

/// [`capability_ref`] with the field's name printed only for an error (`ids[3]`).
pub fn capability_ref_at<'v>(
    v: &'v Value,
    field: impl Fn() -> String,
    bound: Option<&'v str>,
) -> Result<(&'v str, &'v str)> {
    let expected = if bound.is_some() {
        "capability ID, qualified ID or { providerId?, capabilityId }"
    } else {
        "qualified capability ID or { providerId, capabilityId }"
    };
    let bad = || invalid(&field(), expected);
    match v {
        Value::String(s) => {
            if s.contains("::") {
                parse_qualified(s).ok_or_else(bad)
            } else {
                match bound {
                    Some(p) if is_id(s) => Ok((p, s)),
                    _ => Err(bad()),
                }
            }
        }
        Value::Object(m) if !is_non_json_marker(v) => {
            if let Some(k) = m
                .keys()
                .find(|k| *k != "providerId" && *k != "capabilityId")
            {
                return Err(invalid(
                    &format!("{}.{k}", field()),
                    "one of: providerId, capabilityId",
                ));
            }
            let capability = m
                .get("capabilityId")
                .and_then(Value::as_str)
                .filter(|s| is_id(s))
                .ok_or_else(bad)?;
            let provider = match (m.get("providerId"), bound) {
                (None, Some(p)) => p,
                (Some(Value::String(p)), _) if is_id(p) => p.as_str(),
                _ => return Err(bad()),
            };
            Ok((provider, capability))
        }
        _ => Err(bad()),
    }
}

/// The capability a document verb is about: `capability` (a reference), or on a bound facade
/// its local `capabilityId` instead, never both.
pub fn named_capability<'v>(args: &'v Args, bound: Option<&'v str>) -> Result<(&'v str, &'v str)> {
    match (args.get("capability")?, args.get("capabilityId")?, bound) {
        (Some(target), None, _) => capability_ref(target, "capability", bound),
        (None, Some(id), Some(p)) => id
            .as_str()
            .filter(|s| is_id(s))
            .map(|c| (p, c))
            .ok_or_else(|| invalid("capabilityId", "local capability ID")),
        (Some(_), Some(_), Some(_)) => Err(invalid(
            "capabilityId",
            "absent when capability is given (one of capability, capabilityId)",
        )),
        (_, Some(_), None) => Err(invalid(
            "capabilityId",
            "absent (the unbound graph takes capability)",
        )),
        (None, None, _) => Err(invalid("capability", "capability ID")),
    }
}

/// A `limit`-like number: a safe integer `>= min`; above `max` it is clamped.
pub fn clamped_integer(v: &Value, field: &str, min: u64, max: u64) -> Result<u64> {
    let n = v
        .as_u64()
        .filter(|n| *n >= min && *n < (1 << 53))
        .ok_or_else(|| invalid(field, &format!("integer >= {min}")))?;
    Ok(n.min(max))
}

/// `CG_INPUT_TOO_LARGE` for arguments the walk stopped at its bound (anywhere in them: a verb's
/// two arguments are walked one by one), before any other rule. A user's own text can never
/// hold a marker: its quotes are escaped and an object with the marker key is marked itself.
pub fn check_walked(args: &str) -> Result<()> {
    use crate::json::{ARGUMENT_MAX_CHARS, ARGUMENT_MAX_VALUES, TOO_MANY_CHARS, TOO_MANY_VALUES};
    let refuse = |limit: u64, reason: &str| Err(too_large("$", limit).detail("reason", reason));
    if args.contains(TOO_MANY_VALUES) {
        return refuse(ARGUMENT_MAX_VALUES, "argument_values");
    }
    if args.contains(TOO_MANY_CHARS) {
        return refuse(ARGUMENT_MAX_CHARS, "argument_chars");
    }
    Ok(())
}

/// `CG_INPUT_TOO_LARGE` for JSON text from outside (a tool call's arguments text, a transport's
/// message) that is over the arguments' bounds, measured before it is parsed: `None` is a text
/// already found longer than `ARGUMENT_MAX_CHARS` by its length.
pub fn check_text(text: Option<&[u8]>, field: &str) -> Result<()> {
    use crate::json::{measure_text, Over};
    use crate::json::{ARGUMENT_MAX_CHARS, ARGUMENT_MAX_DEPTH, ARGUMENT_MAX_VALUES};
    let refuse = |limit: u64, reason: &str| Err(too_large(field, limit).detail("reason", reason));
    let Some(text) = text else {
        return refuse(ARGUMENT_MAX_CHARS, "argument_chars");
    };
    match measure_text(text, ARGUMENT_MAX_DEPTH, ARGUMENT_MAX_VALUES) {
        Ok(()) => Ok(()),
        Err(Over::Depth) => refuse(ARGUMENT_MAX_DEPTH, "argument_depth"),
        Err(Over::Values) => refuse(ARGUMENT_MAX_VALUES, "argument_values"),
    }
}

/// `CG_INPUT_TOO_LARGE` naming `field` for a list an SDK dispatcher was handed that the walk
/// stopped at the dispatch bound (`walked` is what it printed); `None` for anything else.
pub fn dispatch_refused(walked: &str, field: &str) -> Option<crate::error::GraphError> {
    use crate::json::{DISPATCH_WALK_MAX_CHARS, DISPATCH_WALK_MAX_VALUES};
    use crate::json::{TOO_MANY_CHARS, TOO_MANY_VALUES};
    let (limit, reason) = match walked {
        TOO_MANY_VALUES => (DISPATCH_WALK_MAX_VALUES, "argument_values"),
        TOO_MANY_CHARS => (DISPATCH_WALK_MAX_CHARS, "argument_chars"),
        _ => return None,
    };
    Some(too_large(field, limit).detail("reason", reason))
}

/// `parseQualifiedId(value)`: `"p::c"` → `{"providerId":"p","capabilityId":"c"}`.
pub fn parse_qualified_id(json: &str) -> Result<String> {
    check_walked(json)?;
    let v: Value =
        serde_json::from_str(json).map_err(|_| invalid("$", "qualified capability ID"))?;
    let (p, c) = v
        .as_str()
        .and_then(parse_qualified)
        .ok_or_else(|| invalid("$", "qualified capability ID"))?;
    Ok(serde_json::json!({ "providerId": p, "capabilityId": c }).to_string())
}

/// `formatQualifiedId(value)`: `{ providerId, capabilityId }` → `"p::c"` (as JSON).
pub fn format_qualified_id(json: &str) -> Result<String> {
    check_walked(json)?;
    let v: Value =
        serde_json::from_str(json).map_err(|_| invalid("$", "{ providerId, capabilityId }"))?;
    if !v.is_object() {
        return Err(invalid("$", "{ providerId, capabilityId }"));
    }
    let (p, c) = capability_ref(&v, "$", None)?;
    Ok(Value::from(crate::ids::format_qualified(p, c)).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;
    use serde_json::json;

    #[test]
    fn unknown_keys_and_nulls_are_rejected() {
        let e = Args::parse(r#"{"ids":[],"nope":1}"#, &["ids"])
            .err()
            .unwrap();
        assert_eq!(e.code(), Code::InputInvalid);
        assert_eq!(e.details().unwrap()["field"], "nope");
        let a = Args::parse(r#"{"ids":null}"#, &["ids"]).unwrap();
        assert!(a.get("ids").is_err());
        assert!(Args::parse("[]", &[]).is_err());
        assert!(Args::parse(r#"{"$cgNonJson":"function"}"#, &["$cgNonJson"]).is_err());
    }

    #[test]
    fn capability_refs_accept_both_forms() {
        assert_eq!(
            capability_ref(&json!("a::b"), "id", None).unwrap(),
            ("a", "b")
        );
        assert_eq!(
            capability_ref(&json!({"providerId": "a", "capabilityId": "b"}), "id", None).unwrap(),
            ("a", "b")
        );
        assert_eq!(
            capability_ref(&json!("b"), "id", Some("a")).unwrap(),
            ("a", "b")
        );
        assert_eq!(
            capability_ref(&json!({"capabilityId": "b"}), "id", Some("a")).unwrap(),
            ("a", "b")
        );
        for bad in [
            json!("b"),
            json!({"capabilityId": "b"}),
            json!("a::b::c"),
            json!("::x"),
            json!("a::"),
            json!(3),
            json!({"providerId": "a", "capabilityId": "b", "x": 1}),
        ] {
            assert_eq!(
                capability_ref(&bad, "id", None).unwrap_err().code(),
                Code::InputInvalid,
                "{bad}"
            );
        }
    }

    #[test]
    fn arguments_stopped_at_the_walk_bound_are_too_large() {
        use crate::json::{
            ARGUMENT_MAX_CHARS, ARGUMENT_MAX_VALUES, TOO_MANY_CHARS, TOO_MANY_VALUES,
        };
        for (text, limit, reason) in [
            (
                TOO_MANY_VALUES.to_owned(),
                ARGUMENT_MAX_VALUES,
                "argument_values",
            ),
            (
                format!("[{{}},{TOO_MANY_CHARS}]"),
                ARGUMENT_MAX_CHARS,
                "argument_chars",
            ),
        ] {
            let e = check_walked(&text).unwrap_err();
            assert_eq!(e.code(), Code::InputTooLarge);
            let details = e.to_json_value()["details"].clone();
            assert_eq!(
                details,
                json!({ "field": "$", "limit": limit, "reason": reason })
            );
        }
        // A user's string holding the marker's text is escaped by the walk: never a refusal.
        let escaped = serde_json::to_string(TOO_MANY_VALUES).unwrap();
        assert!(check_walked(&format!(r#"{{"a":{escaped}}}"#)).is_ok());
    }
}
