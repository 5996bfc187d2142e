//! `mk-tui serve --record F`: a served session written as
//! a normal recording (SPEC §4) as it goes. The header is the served
//! cluster's; the recording's own steps (when serving a recording) come
//! first; then every action the driver applies for a client or the server
//! (`create_topic`, `produce`, the `replicate` ticks, `advance_clock` for
//! the real time that passed) is appended and synced as it is applied, so
//! `mk-tui state F` replays the session without the clients.

use crate::session::SessionError;
use std::path::{Path, PathBuf};

use crate::session::listeners::Steps;
use crate::session::recording::{Caption, Header, Step};
use crate::session::step_log::{Pace, StepLog};
use crate::session::{Action, Driver, Outcome, RecordingWriter};

/// Where a served session's steps go: a [`StepLog`] paced by the engine
/// clock, which follows real time here, that keeps no history (a server
/// runs for days and undoes nothing).
#[derive(Debug)]
pub struct RecordSteps {
    log: Option<StepLog>,
}

impl RecordSteps {
    /// Nothing recorded (no `--record`).
    pub fn none() -> Self {
        Self { log: None }
    }

    /// Creates `path` with `header` and the `applied` steps, then appends
    /// the session's. A step's `at_ms` is the engine clock since serving
    /// began, after the last applied step's: the replay plays at the pace
    /// the clients had.
    pub fn create(
        path: &Path,
        header: &Header,
        applied: &[Step],
        driver: &Driver,
    ) -> Result<Self, SessionError> {
        let io = |e: std::io::Error| SessionError::flag(format!("--record {}", path.display()), e);
        let mut writer = RecordingWriter::create(path, header).map_err(io)?;
        for step in applied {
            writer.append(step).map_err(io)?;
        }
        let last = applied.last().cloned().into_iter().collect();
        let log = StepLog::new(
            Pace::EngineClock,
            last,
            Some(writer),
            driver.clock_ms(),
            false,
        );
        Ok(Self { log: Some(log) })
    }

    /// The file being written, while it is.
    pub fn path(&self) -> Option<PathBuf> {
        self.log
            .as_ref()
            .and_then(|l| l.path())
            .map(Path::to_path_buf)
    }
}

impl Steps for RecordSteps {
    fn applied(&mut self, driver: &Driver, action: &Action, _: &Outcome) {
        self.write(driver, action, None);
    }

    fn noted(&mut self, driver: &Driver, caption: &Caption) {
        self.write(driver, &Action::Note {}, Some(caption.clone()));
    }
}

impl RecordSteps {
    /// Appends one step, synced; a failed write stops the recording.
    fn write(&mut self, driver: &Driver, action: &Action, caption: Option<Caption>) {
        let Some(log) = &mut self.log else {
            return;
        };
        if let Err(e) = log.push(action.clone(), caption, driver.clock_ms()) {
            // What is written is a whole recording up to here; serving goes
            // on, said once.
            crate::kafka::log_line(format_args!(
                "mk-tui serve: {}: cannot record step {}: {}; recording stopped",
                e.path.display(),
                driver.step(),
                e.error
            ));
            self.log = None;
        }
    }
}

/// Whether `file` would be written inside the directory `dir` (both made
/// absolute, with what exists of them resolved): a recording there would
/// be part of the data the engine owns.
pub fn inside(file: &Path, dir: &Path) -> bool {
    let resolve = |p: &Path| -> PathBuf {
        let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        // The longest prefix that exists, resolved, then the rest.
        let mut head = abs.clone();
        let mut tail = Vec::new();
        while !head.exists() {
            match (head.file_name().map(|n| n.to_os_string()), head.parent()) {
                (Some(name), Some(parent)) => {
                    tail.push(name);
                    head = parent.to_path_buf();
                }
                _ => return abs,
            }
        }
        let mut out = head.canonicalize().unwrap_or(head);
        for name in tail.iter().rev() {
            out.push(name);
        }
        out
    };
    resolve(file).starts_with(resolve(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_under_the_directory_is_inside_it_however_it_is_spelt() {
        let temp = tempfile::tempdir().unwrap();
        let data = temp.path().join("data");
        std::fs::create_dir(&data).unwrap();
        assert!(inside(&data.join("r.jsonl"), &data));
        assert!(inside(&data.join("sub/r.jsonl"), &data));
        std::fs::create_dir(temp.path().join("x")).unwrap();
        assert!(inside(&temp.path().join("x/../data/r.jsonl"), &data));
        assert!(!inside(&temp.path().join("r.jsonl"), &data));
        assert!(!inside(&temp.path().join("data2/r.jsonl"), &data));
        // A data directory that does not exist yet.
        let later = temp.path().join("later");
        assert!(inside(&later.join("r.jsonl"), &later));
    }
}
