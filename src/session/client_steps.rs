//! The live session's record of the actions its listeners apply
//! (`mk-tui --listen`): a client's request or a replication tick is a step
//! of the session exactly as a key's is: in its [`StepLog`] (history and
//! recording, paced by the same rule), with the snapshot before it (what
//! the step changed, marked ▸) and its moment of death if it crashed the
//! cluster. Only the status line says who did it ([`Told`]).

use crate::session::listeners::Steps;
use crate::session::recording::Caption;
use crate::session::said::Said;
use crate::session::snapshot::{Bounds, SnapshotSource};
use crate::session::step_log::StepLog;
use crate::session::{Action, Driver, Outcome, Snapshot};

/// What the last step a listener applied was, for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Told {
    /// A client's action, applied as step `step`.
    Applied {
        step: usize,
        outcome: Outcome,
        said: Said,
    },
    /// A `note` step of the server, with its caption.
    Noted { step: usize, caption: Caption },
    /// A step applied but not recorded: why.
    NotRecorded(String),
}

/// Borrowed parts of a live session, for the length of one
/// [`crate::session::listeners::Listeners::serve`].
pub struct ClientSteps<'a> {
    pub log: &'a mut StepLog,
    pub before: &'a mut Option<Snapshot>,
    pub at_moment: &'a mut bool,
    /// The last step applied, if any was.
    pub told: Option<Told>,
}

impl Steps for ClientSteps<'_> {
    fn before(&mut self, driver: &Driver, _: &Action) {
        *self.before = Some(driver.snapshot(&Bounds::FRAME));
    }

    fn applied(&mut self, driver: &Driver, action: &Action, outcome: &Outcome) {
        let told = Told::Applied {
            step: driver.step(),
            outcome: outcome.clone(),
            said: driver.last_said().clone(),
        };
        self.push(driver, action, None, told);
    }

    /// A `note` step of the server (a fault armed, a response dropped, a
    /// retry answered from the sequence check): recorded with its caption,
    /// which the status line says.
    fn noted(&mut self, driver: &Driver, caption: &Caption) {
        let told = Told::Noted {
            step: driver.step(),
            caption: caption.clone(),
        };
        self.push(driver, &Action::Note {}, Some(caption.clone()), told);
    }
}

impl ClientSteps<'_> {
    /// Keeps one step in the log; `told` is what the status line says,
    /// unless recording fails.
    fn push(&mut self, driver: &Driver, action: &Action, caption: Option<Caption>, told: Told) {
        *self.at_moment = driver.last_moment().is_some();
        let pushed = self.log.push(action.clone(), caption, driver.clock_ms());
        self.told = Some(match pushed {
            Ok(()) => told,
            Err(e) => Told::NotRecorded(e.to_string()),
        });
    }
}
