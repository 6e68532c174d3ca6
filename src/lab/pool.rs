//! A small fixed-size thread pool: std threads, one shared job queue, one result channel per
//! job.
//!
//! ```text
//! caller ── submit(job) ──► [ queue ] ──► worker 0 ─┐
//!        ◄─ Handle ────────                worker 1 ─┴─► result channel ──► Handle::wait
//! ```
//!
//! *Submission* is [`ThreadPool::submit`]: it creates the job's result channel, boxes the
//! job and puts it on the queue, then returns a [`Handle`] at once, before any worker has
//! necessarily looked at the job. *Completion, as the caller sees it,* is
//! [`Handle::wait`] returning: the worker sent the result, and the caller received it.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type Task = Box<dyn FnOnce(usize) + Send + 'static>;

/// A pool of worker threads that run submitted jobs in queue order (a free worker takes
/// the oldest job).
///
/// Invariants: `workers.len() >= 1`; the queue sender lives until drop, which then joins
/// every worker.
pub struct ThreadPool {
    queue: Option<Sender<Task>>,
    workers: Vec<JoinHandle<()>>,
}

/// The pending result of one submitted job.
pub struct Handle<T> {
    result: Receiver<T>,
}

/// The worker dropped the job without a result (it panicked).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the worker thread ended without returning the job's result")]
pub struct Lost;

impl ThreadPool {
    /// Starts `threads` workers (at least one).
    ///
    /// # Errors
    /// The OS error when a thread cannot be spawned.
    pub fn new(threads: usize) -> std::io::Result<Self> {
        let (queue, jobs) = mpsc::channel::<Task>();
        let jobs = Arc::new(Mutex::new(jobs));
        let workers = (0..threads.max(1))
            .map(|w| {
                let jobs = Arc::clone(&jobs);
                std::thread::Builder::new()
                    .name(format!("worksheet-worker-{w}"))
                    .spawn(move || loop {
                        // Hold the lock only to take one job, never while running it.
                        let next = match jobs.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        match next {
                            Ok(task) => task(w),
                            Err(_) => return, // queue closed: the pool is dropped
                        }
                    })
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(ThreadPool {
            queue: Some(queue),
            workers,
        })
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.workers.len()
    }

    /// Queues `job` and returns at once; the job later runs on a worker, which it receives
    /// as its argument (the worker's index).
    pub fn submit<T, F>(&self, job: F) -> Handle<T>
    where
        T: Send + 'static,
        F: FnOnce(usize) -> T + Send + 'static,
    {
        let (tx, rx) = mpsc::sync_channel::<T>(1);
        let task: Task = Box::new(move |worker| {
            // A panicking job loses its result (the handle reports `Lost`), not its worker.
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(worker)));
            if let Ok(result) = outcome {
                let _ = tx.send(result);
            }
        });
        if let Some(queue) = &self.queue {
            // The receiving side lives as long as a worker does; if every worker is gone the
            // task is dropped and the handle reports `Lost`.
            let _ = queue.send(task);
        }
        Handle { result: rx }
    }
}

impl<T> Handle<T> {
    /// Blocks until the job's result arrives.
    ///
    /// # Errors
    /// [`Lost`] when the job was dropped without a result.
    pub fn wait(self) -> Result<T, Lost> {
        self.result.recv().map_err(|_| Lost)
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        self.queue.take();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_on_workers_and_results_come_back() {
        let pool = ThreadPool::new(2).unwrap();
        assert_eq!(pool.threads(), 2);
        let handles: Vec<_> = (0..8u64)
            .map(|i| pool.submit(move |w| (i * i, w)))
            .collect();
        let results: Vec<(u64, usize)> = handles.into_iter().map(|h| h.wait().unwrap()).collect();
        assert_eq!(
            results.iter().map(|r| r.0).collect::<Vec<_>>(),
            vec![0, 1, 4, 9, 16, 25, 36, 49]
        );
        assert!(results.iter().all(|r| r.1 < 2));
    }

    #[test]
    fn a_panicking_job_is_lost_not_hung() {
        let pool = ThreadPool::new(1).unwrap();
        let h = pool.submit(|_| -> u32 { panic!("boom") });
        assert_eq!(h.wait(), Err(Lost));
        // The worker survived and takes the next job.
        assert_eq!(pool.submit(|_| 7u32).wait(), Ok(7));
    }
}
