//! Time for the engine (SPEC §2 determinism): the engine never reads the wall
//! clock itself. Recordings and tests use [`ManualClock`], which moves only when
//! told to; [`SystemClock`] exists for ad-hoc interactive use.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of milliseconds. ISR time lag (E4) and record timestamps read it.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since this clock's epoch.
    fn now_ms(&self) -> u64;
}

/// A clock that moves only by [`ManualClock::advance`] or [`ManualClock::set`].
/// Clones share one time, so a test can keep a handle and move the cluster's clock.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock at 0 ms.
    pub fn new() -> Self {
        Self::default()
    }

    /// A clock at `ms`.
    pub fn at(ms: u64) -> Self {
        let clock = Self::new();
        clock.set(ms);
        clock
    }

    /// Moves time forward by `ms`. The clock saturates at `u64::MAX`
    /// instead of wrapping: time that wrapped would go backwards, and ISR lag
    /// and transaction timeouts are measured on it. (Recordings and the
    /// session refuse to move it past a far smaller cap; see
    /// docs/recording-format.md, "Limits".)
    pub fn advance(&self, ms: u64) {
        // `fetch_update` with a closure that always returns `Some` cannot fail.
        let _ = self
            .now
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
                Some(now.saturating_add(ms))
            });
    }

    /// Sets the time; it may not go backwards (ISR lag is measured on it).
    pub fn set(&self, ms: u64) {
        self.now.fetch_max(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}

/// Wall-clock milliseconds since the Unix epoch. Not for recordings or tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told_and_clones_share_time() {
        let clock = ManualClock::new();
        let other = clock.clone();
        assert_eq!(clock.now_ms(), 0);
        clock.advance(1500);
        assert_eq!(other.now_ms(), 1500);
        other.set(1000);
        assert_eq!(clock.now_ms(), 1500, "time never goes backwards");
        other.set(2000);
        assert_eq!(clock.now_ms(), 2000);
    }

    #[test]
    fn manual_clock_saturates_instead_of_wrapping() {
        let clock = ManualClock::at(5);
        clock.advance(u64::MAX);
        assert_eq!(clock.now_ms(), u64::MAX);
        clock.advance(10);
        assert_eq!(clock.now_ms(), u64::MAX, "no wrap to 9");
        let clock = ManualClock::at(u64::MAX - 3);
        clock.advance(2);
        assert_eq!(clock.now_ms(), u64::MAX - 1, "below the top it still adds");
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_ms() > 1_577_836_800_000);
    }
}
