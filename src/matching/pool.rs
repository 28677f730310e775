//! The engine's pool (SPEC D26): a fixed number of threads, one per core the process may use and
//! at most [`MAX_THREADS`], started on first use and shared by every graph of the process. It
//! runs what grows with the model or the graph and must not hold the libuv pool: the
//! first-party encoder's intents (each graph's semantic `match` calls, at most
//! `budgets.match.maxQueued` of them queued or waiting, see [`crate::matching::semantic::Semantic::submit`]),
//! its batches of capability vectors, its load, and the lexical index builds. A call waiting for
//! the encoder to load or for vectors to be built is parked without a thread.

use crate::workers::{cores, Pool};

/// The most threads of the pool, whatever the cores.
pub const MAX_THREADS: usize = 16;

fn threads() -> usize {
    cores().min(MAX_THREADS)
}

/// The engine's jobs are each bounded by whoever queues them (calls by `match.maxQueued`, builds
/// by one chain per pool thread and graph, loads and index builds by one per open or reload).
pub static POOL: Pool = Pool::new("cg-engine", threads, usize::MAX);
