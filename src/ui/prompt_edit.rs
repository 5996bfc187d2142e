//! Editing the prompt's line (SPEC §6 prompts): the cursor moves with ←/→ and
//! Home/End, typing and deleting happen at the cursor, Ctrl-U deletes from
//! the start of the line to the cursor and Ctrl-W the word before it (with
//! the spaces between), as in a shell. The cursor is a byte
//! offset kept on a character boundary, so a multi-byte character (`é`, `消`)
//! is one step and is never cut.

use crate::ui::keys::PromptEdit;
use crate::ui::prompt::Prompt;

impl Prompt {
    /// Applies an editing key (not Enter or Esc, which the app handles).
    /// Returns whether the text changed, which clears a refusal.
    pub fn edit(&mut self, edit: PromptEdit) -> bool {
        let before = self.text.len();
        self.cursor = self.cursor.min(self.text.len());
        if std::mem::take(&mut self.selected) {
            match edit {
                // Typing replaces the selection.
                PromptEdit::Char(_) => {
                    self.text.clear();
                    self.cursor = 0;
                }
                PromptEdit::Backspace
                | PromptEdit::Delete
                | PromptEdit::ClearToStart
                | PromptEdit::DeleteWord => {
                    self.text.clear();
                    self.cursor = 0;
                    return before > 0;
                }
                // A cursor key moves in the text, no longer selected.
                _ => {}
            }
        }
        match edit {
            PromptEdit::Char(c) => {
                self.text.insert(self.cursor, c);
                self.cursor += c.len_utf8();
                return true;
            }
            PromptEdit::Backspace => {
                if let Some(c) = self.text[..self.cursor].chars().next_back() {
                    self.cursor -= c.len_utf8();
                    self.text.remove(self.cursor);
                }
            }
            PromptEdit::Delete => {
                if self.cursor < self.text.len() {
                    self.text.remove(self.cursor);
                }
            }
            PromptEdit::Left => {
                if let Some(c) = self.text[..self.cursor].chars().next_back() {
                    self.cursor -= c.len_utf8();
                }
            }
            PromptEdit::Right => {
                if let Some(c) = self.text[self.cursor..].chars().next() {
                    self.cursor += c.len_utf8();
                }
            }
            PromptEdit::Home => self.cursor = 0,
            PromptEdit::End => self.cursor = self.text.len(),
            PromptEdit::ClearToStart => {
                self.text.drain(..self.cursor);
                self.cursor = 0;
            }
            PromptEdit::DeleteWord => {
                let before = &self.text[..self.cursor];
                let word_end = before.trim_end().len();
                let start = before[..word_end]
                    .rfind(char::is_whitespace)
                    .map_or(0, |i| {
                        i + before[i..].chars().next().map_or(1, char::len_utf8)
                    });
                self.text.drain(start..self.cursor);
                self.cursor = start;
            }
            PromptEdit::Submit | PromptEdit::Cancel => {}
        }
        self.text.len() != before
    }

    /// The text split at the cursor: before it, the character under it (if
    /// the cursor is not at the end), and after it.
    pub fn at_cursor(&self) -> (&str, Option<char>, &str) {
        let at = self.cursor.min(self.text.len());
        let (before, rest) = self.text.split_at(at);
        let mut chars = rest.chars();
        let under = chars.next();
        (before, under, chars.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::keys::PromptKind;

    fn prompt(text: &str) -> Prompt {
        Prompt::new(PromptKind::Produce, text.into())
    }

    fn run(p: &mut Prompt, edits: &[PromptEdit]) {
        for e in edits {
            p.edit(*e);
        }
    }

    use PromptEdit::*;

    #[test]
    fn the_cursor_starts_at_the_end_and_typing_inserts_there() {
        let mut p = prompt("out v");
        assert_eq!(p.cursor, 5);
        run(&mut p, &[Left, Left, Char('X')]);
        assert_eq!((p.text.as_str(), p.cursor), ("outX v", 4));
        run(&mut p, &[Home, Char('>')]);
        assert_eq!((p.text.as_str(), p.cursor), (">outX v", 1));
        run(&mut p, &[End, Char('!')]);
        assert_eq!(p.text, ">outX v!");
        assert_eq!(p.cursor, p.text.len());
    }

    #[test]
    fn backspace_and_delete_work_around_the_cursor() {
        let mut p = prompt("abcd");
        run(&mut p, &[Left, Left, Backspace]);
        assert_eq!((p.text.as_str(), p.cursor), ("acd", 1));
        run(&mut p, &[Delete]);
        assert_eq!((p.text.as_str(), p.cursor), ("ad", 1));
        run(&mut p, &[Home, Backspace, End, Delete]);
        assert_eq!((p.text.as_str(), p.cursor), ("ad", 2), "nothing to delete");
        assert!(!p.edit(Left), "moving changes no text");
        assert!(p.edit(Char('z')));
    }

    #[test]
    fn ctrl_w_deletes_the_word_before_the_cursor() {
        let mut p = prompt("out hello  world");
        run(&mut p, &[DeleteWord]);
        assert_eq!((p.text.as_str(), p.cursor), ("out hello  ", 11));
        run(&mut p, &[DeleteWord]);
        assert_eq!(
            (p.text.as_str(), p.cursor),
            ("out ", 4),
            "spaces, then the word"
        );
        // In the middle of the line, only what is before the cursor goes.
        let mut p = prompt("tx-1 消息 v");
        run(&mut p, &[Left, Left, DeleteWord]);
        assert_eq!((p.text.as_str(), p.cursor), ("tx-1  v", 5));
        run(&mut p, &[DeleteWord, DeleteWord]);
        assert_eq!((p.text.as_str(), p.cursor), (" v", 0));
        assert!(!p.edit(DeleteWord), "nothing before the cursor");
    }

    #[test]
    fn ctrl_u_clears_to_the_start() {
        let mut p = prompt("tx-1 out value");
        run(&mut p, &[Left, Left, Left, Left, Left, ClearToStart]);
        assert_eq!((p.text.as_str(), p.cursor), ("value", 0));
        run(&mut p, &[End, ClearToStart]);
        assert_eq!((p.text.as_str(), p.cursor), ("", 0));
    }

    #[test]
    fn a_selected_text_is_replaced_by_typing_and_cleared_by_deleting() {
        let mut p = Prompt::selecting(PromptKind::GotoStep, "12".into());
        assert!(p.selected);
        run(&mut p, &[Char('3')]);
        assert_eq!((p.text.as_str(), p.cursor, p.selected), ("3", 1, false));
        run(&mut p, &[Char('4')]);
        assert_eq!(p.text, "34", "once replaced, typing inserts");
        let mut p = Prompt::selecting(PromptKind::GotoStep, "12".into());
        assert!(p.edit(Backspace));
        assert_eq!((p.text.as_str(), p.cursor), ("", 0));
        let mut p = Prompt::selecting(PromptKind::GotoStep, "12".into());
        run(&mut p, &[Left, Char('0')]);
        assert_eq!(p.text, "102", "a cursor key ends the selection and moves");
        assert!(!Prompt::selecting(PromptKind::GotoStep, String::new()).selected);
    }

    #[test]
    fn multibyte_characters_are_one_step_and_never_cut() {
        let mut p = prompt("消息é");
        run(&mut p, &[Left]);
        assert_eq!(p.at_cursor(), ("消息", Some('é'), ""));
        run(&mut p, &[Left, Backspace]);
        assert_eq!(p.text, "息é");
        run(&mut p, &[Right, Right, Right, Char('!')]);
        assert_eq!(p.text, "息é!", "→ stops at the end");
        run(&mut p, &[Home, Left, Char('<')]);
        assert_eq!(p.text, "<息é!", "← stops at the start");
        assert_eq!(p.at_cursor(), ("<", Some('息'), "é!"));
        p.cursor = 999;
        assert_eq!(
            p.at_cursor(),
            ("<息é!", None, ""),
            "a stale cursor is clamped"
        );
    }
}
