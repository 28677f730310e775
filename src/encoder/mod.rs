//! The first-party sentence encoder: all-MiniLM-L6-v2 (BERT, 6 layers, hidden 384, 12 heads,
//! mean pooling, L2-normalised 384-dimension vectors) run on the engine's own threads, from
//! weights stored int8 in the optional `@devcodex/capability-graph-minilm` package.
//!
//! No napi types here: the executor hands [`Encoder::load`] the package's folder.

mod model;
pub mod tokenizer;
mod weights;

pub use tokenizer::{Tokenizer, MAX_TOKENS};
pub use weights::LoadError;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// At most this many padded tokens go through one forward pass: big enough for the matrix
/// products to run at speed, small enough to keep the scratch buffers at a few MB.
const BATCH_TOKENS: usize = 2048;
/// Smaller runs than the token cap allows, so the threads share a batch evenly.
const MAX_BATCH_TEXTS: usize = 32;

/// A loaded encoder; shared by reference across threads.
pub struct Encoder {
    id: String,
    tokenizer: Tokenizer,
    weights: weights::Weights,
}

impl Encoder {
    /// Loads `model.bin` and `vocab.txt` from `dir` (the weights package's folder), checks
    /// their checksums, shapes and that the vocabulary belongs to the weights. `Missing` when a
    /// file is absent, `Corrupt` otherwise; neither names a path.
    pub fn load(dir: &Path) -> Result<Encoder, LoadError> {
        let (weights, vocab) = weights::read_dir(dir)?;
        let tokenizer = Tokenizer::from_vocab(&vocab).ok_or(LoadError::Corrupt {
            reason: "the vocabulary is not a WordPiece vocabulary",
        })?;
        if tokenizer.vocab_size() != weights.config.vocab {
            return Err(LoadError::Corrupt {
                reason: "the vocabulary does not belong to these weights",
            });
        }
        let id = weights::model_id(&weights.name, weights.checksum);
        Ok(Encoder {
            id,
            tokenizer,
            weights,
        })
    }

    /// The ID and dimensions the weights in `dir` name, read from the weights file's header
    /// without loading it (see [`weights::peek_id`]).
    pub fn peek_id(dir: &Path) -> Option<(String, usize)> {
        weights::peek_id(dir)
    }

    /// The model's identity, e.g. `all-MiniLM-L6-v2/int8-1-1a2b3c4d`: its name, the file
    /// format's version and the weights file's CRC-32, so it changes whenever the weights or
    /// the format change (vectors cached under another id are not this model's).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The length of every vector: 384 for MiniLM.
    pub fn dimensions(&self) -> usize {
        self.weights.config.hidden
    }

    /// The token IDs the encoder sees for `text` (`[CLS] … [SEP]`, at most [`MAX_TOKENS`]).
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text)
    }

    /// Row-major texts × dimensions, L2-normalised. `cancelled` is polled between layers/batches;
    /// returns None when it answered true. `threads` 1..=N splits a batch across scoped threads.
    ///
    /// Texts are sorted by token count and cut into mini-batches of similar length, so padding
    /// costs little; each vector is the same whatever batch it was computed in (up to float
    /// rounding). A text past [`MAX_TOKENS`] tokens is encoded from its beginning.
    pub fn embed(
        &self,
        texts: &[&str],
        threads: usize,
        cancelled: &dyn Fn() -> bool,
    ) -> Option<Vec<f32>> {
        let dims = self.dimensions();
        let mut out = vec![0f32; texts.len() * dims];
        if texts.is_empty() {
            return if cancelled() { None } else { Some(out) };
        }
        let seqs: Vec<Vec<u32>> = texts.iter().map(|t| self.tokenizer.encode(t)).collect();
        let mut order: Vec<usize> = (0..seqs.len()).collect();
        order.sort_by_key(|&i| seqs[i].len());
        let threads = threads.max(1);
        let batches = mini_batches(&order, &seqs, threads);

        let run = |batch: &[usize], stop: &dyn Fn() -> bool| -> Option<Vec<f32>> {
            let group: Vec<Vec<u32>> = batch.iter().map(|&i| seqs[i].clone()).collect();
            let mut vecs = vec![0f32; batch.len() * dims];
            model::forward(&self.weights, &group, &mut vecs, stop).then_some(vecs)
        };
        let scatter = |out: &mut [f32], batch: &[usize], vecs: &[f32]| {
            for (k, &i) in batch.iter().enumerate() {
                out[i * dims..(i + 1) * dims].copy_from_slice(&vecs[k * dims..(k + 1) * dims]);
            }
        };

        let workers = threads.min(batches.len()) - 1;
        if workers == 0 {
            for batch in &batches {
                let vecs = run(batch, cancelled)?;
                scatter(&mut out, batch, &vecs);
            }
            return Some(out);
        }

        // `cancelled` need not be Sync: only this thread calls it, and tells the workers
        // through `stop`, which they poll between layers.
        let stop = AtomicBool::new(false);
        let next = AtomicUsize::new(0);
        let done = (Mutex::new(0usize), Condvar::new());
        let results = Mutex::new(Vec::with_capacity(batches.len()));
        let work = |poll: &dyn Fn() -> bool| loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(batch) = batches.get(i) else { break };
            match run(batch, poll) {
                Some(vecs) => results.lock().unwrap().push((i, vecs)),
                None => {
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
        };
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    work(&|| stop.load(Ordering::Relaxed));
                    *done.0.lock().unwrap() += 1;
                    done.1.notify_all();
                });
            }
            let poll = || {
                if stop.load(Ordering::Relaxed) {
                    return true;
                }
                let c = cancelled();
                if c {
                    stop.store(true, Ordering::Relaxed);
                }
                c
            };
            work(&poll);
            // Keep answering for the workers until they finish: they cannot call `cancelled`.
            let mut finished = done.0.lock().unwrap();
            while *finished < workers {
                if !stop.load(Ordering::Relaxed) && cancelled() {
                    stop.store(true, Ordering::Relaxed);
                }
                finished = done
                    .1
                    .wait_timeout(finished, std::time::Duration::from_millis(2))
                    .unwrap()
                    .0;
            }
        });
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        for (i, vecs) in results.into_inner().unwrap() {
            scatter(&mut out, &batches[i], &vecs);
        }
        Some(out)
    }
}

/// Cuts `order` (indices sorted by token count) into runs of at most [`BATCH_TOKENS`] padded
/// tokens, and into at least `threads` runs when there are enough texts, so every thread gets
/// work.
fn mini_batches(order: &[usize], seqs: &[Vec<u32>], threads: usize) -> Vec<Vec<usize>> {
    let per_thread = order.len().div_ceil(threads).clamp(1, MAX_BATCH_TEXTS);
    let mut batches = Vec::new();
    let mut cur: Vec<usize> = Vec::new();
    for &i in order {
        // Sorted ascending, so the newest text is the longest of the run.
        let padded = (cur.len() + 1) * seqs[i].len();
        if !cur.is_empty() && (padded > BATCH_TOKENS || cur.len() >= per_thread) {
            batches.push(std::mem::take(&mut cur));
        }
        cur.push(i);
    }
    if !cur.is_empty() {
        batches.push(cur);
    }
    batches
}

#[cfg(test)]
mod tests;
