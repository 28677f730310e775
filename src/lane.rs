//! The long-read lane: a few threads of the engine's own for reads that must scan a large
//! document (its content ID is a hash of every byte). Such a scan can take seconds per GiB; on
//! the libuv pool a handful of them would hold every thread, and every other read, `match` and
//! reload would wait behind them. A read finds out it needs a long scan before it starts one,
//! hands itself over (see [`crate::knowledge::body::ReadControl`]) and runs again here, while
//! the pool stays free. Jobs wait their turn in order, at most [`LANE_QUEUE`] of them; the lane
//! never grows.

use crate::workers::Pool;
use std::sync::{Condvar, Mutex};

/// Threads of the lane: long reads run at most this many at a time.
pub const LANE_THREADS: usize = 2;
/// Long reads that may wait for the lane; past them a read is refused (`retry`).
pub const LANE_QUEUE: usize = 256;

fn threads() -> usize {
    LANE_THREADS
}

static LANE: Pool = Pool::new("cg-long-read", threads, LANE_QUEUE);

/// Held by tests to show that work queued here leaves the pool free.
static HELD: Mutex<bool> = Mutex::new(false);
static RELEASED: Condvar = Condvar::new();

fn wait_while_held() {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    while *held {
        held = RELEASED.wait(held).unwrap_or_else(|e| e.into_inner());
    }
}

/// Queues `job` on the lane; a full lane hands it back.
pub fn submit<F: FnOnce() + Send + 'static>(job: F) -> Result<(), F> {
    // The job is wrapped only once it is queued: a refused one comes back as it was given.
    let slot = std::sync::Arc::new(Mutex::new(Some(job)));
    let queued = slot.clone();
    let run = move || {
        wait_while_held();
        if let Some(job) = queued.lock().unwrap_or_else(|e| e.into_inner()).take() {
            job();
        }
    };
    match LANE.try_run(run) {
        Ok(()) => Ok(()),
        Err(_) => {
            let job = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
            job.map_or(Ok(()), Err)
        }
    }
}

/// Holds (or releases) every job not yet started: for tests of what stays free meanwhile.
pub fn hold(on: bool) {
    *HELD.lock().unwrap_or_else(|e| e.into_inner()) = on;
    RELEASED.notify_all();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    // One test: the hold is the whole process's, so a second test holding and releasing it
    // would release this one's jobs midway.
    #[test]
    fn held_jobs_wait_a_full_lane_refuses_and_released_jobs_all_run() {
        hold(true);
        let (tx, rx) = mpsc::channel();
        for i in 0..5 {
            let tx = tx.clone();
            assert!(submit(move || tx.send(i).unwrap()).is_ok());
        }
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        // Held, each thread keeps the job it took: the lane takes its threads' worth and its
        // queue, then hands the next job back.
        let mut accepted = 5;
        let refused = loop {
            let tx = tx.clone();
            match submit(move || tx.send(-1).unwrap()) {
                Ok(()) => accepted += 1,
                Err(job) => break job,
            }
            assert!(
                accepted <= LANE_QUEUE + LANE_THREADS,
                "the lane grew past its bound"
            );
        };
        assert!(accepted >= LANE_QUEUE, "refused at {accepted}");
        drop(refused);
        hold(false);
        let mut got: Vec<i32> = (0..accepted)
            .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
            .filter(|&i| i >= 0)
            .collect();
        got.sort();
        assert_eq!(got, [0, 1, 2, 3, 4]);
        assert!(
            rx.recv_timeout(Duration::from_millis(100)).is_err(),
            "a refused job ran"
        );
    }
}
