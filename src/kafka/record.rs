//! `mk-tui serve --record F` (issue 14 item 3): a served session written as
//! a normal recording (SPEC §4) as it goes. The header is the served
//! cluster's; the recording's own steps (when serving a recording) come
//! first; then every action the driver applies for a client or the server
//! (`create_topic`, `produce`, the `replicate` ticks, `advance_clock` for
//! the real time that passed) is appended and synced as it is applied, so
//! `mk-tui state F` replays the session without the clients.

use std::path::{Path, PathBuf};

use crate::session::listeners::Steps;
use crate::session::recording::{Caption, Header, Step};
use crate::session::{Action, Driver, Outcome, RecordingWriter};

/// Where a served session's steps go.
#[derive(Debug, Default)]
pub struct RecordSteps {
    writer: Option<RecordingWriter>,
    /// `at_ms` of the last step already written (the served recording's).
    at_base: u64,
    /// The engine clock when serving began.
    clock_base: u64,
}

impl RecordSteps {
    /// Nothing recorded (no `--record`).
    pub fn none() -> Self {
        Self::default()
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
    ) -> Result<Self, String> {
        let io = |e: std::io::Error| format!("--record {}: {e}", path.display());
        let mut writer = RecordingWriter::create(path, header).map_err(io)?;
        for step in applied {
            writer.append(step).map_err(io)?;
        }
        Ok(Self {
            writer: Some(writer),
            at_base: applied.last().map_or(0, |s| s.at_ms),
            clock_base: driver.clock_ms(),
        })
    }

    /// The file being written, while it is.
    pub fn path(&self) -> Option<PathBuf> {
        self.writer.as_ref().map(|w| w.path().to_path_buf())
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
        let Some(writer) = &mut self.writer else {
            return;
        };
        let step = Step {
            at_ms: self.at_base + driver.clock_ms().saturating_sub(self.clock_base),
            action: action.clone(),
            caption,
        };
        if let Err(e) = writer.append(&step) {
            // What is written is a whole recording up to here; serving goes
            // on, said once.
            crate::kafka::log_line(format_args!(
                "mk-tui serve: {}: cannot record step {}: {e}; recording stopped",
                writer.path().display(),
                driver.step()
            ));
            self.writer = None;
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
