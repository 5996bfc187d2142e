//! The live session's record of the actions its listeners apply (issue 14,
//! `mk-tui --listen`): a client's request or a replication tick is a step
//! of the session exactly as a key's is: in its history (what undo and a
//! branch replay), in its recording (`--record`), with the snapshot before
//! it (what the step changed, marked ▸) and its moment of death if it
//! crashed the cluster. Only the status line says who did it.

use crate::session::listeners::Steps;
use crate::session::recording::{Caption, Step};
use crate::session::snapshot::{Bounds, SnapshotSource};
use crate::session::{Action, Driver, Outcome, RecordingWriter, Snapshot};
use crate::ui::app::Status;
use crate::ui::i18n::Lang;

/// Borrowed parts of a live session, for the length of one
/// [`crate::session::listeners::Listeners::serve`].
pub struct ClientSteps<'a> {
    pub recorder: &'a mut Option<RecordingWriter>,
    pub history: &'a mut Vec<Step>,
    pub elapsed_ms: &'a mut u64,
    pub before: &'a mut Option<Snapshot>,
    pub at_moment: &'a mut bool,
    /// The pace of live steps in a recording (`at_ms` apart).
    pub step_ms: u64,
    /// The status line's language.
    pub lang: Lang,
    /// The status of the last step applied, if any was.
    pub status: Option<Status>,
}

impl Steps for ClientSteps<'_> {
    fn before(&mut self, driver: &Driver, _: &Action) {
        *self.before = Some(driver.snapshot(&Bounds::FRAME));
    }

    fn applied(&mut self, driver: &Driver, action: &Action, outcome: &Outcome) {
        let mut status = Status::of_step(driver.step(), outcome, driver.last_said(), self.lang);
        status.text.push_str(if self.lang == Lang::Zh {
            "（Kafka 客户端）"
        } else {
            " (Kafka client)"
        });
        self.push(driver, action, None, status);
    }

    /// A `note` step of the server (a fault armed, a response dropped, a
    /// retry answered from the sequence check): recorded with its caption,
    /// which the status line says.
    fn noted(&mut self, driver: &Driver, caption: &Caption) {
        let status = Status {
            kind: crate::ui::app::StatusKind::Ok,
            text: self.lang.pick(
                format!("step {}: {}", driver.step(), caption.text("en")),
                format!("步骤 {}：{}", driver.step(), caption.text("zh")),
            ),
        };
        self.push(driver, &Action::Note {}, Some(caption.clone()), status);
    }
}

impl ClientSteps<'_> {
    /// Keeps one step in the history and the recording; `status` is the
    /// status line's, unless recording fails.
    fn push(&mut self, driver: &Driver, action: &Action, caption: Option<Caption>, status: Status) {
        let mut status = status;
        *self.at_moment = driver.last_moment().is_some();
        let step = Step {
            at_ms: *self.elapsed_ms,
            action: action.clone(),
            caption,
        };
        *self.elapsed_ms += self.step_ms;
        self.history.push(step);
        if let Some(w) = self.recorder.as_mut() {
            let step = self.history.last().expect("pushed above");
            if let Err(e) = w.append(step) {
                status = Status::error(format!("{}: cannot record: {e}", w.path().display()));
            }
        }
        self.status = Some(status);
    }
}
