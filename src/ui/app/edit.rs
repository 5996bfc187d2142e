//! Editing the open prompt: a key edits its text, Enter applies it only if
//! it parses and passes its checks; otherwise the prompt stays open with
//! the reason and nothing is applied or recorded.

use super::{App, Status};
use crate::ui::keys::{PromptEdit, PromptKind};
use crate::ui::prompt;

impl App {
    pub(super) fn edit(&mut self, edit: PromptEdit) {
        let Some(prompt) = &self.prompt else {
            return;
        };
        if edit == PromptEdit::Submit && prompt.kind == PromptKind::GotoStep {
            let last = self.session.last_step();
            let reason = match prompt::parse_step(&prompt.text, last, self.lang) {
                Ok(n) => {
                    self.prompt = None;
                    if let Err(e) = self.goto(n) {
                        self.status = Some(Status::error(e));
                    }
                    return;
                }
                Err(reason) => reason,
            };
            if let Some(p) = &mut self.prompt {
                p.refusal = Some(reason);
                p.selected = !p.text.is_empty();
                p.cursor = p.text.len();
            }
            return;
        }
        if edit == PromptEdit::Submit {
            match prompt::parse(prompt.kind, &prompt.text, &self.facts()) {
                Ok(action) => {
                    self.prompt = None;
                    self.apply(action);
                }
                Err(reason) => {
                    let reason = reason.get(self.lang.zh()).to_string();
                    if let Some(p) = &mut self.prompt {
                        p.refusal = Some(reason);
                    }
                }
            }
            return;
        }
        let Some(prompt) = &mut self.prompt else {
            return;
        };
        if edit == PromptEdit::Cancel {
            self.prompt = None;
        } else if prompt.edit(edit) {
            prompt.refusal = None;
        }
    }
}
