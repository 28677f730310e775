//! Building the capability vectors of each snapshot, once, in batches: the engine hands a
//! batch out ([`Semantic::claim`]), an encoder or the host's embedder embeds it, and the
//! engine judges and keeps what came back ([`Semantic::put`]). A text whose hash a vector of
//! an earlier snapshot of the provider (or its vectors file) already has is never embedded again.

use super::{capability_text, quantise, text_hash, Embed, TextHash, Vectors};
use crate::error::{Code, GraphError, NextAction, Result};
use crate::matching::derived::{Derived, DerivedTable};
use crate::matching::pool::POOL;
use crate::snapshot::ProviderSnapshot;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// Where vectors come from.
pub enum Model {
    /// A host embedder: the JS layer embeds each batch on its thread.
    Host {
        id: String,
        dims: usize,
    },
    /// The first-party encoder, still loading.
    Loading,
    Builtin(Arc<dyn Embed>),
    /// The first-party encoder cannot be used (its package is missing or broken).
    Unavailable(GraphError),
}

struct Job {
    snapshot: Arc<ProviderSnapshot>,
    /// Where its vectors go once built.
    derived: Arc<Derived>,
    hashes: Vec<TextHash>,
    data: Vec<i8>,
    scales: Vec<f32>,
    /// Rows not handed out yet.
    missing: Vec<u32>,
    /// Rows without a vector yet (handed out or not).
    left: usize,
    /// Why the last batch failed; cleared when the next is handed out.
    failed: Option<GraphError>,
}

/// Texts to embed, handed out under an ID the answer comes back with.
pub struct Batch {
    pub id: u64,
    pub texts: Vec<String>,
}

struct State {
    model: Model,
    jobs: Vec<Job>,
    /// Batches handed out: their snapshot and rows.
    out: HashMap<u64, (Arc<ProviderSnapshot>, Vec<u32>)>,
    next_id: u64,
    /// Texts embedded so far (capabilities and intents), for tests and the bench.
    embedded: u64,
    /// Chains of jobs on the engine's pool that build with the first-party encoder.
    building: usize,
    /// What became of each provider's precomputed vectors (its file or its view's), at the
    /// last build planned for it.
    precomputed: HashMap<String, super::file::Status>,
}

/// The semantic executor of one graph.
pub struct Semantic {
    pub min_score: f64,
    pub signals: super::Signals,
    /// How long the host's embedder may take for one batch (`match.embedTimeoutMs`).
    pub embed_timeout_ms: u64,
    batch_size: usize,
    max_text_bytes: usize,
    state: Mutex<State>,
    changed: Condvar,
    closed: AtomicBool,
    /// Calls queued on the engine's pool or parked there (`match.maxQueued` at most).
    queued: Arc<AtomicUsize>,
    max_queued: usize,
    /// The model and dimensions named at open (the host embedder's, or those the first-party
    /// encoder's weights name before they load).
    named: Option<(String, usize)>,
    /// What matching derived from each snapshot: builds start from the vectors offered there
    /// and put what they built there.
    derived: Arc<DerivedTable>,
}

/// What a host embedder gave: its vectors, or why it gave none (`failure`, as the JS layer
/// saw it): it threw (`embedder_failed`), missed `match.embedTimeoutMs` (`embedder_timeout`),
/// or answered with something that is no `Float32Array` (`embedder_output_invalid`).
pub fn embedded<'a>(vectors: Option<&'a [f32]>, failure: Option<&str>) -> Result<&'a [f32]> {
    match (vectors, failure) {
        (Some(v), None) => Ok(v),
        (_, Some("threw")) => Err(unavailable("embedder_failed")),
        (_, Some("timeout")) => Err(unavailable("embedder_timeout")),
        _ => Err(unavailable("embedder_output_invalid")),
    }
}

pub fn unavailable(reason: &str) -> GraphError {
    GraphError::new(Code::ModelUnavailable)
        .with_action(NextAction::Retry)
        .detail("reason", reason)
}

impl Semantic {
    pub fn new(
        model: Model,
        min_score: f64,
        budgets: &crate::config::budgets::Match,
        derived: Arc<DerivedTable>,
    ) -> Semantic {
        let (batch_size, max_text_bytes) = (budgets.embed_batch_size, budgets.max_embed_text_bytes);
        Semantic {
            min_score,
            signals: super::Signals::Fused,
            embed_timeout_ms: budgets.embed_timeout_ms,
            batch_size: batch_size.max(1) as usize,
            max_text_bytes: max_text_bytes.max(1) as usize,
            state: Mutex::new(State {
                model,
                jobs: Vec::new(),
                out: HashMap::new(),
                next_id: 1,
                embedded: 0,
                building: 0,
                precomputed: HashMap::new(),
            }),
            changed: Condvar::new(),
            closed: AtomicBool::new(false),
            queued: Arc::new(AtomicUsize::new(0)),
            max_queued: budgets.max_queued.max(1) as usize,
            named: None,
            derived,
        }
    }

    /// The table the builds read offered vectors from and put vectors in.
    pub fn derived(&self) -> &DerivedTable {
        &self.derived
    }

    /// This executor, with the model named at open.
    pub fn naming(mut self, named: Option<(String, usize)>) -> Semantic {
        self.named = named;
        self
    }

    /// This executor, ranking on `signals`.
    pub fn ranking_on(mut self, signals: super::Signals) -> Semantic {
        self.signals = signals;
        self
    }

    /// The model whose precomputed vectors are worth asking for: the loaded one, else the one
    /// named at open; none once the first-party encoder proved unavailable.
    pub fn wanted_model(&self) -> Option<(String, usize)> {
        match &self.lock().model {
            Model::Unavailable(_) => None,
            Model::Loading => self.named.clone(),
            model => model_of(model),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn max_text_bytes(&self) -> usize {
        self.max_text_bytes
    }

    /// Whether a host embedder gives the vectors (the JS layer embeds).
    pub fn is_host(&self) -> bool {
        matches!(self.lock().model, Model::Host { .. })
    }

    /// The model's ID and dimensions, once known.
    pub fn model(&self) -> Option<(String, usize)> {
        model_of(&self.lock().model)
    }

    /// What became of `provider`'s precomputed vectors at its last build planned.
    pub fn precomputed(&self, provider: &str) -> Option<super::file::Status> {
        self.lock().precomputed.get(provider).copied()
    }

    /// How many texts were embedded so far.
    pub fn embedded(&self) -> u64 {
        self.lock().embedded
    }

    /// The first-party encoder finished loading (or failed to).
    pub fn loaded(&self, model: Result<Arc<dyn Embed>>) {
        let mut state = self.lock();
        state.model = match model {
            Ok(m) => Model::Builtin(m),
            Err(e) => Model::Unavailable(e),
        };
        self.notify();
    }

    /// Starts the builds of `targets` that have neither vectors nor a build, seeded with the
    /// vectors `known` snapshots of the same provider hold and with the entries of the
    /// provider's vectors file. Builds of snapshots no longer among `known` stop; with
    /// `only_targets`, so do those of snapshots not among `targets` (a reload superseded them:
    /// the current snapshots are built first, and an earlier one only when a `match` asks for it).
    pub fn plan(
        &self,
        targets: &[Arc<ProviderSnapshot>],
        known: &[Arc<ProviderSnapshot>],
        only_targets: bool,
    ) {
        let Some((model, dims)) = self.model() else {
            return;
        };
        let keep = if only_targets { targets } else { known };
        let live: Vec<Arc<ProviderSnapshot>> = {
            let mut state = self.lock();
            state
                .jobs
                .retain(|j| keep.iter().any(|k| Arc::ptr_eq(k, &j.snapshot)));
            let live: Vec<_> = state.jobs.iter().map(|j| j.snapshot.clone()).collect();
            state
                .out
                .retain(|_, (s, _)| live.iter().any(|k| Arc::ptr_eq(k, s)));
            live
        };
        // Files are read and texts hashed without the lock: the JS thread takes it to claim.
        let mut jobs = Vec::new();
        for s in targets {
            let derived = self.derived.of(s);
            if derived.vectors().is_some() || live.iter().any(|k| Arc::ptr_eq(k, s)) {
                continue;
            }
            let (file, mut status) = precomputed(s, &derived, &model, dims);
            let earlier: Vec<Arc<Derived>> = known
                .iter()
                .filter(|k| k.provider_id() == s.provider_id() && !Arc::ptr_eq(k, s))
                .filter_map(|k| self.derived.get(k))
                .collect();
            let prior: Vec<&Vectors> = earlier
                .iter()
                .filter_map(|d| d.vectors())
                .chain(file.as_ref())
                .filter(|v| v.model == model && v.dims == dims)
                .collect();
            let mut seeds: HashMap<TextHash, (&Vectors, usize)> = HashMap::new();
            for v in prior {
                for (i, h) in v.hashes.iter().enumerate() {
                    seeds.entry(*h).or_insert((v, i));
                }
            }
            let n = s.capabilities.len();
            let mut job = Job {
                snapshot: s.clone(),
                derived,
                hashes: Vec::with_capacity(n),
                data: vec![0; n * dims],
                scales: vec![0.0; n],
                missing: Vec::new(),
                left: 0,
                failed: None,
            };
            for (i, c) in s.capabilities.iter().enumerate() {
                let h = text_hash(&model, dims, &capability_text(c, self.max_text_bytes));
                match seeds.get(&h) {
                    Some((v, row)) => {
                        job.data[i * dims..(i + 1) * dims].copy_from_slice(v.row(*row));
                        job.scales[i] = v.scales[*row];
                    }
                    None => job.missing.push(i as u32),
                }
                job.hashes.push(h);
            }
            job.left = job.missing.len();
            if let Some(file) = &file {
                let current: std::collections::HashSet<&TextHash> = job.hashes.iter().collect();
                let used = file.hashes.iter().filter(|h| current.contains(h)).count();
                status.entries = file.hashes.len() as u32;
                status.used = used as u32;
                status.stale = (file.hashes.len() - used) as u32;
            }
            status.embedded = job.left as u32;
            // Rows are handed out from the end: keep capability order.
            job.missing.reverse();
            jobs.push((job, status));
        }
        let mut state = self.lock();
        for (job, status) in jobs {
            state
                .precomputed
                .insert(job.snapshot.provider_id().to_owned(), status);
            if state
                .jobs
                .iter()
                .any(|j| Arc::ptr_eq(&j.snapshot, &job.snapshot))
            {
                continue;
            }
            if job.left == 0 {
                finish(&model, dims, job);
            } else {
                state.jobs.push(job);
            }
        }
        self.notify();
    }

    /// The next batch to embed, if any.
    pub fn claim(&self) -> Option<Batch> {
        if self.closed.load(Ordering::Relaxed) {
            return None;
        }
        let mut state = self.lock();
        let batch = self.batch_size;
        let max = self.max_text_bytes;
        let job = state.jobs.iter_mut().find(|j| !j.missing.is_empty())?;
        job.failed = None;
        let take = job.missing.len().min(batch);
        let rows: Vec<u32> = job
            .missing
            .split_off(job.missing.len() - take)
            .into_iter()
            .rev()
            .collect();
        let texts = rows
            .iter()
            .map(|&r| capability_text(job.snapshot.capability(r), max))
            .collect();
        let snapshot = job.snapshot.clone();
        let id = state.next_id;
        state.next_id += 1;
        state.out.insert(id, (snapshot, rows));
        Some(Batch { id, texts })
    }

    /// What became of batch `id`: its vectors (texts × dimensions), or why the embedder gave
    /// none. A wrong length or a row that is not a direction fails the batch like a throw.
    pub fn put(&self, id: u64, vectors: Result<&[f32]>) -> Result<()> {
        let mut state = self.lock();
        let Some((snapshot, rows)) = state.out.remove(&id) else {
            // Its snapshot was superseded, or the graph closed.
            return Ok(());
        };
        let Some((model, dims)) = model_of(&state.model) else {
            return Ok(());
        };
        let Some(at) = state
            .jobs
            .iter()
            .position(|j| Arc::ptr_eq(&j.snapshot, &snapshot))
        else {
            return Ok(());
        };
        let quantised = vectors.and_then(|v| {
            Some(v)
                .filter(|v| v.len() == rows.len() * dims)
                .and_then(|v| {
                    v.chunks_exact(dims)
                        .map(quantise)
                        .collect::<Option<Vec<_>>>()
                })
                .ok_or_else(|| unavailable("embedder_output_invalid"))
        });
        let job = &mut state.jobs[at];
        let quantised = match quantised {
            Ok(q) => q,
            Err(error) => {
                job.failed = Some(error.clone());
                job.missing.extend(rows.iter().rev());
                self.notify();
                return Err(error);
            }
        };
        for (&r, (scale, q)) in rows.iter().zip(quantised) {
            let r = r as usize;
            job.data[r * dims..(r + 1) * dims].copy_from_slice(&q);
            job.scales[r] = scale;
        }
        job.left -= rows.len();
        state.embedded += rows.len() as u64;
        if state.jobs[at].left == 0 {
            let job = state.jobs.swap_remove(at);
            finish(&model, dims, job);
        }
        self.notify();
        Ok(())
    }

    /// Counts an intent embedded for a `match`.
    pub fn count_intent(&self) {
        self.lock().embedded += 1;
    }

    /// Waits until each snapshot whose entry `derived` holds has its vectors, at most until
    /// `deadline`: `CG_MODEL_TIMEOUT` past it, the build's failure if its last batch failed,
    /// `CG_GRAPH_CLOSED` once the graph closed.
    pub fn wait(&self, derived: &[&Derived], deadline: Instant) -> Result<()> {
        self.wait_for(deadline, |state| vectors_ready(state, derived))
    }

    /// [`Semantic::wait`] without waiting: `None` while the vectors are being built.
    pub fn vectors_now(&self, derived: &[&Derived], deadline: Instant) -> Option<Result<()>> {
        self.now(deadline, |state| vectors_ready(state, derived))
    }

    /// The first-party encoder, waiting while it loads (at most until `deadline`).
    pub fn encoder(&self, deadline: Instant) -> Result<Arc<dyn Embed>> {
        self.wait_for(deadline, encoder_ready)
    }

    /// [`Semantic::encoder`] without waiting: `None` while it loads.
    pub fn encoder_now(&self, deadline: Instant) -> Option<Result<Arc<dyn Embed>>> {
        self.now(deadline, encoder_ready)
    }

    /// What `settled` answers now: `CG_GRAPH_CLOSED` once the graph closed, `CG_MODEL_TIMEOUT`
    /// past `deadline` when it has no answer yet, else `None`.
    fn now<T>(
        &self,
        deadline: Instant,
        settled: impl FnOnce(&State) -> Option<Result<T>>,
    ) -> Option<Result<T>> {
        if self.closed.load(Ordering::Relaxed) {
            return Some(Err(GraphError::new(Code::GraphClosed)));
        }
        let state = self.lock();
        settled(&state).or_else(|| {
            (Instant::now() >= deadline).then(|| Err(GraphError::new(Code::ModelTimeout)))
        })
    }

    /// Waits on the build's state until `settled` answers, at most until `deadline`
    /// (`CG_MODEL_TIMEOUT`); `CG_GRAPH_CLOSED` once the graph closed.
    fn wait_for<T>(
        &self,
        deadline: Instant,
        mut settled: impl FnMut(&State) -> Option<Result<T>>,
    ) -> Result<T> {
        let mut state = self.lock();
        loop {
            if self.closed.load(Ordering::Relaxed) {
                return Err(GraphError::new(Code::GraphClosed));
            }
            if let Some(answer) = settled(&state) {
                return answer;
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(GraphError::new(Code::ModelTimeout));
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Something waits for may have changed: waits look again, and so do the calls parked on
    /// the engine's pool.
    fn notify(&self) {
        self.changed.notify_all();
        POOL.wake();
    }

    /// Queues a call on the engine's pool: `step` runs there until it answers (`None`: it waits
    /// for the encoder or the vectors, parked without a thread until they change or `deadline`
    /// passes, when it must answer), and `done` gets the answer. With `match.maxQueued` calls
    /// already queued or parked, `done` gets `CG_MODEL_UNAVAILABLE` / `retry` (`encoder_busy`)
    /// at once; after close, `CG_GRAPH_CLOSED`.
    pub fn submit(
        &self,
        mut step: impl FnMut() -> Option<Result<String>> + Send + 'static,
        deadline: Instant,
        done: Box<dyn FnOnce(Result<String>) + Send>,
    ) {
        if self.is_closed() {
            return done(Err(GraphError::new(Code::GraphClosed)));
        }
        let queued = self.queued.clone();
        if queued.fetch_add(1, Ordering::AcqRel) >= self.max_queued {
            queued.fetch_sub(1, Ordering::AcqRel);
            return done(Err(unavailable("encoder_busy")));
        }
        // Settles once, even when a step panics (a bug): the slot and `done` go with it.
        struct Settle(
            Option<Box<dyn FnOnce(Result<String>) + Send>>,
            Arc<AtomicUsize>,
        );
        impl Settle {
            fn answer(&mut self, r: Result<String>) {
                if let Some(done) = self.0.take() {
                    self.1.fetch_sub(1, Ordering::AcqRel);
                    done(r);
                }
            }
        }
        impl Drop for Settle {
            fn drop(&mut self) {
                self.answer(Err(GraphError::new(Code::Internal)));
            }
        }
        let mut settle = Settle(Some(done), queued);
        POOL.run_parkable(
            Box::new(move || match step() {
                Some(answer) => {
                    settle.answer(answer);
                    true
                }
                None => false,
            }),
            deadline,
        );
    }

    /// Builds what is planned with the first-party encoder on the engine's pool: a chain of jobs
    /// per pool thread at most (each embeds a batch, then queues the next), so builds share the
    /// pool with calls, batch by batch. Nothing when chains already cover the pool or there is
    /// nothing to build.
    pub fn build_on_pool(self: &Arc<Self>) {
        let chains = {
            let mut state = self.lock();
            let has_work = state.jobs.iter().any(|j| !j.missing.is_empty());
            if !has_work || !matches!(state.model, Model::Builtin(_)) {
                return;
            }
            let chains = POOL.size().saturating_sub(state.building);
            state.building += chains;
            chains
        };
        for _ in 0..chains {
            let this = self.clone();
            POOL.run(move || this.build_batch());
        }
    }

    /// One batch of a build chain: embeds it, then queues the next, until no batch is left, a
    /// batch fails or the graph closes.
    fn build_batch(self: Arc<Self>) {
        let encoder = match &self.lock().model {
            Model::Builtin(m) => Some(m.clone()),
            _ => None,
        };
        let cancelled = || self.closed.load(Ordering::Relaxed);
        let more = encoder.and_then(|encoder| {
            let batch = self.claim()?;
            let texts: Vec<&str> = batch.texts.iter().map(String::as_str).collect();
            let vectors = encoder.embed(&texts, 1, &cancelled);
            let vectors = vectors
                .as_deref()
                .ok_or_else(|| unavailable("embedder_failed"));
            (self.put(batch.id, vectors).is_ok() && !cancelled()).then_some(())
        });
        if more.is_some() {
            POOL.run(move || self.build_batch());
            return;
        }
        self.lock().building -= 1;
        self.notify();
    }

    /// Stops every build: nothing more is handed out, waits end `CG_GRAPH_CLOSED`.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        let mut state = self.lock();
        state.jobs.clear();
        state.out.clear();
        self.notify();
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }
}

/// The precomputed vectors of snapshot `s` for `model`: its view's (taken from its entry
/// `derived`), else its vectors file's; what became of them, counts still to fill in.
fn precomputed(
    s: &ProviderSnapshot,
    derived: &Derived,
    model: &str,
    dims: usize,
) -> (Option<Vectors>, super::file::Status) {
    use super::file::{Offered, Source, Status};
    let taken = derived.take_offered();
    let (source, offered) = match taken {
        Some(offered) => (Source::View, offered),
        None => (Source::File, super::file::read(s, model, dims)),
    };
    let mut status = Status {
        source: Some(source),
        ignored: None,
        entries: 0,
        used: 0,
        stale: 0,
        embedded: 0,
    };
    match offered {
        Offered::Absent => {
            status.source = None;
            (None, status)
        }
        Offered::Ignored(reason) => {
            status.ignored = Some(reason);
            (None, status)
        }
        // Entries of another model than the one planned (the first-party encoder loaded as
        // another than its package named) hold no text of this one.
        Offered::Entries(v) if v.model != model || v.dims != dims => {
            status.ignored = Some(super::file::Ignored::Foreign);
            (None, status)
        }
        Offered::Entries(v) => (Some(v), status),
    }
}

/// Whether each snapshot whose entry `derived` holds has its vectors (`None`: not yet), or the
/// failure that stops it (the model's, or the build's last batch's).
fn vectors_ready(state: &State, derived: &[&Derived]) -> Option<Result<()>> {
    if let Model::Unavailable(e) = &state.model {
        return Some(Err(e.clone()));
    }
    let pending: Vec<&Derived> = derived
        .iter()
        .copied()
        .filter(|d| d.vectors().is_none())
        .collect();
    if pending.is_empty() {
        return Some(Ok(()));
    }
    state
        .jobs
        .iter()
        .find_map(|j| {
            pending
                .iter()
                .any(|d| std::ptr::eq(*d, &*j.derived))
                .then_some(j.failed.clone())
                .flatten()
        })
        .map(Err)
}

/// The first-party encoder once loaded (`None` while it loads), or why there is none.
fn encoder_ready(state: &State) -> Option<Result<Arc<dyn Embed>>> {
    match &state.model {
        Model::Builtin(m) => Some(Ok(m.clone())),
        Model::Unavailable(e) => Some(Err(e.clone())),
        Model::Host { .. } => Some(Err(GraphError::new(Code::Internal))),
        Model::Loading => None,
    }
}

fn model_of(model: &Model) -> Option<(String, usize)> {
    match model {
        Model::Host { id, dims } => Some((id.clone(), *dims)),
        Model::Builtin(m) => Some((m.id().to_owned(), m.dimensions())),
        Model::Loading | Model::Unavailable(_) => None,
    }
}

fn finish(model: &str, dims: usize, job: Job) {
    job.derived.set_vectors(Vectors {
        model: model.to_owned(),
        dims,
        data: job.data,
        scales: job.scales,
        hashes: job.hashes,
    });
}
