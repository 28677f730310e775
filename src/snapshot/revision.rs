//! Identities derived by hashing: the static revision of a provider's definitions, the
//! composite revision of a scope, and knowledge content IDs (SPEC §5, §14 D10). All blake3.

use crate::definitions::model::{
    CapabilityRecord, KnowledgeRef, ProviderRecord, Relation, Relations,
};
use crate::definitions::ValidatedProvider;
use serde::Serialize;
use std::io::Write;

pub(crate) fn hex16(hash: blake3::Hash) -> String {
    hash.to_hex()[..16].to_owned()
}

/// The hashed form of a capability: all eleven fields, in code-unit key order, with
/// `distinction: null` when absent (so omitting an optional array and writing `[]` agree).
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
struct Endpoints<'a>(&'a Relations, Relation);

impl Serialize for Endpoints<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.of(self.1))
    }
}

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
/// `{"capabilities":[…sorted by ID…],"provider":{…}}`, streamed into the hasher.
pub fn static_revision(p: &ValidatedProvider) -> String {
    static_revision_of(&p.provider, &p.capabilities)
}

pub fn static_revision_of(provider: &ProviderRecord, capabilities: &[CapabilityRecord]) -> String {
    let mut hasher = blake3::Hasher::new();
    // Writing into a hasher cannot fail, and the records serialise infallibly. The serialiser
    // writes a few bytes at a time; a buffer hands the hasher large blocks instead.
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
    fn composite_and_content_ids_have_their_prefixes() {
        let c = composite_revision([("a", "s:1"), ("b", "s:2")]);
        let expected = format!("s:{}", &blake3::hash(b"a:s:1|b:s:2").to_hex()[..16]);
        assert_eq!(c, expected);
        assert_eq!(content_id(b"").len(), 18);
        assert!(content_id(b"x").starts_with("k:"));
    }
}
