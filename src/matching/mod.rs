//! `match` (SPEC §8): the intent and context rules, the authorized candidate catalog, the
//! executor contract (validated strictly, in its stated order), and the answer with the
//! resolution of what the matches require.

pub mod derived;
pub mod lexical;
pub mod mode;
pub mod pool;
pub mod semantic;

use crate::config::{Budgets, ConfigError};
use crate::error::{
    input_invalid, input_too_large, project_executor_error, Code, GraphError, Phase, Result,
};
use crate::hostcall::{Host, HostCall, Started};
use crate::ids::{format_qualified, parse_qualified};
use crate::json::is_non_json_marker;
use crate::json::to_json;
use crate::query::args::{clamped_integer, Args};
use crate::query::resolution::closure::Node;
use crate::query::resolution::resolve::resolution;
use crate::query::views::CapabilityId;
use crate::query::Call;
use crate::scope::{Meta, View};
use derived::{Derived, DerivedTable};
use mode::{Mode, Wanted, MAX_NEAREST};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Which executor answers `match`.
#[derive(Clone, Debug, PartialEq)]
pub enum Executor {
    Lexical {
        min_score: f64,
    },
    /// The semantic executor; its vectors and model live in the engine's
    /// [`semantic::Semantic`].
    Semantic {
        min_score: f64,
    },
    /// A host object the JS layer calls; `id` is what it calls itself.
    Host {
        id: String,
    },
}

/// `lexicalExecutor(options)`: `{ minScore? }`, a number in 0..=1.
pub fn lexical_options(options: &Value) -> Result<f64> {
    let bad = |path: &str, expected: &str| GraphError::from(ConfigError::new(path, expected));
    let map = match options {
        Value::Null => return Ok(lexical::DEFAULT_MIN_SCORE),
        Value::Object(m) if !is_non_json_marker(options) => m,
        _ => return Err(bad("$", "object")),
    };
    if let Some(k) = map.keys().find(|k| *k != "minScore") {
        return Err(bad(k, "one of: minScore"));
    }
    match map.get("minScore") {
        None => Ok(lexical::DEFAULT_MIN_SCORE),
        Some(v) => v
            .as_f64()
            .filter(|x| (0.0..=1.0).contains(x))
            .ok_or_else(|| bad("minScore", "number from 0 to 1")),
    }
}

/// `semanticExecutor(options)`: `{ minScore?, signals?, embedder? }`, `minScore` a number in
/// 0..=1, `signals` `fused` (default) or `dense` (the embedder is checked where the graph opens,
/// like every host component).
pub fn semantic_options(options: &Value) -> Result<(f64, semantic::Signals)> {
    let bad = |path: &str, expected: &str| GraphError::from(ConfigError::new(path, expected));
    let map = match options {
        Value::Null => return Ok((semantic::DEFAULT_MIN_SCORE, semantic::Signals::Fused)),
        Value::Object(m) if !is_non_json_marker(options) => m,
        _ => return Err(bad("$", "object")),
    };
    const OPTIONS: [&str; 3] = ["minScore", "signals", "embedder"];
    if let Some(k) = map.keys().find(|k| !OPTIONS.contains(&k.as_str())) {
        return Err(bad(k, "one of: minScore, signals, embedder"));
    }
    // The JS layer keeps the embedder object and leaves a marker where it was.
    if let Some(e) = map.get("embedder") {
        if e.get(crate::config::HOST_KEY).and_then(Value::as_str) != Some("embedder") {
            return Err(bad("embedder", "object with id, dimensions and embed"));
        }
    }
    let signals = match map.get("signals").map(Value::as_str) {
        None | Some(Some("fused")) => semantic::Signals::Fused,
        Some(Some("dense")) => semantic::Signals::Dense,
        Some(_) => return Err(bad("signals", "one of: fused, dense")),
    };
    let min_score = match map.get("minScore") {
        None => semantic::DEFAULT_MIN_SCORE,
        Some(v) => v
            .as_f64()
            .filter(|x| (0.0..=1.0).contains(x))
            .ok_or_else(|| bad("minScore", "number from 0 to 1"))?,
    };
    Ok((min_score, signals))
}

const KEYS: [&str; 9] = [
    "intent",
    "context",
    "limit",
    "mode",
    "timeoutMs",
    "signal",
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
];

/// Key of the marker the JS layer puts where the caller passed an `AbortSignal`.
const SIGNAL_MARKER: &str = "$cgHost";

const CONTEXT_MAX_KEYS: usize = 32;
const CONTEXT_MAX_KEY_BYTES: usize = 64;
const CONTEXT_MAX_STRING_BYTES: usize = 1024;
const REASON_MAX_BYTES: usize = 1024;

fn context_invalid(field: &str) -> GraphError {
    GraphError::new(Code::ContextInvalid).detail("field", field)
}

/// A flat object of at most 32 scalar facts (SPEC §8.2). It is only shown to the model.
fn context(v: Option<&Value>) -> Result<Map<String, Value>> {
    let map = match v {
        None => return Ok(Map::new()),
        Some(v @ Value::Object(m)) if !is_non_json_marker(v) => m,
        Some(_) => return Err(context_invalid("context")),
    };
    if map.len() > CONTEXT_MAX_KEYS {
        return Err(context_invalid("context").detail("limit", CONTEXT_MAX_KEYS));
    }
    for (k, v) in map {
        if k.is_empty() || k.len() > CONTEXT_MAX_KEY_BYTES {
            return Err(context_invalid("context").detail("reason", "key_length"));
        }
        let field = format!("context[{}]", Value::from(k.as_str()));
        let ok = match v {
            Value::String(s) => s.len() <= CONTEXT_MAX_STRING_BYTES,
            Value::Number(_) | Value::Bool(_) | Value::Null => true,
            _ => false,
        };
        if !ok {
            return Err(context_invalid(&field));
        }
    }
    Ok(map.clone())
}

/// What a `match` call is, once its arguments passed.
struct Request {
    intent: String,
    context: Map<String, Value>,
    limit: u64,
    mode: Mode,
    timeout_ms: u64,
}

fn request(args: &Args, budgets: &Budgets) -> Result<Request> {
    let b = &budgets.matching;
    let intent = args
        .string("intent")?
        .filter(|s| !crate::json::is_blank(s))
        .ok_or_else(|| input_invalid("intent", "non-blank string"))?;
    if intent.len() as u64 > b.max_intent_bytes {
        return Err(input_too_large("intent", b.max_intent_bytes));
    }
    let context = context(
        args.get("context")
            .map_err(|_| context_invalid("context"))?,
    )?;
    let limit = match args.get("limit")? {
        None => b.default_limit,
        Some(v) => clamped_integer(v, "limit", 1, b.max_limit)?,
    };
    let mode = match args.get("mode")? {
        None => Mode::Accept,
        Some(v) => v
            .as_str()
            .and_then(Mode::parse)
            .ok_or_else(|| input_invalid("mode", "'accept' or 'rank'"))?,
    };
    let timeout_ms = match args.get("timeoutMs")? {
        None => b.timeout_ms,
        Some(v) => clamped_integer(v, "timeoutMs", 1, b.max_timeout_ms)?,
    };
    if let Some(v) = args.get("signal")? {
        if v.get(SIGNAL_MARKER).and_then(Value::as_str) != Some("signal") {
            return Err(input_invalid("signal", "AbortSignal"));
        }
    }
    Ok(Request {
        intent: intent.to_owned(),
        context,
        limit,
        mode,
        timeout_ms,
    })
}

/// A `match` waiting for a host executor: what it pinned and what the answer is checked against.
pub struct Session {
    /// `{ intent, context, limit, mode, deadline, candidates }` as JSON.
    request: String,
    timeout_ms: u64,
    view: View,
    candidates: HashMap<String, Node>,
    limit: u64,
    mode: Mode,
    max_output_bytes: u64,
    budgets: crate::config::budgets::Resolve,
    executor_id: String,
    /// The built-in lexical executor's part: the engine ranks, off the JS thread ([`HostCall::run`]),
    /// while the JS layer holds the call to the same deadline, signal and close as a host's.
    lexical: Option<LexicalAsk>,
    /// The semantic executor's part: like the lexical one, served by the engine; with a host
    /// embedder the JS layer embeds the intent first ([`HostCall::run_with`]).
    semantic: Option<SemanticAsk>,
    /// For a built-in executor, what matching derived from each snapshot served (in the
    /// view's order): its index and vectors, built once and shared by every match on it.
    derived: Vec<Arc<Derived>>,
}

struct SemanticAsk {
    intent: String,
    engine: Arc<semantic::Semantic>,
    deadline: std::time::Instant,
}

struct LexicalAsk {
    intent: String,
    min_score: f64,
}

#[derive(Serialize)]
struct CandidateView<'a> {
    #[serde(rename = "qualifiedId")]
    qualified_id: String,
    name: &'a str,
    description: &'a str,
    #[serde(rename = "whenToUse")]
    when_to_use: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    distinction: Option<&'a str>,
    examples: &'a [Box<str>],
}

fn all_nodes(view: &View) -> impl Iterator<Item = Node> + '_ {
    (0..view.scope.len())
        .flat_map(move |p| (0..view.snapshot(p).capabilities.len() as u32).map(move |n| (p, n)))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Validates the call, builds the authorized catalog and either answers (empty catalog,
/// lexical executor) or prepares the request for the host's executor. `derived` holds what
/// matching derived from each snapshot.
pub fn start(
    call: &Call,
    json: &str,
    executor: Option<&Executor>,
    semantic_engine: Option<&Arc<semantic::Semantic>>,
    derived: &DerivedTable,
) -> Result<Started> {
    let args = Args::parse(json, &KEYS)?;
    let req = request(&args, call.budgets)?;
    let executor = executor.ok_or_else(|| GraphError::new(Code::ModelNotConfigured))?;
    let view = call.view(&args, None::<std::iter::Empty<&str>>)?;
    let count: usize = view.served.iter().map(|(s, _)| s.capabilities.len()).sum();
    let executor_id = match executor {
        Executor::Lexical { .. } => "lexical".to_owned(),
        Executor::Semantic { .. } => "semantic".to_owned(),
        Executor::Host { id } => id.clone(),
    };
    let mut session = Session {
        request: String::new(),
        timeout_ms: req.timeout_ms,
        view,
        candidates: HashMap::new(),
        limit: req.limit,
        mode: req.mode,
        max_output_bytes: call.budgets.matching.max_output_bytes,
        budgets: call.budgets.resolve.clone(),
        executor_id,
        lexical: None,
        semantic: None,
        derived: Vec::new(),
    };
    if count == 0 {
        return Ok(Started::Done(session.answer("empty", &[], &[])?));
    }
    if !matches!(executor, Executor::Host { .. }) {
        session.derived = session
            .view
            .served
            .iter()
            .map(|(s, _)| derived.of(s))
            .collect();
    }
    match executor {
        Executor::Lexical { min_score } => {
            // Ranking may first wait for the snapshot's index: the call waits like any executor's.
            session.request = "{}".to_owned();
            session.lexical = Some(LexicalAsk {
                intent: req.intent,
                min_score: *min_score,
            });
            Ok(Started::Ask(Box::new(session)))
        }
        Executor::Semantic { .. } => {
            let engine = semantic_engine.ok_or_else(|| GraphError::new(Code::Internal))?;
            // A snapshot served that has no build yet (an earlier revision asked for) gets one.
            if session.derived.iter().any(|d| d.vectors().is_none()) {
                let served: Vec<Arc<crate::snapshot::ProviderSnapshot>> =
                    session.view.served.iter().map(|(s, _)| s.clone()).collect();
                engine.plan(&served, &call.state.snapshots(), false);
            }
            let intent = semantic::cut(&req.intent, engine.max_text_bytes()).to_owned();
            session.request = if engine.is_host() {
                serde_json::json!({ "embed": [intent], "timeoutMs": engine.embed_timeout_ms })
                    .to_string()
            } else {
                "{}".to_owned()
            };
            session.semantic = Some(SemanticAsk {
                intent: req.intent,
                engine: engine.clone(),
                deadline: std::time::Instant::now()
                    + std::time::Duration::from_millis(req.timeout_ms),
            });
            Ok(Started::Ask(Box::new(session)))
        }
        Executor::Host { .. } => {
            // The catalog a model sees must fit its budget whole: never truncated.
            let max = call.budgets.matching.max_catalog_bytes;
            let mut catalog = String::from("[");
            for (p, n) in all_nodes(&session.view) {
                let s = session.view.snapshot(p);
                let c = s.capability(n);
                let qualified_id = format_qualified(s.provider_id(), c.id());
                if catalog.len() > 1 {
                    catalog.push(',');
                }
                catalog.push_str(&to_json(&CandidateView {
                    qualified_id: qualified_id.clone(),
                    name: c.name(),
                    description: c.description(),
                    when_to_use: c.when_to_use(),
                    distinction: c.distinction(),
                    examples: &c.examples,
                }));
                if catalog.len() as u64 + 1 > max {
                    return Err(GraphError::new(Code::CatalogTooLarge)
                        .detail("budget", "match.maxCatalogBytes")
                        .detail("limit", max));
                }
                session.candidates.insert(qualified_id, (p, n));
            }
            catalog.push(']');
            session.request = format!(
                r#"{{"intent":{},"context":{},"limit":{},"mode":"{}","deadline":{},"candidates":{catalog}}}"#,
                Value::from(req.intent.as_str()),
                Value::Object(req.context),
                req.limit,
                req.mode.as_str(),
                now_ms() + req.timeout_ms,
            );
            Ok(Started::Ask(Box::new(session)))
        }
    }
}

/// A built-in executor's pick: the capability, its reason and its confidence.
type BuiltIn = (Node, String, f64);

struct Selection {
    node: Node,
    reason: Option<String>,
    confidence: Option<f64>,
}

#[derive(Serialize)]
struct MatchView<'a> {
    id: CapabilityId<'a>,
    #[serde(rename = "qualifiedId")]
    qualified_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    confidence: Option<f64>,
}

fn output_invalid(reason: &str) -> GraphError {
    GraphError::new(Code::ModelOutputInvalid).detail("reason", reason)
}

impl Session {
    /// How matches and nearest candidates are shown: `{ id, qualifiedId, reason?, confidence? }`.
    fn views<'s>(&'s self, selections: &'s [Selection]) -> Vec<MatchView<'s>> {
        selections
            .iter()
            .map(|sel| {
                let s = self.view.snapshot(sel.node.0);
                let c = s.capability(sel.node.1);
                MatchView {
                    id: CapabilityId::of(s, sel.node.1),
                    qualified_id: format_qualified(s.provider_id(), c.id()),
                    reason: sel.reason.as_deref(),
                    confidence: sel.confidence,
                }
            })
            .collect()
    }

    /// The answer: matches in executor order and, for matches, the resolution of what they
    /// require (`partial` when its closure stopped at a budget); a `no_match` lists the
    /// `nearest` refused candidates (none when nothing had evidence), no other status does.
    fn answer(
        &self,
        status: &str,
        selections: &[Selection],
        nearest: &[Selection],
    ) -> Result<String> {
        let matches = self.views(selections);
        let mut status = status.to_owned();
        let resolution = if selections.is_empty() {
            None
        } else {
            let roots: Vec<Node> = selections.iter().map(|s| s.node).collect();
            let (text, partial) = resolution(
                &self.view,
                &roots,
                &self.budgets,
                Meta::of(&self.view, true),
            )?;
            if partial {
                status = "partial".into();
            }
            Some(text)
        };
        let mut meta = Meta::of(&self.view, true);
        meta.extra
            .insert("executor".into(), json!({ "id": self.executor_id }));
        meta.extra.insert(
            "candidates".into(),
            json!(self
                .view
                .served
                .iter()
                .map(|(s, _)| s.capabilities.len())
                .sum::<usize>()),
        );
        let mut out = format!(
            r#"{{"status":{},"matches":{}"#,
            Value::from(status.as_str()),
            to_json(&matches)
        );
        if status == "no_match" {
            out.push_str(r#","nearest":"#);
            out.push_str(&to_json(&self.views(nearest)));
        }
        if let Some(r) = resolution {
            out.push_str(r#","resolution":"#);
            out.push_str(&r);
        }
        out.push_str(&format!(r#","meta":{}}}"#, meta.to_json()));
        Ok(out)
    }

    /// The lexical executor's answer: its ranking of the scope (on each snapshot's index, which
    /// this waits for while it is built; an abandoned call leaves the build to finish for the
    /// next).
    fn ranked(&self, ask: &LexicalAsk) -> Result<String> {
        let (snapshots, indexes) = self.indexed();
        let ranking = lexical::rank(
            &snapshots,
            &indexes,
            &ask.intent,
            self.wanted(ask.min_score),
        );
        let built_in = |ranked: Vec<lexical::Ranked>| {
            ranked
                .into_iter()
                .map(|r| ((r.provider, r.node), r.reason, r.confidence))
                .collect()
        };
        self.answer_ranked(built_in(ranking.selected), built_in(ranking.nearest))
    }

    /// The snapshots served and their lexical indexes (built here when not built yet).
    fn indexed(
        &self,
    ) -> (
        Vec<&crate::snapshot::ProviderSnapshot>,
        Vec<&lexical::LexicalIndex>,
    ) {
        let snapshots: Vec<&crate::snapshot::ProviderSnapshot> =
            self.view.served.iter().map(|(s, _)| &**s).collect();
        let indexes = snapshots
            .iter()
            .zip(&self.derived)
            .map(|(s, d)| d.lexical(s))
            .collect();
        (snapshots, indexes)
    }

    /// What a built-in executor keeps, with its `min_score`.
    fn wanted(&self, min_score: f64) -> Wanted {
        Wanted {
            limit: self.limit as usize,
            min_score,
            mode: self.mode,
        }
    }

    /// A built-in executor's ranking (its selections and the nearest refused) as an answer:
    /// `no_match` when nothing ranked, confidences rounded to three decimals.
    fn answer_ranked(&self, ranked: Vec<BuiltIn>, nearest: Vec<BuiltIn>) -> Result<String> {
        let selections = |found: Vec<BuiltIn>| -> Vec<Selection> {
            found
                .into_iter()
                .map(|(node, reason, confidence)| Selection {
                    node,
                    reason: Some(reason),
                    confidence: Some((confidence * 1000.0).round() / 1000.0),
                })
                .collect()
        };
        let (selected, nearest) = (selections(ranked), selections(nearest));
        let status = if selected.is_empty() {
            "no_match"
        } else {
            "matched"
        };
        self.answer(status, &selected, &nearest)
    }

    /// The semantic executor's answer for the intent's vector `query`, once the vectors of
    /// every snapshot served are built (waited for within the call's deadline).
    fn semantic_ranked(&self, ask: &SemanticAsk, query: &[f32]) -> Result<String> {
        let derived: Vec<&Derived> = self.derived.iter().map(|d| &**d).collect();
        ask.engine.wait(&derived, ask.deadline)?;
        let vectors: Vec<&semantic::Vectors> = derived
            .iter()
            .map(|d| d.vectors())
            .collect::<Option<_>>()
            .ok_or_else(|| GraphError::new(Code::Internal))?;
        let (snapshots, indexes) = self.indexed();
        let ranking = semantic::rank(
            &snapshots,
            &indexes,
            &vectors,
            &ask.intent,
            query,
            self.wanted(ask.engine.min_score),
            ask.engine.signals,
        )
        .ok_or_else(|| semantic::build::unavailable("embedder_output_invalid"))?;
        let built_in = |scored: Vec<semantic::Scored>| {
            scored
                .into_iter()
                .map(|r| ((r.provider, r.node), r.reason, r.confidence))
                .collect()
        };
        self.answer_ranked(built_in(ranking.selected), built_in(ranking.nearest))
    }

    /// One step of a semantic `match` on the engine's pool: the intent embedded once the encoder
    /// has loaded (kept in `query`), then the answer once every snapshot's vectors are built;
    /// `None` while either is awaited.
    fn semantic_step(&self, query: &mut Option<Vec<f32>>) -> Option<Result<String>> {
        let Some(ask) = &self.semantic else {
            return Some(Err(GraphError::new(Code::Internal)));
        };
        let engine = &ask.engine;
        if query.is_none() {
            let encoder = match engine.encoder_now(ask.deadline)? {
                Ok(encoder) => encoder,
                Err(e) => return Some(Err(e)),
            };
            let text = semantic::cut(&ask.intent, engine.max_text_bytes());
            let closed = || engine.is_closed();
            let Some(vector) = encoder.embed(&[text], 1, &closed) else {
                return Some(Err(semantic::build::unavailable("encoder_failed")));
            };
            engine.count_intent();
            *query = Some(vector);
        }
        let derived: Vec<&Derived> = self.derived.iter().map(|d| &**d).collect();
        if let Err(e) = engine.vectors_now(&derived, ask.deadline)? {
            return Some(Err(e));
        }
        Some(self.semantic_ranked(ask, query.as_deref().unwrap_or_default()))
    }

    /// Size and count come first, so an answer of any length costs no more than its bound:
    /// its text is measured before it is parsed (the walk that printed it stopped at the same
    /// bound), and the selections and nearest are counted before any of them is looked at.
    /// Returns the status, the selections and the nearest candidates (only with `no_match`).
    fn validated(&self, output: &str) -> Result<(&'static str, Vec<Selection>, Vec<Selection>)> {
        let too_large =
            |limit: u64| GraphError::new(Code::ModelOutputTooLarge).detail("limit", limit);
        if output.len() as u64 > self.max_output_bytes || output == crate::json::TOO_MANY_CHARS {
            return Err(too_large(self.max_output_bytes));
        }
        let v: Value = serde_json::from_str(output).map_err(|_| output_invalid("not_json"))?;
        let map = v
            .as_object()
            .filter(|_| !is_non_json_marker(&v))
            .ok_or_else(|| output_invalid("object_required"))?;
        if let Some(Value::Array(items)) = map.get("selections") {
            if items.len() as u64 > self.limit {
                return Err(too_large(self.limit));
            }
        }
        if let Some(Value::Array(items)) = map.get("nearest") {
            if items.len() > MAX_NEAREST {
                return Err(too_large(MAX_NEAREST as u64));
            }
        }
        if map
            .keys()
            .any(|k| !matches!(k.as_str(), "status" | "selections" | "nearest"))
        {
            return Err(output_invalid("unknown_key"));
        }
        let status = match map.get("status").and_then(Value::as_str) {
            Some("matched") => "matched",
            Some("no_match") => "no_match",
            Some("unknown") => "unknown",
            Some("refused") => "refused",
            _ => return Err(output_invalid("status")),
        };
        let items = map
            .get("selections")
            .and_then(Value::as_array)
            .ok_or_else(|| output_invalid("selections_required"))?;
        if (status == "matched") == items.is_empty() {
            return Err(output_invalid("selections_for_status"));
        }
        let near = match map.get("nearest") {
            None => &[][..],
            Some(_) if status != "no_match" => return Err(output_invalid("nearest_for_status")),
            Some(n) => n
                .as_array()
                .ok_or_else(|| output_invalid("nearest_required"))?,
        };
        let selections = picks(items, "duplicate_selection")?;
        let nearest = picks(near, "duplicate_nearest")?;
        let resolve = |picked: Vec<Pick>| {
            picked
                .into_iter()
                .map(|(id, reason, confidence)| {
                    let node = *self
                        .candidates
                        .get(id)
                        .ok_or_else(|| GraphError::new(Code::ModelInvalidSelection))?;
                    Ok(Selection {
                        node,
                        reason,
                        confidence,
                    })
                })
                .collect::<Result<Vec<_>>>()
        };
        let (selections, nearest) = (resolve(selections)?, resolve(nearest)?);
        if status == "refused" {
            return Err(GraphError::new(Code::ModelRefused));
        }
        Ok((status, selections, nearest))
    }
}

/// An executor's selection or nearest candidate, well formed: its qualified ID, reason and
/// confidence.
type Pick<'a> = (&'a str, Option<String>, Option<f64>);

/// `items` (selections or nearest candidates) as picks, each ID once (`duplicate` otherwise).
fn picks<'a>(items: &'a [Value], duplicate: &str) -> Result<Vec<Pick<'a>>> {
    let mut picked = Vec::with_capacity(items.len());
    let mut ids: HashSet<&str> = HashSet::with_capacity(items.len());
    for item in items {
        let m = item
            .as_object()
            .filter(|_| !is_non_json_marker(item))
            .ok_or_else(|| output_invalid("selection_object_required"))?;
        if m.keys()
            .any(|k| !matches!(k.as_str(), "id" | "reason" | "confidence"))
        {
            return Err(output_invalid("unknown_key"));
        }
        let id = m
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| parse_qualified(id).is_some())
            .ok_or_else(|| output_invalid("qualified_id_required"))?;
        if !ids.insert(id) {
            return Err(output_invalid(duplicate));
        }
        let reason = match m.get("reason") {
            None => None,
            Some(Value::String(r)) if r.len() <= REASON_MAX_BYTES => Some(r.clone()),
            Some(_) => return Err(output_invalid("reason")),
        };
        let confidence = match m.get("confidence") {
            None => None,
            Some(c) => Some(
                c.as_f64()
                    .filter(|x| (0.0..=1.0).contains(x))
                    .ok_or_else(|| output_invalid("confidence"))?,
            ),
        };
        picked.push((id, reason, confidence));
    }
    Ok(picked)
}

impl HostCall for Session {
    fn host(&self) -> Host {
        if self.lexical.is_some() {
            Host::Lexical
        } else if self.semantic.is_some() {
            Host::Semantic
        } else {
            Host::Executor
        }
    }

    fn run(&self) -> Result<String> {
        let ask = self
            .lexical
            .as_ref()
            .ok_or_else(|| GraphError::new(Code::Internal))?;
        self.ranked(ask).map_err(|e| e.in_verb(Phase::Match))
    }

    /// The semantic executor with the first-party encoder: the intent is embedded and ranked on
    /// the engine's pool, the call parked there while the encoder loads or vectors are built.
    fn run_queued(self: Arc<Self>, done: crate::hostcall::Done) {
        let Some(ask) = &self.semantic else {
            return done(Err(GraphError::new(Code::Internal)));
        };
        let (engine, deadline) = (ask.engine.clone(), ask.deadline);
        let call = self.clone();
        let mut query = None;
        let step = move || {
            call.semantic_step(&mut query)
                .map(|answer| answer.map_err(|e| e.in_verb(Phase::Match)))
        };
        engine.submit(step, deadline, done);
    }

    fn run_with(&self, query: Result<&[f32]>) -> Result<String> {
        let ask = self
            .semantic
            .as_ref()
            .ok_or_else(|| GraphError::new(Code::Internal))?;
        let run = || {
            let query = query?;
            ask.engine.count_intent();
            self.semantic_ranked(ask, query)
        };
        run().map_err(|e| e.in_verb(Phase::Match))
    }

    fn request(&self) -> &str {
        &self.request
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(self.timeout_ms)
    }

    fn output_bound(&self) -> Option<u64> {
        Some(self.max_output_bytes)
    }

    /// Checks what the executor returned (SPEC §8.4, rules in order) and answers.
    fn finish(&self, output: &str) -> Result<String> {
        self.validated(output)
            .and_then(|(status, selections, nearest)| self.answer(status, &selections, &nearest))
            .map_err(|e| e.in_verb(Phase::Match))
    }

    /// What the executor threw, projected (SPEC §14 D6).
    fn fail(&self, code: Option<&str>, next_action: Option<&str>) -> GraphError {
        project_executor_error(code, next_action)
    }
}

/// The oldest Codex CLI `codexExecutor` runs: `exec --experimental-json` with `--output-schema`.
pub const MIN_CODEX_VERSION: (u64, u64, u64) = (0, 120, 0);

fn parse_version(s: &str) -> Option<(u64, u64, u64)> {
    let core = s.trim().split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    let v = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(v)
}

/// `codexExecutor(options)`: `{ model?, codexPath?, env?, minCliVersion? }`. Returns the options
/// as the executor uses them, with `minCliVersion` never below the built-in minimum.
pub fn codex_options(options: &Value) -> Result<Value> {
    let bad = |path: &str, expected: &str| GraphError::from(ConfigError::new(path, expected));
    let map = match options {
        Value::Null => Map::new(),
        Value::Object(m) if !is_non_json_marker(options) => m.clone(),
        _ => return Err(bad("$", "object")),
    };
    let mut out = Map::new();
    for (k, v) in &map {
        match k.as_str() {
            "model" | "codexPath" => {
                let s = v
                    .as_str()
                    .filter(|s| !crate::json::is_blank(s))
                    .ok_or_else(|| bad(k, "non-empty string"))?;
                out.insert(k.clone(), s.into());
            }
            "env" => {
                let env = v
                    .as_object()
                    .filter(|m| !is_non_json_marker(v) && m.values().all(Value::is_string))
                    .ok_or_else(|| bad("env", "object of strings"))?;
                out.insert(k.clone(), Value::Object(env.clone()));
            }
            "minCliVersion" => {
                v.as_str()
                    .and_then(parse_version)
                    .ok_or_else(|| bad("minCliVersion", "version x.y.z"))?;
            }
            _ => return Err(bad(k, "one of: model, codexPath, env, minCliVersion")),
        }
    }
    let asked = map
        .get("minCliVersion")
        .and_then(Value::as_str)
        .and_then(parse_version);
    let (a, b, c) = asked.map_or(MIN_CODEX_VERSION, |v| v.max(MIN_CODEX_VERSION));
    out.insert("minCliVersion".into(), format!("{a}.{b}.{c}").into());
    Ok(Value::Object(out))
}

/// Whether a Codex CLI's `--version` output (`codex-cli 0.163.0`) is at least `minimum`.
pub fn codex_version_ok(output: &str, minimum: &str) -> bool {
    let found = output.split_whitespace().rev().find_map(parse_version);
    match (found, parse_version(minimum)) {
        (Some(v), Some(min)) => v >= min,
        _ => false,
    }
}

#[cfg(test)]
mod codex_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_are_checked_and_the_minimum_only_rises() {
        let o = codex_options(&json!({ "model": "gpt-x", "minCliVersion": "0.1.0" })).unwrap();
        assert_eq!(o["minCliVersion"], "0.120.0");
        let o = codex_options(&json!({ "minCliVersion": "1.2.3" })).unwrap();
        assert_eq!(o["minCliVersion"], "1.2.3");
        for bad in [
            json!({ "model": "" }),
            json!({ "env": { "A": 1 } }),
            json!({ "minCliVersion": "new" }),
            json!({ "other": 1 }),
            json!([]),
        ] {
            let e = codex_options(&bad).unwrap_err();
            assert_eq!(
                (e.code(), e.phase()),
                (Code::ConfigInvalid, Phase::Config),
                "{bad}"
            );
        }
    }

    #[test]
    fn cli_versions_compare_numerically() {
        assert!(codex_version_ok("codex-cli 0.163.0\n", "0.120.0"));
        assert!(codex_version_ok("codex-cli 0.120.0-alpha.1", "0.120.0"));
        assert!(!codex_version_ok("codex-cli 0.99.9", "0.120.0"));
        assert!(!codex_version_ok("garbage", "0.120.0"));
    }
}
