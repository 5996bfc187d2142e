//! The live observer's refreshes (docs/observe.md "Live"): a thread of its own observes the cluster every interval, or at
//! once when asked (`r`), and hands each outcome to the session, so the
//! drawing thread never waits on a broker: a slow or silent one delays the
//! next refresh, never a key or quitting. Each refresh is a whole
//! [`observe`](super::observe) — new connections, the same bounds (every
//! connect and every response waits at most 10 s, the whole refresh at most
//! `--timeout`) — so a broker that went
//! away and came back on the same address is simply asked again, and a
//! failure (unreachable broker, closed connection, unsupported version,
//! missing topic, a leader that moved during the refresh) is the one line
//! the session shows as a step's error while the next refresh retries.
//!
//! The thread holds nothing but its options: dropping the [`Live`]
//! refresher lets it end after the refresh under way, without anyone
//! waiting for it.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::session::observation::{Refreshed, Refresher};

use super::Options;

/// Refreshes on a thread: every `interval` (start to start; a refresh
/// that takes longer is followed at once), or when [`Refresher::request`]
/// asks, at most `limit` times.
pub struct Live {
    requests: Sender<()>,
    results: Receiver<Refreshed>,
    wake: Arc<Notify>,
}

impl Live {
    /// Starts refreshing: the first refresh begins at once.
    pub fn start(options: Options, interval: Duration, limit: Option<usize>) -> Self {
        let (requests, asked) = mpsc::channel::<()>();
        let (done, results) = mpsc::channel();
        let wake = Arc::new(Notify::new());
        let notify = Arc::clone(&wake);
        std::thread::spawn(move || {
            let start = Instant::now();
            let mut next = start;
            let mut count = 0;
            while limit.is_none_or(|l| count < l) {
                let now = Instant::now();
                let wait = next.saturating_duration_since(now);
                if !wait.is_zero() {
                    match asked.recv_timeout(wait) {
                        Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
                // Requests made before this refresh starts are answered by it.
                loop {
                    match asked.try_recv() {
                        Ok(()) => continue,
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => return,
                    }
                }
                let began = Instant::now();
                let at_ms =
                    u64::try_from(began.duration_since(start).as_millis()).unwrap_or(u64::MAX);
                let outcome = super::observe(&options).map_err(|e| e.to_string());
                if done.send(Refreshed { at_ms, outcome }).is_err() {
                    return;
                }
                notify.notify_one();
                count += 1;
                next = began + interval;
            }
        });
        Self {
            requests,
            results,
            wake,
        }
    }

    /// The next refresh's outcome, waiting for it; None once the limit is
    /// reached (the headless observer's loop).
    pub fn recv(&self) -> Option<Refreshed> {
        self.results.recv().ok()
    }
}

impl Refresher for Live {
    fn wake(&self) -> Arc<Notify> {
        Arc::clone(&self.wake)
    }

    fn request(&self) -> bool {
        // The thread is gone only after its last refresh: nothing to ask.
        self.requests.send(()).is_ok()
    }

    fn take(&mut self) -> Vec<Refreshed> {
        self.results.try_iter().collect()
    }
}
