//! The one place `mk-tui serve` reads the wall clock (SPEC §2
//! "Determinism", issue 14 item 1). The engine's clock is still the
//! driver's manual clock: the real time that passed since the last step is
//! applied as an `advance_clock` action, so a served session is a plain
//! action list and replays without the wall clock.

use std::time::Instant;

/// Real time since the server started, minus what was already applied.
#[derive(Debug)]
pub struct RealTime {
    started: Instant,
    applied_ms: u64,
    /// Time owed from before the start: how long a data directory's server
    /// was down, handed out with the first elapsed time.
    owed_ms: u64,
}

impl RealTime {
    /// Starts counting now.
    pub fn start() -> Self {
        Self::start_owing(0)
    }

    /// Starts counting now, with `owed_ms` already passed (serve reopening
    /// a data directory: the time it was down, see
    /// [`crate::session::Driver::follow_wall_clock`]).
    pub fn start_owing(owed_ms: u64) -> Self {
        Self {
            started: Instant::now(),
            applied_ms: 0,
            owed_ms,
        }
    }

    /// Whole milliseconds that passed and are not applied yet; counted as
    /// applied once returned. Fractions carry over to the next call, so the
    /// applied total never drifts from real time.
    pub fn take_elapsed_ms(&mut self) -> u64 {
        let now = (self.started.elapsed().as_millis() as u64).saturating_add(self.owed_ms);
        let due = now.saturating_sub(self.applied_ms);
        self.applied_ms += due;
        due
    }

    /// The wall-clock instant, for the server's own deadlines (request
    /// timeouts, replication ticks); never reaches the engine.
    pub fn now() -> Instant {
        Instant::now()
    }

    /// Milliseconds since the Unix epoch, for the one field a client reads
    /// as a date (DescribeTransactions' start time, translated from the
    /// engine's clock); never reaches the engine.
    pub fn unix_ms() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_time_is_handed_out_once() {
        let mut t = RealTime::start();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let first = t.take_elapsed_ms();
        assert!(first >= 5, "{first}");
        let second = t.take_elapsed_ms();
        assert!(
            second < first,
            "the first call took the time: {first} then {second}"
        );
        assert_eq!(t.applied_ms, first + second);
    }

    #[test]
    fn time_owed_is_handed_out_first() {
        let mut t = RealTime::start_owing(60_000);
        let first = t.take_elapsed_ms();
        assert!((60_000..61_000).contains(&first), "{first}");
    }
}
