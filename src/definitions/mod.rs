//! Provider definitions: schema, IDs, relations, knowledge references and locales, validated
//! completely before anything is published.

pub mod fields;
pub mod graph;
pub mod knowledge;
pub mod locale;
pub mod model;
pub mod validate;

use crate::error::GraphError;
use fields::{array, index, object, Origin};
pub use knowledge::Roots;
use model::{CapabilityRecord, ProviderRecord};
use serde_json::Value;

/// Definitions as a source delivers them, before validation.
pub enum RawDefinitions<'a> {
    /// An inline definition object: provider fields plus `capabilities`.
    Inline(&'a Value),
    /// `provider.json` and one value per definition file (sorted by file).
    Files {
        provider: &'a Value,
        capabilities: Vec<(&'a str, &'a Value)>,
    },
}

/// A provider whose records passed every rule; capabilities are sorted by ID and `edges[i]`
/// holds capability `i`'s declared relations as indices into `capabilities`.
pub struct ValidatedProvider {
    pub provider: ProviderRecord,
    pub capabilities: Vec<CapabilityRecord>,
    pub edges: Vec<[Vec<u32>; 4]>,
}

/// Below this many capabilities validation stays on the calling thread.
const PARALLEL_THRESHOLD: usize = 2048;

/// Validates a provider's definitions. `expected_id` is the configured provider ID (file and
/// database sources); an inline definition names its own.
pub fn validate_provider(
    raw: &RawDefinitions,
    expected_id: Option<&str>,
    roots: &Roots,
) -> Result<ValidatedProvider, GraphError> {
    let (provider_value, provider_file) = match raw {
        RawDefinitions::Inline(v) => (*v, None),
        RawDefinitions::Files { provider, .. } => (*provider, Some("provider.json")),
    };
    let inline = matches!(raw, RawDefinitions::Inline(_));
    let provider = provider_part(provider_value, provider_file, inline, expected_id, roots)?;
    let o = Origin {
        provider_id: Some(&provider.provider_id),
        ..Origin::default()
    };

    // (file, prefix, value) per capability, in load order.
    let inputs: Vec<(Option<&str>, String, &Value)> = match raw {
        RawDefinitions::Inline(v) => array(&o, &v["capabilities"], "capabilities")?
            .iter()
            .enumerate()
            .map(|(i, v)| (None, index("capabilities", i), v))
            .collect(),
        RawDefinitions::Files { capabilities, .. } => capabilities
            .iter()
            .map(|(file, v)| (Some(*file), String::new(), *v))
            .collect(),
    };
    let records = validate_all(&o, &inputs, roots)?;
    let sources: Vec<(Option<&str>, &str)> = inputs
        .iter()
        .map(|(file, prefix, _)| (*file, prefix.as_str()))
        .collect();
    assemble(provider, provider_file, records, &sources)
}

/// How one definition file of a file provider is checked as soon as it is read, on the
/// reading thread, so that no parsed JSON tree outlives its own file.
pub fn capability_in_file(
    provider_id: &str,
    file: &str,
    value: &Value,
    roots: &Roots,
) -> Result<CapabilityRecord, GraphError> {
    let origin = Origin {
        provider_id: Some(provider_id),
        file: Some(file),
        ..Origin::default()
    };
    validate::capability_record(&origin, value, "", roots)
}

/// Validates a file provider whose definition files were each checked when read
/// ([`capability_in_file`]): the same rules and the same first error as [`validate_provider`].
pub fn validate_files(
    provider_value: &Value,
    files: Vec<(String, Result<CapabilityRecord, GraphError>)>,
    expected_id: &str,
    roots: &Roots,
) -> Result<ValidatedProvider, GraphError> {
    let provider_file = Some("provider.json");
    let provider = provider_part(
        provider_value,
        provider_file,
        false,
        Some(expected_id),
        roots,
    )?;
    let mut names = Vec::with_capacity(files.len());
    let mut records = Vec::with_capacity(files.len());
    for (file, record) in files {
        records.push(record?);
        names.push(file);
    }
    let sources: Vec<(Option<&str>, &str)> = names.iter().map(|f| (Some(f.as_str()), "")).collect();
    assemble(provider, provider_file, records, &sources)
}

/// The provider record: its shape, size and fields, and the configured ID when there is one.
fn provider_part(
    provider_value: &Value,
    provider_file: Option<&str>,
    inline: bool,
    expected_id: Option<&str>,
    roots: &Roots,
) -> Result<ProviderRecord, GraphError> {
    // An inline definition names its own provider; use that name in errors when it is valid.
    let named = provider_value
        .get("providerId")
        .and_then(Value::as_str)
        .filter(|id| crate::ids::is_id(id));
    let provider_origin = Origin {
        provider_id: expected_id.or(named),
        file: provider_file,
        ..Origin::default()
    };
    let provider_map = object(&provider_origin, provider_value, "")?;
    let size = if inline {
        crate::json::compact_len_without(provider_map, "capabilities")
    } else {
        crate::json::compact_len(provider_value)
    };
    if size > fields::RECORD_MAX_BYTES {
        return Err(provider_origin
            .invalid("", "record_too_large")
            .detail("maxBytes", fields::RECORD_MAX_BYTES));
    }
    let extra: &[&str] = if inline { &["capabilities"] } else { &[] };
    let provider = validate::provider_record(&provider_origin, provider_map, extra, roots)?;
    if expected_id.is_some_and(|id| id != provider.provider_id) {
        return Err(provider_origin.invalid("providerId", "provider_id_mismatch"));
    }
    Ok(provider)
}

/// The provider-wide rules over valid records in load order (`sources[i]`: record `i`'s file
/// and its path inside an inline definition): unique IDs, relation endpoints, acyclic
/// relations, knowledge IDs.
fn assemble(
    provider: ProviderRecord,
    provider_file: Option<&str>,
    records: Vec<CapabilityRecord>,
    load_sources: &[(Option<&str>, &str)],
) -> Result<ValidatedProvider, GraphError> {
    let o = Origin {
        provider_id: Some(&provider.provider_id),
        ..Origin::default()
    };
    // Sort by ID, remembering load positions for duplicate and endpoint errors.
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by(|&a, &b| records[a].capability_id.cmp(&records[b].capability_id));
    for pair in order.windows(2) {
        if records[pair[0]].capability_id == records[pair[1]].capability_id {
            let later = pair[0].max(pair[1]);
            let origin = Origin {
                file: load_sources[later].0,
                ..o.with_capability(&records[later].capability_id)
            };
            return Err(origin.invalid(
                &fields::join(load_sources[later].1, "capabilityId"),
                "duplicate_capability",
            ));
        }
    }
    // Where each sorted record came from: its file, or its path in an inline definition.
    let sources: Vec<(Option<&str>, &str)> = order.iter().map(|&i| load_sources[i]).collect();
    let mut slots: Vec<Option<CapabilityRecord>> = records.into_iter().map(Some).collect();
    let capabilities: Vec<CapabilityRecord> = order
        .iter()
        .map(|&i| slots[i].take().expect("each record moved once"))
        .collect();

    let edges = graph::resolve_endpoints(&o, &capabilities, |i| sources[i])?;
    graph::check_cycles(&o, &capabilities, &edges)?;
    validate::check_knowledge_ids(&o, (&provider, provider_file), &capabilities, |i| {
        sources[i]
    })?;
    Ok(ValidatedProvider {
        provider,
        capabilities,
        edges,
    })
}

/// Validates every capability record, on several threads for large providers; the error
/// reported is always the first in load order.
fn validate_all(
    o: &Origin,
    inputs: &[(Option<&str>, String, &Value)],
    roots: &Roots,
) -> Result<Vec<CapabilityRecord>, GraphError> {
    let one = |(file, prefix, v): &(Option<&str>, String, &Value)| {
        let origin = Origin { file: *file, ..*o };
        validate::capability_record(&origin, v, prefix, roots)
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if inputs.len() < PARALLEL_THRESHOLD || threads < 2 {
        return inputs.iter().map(one).collect();
    }
    let chunk = inputs.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = inputs
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(one).collect::<Result<Vec<_>, _>>()))
            .collect();
        let mut out = Vec::with_capacity(inputs.len());
        for h in handles {
            out.extend(h.join().expect("validation threads do not panic")?);
        }
        Ok(out)
    })
}
