//! JSON helpers shared by validation: the non-JSON marker the JS layer substitutes for values
//! only JS can see (functions, getters, cycles, class instances, …), and byte sizes measured the
//! way `JSON.stringify` would print a value.

use serde_json::Value;

/// Key of the marker object `{"$cgNonJson": "<kind>"}` that the JS pure-JSON walk puts where a
/// value was not plain JSON. The walk also marks any user object that carries this key, so a
/// marker is never user data.
pub const NON_JSON_KEY: &str = "$cgNonJson";

/// The key by which a definition or config file names its JSON Schema, for editors. Its value
/// is text, checked as the file's other strings are, and otherwise ignored: it is never part
/// of a record, so never of a static revision.
pub const SCHEMA_KEY: &str = "$schema";

/// Whether `s` is blank: nothing but white space and byte order marks (U+FEFF, which
/// JavaScript's `trim()` removes too), so no name or text is made of invisible characters only.
pub fn is_blank(s: &str) -> bool {
    s.chars().all(|c| c.is_whitespace() || c == '\u{feff}')
}

/// Whether JSON prints `s` as it is, between quotes: no quote, backslash or control character
/// (serde_json, like `JSON.stringify`, leaves every other character as it is).
pub fn prints_as_is(s: &str) -> bool {
    // No early exit: the fold runs over wide words, far faster than a byte loop that can stop.
    !s.bytes().fold(false, |any, b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    })
}

/// Bounds of the pure-JSON walk of a query's or a tool call's arguments: at most this many JSON
/// values (objects, arrays and scalars alike) and this many characters (UTF-16 code units, never
/// more than the UTF-8 bytes) of JSON text. The walk stops where either is crossed and prints
/// only a marker saying which, so arguments of any size are refused in the time the bound takes
/// to walk. No budget admits an argument near them; configs (inline definitions, reload
/// definitions) are not bounded by the walk.
pub const ARGUMENT_MAX_VALUES: u64 = 50_000;
pub const ARGUMENT_MAX_CHARS: u64 = 16_777_216;

/// What the walk prints for a value it stopped walking at a bound (past `maxValues`, past
/// `maxChars`): the whole value is refused, so nothing of it is printed.
pub const TOO_MANY_VALUES: &str = r#"{"$cgNonJson":"too_many_values"}"#;
pub const TOO_MANY_CHARS: &str = r#"{"$cgNonJson":"too_many_chars"}"#;

/// Bounds of the pure-JSON walk of `providerFromTools`'s options (tool lists with their
/// schemas are larger than a query's arguments).
pub const TOOLS_WALK_MAX_VALUES: u64 = 2_000_000;
pub const TOOLS_WALK_MAX_CHARS: u64 = 67_108_864;

/// The deepest nesting of arguments, in objects and arrays: the walk marks a value deeper than
/// this as not plain JSON, and a text measured before it is parsed is refused past it.
pub const ARGUMENT_MAX_DEPTH: u64 = 64;

/// Bounds of the walk of what an SDK dispatcher is handed (a message's tool calls, an output's
/// items, a message's content blocks): the list as a whole, and any one string in it, which
/// holds at most a call's arguments text. Each call's arguments are then bounded as any call's.
pub const DISPATCH_WALK_MAX_VALUES: u64 = 200_000;
pub const DISPATCH_WALK_MAX_CHARS: u64 = 67_108_864;

/// The walk bounds as the JS layer takes them (engine tables).
pub fn walk_bounds_json() -> String {
    serde_json::json!({
        "arguments": { "maxValues": ARGUMENT_MAX_VALUES, "maxChars": ARGUMENT_MAX_CHARS, "maxDepth": ARGUMENT_MAX_DEPTH },
        "tools": { "maxValues": TOOLS_WALK_MAX_VALUES, "maxChars": TOOLS_WALK_MAX_CHARS },
        "dispatch": {
            "maxValues": DISPATCH_WALK_MAX_VALUES,
            "maxChars": DISPATCH_WALK_MAX_CHARS,
            "maxStringChars": ARGUMENT_MAX_CHARS,
        },
    })
    .to_string()
}

/// The first bound a JSON text crossed, measured before it is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    Depth,
    Values,
}

/// Measures JSON `text` without parsing it, stopping at the first bound crossed: its nesting
/// depth, and its JSON values counted as the walk counts them (objects, arrays and scalars
/// alike; a key is no value), which in JSON text are one, plus one per comma, plus one per
/// container that is not empty. Text that is not JSON is measured all the same: its parse,
/// which only text within the bounds reaches, refuses it.
pub fn measure_text(text: &[u8], max_depth: u64, max_values: u64) -> Result<(), Over> {
    let (mut depth, mut values) = (0u64, 1u64);
    let (mut in_string, mut escaped, mut opened) = (false, false, false);
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        let closing = matches!(b, b']' | b'}');
        if opened && !closing {
            values += 1;
        }
        opened = false;
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                opened = true;
                if depth > max_depth {
                    return Err(Over::Depth);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' => values += 1,
            _ => {}
        }
        if values > max_values {
            return Err(Over::Values);
        }
    }
    Ok(())
}

/// The marker the walk puts under a key that is not well-formed text (a lone surrogate), the key
/// itself printed with U+FFFD in its place.
pub fn is_lone_surrogate_key(v: &Value) -> bool {
    matches!(v, Value::Object(m) if m.len() == 1
        && m.get(NON_JSON_KEY).and_then(Value::as_str) == Some("lone_surrogate_key"))
}

pub fn is_non_json_marker(v: &Value) -> bool {
    matches!(v, Value::Object(m) if m.len() == 1 && m.contains_key(NON_JSON_KEY))
}

/// Compact JSON of a serialisable value (the engine's records always serialise).
pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// UTF-8 length of the compact JSON text of `v` as `JSON.stringify` prints it (key order does
/// not change the length, so this is also the canonical JSON's length).
pub fn compact_len(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => js_number(n).len(),
        Value::String(s) => string_len(s),
        Value::Array(items) => {
            2 + items.iter().map(compact_len).sum::<usize>() + items.len().saturating_sub(1)
        }
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| string_len(k) + 1 + compact_len(v))
                .sum::<usize>()
                + map.len().saturating_sub(1)
        }
    }
}

/// UTF-8 length of `s` printed as a JSON string, quotes included, measured without printing it.
pub fn quoted_len(s: &str) -> usize {
    string_len(s)
}

fn string_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x0c | b'\n' | b'\r' | b'\t' => 2,
            0x00..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// `Number.prototype.toString` for a JSON number (shortest round-trip digits, JS exponent rules).
pub fn js_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f == 0.0 {
        return "0".into();
    }
    // `{:e}` gives the shortest round-trip digits as `d.ddde±x`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let n = exp + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let sign = if n - 1 < 0 { '-' } else { '+' };
        let rest = if k > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        format!("{}{rest}e{sign}{}", &digits[..1], (n - 1).abs())
    };
    if f < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}

/// [`compact_len`] of an object without one of its keys (an inline definition's provider part
/// is measured without its `capabilities`).
pub fn compact_len_without(map: &serde_json::Map<String, Value>, skip: &str) -> usize {
    let kept = map.iter().filter(|(k, _)| k.as_str() != skip);
    let count = kept.clone().count();
    2 + kept
        .map(|(k, v)| string_len(k) + 1 + compact_len(v))
        .sum::<usize>()
        + count.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blank_is_white_space_and_byte_order_marks_only() {
        for blank in ["", " ", "\t\n", "\u{feff}", "\u{feff} \u{feff}", "\u{3000}"] {
            assert!(is_blank(blank), "{blank:?}");
        }
        for text in ["a", "\u{feff}a", " a ", "\u{200b}"] {
            assert!(!is_blank(text), "{text:?}");
        }
    }

    #[test]
    fn compact_len_matches_compact_serialisation() {
        for v in [
            json!({"a": [1, "x\n\u{1}", null, true, false], "é": {"b": "\"\\"}}),
            json!([]),
            json!({}),
            json!("中文"),
        ] {
            assert_eq!(
                compact_len(&v),
                serde_json::to_string(&v).unwrap().len(),
                "{v}"
            );
        }
    }

    #[test]
    fn numbers_print_like_javascript() {
        let cases = [
            ("1", "1"),
            ("1.5", "1.5"),
            ("1e21", "1e+21"),
            ("1e-7", "1e-7"),
            ("1e2", "100"),
            ("0.000001", "0.000001"),
            ("-2.5e-10", "-2.5e-10"),
            ("1e20", "100000000000000000000"),
            ("1.2345e25", "1.2345e+25"),
        ];
        for (input, js) in cases {
            let n: serde_json::Number = serde_json::from_str(input).unwrap();
            assert_eq!(js_number(&n), js, "{input}");
        }
    }

    #[test]
    fn markers_are_single_key_objects() {
        assert!(is_non_json_marker(&json!({"$cgNonJson": "function"})));
        assert!(!is_non_json_marker(
            &json!({"$cgNonJson": "function", "x": 1})
        ));
        assert!(!is_non_json_marker(&json!("$cgNonJson")));
    }

    #[test]
    fn text_is_measured_as_the_walk_counts_it() {
        let count = |text: &str| {
            (1..100)
                .find(|&max| measure_text(text.as_bytes(), 64, max).is_ok())
                .unwrap()
        };
        for (text, values) in [
            ("1", 1),
            ("[]", 1),
            ("{}", 1),
            (r#"{"a":1,"b":[]}"#, 3),
            ("[[1,2],3]", 5),
            (r#" { "a" : [ ] , "b" : { "c" : "[,{" } } "#, 4),
            (r#"["\"],[", "x\\"]"#, 3),
        ] {
            assert_eq!(count(text), values, "{text}");
        }
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert_eq!(measure_text(deep.as_bytes(), 64, 1000), Err(Over::Depth));
        assert!(measure_text(&deep.as_bytes()[1..], 64, 1000).is_ok());
        // It stops at the bound: what follows is never read.
        let mut wide = b"[1,1,1,".to_vec();
        wide.extend(std::iter::repeat_n(b'[', 1000));
        assert_eq!(measure_text(&wide, 64, 3), Err(Over::Values));
    }
}
