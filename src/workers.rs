//! Fixed pools of the engine's own threads, fed by queues (SPEC D26): no call starts a thread.
//! A pool starts its threads on first use, never more than it was made with, and never ends
//! them. A job waits its turn in order. A job that must wait for the engine (a model loading,
//! vectors being built) is parked without a thread until [`Pool::wake`] or its deadline, then
//! runs again.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, Once};
use std::time::Instant;

type Job = Box<dyn FnOnce() + Send>;

/// A job run until it is done: each run returns `true` when it is, `false` to be parked.
pub type Parkable = Box<dyn FnMut() -> bool + Send>;

enum Work {
    Once(Job),
    Parkable(Parkable, Instant),
}

struct Queue {
    ready: VecDeque<Work>,
    parked: Vec<(Parkable, Instant)>,
    /// Counts [`Pool::wake`]s: a job that ran while one happened is not parked.
    wakes: u64,
}

pub struct Pool {
    name: &'static str,
    threads: fn() -> usize,
    /// The most jobs [`Pool::try_run`] lets wait (jobs of the engine's own are bounded by
    /// those who queue them).
    bound: usize,
    queue: Mutex<Queue>,
    work: Condvar,
    start: Once,
}

impl Pool {
    pub const fn new(name: &'static str, threads: fn() -> usize, bound: usize) -> Pool {
        Pool {
            name,
            threads,
            bound,
            queue: Mutex::new(Queue {
                ready: VecDeque::new(),
                parked: Vec::new(),
                wakes: 0,
            }),
            work: Condvar::new(),
            start: Once::new(),
        }
    }

    /// How many threads the pool runs.
    pub fn size(&self) -> usize {
        (self.threads)().max(1)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn started(&'static self) {
        self.start.call_once(|| {
            for i in 0..self.size() {
                // A thread that cannot start leaves the others (with none, jobs wait for a
                // thread that never comes; `spawn` fails only when the process is out of them).
                let _ = std::thread::Builder::new()
                    .name(format!("{}-{i}", self.name))
                    .spawn(move || self.serve());
            }
        });
    }

    /// Queues `job` whatever the queue holds: for the engine's own jobs, each bounded by
    /// whoever queues it.
    pub fn run(&'static self, job: impl FnOnce() + Send + 'static) {
        self.started();
        self.lock().ready.push_back(Work::Once(Box::new(job)));
        self.work.notify_one();
    }

    /// Queues `job` unless `bound` jobs already wait: then it is handed back.
    pub fn try_run<F: FnOnce() + Send + 'static>(&'static self, job: F) -> Result<(), F> {
        self.started();
        let mut queue = self.lock();
        if queue.ready.len() >= self.bound {
            return Err(job);
        }
        queue.ready.push_back(Work::Once(Box::new(job)));
        drop(queue);
        self.work.notify_one();
        Ok(())
    }

    /// Queues a job that may be parked, at most until `deadline` (then it runs again, and is
    /// expected to finish).
    pub fn run_parkable(&'static self, job: Parkable, deadline: Instant) {
        self.started();
        self.lock().ready.push_back(Work::Parkable(job, deadline));
        self.work.notify_one();
    }

    /// Something parked jobs wait for may have changed: they all run again.
    pub fn wake(&self) {
        let mut queue = self.lock();
        queue.wakes += 1;
        let parked = std::mem::take(&mut queue.parked);
        queue
            .ready
            .extend(parked.into_iter().map(|(j, d)| Work::Parkable(j, d)));
        drop(queue);
        self.work.notify_all();
    }

    fn serve(&self) {
        use std::panic::{catch_unwind, AssertUnwindSafe};
        loop {
            let (work, wakes) = self.next();
            // A job that panics (a bug) ends there; the thread serves on. A parkable job that
            // panics is dropped: whoever waits on it learns so from what it owned.
            match work {
                Work::Once(job) => {
                    let _ = catch_unwind(AssertUnwindSafe(job));
                }
                Work::Parkable(mut job, deadline) => {
                    if let Ok(false) = catch_unwind(AssertUnwindSafe(&mut job)) {
                        self.park(job, deadline, wakes);
                    }
                }
            }
        }
    }

    /// The next job, waiting for one; parked jobs past their deadline are ready again.
    fn next(&self) -> (Work, u64) {
        let mut queue = self.lock();
        loop {
            let now = Instant::now();
            if queue.parked.iter().any(|(_, d)| *d <= now) {
                let (due, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut queue.parked)
                    .into_iter()
                    .partition(|(_, d)| *d <= now);
                queue.parked = waiting;
                queue
                    .ready
                    .extend(due.into_iter().map(|(j, d)| Work::Parkable(j, d)));
            }
            if let Some(work) = queue.ready.pop_front() {
                return (work, queue.wakes);
            }
            let first = queue.parked.iter().map(|(_, d)| *d).min();
            queue = match first {
                Some(d) => {
                    let wait = d.saturating_duration_since(now);
                    self.work
                        .wait_timeout(queue, wait)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
                None => self.work.wait(queue).unwrap_or_else(|e| e.into_inner()),
            };
        }
    }

    /// Parks `job` unless a wake came while it ran (then it runs again at once).
    fn park(&self, job: Parkable, deadline: Instant, wakes: u64) {
        let mut queue = self.lock();
        if queue.wakes != wakes {
            queue.ready.push_back(Work::Parkable(job, deadline));
        } else {
            queue.parked.push((job, deadline));
        }
        drop(queue);
        // A waiting thread counts this deadline in.
        self.work.notify_all();
    }
}

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    fn two() -> usize {
        2
    }

    #[test]
    fn jobs_run_on_the_pools_threads_and_a_full_queue_hands_them_back() {
        static POOL: Pool = Pool::new("cg-test-pool", two, 4);
        let (tx, rx) = mpsc::channel();
        let (hold_tx, hold_rx) = mpsc::channel::<()>();
        let hold = Arc::new(Mutex::new(hold_rx));
        // Both threads busy: what follows waits in the queue, at most four of it.
        for _ in 0..2 {
            let hold = hold.clone();
            POOL.run(move || {
                let _ = hold.lock().unwrap().recv();
            });
        }
        std::thread::sleep(Duration::from_millis(50));
        let mut refused = 0;
        for i in 0..10 {
            let tx = tx.clone();
            if POOL.try_run(move || tx.send(i).unwrap()).is_err() {
                refused += 1;
            }
        }
        assert_eq!(refused, 6);
        hold_tx.send(()).unwrap();
        hold_tx.send(()).unwrap();
        let got: Vec<i32> = (0..4)
            .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
            .collect();
        assert_eq!(got.len(), 4);
    }

    #[test]
    fn parked_jobs_run_again_when_woken_or_due() {
        static POOL: Pool = Pool::new("cg-test-park", two, 4);
        let runs = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = mpsc::channel();
        let (r, t) = (runs.clone(), tx.clone());
        // Done on its third run: parked twice, woken once and once past its deadline.
        POOL.run_parkable(
            Box::new(move || {
                let n = r.fetch_add(1, Ordering::SeqCst) + 1;
                if n == 3 {
                    t.send(n).unwrap();
                }
                n == 3
            }),
            Instant::now() + Duration::from_millis(300),
        );
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        POOL.wake();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 3);
    }
}
