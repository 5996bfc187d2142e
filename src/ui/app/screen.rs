//! The dashboard's screen as `ui` steps describe it (SPEC §4): what a live
//! session with `--record` writes when focus, selection, isolation or help
//! change, and what a replay sets from the recorded ones.

use super::{App, Status};
use crate::session::ui_step::{PaneName, Toggle, UiScreen, UiStep};
use crate::ui::panes::PaneId;

impl App {
    /// The screen as `ui` steps describe it.
    pub(super) fn screen(&self) -> UiScreen {
        UiScreen {
            focus: self.focused().map(pane_name),
            selected: self.selected.clone(),
            isolation: self.isolation,
            help: self.show_help,
        }
    }

    /// Live, recording: the screen's change since `before` becomes `ui`
    /// steps of the session. The status keeps the last engine outcome
    /// unless recording fails.
    pub(super) fn record_screen_change(&mut self, before: UiScreen) {
        for step in ui_steps(before, self.screen()) {
            let Some(recorded) = self.session.record_ui(step) else {
                continue;
            };
            self.touched();
            if let Err(why) = recorded {
                self.status = Some(Status::refused(&why, self.lang));
            }
        }
    }

    /// A replay moved from a step whose recorded screen is `left` to one
    /// whose recorded screen is `reached`: each field they differ in is
    /// set to the recorded one; the others keep the viewer's choice.
    pub(super) fn show_recorded(&mut self, left: &UiScreen, reached: &UiScreen) {
        if left.focus != reached.focus {
            let panes = self.layout.panes();
            match reached.focus {
                None => self.focus = 0,
                Some(name) => {
                    if let Some(i) = panes.iter().position(|p| pane_name(*p) == name) {
                        self.focus = i;
                    }
                }
            }
        }
        if left.selected != reached.selected {
            self.selected = reached.selected.clone();
        }
        if left.isolation != reached.isolation {
            self.isolation = reached.isolation;
        }
        // The recorded help at every step however it is reached (a new
        // user's trial: stepping past a lone recorded `?` showed it or
        // not by the path taken); it is drawn but not modal, so `g`, the
        // arrows and `p` still reach the replayer.
        if self.recorded_help != reached.help {
            self.help_scroll = 0;
        }
        self.recorded_help = reached.help;
    }
}

/// A dashboard pane's name in recordings (the two enums list the same
/// names; a test checks it).
pub fn pane_name(pane: PaneId) -> PaneName {
    PaneName::from_name(pane.name()).expect("every pane has a recording name")
}

/// The `ui` steps that take the screen from `before` to `after`: focus and
/// selection set to their new values, each flipped switch toggled.
fn ui_steps(before: UiScreen, after: UiScreen) -> Vec<UiStep> {
    let mut steps = Vec::new();
    let mut first = UiStep {
        focus: after.focus.filter(|_| before.focus != after.focus),
        select: (before.selected != after.selected).then(|| after.selected.clone()),
        toggle: None,
    };
    let mut toggles = Vec::new();
    if before.isolation != after.isolation {
        toggles.push(Toggle::Isolation);
    }
    if before.help != after.help {
        toggles.push(Toggle::Help);
    }
    let mut toggles = toggles.into_iter();
    first.toggle = toggles.next();
    if first != UiStep::default() {
        steps.push(first);
    }
    steps.extend(toggles.map(|t| UiStep {
        toggle: Some(t),
        ..UiStep::default()
    }));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::snapshot::Isolation;
    use crate::session::ui_step::Selection;

    #[test]
    fn pane_names_are_the_same_in_the_session_and_the_dashboard() {
        let dashboard: Vec<&str> = PaneId::ALL.iter().map(|p| p.name()).collect();
        let session: Vec<&str> = PaneName::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(dashboard, session);
        for p in PaneId::ALL {
            assert_eq!(pane_name(p).name(), p.name());
        }
    }

    #[test]
    fn screen_changes_become_the_ui_steps_that_replay_them() {
        let base = UiScreen {
            focus: Some(PaneName::Partitions),
            ..UiScreen::default()
        };
        let changed = [
            UiScreen {
                focus: Some(PaneName::Journal),
                ..base.clone()
            },
            UiScreen {
                selected: Selection::Batch(crate::session::ui_step::BatchRef {
                    partition: "out-0".into(),
                    offset: 4,
                }),
                ..base.clone()
            },
            UiScreen {
                isolation: Isolation::ReadUncommitted,
                ..base.clone()
            },
            UiScreen {
                help: true,
                ..base.clone()
            },
            UiScreen {
                isolation: Isolation::ReadUncommitted,
                help: true,
                selected: Selection::Clear,
                focus: Some(PaneName::Events),
            },
        ];
        for after in changed {
            let steps = ui_steps(base.clone(), after.clone());
            assert!(!steps.is_empty(), "{after:?}");
            let replayed = steps.iter().fold(base.clone(), |s, step| s.apply(step));
            assert_eq!(replayed, after);
        }
        assert!(
            ui_steps(base.clone(), base.clone()).is_empty(),
            "no change, no step"
        );
        let from_selected = UiScreen {
            selected: Selection::Row(2),
            ..base.clone()
        };
        assert_eq!(
            ui_steps(from_selected, base),
            [UiStep {
                select: Some(Selection::Clear),
                ..UiStep::default()
            }]
        );
    }
}
