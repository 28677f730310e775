//! One open graph: its configuration, its store, and the verbs as the binding calls them —
//! JSON text in, JSON text out, every error a `GraphError` in its verb's phase.

use crate::config::{Budgets, ConfigError, ExecutorSpec, OpenConfig, ProviderSource, SourceKind};
use crate::error::{Code, GraphError, Phase, Result};
use crate::hostcall::Started;
use crate::ids::is_id;
use crate::knowledge::body::ReadControl;
use crate::knowledge::host::HostBodies;
use crate::matching::derived::DerivedTable;
use crate::matching::semantic::{build::Model, Semantic};
use crate::matching::{self, lexical_options, semantic_options, Executor};
use crate::query::args::{check_walked, invalid, Args};
use crate::query::discovery::{catalog, details, members, neighbors, providers};
use crate::query::resolution::{resolve, selection};
use crate::query::retrieval::backends::{self, Backends};
use crate::query::retrieval::knowledge_search;
use crate::query::{maintenance, reads, Call};
use crate::snapshot::ProviderSnapshot;
use crate::sources::database::{
    Current, DatabaseRead, DatabaseReads, KeptRead, KeptReads, KeptRecords,
};
use crate::sources::{self, Loaded};
use crate::store::{ProviderSlots, Store, StoreState};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// The answer of a read that must run again on the long-read lane (`crate::lane`).
pub const LANE: &str = "~";

/// The keys of `reload`'s options.
const RELOAD_KEYS: [&str; 3] = ["providerId", "definitions", "force"];

/// The provider a reload names (a configured one, if any) and whether it is forced.
fn reload_options<'a>(state: &StoreState, args: &'a Args) -> Result<(Option<&'a str>, bool)> {
    let force = match args.get("force")? {
        None => false,
        Some(Value::Bool(force)) => *force,
        Some(_) => return Err(invalid("force", "boolean")),
    };
    let only = match args.get("providerId")? {
        None => None,
        Some(Value::String(p)) if is_id(p) => {
            if !state.providers.contains_key(p) {
                return Err(GraphError::new(Code::ProviderNotFound));
            }
            Some(p.as_str())
        }
        Some(_) => return Err(invalid("providerId", "ID")),
    };
    Ok((only, force))
}

/// Verbs whose work can grow with the graph rather than with a page: the binding runs them on
/// the libuv pool so that the JS thread never waits for them. `match` ranks or lists the whole
/// scope (and may wait for the lexical index); `export` gathers up to `export.maxNodes`;
/// `checkDocuments` opens every local document.
pub const POOL_VERBS: [&str; 3] = ["match", "export", "checkDocuments"];

pub struct Engine {
    store: Store,
    budgets: Budgets,
    /// In config order; inline sources keep no definition once loaded.
    sources: Vec<ProviderSource>,
    /// Whether the host registered knowledge readers (URL documents are references otherwise).
    has_readers: bool,
    executor: Option<Executor>,
    /// The semantic executor's model and vector builds, when it is the executor.
    semantic: Option<Arc<Semantic>>,
    /// What matching derived from each snapshot served (lexical indexes, vectors), beside the
    /// snapshots (SPEC D28).
    derived: Arc<DerivedTable>,
    /// What the database source keeps with each current snapshot for its next read.
    kept: KeptReads,
    backends: Backends,
    running: Arc<Running>,
    /// The state `close()` took, until [`Engine::release`] frees it.
    closing: Mutex<Option<Arc<StoreState>>>,
    /// The last vectors file prepared for `capability-graph embed`.
    vectors_out: Mutex<Vec<u8>>,
}

/// How many engine tasks made before `close()` are queued or running off the JS thread:
/// close() closes the trusted roots only once none is left, so a read started before it keeps
/// every document it has yet to open.
#[derive(Default)]
struct Running {
    count: Mutex<usize>,
    idle: Condvar,
}

impl Running {
    fn wait_idle(&self) {
        let mut count = self.count.lock().unwrap_or_else(|e| e.into_inner());
        while *count > 0 {
            count = self.idle.wait(count).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// One engine task's place in [`Running`] while it lives (taken on the JS thread when the task
/// is made, dropped when its work is done).
pub struct RunningGuard(Arc<Running>);

impl Drop for RunningGuard {
    fn drop(&mut self) {
        let mut count = self.0.count.lock().unwrap_or_else(|e| e.into_inner());
        *count -= 1;
        if *count == 0 {
            self.0.idle.notify_all();
        }
    }
}

impl Engine {
    /// `open`: parses the wire config (phase `config`), then loads every provider (phase
    /// `load`; several side by side, taken in config order); any failure rejects the whole
    /// open, the first in config order.
    pub fn open(config_json: &str, databases: Option<&str>) -> Result<Engine> {
        Engine::open_reads(config_json, DatabaseReads::of_json(databases))
    }

    /// [`Engine::open`] with what was read from database authorities and the records to keep
    /// with their snapshots.
    pub fn open_reads(config_json: &str, databases: DatabaseReads) -> Result<Engine> {
        let mut config = parse_config(config_json)?;
        let mut databases = database_reads(databases);
        let jobs: Vec<_> = config
            .providers
            .iter()
            .map(|source| {
                let read = take_read(&mut databases, source);
                (source, None, read, None)
            })
            .collect();
        let mut providers = BTreeMap::new();
        let mut ids = Vec::with_capacity(jobs.len());
        let derived = Arc::new(DerivedTable::default());
        let kept = KeptReads::default();
        load_each(jobs, |source, loaded| {
            let (snapshot, source_state) = placed(&derived, &kept, loaded?);
            let id = snapshot.provider_id().to_owned();
            if providers.contains_key(&id) {
                // Two inline definitions naming one provider.
                return Err(ConfigError::new(&source.path, "unique providerId").into());
            }
            ids.push(id.clone());
            providers.insert(
                id,
                ProviderSlots {
                    source: source_state,
                    current: snapshot,
                    previous: None,
                    refresh_failed: false,
                },
            );
            Ok(())
        })?;
        for (source, id) in config.providers.iter_mut().zip(ids) {
            if let SourceKind::Inline { definition, .. } = &mut source.kind {
                *definition = Value::Null;
            }
            source.provider_id = Some(id);
        }
        let mut model_dir = None;
        let named = config.executor.as_ref().and_then(vectors_model);
        let (executor, semantic) = match config.executor.take() {
            None => (None, None),
            Some(ExecutorSpec::Lexical { options }) => {
                let min_score = lexical_options(&options).map_err(|e| {
                    let expected = e.details().and_then(|d| d.get("expected")?.as_str());
                    ConfigError::new("executor", expected.unwrap_or_default())
                })?;
                (Some(Executor::Lexical { min_score }), None)
            }
            Some(ExecutorSpec::Host(h)) => (Some(Executor::Host { id: h.id }), None),
            Some(ExecutorSpec::Semantic {
                options,
                embedder,
                model,
            }) => {
                let (min_score, signals) = semantic_options(&options).map_err(|e| {
                    let expected = e.details().and_then(|d| d.get("expected")?.as_str());
                    ConfigError::new("executor", expected.unwrap_or_default())
                })?;
                let b = &config.budgets.matching;
                let model = match (embedder, model) {
                    (Some((host, dims)), _) => Model::Host { id: host.id, dims },
                    (None, crate::config::ModelSpec::Dir(dir)) => {
                        model_dir = Some(dir);
                        Model::Loading
                    }
                    (None, crate::config::ModelSpec::Missing(package)) => {
                        Model::Unavailable(matching::semantic::package_missing(&package))
                    }
                };
                let semantic = Semantic::new(model, min_score, b, derived.clone())
                    .naming(named)
                    .ranking_on(signals);
                (
                    Some(Executor::Semantic { min_score }),
                    Some(Arc::new(semantic)),
                )
            }
        };
        // A provider's ID may come from its definitions, so adapters are matched after loading.
        if let Some(i) = config
            .runtime_adapters
            .iter()
            .position(|(p, _)| !providers.contains_key(p))
        {
            let path = format!("runtimeAdapters[{i}].providerId");
            return Err(ConfigError::new(&path, "configured provider").into());
        }
        let backends = Backends {
            capability_retriever: config.capability_retriever.is_some(),
            knowledge_retriever: config.knowledge_retriever.is_some(),
            runtime: config
                .runtime_adapters
                .iter()
                .map(|(p, _)| p.clone())
                .collect(),
        };
        let engine = Engine {
            executor,
            semantic,
            derived,
            kept,
            backends,
            store: Store::new(StoreState { providers }),
            budgets: config.budgets,
            sources: config.providers,
            has_readers: !config.readers.is_empty(),
            running: Arc::default(),
            closing: Mutex::default(),
            vectors_out: Mutex::default(),
        };
        crate::memory::release_free_memory();
        engine.load_encoder(model_dir);
        engine.index_in_background();
        Ok(engine)
    }

    /// Loads the first-party encoder on the engine's pool (open answers without waiting); once
    /// loaded, the vectors of the current snapshots are built.
    fn load_encoder(&self, dir: Option<std::path::PathBuf>) {
        let (Some(semantic), Some(dir)) = (self.semantic.clone(), dir) else {
            return;
        };
        let snapshots: Vec<_> = self.store.current_snapshots();
        let known = self.store.snapshots();
        let load = move || {
            semantic.loaded(matching::semantic::load_encoder(&dir));
            semantic.plan(&snapshots, &known, true);
            semantic.build_on_pool();
        };
        matching::pool::POOL.run(load);
    }

    /// The vectors file of `provider`'s current snapshot, once built (waited for at most
    /// `timeout_ms`): `{ file, count }`; its bytes wait in [`Engine::take_vectors_file`].
    pub fn vectors_file(&self, provider: &str, timeout_ms: u64) -> Result<String> {
        let semantic = self
            .semantic
            .as_ref()
            .ok_or_else(|| GraphError::new(Code::ModelNotConfigured))?;
        let state = self.store.pin()?;
        let slots = state
            .providers
            .get(provider)
            .ok_or_else(|| GraphError::new(Code::ProviderNotFound))?;
        let s = &*slots.current;
        let derived = self.derived.of(&slots.current);
        self.build_with_encoder();
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(timeout_ms);
        semantic.wait(&[&derived], deadline)?;
        let v = derived
            .vectors()
            .ok_or_else(|| GraphError::new(Code::Internal))?;
        let bytes = matching::semantic::file::encode(s, v);
        *self.vectors_out.lock().unwrap_or_else(|e| e.into_inner()) = bytes;
        Ok(serde_json::json!({
            "file": matching::semantic::file::file_name(&v.model),
            "count": v.scales.len(),
        })
        .to_string())
    }

    pub fn take_vectors_file(&self) -> Vec<u8> {
        std::mem::take(&mut *self.vectors_out.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The model whose precomputed vectors a reload asks database views for, if any.
    pub fn vectors_model(&self) -> Option<(String, usize)> {
        self.semantic.as_ref().and_then(|s| s.wanted_model())
    }

    /// What became of each provider's precomputed vectors (its vectors file or its view's
    /// `vectors()`), in config order: `{ providers: [{ providerId, vectors }] }`, `vectors`
    /// `null` until the semantic executor has planned the provider's build (and always without
    /// one). Never a path or a raw message.
    pub fn status(&self) -> Result<String> {
        let state = self.store.pin()?;
        let providers: Vec<Value> = self
            .sources
            .iter()
            .filter_map(|s| s.provider_id.as_deref())
            .filter(|id| state.providers.contains_key(*id))
            .map(|id| {
                let vectors = self.semantic.as_ref().and_then(|s| s.precomputed(id));
                serde_json::json!({
                    "providerId": id,
                    "vectors": vectors.map(|v| v.to_json()),
                })
            })
            .collect();
        Ok(serde_json::json!({ "providers": providers }).to_string())
    }

    /// The semantic executor's state, for the binding (host embedder batches, stats).
    pub fn semantic(&self) -> Option<&Arc<Semantic>> {
        self.semantic.as_ref()
    }

    /// Plans the vector builds of the current snapshots and, with the first-party encoder,
    /// builds them on the engine's pool.
    fn embed_in_background(&self) {
        let Some(semantic) = self.semantic.clone() else {
            return;
        };
        semantic.plan(
            &self.store.current_snapshots(),
            &self.store.snapshots(),
            true,
        );
        self.build_with_encoder();
    }

    /// Builds what is planned with the first-party encoder on the engine's pool.
    pub fn build_with_encoder(&self) {
        if let Some(semantic) = &self.semantic {
            semantic.build_on_pool();
        }
    }

    /// With the lexical executor configured, builds the index of every snapshot that lacks
    /// one on the engine's pool (one job per open or reload): open and reload answer without
    /// waiting for it, and the first `match` (which starts on the libuv pool, see
    /// [`POOL_VERBS`]) waits for it there, or builds it itself when it comes first.
    fn index_in_background(&self) {
        self.embed_in_background();
        if !matches!(
            self.executor,
            Some(Executor::Lexical { .. } | Executor::Semantic { .. })
        ) {
            return;
        }
        let pending: Vec<_> = self
            .store
            .snapshots()
            .into_iter()
            .map(|s| (self.derived.of(&s), s))
            .filter(|(d, _)| !d.lexical_ready())
            .collect();
        if pending.is_empty() {
            return;
        }
        let derived = self.derived.clone();
        let build = move || {
            for (d, s) in &pending {
                d.lexical(s);
            }
            // A snapshot a reload let go while its index was built is gone with it now.
            drop(pending);
            derived.prune();
            crate::memory::release_free_memory();
        };
        matching::pool::POOL.run(build);
    }

    /// Builds every served snapshot's lexical index on the calling thread (the operation
    /// counters of the scale tests count per thread; no executor is configured there, so no
    /// background build competes).
    #[cfg(test)]
    pub(crate) fn build_indexes_here(&self) {
        for s in self.store.snapshots() {
            self.derived.of(&s).lexical(&s);
        }
    }

    /// What the current snapshots keep in memory, by the engine's own accounting (for the
    /// bench and for hosts watching their memory): per provider, its capabilities, the heap
    /// bytes of its current and previous snapshots and of its lexical index once built.
    pub fn stats(&self) -> Result<String> {
        let state = self.store.pin()?;
        let providers: Vec<Value> = state
            .providers
            .iter()
            .map(|(id, slots)| {
                let derived = self.derived.get(&slots.current);
                serde_json::json!({
                    "providerId": id,
                    "capabilities": slots.current.capabilities.len(),
                    "snapshotBytes": crate::snapshot::size::snapshot_bytes(&slots.current),
                    "previousSnapshotBytes": slots.previous.as_deref().map(crate::snapshot::size::snapshot_bytes),
                    "lexicalIndexBytes": derived.as_ref().and_then(|d| d.lexical_built()).map(|i| i.memory_bytes()),
                    "vectorBytes": derived.as_ref().and_then(|d| d.vectors()).map(|v| v.memory_bytes()),
                    "vectorsFile": self.semantic.as_ref().and_then(|s| s.precomputed(id)).map(|f| f.file_word()),
                })
            })
            .collect();
        let embedded = self.semantic.as_ref().map(|s| s.embedded());
        Ok(serde_json::json!({ "providers": providers, "embedded": embedded }).to_string())
    }

    /// Which verbs served by a host component can answer a caller bound to `bound` (or not), as
    /// JSON `{ verb: bool }`.
    pub fn host_verbs(&self, bound: Option<&str>) -> Result<String> {
        let call = self.call(bound)?;
        let host_executor = matches!(self.executor, Some(Executor::Host { .. }));
        Ok(backends::host_verbs(
            &call,
            self.executor.is_some(),
            host_executor,
            self.has_readers,
        )
        .to_string())
    }

    fn call<'a>(&'a self, bound: Option<&'a str>) -> Result<Call<'a>> {
        Ok(self.call_on(self.store.pin()?, bound))
    }

    fn call_on<'a>(&'a self, state: Arc<StoreState>, bound: Option<&'a str>) -> Call<'a> {
        Call {
            state,
            budgets: &self.budgets,
            backends: &self.backends,
            bound,
        }
    }

    /// The state a call made now runs on to its end, wherever and whenever its work runs
    /// (`CG_GRAPH_CLOSED` after `close()`).
    pub fn pin(&self) -> Result<Arc<StoreState>> {
        self.store.pin()
    }

    /// Counts an engine task made now, before `close()` (see [`Engine::release`]).
    pub fn running(&self) -> RunningGuard {
        *self.running.count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        RunningGuard(self.running.clone())
    }

    /// `forProvider(id)` (JSON of the argument): a configured provider's ID, as JSON.
    pub fn check_bound(&self, provider_id: &str) -> Result<String> {
        let state = self.store.pin()?;
        check_walked(provider_id)?;
        let id: Value = serde_json::from_str(provider_id).unwrap_or_default();
        let id = id
            .as_str()
            .filter(|s| is_id(s))
            .ok_or_else(|| invalid("providerId", "ID"))?;
        if !state.providers.contains_key(id) {
            return Err(GraphError::new(Code::ProviderNotFound));
        }
        Ok(Value::from(id).to_string())
    }

    pub fn resolve(&self, args: &str, bound: Option<&str>) -> Result<String> {
        self.query("resolve", args, bound)
    }

    /// A query verb by its public name, on JSON arguments; errors take phase `query`.
    pub fn query(&self, verb: &str, args: &str, bound: Option<&str>) -> Result<String> {
        self.query_on(self.pin(), verb, args, bound)
    }

    /// `query` on the state the call pinned when it was made.
    pub fn query_on(
        &self,
        state: Result<Arc<StoreState>>,
        verb: &str,
        args: &str,
        bound: Option<&str>,
    ) -> Result<String> {
        let run = match verb {
            "resolve" => resolve::resolve,
            "listCatalog" => catalog::list_catalog,
            "listProviders" => providers::list_providers,
            "getProvider" => providers::get_provider,
            "listSpecificationDocuments" => providers::list_specification_documents,
            "getCapabilities" => details::get_capabilities,
            "getNeighbors" => neighbors::get_neighbors,
            "listKnowledgeMembers" => members::list_knowledge_members,
            "resolveSelection" => selection::resolve_selection,
            "export" => maintenance::export,
            "checkDocuments" => maintenance::check_documents,
            _ => return Err(invalid("verb", "a query verb")),
        };
        state
            .map(|state| self.call_on(state, bound))
            .and_then(|call| {
                check_walked(args)?;
                run(&call, args)
            })
            .map_err(|e| e.in_verb(verb_phase(verb)))
    }

    /// A body read by its public name; errors take phase `document`. Runs off the JS thread.
    /// `answers` and `bodies` are what the host's readers returned for URL documents so far;
    /// while a URL document still needs its reader, the answer is `?` and the requests (JSON).
    /// A page read's caller can abort it: a local file's scan stops at its next chunk once
    /// `control` is cancelled. Off the long-read lane, a read that would scan a large document
    /// answers [`LANE`]: run it again, with the same arguments, on the lane.
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &self,
        state: Result<Arc<StoreState>>,
        verb: &str,
        args: &str,
        bound: Option<&str>,
        answers: Option<&str>,
        bodies: Vec<Option<Vec<u8>>>,
        control: ReadControl,
    ) -> Result<String> {
        let run = match verb {
            "readDocuments" => reads::read_documents,
            "readSpecification" => reads::read_specification,
            "readDocumentPage" => reads::read_document_page,
            "readSpecificationPage" => reads::read_specification_page,
            _ => return Err(invalid("verb", "a read verb")),
        };
        let host = HostBodies::new(self.has_readers, answers, bodies)
            .with_reader_timeout(self.budgets.read.reader_timeout_ms)
            .with_control(control);
        let result = state
            .map(|state| self.call_on(state, bound))
            .and_then(|call| {
                check_walked(args)?;
                run(&call, args, &host)
            });
        // What the host still has to read comes first: the rest was computed without it.
        if let Some(requests) = host.pending() {
            return Ok(format!("?{requests}"));
        }
        if host.control().wants_lane() {
            return Ok(LANE.to_owned());
        }
        result.map_err(|e| e.in_verb(verb_phase(verb)))
    }

    /// A verb that may need a host component (`match`, `retrieveCapabilities`,
    /// `queryKnowledge`, `queryRuntime`): answered at once, or prepared for the component. `match` errors take
    /// phase `match`, the others `query` (but `CG_GRAPH_CLOSED`).
    pub fn start(&self, verb: &str, args: &str, bound: Option<&str>) -> Result<Started> {
        let call = self
            .call(bound)
            .and_then(|call| check_walked(args).map(|()| call));
        let started = match verb {
            "match" => call.and_then(|call| {
                self.build_with_encoder();
                matching::start(
                    &call,
                    args,
                    self.executor.as_ref(),
                    self.semantic.as_ref(),
                    &self.derived,
                )
            }),
            "retrieveCapabilities" => call.and_then(|call| backends::retrieve_start(&call, args)),
            "queryRuntime" => call.and_then(|call| backends::runtime_start(&call, args)),
            "queryKnowledge" => call
                .and_then(|call| knowledge_search::knowledge_start(&call, args, self.has_readers)),
            _ => return Err(invalid("verb", "a verb served by a host component")),
        };
        started.map_err(|e| e.in_verb(verb_phase(verb)))
    }

    /// `reload({ providerId?, definitions?, force? })` (SPEC §6.4, §14 D5, D22); `databases`
    /// holds what the JS layer read again from the database authorities being reloaded (a
    /// provider whose view named the state its current snapshot was read from was not read).
    pub fn reload(&self, args: &str, databases: Option<&str>) -> Result<String> {
        self.reload_reads(args, DatabaseReads::of_json(databases))
    }

    /// [`Engine::reload`] with what was read again and the records to keep with the new
    /// snapshots.
    pub fn reload_reads(&self, args: &str, databases: DatabaseReads) -> Result<String> {
        let targets = self
            .reload_targets(args)
            .map_err(|e| e.in_verb(verb_phase("reload")))?;
        let mut databases = database_reads(databases);
        self.store.serialized(|| {
            let mut unchanged = Vec::new();
            let mut jobs = Vec::with_capacity(targets.len());
            // An incremental database read takes the records it did not change from the
            // provider's current snapshot, validated when that was built.
            let state = self.store.pin().ok();
            let current = |source: &ProviderSource| {
                let id = source.provider_id.as_deref()?;
                let current = state.as_ref()?.providers.get(id)?.current.clone();
                let kept = self.kept.get(&current);
                Some((current, kept))
            };
            for (source, definition) in &targets {
                if inline_unchanged(source, definition.as_ref()) {
                    continue;
                }
                let read = take_read(&mut databases, source);
                match read.as_ref().and_then(DatabaseRead::unchanged) {
                    Some(identity) => {
                        unchanged.push((*source as *const ProviderSource, identity.clone()))
                    }
                    None => {
                        let current = read.as_ref().and_then(|_| current(source));
                        jobs.push((*source, definition.as_ref(), read, current))
                    }
                }
            }
            drop(state);
            // Not loaded: an inline provider without a new definition, or a database provider
            // whose source is in the state its current snapshot was read from.
            let kept = |source: &ProviderSource| {
                let identity = unchanged
                    .iter()
                    .find(|(s, _)| std::ptr::eq(*s, source))
                    .map(|(_, identity)| identity.clone());
                identity.map_or(Candidate::Kept, Candidate::Unchanged)
            };
            // Each candidate is published as soon as it and those before it are loaded; an
            // inline provider reloaded without a definition publishes nothing new.
            let mut entries = Vec::with_capacity(targets.len());
            let mut pending = targets.iter().map(|(source, _)| *source);
            // Only a load frees memory worth handing back (trimming a large heap takes long).
            let loads = !jobs.is_empty();
            load_each(jobs, |loaded, candidate| {
                for source in pending.by_ref() {
                    if std::ptr::eq(source, loaded) {
                        let candidate = candidate.map(|l| placed(&self.derived, &self.kept, l));
                        let candidate = Candidate::Loaded(candidate);
                        entries.push(self.publish_one(source, candidate)?);
                        return Ok(());
                    }
                    entries.push(self.publish_one(source, kept(source))?);
                }
                Ok(())
            })?;
            for source in pending {
                entries.push(self.publish_one(source, kept(source))?);
            }
            // What was derived from or kept with the snapshots let go goes with them.
            self.derived.prune();
            self.kept.prune();
            // After publishing and off the caller's path: the new snapshots already serve.
            if loads {
                crate::memory::release_free_memory_later();
            }
            let ok = entries.iter().all(|e| e.ok);
            let result = ReloadResult {
                ok,
                providers: entries,
                error: (!ok).then(|| GraphError::new(Code::ReloadFailed).to_json_value()),
            };
            serde_json::to_string(&result).map_err(|_| GraphError::new(Code::Internal))
        })
    }

    /// The sources a reload covers, with replacement inline definitions.
    fn reload_targets(&self, args: &str) -> Result<Vec<(&ProviderSource, Option<Value>)>> {
        let state = self.store.pin()?;
        let args = Args::parse(args, &RELOAD_KEYS)?;
        let (only, _) = reload_options(&state, &args)?;
        let mut definitions: Map<String, Value> =
            args.object("definitions")?.cloned().unwrap_or_default();
        for (key, definition) in &definitions {
            let field = format!("definitions.{key}");
            if !is_id(key) {
                return Err(invalid(&field, "provider ID key"));
            }
            if !state.providers.contains_key(key) {
                return Err(GraphError::new(Code::ProviderNotFound));
            }
            if only.is_some_and(|p| p != key) {
                return Err(invalid(
                    &field,
                    "a definition for the reloaded provider only",
                ));
            }
            let inline = self.sources.iter().any(|s| {
                s.provider_id.as_deref() == Some(key) && matches!(s.kind, SourceKind::Inline { .. })
            });
            if !inline {
                return Err(invalid(&field, "a definition for an inline provider"));
            }
            if definition.get("providerId").and_then(Value::as_str) != Some(key.as_str()) {
                return Err(invalid(
                    &format!("{field}.providerId"),
                    "the key's provider ID",
                ));
            }
        }
        Ok(self
            .sources
            .iter()
            .filter(|s| only.is_none() || s.provider_id.as_deref() == only)
            .map(|s| {
                let id = s.provider_id.as_deref().unwrap_or_default();
                (s, definitions.remove(id))
            })
            .collect())
    }

    /// By provider ID, the state of its source each database provider a reload with `args`
    /// covers was last read in (what its collector is told): none when the reload is forced
    /// (`force: true`) or its options are not valid (the reload then reports them).
    pub fn database_known(&self, args: &str) -> BTreeMap<String, Value> {
        let Ok(state) = self.store.pin() else {
            return BTreeMap::new();
        };
        let Ok(args) = Args::parse(args, &RELOAD_KEYS) else {
            return BTreeMap::new();
        };
        let Ok((only, false)) = reload_options(&state, &args) else {
            return BTreeMap::new();
        };
        self.sources
            .iter()
            .filter(|s| matches!(s.kind, SourceKind::Database { .. }))
            .filter_map(|s| s.provider_id.as_deref())
            .filter(|id| only.is_none_or(|p| p == *id))
            .filter_map(|id| {
                let source = state.providers.get(id)?.source.as_deref()?;
                Some((id.to_owned(), source.clone()))
            })
            .collect()
    }

    /// By provider ID, the records each database provider's current snapshot was read from,
    /// when it kept them (its view offers `changedSince`), for the providers `known` names.
    pub fn database_records(
        &self,
        known: &BTreeMap<String, Value>,
    ) -> BTreeMap<String, Arc<KeptRecords>> {
        let Ok(state) = self.store.pin() else {
            return BTreeMap::new();
        };
        known
            .keys()
            .filter_map(|id| {
                let kept = self.kept.get(&state.providers.get(id)?.current)?;
                Some((id.clone(), kept.records))
            })
            .collect()
    }

    /// Publishes one reloaded provider's candidate.
    fn publish_one(&self, source: &ProviderSource, candidate: Candidate) -> Result<ReloadEntry> {
        let id = source.provider_id.clone().unwrap_or_default();
        let mut entry = None;
        let mut replaced = None;
        self.store.update(&id, |slots| {
            let (next, e) = publish(slots, candidate);
            if !Arc::ptr_eq(&next.current, &slots.current) {
                replaced = Some(slots.current.clone());
            }
            entry = Some(e);
            next
        })?;
        // Only the current snapshot's records are read against.
        if let Some(replaced) = replaced {
            self.kept.remove(&replaced);
        }
        let mut entry = entry.unwrap_or_else(|| unreachable!("update ran"));
        entry.provider_id = id;
        self.index_in_background();
        Ok(entry)
    }

    /// `close()`: idempotent. New calls fail `CG_GRAPH_CLOSED` from now on. When no engine task
    /// made before is still queued or running, every trusted root handle is closed now
    /// (`true`); otherwise [`Engine::release`] closes them once those tasks have finished on
    /// their pins (SPEC §6.5).
    pub fn close(&self) -> bool {
        if let Some(semantic) = &self.semantic {
            semantic.close();
        }
        let Some(state) = self.store.close() else {
            return true;
        };
        let idle = *self.running.count.lock().unwrap_or_else(|e| e.into_inner()) == 0;
        if idle {
            close_roots(&state);
        }
        *self.closing.lock().unwrap_or_else(|e| e.into_inner()) = Some(state);
        idle
    }

    /// After `close()`: waits until every engine task made before it has finished, closes
    /// every trusted root handle (also those a call still waiting for a host component holds:
    /// nothing beneath them can be opened any more) and frees the snapshots. Blocks: it runs on
    /// the pool, queued after the pool tasks it waits for (the long-read lane has threads of
    /// its own).
    pub fn release(&self) {
        self.running.wait_idle();
        let state = self
            .closing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(state) = state {
            close_roots(&state);
        }
        // The snapshots are gone unless a call still waiting for a host component holds one:
        // what was derived from them or kept with them goes too.
        self.derived.prune();
        self.kept.prune();
    }

    pub fn is_closed(&self) -> bool {
        self.store.is_closed()
    }
}

fn close_roots(state: &StoreState) {
    for s in state.snapshots() {
        s.close_roots();
    }
}

/// An inline provider reloaded without a new definition keeps its snapshot: nothing to load.
fn inline_unchanged(source: &ProviderSource, definition: Option<&Value>) -> bool {
    matches!(source.kind, SourceKind::Inline { .. }) && definition.is_none()
}

/// A provider to load: its source, a replacement definition, what was read from its database
/// and, for a reload of a database provider, its current snapshot with what the source kept
/// with it.
type LoadJob<'a> = (
    &'a ProviderSource,
    Option<&'a Value>,
    Option<DatabaseRead>,
    Option<(Arc<ProviderSnapshot>, Option<KeptRead>)>,
);

/// Loads each job into a snapshot, providers side by side on up to one worker per core, and
/// hands every result to `each` on the calling thread in the order given, as soon as it and
/// all before it are loaded: the first failure in config order is the one reported, and only
/// the loads still running hold a candidate besides what `each` keeps. `each` returning an
/// error stops the rest. A large provider's load uses several threads of its own, so a
/// worker per core is enough to keep the cores busy.
fn load_each(
    jobs: Vec<LoadJob>,
    mut each: impl FnMut(&ProviderSource, Result<Loaded>) -> Result<()>,
) -> Result<()> {
    let load = |(source, definition, read, current): &LoadJob| {
        let current = current.as_ref().map(|(snapshot, kept)| Current {
            snapshot,
            kept: kept.as_ref(),
        });
        sources::load(source, *definition, read.as_ref(), current)
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len());
    if workers < 2 {
        return jobs.iter().try_for_each(|job| each(job.0, load(job)));
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        for _ in 0..workers {
            let send = send.clone();
            let (jobs, next, stop) = (&jobs, &next, &stop);
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    if send.send((i, load(job))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        // Results that arrived before an earlier one, by position.
        let mut waiting = BTreeMap::new();
        let mut due = 0;
        let outcome = (|| {
            for (i, result) in &receive {
                waiting.insert(i, result);
                while let Some(result) = waiting.remove(&due) {
                    each(jobs[due].0, result)?;
                    due += 1;
                }
            }
            Ok(())
        })();
        stop.store(true, Ordering::Relaxed);
        drop(receive);
        outcome
    })
}

fn parse_config(config_json: &str) -> Result<OpenConfig> {
    let value: Value =
        serde_json::from_str(config_json).map_err(|_| ConfigError::new("$", "object"))?;
    OpenConfig::parse(value)
}

/// What the JS layer read from `source`'s database, handed to its load once.
fn take_read(
    databases: &mut BTreeMap<String, DatabaseRead>,
    source: &ProviderSource,
) -> Option<DatabaseRead> {
    databases.remove(source.provider_id.as_deref()?)
}

/// What the JS layer read from database authorities, by provider ID.
fn database_reads(reads: DatabaseReads) -> BTreeMap<String, DatabaseRead> {
    // The adapter's spent buffers, freed by JavaScript while the read grew, go back before
    // validation allocates the snapshots: else a load's peak holds them beside its own.
    if reads.any_read_whole() {
        crate::memory::release_free_memory();
    }
    let DatabaseReads {
        json,
        mut kept,
        mut texts,
        mut vectors,
    } = reads;
    let Some(json) = json else {
        return BTreeMap::new();
    };
    let parsed: BTreeMap<String, &serde_json::value::RawValue> =
        serde_json::from_str(&json).unwrap_or_default();
    parsed
        .into_iter()
        .filter_map(|(k, raw)| {
            let given = texts.remove(&k).unwrap_or_default();
            let read = DatabaseRead::from_text(raw.get(), kept.remove(&k), given)?;
            Some((k.clone(), read.with_vectors(vectors.remove(&k))))
        })
        .collect()
}

/// The phase of a public verb's errors (SPEC §14 D1), for failures found before it runs.
pub fn verb_phase(verb: &str) -> Phase {
    match verb {
        "open" => Phase::Config,
        "reload" | "on" | "off" => Phase::Lifecycle,
        "match" => Phase::Match,
        "readDocuments" | "readSpecification" | "readDocumentPage" | "readSpecificationPage" => {
            Phase::Document
        }
        _ => Phase::Query,
    }
}

/// A verb called on something that is not a graph (a detached method, another receiver):
/// `CG_INPUT_INVALID` with `details.field` `this`, in the verb's phase.
pub fn receiver_invalid(verb: &str) -> GraphError {
    crate::error::input_invalid("this", "graph").in_verb(verb_phase(verb))
}

/// How watched providers are reloaded: a file watch waits `debounceMs` of quiet after a
/// file-system event before it reports a change; a lost watch is subscribed again after a wait
/// that starts at `retryInitialMs`, doubles after each failure up to `retryMaxMs`, is drawn at
/// random from its upper `jitter` share (half of it: between half and all of the wait), and
/// starts over once a watch has reported it listens.
pub const WATCH_DEBOUNCE_MS: u64 = 100;
pub const WATCH_RETRY_INITIAL_MS: u64 = 500;
pub const WATCH_RETRY_MAX_MS: u64 = 30_000;
pub const WATCH_JITTER: f64 = 0.5;

/// The sources of a config the JS layer serves, read before `open`: `{ sources: [{
/// providerId, handle }], budgets, watches: [{ providerId, kind: 'file', rootDir } | {
/// providerId, kind: 'database', handle }], watch }`: the database adapters' host handles, the
/// `budgets.database` deadlines and bounds of every read, the providers to watch (a file
/// provider with `watch: true`, a database provider whose adapter has `watch` unless it says
/// `watch: false`) and the timings of those watches. Config errors surface here first.
pub fn database_sources(config_json: &str) -> Result<String> {
    let config = parse_config(config_json)?;
    let list: Vec<Value> = config
        .providers
        .iter()
        .filter_map(|s| match &s.kind {
            SourceKind::Database { adapter, .. } => {
                Some(serde_json::json!({ "providerId": s.provider_id, "handle": adapter.handle }))
            }
            _ => None,
        })
        .collect();
    let watches: Vec<Value> = config
        .providers
        .iter()
        .filter_map(|s| match &s.kind {
            SourceKind::File {
                root, watch: true, ..
            } => Some(serde_json::json!({
                "providerId": s.provider_id, "kind": "file", "rootDir": root,
            })),
            SourceKind::Database {
                adapter,
                watch: true,
            } => Some(serde_json::json!({
                "providerId": s.provider_id, "kind": "database", "handle": adapter.handle,
            })),
            _ => None,
        })
        .collect();
    let b = &config.budgets.database;
    // Beside the bounds, the model whose precomputed vectors views are asked for (if any).
    let vectors = config.executor.as_ref().and_then(vectors_model);
    let vectors =
        vectors.map(|(id, dims)| serde_json::json!({ "modelId": id, "dimensions": dims }));
    let budgets = serde_json::json!({
        "callTimeoutMs": b.call_timeout_ms,
        "readTimeoutMs": b.read_timeout_ms,
        "maxRecords": b.max_records,
        "maxBytes": b.max_bytes,
        "vectors": vectors,
    });
    let watch = serde_json::json!({
        "debounceMs": WATCH_DEBOUNCE_MS,
        "retryInitialMs": WATCH_RETRY_INITIAL_MS,
        "retryMaxMs": WATCH_RETRY_MAX_MS,
        "jitter": WATCH_JITTER,
    });
    Ok(serde_json::json!({ "sources": list, "budgets": budgets, "watches": watches, "watch": watch })
        .to_string())
}

/// `readVectorsFile`: `{ modelId, dimensions, entries }` of a vectors file's bytes, each entry
/// as a view's `vectors()` page gives it; bytes that are not a vectors file by the file's rules
/// are `CG_INPUT_INVALID` (`details.field` `bytes`).
pub fn vectors_file_entries(bytes: &[u8]) -> Result<String> {
    matching::semantic::file::entries_json(bytes)
        .map(|v| v.to_string())
        .map_err(|_| crate::error::input_invalid("bytes", "vectors file"))
}

/// The model and dimensions of a semantic executor's vectors, when known before it loads: the
/// host embedder's, or those the first-party encoder's weights name.
fn vectors_model(spec: &ExecutorSpec) -> Option<(String, usize)> {
    match spec {
        ExecutorSpec::Semantic {
            embedder: Some((host, dims)),
            ..
        } => Some((host.id.clone(), *dims)),
        ExecutorSpec::Semantic {
            model: crate::config::ModelSpec::Dir(dir),
            ..
        } => crate::encoder::Encoder::peek_id(dir),
        _ => None,
    }
}

/// A provider's watch was lost (its adapter's `watch` failed or ended, or the file-system watch
/// of its root failed): the snapshot stays in service and the watch is subscribed again, so
/// `retry`. What the adapter threw is never passed on (it could name hosts or paths).
pub fn watch_failed(provider_id: &str) -> GraphError {
    GraphError::new(Code::ConfigInvalid)
        .with_phase(Phase::Load)
        .with_action(crate::error::NextAction::Retry)
        .detail("providerId", provider_id)
        .detail("reason", "watch_failed")
}

/// `doctor`'s check of every provider of a config: `{ providers: [{ problems, omitted }] }` in
/// config order, each listing every problem `open` would stop at first. Config errors are
/// the call's error, as at `open`.
pub fn diagnose(config_json: &str, databases: Option<&str>) -> Result<String> {
    diagnose_reads(config_json, DatabaseReads::of_json(databases))
}

/// [`diagnose`] with what was read from database authorities, as the collector gave it.
pub fn diagnose_reads(config_json: &str, databases: DatabaseReads) -> Result<String> {
    let config = parse_config(config_json)?;
    let mut databases = database_reads(databases);
    let providers: Vec<Value> = config
        .providers
        .iter()
        .map(|source| {
            let read = take_read(&mut databases, source);
            crate::definitions::problems::report(&sources::problems(source, read.as_ref()))
        })
        .collect();
    Ok(serde_json::json!({ "providers": providers }).to_string())
}

/// A loaded provider's snapshot, ready to publish, and the state of the source it was read in
/// (the store's to hold beside it): what the source keeps with it and the vectors it offered
/// go to their tables.
fn placed(
    derived: &DerivedTable,
    kept: &KeptReads,
    loaded: Loaded,
) -> (Arc<ProviderSnapshot>, Option<Arc<Value>>) {
    let snapshot = Arc::new(loaded.snapshot);
    if let Some(k) = loaded.kept {
        kept.insert(&snapshot, k);
    }
    if let Some(offered) = loaded.offered {
        derived.offer(&snapshot, offered);
    }
    (snapshot, loaded.source)
}

/// What a reload has for one provider.
enum Candidate {
    /// A snapshot loaded from its source with the state of the source it was read in, or why
    /// it could not be.
    Loaded(Result<(Arc<ProviderSnapshot>, Option<Arc<Value>>)>),
    /// A database provider whose view named this state of its source: nothing was read.
    Unchanged(Value),
    /// An inline provider reloaded without a new definition: its source cannot have changed.
    Kept,
}

/// The slots after a reload attempt, and its report.
fn publish(slots: &ProviderSlots, candidate: Candidate) -> (ProviderSlots, ReloadEntry) {
    let mut next = slots.clone();
    let mut entry = ReloadEntry {
        provider_id: String::new(),
        ok: true,
        static_revision: String::new(),
        previous_static_revision: None,
        served_from: "current",
        refresh_failed: false,
        error: None,
    };
    let failed = |next: &mut ProviderSlots, entry: &mut ReloadEntry, e: GraphError| {
        next.refresh_failed = true;
        entry.ok = false;
        entry.error = Some(e.to_json_value());
    };
    match candidate {
        Candidate::Loaded(Err(e)) => failed(&mut next, &mut entry, e),
        Candidate::Loaded(Ok((snapshot, source))) => {
            // The source the definitions now held were last read from, whether they changed
            // or not.
            next.source = source;
            next.refresh_failed = false;
            if snapshot.static_revision != slots.current.static_revision {
                let retired = std::mem::replace(&mut next.current, snapshot);
                next.previous = Some(retired);
            } else if snapshot.roots != slots.current.roots {
                // Same definitions read from another document root (a database view may move
                // it): the current snapshot takes the new root in place, nothing rotates, and
                // page cursors bound to the old files stop matching.
                next.current = snapshot;
            }
            // Else the same revision: publish nothing, retire nothing.
        }
        // The source is in the state the current snapshot was read from: as a read of the
        // same revision, without the read. (Reloads are serial, so the state told to the
        // collector is still the current one.)
        Candidate::Unchanged(identity) => {
            if slots.source.as_deref() == Some(&identity) {
                next.refresh_failed = false;
            } else {
                failed(&mut next, &mut entry, GraphError::new(Code::Internal));
            }
        }
        // An inline provider reloaded without a new definition has nothing to re-read; a
        // rejected earlier candidate stays reported.
        Candidate::Kept => {}
    }
    entry.refresh_failed = next.refresh_failed;
    entry.static_revision = next.current.static_revision.clone();
    entry.previous_static_revision = next.previous.as_ref().map(|p| p.static_revision.clone());
    (next, entry)
}

#[derive(Serialize)]
struct ReloadEntry {
    #[serde(rename = "providerId")]
    provider_id: String,
    ok: bool,
    #[serde(rename = "staticRevision")]
    static_revision: String,
    #[serde(
        rename = "previousStaticRevision",
        skip_serializing_if = "Option::is_none"
    )]
    previous_static_revision: Option<String>,
    #[serde(rename = "servedFrom")]
    served_from: &'static str,
    #[serde(rename = "refreshFailed")]
    refresh_failed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

#[derive(Serialize)]
struct ReloadResult {
    ok: bool,
    providers: Vec<ReloadEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unchanged_source_publishes_nothing_and_clears_a_failed_refresh() {
        let definition = serde_json::json!({
            "providerId": "p", "name": "P", "version": "1", "capabilities": [],
        });
        let current = Arc::new(ProviderSnapshot::of_inline(&definition));
        let identity = serde_json::json!({ "sourceRevision": "r1" });
        let slots = ProviderSlots {
            current: current.clone(),
            previous: None,
            refresh_failed: true,
            source: Some(Arc::new(identity.clone())),
        };
        let (next, entry) = publish(&slots, Candidate::Unchanged(identity));
        assert!(entry.ok && !entry.refresh_failed && entry.error.is_none());
        assert!(Arc::ptr_eq(&next.current, &current) && next.previous.is_none());
        assert_eq!(entry.static_revision, current.static_revision);
        // A state the current snapshot was not read from cannot stand for a read.
        let other = serde_json::json!({ "sourceRevision": "r2" });
        let (next, entry) = publish(&slots, Candidate::Unchanged(other));
        assert!(!entry.ok && next.refresh_failed);
        assert_eq!(entry.error.unwrap()["code"], "CG_INTERNAL");
    }

    #[test]
    fn what_matching_derived_from_a_snapshot_goes_once_the_store_lets_the_snapshot_go() {
        let definition = |version: u32| {
            serde_json::json!({
                "providerId": "p", "name": "P", "version": version.to_string(),
                "capabilities": [{ "capabilityId": "a", "name": "A", "description": "Does a.", "whenToUse": "For a." }],
            })
        };
        let config = serde_json::json!({ "providers": [{ "definition": definition(1) }] });
        let engine = Engine::open(&config.to_string(), None).unwrap();
        for version in 2..5 {
            engine.build_indexes_here();
            // Held weakly, as nothing but the store holds them.
            let before: Vec<_> = engine
                .store
                .snapshots()
                .iter()
                .map(|s| {
                    let d = engine.derived.get(s).unwrap();
                    assert!(d.lexical_ready());
                    (Arc::downgrade(s), Arc::downgrade(&d))
                })
                .collect();
            let reload = serde_json::json!({ "definitions": { "p": definition(version) } });
            engine.reload(&reload.to_string(), None).unwrap();
            // The snapshot that left the store took its index with it; the others keep theirs.
            let served = engine.store.snapshots();
            assert_eq!(
                (before.len(), served.len()),
                (version.min(3) as usize - 1, 2)
            );
            for (s, d) in &before {
                let kept = s
                    .upgrade()
                    .is_some_and(|s| served.iter().any(|x| Arc::ptr_eq(x, &s)));
                assert_eq!(d.upgrade().is_some(), kept, "version {version}");
            }
        }
    }

    #[test]
    fn a_lost_watch_is_a_load_failure_to_retry_naming_its_provider() {
        let e = watch_failed("acme");
        assert_eq!(
            (e.code(), e.phase(), e.next_action()),
            (
                Code::ConfigInvalid,
                Phase::Load,
                Some(crate::error::NextAction::Retry)
            )
        );
        let details = e.details().unwrap();
        assert_eq!(
            (details["providerId"].as_str(), details["reason"].as_str()),
            (Some("acme"), Some("watch_failed"))
        );
    }

    #[test]
    fn watches_list_file_providers_that_opt_in_and_database_adapters_that_offer_one() {
        let host = |handle: u32, methods: &[&str]| serde_json::json!({ crate::config::HOST_KEY: handle, "id": "db", "providerId": null, "methods": methods });
        let config = serde_json::json!({ "providers": [
            { "providerId": "files.off", "authority": { "kind": "file", "rootDir": "/a" } },
            { "providerId": "files.on", "authority": { "kind": "file", "rootDir": "/b", "watch": true } },
            { "providerId": "db.on", "authority": { "kind": "database", "adapter": host(0, &["openView", "watch"]) } },
            { "providerId": "db.off", "authority": { "kind": "database", "adapter": host(1, &["openView", "watch"]), "watch": false } },
            { "providerId": "db.none", "authority": { "kind": "database", "adapter": host(2, &["openView"]), "watch": true } },
        ] });
        let out: Value =
            serde_json::from_str(&database_sources(&config.to_string()).unwrap()).unwrap();
        let watched: Vec<(&str, &str)> = out["watches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    w["providerId"].as_str().unwrap(),
                    w["kind"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(watched, [("files.on", "file"), ("db.on", "database")]);
        assert_eq!(out["watches"][1]["handle"], 0);
        assert_eq!(out["watch"]["retryMaxMs"], WATCH_RETRY_MAX_MS);
        let bad = serde_json::json!({ "providers": [
            { "providerId": "files.on", "authority": { "kind": "file", "rootDir": "/b", "watch": "yes" } },
        ] });
        let e = database_sources(&bad.to_string()).unwrap_err();
        assert_eq!(e.code(), Code::ConfigInvalid);
        assert_eq!(e.details().unwrap()["path"], "providers[0].authority.watch");
    }

    #[test]
    fn a_verb_on_something_that_is_not_a_graph_fails_in_its_phase() {
        for (verb, phase) in [
            ("listCatalog", Phase::Query),
            ("readDocumentPage", Phase::Document),
            ("match", Phase::Match),
            ("reload", Phase::Lifecycle),
            ("forProvider", Phase::Query),
        ] {
            let e = receiver_invalid(verb);
            assert_eq!((e.code(), e.phase()), (Code::InputInvalid, phase), "{verb}");
            assert_eq!(e.details().unwrap()["field"], "this");
        }
    }
}
