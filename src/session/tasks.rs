//! The driver's spawned operations (a produce waiting for its acks, the
//! actions of one transaction in order) on a single-threaded runtime, and
//! running them until none can go further: the quiescence after each step
//! (SPEC §4).
//!
//! Each task counts its polls. [`Tasks::settle`] yields until a yield
//! passes in which no task was polled: on a current-thread runtime a
//! yielded task resumes only after the tasks that were ready ran, so a
//! yield with no poll means nothing was ready. A chain of wakes of any
//! length runs to its end, and work that never settles is a bug, reported
//! instead of left pending.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

/// Rounds after which work that still runs is a livelock, not a chain:
/// far past the longest chain a step makes (one wake per pending
/// operation and partition).
const MAX_ROUNDS: usize = 1 << 20;

/// A current-thread runtime whose tasks count their polls.
#[derive(Debug)]
pub struct Tasks {
    runtime: Runtime,
    polls: Arc<AtomicU64>,
}

impl Tasks {
    /// Tasks run in the order they were woken, as in the book's asyncio
    /// loop (issue 16): the wakes of a step's own call (a replicate that
    /// acknowledges two appends) queue remotely, those of the tasks that
    /// run locally; checking the remote queue first on every tick runs
    /// the step's wakes before what they wake in turn, which is asyncio's
    /// one FIFO queue. So two operations completing in one step journal
    /// their frames in the book's order.
    pub fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .global_queue_interval(1)
            .build()
            .expect("a current-thread runtime without drivers always builds");
        Self {
            runtime,
            polls: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Spawns `work`; it first runs at the next [`Self::settle`].
    pub fn spawn<F>(&self, work: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let polls = self.polls.clone();
        let mut work = Box::pin(work);
        self.runtime.spawn(std::future::poll_fn(move |cx| {
            polls.fetch_add(1, Ordering::Relaxed);
            work.as_mut().poll(cx)
        }))
    }

    /// Runs the spawned work until no task can go further. Returns how
    /// many rounds it took.
    ///
    /// # Panics
    /// If the work is still running after [`MAX_ROUNDS`] rounds: a
    /// livelock in the engine.
    pub fn settle(&self) -> usize {
        let polls = self.polls.clone();
        self.runtime.block_on(async move {
            for round in 1..=MAX_ROUNDS {
                let before = polls.load(Ordering::Relaxed);
                tokio::task::yield_now().await;
                if polls.load(Ordering::Relaxed) == before {
                    return round;
                }
            }
            panic!("the driver's tasks did not settle after {MAX_ROUNDS} rounds (a livelock)");
        })
    }

    /// The output of a finished task.
    pub fn join<T>(&self, task: JoinHandle<T>) -> Result<T, tokio::task::JoinError> {
        self.runtime.block_on(task)
    }
}

impl Default for Tasks {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of tasks each woken by the one before it finishes whole in
    /// one settle, however long (the driver used to give spawned work a
    /// fixed 64 yields, after which the rest of such a chain stayed
    /// pending).
    #[test]
    fn a_chain_of_wakes_runs_to_its_end() {
        for length in [1usize, 64, 65, 1000] {
            let tasks = Tasks::new();
            let (first_tx, mut rx) = tokio::sync::oneshot::channel::<usize>();
            let mut handles = Vec::new();
            for _ in 0..length {
                let (tx, next_rx) = tokio::sync::oneshot::channel::<usize>();
                let waiting = std::mem::replace(&mut rx, next_rx);
                handles.push(tasks.spawn(async move {
                    let n = waiting.await.expect("the one before sends");
                    // Each link yields once more before waking the next.
                    tokio::task::yield_now().await;
                    let _ = tx.send(n + 1);
                    n
                }));
            }
            first_tx.send(0).unwrap();
            let rounds = tasks.settle();
            assert!(
                handles.iter().all(JoinHandle::is_finished),
                "length {length}: some of the chain still pending after {rounds} rounds"
            );
            assert_eq!(rx.try_recv().unwrap(), length);
            assert!(rounds > length, "one round per link at least: {rounds}");
        }
    }

    /// Work that waits on something outside (acks not yet given) settles
    /// at once and stays pending; nothing spawned settles in one round.
    #[test]
    fn waiting_work_settles_pending() {
        let tasks = Tasks::new();
        assert_eq!(tasks.settle(), 1);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let waiting = tasks.spawn(async move { rx.await.is_ok() });
        let rounds = tasks.settle();
        assert!(rounds <= 2, "{rounds}");
        assert!(!waiting.is_finished());
        tx.send(()).unwrap();
        tasks.settle();
        assert!(waiting.is_finished());
        assert!(tasks.join(waiting).unwrap());
    }
}
