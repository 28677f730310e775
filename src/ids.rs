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
}
