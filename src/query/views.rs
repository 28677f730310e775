//! How snapshot data is printed in results. Keys follow the reference's record shapes.

use crate::definitions::model::KnowledgeRef;
use crate::ids::format_qualified;
use crate::snapshot::{Kind, ProviderSnapshot};
use serde::Serialize;

#[derive(Serialize, Clone, Copy)]
pub struct CapabilityId<'a> {
    #[serde(rename = "providerId")]
    pub provider_id: &'a str,
    #[serde(rename = "capabilityId")]
    pub capability_id: &'a str,
}

/// The full static record of one capability (`StaticCapability`).
#[derive(Serialize)]
pub struct StaticCapability<'a> {
    pub id: CapabilityId<'a>,
    #[serde(rename = "qualifiedId")]
    pub qualified_id: String,
    pub name: &'a str,
    pub description: &'a str,
    #[serde(rename = "whenToUse")]
    pub when_to_use: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distinction: Option<&'a str>,
    pub examples: &'a [String],
    pub parents: Vec<CapabilityId<'a>>,
    pub specializes: Vec<CapabilityId<'a>>,
    pub related: Vec<CapabilityId<'a>>,
    pub requires: Vec<CapabilityId<'a>>,
    pub knowledge: &'a [KnowledgeRef],
    #[serde(rename = "staticRevision")]
    pub static_revision: &'a str,
}

impl<'a> StaticCapability<'a> {
    pub fn new(s: &'a ProviderSnapshot, node: u32) -> StaticCapability<'a> {
        let c = s.capability(node);
        let provider_id = s.provider_id();
        let ids = |kind| {
            s.neighbours(node, kind)
                .iter()
                .map(|&t| CapabilityId {
                    provider_id,
                    capability_id: &s.capability(t).id,
                })
                .collect()
        };
        StaticCapability {
            id: CapabilityId {
                provider_id,
                capability_id: &c.id,
            },
            qualified_id: format_qualified(provider_id, &c.id),
            name: &c.name,
            description: &c.description,
            when_to_use: &c.when_to_use,
            distinction: c.distinction.as_deref(),
            examples: &c.examples,
            parents: ids(Kind::Parents),
            specializes: ids(Kind::Specializes),
            related: ids(Kind::Related),
            requires: ids(Kind::Requires),
            knowledge: &c.knowledge,
            static_revision: &s.static_revision,
        }
    }
}

/// One row of the catalog and of neighbour groups (`CatalogRecord`).
#[derive(Serialize)]
pub struct CatalogRecord<'a> {
    pub id: CapabilityId<'a>,
    #[serde(rename = "qualifiedId")]
    pub qualified_id: String,
    #[serde(rename = "providerId")]
    pub provider_id: &'a str,
    pub name: &'a str,
    pub description: &'a str,
    #[serde(rename = "whenToUse")]
    pub when_to_use: &'a str,
    #[serde(rename = "staticRevision")]
    pub static_revision: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distinction: Option<&'a str>,
}

impl<'a> CatalogRecord<'a> {
    pub fn new(s: &'a ProviderSnapshot, node: u32) -> CatalogRecord<'a> {
        let c = s.capability(node);
        CatalogRecord {
            id: CapabilityId {
                provider_id: s.provider_id(),
                capability_id: &c.id,
            },
            qualified_id: format_qualified(s.provider_id(), &c.id),
            provider_id: s.provider_id(),
            name: &c.name,
            description: &c.description,
            when_to_use: &c.when_to_use,
            static_revision: &s.static_revision,
            distinction: c.distinction.as_deref(),
        }
    }
}

/// `{ id, staticRevision }`, as `meta.view.capabilities` lists what a result was read from.
#[derive(Serialize)]
pub struct ViewEntry<'a> {
    pub id: CapabilityId<'a>,
    #[serde(rename = "staticRevision")]
    pub static_revision: &'a str,
}

impl<'a> ViewEntry<'a> {
    pub fn new(s: &'a ProviderSnapshot, node: u32) -> ViewEntry<'a> {
        ViewEntry {
            id: CapabilityId {
                provider_id: s.provider_id(),
                capability_id: &s.capability(node).id,
            },
            static_revision: &s.static_revision,
        }
    }
}

/// Appends `{"providerId":…,"capabilityId":…}` as compact JSON. Both IDs match `ID_PATTERN`
/// (validated at load), so nothing in them needs escaping: the hot answers made of IDs are
/// written without a serialiser's per-byte escape scan.
pub fn write_id(out: &mut String, id: CapabilityId) {
    debug_assert!(crate::ids::is_id(id.provider_id) && crate::ids::is_id(id.capability_id));
    out.push_str(r#"{"providerId":""#);
    out.push_str(id.provider_id);
    out.push_str(r#"","capabilityId":""#);
    out.push_str(id.capability_id);
    out.push_str(r#""}"#);
}

/// Appends a JSON array of IDs (see [`write_id`]).
pub fn write_ids<'a>(out: &mut String, ids: impl IntoIterator<Item = CapabilityId<'a>>) {
    out.push('[');
    for (i, id) in ids.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_id(out, id);
    }
    out.push(']');
}

/// Compact JSON of a serialisable value (our records always serialise).
pub fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
