//! The only napi code. Every verb takes and returns strings: a result is its JSON text, a
//! failure is `!` followed by the error's JSON (one string per call, parsed once in JS; no
//! napi error machinery, so sync and async calls report errors the same way). A panic becomes
//! `CG_INTERNAL` with no detail.

use crate::engine::Engine;
use crate::error::{catalog_json, guarded, Code, GraphError, Result};
use napi::bindgen_prelude::{AsyncTask, Buffer, Either, Float32Array, ObjectFinalize};
use napi::{Env, Task};
use napi_derive::napi;
use std::sync::Arc;

fn outcome(r: Result<String>) -> String {
    match r {
        Ok(json) if crosses_to_js(&json) => json,
        Ok(_) => format!("!{}", GraphError::new(Code::ResultTooLarge).to_json()),
        Err(e) => format!("!{}", e.to_json()),
    }
}

/// V8's longest string (`v8::String::kMaxLength` on 64-bit hosts), in UTF-16 code units.
const JS_STRING_MAX_UNITS: usize = (1 << 29) - 24;

/// Whether `text` fits a JavaScript string. Budgets keep every answer far below the limit;
/// this is the last guard, so an answer that cannot cross is an error, never a crash.
fn crosses_to_js(text: &str) -> bool {
    // A UTF-8 string never has more UTF-16 units than bytes.
    text.len() <= JS_STRING_MAX_UNITS || text.encode_utf16().count() <= JS_STRING_MAX_UNITS
}

/// The error catalog (codes, default phases and actions, messages) as JSON. The JS layer
/// calls it once when the package loads, so it also silences Rust's default panic message:
/// a panic is reported as `CG_INTERNAL`, and its text (which may name paths) must never reach
/// a host's stderr.
#[napi]
pub fn error_catalog() -> String {
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    catalog_json()
}

/// The error (JSON) of `verb` called on something that is not a graph.
#[napi]
pub fn receiver_invalid(verb: String) -> String {
    crate::engine::receiver_invalid(&verb).to_json()
}

/// The details of an error made by the host (JSON), copied as plain JSON with every string cut
/// to the details bound; `None` when they are not a plain JSON object.
#[napi]
pub fn host_details(details: String) -> Option<String> {
    crate::error::host_details(&details)
}

/// `parseQualifiedId`: JSON of the value in, JSON of `{ providerId, capabilityId }` out.
#[napi]
pub fn parse_qualified_id(value: String) -> String {
    outcome(guarded(|| crate::query::args::parse_qualified_id(&value)))
}

/// `readVectorsFile`: the entries of a vectors file's bytes, as a view's `vectors()` pages give
/// them (JSON).
#[napi]
pub fn vectors_file_entries(bytes: Buffer) -> String {
    outcome(guarded(|| crate::engine::vectors_file_entries(&bytes)))
}

/// Measures JSON text from outside before the JS layer parses it (a tool call's arguments text,
/// a transport's message): `null` when it is within the arguments' bounds, else the error's
/// JSON naming `field`. `null` text: one found too long by its length.
#[napi]
pub fn measure_json_text(text: Option<Either<String, Buffer>>, field: String) -> Option<String> {
    let bytes = text.as_ref().map(|t| match t {
        Either::A(s) => s.as_bytes(),
        Either::B(b) => &b[..],
    });
    crate::query::args::check_text(bytes, &field)
        .err()
        .map(|e| e.to_json())
}

/// The error (JSON) for a list an SDK dispatcher was handed that the walk stopped at its bound
/// (`walked`: what it printed), or `null`.
#[napi]
pub fn dispatch_refused(walked: String, field: String) -> Option<String> {
    crate::query::args::dispatch_refused(&walked, &field).map(|e| e.to_json())
}

/// `formatQualifiedId`: JSON of the value in, JSON of the qualified ID string out.
#[napi]
pub fn format_qualified_id(value: String) -> String {
    outcome(guarded(|| crate::query::args::format_qualified_id(&value)))
}

/// `providerFromTools`: JSON of the options in, JSON of `{ definition, tools: [{ name,
/// capabilityId }] }` out.
#[napi]
pub fn provider_from_tools(options: String) -> String {
    outcome(guarded(|| {
        let v: serde_json::Value = serde_json::from_str(&options)
            .map_err(|_| crate::error::input_invalid("$", "object"))?;
        crate::definitions::from_tools::provider_from_tools(&v).map(|out| out.to_string())
    }))
}

/// Validates `lexicalExecutor(options)`; returns the options as the engine will use them.
#[napi]
pub fn lexical_options(options: String) -> String {
    outcome(guarded(|| {
        let v: serde_json::Value = serde_json::from_str(&options).unwrap_or_default();
        crate::matching::lexical_options(&v)
            .map(|min| serde_json::json!({ "minScore": min }).to_string())
    }))
}

/// Validates `semanticExecutor(options)`; returns the options as the engine will use them.
#[napi]
pub fn semantic_options(options: String) -> String {
    outcome(guarded(|| {
        let v: serde_json::Value = serde_json::from_str(&options).unwrap_or_default();
        crate::matching::semantic_options(&v).map(|(min, signals)| {
            serde_json::json!({ "minScore": min, "signals": signals.name() }).to_string()
        })
    }))
}

/// Validates `codexExecutor(options)`; returns the options as the executor uses them.
#[napi]
pub fn codex_options(options: String) -> String {
    outcome(guarded(|| {
        let v: serde_json::Value = serde_json::from_str(&options).unwrap_or_default();
        crate::matching::codex_options(&v).map(|o| o.to_string())
    }))
}

/// Whether a Codex CLI `--version` output meets the minimum.
#[napi]
pub fn codex_version_ok(output: String, minimum: String) -> bool {
    crate::matching::codex_version_ok(&output, &minimum)
}

/// A call waiting for a host component (executor, retriever, runtime adapter).
#[napi]
pub struct NativeHostCall {
    call: Arc<dyn crate::hostcall::HostCall>,
}

#[napi]
impl NativeHostCall {
    /// Which component: `executor`, `capabilityRetriever`, `knowledgeRetriever`,
    /// `runtime:<providerId>`.
    #[napi(getter)]
    pub fn host(&self) -> String {
        self.call.host().name()
    }

    /// The component's input as JSON.
    #[napi(getter)]
    pub fn request(&self) -> String {
        self.call.request().to_owned()
    }

    /// How long to wait for the component, in milliseconds (absent: no deadline).
    #[napi(getter)]
    pub fn timeout_ms(&self) -> Option<u32> {
        self.call
            .timeout_ms()
            .map(|ms| ms.min(u64::from(u32::MAX)) as u32)
    }

    /// The bound of the walk of the component's answer, in characters of JSON (absent: none).
    #[napi(getter)]
    pub fn output_bound(&self) -> Option<f64> {
        self.call.output_bound().map(|n| n as f64)
    }

    /// The answer of a call the engine serves itself (`host` is `lexical`), on the pool: the
    /// result or an error string. The JS layer waits for it as for a host's executor.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn run(&self) -> AsyncTask<PoolTask> {
        let call = self.call.clone();
        PoolTask::run(move || call.run())
    }

    /// The answer of a call the engine serves on its own fixed pool (the semantic executor with
    /// the first-party encoder), never on the libuv pool other calls share and never on a thread
    /// of its own: the JS thread only queues it (or learns at once that the queue is full).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn run_queued<'env>(
        &self,
        env: &'env Env,
    ) -> napi::Result<napi::bindgen_prelude::Object<'env>> {
        type Resolve = Box<dyn FnOnce(Env) -> napi::Result<String> + Send>;
        let (deferred, promise) = env.create_deferred::<String, Resolve>()?;
        let call = self.call.clone();
        let done: crate::hostcall::Done = Box::new(move |answer| {
            let text = outcome(answer);
            deferred.resolve(Box::new(move |_| Ok(text)));
        });
        call.run_queued(done);
        Ok(promise)
    }

    /// The answer of a semantic `match` once the host's embedder gave the intent's vector, on
    /// the pool; `failure` says why it gave none: `threw`, `timeout` (else no `Float32Array`).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn run_with(
        &self,
        vector: Option<Float32Array>,
        failure: Option<String>,
    ) -> AsyncTask<PoolTask> {
        let call = self.call.clone();
        let vector: Option<Vec<f32>> = vector.map(|v| v.to_vec());
        PoolTask::run(move || {
            let embedded = crate::matching::semantic::build::embedded;
            call.run_with(embedded(vector.as_deref(), failure.as_deref()))
        })
    }

    /// Judges the component's answer (JSON); returns the result or an error string.
    #[napi]
    pub fn finish(&self, output: String) -> String {
        outcome(guarded(|| self.call.finish(&output)))
    }

    /// The error for what the component threw (its `code`, `nextAction` and
    /// `details.package`, if strings).
    #[napi]
    pub fn fail(
        &self,
        code: Option<String>,
        next_action: Option<String>,
        package: Option<String>,
    ) -> String {
        let error = self.call.fail(code.as_deref(), next_action.as_deref());
        outcome(Err(crate::error::with_missing_package(
            error,
            package.as_deref(),
        )))
    }

    /// Ends what the component may still start, at once (synchronously): its call settled
    /// after starting `started` operations, which may still finish.
    #[napi]
    pub fn expire(&self, started: u32) -> String {
        let question = format!(r#"{{"op":"expire","started":{started}}}"#);
        outcome(guarded(|| self.call.ask(&question, None, Vec::new())))
    }

    /// A question the running component asks the engine (JSON), with the host readers'
    /// answers so far: the answer, an error string, or `?` + the reads still needed. Runs off
    /// the JS thread: answering may read documents.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn ask(
        &self,
        question: String,
        answers: Option<String>,
        bodies: Option<Vec<Buffer>>,
    ) -> AsyncTask<PoolTask> {
        let call = self.call.clone();
        let bodies = owned(bodies);
        PoolTask::run(move || call.ask(&question, answers.as_deref(), bodies))
    }
}

/// The error of a page read its caller aborted (an error string).
#[napi]
pub fn page_read_aborted() -> String {
    outcome(Err(crate::query::reads::page_read_aborted()))
}

/// A page read's abort, set from its caller's signal: the engine's scan of a local file
/// checks it between chunks.
#[napi]
#[derive(Default)]
pub struct NativeCancel {
    flag: Arc<std::sync::atomic::AtomicBool>,
}

#[napi]
impl NativeCancel {
    #[napi(constructor)]
    pub fn new() -> NativeCancel {
        NativeCancel::default()
    }

    #[napi]
    pub fn cancel(&self) {
        self.flag.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The check of one URL document streamed by a host reader for a page read (see
/// `knowledge::stream`); the JS layer feeds it the reader's chunks.
#[napi]
pub struct NativeStreamCheck {
    check: Option<crate::knowledge::stream::StreamCheck>,
    window: Vec<u8>,
}

/// Starts the check of a stream the engine asked for (`request.stream` with its `source`).
#[napi]
pub fn stream_check(request: String) -> Option<NativeStreamCheck> {
    crate::knowledge::stream::StreamCheck::new(&request)
        .ok()
        .map(|check| NativeStreamCheck {
            check: Some(check),
            window: Vec::new(),
        })
}

#[napi]
impl NativeStreamCheck {
    /// One chunk (`bytes` absent when the reader gave no bytes); `false` once the stream is
    /// refused, when the caller stops reading.
    #[napi]
    pub fn push(
        &mut self,
        bytes: Option<Buffer>,
        content_type: Option<String>,
        source: Option<String>,
    ) -> bool {
        self.check
            .as_mut()
            .is_some_and(|c| c.push(bytes.as_deref(), content_type.as_deref(), source.as_deref()))
    }

    /// A scan's next chunk to hand on (`last`: the stream ended), or `null` until more bytes
    /// arrive.
    #[napi]
    pub fn take(&mut self, last: bool) -> Option<Buffer> {
        let (bytes, _) = self.check.as_mut()?.take(last)?;
        Some(bytes.into())
    }

    /// The answer for the engine (JSON); the page's bytes are then in `window()`.
    #[napi]
    pub fn finish(&mut self) -> String {
        match self.check.take() {
            Some(check) => {
                let (answer, window) = check.finish();
                self.window = window;
                answer
            }
            None => r#"{"kind":"refused","reason":"reader_stream_invalid"}"#.to_owned(),
        }
    }

    #[napi]
    pub fn window(&mut self) -> Buffer {
        std::mem::take(&mut self.window).into()
    }
}

/// Whether the OS error `errno` (as the OS reports it, positive) is a passing condition of the
/// machine: the CLI's file writes (`init`, `migrate`) then say `retry`, as reads do.
#[napi]
pub fn os_error_is_transient(errno: i32) -> bool {
    crate::fsx::is_transient(errno)
}

/// The definition files of a provider folder (`layout`: `legacy` or `directory`) and the
/// provider ID its manifest names, as JSON `{ providerId, files }`.
#[napi]
pub fn definition_files(root: String, layout: String) -> String {
    use crate::config::Layout;
    use crate::sources::file::definition_files;
    outcome(guarded(|| {
        let layout = if layout == "directory" {
            Layout::Directory
        } else {
            Layout::Legacy
        };
        definition_files(std::path::Path::new(&root), layout).map(|(provider_id, files)| {
            serde_json::json!({ "providerId": provider_id, "files": files }).to_string()
        })
    }))
}

/// An open graph.
#[napi]
pub struct NativeGraph {
    engine: Arc<Engine>,
}

pub struct OpenTask {
    config: String,
    databases: crate::sources::database::DatabaseReads,
    engine: Option<Result<Engine>>,
}

impl Task for OpenTask {
    type Output = ();
    type JsValue = Either<NativeGraph, String>;

    fn compute(&mut self) -> napi::Result<()> {
        let config = std::mem::take(&mut self.config);
        let databases = std::mem::take(&mut self.databases);
        self.engine = Some(guarded(|| Engine::open_reads(&config, databases)));
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _: ()) -> napi::Result<Self::JsValue> {
        Ok(match self.engine.take() {
            Some(Ok(engine)) => Either::A(NativeGraph {
                engine: Arc::new(engine),
            }),
            Some(Err(e)) => Either::B(outcome(Err(e))),
            None => Either::B(outcome(Err(GraphError::new(Code::Internal)))),
        })
    }
}

/// What the JS layer reads from database authorities for one open or reload, handed over page
/// by page as the adapters answer, so no more than a page is ever held in JavaScript. The
/// collector names each adapter call to make and judges every page (bounds, page rules); the
/// JS layer only makes the calls. `open` and `reload` take what it gathered.
///
/// What a read gathers (the records' text, about as large as the provider's definitions) is
/// reported to V8 as external memory this object keeps alive, so JavaScript's collector frees
/// the adapter's spent buffers and page strings while the read grows, not after the engine
/// has validated everything.
#[napi(custom_finalize)]
#[derive(Default)]
pub struct NativeDatabaseReads {
    reads: crate::sources::database::ReadCollector,
    /// The bytes reported to V8 so far.
    reported: i64,
}

impl ObjectFinalize for NativeDatabaseReads {
    fn finalize(mut self, env: Env) -> napi::Result<()> {
        self.report(&env, 0);
        Ok(())
    }
}

/// The answer to the JS layer for what comes next: the view call `{ call, args }`, `null` when
/// the provider was read whole, `{ stopped: true }` when a bound or page rule ended the read
/// (its failure is recorded), or `{ unchanged: true }` when the view names the state the
/// current snapshot was read from (nothing is read).
fn next_json(next: crate::sources::database::Next) -> String {
    use crate::sources::database::Next;
    match next {
        Next::Ask(call) => call,
        Next::Done => "null".to_owned(),
        Next::Unchanged => r#"{"unchanged":true}"#.to_owned(),
        Next::Stopped => r#"{"stopped":true}"#.to_owned(),
    }
}

#[napi]
impl NativeDatabaseReads {
    /// A collector for reads within `budgets` (`budgets.database` as `databaseSources` gave
    /// it; the defaults without it).
    #[napi(constructor)]
    pub fn new(budgets: Option<String>) -> napi::Result<Self> {
        let reads = match budgets {
            None => Default::default(),
            Some(json) => crate::sources::database::ReadCollector::with_budgets(&json)
                .map_err(|e| napi::Error::from_reason(e.to_json()))?,
        };
        Ok(Self { reads, reported: 0 })
    }

    /// A provider's read starts: the view's source fields and working directory (JSON), and
    /// the names of the relation calls the view has (a JSON array). Answers the first view
    /// call.
    #[napi]
    pub fn begin(
        &mut self,
        env: Env,
        provider_id: String,
        context: String,
        offers: String,
    ) -> String {
        let next = outcome(guarded(|| {
            self.reads
                .begin(&provider_id, &context, &offers)
                .map(next_json)
        }));
        self.report_held(&env);
        next
    }

    /// The view's answer to the last call, as `{ items, nextCursor }` (JSON), or without
    /// `items` and the page's `itemsJson` (one JSON array text) beside it; answers what comes
    /// next.
    #[napi]
    pub fn page(&mut self, env: Env, page: String, items_json: Option<String>) -> String {
        let next = outcome(guarded(|| {
            self.reads
                .page_of(&page, items_json.as_deref())
                .map(next_json)
        }));
        self.report_held(&env);
        next
    }

    /// The provider's read finished: the view's source fields as read after the scans (JSON).
    /// Answers the first `vectors()` call when the view's vectors are wanted, else `null`.
    #[napi]
    pub fn end(&mut self, env: Env, after: String) -> String {
        let next = outcome(guarded(|| self.reads.end(&after).map(next_json)));
        self.report_held(&env);
        next
    }

    /// The provider's read failed: `{ code }` or `{ reason }` (JSON).
    #[napi]
    pub fn fail(&mut self, env: Env, provider_id: String, failed: String) -> String {
        let done = outcome(guarded(|| {
            self.reads
                .fail(&provider_id, &failed)
                .map(|()| "null".to_owned())
        }));
        self.report_held(&env);
        done
    }
}

impl NativeDatabaseReads {
    /// Everything gathered, as the engine takes it (JSON by provider ID); the reads are empty
    /// afterwards, and so is what this object reports holding.
    fn take(&mut self, env: &Env) -> Result<crate::sources::database::DatabaseReads> {
        self.report(env, 0);
        std::mem::take(&mut self.reads).into_reads()
    }

    fn report_held(&mut self, env: &Env) {
        let held = i64::try_from(self.reads.held_bytes()).unwrap_or(i64::MAX);
        self.report(env, held);
    }

    /// Tells V8 this object now keeps `held` bytes alive. A failed report changes nothing
    /// but how soon JavaScript collects.
    fn report(&mut self, env: &Env, held: i64) {
        if held != self.reported && env.adjust_external_memory(held - self.reported).is_ok() {
            self.reported = held;
        }
    }
}

/// Opens a graph from the wire config and what was read from database authorities; resolves
/// the graph or an error string.
#[napi(ts_return_type = "Promise<NativeGraph | string>")]
pub fn open(
    env: Env,
    config: String,
    databases: &mut NativeDatabaseReads,
) -> Either<AsyncTask<OpenTask>, String> {
    match databases.take(&env) {
        Ok(databases) => Either::A(AsyncTask::new(OpenTask {
            config,
            databases,
            engine: None,
        })),
        Err(e) => Either::B(outcome(Err(e))),
    }
}

/// `doctor`: every definition problem of every provider of a config (see `Engine`'s
/// `diagnose`), with what the JS layer read from database authorities.
#[napi]
pub fn diagnose(env: Env, config: String, databases: &mut NativeDatabaseReads) -> String {
    outcome(guarded(|| {
        let databases = databases.take(&env)?;
        crate::engine::diagnose_reads(&config, databases)
    }))
}

/// The database authorities of a wire config (`{ sources: [{ providerId, handle }], budgets }`),
/// or an error string.
#[napi]
pub fn database_sources(config: String) -> String {
    outcome(guarded(|| crate::engine::database_sources(&config)))
}

/// The error (JSON) an event reports when the watch of `provider_id` is lost.
#[napi]
pub fn watch_failed(provider_id: String) -> String {
    crate::engine::watch_failed(&provider_id).to_json()
}

/// The bounds of the pure-JSON walk of arguments (JSON), for the JS layer's engine tables.
#[napi]
pub fn walk_bounds() -> String {
    crate::json::walk_bounds_json()
}

/// For tests only (not part of the package's API): holds every lexical index build at its start
/// until called with `false`; returns how many builds have started in this process.
#[napi]
pub fn hold_lexical_index_builds(held: bool) -> f64 {
    crate::matching::lexical::index_gate::hold(held) as f64
}

/// The ID formats as regular expressions (JSON `{ id, knowledgeId }`), for tool schemas.
#[napi]
pub fn id_patterns() -> String {
    serde_json::json!({
        "id": crate::ids::ID_PATTERN,
        "knowledgeId": crate::ids::KNOWLEDGE_ID_PATTERN,
    })
    .to_string()
}

/// The eight neighbour kinds, in order (JSON), for tool schemas.
#[napi]
pub fn neighbor_kinds() -> String {
    serde_json::Value::from(crate::snapshot::Kind::ALL.map(|k| k.as_str()).to_vec()).to_string()
}

/// Work on the libuv pool (file I/O, reloads, document reads for a component): the JS thread
/// never waits for it. Resolves the result or an error string.
/// The verbs the JS layer runs on the pool (JSON list).
#[napi]
pub fn pool_verbs() -> String {
    serde_json::Value::from(crate::engine::POOL_VERBS.to_vec()).to_string()
}

/// A verb served by a host component, started on the pool: the answer, or the call waiting for
/// the component.
pub struct StartTask {
    engine: Arc<Engine>,
    request: Option<(String, String, Option<String>)>,
    started: Option<Result<crate::hostcall::Started>>,
}

impl Task for StartTask {
    type Output = ();
    type JsValue = Either<String, NativeHostCall>;

    fn compute(&mut self) -> napi::Result<()> {
        let engine = self.engine.clone();
        let request = self.request.take();
        self.started = Some(guarded(|| match request {
            Some((verb, args, bound)) => engine.start(&verb, &args, bound.as_deref()),
            None => Err(GraphError::new(Code::Internal)),
        }));
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _: ()) -> napi::Result<Self::JsValue> {
        Ok(match self.started.take() {
            Some(Ok(crate::hostcall::Started::Done(json))) => Either::A(json),
            Some(Ok(crate::hostcall::Started::Ask(call))) => {
                Either::B(NativeHostCall { call: call.into() })
            }
            Some(Err(e)) => Either::A(outcome(Err(e))),
            None => Either::A(outcome(Err(GraphError::new(Code::Internal)))),
        })
    }
}

pub struct PoolTask(Option<Box<dyn FnOnce() -> Result<String> + Send>>);

impl PoolTask {
    fn run(work: impl FnOnce() -> Result<String> + Send + 'static) -> AsyncTask<PoolTask> {
        AsyncTask::new(PoolTask(Some(Box::new(work))))
    }
}

impl Task for PoolTask {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        let work = self.0.take();
        Ok(outcome(guarded(|| match work {
            Some(work) => work(),
            None => Err(GraphError::new(Code::Internal)),
        })))
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}

impl NativeGraph {
    /// One body read as a job for the pool or the lane, on the state `pin` holds (pinned now
    /// without one). It counts as running from now until it has answered, or, when it answers
    /// `~`, until its run on the lane has.
    #[allow(clippy::too_many_arguments)]
    fn read_job(
        &self,
        verb: String,
        args: String,
        bound: Option<String>,
        answers: Option<String>,
        bodies: Option<Vec<Buffer>>,
        cancel: Option<&NativeCancel>,
        on_lane: bool,
        pin: Option<&NativeReadPin>,
    ) -> impl FnOnce() -> Result<String> + Send + 'static {
        let engine = self.engine.clone();
        let bodies = owned(bodies);
        let control =
            crate::knowledge::body::ReadControl::new(cancel.map(|c| c.flag.clone()), on_lane);
        let handed = pin.and_then(|p| p.hop.lock().unwrap_or_else(|e| e.into_inner()).take());
        // Counted before the state is pinned: close() never misses a read holding a pin.
        let running = handed.unwrap_or_else(|| engine.running());
        let state = pin.map_or_else(|| engine.pin(), |p| p.state.clone());
        let hop = pin.map(|p| p.hop.clone());
        move || {
            let (bound, answers) = (bound.as_deref(), answers.as_deref());
            let text = engine.read(state, &verb, &args, bound, answers, bodies, control);
            if let (Some(hop), Ok(crate::engine::LANE)) = (hop, text.as_deref()) {
                *hop.lock().unwrap_or_else(|e| e.into_inner()) = Some(running);
            }
            text
        }
    }
}

/// What one body read runs on through all its rounds, on the pool and on the lane: the state
/// pinned when it was made (a read made before `close()` finishes on it), and its count as a
/// running task while it moves from the pool to the lane.
#[napi]
pub struct NativeReadPin {
    state: Result<Arc<crate::store::StoreState>>,
    hop: Arc<std::sync::Mutex<Option<crate::engine::RunningGuard>>>,
}

#[napi]
impl NativeReadPin {
    /// Ends the read: a run on the lane it no longer makes is not waited for.
    #[napi]
    pub fn release(&self) {
        self.hop.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// Holds (`true`) or releases the long-read lane: tests show what stays free meanwhile.
#[napi]
pub fn hold_long_reads(on: bool) {
    crate::lane::hold(on);
}

/// The bodies host readers returned, copied out of their JS buffers.
fn owned(bodies: Option<Vec<Buffer>>) -> Vec<Option<Vec<u8>>> {
    bodies
        .unwrap_or_default()
        .iter()
        .map(|b| Some(b.to_vec()))
        .collect()
}

#[napi]
impl NativeGraph {
    /// The next batch of capability texts the host's embedder should embed, as JSON
    /// `{ batch, texts }`, or `null` when none is waiting.
    #[napi]
    pub fn claim_embed_batch(&self) -> Option<String> {
        let semantic = self.engine.semantic()?;
        let batch = semantic.claim()?;
        Some(
            serde_json::json!({
                "batch": batch.id,
                "texts": batch.texts,
                "timeoutMs": semantic.embed_timeout_ms,
            })
            .to_string(),
        )
    }

    /// What the host's embedder gave for batch `batch`: its vectors, or why it gave none
    /// (`failure`: `threw`, `timeout`; else no `Float32Array`). `null` when kept, else the
    /// error string the failed build reports.
    #[napi]
    pub fn put_embed_batch(
        &self,
        batch: f64,
        vectors: Option<Float32Array>,
        failure: Option<String>,
    ) -> Option<String> {
        let semantic = self.engine.semantic()?;
        let embedded = crate::matching::semantic::build::embedded;
        match semantic.put(
            batch as u64,
            embedded(vectors.as_deref(), failure.as_deref()),
        ) {
            Ok(()) => None,
            Err(e) => Some(outcome(Err(e.with_phase(crate::error::Phase::Match)))),
        }
    }

    /// The vectors file of a provider's current snapshot (see `matching::semantic::file`),
    /// once its vectors are built, waited for at most `timeout_ms`: JSON `{ file, count }`
    /// then the bytes are in `takeVectorsFile()`; or an error string.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn vectors_file(&self, provider_id: String, timeout_ms: u32) -> AsyncTask<PoolTask> {
        let engine = self.engine.clone();
        PoolTask::run(move || engine.vectors_file(&provider_id, u64::from(timeout_ms)))
    }

    /// The bytes of the vectors file `vectorsFile` last prepared.
    #[napi]
    pub fn take_vectors_file(&self) -> Buffer {
        self.engine.take_vectors_file().into()
    }

    /// Checks the JSON of a provider ID for `forProvider`; returns the ID as JSON or an error.
    #[napi]
    pub fn check_bound(&self, provider_id: String) -> String {
        outcome(guarded(|| self.engine.check_bound(&provider_id)))
    }

    /// Runs the query verb `verb` (its public name) on JSON arguments.
    #[napi]
    pub fn query(&self, verb: String, args: String, bound: Option<String>) -> String {
        outcome(guarded(|| {
            self.engine.query(&verb, &args, bound.as_deref())
        }))
    }

    /// Starts a verb served by a host component: the answer (or an error string), or the call
    /// waiting for the component.
    #[napi]
    pub fn start(
        &self,
        verb: String,
        args: String,
        bound: Option<String>,
    ) -> Either<String, NativeHostCall> {
        match guarded(|| self.engine.start(&verb, &args, bound.as_deref())) {
            Ok(crate::hostcall::Started::Done(json)) => Either::A(json),
            Ok(crate::hostcall::Started::Ask(call)) => {
                Either::B(NativeHostCall { call: call.into() })
            }
            Err(e) => Either::A(outcome(Err(e))),
        }
    }

    /// Runs the body read `verb` off the JS thread, with what the host's readers returned so
    /// far (answers as JSON, their bodies as buffers; the bytes are copied here). `cancel`
    /// stops a page read's scan of a local file between chunks. A read that must scan a large
    /// document answers `~` at once: the caller runs it again with `readOnLane`.
    #[napi(ts_return_type = "Promise<string>")]
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &self,
        verb: String,
        args: String,
        bound: Option<String>,
        answers: Option<String>,
        bodies: Option<Vec<Buffer>>,
        cancel: Option<&NativeCancel>,
        pin: Option<&NativeReadPin>,
    ) -> AsyncTask<PoolTask> {
        PoolTask::run(self.read_job(verb, args, bound, answers, bodies, cancel, false, pin))
    }

    /// `read` on the long-read lane (`crate::lane`), never on the pool other calls share.
    #[napi(ts_return_type = "Promise<string>")]
    #[allow(clippy::too_many_arguments)]
    pub fn read_on_lane<'env>(
        &self,
        env: &'env Env,
        verb: String,
        args: String,
        bound: Option<String>,
        answers: Option<String>,
        bodies: Option<Vec<Buffer>>,
        cancel: Option<&NativeCancel>,
        pin: Option<&NativeReadPin>,
    ) -> napi::Result<napi::bindgen_prelude::Object<'env>> {
        let job = self.read_job(verb, args, bound, answers, bodies, cancel, true, pin);
        type Resolve = Box<dyn FnOnce(Env) -> napi::Result<String> + Send>;
        let (deferred, promise) = env.create_deferred::<String, Resolve>()?;
        let slot = Arc::new(std::sync::Mutex::new(Some(deferred)));
        let taken = slot.clone();
        let queued = crate::lane::submit(move || {
            let text = outcome(guarded(job));
            if let Some(d) = taken.lock().unwrap_or_else(|e| e.into_inner()).take() {
                d.resolve(Box::new(move |_| Ok(text)));
            }
        });
        if queued.is_err() {
            let text = outcome(Err(crate::knowledge::body::long_reads_busy()));
            if let Some(d) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
                d.resolve(Box::new(move |_| Ok(text)));
            }
        }
        Ok(promise)
    }

    /// The collector for a reload with options `args` (wire JSON) within `budgets`
    /// (`budgets.database` as `databaseSources` gave it): it knows the state each database
    /// provider's current snapshot was read from, unless the reload is forced.
    #[napi]
    pub fn database_reads(
        &self,
        args: String,
        budgets: String,
    ) -> napi::Result<NativeDatabaseReads> {
        let reads = crate::sources::database::ReadCollector::with_budgets(&budgets)
            .map_err(|e| napi::Error::from_reason(e.to_json()))?;
        let known = self.engine.database_known(&args);
        let records = self.engine.database_records(&known);
        let reads = reads.knowing(known).knowing_records(records);
        Ok(NativeDatabaseReads {
            reported: 0,
            reads: reads.wanting_vectors(self.engine.vectors_model()),
        })
    }

    /// Reloads with what was read again from database authorities.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn reload(
        &self,
        env: Env,
        args: String,
        databases: &mut NativeDatabaseReads,
    ) -> AsyncTask<PoolTask> {
        let engine = self.engine.clone();
        let databases = databases.take(&env);
        PoolTask::run(move || engine.reload_reads(&args, databases?))
    }

    /// Closes for new calls. `true` when no engine task made before is still queued or
    /// running: every root handle is closed now. Either way [`NativeGraph::release`] frees the
    /// rest.
    #[napi]
    pub fn close(&self) -> bool {
        self.engine.close()
    }

    /// On the pool, once the engine tasks made before `close()` have finished: closes every
    /// root handle and frees the snapshots; the promise settles when all is released.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn release(&self) -> AsyncTask<PoolTask> {
        let engine = self.engine.clone();
        PoolTask::run(move || {
            engine.release();
            crate::memory::release_free_memory();
            Ok(String::new())
        })
    }

    /// Pins the state for one body read, every round of it (see [`NativeReadPin`]).
    #[napi]
    pub fn pin_read(&self) -> NativeReadPin {
        NativeReadPin {
            state: self.engine.pin(),
            hop: Arc::default(),
        }
    }

    /// The engine's own memory accounting (JSON).
    #[napi]
    pub fn stats(&self) -> String {
        outcome(guarded(|| self.engine.stats()))
    }

    /// What became of each provider's precomputed vectors (JSON), for `graph.status()`.
    #[napi]
    pub fn status(&self) -> String {
        outcome(guarded(|| self.engine.status()))
    }

    /// Which verbs served by a host component can answer (JSON `{ verb: bool }`).
    #[napi]
    pub fn host_verbs(&self, bound: Option<String>) -> String {
        outcome(guarded(|| self.engine.host_verbs(bound.as_deref())))
    }

    /// `query` on the pool, for the verbs of `POOL_VERBS`.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn query_on_pool(
        &self,
        verb: String,
        args: String,
        bound: Option<String>,
    ) -> AsyncTask<PoolTask> {
        let engine = self.engine.clone();
        // Pinned now: a query made before close() runs to its end whenever the pool takes it.
        let running = engine.running();
        let state = engine.pin();
        PoolTask::run(move || {
            let _running = running;
            engine.query_on(state, &verb, &args, bound.as_deref())
        })
    }

    /// `start` on the pool, for the verbs of `POOL_VERBS`.
    #[napi(ts_return_type = "Promise<string | NativeHostCall>")]
    pub fn start_on_pool(
        &self,
        verb: String,
        args: String,
        bound: Option<String>,
    ) -> AsyncTask<StartTask> {
        AsyncTask::new(StartTask {
            engine: self.engine.clone(),
            request: Some((verb, args, bound)),
            started: None,
        })
    }

    #[napi]
    pub fn is_closed(&self) -> bool {
        self.engine.is_closed()
    }
}

/// The cargo profile this binary was built with, as the marker a publish guard looks for in the
/// file (`capability-graph-build-profile=release`).
#[napi]
pub fn build_profile() -> &'static str {
    // Ends in NUL in the file: whatever text the linker places next cannot read as part of it.
    const MARKER: &str = concat!(
        "capability-graph-build-profile=",
        env!("CG_BUILD_PROFILE"),
        "\0"
    );
    &MARKER[..MARKER.len() - 1]
}
