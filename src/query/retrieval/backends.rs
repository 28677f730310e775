//! The verbs served by optional host backends: `retrieveCapabilities` (a capability retriever)
//! and `queryRuntime` (runtime adapters). Their arguments are checked here; without the backend
//! they answer its configuration code, never an empty result.

use crate::cursor::{self, Binding};
use crate::error::{project_component_error, Code, Component, GraphError, Phase, Result};
use crate::hostcall::{Host, HostCall, Started};
use crate::ids::format_qualified;
use crate::json::compact_len;
use crate::json::to_json;
use crate::query::args::{capability_ref, clamped_integer, invalid, too_large, Args};
use crate::query::views::{CapabilityId, ViewEntry};
use crate::query::Call;
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

/// The verbs served by a host component that can answer `call`'s caller, each `true` or
/// `false`: what a tool list offers by default. `executor` says whether an executor is set.
/// `fromHost` says which answers come from host code rather than the engine alone: `match`
/// when the executor is the host's (`host_executor`), `documents` when the host registered
/// readers (URL documents are then read by them); what tool annotations call an open world.
pub fn host_verbs(call: &Call, executor: bool, host_executor: bool, readers: bool) -> Value {
    let runtime = match call.bound {
        Some(provider) => call.backends.runtime.iter().any(|p| p == provider),
        None => !call.backends.runtime.is_empty(),
    };
    json!({
        "match": executor,
        "retrieveCapabilities": call.backends.capability_retriever,
        "queryKnowledge": call.backends.knowledge_retriever,
        "queryRuntime": runtime,
        "fromHost": { "match": host_executor, "documents": readers },
    })
}

fn text<'a>(args: &'a Args, key: &str) -> Result<&'a str> {
    args.string(key)?
        .filter(|t| !crate::json::is_blank(t))
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
    if text.len() as u64 > budget.max_text_bytes {
        return Err(too_large("text", budget.max_text_bytes)
            .detail("budget", "retrieveCapabilities.maxTextBytes"));
    }
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
        timeout_ms: budget.timeout_ms,
    })))
}

struct Retrieval {
    request: String,
    view: View,
    /// Every configured provider, to tell "unknown" from "out of scope".
    configured: Vec<String>,
    limit: u64,
    max_candidate_bytes: u64,
    timeout_ms: u64,
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
        Some(self.timeout_ms)
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
                    id: CapabilityId::of(s, n),
                    qualified_id: format_qualified(s.provider_id(), s.capability(n).id()),
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
            meta.to_json()
        ))
    }

    fn fail(&self, code: Option<&str>, _next_action: Option<&str>) -> GraphError {
        project_component_error(Component::CapabilityRetriever, code, Phase::Query)
    }
}

/// The most bytes of a runtime `project` or `environment`.
const MAX_CONTEXT_BYTES: usize = 256;

/// `queryRuntime`: the provider's runtime adapter observes running instances; the engine
/// checks the page, the observation and every instance, and binds its cursor to the runtime
/// revision it was served from.
pub fn runtime_start(call: &Call, json: &str) -> Result<Started> {
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
    let mut context = Vec::with_capacity(2);
    for key in ["project", "environment"] {
        match args.string(key)? {
            Some(s) if s.len() > MAX_CONTEXT_BYTES => {
                return Err(too_large(key, MAX_CONTEXT_BYTES as u64))
            }
            Some(s) if !crate::json::is_blank(s) => context.push(s),
            _ => return Err(GraphError::new(Code::RuntimeContextRequired).detail("field", key)),
        }
    }
    for key in ["instanceId", "requiredRuntimeRevision", "cursor"] {
        if args.string(key)?.is_some_and(crate::json::is_blank) {
            return Err(invalid(key, "non-blank string"));
        }
    }
    let instance_of = args
        .get("instanceOf")?
        .map(|v| capability_ref(v, "instanceOf", call.bound))
        .transpose()?;
    let budget = &call.budgets.runtime;
    let limit = match args.get("limit")? {
        None => budget.default_page_size,
        Some(v) => clamped_integer(v, "limit", 1, budget.max_page_size)?,
    };
    let view = call.view(&args, instance_of.map(|r| std::iter::once(r.0)))?;
    // One provider: the request's scope, else the provider instanceOf names, else the only one.
    let provider = match (
        args.has("requestProviderScope"),
        instance_of,
        view.scope.as_slice(),
    ) {
        (false, Some((p, _)), _) => p.to_owned(),
        (_, _, [only]) => only.clone(),
        _ => {
            return Err(invalid(
                "requestProviderScope",
                "exactly one provider for a runtime query",
            ))
        }
    };
    let target = instance_of
        .map(|(p, c)| call.locate(&view, p, c))
        .transpose()?;
    let position = match view.position(&provider) {
        Some(p) => p,
        None if call.state.providers.contains_key(&provider) => {
            return Err(GraphError::new(Code::AccessDenied))
        }
        None => return Err(GraphError::new(Code::ProviderNotFound)),
    };
    if !call.backends.runtime.contains(&provider) {
        return Err(GraphError::new(Code::RuntimeDisabled));
    }
    let snapshot = view.snapshot(position);
    let instance_id = args.string("instanceId")?.map(str::to_owned);
    let target_id = target.map(|(p, n)| {
        (
            view.snapshot(p).provider_id().to_owned(),
            view.snapshot(p).capability(n).id().to_owned(),
        )
    });
    let filter = json!({
        "providerId": provider,
        "project": context[0],
        "environment": context[1],
        "instanceOf": target_id.as_ref().map(|(p, c)| format_qualified(p, c)),
        "instanceId": instance_id,
        "limit": limit,
    })
    .to_string();
    let required = args.string("requiredRuntimeRevision")?.map(str::to_owned);
    let mut sent_cursor = None;
    let mut cursor_revision = None;
    if let Some(c) = args.string("cursor")? {
        let binding = Binding {
            kind: "runtime",
            revision: &snapshot.static_revision,
            filter: &filter,
        };
        let after: Value = serde_json::from_str(&cursor::decode(c, &binding)?)
            .map_err(|_| invalid("cursor", "cursor returned by the same query"))?;
        let (raw, revision) = match (
            after.get("cursor").and_then(Value::as_str),
            after.get("runtimeRevision").and_then(Value::as_str),
        ) {
            (Some(raw), Some(revision)) => (raw.to_owned(), revision.to_owned()),
            _ => return Err(invalid("cursor", "cursor returned by the same query")),
        };
        if required.as_ref().is_some_and(|r| *r != revision) {
            return Err(GraphError::new(Code::RevisionMismatch));
        }
        sent_cursor = Some(raw);
        cursor_revision = Some(revision);
    }
    let mut request = Map::new();
    request.insert("project".into(), context[0].into());
    request.insert("environment".into(), context[1].into());
    if let Some((p, c)) = &target_id {
        request.insert(
            "instanceOf".into(),
            json!({ "providerId": p, "capabilityId": c }),
        );
    }
    if let Some(id) = &instance_id {
        request.insert("instanceId".into(), id.clone().into());
    }
    request.insert(
        "currentStaticRevision".into(),
        snapshot.static_revision.clone().into(),
    );
    request.insert("limit".into(), limit.into());
    if let Some(c) = &sent_cursor {
        request.insert("cursor".into(), c.clone().into());
    }
    Ok(Started::Ask(Box::new(Runtime {
        request: Value::Object(request).to_string(),
        project: context[0].to_owned(),
        environment: context[1].to_owned(),
        provider,
        position,
        target: target.map(|t| t.1),
        instance_id,
        limit,
        filter,
        sent_cursor,
        cursor_revision,
        required,
        timeout_ms: budget.timeout_ms,
        max_facts_bytes: budget.max_facts_bytes,
        max_association_bytes: budget.max_association_bytes,
        view,
    })))
}

struct Runtime {
    request: String,
    project: String,
    environment: String,
    provider: String,
    position: usize,
    target: Option<u32>,
    instance_id: Option<String>,
    limit: u64,
    filter: String,
    sent_cursor: Option<String>,
    cursor_revision: Option<String>,
    required: Option<String>,
    timeout_ms: u64,
    max_facts_bytes: u64,
    max_association_bytes: u64,
    view: View,
}

fn non_blank(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
        .filter(|s| !crate::json::is_blank(s))
}

/// ISO 8601 date-time (`2026-11-30T12:00:00Z`, fractions and offsets allowed).
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let head = b.len() >= 19
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && (b[10] == b'T' || b[10] == b't' || b[10] == b' ')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !head {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    matches!(rest, "Z" | "z")
        || (rest.len() == 6
            && (rest.starts_with('+') || rest.starts_with('-'))
            && rest.as_bytes()[3] == b':'
            && rest[1..3].bytes().all(|d| d.is_ascii_digit())
            && rest[4..].bytes().all(|d| d.is_ascii_digit()))
}

/// Milliseconds since the Unix epoch of an ISO 8601 date-time (see `is_timestamp`), if its
/// fields name a real instant.
pub(super) fn epoch_millis(s: &str) -> Option<i64> {
    if !is_timestamp(s) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s[r].parse::<i64>().ok();
    let (y, mo, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (h, mi, sec) = (n(11..13)?, n(14..16)?, n(17..19)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&mo)
        || d < 1
        || d > month_days[(mo - 1) as usize]
        || h > 23
        || mi > 59
        || sec > 60
    {
        return None;
    }
    // Days from the civil date (proleptic Gregorian), after H. Hinnant's algorithm.
    let (yy, m) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let mut rest = &s[19..];
    let mut millis = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        let ms: String = frac[..digits]
            .chars()
            .chain("000".chars())
            .take(3)
            .collect();
        millis = ms.parse::<i64>().ok()?;
        rest = &frac[digits..];
    }
    let offset = if rest.len() == 6 {
        let sign = if rest.starts_with('-') { -1 } else { 1 };
        sign * (rest[1..3].parse::<i64>().ok()? * 60 + rest[4..6].parse::<i64>().ok()?)
    } else {
        0
    };
    Some(((days * 24 + h) * 60 + mi - offset) * 60_000 + sec * 1000 + millis)
}

impl Runtime {
    fn observation(&self, v: Option<&Value>) -> Result<Map<String, Value>> {
        let bad = || contract("runtime_observation_invalid");
        let o = v.and_then(Value::as_object).ok_or_else(bad)?;
        let mut out = Map::new();
        for key in [
            "source",
            "observedAt",
            "runtimeRevision",
            "observedAgainstStaticRevision",
        ] {
            out.insert(key.into(), non_blank(o.get(key)).ok_or_else(bad)?.into());
        }
        if !is_timestamp(out["observedAt"].as_str().unwrap_or_default()) {
            return Err(bad());
        }
        for key in ["sourceIdentity", "coverage", "freshnessLimit"] {
            if let Some(v) = o.get(key) {
                out.insert(key.into(), non_blank(Some(v)).ok_or_else(bad)?.into());
            }
        }
        for (key, allowed) in [
            (
                "compatibility",
                &["compatible", "unknown", "refresh_required"][..],
            ),
            ("availability", &["available", "empty", "partial"][..]),
            ("freshness", &["current", "stale"][..]),
        ] {
            let value = o
                .get(key)
                .and_then(Value::as_str)
                .filter(|v| allowed.contains(v))
                .ok_or_else(bad)?;
            out.insert(key.into(), value.into());
        }
        Ok(out)
    }

    /// One instance as served, or the warning that rejects it.
    fn instance(&self, v: &Value) -> Result<(Value, u32)> {
        let m = v
            .as_object()
            .ok_or_else(|| contract("runtime_instance_invalid"))?;
        let instance_id =
            non_blank(m.get("instanceId")).ok_or_else(|| contract("runtime_instance_invalid"))?;
        if m.get("providerId").and_then(Value::as_str) != Some(self.provider.as_str()) {
            return Err(GraphError::new(Code::AccessDenied));
        }
        let (p, c) = m
            .get("instanceOf")
            .and_then(|id| capability_ref(id, "instanceOf", None).ok())
            .ok_or_else(|| contract("runtime_instance_of_invalid"))?;
        let mismatch = m.get("project").and_then(Value::as_str) != Some(self.project.as_str())
            || m.get("environment").and_then(Value::as_str) != Some(self.environment.as_str())
            || p != self.provider
            || self
                .instance_id
                .as_deref()
                .is_some_and(|id| id != instance_id);
        if mismatch {
            return Err(contract("runtime_result_mismatch"));
        }
        let s = self.view.snapshot(self.position);
        let node = s
            .find(c)
            .ok_or_else(|| GraphError::new(Code::CapabilityNotFound))?;
        if self.target.is_some_and(|t| t != node) {
            return Err(contract("runtime_result_mismatch"));
        }
        let facts = m
            .get("facts")
            .filter(|f| f.is_object())
            .ok_or_else(|| contract("runtime_facts_invalid"))?;
        if compact_len(facts) as u64 > self.max_facts_bytes {
            return Err(GraphError::new(Code::ResultTooLarge)
                .detail("budget", "runtime.maxFactsBytes")
                .detail("limit", self.max_facts_bytes));
        }
        let mut out = json!({
            "instanceId": instance_id,
            "providerId": self.provider,
            "project": self.project,
            "environment": self.environment,
            "instanceOf": { "providerId": p, "capabilityId": c },
            "facts": facts,
        });
        if let Some(a) = m.get("associations") {
            let list = a
                .as_array()
                .ok_or_else(|| contract("runtime_associations_invalid"))?;
            if compact_len(a) as u64 > self.max_association_bytes {
                return Err(GraphError::new(Code::ResultTooLarge)
                    .detail("budget", "runtime.maxAssociationBytes")
                    .detail("limit", self.max_association_bytes));
            }
            let mut kept = Vec::with_capacity(list.len());
            for item in list {
                let am = item
                    .as_object()
                    .ok_or_else(|| contract("runtime_association_invalid"))?;
                let mut assoc = Map::new();
                assoc.insert(
                    "kind".into(),
                    non_blank(am.get("kind"))
                        .ok_or_else(|| contract("runtime_association_invalid"))?
                        .into(),
                );
                if let Some(t) = am.get("targetInstanceId") {
                    assoc.insert(
                        "targetInstanceId".into(),
                        non_blank(Some(t))
                            .ok_or_else(|| contract("runtime_association_invalid"))?
                            .into(),
                    );
                }
                if let Some(f) = am.get("facts") {
                    if !f.is_object() {
                        return Err(contract("runtime_association_invalid"));
                    }
                    assoc.insert("facts".into(), f.clone());
                }
                kept.push(Value::Object(assoc));
            }
            out["associations"] = Value::Array(kept);
        }
        Ok((out, node))
    }
}

impl HostCall for Runtime {
    fn host(&self) -> Host {
        Host::Runtime(self.provider.clone())
    }

    fn request(&self) -> &str {
        &self.request
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(self.timeout_ms)
    }

    fn finish(&self, output: &str) -> Result<String> {
        let v: Value =
            serde_json::from_str(output).map_err(|_| contract("runtime_page_invalid"))?;
        let page = v
            .as_object()
            .ok_or_else(|| contract("runtime_page_invalid"))?;
        let instances = page
            .get("instances")
            .and_then(Value::as_array)
            .filter(|i| i.len() as u64 <= self.limit)
            .ok_or_else(|| contract("runtime_page_invalid"))?;
        let next = match page.get("nextCursor") {
            None => None,
            Some(c) => Some(
                non_blank(Some(c))
                    .filter(|c| Some(*c) != self.sent_cursor.as_deref())
                    .ok_or_else(|| contract("runtime_page_invalid"))?,
            ),
        };
        let observation = self.observation(page.get("observation"))?;
        let revision = observation["runtimeRevision"].as_str().unwrap_or_default();
        if self.required.as_deref().is_some_and(|r| r != revision)
            || self
                .cursor_revision
                .as_deref()
                .is_some_and(|r| r != revision)
        {
            return Err(GraphError::new(Code::RevisionMismatch));
        }
        let consistent = match observation["availability"].as_str() {
            Some("empty") => instances.is_empty() && next.is_none(),
            Some("available") => !instances.is_empty(),
            _ => true,
        };
        if !consistent {
            return Err(contract("inconsistent_runtime_observation"));
        }
        let mut keys = std::collections::HashSet::new();
        for i in instances {
            let key =
                ["providerId", "project", "environment", "instanceId"].map(|k| non_blank(i.get(k)));
            if key.iter().all(Option::is_some) && !keys.insert(key) {
                return Err(contract("duplicate_runtime_instance"));
            }
        }
        let mut meta = Meta::of(&self.view, false);
        let mut items = Vec::new();
        let mut seen_nodes: Vec<u32> = self.target.into_iter().collect();
        for (i, raw) in instances.iter().enumerate() {
            match self.instance(raw) {
                Ok((item, node)) => {
                    items.push(item);
                    if !seen_nodes.contains(&node) {
                        seen_nodes.push(node);
                    }
                }
                Err(e) => meta.warnings.push(e.detail("adapterIndex", i).to_warning()),
            }
        }
        if !instances.is_empty() && items.is_empty() {
            return Err(contract("all_runtime_items_rejected")
                .detail("receivedCount", instances.len())
                .detail("rejectedCount", instances.len()));
        }
        let s = self.view.snapshot(self.position);
        let next_cursor = next
            .map(|raw| {
                let binding = Binding {
                    kind: "runtime",
                    revision: &s.static_revision,
                    filter: &self.filter,
                };
                cursor::encode(
                    &binding,
                    &json!({ "cursor": raw, "runtimeRevision": revision }).to_string(),
                )
            })
            .transpose()?;
        meta.completeness = if !meta.warnings.is_empty() || observation["availability"] == "partial"
        {
            Completeness::Partial
        } else if next_cursor.is_some() {
            Completeness::Truncated
        } else {
            Completeness::Complete
        };
        meta.extra.insert(
            "budgets".into(),
            json!({ "runtime.maxPageSize": self.limit, "runtime.maxFactsBytes": self.max_facts_bytes, "runtime.maxAssociationBytes": self.max_association_bytes }),
        );
        let viewed: Vec<ViewEntry> = seen_nodes.iter().map(|&n| ViewEntry::new(s, n)).collect();
        meta.extra.insert(
            "view".into(),
            json!({
                "capabilities": viewed,
                "runtime": {
                    "runtimeRevision": revision,
                    "observedAgainstStaticRevision": observation["observedAgainstStaticRevision"],
                    "queriedStaticRevision": s.static_revision,
                    "compatibility": observation["compatibility"],
                },
            }),
        );
        let mut out = json!({ "items": items, "observation": observation });
        if let Some(c) = next_cursor {
            out["nextCursor"] = c.into();
        }
        out["meta"] = meta.to_value();
        Ok(out.to_string())
    }

    fn fail(&self, code: Option<&str>, _next_action: Option<&str>) -> GraphError {
        project_component_error(Component::RuntimeAdapter, code, Phase::Query)
    }
}
