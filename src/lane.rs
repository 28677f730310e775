//! The long-read lane: a few threads of the engine's own for reads that must scan a large
//! document (its content ID is a hash of every byte). Such a scan can take seconds per GiB; on
//! the libuv pool a handful of them would hold every thread, and every other read, `match` and
//! reload would wait behind them. A read finds out it needs a long scan before it starts one,
//! hands itself over (see [`crate::knowledge::body::ReadControl`]) and runs again here, while
//! the pool stays free. Jobs wait their turn in order; the lane never grows.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Condvar, Mutex, OnceLock};

/// Threads of the lane: long reads run at most this many at a time.
pub const LANE_THREADS: usize = 2;

type Job = Box<dyn FnOnce() + Send>;

struct Lane {
    jobs: Mutex<Sender<Job>>,
    /// Held by tests to show that work queued here leaves the pool free.
    held: Mutex<bool>,
    released: Condvar,
}

fn lane() -> &'static Lane {
    static LANE: OnceLock<Lane> = OnceLock::new();
    LANE.get_or_init(|| {
        let (tx, rx) = channel::<Job>();
        let rx: &'static Mutex<Receiver<Job>> = Box::leak(Box::new(Mutex::new(rx)));
        for i in 0..LANE_THREADS {
            // A thread that cannot start leaves the others; with none, `submit` runs in place.
            let _ = std::thread::Builder::new()
                .name(format!("cg-long-read-{i}"))
                .spawn(move || serve(rx));
        }
        Lane {
            jobs: Mutex::new(tx),
            held: Mutex::new(false),
            released: Condvar::new(),
        }
    })
}

fn serve(rx: &'static Mutex<Receiver<Job>>) {
    loop {
        let job = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        wait_while_held();
        job();
    }
}

fn wait_while_held() {
    let lane = lane();
    let Ok(mut held) = lane.held.lock() else {
        return;
    };
    while *held {
        held = match lane.released.wait(held) {
            Ok(h) => h,
            Err(_) => return,
        };
    }
}

/// Queues `job` on the lane.
pub fn submit(job: impl FnOnce() + Send + 'static) {
    let job: Job = Box::new(job);
    let refused = match lane().jobs.lock() {
        Ok(tx) => tx.send(job).err().map(|e| e.0),
        Err(_) => Some(job),
    };
    if let Some(job) = refused {
        job();
    }
}

/// Holds (or releases) every job not yet started: for tests of what stays free meanwhile.
pub fn hold(on: bool) {
    let lane = lane();
    if let Ok(mut held) = lane.held.lock() {
        *held = on;
    }
    lane.released.notify_all();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn held_jobs_wait_and_released_jobs_all_run() {
        hold(true);
        let (tx, rx) = mpsc::channel();
        for i in 0..5 {
            let tx = tx.clone();
            submit(move || tx.send(i).unwrap());
        }
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        hold(false);
        let mut got: Vec<i32> = (0..5)
            .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
            .collect();
        got.sort();
        assert_eq!(got, [0, 1, 2, 3, 4]);
    }
}
