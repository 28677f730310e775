//! Record validation: `provider.json` (or an inline definition's provider part) and capability
//! definitions, in the documented field order (reference/definitions.md §2–3, §5.2).

use super::fields::{
    array, check_keys, check_record_size, index, join, object, optional_text, text, Origin,
};
use super::knowledge::{document, knowledge_list, KnowledgeIds, Roots};
use super::model::{AppliesTo, CapabilityRecord, ProviderRecord, Relation, Specification};
use crate::error::{Code, GraphError};
use crate::ids::is_id;
use serde_json::{Map, Value};

const PROVIDER_KEYS: [&str; 4] = ["providerId", "name", "version", "specification"];

/// Validates the provider fields of `map`; `extra` names further keys the caller handles
/// (an inline definition's `capabilities`).
pub fn provider_record(
    o: &Origin,
    map: &Map<String, Value>,
    extra: &[&str],
    roots: &Roots,
) -> Result<ProviderRecord, GraphError> {
    let allowed: Vec<&str> = PROVIDER_KEYS.iter().chain(extra).copied().collect();
    let required: Vec<&str> = ["providerId", "name", "version"]
        .iter()
        .chain(extra)
        .copied()
        .collect();
    check_keys(o, map, &allowed, &required, "")?;
    let provider_id = text(o, &map["providerId"], "providerId")?;
    if !is_id(&provider_id) {
        return Err(o.invalid("providerId", "id_invalid"));
    }
    Ok(ProviderRecord {
        name: text(o, &map["name"], "name")?,
        provider_id,
        version: text(o, &map["version"], "version")?,
        specification: map
            .get("specification")
            .map(|v| specification(o, v, roots))
            .transpose()?,
    })
}

fn specification(o: &Origin, v: &Value, roots: &Roots) -> Result<Specification, GraphError> {
    let field = "specification";
    let map = object(o, v, field)?;
    check_keys(
        o,
        map,
        &["specificationId", "version", "appliesTo", "documents"],
        &["specificationId", "version", "documents"],
        field,
    )?;
    let applies_to = match map.get("appliesTo") {
        None => None,
        Some(v) => {
            let f = join(field, "appliesTo");
            let m = object(o, v, &f)?;
            check_keys(o, m, &["software", "versionRange", "conditions"], &[], &f)?;
            Some(AppliesTo {
                conditions: optional_text(o, m, "conditions", &f)?,
                software: optional_text(o, m, "software", &f)?,
                version_range: optional_text(o, m, "versionRange", &f)?,
            })
        }
    };
    let specification_id = text(o, &map["specificationId"], &join(field, "specificationId"))?;
    let version = text(o, &map["version"], &join(field, "version"))?;
    let docs_field = join(field, "documents");
    let raw_docs = array(o, &map["documents"], &docs_field)?;
    if raw_docs.is_empty() {
        return Err(o.invalid(&docs_field, "documents_required"));
    }
    let mut documents = Vec::with_capacity(raw_docs.len());
    for (i, d) in raw_docs.iter().enumerate() {
        let f = index(&docs_field, i);
        let doc = document(o, d, &f, roots)?;
        if doc.role != "specification" {
            return Err(o.invalid(&join(&f, "role"), "specification_role_required"));
        }
        if documents
            .iter()
            .any(|x: &super::model::DocumentRef| x.knowledge_id == doc.knowledge_id)
        {
            return Err(o.invalid(&f, "duplicate_knowledge_id"));
        }
        documents.push(doc);
    }
    documents.sort_by(|a, b| a.knowledge_id.cmp(&b.knowledge_id));
    Ok(Specification {
        applies_to,
        documents,
        specification_id,
        version,
    })
}

const CAPABILITY_KEYS: [&str; 11] = [
    "capabilityId",
    "name",
    "description",
    "whenToUse",
    "distinction",
    "examples",
    "parents",
    "specializes",
    "related",
    "requires",
    "knowledge",
];

/// Validates one capability definition. `prefix` is its path inside an inline definition
/// (`capabilities[3]`), empty for a file.
pub fn capability_record(
    o: &Origin,
    v: &Value,
    prefix: &str,
    roots: &Roots,
) -> Result<CapabilityRecord, GraphError> {
    check_record_size(o, v, prefix)?;
    let map = object(o, v, prefix)?;
    check_keys(
        o,
        map,
        &CAPABILITY_KEYS,
        &["capabilityId", "name", "description", "whenToUse"],
        prefix,
    )?;
    let id_field = join(prefix, "capabilityId");
    let capability_id = text(o, &map["capabilityId"], &id_field)?;
    if !is_id(&capability_id) {
        return Err(o.invalid(&id_field, "id_invalid"));
    }
    let o = &o.with_capability(&capability_id);
    let name = text(o, &map["name"], &join(prefix, "name"))?;
    let description = text(o, &map["description"], &join(prefix, "description"))?;
    let when_to_use = text(o, &map["whenToUse"], &join(prefix, "whenToUse"))?;
    let distinction = optional_text(o, map, "distinction", prefix)?;
    let examples = match map.get("examples") {
        None => Vec::new(),
        Some(v) => {
            let f = join(prefix, "examples");
            let items = array(o, v, &f)?;
            items
                .iter()
                .enumerate()
                .map(|(i, e)| text(o, e, &index(&f, i)))
                .collect::<Result<_, _>>()?
        }
    };
    let mut relations: [Vec<String>; 4] = Default::default();
    for relation in Relation::ALL {
        if let Some(v) = map.get(relation.as_str()) {
            relations[relation as usize] = endpoints(o, v, &join(prefix, relation.as_str()))?;
        }
    }
    let knowledge = match map.get("knowledge") {
        None => Vec::new(),
        Some(v) => knowledge_list(o, v, &join(prefix, "knowledge"), roots)?,
    };
    Ok(CapabilityRecord {
        capability_id: capability_id.clone(),
        name,
        description,
        when_to_use,
        distinction,
        examples,
        relations,
        knowledge,
    })
}

/// One relation array: local IDs only (a qualified ID or an object would cross providers),
/// no duplicates; returned sorted.
fn endpoints(o: &Origin, v: &Value, field: &str) -> Result<Vec<String>, GraphError> {
    let items = array(o, v, field)?;
    let mut ids: Vec<String> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let f = index(field, i);
        let id = match item {
            _ if super::fields::is_marker(item) => return Err(o.invalid(&f, "non_json_value")),
            Value::String(s) if s.contains("::") => {
                return Err(o.fail(Code::RelationInvalid, Some(&f), "cross_provider"))
            }
            Value::Object(_) => {
                return Err(o.fail(Code::RelationInvalid, Some(&f), "cross_provider"))
            }
            Value::String(s) if is_id(s) => s,
            _ => return Err(o.fail(Code::RelationInvalid, Some(&f), "endpoint_invalid")),
        };
        if ids.iter().any(|x| x == id) {
            return Err(o.fail(Code::RelationInvalid, Some(&f), "duplicate_endpoint"));
        }
        ids.push(id.clone());
    }
    ids.sort_unstable();
    Ok(ids)
}

/// Provider-wide: every knowledge ID means one thing (specification documents first).
/// `source_of(i)` gives capability `i`'s file and its path inside an inline definition.
pub fn check_knowledge_ids<'r>(
    o: &Origin<'r>,
    provider: (&ProviderRecord, Option<&'r str>),
    capabilities: &'r [CapabilityRecord],
    source_of: impl Fn(usize) -> (Option<&'r str>, &'r str),
) -> Result<(), GraphError> {
    let mut ids = KnowledgeIds::default();
    let (provider, provider_file) = provider;
    if let Some(spec) = &provider.specification {
        let o = Origin {
            file: provider_file,
            ..*o
        };
        for d in &spec.documents {
            ids.register_document(&o, d, "specification.documents")?;
        }
    }
    for (i, c) in capabilities.iter().enumerate() {
        let (file, prefix) = source_of(i);
        let o = Origin {
            file,
            ..o.with_capability(&c.capability_id)
        };
        let field = join(prefix, "knowledge");
        for r in &c.knowledge {
            ids.register(&o, r, &field)?;
        }
    }
    Ok(())
}
