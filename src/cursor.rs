//! The one cursor codec, shared by every paged verb. A cursor is opaque, url-safe text bound to
//! its verb (`kind`), the revision it was served from, and a hash of everything that shapes the
//! sequence (filters, scope, page size). It authorises nothing: scope is checked on every call.
//! It carries a keyed hash of all of that (`check`): an edited cursor is refused
//! (`CG_INPUT_INVALID`) rather than served. The key is the engine's own and the same in every
//! process, so a cursor stays good on any host serving the same revision.

use crate::error::input_invalid as invalid;
use crate::error::{Code, GraphError, Result};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// Longest cursor handed out or accepted, in characters.
pub const MAX_CURSOR_CHARS: usize = 32_768;

const VERSION: u8 = 2;

#[derive(Serialize)]
struct Wire<'a> {
    v: u8,
    kind: &'a str,
    rev: &'a str,
    filter: &'a str,
    after: &'a str,
}

/// The decoded form owns its strings: a position may contain escapes, which cannot be borrowed.
#[derive(Deserialize)]
struct OwnedWire {
    v: u8,
    kind: String,
    rev: String,
    filter: String,
    after: String,
    check: String,
}

/// Hex digits of the check: 64 bits, enough to tell any edit, and short, because every cursor
/// a page carries is counted against its byte budget.
const CHECK_CHARS: usize = 16;
/// Hex digits of the filter's hash: 128 bits.
const FILTER_CHARS: usize = 32;

/// The keyed hash of a cursor's wire JSON without its check.
fn check_of(unchecked: &[u8]) -> String {
    static KEY: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    let key = KEY.get_or_init(|| blake3::derive_key("capability-graph cursor check v2", b""));
    blake3::keyed_hash(key, unchecked).to_hex()[..CHECK_CHARS].to_owned()
}

/// What a cursor is bound to.
pub struct Binding<'a> {
    pub kind: &'static str,
    /// The revision the page was served from (composite, or one provider's).
    pub revision: &'a str,
    /// Canonical JSON of the filters, scope and page size; hashed into the cursor.
    pub filter: &'a str,
}

fn filter_hash(filter: &str) -> String {
    blake3::hash(filter.as_bytes()).to_hex()[..FILTER_CHARS].to_owned()
}

/// The JSON a cursor encodes: its binding and the position `after`.
fn wire_json(binding: &Binding, after: &str) -> Result<Vec<u8>> {
    wire_json_with(binding, &filter_hash(binding.filter), after)
}

fn wire_json_with(binding: &Binding, filter_hash: &str, after: &str) -> Result<Vec<u8>> {
    let wire = Wire {
        v: VERSION,
        kind: binding.kind,
        rev: binding.revision,
        filter: filter_hash,
        after,
    };
    let mut json = serde_json::to_vec(&wire).map_err(|_| GraphError::new(Code::Internal))?;
    let check = check_of(&json);
    json.pop();
    json.extend_from_slice(br#","check":""#);
    json.extend_from_slice(check.as_bytes());
    json.extend_from_slice(br#""}"#);
    Ok(json)
}

/// Encodes a position; a cursor that would be too long to use is `CG_BUDGET_EXCEEDED`.
pub fn encode(binding: &Binding, after: &str) -> Result<String> {
    let json = wire_json(binding, after)?;
    if json.len().div_ceil(3) * 4 > MAX_CURSOR_CHARS {
        return Err(GraphError::new(Code::BudgetExceeded).detail("reason", "cursor_too_large"));
    }
    Ok(URL_SAFE_NO_PAD.encode(json))
}

/// The lengths of one binding's cursors, measured without encoding each: cursors of one binding
/// differ only in their position, so a page can be measured with the cursor it would carry.
pub struct Lengths {
    /// Bytes of the wire JSON with an empty position.
    base: usize,
}

impl Lengths {
    /// The binding's filter is not read: every filter hash has the same length.
    pub fn new(binding: &Binding) -> Result<Lengths> {
        const ANY_HASH: &str = "00000000000000000000000000000000";
        debug_assert_eq!(ANY_HASH.len(), filter_hash("").len());
        Ok(Lengths {
            base: wire_json_with(binding, ANY_HASH, "")?.len(),
        })
    }

    /// Characters of the cursor that [`encode`] returns for `after`.
    pub fn of(&self, after: &str) -> usize {
        let quoted = if crate::json::prints_as_is(after) {
            after.len() + 2
        } else {
            serde_json::to_string(after).map_or(after.len() + 2, |q| q.len())
        };
        let json = self.base + quoted - 2;
        (json * 4).div_ceil(3)
    }
}

/// Decodes `cursor` and checks its binding; returns the position it carries. Malformed text is
/// `CG_INPUT_INVALID`; a cursor from another verb, revision or filter is `CG_REVISION_MISMATCH`.
pub fn decode(cursor: &str, binding: &Binding) -> Result<String> {
    let bad = || invalid("cursor", "cursor returned by the same query");
    if cursor.is_empty()
        || cursor.len() > MAX_CURSOR_CHARS
        || !cursor
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(bad());
    }
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| bad())?;
    let wire: OwnedWire = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    if wire.v != VERSION {
        return Err(bad());
    }
    let unchecked = Wire {
        v: wire.v,
        kind: &wire.kind,
        rev: &wire.rev,
        filter: &wire.filter,
        after: &wire.after,
    };
    let unchecked = serde_json::to_vec(&unchecked).map_err(|_| bad())?;
    if wire.check != check_of(&unchecked) {
        return Err(bad());
    }
    if wire.kind != binding.kind
        || wire.rev != binding.revision
        || wire.filter != filter_hash(binding.filter)
    {
        return Err(GraphError::new(Code::RevisionMismatch));
    }
    Ok(wire.after)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding<'a>(filter: &'a str) -> Binding<'a> {
        Binding {
            kind: "catalog",
            revision: "s:0123456789abcdef",
            filter,
        }
    }

    #[test]
    fn round_trips_and_binds_kind_revision_and_filter() {
        let b = binding(r#"{"limit":5}"#);
        let c = encode(&b, "seed.http::route").unwrap();
        assert!(c
            .bytes()
            .all(|x| x.is_ascii_alphanumeric() || x == b'-' || x == b'_'));
        assert_eq!(decode(&c, &b).unwrap(), "seed.http::route");
        let other_filter = binding(r#"{"limit":6}"#);
        assert_eq!(
            decode(&c, &other_filter).unwrap_err().code(),
            Code::RevisionMismatch
        );
        let other_rev = Binding {
            revision: "s:ffffffffffffffff",
            ..binding(r#"{"limit":5}"#)
        };
        assert_eq!(
            decode(&c, &other_rev).unwrap_err().code(),
            Code::RevisionMismatch
        );
        let other_kind = Binding {
            kind: "neighbors",
            ..binding(r#"{"limit":5}"#)
        };
        assert_eq!(
            decode(&c, &other_kind).unwrap_err().code(),
            Code::RevisionMismatch
        );
    }

    #[test]
    fn lengths_match_the_encoded_cursors() {
        let b = binding(r#"{"limit":5}"#);
        let lengths = Lengths::new(&b).unwrap();
        for after in [
            "",
            "a",
            "ab",
            "abc",
            "p::c",
            "quote\"and\\slash",
            &"x".repeat(257),
        ] {
            assert_eq!(
                lengths.of(after),
                encode(&b, after).unwrap().len(),
                "{after}"
            );
        }
    }

    #[test]
    fn garbage_is_input_invalid() {
        let b = binding("{}");
        for bad in ["", "!!!", "a b", "YQ", &"A".repeat(40_000), "eyJ2IjoyfQ"] {
            assert_eq!(
                decode(bad, &b).unwrap_err().code(),
                Code::InputInvalid,
                "{bad}"
            );
        }
        let wrong_version = URL_SAFE_NO_PAD.encode(
            br#"{"v":1,"kind":"catalog","rev":"s:0123456789abcdef","filter":"x","after":""}"#,
        );
        assert_eq!(
            decode(&wrong_version, &b).unwrap_err().code(),
            Code::InputInvalid
        );
    }

    #[test]
    fn an_edited_cursor_is_input_invalid() {
        let b = binding("{}");
        let c = encode(&b, r#"{"offset":64,"contentId":"c:aaaa"}"#).unwrap();
        let json = String::from_utf8(URL_SAFE_NO_PAD.decode(&c).unwrap()).unwrap();
        for (from, to) in [("64", "65"), ("c:aaaa", "c:bbbb"), ("catalog", "neighbors")] {
            let edited = URL_SAFE_NO_PAD.encode(json.replacen(from, to, 1));
            let e = decode(&edited, &b).unwrap_err();
            assert_eq!(e.code(), Code::InputInvalid, "{from} -> {to}");
        }
        // Without its check, or with another cursor's, it is refused too.
        let other =
            String::from_utf8(URL_SAFE_NO_PAD.decode(encode(&b, "x").unwrap()).unwrap()).unwrap();
        let theirs = &other[other.find(r#""check""#).unwrap()..];
        let mine = json.find(r#""check""#).unwrap();
        let swapped = format!("{}{theirs}", &json[..mine]);
        assert_eq!(
            decode(&URL_SAFE_NO_PAD.encode(swapped), &b)
                .unwrap_err()
                .code(),
            Code::InputInvalid
        );
        let unchecked = format!("{}}}", &json[..mine - 1]);
        assert_eq!(
            decode(&URL_SAFE_NO_PAD.encode(unchecked), &b)
                .unwrap_err()
                .code(),
            Code::InputInvalid
        );
        assert_eq!(
            decode(&c, &b).unwrap(),
            r#"{"offset":64,"contentId":"c:aaaa"}"#
        );
    }

    #[test]
    fn oversized_positions_cannot_be_encoded() {
        let e = encode(&binding("{}"), &"x".repeat(MAX_CURSOR_CHARS)).unwrap_err();
        assert_eq!(e.code(), Code::BudgetExceeded);
    }

    #[test]
    fn decoding_never_panics_on_arbitrary_bytes() {
        // A small deterministic fuzz: xorshift bytes mapped onto the url-safe alphabet and raw.
        let b = binding("{}");
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/ {}\"";
        for round in 0..20_000 {
            let len = (round % 97) + 1;
            let s: String = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    alphabet[(x % alphabet.len() as u64) as usize] as char
                })
                .collect();
            let _ = decode(&s, &b);
        }
        // Valid base64 of random bytes too.
        for round in 0..5_000u64 {
            let bytes: Vec<u8> = (0..(round % 64))
                .map(|i| (i.wrapping_mul(round) ^ 0x5a) as u8)
                .collect();
            let _ = decode(&URL_SAFE_NO_PAD.encode(bytes), &b);
        }
    }
}
