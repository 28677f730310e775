//! Identities derived by hashing: the static revision of a provider's definitions, the
//! composite revision of a scope, and knowledge content IDs (SPEC §5, §14 D10). All blake3.

use crate::definitions::model::ProviderRecord;
#[cfg(test)]
use crate::definitions::model::{CapabilityRecord, KnowledgeRef, Relation, Relations};
use crate::snapshot::{Capability, Kind, Plain};
#[cfg(test)]
use serde::Serialize;
#[cfg(test)]
use std::io::Write;
use std::sync::Arc;

pub(crate) fn hex16(hash: blake3::Hash) -> String {
    hash.to_hex()[..16].to_owned()
}

/// The hashed form of a capability (the reference the snapshot's writer is checked against): all eleven fields, in code-unit key order, with
/// `distinction: null` when absent (so omitting an optional array and writing `[]` agree).
#[cfg(test)]
#[derive(Serialize)]
struct HashedCapability<'a> {
    #[serde(rename = "capabilityId")]
    capability_id: &'a str,
    description: &'a str,
    distinction: Option<&'a str>,
    examples: &'a [String],
    knowledge: &'a [KnowledgeRef],
    name: &'a str,
    parents: Endpoints<'a>,
    related: Endpoints<'a>,
    requires: Endpoints<'a>,
    specializes: Endpoints<'a>,
    #[serde(rename = "whenToUse")]
    when_to_use: &'a str,
}

/// One relation list of a record, hashed as the array of IDs it is.
#[cfg(test)]
struct Endpoints<'a>(&'a Relations, Relation);

#[cfg(test)]
impl Serialize for Endpoints<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.of(self.1))
    }
}

#[cfg(test)]
impl<'a> From<&'a CapabilityRecord> for HashedCapability<'a> {
    fn from(c: &'a CapabilityRecord) -> Self {
        HashedCapability {
            capability_id: c.texts.capability_id(),
            description: c.texts.description(),
            distinction: c.texts.distinction(),
            examples: &c.examples,
            knowledge: &c.knowledge,
            name: c.texts.name(),
            parents: Endpoints(&c.relations, Relation::Parents),
            related: Endpoints(&c.relations, Relation::Related),
            requires: Endpoints(&c.relations, Relation::Requires),
            specializes: Endpoints(&c.relations, Relation::Specializes),
            when_to_use: c.texts.when_to_use(),
        }
    }
}

/// `"s:"` + 16 hex digits of blake3 over the canonical JSON
/// `{"capabilities":[…sorted by ID…],"provider":{…}}`, serialised by serde (the reference).
#[cfg(test)]
pub fn static_revision_of(provider: &ProviderRecord, capabilities: &[CapabilityRecord]) -> String {
    let mut hasher = blake3::Hasher::new();
    let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut hasher);
    let _ = w.write_all(b"{\"capabilities\":[");
    for (i, c) in capabilities.iter().enumerate() {
        if i > 0 {
            let _ = w.write_all(b",");
        }
        let _ = serde_json::to_writer(&mut w, &HashedCapability::from(c));
    }
    let _ = w.write_all(b"],\"provider\":");
    let _ = serde_json::to_writer(&mut w, provider);
    let _ = w.write_all(b"}");
    let _ = w.flush();
    drop(w);
    format!("s:{}", hex16(hasher.finalize()))
}

/// The static revision of a snapshot's `capabilities` (in ID order) whose declared relation
/// lists `forward(node, kind)` gives as nodes in ID order: the same canonical JSON as
/// [`static_revision_of`] over the records they were built from, written without a serialiser
/// (texts the snapshot knows to print as they are are copied whole) and handed to the hasher in
/// large blocks. Every read of a provider — files, a whole database read, an incremental one —
/// hashes its snapshot here, so the same definitions give the same revision.
pub fn static_revision_of_snapshot<'r>(
    provider: &ProviderRecord,
    capabilities: &[Arc<Capability>],
    forward: impl Fn(u32, Kind) -> &'r [u32],
) -> String {
    const BLOCK: usize = 1 << 16;
    let mut hasher = blake3::Hasher::new();
    let mut out: Vec<u8> = Vec::with_capacity(BLOCK + 4096);
    out.extend_from_slice(b"{\"capabilities\":[");
    for (node, c) in capabilities.iter().enumerate() {
        if node > 0 {
            out.push(b',');
        }
        let plain = c.plain;
        let ids = |out: &mut Vec<u8>, kind: Kind| {
            out.push(b'[');
            for (i, &t) in forward(node as u32, kind).iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json_str(out, capabilities[t as usize].id(), None);
            }
            out.push(b']');
        };
        out.extend_from_slice(b"{\"capabilityId\":");
        json_str(&mut out, c.id(), None);
        out.extend_from_slice(b",\"description\":");
        json_str(
            &mut out,
            c.description(),
            Some(plain.has(Plain::DESCRIPTION)),
        );
        out.extend_from_slice(b",\"distinction\":");
        match c.distinction() {
            Some(d) => json_str(&mut out, d, Some(plain.has(Plain::DISTINCTION))),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"examples\":[");
        for (i, e) in c.examples.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            json_str(&mut out, e, Some(plain.has(Plain::EXAMPLES)));
        }
        out.extend_from_slice(b"],\"knowledge\":");
        // Writing into a vector cannot fail, and the references serialise infallibly.
        let _ = serde_json::to_writer(&mut out, &c.knowledge[..]);
        out.extend_from_slice(b",\"name\":");
        json_str(&mut out, c.name(), Some(plain.has(Plain::NAME)));
        out.extend_from_slice(b",\"parents\":");
        ids(&mut out, Kind::Parents);
        out.extend_from_slice(b",\"related\":");
        ids(&mut out, Kind::Related);
        out.extend_from_slice(b",\"requires\":");
        ids(&mut out, Kind::Requires);
        out.extend_from_slice(b",\"specializes\":");
        ids(&mut out, Kind::Specializes);
        out.extend_from_slice(b",\"whenToUse\":");
        json_str(
            &mut out,
            c.when_to_use(),
            Some(plain.has(Plain::WHEN_TO_USE)),
        );
        out.push(b'}');
        if out.len() >= BLOCK {
            hasher.update(&out);
            out.clear();
        }
    }
    out.extend_from_slice(b"],\"provider\":");
    let _ = serde_json::to_writer(&mut out, provider);
    out.push(b'}');
    hasher.update(&out);
    format!("s:{}", hex16(hasher.finalize()))
}

/// `s` as a JSON string, as serde_json prints it: copied whole when it needs no escape
/// (`plain`, or checked here when not known).
fn json_str(out: &mut Vec<u8>, s: &str, plain: Option<bool>) {
    if plain.unwrap_or_else(|| crate::json::prints_as_is(s)) {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

/// `"s:"` + 16 hex of blake3 over `id:rev|id:rev…` for the providers of a scope, in ID order.
pub fn composite_revision<'a>(revisions: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut hasher = blake3::Hasher::new();
    for (i, (id, rev)) in revisions.into_iter().enumerate() {
        if i > 0 {
            hasher.update(b"|");
        }
        hasher.update(id.as_bytes());
        hasher.update(b":");
        hasher.update(rev.as_bytes());
    }
    format!("s:{}", hex16(hasher.finalize()))
}

/// `"k:"` + 16 hex of blake3 over a document's raw bytes.
pub fn content_id(bytes: &[u8]) -> String {
    content_id_of(blake3::hash(bytes))
}

/// The content ID of a document hashed incrementally (scanned or streamed in chunks).
pub fn content_id_of(hash: blake3::Hash) -> String {
    format!("k:{}", hex16(hash))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definitions::model::Texts;

    fn provider() -> ProviderRecord {
        ProviderRecord {
            name: "Seed".into(),
            provider_id: "seed".into(),
            specification: None,
            version: "1".into(),
        }
    }

    #[test]
    fn empty_provider_hashes_its_canonical_text() {
        let text =
            r#"{"capabilities":[],"provider":{"name":"Seed","providerId":"seed","version":"1"}}"#;
        let expected = format!("s:{}", &blake3::hash(text.as_bytes()).to_hex()[..16]);
        assert_eq!(static_revision_of(&provider(), &[]), expected);
    }

    #[test]
    fn capability_text_lists_all_fields_in_code_unit_order() {
        let c = CapabilityRecord {
            texts: Texts::new("route", "Routing", "D", "W", None),
            examples: vec![],
            relations: Default::default(),
            knowledge: vec![],
        };
        let text = r#"{"capabilities":[{"capabilityId":"route","description":"D","distinction":null,"examples":[],"knowledge":[],"name":"Routing","parents":[],"related":[],"requires":[],"specializes":[],"whenToUse":"W"}],"provider":{"name":"Seed","providerId":"seed","version":"1"}}"#;
        let expected = format!("s:{}", &blake3::hash(text.as_bytes()).to_hex()[..16]);
        assert_eq!(static_revision_of(&provider(), &[c]), expected);
    }

    #[test]
    fn a_snapshot_hashes_the_canonical_text_of_the_records_it_was_built_from() {
        use crate::snapshot::{AuthorityKind, DocumentRoots, ProviderSnapshot};
        // Texts that print as they are and texts to escape (quotes, backslashes, control
        // characters, and characters serde prints as they are), with and without distinction,
        // examples, knowledge and relations of every kind.
        let doc = |id: &str| serde_json::json!({ "kind": "document", "knowledgeId": id, "role": "guide", "title": "T \"1\"", "locator": { "type": "http", "url": "https://example.com/a" } });
        let definition = serde_json::json!({
            "providerId": "seed", "name": "Seed \"s\"", "version": "1",
            "capabilities": [
                { "capabilityId": "a", "name": "A", "description": "Plain.", "whenToUse": "W." },
                { "capabilityId": "b", "name": "Tab\there", "description": "Quote \" and \\ slash / é ☃ \u{7f}", "whenToUse": "Line\nbreak",
                  "distinction": "Not \"a\".", "examples": ["plain", "with \"quote\""], "parents": ["a"], "related": ["c", "a"],
                  "knowledge": [doc("k1")] },
                { "capabilityId": "c", "name": "C", "description": "D.", "whenToUse": "W.", "distinction": "Plain too.",
                  "examples": ["one", "two"], "specializes": ["a"], "requires": ["a", "b"] },
            ],
        });
        let roots = crate::definitions::Roots {
            aliases: &[],
            default_root: false,
        };
        let v = crate::definitions::validate_provider(&definition, None, &roots).unwrap();
        let reference = static_revision_of(&v.provider, &v.capabilities);
        let s = ProviderSnapshot::build(v, AuthorityKind::Inline, DocumentRoots::default());
        assert_eq!(s.static_revision, reference);
    }

    #[test]
    fn composite_and_content_ids_have_their_prefixes() {
        let c = composite_revision([("a", "s:1"), ("b", "s:2")]);
        let expected = format!("s:{}", &blake3::hash(b"a:s:1|b:s:2").to_hex()[..16]);
        assert_eq!(c, expected);
        assert_eq!(content_id(b"").len(), 18);
        assert!(content_id(b"x").starts_with("k:"));
    }
}
