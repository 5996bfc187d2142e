//! `StepLog`: the steps a session applied, in order, in one place for
//! every source of steps (a key, a Kafka client of `--listen`, a client of
//! `mk-tui serve`): the history that undo and a branch replay, the
//! recording being written (`--record`), and the one rule that gives each
//! step its `at_ms`.
//!
//! The rule (docs/recording-format.md, "Pacing"): a step's `at_ms` is the
//! session's clock when the step was applied. The clock starts where the
//! steps the session started from end (a demo's, a branched replay's, a
//! served recording's: they keep their own `at_ms`). What moves it is the
//! session's [`Pace`]: real time where the engine clock follows it
//! (`serve`), else one beat per step (the dashboard, whose engine clock is
//! the lecturer's and moves only by `advance_clock`).

use std::path::{Path, PathBuf};

use crate::session::recording::{Caption, Header, Step};
use crate::session::{Action, RecordingWriter};

/// What moves a session's clock between two steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// One beat of this many ms per step applied: a step is stamped with
    /// the clock, then the clock moves on one beat. The steps the session
    /// started from count as applied (its first own step is one beat after
    /// their last; a new recording's first step is at 0), and an undone
    /// step's beat is not given back.
    Beat(u64),
    /// The engine clock, which follows real time: a step is stamped with
    /// the time the engine clock moved since the log began, after the last
    /// step the session started from. A replay plays at the clients' pace.
    EngineClock,
}

/// The dashboard's beat: a replay of a lecture shows one step a second.
pub const DASHBOARD_BEAT_MS: u64 = 1000;

/// A step applied but not written to the recording (the step stays in the
/// history: it was applied).
#[derive(Debug)]
pub struct RecordError {
    pub path: PathBuf,
    pub error: std::io::Error,
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: cannot record: {}", self.path.display(), self.error)
    }
}

/// The steps of a session (see the module's comment).
#[derive(Debug)]
pub struct StepLog {
    pace: Pace,
    /// Every step, the ones the session started from first; None when the
    /// session keeps none (`serve`: it runs for days, and undoes nothing).
    history: Option<Vec<Step>>,
    writer: Option<RecordingWriter>,
    /// The clock's value at the log's start.
    origin_ms: u64,
    /// [`Pace::Beat`]: the beats since the start. [`Pace::EngineClock`]:
    /// the engine clock at the start.
    since: u64,
}

impl StepLog {
    /// A log whose session started from `started` (already applied, and
    /// already in `writer` if there is one) with the engine clock at
    /// `clock_ms`. `keep`: whether it keeps its steps (undo, branch).
    pub fn new(
        pace: Pace,
        started: Vec<Step>,
        writer: Option<RecordingWriter>,
        clock_ms: u64,
        keep: bool,
    ) -> Self {
        let last = started.last().map(|s| s.at_ms);
        let (origin_ms, since) = match pace {
            Pace::Beat(beat) => (last.map_or(0, |at| at + beat), 0),
            Pace::EngineClock => (last.unwrap_or(0), clock_ms),
        };
        Self {
            pace,
            history: keep.then_some(started),
            writer,
            origin_ms,
            since,
        }
    }

    /// The dashboard's log: every step kept, one beat a second.
    pub fn dashboard(started: Vec<Step>, writer: Option<RecordingWriter>) -> Self {
        Self::new(Pace::Beat(DASHBOARD_BEAT_MS), started, writer, 0, true)
    }

    /// Starts the log again from `started` (already applied and written),
    /// with the engine clock at `clock_ms`: the writer and pace stay.
    pub fn start_from(&mut self, started: Vec<Step>, clock_ms: u64) {
        let writer = self.writer.take();
        let keep = self.history.is_some();
        *self = Self::new(self.pace, started, writer, clock_ms, keep);
    }

    /// The `at_ms` the next step gets with the engine clock at `clock_ms`.
    pub fn next_at_ms(&self, clock_ms: u64) -> u64 {
        match self.pace {
            Pace::Beat(beat) => self.origin_ms + beat * self.since,
            Pace::EngineClock => self.origin_ms + clock_ms.saturating_sub(self.since),
        }
    }

    /// Keeps a step just applied, and appends it to the recording (synced).
    /// Err: it is kept, but the recording does not have it.
    pub fn push(
        &mut self,
        action: Action,
        caption: Option<Caption>,
        clock_ms: u64,
    ) -> Result<(), RecordError> {
        let step = Step {
            present: None,
            at_ms: self.next_at_ms(clock_ms),
            action,
            caption,
        };
        if let Pace::Beat(_) = self.pace {
            self.since += 1;
        }
        let written = match &mut self.writer {
            Some(w) => w.append(&step).map_err(|error| RecordError {
                path: w.path().to_path_buf(),
                error,
            }),
            None => Ok(()),
        };
        if let Some(history) = &mut self.history {
            history.push(step);
        }
        written
    }

    /// Every step kept, in order (none when the log keeps none).
    pub fn steps(&self) -> &[Step] {
        self.history.as_deref().unwrap_or_default()
    }

    /// The last step kept.
    pub fn last(&self) -> Option<&Step> {
        self.steps().last()
    }

    /// How many steps are kept.
    pub fn len(&self) -> usize {
        self.steps().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The steps but the last, for replaying them without it.
    pub fn all_but_last(&self) -> &[Step] {
        let steps = self.steps();
        &steps[..steps.len().saturating_sub(1)]
    }

    /// Forgets the last step, the recording rewritten without it first
    /// (atomically, under `header`). Err: nothing changed. The clock does
    /// not go back.
    pub fn undo_last(&mut self, header: &Header) -> Result<Option<Step>, RecordError> {
        match self.len().checked_sub(1) {
            Some(last) => self.forget(last, header),
            None => self.forget(0, header),
        }
    }

    /// Forgets step `index` (0-based), the steps after it kept in their
    /// order: undo of the last cluster step keeps the `ui` steps after it
    /// (docs/dashboard.md "Decisions"). The recording is rewritten without
    /// it first (atomically, under `header`). Err: nothing changed. The
    /// clock does not go back.
    pub fn forget(&mut self, index: usize, header: &Header) -> Result<Option<Step>, RecordError> {
        let kept: Vec<Step> = self
            .steps()
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .map(|(_, s)| s.clone())
            .collect();
        if let Some(w) = &mut self.writer {
            w.rewrite(header, &kept).map_err(|error| RecordError {
                path: w.path().to_path_buf(),
                error,
            })?;
        }
        Ok(self
            .history
            .as_mut()
            .filter(|h| index < h.len())
            .map(|h| h.remove(index)))
    }

    /// The file being written, while it is.
    pub fn path(&self) -> Option<&Path> {
        self.writer.as_ref().map(|w| w.path())
    }

    /// True while a recording is written.
    pub fn is_recording(&self) -> bool {
        self.writer.is_some()
    }

    /// Stops writing the recording (what is in it stays a whole recording).
    pub fn stop_recording(&mut self) {
        self.writer = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(at_ms: u64) -> Step {
        Step {
            present: None,
            at_ms,
            action: Action::Note {},
            caption: None,
        }
    }

    fn header() -> Header {
        let text = r#"{"mk_recording":1,"title":"t","cluster":{"brokers":[1],"topics":[{"name":"out","partitions":1,"replication_factor":1}]}}"#;
        crate::session::Recording::parse("t.jsonl", text)
            .unwrap()
            .header
    }

    fn stamps(log: &StepLog) -> Vec<u64> {
        log.steps().iter().map(|s| s.at_ms).collect()
    }

    #[test]
    fn a_new_dashboard_recording_starts_at_zero_one_beat_a_step() {
        let mut log = StepLog::dashboard(Vec::new(), None);
        for clock in [0, 50_000, 50_000] {
            log.push(Action::Note {}, None, clock).unwrap();
        }
        assert_eq!(
            stamps(&log),
            [0, 1000, 2000],
            "the engine clock is not the pace"
        );
    }

    #[test]
    fn a_dashboard_session_goes_on_one_beat_after_the_steps_it_started_from() {
        let mut log = StepLog::dashboard(vec![step(0), step(4500)], None);
        log.push(Action::Note {}, None, 0).unwrap();
        assert_eq!(stamps(&log), [0, 4500, 5500]);
    }

    #[test]
    fn an_undone_steps_beat_is_not_given_back() {
        let mut log = StepLog::dashboard(Vec::new(), None);
        log.push(Action::Note {}, None, 0).unwrap();
        log.push(Action::Crash {}, None, 0).unwrap();
        let header = header();
        let undone = log.undo_last(&header).unwrap().unwrap();
        assert_eq!(undone.action, Action::Crash {});
        log.push(Action::Note {}, None, 0).unwrap();
        assert_eq!(stamps(&log), [0, 2000]);
    }

    #[test]
    fn serve_stamps_steps_with_the_engine_time_since_it_began() {
        let mut log = StepLog::new(
            Pace::EngineClock,
            vec![step(0), step(900)],
            None,
            7000,
            true,
        );
        for clock in [7000, 7000, 7250, 9000] {
            log.push(Action::Note {}, None, clock).unwrap();
        }
        assert_eq!(stamps(&log), [0, 900, 900, 900, 1150, 2900]);
        assert_eq!(
            log.next_at_ms(6000),
            900,
            "a clock behind its start is the start"
        );
    }

    #[test]
    fn a_log_that_keeps_nothing_still_paces_and_writes() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("r.jsonl");
        let header = header();
        let writer = RecordingWriter::create(&path, &header).unwrap();
        let mut log = StepLog::new(Pace::EngineClock, vec![step(100)], Some(writer), 10, false);
        log.push(Action::Crash {}, None, 30).unwrap();
        assert!(log.is_empty());
        let text = std::fs::read_to_string(&path).unwrap();
        let last = text.lines().last().unwrap();
        assert_eq!(last, r#"{"at_ms":120,"action":{"crash":{}}}"#);
    }

    #[test]
    fn undo_rewrites_the_recording_without_the_last_step() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("r.jsonl");
        let header = header();
        let writer = RecordingWriter::create(&path, &header).unwrap();
        let mut log = StepLog::dashboard(Vec::new(), Some(writer));
        log.push(Action::Note {}, None, 0).unwrap();
        log.push(Action::Crash {}, None, 0).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3);
        log.undo_last(&header).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(!text.contains("crash"), "{text}");
        assert_eq!(log.len(), 1);
    }

    #[test]
    fn a_stopped_recording_writes_no_more_but_the_steps_are_kept() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("r.jsonl");
        let writer = RecordingWriter::create(&path, &header()).unwrap();
        let mut log = StepLog::dashboard(Vec::new(), Some(writer));
        log.push(Action::Note {}, None, 0).unwrap();
        assert_eq!(log.path(), Some(path.as_path()));
        log.stop_recording();
        assert!(!log.is_recording());
        log.push(Action::Crash {}, None, 0).unwrap();
        assert_eq!(log.len(), 2, "applied, so in the history");
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
    }
}
