//! Identifier formats (reference/definitions.md §4) and qualified capability IDs.

/// Separator of the qualified display form `provider::capability`.
pub const QUALIFIED_SEPARATOR: &str = "::";

fn id_shape(s: &str, max_len: usize, first: fn(u8) -> bool, rest: fn(u8) -> bool) -> bool {
    let bytes = s.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= max_len
        && first(bytes[0])
        && bytes[1..].iter().all(|&b| rest(b))
}

/// Longest provider, capability or knowledge ID, in bytes.
pub const ID_MAX_BYTES: usize = 128;

/// `is_id` as a regular expression, for JSON Schemas given to models.
pub const ID_PATTERN: &str = "^[a-z][a-z0-9._-]{0,127}$";
/// `is_knowledge_id` as a regular expression.
pub const KNOWLEDGE_ID_PATTERN: &str = "^[A-Za-z][A-Za-z0-9._-]{0,127}$";

/// Provider and capability IDs: `ID_PATTERN`.
pub fn is_id(s: &str) -> bool {
    id_shape(
        s,
        ID_MAX_BYTES,
        |b| b.is_ascii_lowercase(),
        |b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'),
    )
}

/// Knowledge IDs and document roles: `KNOWLEDGE_ID_PATTERN`.
pub fn is_knowledge_id(s: &str) -> bool {
    id_shape(
        s,
        ID_MAX_BYTES,
        |b| b.is_ascii_alphabetic(),
        |b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'),
    )
}

/// Knowledge root aliases: `^[A-Za-z][A-Za-z0-9_-]{0,63}$` (no dot).
pub fn is_root_alias(s: &str) -> bool {
    id_shape(
        s,
        64,
        |b| b.is_ascii_alphabetic(),
        |b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'),
    )
}

/// Splits `provider::capability` (exactly one `::`, both parts valid IDs).
pub fn parse_qualified(s: &str) -> Option<(&str, &str)> {
    let (provider, capability) = s.split_once(QUALIFIED_SEPARATOR)?;
    (is_id(provider) && is_id(capability)).then_some((provider, capability))
}

pub fn format_qualified(provider: &str, capability: &str) -> String {
    let mut s = String::with_capacity(provider.len() + 2 + capability.len());
    s.push_str(provider);
    s.push_str(QUALIFIED_SEPARATOR);
    s.push_str(capability);
    s
}

/// Hex digits of a name's hash that a capability ID made from the name takes on a collision.
pub const NAME_HASH_HEX: usize = 8;

/// The words of a name given outside the engine (a host's tool name), lower-cased: every
/// character that is not an ASCII letter or digit is a break, and so is a camelCase boundary
/// (`getWeather`, `HTTPServer` → `http` `server`; `base64Encode` → `base64` `encode`).
pub fn name_words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !word.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                words.push(std::mem::take(&mut word));
            }
        }
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The capability ID for a name given outside the engine: its [`name_words`] joined by `_`,
/// `tool` in front when it would not start with a letter (`tool` alone when it has no word),
/// cut to `ID_MAX_BYTES`.
pub fn id_from_name(name: &str) -> String {
    fitted(name_words(name).join("_"), ID_MAX_BYTES)
}

/// [`id_from_name`] cut to leave room for `_` and the first `hex` (≤ 64) hex digits of the
/// name's blake3 hash, which it ends with: two names with the same ID tell apart this way.
pub fn id_from_name_with_hash(name: &str, hex: usize) -> String {
    let hex = hex.min(64);
    let mut id = fitted(name_words(name).join("_"), ID_MAX_BYTES - 1 - hex);
    id.push('_');
    id.push_str(&blake3::hash(name.as_bytes()).to_hex()[..hex]);
    id
}

/// `base` starting with a letter, at most `max` bytes (ASCII), and ending with no break.
fn fitted(base: String, max: usize) -> String {
    let mut id = match base.bytes().next() {
        None => "tool".to_owned(),
        Some(b) if b.is_ascii_lowercase() => base,
        Some(_) => format!("tool_{base}"),
    };
    id.truncate(max);
    while id.ends_with('_') {
        id.pop();
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_documented_pattern() {
        for ok in [
            "a",
            "acme.http",
            "route.validation",
            "a-b_c.d9",
            &"a".repeat(128),
        ] {
            assert!(is_id(ok), "{ok}");
        }
        for bad in [
            "",
            "A",
            "0a",
            "a b",
            "a:b",
            " a",
            "a\n",
            "中",
            &"a".repeat(129),
            "a::b",
        ] {
            assert!(!is_id(bad), "{bad:?}");
        }
        assert!(is_knowledge_id("D-02") && is_knowledge_id("SPEC-01") && !is_knowledge_id("1x"));
        assert!(
            is_root_alias("docs_1-x") && !is_root_alias("do.cs") && !is_root_alias(&"a".repeat(65))
        );
    }

    #[test]
    fn qualified_ids_need_exactly_one_separator_and_valid_parts() {
        assert_eq!(
            parse_qualified("seed.http::route"),
            Some(("seed.http", "route"))
        );
        for bad in [
            "", "route", "::x", "a::", "a::b::c", "a:::b", "A::b", "a::b:c", "a::b\n",
        ] {
            assert_eq!(parse_qualified(bad), None, "{bad:?}");
        }
        assert_eq!(format_qualified("a", "b"), "a::b");
    }

    #[test]
    fn names_become_ids_word_by_word() {
        for (name, id) in [
            ("get_weather", "get_weather"),
            ("getWeather", "get_weather"),
            ("GetWeather", "get_weather"),
            ("get-weather", "get_weather"),
            ("get weather", "get_weather"),
            ("github.create_issue", "github_create_issue"),
            ("HTTPServerStatus", "http_server_status"),
            ("parseJSON", "parse_json"),
            ("v2Api", "v2_api"),
            ("base64Encode", "base64_encode"),
            ("__private__tool", "private_tool"),
            ("slack/post:message", "slack_post_message"),
            ("3d_render", "tool_3d_render"),
            ("42", "tool_42"),
            ("天气", "tool"),
            ("", "tool"),
            ("créer_issue", "cr_er_issue"),
        ] {
            assert_eq!(id_from_name(name), id, "{name:?}");
            assert!(is_id(&id_from_name(name)), "{name:?}");
        }
        let long = "a".repeat(300);
        assert_eq!(id_from_name(&long), "a".repeat(ID_MAX_BYTES));
        // A cut never leaves a trailing word break.
        let cut = format!("{}_b", "a".repeat(ID_MAX_BYTES - 1));
        assert_eq!(id_from_name(&cut), "a".repeat(ID_MAX_BYTES - 1));
    }

    #[test]
    fn a_hash_keeps_ids_of_colliding_names_apart_and_within_the_limit() {
        let a = id_from_name_with_hash("get_weather", NAME_HASH_HEX);
        let b = id_from_name_with_hash("getWeather", NAME_HASH_HEX);
        assert_ne!(a, b);
        assert!(a.starts_with("get_weather_") && a.len() == "get_weather_".len() + NAME_HASH_HEX);
        assert_eq!(a, id_from_name_with_hash("get_weather", NAME_HASH_HEX));
        let long = id_from_name_with_hash(&"x".repeat(500), 16);
        assert!(is_id(&long) && long.len() == ID_MAX_BYTES, "{long}");
        assert!(is_id(&id_from_name_with_hash("", NAME_HASH_HEX)));
    }
}
