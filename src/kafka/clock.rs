//! The one place `mk-tui serve` reads the wall clock (SPEC §2 "Determinism").
//! The engine's clock is still the driver's manual clock: the real time that
//! passed since the last step is applied as an `advance_clock` action, so a
//! served session is a plain action list and replays without the wall clock.

use std::time::Instant;

/// Real time since the server started, minus what was already applied.
#[derive(Debug)]
pub struct RealTime {
    source: Source,
    applied_ms: u64,
}

/// What real time is measured on.
#[derive(Debug)]
enum Source {
    /// The monotonic clock, since this instant.
    Since(Instant),
    /// The wall clock: the engine clock is the Unix time minus `origin_ms`
    /// (serve on a data directory, see
    /// [`crate::session::Driver::follow_wall_clock`]); it stood at
    /// `start_ms` when counting began.
    Wall { origin_ms: i64, start_ms: u64 },
}

impl RealTime {
    /// Starts counting now.
    pub fn start() -> Self {
        Self {
            source: Source::Since(Instant::now()),
            applied_ms: 0,
        }
    }

    /// Counts on the wall clock from `origin_ms`, the Unix time of the
    /// engine clock's 0, the engine clock standing at `start_ms`: each call
    /// hands out what brings the engine clock to the Unix time minus the
    /// origin (the time a reopened server was down, first), and nothing
    /// while the wall clock is behind it (set back): never backwards.
    pub fn from_wall(origin_ms: i64, start_ms: u64) -> Self {
        Self {
            source: Source::Wall {
                origin_ms,
                start_ms,
            },
            applied_ms: 0,
        }
    }

    /// Whole milliseconds that passed and are not applied yet; counted as
    /// applied once returned. Fractions carry over to the next call, so the
    /// applied total never drifts from real time.
    pub fn take_elapsed_ms(&mut self) -> u64 {
        let now = match self.source {
            Source::Since(started) => started.elapsed().as_millis() as u64,
            Source::Wall {
                origin_ms,
                start_ms,
            } => {
                let engine = Self::unix_ms().saturating_sub(origin_ms);
                u64::try_from(engine).unwrap_or(0).saturating_sub(start_ms)
            }
        };
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
    fn on_the_wall_clock_the_time_down_comes_first_and_never_backwards() {
        let mut t = RealTime::from_wall(RealTime::unix_ms() - 60_005, 5);
        let first = t.take_elapsed_ms();
        assert!((60_000..61_000).contains(&first), "{first}");
        // A wall clock behind the engine clock hands out nothing.
        let mut t = RealTime::from_wall(RealTime::unix_ms() + 60_000, 0);
        assert_eq!(t.take_elapsed_ms(), 0);
    }
}
