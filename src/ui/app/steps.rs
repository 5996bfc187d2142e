//! The keys and messages that make steps of the session (an engine key,
//! undo, branch, what Kafka clients sent): the session takes them, and the
//! status line says how they went, in the interface's language.

use super::{App, Status};
use crate::session::Action;
use crate::session::SessionError;
use crate::session::live::ArmError;
use crate::session::session::{Branch, Served};

impl App {
    /// `b`: branch here (a replay). A new live session starts from this
    /// exact step; keys now drive the engine.
    pub(super) fn branch(&mut self) -> Result<(), SessionError> {
        match self.session.branch()? {
            Branch::NotHere => {}
            Branch::Refused(why) => self.status = Some(Status::refused(&why, self.lang)),
            Branch::Branched { title, said } => {
                self.title = title.get(self.lang.zh()).to_string();
                // Live, the help on screen is the viewer's (modal), as
                // the branch's recording has it open.
                self.show_help |= std::mem::take(&mut self.recorded_help);
                self.touched();
                self.status = Some(Status::ok(&said, self.lang));
            }
        }
        Ok(())
    }

    /// `u`: the session undoes its last step (live only).
    pub(super) fn undo(&mut self) {
        let Some(undone) = self.session.undo() else {
            return;
        };
        self.status = Some(match undone {
            Ok(said) => {
                self.touched();
                Status::ok(&said, self.lang)
            }
            Err(why) => Status::refused(&why, self.lang),
        });
    }

    /// Applies an action as the session's next step (live), and reports
    /// the outcome.
    pub(super) fn apply(&mut self, action: Action) {
        if let Some(off) = self.session.engine_keys_off() {
            self.status = Some(Status::refused(&off, self.lang));
            return;
        }
        if let Action::Begin { txn, .. } = &action {
            self.last_txn = Some(txn.clone());
        }
        self.touched();
        self.status = Some(match self.session.apply(action, None) {
            Ok(a) => Status::of_step(a.step, &a.outcome, &a.said, self.lang),
            Err(why) => Status::refused(&why, self.lang),
        });
        self.follow();
    }

    /// Takes what the listeners (`--listen`) or the refresher (observing)
    /// brought; each is a step of the session.
    pub(super) fn serve(&mut self) {
        self.touched();
        match self.session.serve() {
            Served::Nothing => {}
            Served::Clients { changed, told } => {
                if let Some(told) = told {
                    self.status = Some(Status::of_told(&told, self.lang));
                }
                if changed {
                    self.follow();
                }
            }
            Served::Refreshes(r) => self.refreshed(r),
        }
    }

    /// `D` (`--listen`): the listeners drop the response of the next
    /// Produce; the arming is a `note` step of the session, recorded with
    /// its caption ([`crate::kafka::fault`]).
    pub(super) fn arm_drop_produce_response(&mut self) {
        self.touched();
        if let Some(off) = self.session.engine_keys_off() {
            self.status = Some(Status::refused(&off, self.lang));
            return;
        }
        self.status = match self.session.arm_drop_produce_response() {
            Ok(told) => told.map(|t| Status::of_told(&t, self.lang)),
            Err(ArmError::NoListeners) => {
                let text = self.lang.t("no_listeners").to_string();
                self.status = Some(Status::error(text));
                return;
            }
            Err(ArmError::Refused(e)) => Some(Status::error(e)),
        };
        self.follow();
    }
}
