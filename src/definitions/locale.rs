//! BCP 47 (RFC 5646) locale validation and canonical casing, backed by the IANA Language Subtag
//! Registry that the `language-tags` crate embeds.

use language_tags::LanguageTag;

/// Both the accepted input and the returned tag are limited to this many UTF-8 bytes.
const MAX_LOCALE_LEN: usize = 128;

/// Validates a BCP 47 language tag against the IANA registry and returns it canonically cased
/// (language lowercase, script Title-case, region UPPER-case, variants/extensions lowercase,
/// deprecated codes replaced by their preferred values, e.g. "iw" -> "he"), or None when invalid.
pub fn normalize_locale(tag: &str) -> Option<String> {
    // `language-tags` checks only the characters of a private-use-only tag (`x-...`), so it
    // would take `x--a` or `x-waytoolongsubtag`; every BCP 47 subtag is 1-8 ASCII alphanumerics.
    if tag.is_empty() || tag.len() > MAX_LOCALE_LEN || !tag.split('-').all(is_subtag) {
        return None;
    }
    let parsed = LanguageTag::parse(tag).ok()?;
    parsed.validate().ok()?;
    if is_fake_private_use_language(parsed.primary_language()) {
        return None;
    }
    let canonical = parsed.canonicalize().ok()?;
    let normalized = restore_suppressed_script(&parsed, &canonical);
    (normalized.len() <= MAX_LOCALE_LEN).then_some(normalized)
}

fn is_subtag(subtag: &str) -> bool {
    (1..=8).contains(&subtag.len()) && subtag.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// `language-tags` tests the private-use range qaa..qtz by plain string order, which also lets
/// through unregistered languages such as `qb` or `qabcdef`; the range holds 3-letter codes only.
fn is_fake_private_use_language(language: &str) -> bool {
    language.len() != 3 && ("qaa"..="qtz").contains(&language)
}

/// `canonicalize()` also drops a script equal to the language's Suppress-Script (`en-Latn` ->
/// `en`). That is advice for writing new tags, not part of RFC 5646 canonicalization, and callers
/// expect `en-Latn-US` back, so the script the caller wrote is put back after the language.
fn restore_suppressed_script(parsed: &LanguageTag, canonical: &LanguageTag) -> String {
    match (parsed.script(), canonical.script()) {
        (Some(script), None) => {
            let (language, rest) = canonical.as_str().split_at(canonical.full_language().len());
            format!("{language}-{script}{rest}")
        }
        _ => canonical.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::normalize_locale;

    fn ok(input: &str, expected: &str) {
        assert_eq!(
            normalize_locale(input).as_deref(),
            Some(expected),
            "input {input:?}"
        );
    }

    fn invalid(input: &str) {
        assert_eq!(normalize_locale(input), None, "input {input:?}");
    }

    #[test]
    fn casing() {
        ok("en", "en");
        ok("EN", "en");
        ok("zh-cn", "zh-CN");
        ok("en-latn-us", "en-Latn-US");
        ok("SR-cYRL-rs", "sr-Cyrl-RS");
        ok("es-419", "es-419");
        ok("DE-ch-1901", "de-CH-1901");
        ok("en-US-U-CA-Gregory", "en-US-u-ca-gregory");
    }

    #[test]
    fn script_kept_even_when_suppressible() {
        ok("en-Latn", "en-Latn");
        ok("iw-Hebr-IL", "he-Hebr-IL");
        ok("zh-Hant-TW", "zh-Hant-TW");
    }

    #[test]
    fn deprecated_codes_take_preferred_values() {
        ok("iw", "he");
        ok("in-ID", "id-ID");
        ok("mo", "ro");
        ok("de-DD", "de-DE");
        ok("ja-Latn-hepburn-heploc", "ja-Latn-hepburn-alalc97");
    }

    #[test]
    fn extlangs_become_primary_languages() {
        ok("zh-yue", "yue");
        ok("zh-yue-HK", "yue-HK");
        ok("zh-cmn-Hans", "cmn-Hans");
        invalid("en-yue"); // extlang with the wrong prefix
        invalid("zh-yue-cmn"); // more than one extlang
    }

    #[test]
    fn grandfathered_tags() {
        ok("i-klingon", "tlh");
        ok("I-KLINGON", "tlh");
        ok("art-lojban", "jbo");
        ok("en-gb-oed", "en-GB-oxendict");
        ok("zh-min-nan", "nan");
        // No preferred value: kept as registered.
        ok("i-default", "i-default");
        ok("zh-min", "zh-min");
        invalid("i-klingon-x-foo");
    }

    #[test]
    fn variants() {
        ok("de-1901", "de-1901");
        ok("sl-rozaj-biske", "sl-rozaj-biske");
        ok("fr-fonipa", "fr-fonipa");
        invalid("de-1901-1901"); // repeated
        invalid("de-abcde"); // unregistered
                             // The registry's Prefix is enforced (stricter than RFC 5646 "valid").
        invalid("en-1901");
        invalid("sl-biske");
    }

    #[test]
    fn extensions_and_private_use() {
        ok("x-private", "x-private");
        ok("X-Private-Use", "x-private-use");
        ok("en-x-a-a", "en-x-a-a"); // singletons may repeat inside private use
        ok("en-a-foo-x-a-bar", "en-a-foo-x-a-bar");
        // Extensions are put in singleton order, as RFC 5646 §4.5 canonicalization requires.
        ok("en-u-ca-gregory-a-foo-bar", "en-a-foo-bar-u-ca-gregory");
        invalid("en-a-foo-a-bar");
        invalid("en-a-foo-A-bar");
        invalid("en-a");
        invalid("en-a-x-foo");
        invalid("x");
        invalid("x-");
        invalid("x--a");
        invalid("x-toolongsub");
        invalid("en-x");
    }

    #[test]
    fn private_use_ranges() {
        ok("qaa", "qaa");
        ok("QTZ-qaaa-qm", "qtz-Qaaa-QM");
        ok("en-XA", "en-XA");
        ok("qu", "qu"); // Quechua, registered
        invalid("qb");
        invalid("qabcdef");
        invalid("en-Qaby");
    }

    #[test]
    fn unregistered_subtags() {
        invalid("english");
        invalid("xx");
        invalid("xx-YY");
        invalid("en-Abcd");
        invalid("en-QA1");
        invalid("en-AB");
        ok("en-AA", "en-AA"); // registered as private use, like QM..QZ
        invalid("en-999");
    }

    #[test]
    fn malformed() {
        for tag in [
            "",
            "e",
            "-",
            "en-",
            "-en",
            "en--us",
            "en_US",
            "en US",
            " en",
            "en-US-US",
            "en-ÜS",
            "ｅｎ",
            "en-abcdefghi",
            "1en",
        ] {
            invalid(tag);
        }
    }

    #[test]
    fn length_limit() {
        let at_limit = format!("en-x-{}c", ["ab"; 41].join("-"));
        assert_eq!(at_limit.len(), 128);
        ok(&at_limit.to_uppercase(), &at_limit);
        // Still well-formed, only one byte too long.
        invalid(&format!("{at_limit}d"));
    }
}
