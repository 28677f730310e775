//! The verbs served by optional host backends: `retrieveCapabilities` and `queryKnowledge`
//! (retrievers) and `queryRuntime` (runtime adapters). Their arguments are checked here; without
//! the backend they answer its configuration code, never an empty result.

use super::args::{capability_ref, clamped_integer, invalid, target_list, Args};
use super::Call;
use crate::error::{Code, GraphError, Result};

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

pub fn retrieve_capabilities(call: &Call, json: &str) -> Result<String> {
    let keys = [
        "text",
        "limit",
        "requestProviderScope",
        "requiredStaticRevision",
        "requiredStaticRevisionByProvider",
    ];
    let args = Args::parse(json, &keys)?;
    text(&args, "text")?;
    if let Some(v) = args.get("limit")? {
        clamped_integer(
            v,
            "limit",
            1,
            call.budgets.retrieve_capabilities.max_candidates,
        )?;
    }
    call.view(&args, None::<std::iter::Empty<&str>>)?;
    if !call.backends.capability_retriever {
        return Err(GraphError::new(Code::RetrieverUnconfigured));
    }
    Err(not_served(Code::RetrieverUnavailable))
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
