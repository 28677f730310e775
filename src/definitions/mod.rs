//! Provider definitions: schema, IDs, relations, knowledge references and locales, validated
//! completely before anything is published.

pub mod fields;
pub mod from_tools;
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
use std::collections::HashSet;

/// A provider whose records passed every rule; capabilities are sorted by ID and `edges[i]`
/// holds capability `i`'s declared relations as indices into `capabilities`.
pub struct ValidatedProvider {
    pub provider: ProviderRecord,
    pub capabilities: Vec<CapabilityRecord>,
    pub edges: Vec<[Vec<u32>; 4]>,
}

/// Below this many capabilities validation stays on the calling thread.
const PARALLEL_THRESHOLD: usize = 2048;

/// Validates a definition object (provider fields plus `capabilities`: an inline provider, or
/// what a database view delivered). `expected_id` is the configured provider ID (database
/// sources); an inline definition names its own. The error is the first problem. File
/// providers are validated file by file as they are read ([`validate_files`]).
pub fn validate_provider(
    definition: &Value,
    expected_id: Option<&str>,
    roots: &Roots,
) -> Result<ValidatedProvider, GraphError> {
    let provider_file = None;
    let provider = provider_part(definition, provider_file, expected_id, roots)?;
    let o = Origin {
        provider_id: Some(&provider.provider_id),
        ..Origin::default()
    };

    // (file, prefix, value) per capability, in load order.
    let inputs: Vec<(Option<&str>, String, &Value)> =
        array(&o, &definition["capabilities"], "capabilities")?
            .iter()
            .enumerate()
            .map(|(i, v)| (None, index("capabilities", i), v))
            .collect();
    let records = validate_all(&o, &inputs, roots)?;
    let sources: Vec<(Option<&str>, &str)> = inputs
        .iter()
        .map(|(file, prefix, _)| (*file, prefix.as_str()))
        .collect();
    assemble(provider, provider_file, records, &sources)
}

/// Validates a provider record and its capability records given as JSON text (what a
/// database view delivered), each record parsed only while it is checked, so no tree of every
/// record is ever held: the same rules and the same first error as [`validate_provider`] of
/// the definition holding them (`capabilities[i]` names a record's fields).
pub fn validate_provider_records(
    provider_value: &Value,
    records: &[&str],
    expected_id: Option<&str>,
    roots: &Roots,
    reuse: &(dyn Fn(usize) -> Option<CapabilityRecord> + Sync),
) -> Result<ValidatedProvider, GraphError> {
    let provider = provider_part(provider_value, None, expected_id, roots)?;
    let prefixes: Vec<String> = (0..records.len())
        .map(|i| index("capabilities", i))
        .collect();
    let one = |(i, (raw, _)): (usize, (&&str, &String))| match reuse(i) {
        Some(record) => Ok(record),
        None => record_at(&provider.provider_id, raw, i, roots),
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let validated = if records.len() < PARALLEL_THRESHOLD || threads < 2 {
        records
            .iter()
            .zip(&prefixes)
            .enumerate()
            .map(one)
            .collect::<Result<Vec<_>, _>>()?
    } else {
        let chunk = records.len().div_ceil(threads);
        std::thread::scope(|s| {
            let handles: Vec<_> = records
                .chunks(chunk)
                .zip(prefixes.chunks(chunk))
                .enumerate()
                .map(|(c, (part, names))| {
                    s.spawn(move || {
                        part.iter()
                            .zip(names)
                            .enumerate()
                            .map(|(i, r)| one((c * chunk + i, r)))
                            .collect::<Result<Vec<_>, _>>()
                    })
                })
                .collect();
            let mut out = Vec::with_capacity(records.len());
            for h in handles {
                out.extend(h.join().expect("validation threads do not panic")?);
            }
            Ok::<_, GraphError>(out)
        })?
    };
    let sources: Vec<(Option<&str>, &str)> = prefixes.iter().map(|p| (None, p.as_str())).collect();
    assemble(provider, None, validated, &sources)
}

/// The provider record of a definition object (a database view's), checked as
/// [`validate_provider_records`] checks it.
pub fn provider_of(
    provider_value: &Value,
    expected_id: &str,
    roots: &Roots,
) -> Result<ProviderRecord, GraphError> {
    provider_part(provider_value, None, Some(expected_id), roots)
}

/// Record `i` of a database view's records (JSON text) of provider `provider_id`, checked on
/// its own as [`validate_provider_records`] checks it (`capabilities[i]` names its fields).
pub fn record_at(
    provider_id: &str,
    raw: &str,
    i: usize,
    roots: &Roots,
) -> Result<CapabilityRecord, GraphError> {
    let o = Origin {
        provider_id: Some(provider_id),
        ..Origin::default()
    };
    crate::opcount::tick(crate::opcount::Op::RecordChecked);
    let value: Value =
        serde_json::from_str(raw).map_err(|_| GraphError::new(crate::error::Code::Internal))?;
    validate::capability_record(&o, &value, &index("capabilities", i), roots)
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
    let provider = provider_part(provider_value, provider_file, Some(expected_id), roots)?;
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
/// A definition object (inline or a database view's) has no file and holds its capabilities;
/// a file provider's `provider.json` holds only the provider.
fn provider_part(
    provider_value: &Value,
    provider_file: Option<&str>,
    expected_id: Option<&str>,
    roots: &Roots,
) -> Result<ProviderRecord, GraphError> {
    let inline = provider_file.is_none();
    let provider_origin = Origin {
        // A definition object names its own provider; that name is used when it is valid.
        provider_id: expected_id.or(named_id(provider_value)),
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
/// relations, knowledge IDs. The error is the first problem.
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
    let records = records.into_iter().map(Some).collect();
    let mut sink = Vec::new();
    let checked = Rules {
        provider: Some(&provider),
        provider_file,
        load_sources,
        all: false,
    }
    .check(&o, records, None, &mut sink);
    match checked {
        Some((capabilities, edges)) => Ok(ValidatedProvider {
            provider,
            capabilities,
            edges,
        }),
        None => Err(sink
            .into_iter()
            .next()
            .unwrap_or_else(|| GraphError::new(crate::error::Code::Internal))),
    }
}

/// How the provider-wide rules run: over which provider and sources, and whether they go on
/// past a problem (`all`, for a full list) or stop at the first.
struct Rules<'a, 's> {
    provider: Option<&'a ProviderRecord>,
    provider_file: Option<&'s str>,
    load_sources: &'a [(Option<&'s str>, &'s str)],
    all: bool,
}

impl Rules<'_, '_> {
    /// `records[i]` is the record loaded `i`-th, `None` when its definition has problems of its
    /// own; `declared[i]` the ID that definition declares (by default the records' own), so a
    /// duplicate of a broken definition's ID, or an edge to it, is neither missed nor blamed
    /// twice. Every problem goes to `sink`; the sorted capabilities and their edges when none
    /// did.
    #[allow(clippy::type_complexity)]
    fn check(
        &self,
        o: &Origin,
        mut records: Vec<Option<CapabilityRecord>>,
        declared: Option<&[Option<&str>]>,
        sink: &mut Vec<GraphError>,
    ) -> Option<(Vec<CapabilityRecord>, Vec<[Vec<u32>; 4]>)> {
        let load_sources = self.load_sources;
        let mut duplicate = vec![false; records.len()];
        // Sort by ID, remembering load positions: the later of two equal IDs is the duplicate.
        let (order, known) = {
            let ids: Vec<Option<&str>> = match declared {
                Some(ids) => ids.to_vec(),
                None => records
                    .iter()
                    .map(|r| r.as_ref().map(|r| r.texts.capability_id()))
                    .collect(),
            };
            let mut order: Vec<usize> = (0..ids.len()).filter(|&i| ids[i].is_some()).collect();
            order.sort_by(|&a, &b| ids[a].cmp(&ids[b]));
            for pair in order.windows(2) {
                if ids[pair[0]] == ids[pair[1]] {
                    let later = pair[0].max(pair[1]);
                    let origin = Origin {
                        file: load_sources[later].0,
                        ..o.with_capability(ids[later].unwrap_or_default())
                    };
                    sink.push(origin.invalid(
                        &fields::join(load_sources[later].1, "capabilityId"),
                        "duplicate_capability",
                    ));
                    if !self.all {
                        return None;
                    }
                    duplicate[later] = true;
                }
            }
            // Stopping at the first problem, every declared ID has its record.
            let known: HashSet<String> = if self.all {
                ids.iter().flatten().map(|id| (*id).to_owned()).collect()
            } else {
                HashSet::new()
            };
            (order, known)
        };
        let order: Vec<usize> = order
            .into_iter()
            .filter(|&i| records[i].is_some() && !duplicate[i])
            .collect();
        // Where each sorted record came from: its file, or its path in an inline definition.
        let sources: Vec<(Option<&str>, &str)> = order.iter().map(|&i| load_sources[i]).collect();
        let capabilities: Vec<CapabilityRecord> = order
            .iter()
            .map(|&i| records[i].take().expect("each record moved once"))
            .collect();
        drop(records);

        let (edges, missing) =
            graph::resolve_endpoints(o, &capabilities, |i| sources[i], |id| known.contains(id));
        sink.extend(missing);
        if !self.all && !sink.is_empty() {
            return None;
        }
        for cycle in graph::check_cycles(o, &capabilities, &edges) {
            if !self.all {
                sink.push(cycle);
                return None;
            }
            sink.push(self.place_cycle(cycle, &capabilities, &sources));
        }
        sink.extend(validate::check_knowledge_ids(
            o,
            (self.provider, self.provider_file),
            &capabilities,
            |i| sources[i],
        ));
        if !sink.is_empty() {
            return None;
        }
        Some((capabilities, edges))
    }

    /// A full list shows a cycle at its first capability, with that capability's file and the
    /// relation field that loops.
    fn place_cycle(
        &self,
        cycle: GraphError,
        capabilities: &[CapabilityRecord],
        sources: &[(Option<&str>, &str)],
    ) -> GraphError {
        let first = cycle
            .details()
            .and_then(|d| d.get("cycle")?.get(0)?.as_str().map(str::to_owned));
        let at = first.as_deref().and_then(|id| {
            capabilities
                .binary_search_by(|c| c.texts.capability_id().cmp(id))
                .ok()
        });
        let Some(i) = at else { return cycle };
        let relation = cycle
            .details()
            .and_then(|d| d.get("relation")?.as_str().map(str::to_owned));
        let field = fields::join(sources[i].1, relation.as_deref().unwrap_or_default());
        let mut e = cycle
            .detail("capabilityId", capabilities[i].texts.capability_id())
            .detail("field", field);
        if let Some(file) = sources[i].0 {
            e = e.detail("file", file);
        }
        e
    }
}

/// A capability definition as a full check sees it: its record when it passed, the ID it
/// declares when that is one, and every problem it has of its own.
pub struct CheckedDefinition {
    record: Option<CapabilityRecord>,
    declared: Option<String>,
    problems: Vec<GraphError>,
}

impl CheckedDefinition {
    /// A definition file that could not be read or parsed: that is its one problem.
    pub fn unreadable(problem: GraphError) -> CheckedDefinition {
        CheckedDefinition {
            record: None,
            declared: None,
            problems: vec![problem],
        }
    }
}

fn check_definition(o: &Origin, value: &Value, prefix: &str, roots: &Roots) -> CheckedDefinition {
    let mut problems = Vec::new();
    let record = validate::capability_problems(o, value, prefix, roots, &mut problems);
    let declared = value
        .get("capabilityId")
        .and_then(Value::as_str)
        .filter(|id| crate::ids::is_id(id))
        .map(str::to_owned);
    CheckedDefinition {
        record,
        declared,
        problems,
    }
}

/// [`capability_in_file`] for a full check: every problem of one definition file, on the
/// thread that read it.
pub fn definition_problems_in_file(
    provider_id: &str,
    file: &str,
    value: &Value,
    roots: &Roots,
) -> CheckedDefinition {
    let origin = Origin {
        provider_id: Some(provider_id),
        file: Some(file),
        ..Origin::default()
    };
    check_definition(&origin, value, "", roots)
}

/// Every problem of a provider's definitions, as a compiler lists them: each record field by
/// field, then the provider-wide rules over the records that passed, without repeating what a
/// broken record already explains. [`validate_provider`] fails with the first of them.
pub fn provider_problems(
    definition: &Value,
    expected_id: Option<&str>,
    roots: &Roots,
) -> Vec<GraphError> {
    let mut sink = Vec::new();
    let provider_file = None;
    let provider = provider_part(definition, provider_file, expected_id, roots)
        .map_err(|e| sink.push(e))
        .ok();
    let provider_id = provider_id_of(provider.as_ref(), definition, expected_id);
    let o = Origin {
        provider_id,
        ..Origin::default()
    };
    let inputs: Vec<(Option<&str>, String, &Value)> = match definition.get("capabilities") {
        // A provider that is no object has no capabilities to check.
        None => return sink,
        Some(list) => match array(&o, list, "capabilities") {
            Ok(list) => list
                .iter()
                .enumerate()
                .map(|(i, v)| (None, index("capabilities", i), v))
                .collect(),
            Err(e) => {
                sink.push(e);
                return sink;
            }
        },
    };
    let checked = inputs
        .iter()
        .map(|(file, prefix, v)| check_definition(&Origin { file: *file, ..o }, v, prefix, roots))
        .collect();
    let sources: Vec<(Option<&str>, &str)> = inputs
        .iter()
        .map(|(file, prefix, _)| (*file, prefix.as_str()))
        .collect();
    all_rules(
        &o,
        provider.as_ref(),
        provider_file,
        checked,
        &sources,
        &mut sink,
    );
    sink
}

/// [`provider_problems`] for a file provider whose definition files were each checked when
/// read ([`definition_problems_in_file`]).
pub fn file_problems(
    provider_value: &Value,
    files: Vec<(String, CheckedDefinition)>,
    expected_id: &str,
    roots: &Roots,
) -> Vec<GraphError> {
    let mut sink = Vec::new();
    let provider_file = Some("provider.json");
    let provider = provider_part(provider_value, provider_file, Some(expected_id), roots)
        .map_err(|e| sink.push(e))
        .ok();
    let o = Origin {
        provider_id: Some(expected_id),
        ..Origin::default()
    };
    let (names, checked): (Vec<String>, Vec<CheckedDefinition>) = files.into_iter().unzip();
    let sources: Vec<(Option<&str>, &str)> = names.iter().map(|f| (Some(f.as_str()), "")).collect();
    all_rules(
        &o,
        provider.as_ref(),
        provider_file,
        checked,
        &sources,
        &mut sink,
    );
    sink
}

/// The provider ID problems are reported under: the provider's own, else the configured one,
/// else a valid one its definition names.
fn provider_id_of<'v>(
    provider: Option<&'v ProviderRecord>,
    provider_value: &'v Value,
    expected_id: Option<&'v str>,
) -> Option<&'v str> {
    provider
        .map(|p| p.provider_id.as_str())
        .or(expected_id)
        .or_else(|| named_id(provider_value))
}

/// The `providerId` a definition names, when it is a valid ID.
fn named_id(provider_value: &Value) -> Option<&str> {
    provider_value
        .get("providerId")
        .and_then(Value::as_str)
        .filter(|id| crate::ids::is_id(id))
}

/// Each definition's own problems, then the provider-wide rules over those that passed.
fn all_rules(
    o: &Origin,
    provider: Option<&ProviderRecord>,
    provider_file: Option<&str>,
    checked: Vec<CheckedDefinition>,
    sources: &[(Option<&str>, &str)],
    sink: &mut Vec<GraphError>,
) {
    let mut records = Vec::with_capacity(checked.len());
    let mut declared = Vec::with_capacity(checked.len());
    for definition in checked {
        sink.extend(definition.problems);
        records.push(definition.record);
        declared.push(definition.declared);
    }
    let declared: Vec<Option<&str>> = declared.iter().map(Option::as_deref).collect();
    Rules {
        provider,
        provider_file,
        load_sources: sources,
        all: true,
    }
    .check(o, records, Some(&declared), sink);
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
