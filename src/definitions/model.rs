//! Validated, normalised definition records. Their `Serialize` output is canonical JSON: fields
//! are declared in code-unit order and optional fields are omitted, so the same records always
//! print the same bytes (the static revision hashes them).

use serde::Serialize;

/// The validated `provider.json` (or the provider part of an inline definition).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProviderRecord {
    pub name: String,
    #[serde(rename = "providerId")]
    pub provider_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub specification: Option<Specification>,
    pub version: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Specification {
    #[serde(rename = "appliesTo", skip_serializing_if = "Option::is_none")]
    pub applies_to: Option<AppliesTo>,
    /// Sorted by `knowledgeId`; every role is `specification`.
    pub documents: Vec<DocumentRef>,
    #[serde(rename = "specificationId")]
    pub specification_id: String,
    pub version: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppliesTo {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub software: Option<String>,
    #[serde(rename = "versionRange", skip_serializing_if = "Option::is_none")]
    pub version_range: Option<String>,
}

/// A validated capability definition; relation endpoints are local IDs, sorted and unique.
#[derive(Clone, Debug, PartialEq)]
pub struct CapabilityRecord {
    /// `capabilityId`, `name`, `description`, `whenToUse`, `distinction`.
    pub texts: Texts,
    pub examples: Vec<String>,
    pub relations: Relations,
    /// Sorted by `knowledgeId`.
    pub knowledge: Vec<KnowledgeRef>,
}

/// A capability's ID, name, description, whenToUse and distinction (when there is one) end to
/// end in one allocation, made when its record is validated and kept by the snapshot as it is:
/// a string per text would be freed at build and leave holes between the snapshot's own strings
/// (see [`Relations`]), and answers read a capability's texts from one place.
#[derive(Clone, Debug, PartialEq)]
pub struct Texts {
    text: Box<str>,
    /// Where the ID, name, description and whenToUse end; the distinction is the rest.
    ends: [u32; 4],
}

impl Texts {
    pub fn new(
        capability_id: &str,
        name: &str,
        description: &str,
        when_to_use: &str,
        distinction: Option<&str>,
    ) -> Texts {
        let parts = [capability_id, name, description, when_to_use];
        let rest = distinction.unwrap_or_default();
        let mut text =
            String::with_capacity(parts.iter().map(|p| p.len()).sum::<usize>() + rest.len());
        let mut ends = [0u32; 4];
        for (end, part) in ends.iter_mut().zip(parts) {
            text.push_str(part);
            *end = text.len() as u32;
        }
        text.push_str(rest);
        Texts {
            text: text.into_boxed_str(),
            ends,
        }
    }

    fn part(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        let end = self.ends.get(i).map_or(self.text.len(), |&e| e as usize);
        &self.text[start..end]
    }

    pub fn capability_id(&self) -> &str {
        self.part(0)
    }

    pub fn name(&self) -> &str {
        self.part(1)
    }

    pub fn description(&self) -> &str {
        self.part(2)
    }

    pub fn when_to_use(&self) -> &str {
        self.part(3)
    }

    /// A distinction is never empty (validation), so an empty rest means none.
    pub fn distinction(&self) -> Option<&str> {
        Some(self.part(4)).filter(|d| !d.is_empty())
    }

    /// Heap bytes.
    pub fn bytes(&self) -> usize {
        self.text.len()
    }
}

/// The four declared relation lists of a record, in one allocation. A record lives from its
/// file's validation (on a reading thread) until the snapshot is built; a string per endpoint
/// would be freed then and leave holes between the snapshot's own strings that the allocator
/// cannot give back. Each endpoint is followed by a space (IDs never contain one), the lists
/// one after another.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Relations {
    text: Box<str>,
    /// Where each list ends in `text`, indexed by [`Relation`].
    ends: [u32; 4],
}

impl Relations {
    /// `lists` indexed by [`Relation`].
    pub fn new<S: AsRef<str>>(lists: &[Vec<S>; 4]) -> Relations {
        let mut text =
            String::with_capacity(lists.iter().flatten().map(|id| id.as_ref().len() + 1).sum());
        let mut ends = [0u32; 4];
        for (end, list) in ends.iter_mut().zip(lists) {
            for id in list {
                text.push_str(id.as_ref());
                text.push(' ');
            }
            *end = text.len() as u32;
        }
        Relations {
            text: text.into_boxed_str(),
            ends,
        }
    }

    /// The endpoints of `relation`, sorted and distinct.
    pub fn of(&self, relation: Relation) -> std::str::SplitTerminator<'_, char> {
        let k = relation as usize;
        let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
        self.text[start..self.ends[k] as usize].split_terminator(' ')
    }
}

/// The four declared relation kinds, in declaration-check order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    Parents = 0,
    Specializes = 1,
    Related = 2,
    Requires = 3,
}

impl Relation {
    pub const ALL: [Relation; 4] = [
        Relation::Parents,
        Relation::Specializes,
        Relation::Related,
        Relation::Requires,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Parents => "parents",
            Relation::Specializes => "specializes",
            Relation::Related => "related",
            Relation::Requires => "requires",
        }
    }

    /// `related` may form cycles; the other three must each be acyclic.
    pub fn must_be_acyclic(self) -> bool {
        self != Relation::Related
    }
}

/// A knowledge reference of a capability: a document or a collection of documents.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum KnowledgeRef {
    Document(DocumentRef),
    Collection(CollectionRef),
}

impl KnowledgeRef {
    pub fn knowledge_id(&self) -> &str {
        match self {
            KnowledgeRef::Document(d) => &d.knowledge_id,
            KnowledgeRef::Collection(c) => &c.knowledge_id,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DocumentRef {
    #[serde(rename = "canonicalUrl", skip_serializing_if = "Option::is_none")]
    pub canonical_url: Option<String>,
    pub kind: DocumentKind,
    #[serde(rename = "knowledgeId")]
    pub knowledge_id: String,
    /// Canonically cased BCP 47 tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    pub locator: Locator,
    pub role: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CollectionRef {
    pub kind: CollectionKind,
    #[serde(rename = "knowledgeId")]
    pub knowledge_id: String,
    /// Sorted by `knowledgeId`.
    pub members: Vec<DocumentRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Serialises as the literal `"document"`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct DocumentKind;

impl Serialize for DocumentKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("document")
    }
}

/// Serialises as the literal `"collection"`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct CollectionKind;

impl Serialize for CollectionKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("collection")
    }
}

/// Where a document's body lives. Keys print in code-unit order (`path`, `root`, `type`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Locator {
    RelativeFile {
        path: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        root: Option<String>,
        #[serde(rename = "type")]
        kind: RelativeFileType,
    },
    Http {
        #[serde(rename = "type")]
        kind: HttpType,
        url: String,
    },
}

/// Serialises as the literal `"relative-file"`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct RelativeFileType;

impl Serialize for RelativeFileType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("relative-file")
    }
}

/// Serialises as the literal `"http"`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct HttpType;

impl Serialize for HttpType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("http")
    }
}

#[cfg(test)]
mod relation_tests {
    use super::*;

    #[test]
    fn relations_give_back_each_list_as_declared() {
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let lists = [ids(&["a.b", "c"]), ids(&[]), ids(&["d-e_f.g"]), ids(&["h"])];
        let r = Relations::new(&lists);
        for relation in Relation::ALL {
            let got: Vec<&str> = r.of(relation).collect();
            assert_eq!(got, lists[relation as usize], "{relation:?}");
        }
        let none = Relations::new::<String>(&Default::default());
        assert_eq!(none, Relations::default());
        assert!(Relation::ALL.iter().all(|&k| none.of(k).next().is_none()));
    }
}
