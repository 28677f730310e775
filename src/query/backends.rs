//! The verbs served by optional host backends: `retrieveCapabilities` and `queryKnowledge`
//! (retrievers) and `queryRuntime` (runtime adapters). Their arguments are checked here; without
//! the backend they answer its configuration code, never an empty result.

use super::args::{capability_ref, clamped_integer, invalid, target_list, Args};
use super::views::{to_json, CapabilityId, ViewEntry};
use super::Call;
use crate::error::{project_component_error, Code, Component, GraphError, Phase, Result};
use crate::hostcall::{Host, HostCall, Started};
use crate::ids::format_qualified;
use crate::json::compact_len;
use crate::scope::{Completeness, Meta, View};
use serde::Serialize;
use serde_json::{json, Map, Value};

/// Which optional backends the host configured.
#[derive(Clone, Debug, Default)]
pub struct Backends {
    pub capability_retriever: bool,
    pub knowledge_retriever: bool,
    /// Providers with a runtime adapter.
    pub runtime: Vec<String>,
}

/// The backend exists but the engine does not call it yet: reported, never faked.
fn not_served(code: Code) -> GraphError {
    GraphError::new(code).detail("reason", "backend_not_served_yet")
}

fn text<'a>(args: &'a Args, key: &str) -> Result<&'a str> {
    args.string(key)?
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| invalid(key, "non-blank string"))
}

/// `retrieveCapabilities`: the host's retriever recalls capabilities for a text; the engine
/// accepts only existing, in-scope, current identities, keeps the retriever's ranks (gaps where
/// it rejected a candidate) and reports every rejection as a warning.
pub fn retrieve_start(call: &Call, json: &str) -> Result<Started> {
    let keys = [
        "text",
        "limit",
        "requestProviderScope",
        "requiredStaticRevision",
        "requiredStaticRevisionByProvider",
    ];
    let args = Args::parse(json, &keys)?;
    let text = text(&args, "text")?;
    let budget = &call.budgets.retrieve_capabilities;
    let limit = match args.get("limit")? {
        None => budget.max_candidates,
        Some(v) => clamped_integer(v, "limit", 1, budget.max_candidates)?,
    };
    let view = call.view(&args, None::<std::iter::Empty<&str>>)?;
    if !call.backends.capability_retriever {
        return Err(GraphError::new(Code::RetrieverUnconfigured));
    }
    let revisions: Map<String, Value> = view
        .scope
        .iter()
        .zip(&view.served)
        .map(|(p, (s, _))| (p.clone(), s.static_revision.clone().into()))
        .collect();
    let request = json!({ "text": text, "providerIds": view.scope, "staticRevisionByProvider": revisions, "limit": limit }).to_string();
    Ok(Started::Ask(Box::new(Retrieval {
        request,
        view,
        configured: call.state.providers.keys().cloned().collect(),
        limit,
        max_candidate_bytes: budget.max_candidate_bytes,
    })))
}

struct Retrieval {
    request: String,
    view: View,
    /// Every configured provider, to tell "unknown" from "out of scope".
    configured: Vec<String>,
    limit: u64,
    max_candidate_bytes: u64,
}

fn contract(reason: &str) -> GraphError {
    GraphError::new(Code::AdapterContractInvalid).detail("reason", reason)
}

#[derive(Serialize)]
struct Candidate<'a> {
    id: CapabilityId<'a>,
    #[serde(rename = "qualifiedId")]
    qualified_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    rank: usize,
}

impl Retrieval {
    /// One candidate, or the warning that rejects it.
    fn candidate(&self, v: &Value, seen: &[(usize, u32)]) -> Result<((usize, u32), Option<f64>)> {
        if compact_len(v) as u64 > self.max_candidate_bytes {
            return Err(GraphError::new(Code::ResultTooLarge)
                .detail("budget", "retrieveCapabilities.maxCandidateBytes")
                .detail("limit", self.max_candidate_bytes));
        }
        let m = v
            .as_object()
            .ok_or_else(|| contract("candidate_shape_invalid"))?;
        let score = match m.get("score") {
            None => None,
            Some(s) => Some(
                s.as_f64()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| contract("candidate_shape_invalid"))?,
            ),
        };
        let (p, c) = m
            .get("id")
            .and_then(|id| capability_ref(id, "id", None).ok())
            .ok_or_else(|| contract("candidate_identity_invalid"))?;
        if !self.configured.iter().any(|x| x == p) {
            return Err(GraphError::new(Code::ProviderNotFound));
        }
        let pos = self
            .view
            .position(p)
            .ok_or_else(|| GraphError::new(Code::AccessDenied))?;
        let s = self.view.snapshot(pos);
        let node = s
            .find(c)
            .ok_or_else(|| GraphError::new(Code::CapabilityNotFound))?;
        if m.get("sourceStaticRevision").and_then(Value::as_str) != Some(s.static_revision.as_str())
        {
            return Err(GraphError::new(Code::RevisionMismatch));
        }
        if seen.contains(&(pos, node)) {
            return Err(contract("duplicate_candidate"));
        }
        Ok(((pos, node), score))
    }
}

impl HostCall for Retrieval {
    fn host(&self) -> Host {
        Host::CapabilityRetriever
    }

    fn request(&self) -> &str {
        &self.request
    }

    fn timeout_ms(&self) -> Option<u64> {
        None
    }

    fn finish(&self, output: &str) -> Result<String> {
        let v: Value =
            serde_json::from_str(output).map_err(|_| contract("candidate_page_invalid"))?;
        let candidates = v
            .get("candidates")
            .and_then(Value::as_array)
            .filter(|c| c.len() as u64 <= self.limit)
            .ok_or_else(|| contract("candidate_page_invalid").in_verb(Phase::Query))?;
        let mut meta = Meta::of(&self.view, false);
        let mut accepted: Vec<((usize, u32), Option<f64>, usize)> = Vec::new();
        for (i, c) in candidates.iter().enumerate() {
            let seen: Vec<(usize, u32)> = accepted.iter().map(|a| a.0).collect();
            match self.candidate(c, &seen) {
                Ok((node, score)) => accepted.push((node, score, i + 1)),
                Err(e) => meta.warnings.push(e.detail("adapterIndex", i).to_warning()),
            }
        }
        let items: Vec<Candidate> = accepted
            .iter()
            .map(|&((p, n), score, rank)| {
                let s = self.view.snapshot(p);
                Candidate {
                    id: CapabilityId {
                        provider_id: s.provider_id(),
                        capability_id: &s.capability(n).id,
                    },
                    qualified_id: format_qualified(s.provider_id(), &s.capability(n).id),
                    score,
                    rank,
                }
            })
            .collect();
        if !meta.warnings.is_empty() {
            meta.completeness = Completeness::Partial;
        }
        meta.extra.insert(
            "budgets".into(),
            json!({ "retrieveCapabilities.maxCandidates": self.limit, "retrieveCapabilities.maxCandidateBytes": self.max_candidate_bytes }),
        );
        let viewed: Vec<ViewEntry> = accepted
            .iter()
            .map(|&((p, n), _, _)| ViewEntry::new(self.view.snapshot(p), n))
            .collect();
        meta.extra
            .insert("view".into(), json!({ "capabilities": viewed }));
        Ok(format!(
            r#"{{"items":{},"meta":{}}}"#,
            to_json(&items),
            to_json(&meta)
        ))
    }

    fn fail(&self, code: Option<&str>, _next_action: Option<&str>) -> GraphError {
        project_component_error(Component::CapabilityRetriever, code, Phase::Query)
    }
}

pub fn query_knowledge(call: &Call, json: &str) -> Result<String> {
    let keys = [
        "text",
        "selected",
        "knowledgeIds",
        "roles",
        "locales",
        "limit",
        "requestProviderScope",
        "requiredStaticRevision",
        "requiredStaticRevisionByProvider",
    ];
    let args = Args::parse(json, &keys)?;
    text(&args, "text")?;
    let budget = &call.budgets.query_knowledge;
    let selected = target_list(&args, "selected", budget.max_selected)?;
    let refs = selected
        .iter()
        .enumerate()
        .map(|(i, v)| capability_ref(v, &format!("selected[{i}]"), call.bound))
        .collect::<Result<Vec<_>>>()?;
    if let Some(v) = args.get("limit")? {
        clamped_integer(v, "limit", 1, budget.max_hits)?;
    }
    super::reads::Filters::parse(&args, budget.max_filter_values_per_dimension)?;
    let view = call.view(&args, Some(refs.iter().map(|r| r.0)))?;
    for (p, c) in refs {
        call.locate(&view, p, c)?;
    }
    if !call.backends.knowledge_retriever {
        return Err(GraphError::new(Code::RetrieverUnconfigured));
    }
    Err(not_served(Code::RetrieverUnavailable))
}

pub fn query_runtime(call: &Call, json: &str) -> Result<String> {
    let keys = [
        "project",
        "environment",
        "instanceOf",
        "instanceId",
        "cursor",
        "limit",
        "requiredRuntimeRevision",
        "requestProviderScope",
        "requiredStaticRevision",
        "requiredStaticRevisionByProvider",
    ];
    let args = Args::parse(json, &keys)?;
    for key in ["project", "environment"] {
        if args.string(key)?.is_none_or(|s| s.trim().is_empty()) {
            return Err(GraphError::new(Code::RuntimeContextRequired).detail("field", key));
        }
    }
    for key in ["instanceId", "requiredRuntimeRevision", "cursor"] {
        if args.string(key)?.is_some_and(|s| s.trim().is_empty()) {
            return Err(invalid(key, "non-blank string"));
        }
    }
    let instance_of = args
        .get("instanceOf")?
        .map(|v| capability_ref(v, "instanceOf", call.bound))
        .transpose()?;
    if let Some(v) = args.get("limit")? {
        clamped_integer(v, "limit", 1, call.budgets.runtime.max_page_size)?;
    }
    let view = call.view(&args, instance_of.map(|r| std::iter::once(r.0)))?;
    if let Some((p, c)) = instance_of {
        call.locate(&view, p, c)?;
    }
    let [provider] = view.scope.as_slice() else {
        return Err(invalid(
            "requestProviderScope",
            "exactly one provider for a runtime query",
        ));
    };
    if !call.backends.runtime.contains(provider) {
        return Err(GraphError::new(Code::RuntimeDisabled));
    }
    Err(not_served(Code::RuntimeUnavailable))
}
