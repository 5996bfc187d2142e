//! A lab's key guide (docs/lectures.md "Chapter 8 live, with keys"): the
//! chapter's keystrokes as stages, and the caption that says, after every
//! step, how many are done and which keys remain. A lecturer's trial found
//! the keys gone after the first `b Enter` (the lab's caption was shown
//! only until the first step), so students had to remember the rest.
//!
//! Progress is read from the session's actions, not counted: a stage is
//! done when an action of its name follows the previous stage's, so a
//! `J` (a `ui` step when recording), an `i` or a stray `r` in between
//! neither advances nor loses the guide, and `u` takes its stage back.

use crate::session::Action;
use crate::session::recording::Caption;

/// One stage: the action it expects and the keys that make it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    /// The action's name (`Action::name`): `begin`, `send`, …
    pub action: &'static str,
    pub keys_en: &'static str,
    pub keys_zh: &'static str,
}

/// A lab's guide: its first caption, then one made from the stages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guide {
    /// The caption before any step (names every key).
    pub intro: Caption,
    /// What each progress caption starts with: `Chapter 8 live`.
    pub name: (&'static str, &'static str),
    pub stages: &'static [Stage],
    /// What to watch, said after the keys that remain.
    pub watch: (&'static str, &'static str),
    /// Said once every stage is done.
    pub done: (&'static str, &'static str),
}

impl Guide {
    /// How many stages `actions` (the session's since the lab started)
    /// have done, in order.
    pub fn done_count<'a>(&self, actions: impl IntoIterator<Item = &'a Action>) -> usize {
        let mut done = 0;
        for a in actions {
            if self.stages.get(done).is_some_and(|s| s.action == a.name()) {
                done += 1;
            }
        }
        done
    }

    /// The caption after `actions`: the intro before any stage; then the
    /// stages done, the next keys and the rest, both languages.
    pub fn caption<'a>(&self, actions: impl IntoIterator<Item = &'a Action>) -> Caption {
        let done = self.done_count(actions);
        let total = self.stages.len();
        if done == 0 {
            return self.intro.clone();
        }
        if done == total {
            return Caption::Bilingual {
                en: format!("{}, {done} of {total} done: {}", self.name.0, self.done.0),
                zh: format!("{}：已完成 {done}/{total}。{}", self.name.1, self.done.1),
            };
        }
        let rest = &self.stages[done..];
        let then = |keys: Vec<&str>, sep: &str| keys.join(sep);
        let en_then = then(rest[1..].iter().map(|s| s.keys_en).collect(), ", ");
        let zh_then = then(rest[1..].iter().map(|s| s.keys_zh).collect(), "，");
        let en = match en_then.is_empty() {
            true => format!(
                "{}, {done} of {total} done. Next: {}. {}",
                self.name.0, rest[0].keys_en, self.watch.0
            ),
            false => format!(
                "{}, {done} of {total} done. Next: {}; then {en_then}. {}",
                self.name.0, rest[0].keys_en, self.watch.0
            ),
        };
        let zh = match zh_then.is_empty() {
            true => format!(
                "{}：已完成 {done}/{total}。下一步：{}。{}",
                self.name.1, rest[0].keys_zh, self.watch.1
            ),
            false => format!(
                "{}：已完成 {done}/{total}。下一步：{}；之后：{zh_then}。{}",
                self.name.1, rest[0].keys_zh, self.watch.1
            ),
        };
        Caption::Bilingual { en, zh }
    }
}
