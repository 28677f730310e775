//! Provider definitions: schema, IDs, relations, knowledge references and locales, validated
//! completely before anything is published.

pub mod fields;
pub mod graph;
pub mod knowledge;
pub mod locale;
pub mod model;
pub mod problems;
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
/// database sources); an inline definition names its own. The error is the first problem.
pub fn validate_provider(
    raw: &RawDefinitions,
    expected_id: Option<&str>,
    roots: &Roots,
) -> Result<ValidatedProvider, GraphError> {
    let mut problems = Vec::new();
    check_provider(raw, expected_id, roots, false, &mut problems)
        .ok_or_else(|| problems.swap_remove(0))
}

/// Every problem of a provider's definitions, as a compiler would list them: each record is
/// checked field by field, and the provider-wide rules (duplicates, endpoints, cycles,
/// knowledge IDs) run over the records that passed, without repeating what a bad record
/// already explains.
pub fn provider_problems(
    raw: &RawDefinitions,
    expected_id: Option<&str>,
    roots: &Roots,
) -> Vec<GraphError> {
    let mut problems = Vec::new();
    check_provider(raw, expected_id, roots, true, &mut problems);
    problems
}

/// The checks of a provider in order. With `all`, they go on past problems and add each to
/// `sink`; without, the first problem ends them.
fn check_provider(
    raw: &RawDefinitions,
    expected_id: Option<&str>,
    roots: &Roots,
    all: bool,
    sink: &mut Vec<GraphError>,
) -> Option<ValidatedProvider> {
    let (provider_value, provider_file) = match raw {
        RawDefinitions::Inline(v) => (*v, None),
        RawDefinitions::Files { provider, .. } => (*provider, Some("provider.json")),
    };
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
    let provider_map = object(&provider_origin, provider_value, "")
        .map_err(|e| sink.push(e))
        .ok()?;
    let inline = matches!(raw, RawDefinitions::Inline(_));
    let size = if inline {
        crate::json::compact_len_without(provider_map, "capabilities")
    } else {
        crate::json::compact_len(provider_value)
    };
    if size > fields::RECORD_MAX_BYTES {
        sink.push(
            provider_origin
                .invalid("", "record_too_large")
                .detail("maxBytes", fields::RECORD_MAX_BYTES),
        );
        return None;
    }
    let extra: &[&str] = if inline { &["capabilities"] } else { &[] };
    let provider = validate::provider_record(&provider_origin, provider_map, extra, roots)
        .map_err(|e| sink.push(e))
        .ok();
    if let Some(p) = provider.as_ref() {
        if expected_id.is_some_and(|id| id != p.provider_id) {
            sink.push(provider_origin.invalid("providerId", "provider_id_mismatch"));
        }
    }
    if !all && !sink.is_empty() {
        return None;
    }
    let o = Origin {
        provider_id: provider
            .as_ref()
            .map(|p| p.provider_id.as_str())
            .or(provider_origin.provider_id),
        ..Origin::default()
    };

    // (file, prefix, value) per capability, in load order.
    let inputs: Vec<(Option<&str>, String, &Value)> = match raw {
        RawDefinitions::Inline(_) => {
            let list = provider_map.get("capabilities")?;
            array(&o, list, "capabilities")
                .map_err(|e| sink.push(e))
                .ok()?
                .iter()
                .enumerate()
                .map(|(i, v)| (None, index("capabilities", i), v))
                .collect()
        }
        RawDefinitions::Files { capabilities, .. } => capabilities
            .iter()
            .map(|(file, v)| (Some(*file), String::new(), *v))
            .collect(),
    };
    let mut records: Vec<Option<CapabilityRecord>> = if all {
        inputs
            .iter()
            .map(|(file, prefix, v)| {
                let origin = Origin { file: *file, ..o };
                validate::capability_problems(&origin, v, prefix, roots, sink)
            })
            .collect()
    } else {
        validate_all(&o, &inputs, roots)
            .map_err(|e| sink.push(e))
            .ok()?
            .into_iter()
            .map(Some)
            .collect()
    };

    // The ID each definition declares, when it is one: a record with other problems still
    // declares its ID, so neither a duplicate of it nor an edge to it goes unexplained.
    let declared: Vec<Option<&str>> = inputs
        .iter()
        .map(|(_, _, v)| {
            v.get("capabilityId")
                .and_then(Value::as_str)
                .filter(|id| crate::ids::is_id(id))
        })
        .collect();
    // Sort by ID, remembering load positions: the later of two equal IDs is the duplicate.
    let mut order: Vec<usize> = (0..inputs.len())
        .filter(|&i| declared[i].is_some())
        .collect();
    order.sort_by(|&a, &b| declared[a].cmp(&declared[b]));
    for pair in order.windows(2) {
        if declared[pair[0]] == declared[pair[1]] {
            let later = pair[0].max(pair[1]);
            let origin = Origin {
                file: inputs[later].0,
                ..o.with_capability(declared[later].unwrap_or_default())
            };
            sink.push(origin.invalid(
                &fields::join(&inputs[later].1, "capabilityId"),
                "duplicate_capability",
            ));
            records[later] = None;
            if !all {
                return None;
            }
        }
    }
    let known: std::collections::HashSet<&str> = declared.iter().flatten().copied().collect();
    let order: Vec<usize> = order
        .into_iter()
        .filter(|&i| records[i].is_some())
        .collect();
    // Where each sorted record came from: its file, or its path in an inline definition.
    let sources: Vec<(Option<&str>, &str)> = order
        .iter()
        .map(|&i| (inputs[i].0, inputs[i].1.as_str()))
        .collect();
    let capabilities: Vec<CapabilityRecord> = order
        .iter()
        .map(|&i| records[i].take().expect("each record moved once"))
        .collect();

    let (edges, missing) =
        graph::resolve_endpoints(&o, &capabilities, |i| sources[i], |id| known.contains(id));
    sink.extend(missing);
    if !all && !sink.is_empty() {
        return None;
    }
    for cycle in graph::check_cycles(&o, &capabilities, &edges) {
        // A doctor lists a cycle at its first capability, with that capability's file.
        let first = cycle
            .details()
            .and_then(|d| d.get("cycle")?.get(0)?.as_str().map(str::to_owned));
        let at = first.as_deref().and_then(|id| {
            capabilities
                .binary_search_by(|c| c.capability_id.as_str().cmp(id))
                .ok()
        });
        sink.push(match (all, at) {
            (true, Some(i)) => {
                let relation = cycle.details().and_then(|d| d.get("relation")?.as_str());
                let field = fields::join(sources[i].1, relation.unwrap_or_default());
                let mut e = cycle
                    .detail("capabilityId", capabilities[i].capability_id.as_str())
                    .detail("field", field);
                if let Some(file) = sources[i].0 {
                    e = e.detail("file", file);
                }
                e
            }
            _ => cycle,
        });
        if !all {
            return None;
        }
    }
    sink.extend(validate::check_knowledge_ids(
        &o,
        (provider.as_ref(), provider_file),
        &capabilities,
        |i| sources[i],
    ));
    if !sink.is_empty() {
        return None;
    }
    Some(ValidatedProvider {
        provider: provider?,
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
