//! The one error catalog: every code with its default phase, default and legal next actions and
//! its fixed messages. Nothing else in the crate writes an error message; raise sites pick a code,
//! optionally a phase, a legal action, the code's alternative message and small safe details.

use serde_json::{Map, Value};
use std::fmt;

/// Where in the life of a graph an error arose (SPEC §3.1, §14 D1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Config,
    Load,
    Query,
    Match,
    Document,
    Lifecycle,
}

impl Phase {
    pub const ALL: [Phase; 6] = [
        Phase::Config,
        Phase::Load,
        Phase::Query,
        Phase::Match,
        Phase::Document,
        Phase::Lifecycle,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Config => "config",
            Phase::Load => "load",
            Phase::Query => "query",
            Phase::Match => "match",
            Phase::Document => "document",
            Phase::Lifecycle => "lifecycle",
        }
    }

    pub fn parse(s: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// What the caller should do next (SPEC §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextAction {
    FixInput,
    CheckConfig,
    Refresh,
    NarrowScope,
    Retry,
    ContactAdmin,
}

impl NextAction {
    pub const ALL: [NextAction; 6] = [
        NextAction::FixInput,
        NextAction::CheckConfig,
        NextAction::Refresh,
        NextAction::NarrowScope,
        NextAction::Retry,
        NextAction::ContactAdmin,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NextAction::FixInput => "fix_input",
            NextAction::CheckConfig => "check_config",
            NextAction::Refresh => "refresh",
            NextAction::NarrowScope => "narrow_scope",
            NextAction::Retry => "retry",
            NextAction::ContactAdmin => "contact_admin",
        }
    }

    pub fn parse(s: &str) -> Option<NextAction> {
        NextAction::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

use NextAction as A;
use Phase as P;

/// One row of the catalog.
pub struct CodeInfo {
    pub name: &'static str,
    pub phase: Phase,
    /// `None` only for `CG_GRAPH_CLOSED`, which carries no action.
    pub action: Option<NextAction>,
    /// Actions a raise site (or the executor projection) may choose instead of the default.
    pub also_legal: &'static [NextAction],
    /// `messages[0]` is the default; further entries are fixed sentences for distinct situations.
    pub messages: &'static [&'static str],
}

macro_rules! catalog {
    ($( $variant:ident => $name:literal, $phase:expr, $action:expr, [$($legal:expr),*], [$($msg:literal),+]; )+) => {
        /// Every error code the product can report.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Code { $( $variant, )+ }

        impl Code {
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )+ ];

            pub fn info(self) -> &'static CodeInfo {
                match self {
                    $( Code::$variant => {
                        static INFO: CodeInfo = CodeInfo {
                            name: $name,
                            phase: $phase,
                            action: $action,
                            also_legal: &[$($legal),*],
                            messages: &[$($msg),+],
                        };
                        &INFO
                    } )+
                }
            }
        }
    };
}

catalog! {
    ConfigInvalid => "CG_CONFIG_INVALID", P::Config, Some(A::CheckConfig), [A::Retry],
        ["Configuration is invalid", "Cannot read a valid bounded JSON configuration file"];
    DefinitionInvalid => "CG_DEFINITION_INVALID", P::Load, Some(A::FixInput), [],
        ["Provider definition is invalid"];
    RelationInvalid => "CG_RELATION_INVALID", P::Load, Some(A::FixInput), [],
        ["Capability relation is invalid"];
    RelationCycle => "CG_RELATION_CYCLE", P::Load, Some(A::FixInput), [],
        ["Capability relations form a cycle"];
    ContextInvalid => "CG_CONTEXT_INVALID", P::Match, Some(A::FixInput), [],
        ["Context must be a flat object of scalar facts"];
    InputInvalid => "CG_INPUT_INVALID", P::Query, Some(A::FixInput), [],
        ["Request input is invalid"];
    AccessDenied => "CG_ACCESS_DENIED", P::Query, Some(A::CheckConfig), [],
        ["Target is outside the trusted scope"];
    ScopeDenied => "CG_SCOPE_DENIED", P::Query, Some(A::NarrowScope), [],
        ["Requested provider scope exceeds the allowed scope"];
    ProviderNotFound => "CG_PROVIDER_NOT_FOUND", P::Query, Some(A::Refresh), [],
        ["Requested provider does not exist"];
    CapabilityNotFound => "CG_CAPABILITY_NOT_FOUND", P::Query, Some(A::Refresh), [],
        ["Requested capability does not exist"];
    RevisionMismatch => "CG_REVISION_MISMATCH", P::Query, Some(A::Refresh), [],
        ["Requested revision is no longer available"];
    CatalogTooLarge => "CG_CATALOG_TOO_LARGE", P::Match, Some(A::NarrowScope), [],
        ["Authorized catalog exceeds the match budget"];
    ResultTooLarge => "CG_RESULT_TOO_LARGE", P::Query, Some(A::NarrowScope), [],
        ["Result exceeds the response budget"];
    InputTooLarge => "CG_INPUT_TOO_LARGE", P::Query, Some(A::NarrowScope), [],
        ["Request input exceeds its budget"];
    BudgetExceeded => "CG_BUDGET_EXCEEDED", P::Query, Some(A::NarrowScope), [],
        ["Page budget cannot hold the next item"];
    GraphClosed => "CG_GRAPH_CLOSED", P::Lifecycle, None, [],
        ["Capability graph is closed"];
    ReloadFailed => "CG_RELOAD_FAILED", P::Load, Some(A::CheckConfig), [],
        ["Provider reload failed; the previous snapshot stays in service"];
    DocumentRootRequired => "CG_DOCUMENT_ROOT_REQUIRED", P::Document, Some(A::CheckConfig), [],
        ["Inline provider has no trusted documentRoot"];
    DocumentNotFound => "CG_DOCUMENT_NOT_FOUND", P::Document, Some(A::FixInput), [],
        ["Requested document does not exist"];
    DocumentAccessDenied => "CG_DOCUMENT_ACCESS_DENIED", P::Document, Some(A::CheckConfig), [],
        ["Document access is not allowed"];
    DocumentReferenceOnly => "CG_DOCUMENT_REFERENCE_ONLY", P::Document, Some(A::FixInput), [],
        ["URL documents are references only"];
    DocumentTooLarge => "CG_DOCUMENT_TOO_LARGE", P::Document, Some(A::NarrowScope), [],
        ["Document exceeds the read budget"];
    DocumentUnreadable => "CG_DOCUMENT_UNREADABLE", P::Document, Some(A::FixInput), [A::Retry],
        ["Document cannot be read"];
    ModelNotConfigured => "CG_MODEL_NOT_CONFIGURED", P::Match, Some(A::CheckConfig), [A::Retry],
        ["No model executor is configured"];
    ModelUnavailable => "CG_MODEL_UNAVAILABLE", P::Match, Some(A::Retry), [A::CheckConfig],
        ["Model executor is unavailable"];
    ModelExecutorUnsafe => "CG_MODEL_EXECUTOR_UNSAFE", P::Match, Some(A::CheckConfig), [],
        ["Model executor isolation requirements are not met"];
    ModelContextExceeded => "CG_MODEL_CONTEXT_EXCEEDED", P::Match, Some(A::NarrowScope), [],
        ["Model context is too small for this request"];
    ModelOutputInvalid => "CG_MODEL_OUTPUT_INVALID", P::Match, Some(A::Retry), [],
        ["Model output is invalid"];
    ModelInvalidSelection => "CG_MODEL_INVALID_SELECTION", P::Match, Some(A::Refresh), [A::Retry],
        ["Model selected an unknown or unauthorized capability"];
    ModelOutputTooLarge => "CG_MODEL_OUTPUT_TOO_LARGE", P::Match, Some(A::NarrowScope), [A::Retry],
        ["Model output exceeds its budget"];
    ModelRefused => "CG_MODEL_REFUSED", P::Match, Some(A::FixInput), [],
        ["Model refused the request"];
    ModelTimeout => "CG_MODEL_TIMEOUT", P::Match, Some(A::Retry), [A::CheckConfig],
        ["Model did not answer before the deadline"];
    ModelCancelled => "CG_MODEL_CANCELLED", P::Match, Some(A::Retry), [A::CheckConfig],
        ["Match was cancelled"];
    RetrieverUnconfigured => "CG_RETRIEVER_UNCONFIGURED", P::Query, Some(A::CheckConfig), [],
        ["No retriever is configured"];
    RetrieverUnavailable => "CG_RETRIEVER_UNAVAILABLE", P::Query, Some(A::Retry), [],
        ["Retriever is unavailable"];
    IndexStale => "CG_INDEX_STALE", P::Query, Some(A::Refresh), [],
        ["Retrieval index is stale"];
    RuntimeDisabled => "CG_RUNTIME_DISABLED", P::Query, Some(A::CheckConfig), [],
        ["No runtime adapter is configured for this provider"];
    RuntimeContextRequired => "CG_RUNTIME_CONTEXT_REQUIRED", P::Query, Some(A::FixInput), [],
        ["Runtime queries need a project and an environment"];
    RuntimeUnavailable => "CG_RUNTIME_UNAVAILABLE", P::Query, Some(A::Retry), [],
        ["Runtime adapter is unavailable"];
    AdapterContractInvalid => "CG_ADAPTER_CONTRACT_INVALID", P::Query, Some(A::ContactAdmin), [],
        ["Adapter returned a result that breaks its contract"];
    PartialItem => "CG_PARTIAL_ITEM", P::Query, Some(A::FixInput), [],
        ["Some items failed for different reasons"];
    KnowledgeNotAssociated => "CG_KNOWLEDGE_NOT_ASSOCIATED", P::Query, Some(A::FixInput), [],
        ["Selected capabilities have no associated knowledge"];
    Internal => "CG_INTERNAL", P::Query, Some(A::ContactAdmin), [],
        ["Internal error"];
}

impl Code {
    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    pub fn parse(s: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == s)
    }

    /// Whether `action` may accompany this code: its default or one of its alternatives.
    pub fn allows(self, action: NextAction) -> bool {
        let info = self.info();
        info.action == Some(action) || info.also_legal.contains(&action)
    }
}

/// An error value as every entry point reports it: `{ code, phase, message, nextAction?, details? }`.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphError {
    code: Code,
    phase: Phase,
    action: Option<NextAction>,
    message: &'static str,
    details: Option<Map<String, Value>>,
}

pub type Result<T, E = GraphError> = std::result::Result<T, E>;

impl GraphError {
    /// The code with its catalog defaults.
    pub fn new(code: Code) -> GraphError {
        let info = code.info();
        GraphError {
            code,
            phase: info.phase,
            action: info.action,
            message: info.messages[0],
            details: None,
        }
    }

    pub fn code(&self) -> Code {
        self.code
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn next_action(&self) -> Option<NextAction> {
        self.action
    }

    pub fn message(&self) -> &'static str {
        self.message
    }

    pub fn details(&self) -> Option<&Map<String, Value>> {
        self.details.as_ref()
    }

    pub fn with_phase(mut self, phase: Phase) -> GraphError {
        self.phase = phase;
        self
    }

    /// The phase of the verb that raised the error (SPEC §14 D1): everything takes the verb's
    /// phase except `CG_GRAPH_CLOSED`, which is always `lifecycle`.
    pub fn in_verb(self, verb_phase: Phase) -> GraphError {
        if self.code == Code::GraphClosed {
            self
        } else {
            self.with_phase(verb_phase)
        }
    }

    /// Chooses another legal action; an illegal one is a bug at the raise site and is ignored.
    pub fn with_action(mut self, action: NextAction) -> GraphError {
        debug_assert!(
            self.code.allows(action),
            "{action:?} is not legal for {:?}",
            self.code
        );
        if self.code.allows(action) {
            self.action = Some(action);
        }
        self
    }

    /// Picks the code's alternative fixed message number `index` (see the catalog).
    pub fn with_message(mut self, index: usize) -> GraphError {
        let messages = self.code.info().messages;
        debug_assert!(index < messages.len());
        self.message = messages[index.min(messages.len() - 1)];
        self
    }

    /// Adds one detail. Every string in it (keys too, nested ones included) is cut to
    /// [`MAX_DETAIL_CHARS`]: an error never echoes an input whole.
    pub fn detail(mut self, key: &str, value: impl Into<Value>) -> GraphError {
        self.details
            .get_or_insert_with(Map::new)
            .insert(bounded_str(key), bounded(value.into()));
        self
    }

    pub fn without_details(mut self) -> GraphError {
        self.details = None;
        self
    }

    /// `toJSON()`: `{ code, phase, message, nextAction?, details? }` in that order.
    pub fn to_json_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("code".into(), self.code.as_str().into());
        map.insert("phase".into(), self.phase.as_str().into());
        map.insert("message".into(), self.message.into());
        if let Some(action) = self.action {
            map.insert("nextAction".into(), action.as_str().into());
        }
        if let Some(details) = &self.details {
            map.insert("details".into(), Value::Object(details.clone()));
        }
        Value::Object(map)
    }

    pub fn to_json(&self) -> String {
        self.to_json_value().to_string()
    }

    /// A warning in a result's `meta.warnings`: `{ code, message, details? }`.
    pub fn to_warning(&self) -> Value {
        let mut map = Map::new();
        map.insert("code".into(), self.code.as_str().into());
        map.insert("message".into(), self.message.into());
        if let Some(details) = &self.details {
            map.insert("details".into(), Value::Object(details.clone()));
        }
        Value::Object(map)
    }
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for GraphError {}

/// Projection of whatever a model executor threw (SPEC §3.3, §14 D6): `code` and `next_action`
/// are what the thrown value carried (`None` for a plain exception or a non-string field).
/// Supported codes keep their code and a legal action; everything else becomes
/// `CG_MODEL_UNAVAILABLE`/`retry`. The message is always the catalog's, the phase `match`, and
/// details are dropped.
pub fn project_executor_error(code: Option<&str>, next_action: Option<&str>) -> GraphError {
    let (code, fallback, also) = match code.and_then(Code::parse) {
        Some(c @ Code::ModelUnavailable) => (c, A::Retry, &[A::CheckConfig][..]),
        Some(c @ Code::ModelExecutorUnsafe) => (c, A::CheckConfig, &[][..]),
        Some(c @ Code::ModelContextExceeded) => (c, A::NarrowScope, &[][..]),
        Some(c @ Code::ModelOutputTooLarge) => (c, A::NarrowScope, &[A::Retry][..]),
        Some(c @ Code::ModelOutputInvalid) => (c, A::Retry, &[][..]),
        Some(c @ Code::ModelInvalidSelection) => (c, A::Refresh, &[A::Retry][..]),
        Some(c @ Code::ModelRefused) => (c, A::FixInput, &[][..]),
        Some(c @ (Code::ModelTimeout | Code::ModelCancelled | Code::ModelNotConfigured)) => {
            (c, A::Retry, &[A::CheckConfig][..])
        }
        Some(c @ Code::ConfigInvalid) => (c, A::CheckConfig, &[][..]),
        Some(c @ Code::ContextInvalid) => (c, A::FixInput, &[][..]),
        _ => (Code::ModelUnavailable, A::Retry, &[][..]),
    };
    let action = next_action
        .and_then(NextAction::parse)
        .filter(|a| *a == fallback || also.contains(a))
        .unwrap_or(fallback);
    let mut error = GraphError::new(code).with_phase(Phase::Match);
    error.action = Some(action);
    error
}

/// An executor that cannot run because an optional package is missing says which one
/// (`details.package`, SPEC §14 D18), so the caller knows what to install. Only a well-formed npm
/// package name passes, and only on `CG_MODEL_UNAVAILABLE` / `check_config`; anything else an
/// executor attaches is dropped like the rest of its details.
pub fn with_missing_package(error: GraphError, package: Option<&str>) -> GraphError {
    match package {
        Some(name)
            if error.code == Code::ModelUnavailable
                && error.action == Some(NextAction::CheckConfig)
                && is_package_name(name) =>
        {
            error.detail("package", name)
        }
        _ => error,
    }
}

/// `name` or `@scope/name`: lowercase letters, digits, `-`, `.`, `_`, `~`, at most 128 bytes.
fn is_package_name(name: &str) -> bool {
    let part = |p: &str| {
        !p.is_empty()
            && !p.starts_with('.')
            && !p.starts_with('_')
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._~".contains(&b))
    };
    if name.len() > 128 {
        return false;
    }
    match name.strip_prefix('@').map(|rest| rest.split_once('/')) {
        Some(Some((scope, pkg))) => part(scope) && part(pkg),
        Some(None) => false,
        None => part(name),
    }
}

/// Which host component threw, for [`project_component_error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    CapabilityRetriever,
    KnowledgeRetriever,
    RuntimeAdapter,
    Reader,
    DatabaseAuthority,
}

/// Projection of whatever an adapter, reader or retriever threw (SPEC §3.3): a few codes pass
/// through with their catalog defaults and no details; anything else becomes the component's
/// unavailability.
pub fn project_component_error(
    component: Component,
    code: Option<&str>,
    phase: Phase,
) -> GraphError {
    const PASS_THROUGH: [Code; 6] = [
        Code::RevisionMismatch,
        Code::IndexStale,
        Code::AdapterContractInvalid,
        Code::ScopeDenied,
        Code::AccessDenied,
        Code::ResultTooLarge,
    ];
    if let Some(code) = code
        .and_then(Code::parse)
        .filter(|c| PASS_THROUGH.contains(c))
    {
        return GraphError::new(code).with_phase(phase);
    }
    match component {
        Component::CapabilityRetriever | Component::KnowledgeRetriever => {
            GraphError::new(Code::RetrieverUnavailable).with_phase(phase)
        }
        Component::RuntimeAdapter => GraphError::new(Code::RuntimeUnavailable).with_phase(phase),
        Component::Reader => GraphError::new(Code::DocumentUnreadable)
            .with_phase(phase)
            .with_action(A::Retry),
        Component::DatabaseAuthority => {
            GraphError::new(Code::ConfigInvalid).with_phase(Phase::Load)
        }
    }
}

/// Longest string in an error's details, in UTF-16 code units (as JavaScript counts them).
pub const MAX_DETAIL_CHARS: usize = 128;

/// `s` if it has at most [`MAX_DETAIL_CHARS`] UTF-16 code units; otherwise its longest prefix of
/// whole characters that leaves room for a trailing `…`, plus `…`.
fn bounded_str(s: &str) -> String {
    if s.len() <= MAX_DETAIL_CHARS || s.encode_utf16().count() <= MAX_DETAIL_CHARS {
        return s.to_owned();
    }
    let mut units = 0;
    let mut cut = String::new();
    for c in s.chars() {
        units += c.len_utf16();
        if units > MAX_DETAIL_CHARS - 1 {
            break;
        }
        cut.push(c);
    }
    cut.push('…');
    cut
}

/// `value` with every string in it (object keys too) cut by [`bounded_str`].
fn bounded(value: Value) -> Value {
    match value {
        Value::String(s) if s.len() > MAX_DETAIL_CHARS => Value::String(bounded_str(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(bounded).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (bounded_str(&k), bounded(v)))
                .collect(),
        ),
        other => other,
    }
}

/// The `details` of an error made outside the engine (`new GraphError({ details })`), as JSON
/// text: a plain JSON object (no value the JS walk marked as not JSON), with every string cut
/// like the engine's own. `None` when it is not one.
pub fn host_details(json: &str) -> Option<String> {
    fn plain(v: &Value) -> bool {
        match v {
            Value::Array(items) => items.iter().all(plain),
            Value::Object(map) => !crate::json::is_non_json_marker(v) && map.values().all(plain),
            _ => true,
        }
    }
    let value: Value = serde_json::from_str(json).ok()?;
    (value.is_object() && plain(&value)).then(|| bounded(value).to_string())
}

/// `CG_INPUT_INVALID` about one argument: which field, and what it should have been.
pub fn input_invalid(field: &str, expected: &str) -> GraphError {
    GraphError::new(Code::InputInvalid)
        .detail("field", field)
        .detail("expected", expected)
}

/// `CG_INPUT_TOO_LARGE`: an input (`field`) has more than `limit` items or bytes.
pub fn input_too_large(field: &str, limit: u64) -> GraphError {
    GraphError::new(Code::InputTooLarge)
        .detail("field", field)
        .detail("limit", limit)
}

/// Runs `f`, turning a panic (a bug) into `CG_INTERNAL` with no detail.
pub fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(GraphError::new(Code::Internal)))
}

/// The whole catalog as JSON, for the JS layer's frozen constants and `GraphError` defaults.
pub fn catalog_json() -> String {
    let codes: Vec<Value> = Code::ALL
        .iter()
        .map(|code| {
            let info = code.info();
            serde_json::json!({
                "code": info.name,
                "phase": info.phase.as_str(),
                "nextAction": info.action.map(NextAction::as_str),
                "alsoLegal": info.also_legal.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
                "messages": info.messages,
            })
        })
        .collect();
    serde_json::json!({
        "codes": codes,
        "phases": Phase::ALL.map(Phase::as_str),
        "nextActions": NextAction::ALL.map(NextAction::as_str),
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_package_is_named_only_when_unavailable_for_config_and_well_formed() {
        let unavailable =
            || project_executor_error(Some("CG_MODEL_UNAVAILABLE"), Some("check_config"));
        let named = with_missing_package(unavailable(), Some("@openai/codex-sdk"));
        assert_eq!(named.details().unwrap()["package"], "@openai/codex-sdk");
        for bad in ["../etc/passwd", "@openai", "Codex SDK", "@scope/", "_x", ""] {
            assert!(
                with_missing_package(unavailable(), Some(bad))
                    .details()
                    .is_none(),
                "{bad}"
            );
        }
        let retry = project_executor_error(Some("CG_MODEL_UNAVAILABLE"), Some("retry"));
        assert!(with_missing_package(retry, Some("pkg")).details().is_none());
        let refused = project_executor_error(Some("CG_MODEL_REFUSED"), None);
        assert!(with_missing_package(refused, Some("pkg"))
            .details()
            .is_none());
        assert!(with_missing_package(unavailable(), Some(&"a".repeat(129)))
            .details()
            .is_none());
    }

    #[test]
    fn to_json_has_fixed_key_order_and_omits_absent_keys() {
        let e = GraphError::new(Code::CapabilityNotFound);
        assert_eq!(
            e.to_json(),
            r#"{"code":"CG_CAPABILITY_NOT_FOUND","phase":"query","message":"Requested capability does not exist","nextAction":"refresh"}"#
        );
        let closed = GraphError::new(Code::GraphClosed);
        assert_eq!(
            closed.to_json(),
            r#"{"code":"CG_GRAPH_CLOSED","phase":"lifecycle","message":"Capability graph is closed"}"#
        );
        let d = GraphError::new(Code::ConfigInvalid)
            .detail("path", "providers[0]")
            .detail("expected", "object");
        assert_eq!(
            d.to_json(),
            r#"{"code":"CG_CONFIG_INVALID","phase":"config","message":"Configuration is invalid","nextAction":"check_config","details":{"path":"providers[0]","expected":"object"}}"#
        );
    }

    #[test]
    fn every_string_in_details_is_cut_to_128_characters() {
        let long = "k".repeat(1 << 20);
        let e = GraphError::new(Code::InputInvalid)
            .detail("field", long.as_str())
            .detail(
                &long,
                serde_json::json!({ "nested": [long.as_str(), "short"], long.as_str(): 1 }),
            );
        let cut = format!("{}…", "k".repeat(127));
        let details = e.details().unwrap();
        assert_eq!(details["field"], cut.as_str());
        assert_eq!(details[&cut]["nested"][0], cut.as_str());
        assert_eq!(details[&cut]["nested"][1], "short");
        assert_eq!(details[&cut][&cut], 1);
        assert!(e.to_json().len() < 1024);

        let exact = "e".repeat(128);
        assert_eq!(bounded_str(&exact), exact);
        // Counted in UTF-16 code units; a surrogate pair is never split.
        let astral = bounded_str(&"😀".repeat(100));
        assert_eq!(astral.encode_utf16().count(), 127);
        assert!(astral.ends_with('…'));
        assert_eq!(bounded_str(&"中".repeat(128)), "中".repeat(128));
    }

    #[test]
    fn host_details_are_plain_json_objects_cut_like_the_engines() {
        let long = "x".repeat(300);
        let text = host_details(&serde_json::json!({ "a": [long] }).to_string()).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["a"][0].as_str().unwrap().chars().count(), 128);
        assert_eq!(host_details("[1]"), None);
        assert_eq!(host_details(r#"{"a":{"$cgNonJson":"function"}}"#), None);
        assert_eq!(host_details("not json"), None);
    }

    #[test]
    fn catalog_names_are_unique_and_well_formed() {
        let mut names: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Code::ALL.len());
        assert_eq!(Code::ALL.len(), 43);
        for code in Code::ALL {
            let info = code.info();
            assert!(info.name.starts_with("CG_"));
            assert_eq!(Code::parse(info.name), Some(*code));
            assert!(!info.messages.is_empty());
            assert_eq!(info.action.is_none(), *code == Code::GraphClosed);
        }
    }

    #[test]
    fn panics_become_internal_errors_without_details() {
        let e = guarded::<()>(|| panic!("secret /home/path")).unwrap_err();
        assert_eq!(
            e.to_json(),
            r#"{"code":"CG_INTERNAL","phase":"query","message":"Internal error","nextAction":"contact_admin"}"#
        );
        assert_eq!(guarded(|| Ok(1)).unwrap(), 1);
    }

    #[test]
    fn verb_phase_never_overrides_graph_closed() {
        assert_eq!(
            GraphError::new(Code::GraphClosed)
                .in_verb(Phase::Match)
                .phase(),
            Phase::Lifecycle
        );
        assert_eq!(
            GraphError::new(Code::InputInvalid)
                .in_verb(Phase::Match)
                .phase(),
            Phase::Match
        );
    }

    #[test]
    fn executor_projection_keeps_supported_codes_and_legal_actions() {
        let e = project_executor_error(Some("CG_MODEL_UNAVAILABLE"), Some("check_config"));
        assert_eq!(
            (e.code(), e.next_action()),
            (Code::ModelUnavailable, Some(A::CheckConfig))
        );
        assert_eq!(e.phase(), Phase::Match);
        assert_eq!(e.message(), "Model executor is unavailable");

        let e = project_executor_error(Some("CG_MODEL_REFUSED"), Some("retry"));
        assert_eq!(
            (e.code(), e.next_action()),
            (Code::ModelRefused, Some(A::FixInput))
        );

        let e = project_executor_error(Some("CG_MODEL_NOT_CONFIGURED"), None);
        assert_eq!(e.next_action(), Some(A::Retry));

        let e = project_executor_error(Some("CG_MODEL_OUTPUT_TOO_LARGE"), Some("bogus"));
        assert_eq!(e.next_action(), Some(A::NarrowScope));

        let e = project_executor_error(Some("CG_MODEL_INVALID_SELECTION"), Some("retry"));
        assert_eq!(e.next_action(), Some(A::Retry));

        let e = project_executor_error(Some("CG_CONTEXT_INVALID"), Some("refresh"));
        assert_eq!(
            (e.code(), e.next_action()),
            (Code::ContextInvalid, Some(A::FixInput))
        );
    }

    #[test]
    fn executor_projection_folds_unknown_codes_and_plain_exceptions() {
        for (code, action) in [
            (None, None),
            (Some("ECONNRESET"), Some("check_config")),
            (Some("CG_CAPABILITY_NOT_FOUND"), Some("refresh")),
            (Some("CG_GRAPH_CLOSED"), None),
        ] {
            let e = project_executor_error(code, action);
            assert_eq!(
                (e.code(), e.next_action()),
                (Code::ModelUnavailable, Some(A::Retry))
            );
            assert!(e.details().is_none());
        }
    }

    #[test]
    fn component_projection_passes_through_a_few_codes() {
        let e = project_component_error(Component::Reader, Some("CG_INDEX_STALE"), Phase::Document);
        assert_eq!((e.code(), e.phase()), (Code::IndexStale, Phase::Document));
        let e = project_component_error(Component::Reader, Some("EIO"), Phase::Document);
        assert_eq!(
            (e.code(), e.next_action()),
            (Code::DocumentUnreadable, Some(A::Retry))
        );
        let e = project_component_error(Component::RuntimeAdapter, None, Phase::Query);
        assert_eq!(e.code(), Code::RuntimeUnavailable);
        let e = project_component_error(Component::DatabaseAuthority, None, Phase::Query);
        assert_eq!((e.code(), e.phase()), (Code::ConfigInvalid, Phase::Load));
    }
}
