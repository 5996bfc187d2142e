//! Labs: `mk-tui lab NAME` starts a live session exactly where a chapter's
//! experiment starts, the lesson recording's cluster with none of its
//! steps applied, so the chapter's own keystrokes reproduce it (no demo
//! in the way, no extra replication). Each lab is its lesson's header
//! (data, `recordings/`) and a key guide: a first caption naming the keys
//! to press, then after every step the keys that remain
//! ([`Guide`](crate::session::guide::Guide)).

use crate::session::guide::{Guide, Stage};
use crate::session::recording::Caption;
use crate::session::{Recording, RecordingError};

/// One lab.
pub struct Lab {
    /// What `mk-tui lab` takes.
    pub name: &'static str,
    /// The lesson it starts like (its cluster, rules and layout).
    pub file: &'static str,
    recording: &'static str,
    en: &'static str,
    zh: &'static str,
    /// The chapter's keystrokes, a stage per step.
    stages: &'static [Stage],
    /// The guide's words (en, zh): its name, what to watch while keys
    /// remain, what is on screen once none does.
    named: (&'static str, &'static str),
    watch: (&'static str, &'static str),
    done: (&'static str, &'static str),
}

/// Chapter 8's keys, as docs/lectures.md lists them beside its code.
const CH08_STAGES: &[Stage] = &[
    Stage {
        action: "begin",
        keys_en: "b Enter",
        keys_zh: "b 回车",
    },
    Stage {
        action: "send",
        keys_en: "s Ctrl-W pending Enter",
        keys_zh: "s Ctrl-W pending 回车",
    },
    Stage {
        action: "commit",
        keys_en: "c Enter",
        keys_zh: "c 回车",
    },
    Stage {
        action: "begin",
        keys_en: "b Enter",
        keys_zh: "b 回车",
    },
    Stage {
        action: "send",
        keys_en: "s Ctrl-W discard-me Enter",
        keys_zh: "s Ctrl-W discard-me 回车",
    },
    Stage {
        action: "abort",
        keys_en: "a Enter",
        keys_zh: "a 回车",
    },
];

/// The labs, by name.
pub const LABS: &[Lab] = &[Lab {
    name: "ch08",
    file: "recordings/ch08-visibility.jsonl",
    recording: include_str!("../recordings/ch08-visibility.jsonl"),
    en: "Chapter 8 live: out has 1 partition, 1 replica. Keys: b Enter, s Ctrl-W pending Enter, c Enter; b Enter, s Ctrl-W discard-me Enter, a Enter. Watch Consumers: read_uncommitted, read_committed.",
    zh: "第 8 章现场实验：out 有 1 个分区、1 个副本。按键：b 回车，s Ctrl-W pending 回车，c 回车；b 回车，s Ctrl-W discard-me 回车，a 回车。看 消费者 面板：read_uncommitted、read_committed。",
    stages: CH08_STAGES,
    named: ("Chapter 8 live", "第 8 章现场实验"),
    watch: (
        "Watch Consumers: read_uncommitted, read_committed.",
        "看 消费者 面板：read_uncommitted、read_committed。",
    ),
    done: (
        "Consumers shows the chapter's four lines. u undoes a step, to try another ending.",
        "消费者 面板显示本章的四行结果。u 撤销一步，可以试另一种结局。",
    ),
}];

impl Lab {
    /// The lab called `name`.
    pub fn named(name: &str) -> Option<&'static Lab> {
        LABS.iter().find(|l| l.name == name)
    }

    /// The names, for a refusal: `ch08`.
    pub fn names() -> String {
        LABS.iter().map(|l| l.name).collect::<Vec<_>>().join(", ")
    }

    /// The lesson, parsed; a lab uses its header only.
    pub fn recording(&self) -> Result<Recording, RecordingError> {
        Recording::parse(self.file, self.recording)
    }

    /// The caption the lab opens with.
    pub fn intro(&self) -> Caption {
        Caption::Bilingual {
            en: self.en.to_string(),
            zh: self.zh.to_string(),
        }
    }

    /// The key guide: the intro, then the keys that remain after each
    /// step (shown while the experiment runs, and recorded with it).
    pub fn guide(&self) -> Guide {
        Guide {
            intro: self.intro(),
            name: self.named,
            stages: self.stages,
            watch: self.watch,
            done: self.done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lab_parses_and_starts_from_its_lessons_cluster() {
        for lab in LABS {
            let r = lab.recording().expect(lab.name);
            assert!(!r.steps.is_empty(), "{}", lab.name);
            assert_eq!(
                std::fs::read_to_string(lab.file).unwrap(),
                lab.recording,
                "{} is embedded as it is on disk",
                lab.file
            );
        }
        assert!(Lab::named("ch08").is_some());
        assert!(Lab::named("ch99").is_none());
    }
}
