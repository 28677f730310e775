//! Record validation: `provider.json` (or an inline definition's provider part) and capability
//! definitions, in the documented field order (reference/definitions.md §2–3, §5.2).

use super::fields::{
    array, check_keys, check_record_size, index, join, key_problems, object, optional_text, text,
    Origin,
};
use super::knowledge::{document, knowledge_list, KnowledgeIds, Roots};
use super::model::{
    AppliesTo, CapabilityRecord, ProviderRecord, Relation, Relations, Specification, Texts,
};
use crate::error::{Code, GraphError};
use crate::ids::is_id;
use crate::json::SCHEMA_KEY;
use serde_json::{Map, Value};

const PROVIDER_KEYS: [&str; 5] = ["providerId", "name", "version", "specification", SCHEMA_KEY];

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
    if let Some(v) = map.get(SCHEMA_KEY) {
        text(o, v, SCHEMA_KEY)?;
    }
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

const CAPABILITY_KEYS: [&str; 12] = [
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
    SCHEMA_KEY,
];

/// Validates one capability definition. `prefix` is its path inside an inline definition
/// (`capabilities[3]`), empty for a file. The error is the first of [`capability_problems`].
pub fn capability_record(
    o: &Origin,
    v: &Value,
    prefix: &str,
    roots: &Roots,
) -> Result<CapabilityRecord, GraphError> {
    let mut problems = Vec::new();
    capability_problems(o, v, prefix, roots, &mut problems).ok_or_else(|| problems.swap_remove(0))
}

/// Checks one capability definition field by field in the documented order, adding every
/// problem to `sink`; the record when there was none. A field that cannot be read (a record
/// over its size, not an object) ends the checks.
pub fn capability_problems(
    o: &Origin,
    v: &Value,
    prefix: &str,
    roots: &Roots,
    sink: &mut Vec<GraphError>,
) -> Option<CapabilityRecord> {
    let before = sink.len();
    if let Err(e) = check_record_size(o, v, prefix) {
        sink.push(e);
        return None;
    }
    let map = match object(o, v, prefix) {
        Ok(map) => map,
        Err(e) => {
            sink.push(e);
            return None;
        }
    };
    sink.extend(key_problems(
        o,
        map,
        &CAPABILITY_KEYS,
        &["capabilityId", "name", "description", "whenToUse"],
        prefix,
    ));
    fn ok<T>(sink: &mut Vec<GraphError>, r: Result<T, GraphError>) -> Option<T> {
        r.map_err(|e| sink.push(e)).ok()
    }
    if let Some(v) = map.get(SCHEMA_KEY) {
        ok(sink, text(o, v, &join(prefix, SCHEMA_KEY)));
    }
    let id_field = join(prefix, "capabilityId");
    let capability_id = map
        .get("capabilityId")
        .and_then(|v| ok(sink, text(o, v, &id_field)))
        .and_then(|id| {
            if is_id(&id) {
                Some(id)
            } else {
                sink.push(o.invalid(&id_field, "id_invalid"));
                None
            }
        });
    let named;
    let o = match &capability_id {
        Some(id) => {
            named = o.with_capability(id);
            &named
        }
        None => o,
    };
    let required = |sink: &mut Vec<GraphError>, key: &str| {
        map.get(key)
            .and_then(|v| ok(sink, text(o, v, &join(prefix, key))))
    };
    let name = required(sink, "name");
    let description = required(sink, "description");
    let when_to_use = required(sink, "whenToUse");
    let distinction = ok(sink, optional_text(o, map, "distinction", prefix)).flatten();
    let mut examples = Vec::new();
    if let Some(v) = map.get("examples") {
        let f = join(prefix, "examples");
        if let Some(items) = ok(sink, array(o, v, &f)) {
            for (i, e) in items.iter().enumerate() {
                examples.extend(ok(sink, text(o, e, &index(&f, i))));
            }
        }
    }
    let mut relations: [Vec<String>; 4] = Default::default();
    for relation in Relation::ALL {
        if let Some(v) = map.get(relation.as_str()) {
            let field = join(prefix, relation.as_str());
            relations[relation as usize] = ok(sink, endpoints(o, v, &field)).unwrap_or_default();
        }
    }
    let knowledge = match map.get("knowledge") {
        None => Vec::new(),
        Some(v) => ok(
            sink,
            knowledge_list(o, v, &join(prefix, "knowledge"), roots),
        )
        .unwrap_or_default(),
    };
    if sink.len() > before {
        return None;
    }
    Some(CapabilityRecord {
        texts: Texts::new(
            &capability_id?,
            &name?,
            &description?,
            &when_to_use?,
            distinction.as_deref(),
        ),
        examples,
        relations: Relations::new(&relations),
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
/// Returns every conflict, in that order.
pub fn check_knowledge_ids<'r>(
    o: &Origin<'r>,
    provider: (Option<&ProviderRecord>, Option<&'r str>),
    capabilities: &'r [CapabilityRecord],
    source_of: impl Fn(usize) -> (Option<&'r str>, &'r str),
) -> Vec<GraphError> {
    let mut problems = Vec::new();
    let mut ids = KnowledgeIds::default();
    let (provider, provider_file) = provider;
    if let Some(spec) = provider.and_then(|p| p.specification.as_ref()) {
        let o = Origin {
            file: provider_file,
            ..*o
        };
        for d in &spec.documents {
            problems.extend(
                ids.register_document(&o, d, "specification.documents")
                    .err(),
            );
        }
    }
    for (i, c) in capabilities.iter().enumerate() {
        let (file, prefix) = source_of(i);
        let o = Origin {
            file,
            ..o.with_capability(c.texts.capability_id())
        };
        let field = join(prefix, "knowledge");
        for r in &c.knowledge {
            problems.extend(ids.register(&o, r, &field).err());
        }
    }
    problems
}
