//! Labs: `mk-tui lab NAME` starts a live session exactly where a chapter's
//! experiment starts, the lesson recording's cluster with none of its
//! steps applied, so the chapter's own keystrokes reproduce it (no demo
//! in the way, no extra replication). Each lab is its lesson's header
//! (data, `recordings/`) and a first caption naming the keys to press.

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
}

/// The labs, by name.
pub const LABS: &[Lab] = &[Lab {
    name: "ch08",
    file: "recordings/ch08-visibility.jsonl",
    recording: include_str!("../recordings/ch08-visibility.jsonl"),
    en: "Chapter 8 live: out has 1 partition, 1 replica. Keys: b Enter, s Ctrl-W pending Enter, c Enter; b Enter, s Ctrl-W discard-me Enter, a Enter. Watch Consumers: read_uncommitted, read_committed.",
    zh: "第 8 章现场实验：out 有 1 个分区、1 个副本。按键：b 回车，s Ctrl-W pending 回车，c 回车；b 回车，s Ctrl-W discard-me 回车，a 回车。看 消费者 面板：read_uncommitted、read_committed。",
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
