//! Chinese, whole (issue 13 item 10): under `--lang zh` the events, the
//! status line, the prompts' refusals and the batch explanations are
//! Chinese too, not only the labels. Checked two ways over every
//! recording in `recordings/`, at every step:
//! - the Snapshot carries a Chinese sentence for every event, every
//!   "what changed" sentence and every batch explanation;
//! - every frame's every word: `tests/zh_words.rs`.

mod common;

use common::zh::{data_words, words};

use std::collections::BTreeSet;
use std::path::Path;

use minikafka::session::snapshot::diff::diff;
use minikafka::session::{Driver, Recording, Snapshot};
use minikafka::ui::app::{App, Msg};
use minikafka::ui::glossary::KEPT_IN_CHINESE;
use minikafka::ui::headless::{buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;

fn has_cjk(s: &str) -> bool {
    s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// Kafka's terms and what a Chinese frame keeps as it is: one list
/// (docs/dashboard.md "Chinese").
const TERMS: &[&str] = KEPT_IN_CHINESE;

/// The names, values and error details a snapshot shows, which stay as
/// they are in any language.
fn names(s: &Snapshot) -> BTreeSet<String> {
    let mut out = data_words(s);
    // Engine detail stays English after its Chinese label: an error's
    // message (after its gloss) and recovery's reasons (after 截断…).
    for e in &s.errors {
        out.extend(words(&e.message));
    }
    if let Some(r) = &s.last_recovery {
        out.extend(words(r.journal_reason.as_deref().unwrap_or("")));
        for l in &r.logs_truncated {
            out.extend(words(&l.reason));
        }
    }
    out
}

#[test]
fn every_sentence_of_every_step_has_its_chinese() {
    let mut checked = (0, 0, 0);
    for path in common::recordings() {
        let recording = Recording::load(&path).unwrap();
        let mut driver = Driver::new(&recording.header, None).unwrap();
        let mut before = Snapshot::of(&driver);
        for (i, step) in recording.steps.iter().enumerate() {
            driver.apply(&step.action);
            let after = Snapshot::of(&driver);
            let at = format!("{} step {}", path.display(), i + 1);
            for e in after.events.iter().filter(|e| e.step == i + 1) {
                assert!(
                    has_cjk(&e.zh),
                    "{at}: event {:?} has no Chinese: {:?}",
                    e.text,
                    e.zh
                );
                checked.0 += 1;
            }
            let changes = diff(&before, &after);
            assert_eq!(
                changes.sentences.len(),
                changes.sentences_zh.len(),
                "{at}: one Chinese sentence per English one"
            );
            for (en, zh) in changes.sentences.iter().zip(&changes.sentences_zh) {
                // A sentence of names, numbers and terms only ("out-0 HW 1
                // → 2", "tx-a ONGOING → COMPLETE_ABORT") needs no Chinese
                // word; any other has one.
                let english: BTreeSet<String> = words(zh)
                    .into_iter()
                    .filter(|w| !TERMS.contains(&w.as_str()))
                    .filter(|w| !names(&after).contains(w) && !names(&before).contains(w))
                    .collect();
                assert!(
                    has_cjk(zh) || english.is_empty(),
                    "{at}: {en:?} has no Chinese ({zh:?}; words {english:?})"
                );
                checked.1 += 1;
            }
            for p in &after.partitions {
                for b in &p.batches {
                    assert!(
                        has_cjk(&b.explanation_zh),
                        "{at}: {}@{} explanation {:?} has no Chinese",
                        p.name(),
                        b.base_offset,
                        b.explanation
                    );
                    checked.2 += 1;
                }
            }
            before = after;
        }
    }
    assert!(
        checked.0 > 100 && checked.1 > 100 && checked.2 > 100,
        "checked {checked:?}"
    );
}

#[test]
fn a_cut_point_recovery_in_chinese() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/ch08-cut-points.jsonl");
    let recording = Recording::load(&path).unwrap();
    let crash = recording
        .steps
        .iter()
        .position(|s| {
            serde_json::to_string(&s.action)
                .unwrap()
                .contains("crash_after")
        })
        .expect("a cut point step")
        + 1;
    let layout = layout::builtin("crash").unwrap();
    let mut app = App::replay(recording, layout, Lang::Zh, Theme::colored()).unwrap();
    app.update(Msg::Goto(crash)).unwrap();
    insta::assert_snapshot!(
        "cut_point_recovered_160x48_zh",
        buffer_text(&frame_buffer(&app, 160, 48))
    );
}

/// A live session in Chinese: the status line says each step's outcome in
/// Chinese, an error with its gloss first, and the title is the demo's
/// Chinese title.
#[test]
fn the_live_status_line_in_chinese() {
    use minikafka::session::Action;
    let demo = minikafka::demo::recording();
    let mut driver = Driver::new(&demo.header, None).unwrap();
    for s in &demo.steps {
        driver.apply(&s.action);
    }
    let layout = layout::builtin("default").unwrap();
    let mut app = App::live(
        driver,
        demo.header.clone(),
        None,
        layout,
        Lang::Zh,
        Theme::colored(),
    );
    let produce: Action =
        serde_json::from_str(r#"{"produce":{"topic":"out","value":"v","acks":"1"}}"#).unwrap();
    app.update(Msg::Apply(produce)).unwrap();
    let status = app.status.clone().expect("a status");
    assert!(status.text.ends_with("：生产：完成"), "{}", status.text);
    let unknown: Action = serde_json::from_str(r#"{"commit":{"txn":"no-such-txn"}}"#).unwrap();
    app.update(Msg::Apply(unknown)).unwrap();
    let status = app.status.clone().expect("a status");
    assert!(
        status
            .text
            .contains("提交：错误 UnknownTransaction：没有事务 \"no-such-txn\""),
        "{}",
        status.text
    );
    let text = buffer_text(&frame_buffer(&app, 160, 48));
    assert!(text.contains("mk-tui 演示集群"), "{text}");
    assert!(text.contains("实时"), "{text}");
}

/// The moment of death (`N✝`) in Chinese: the banner, the torn or cut
/// state before recovery, in the crash layout at 160x48.
#[test]
fn the_moment_of_death_in_chinese() {
    use minikafka::ui::keys::KeyCommand;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/ch08-torn-journal.jsonl");
    let recording = Recording::load(&path).unwrap();
    let tear = recording
        .steps
        .iter()
        .position(|s| {
            serde_json::to_string(&s.action)
                .unwrap()
                .contains("\"tear\"")
        })
        .expect("a tear step")
        + 1;
    let layout = layout::builtin("crash").unwrap();
    let mut app = App::replay(recording, layout, Lang::Zh, Theme::colored()).unwrap();
    app.update(Msg::Goto(tear - 1)).unwrap();
    app.update(Msg::Command(KeyCommand::NextStep)).unwrap();
    let text = buffer_text(&frame_buffer(&app, 160, 48));
    assert!(text.contains("崩溃瞬间：恢复之前"), "{text}");
    assert!(text.contains(&format!("步骤 {tear}✝")), "{text}");
    insta::assert_snapshot!("torn_journal_moment_160x48_zh", text);
}

/// A window too small for the layout says so in Chinese, whole: the only
/// English left is the layout's name and the key `q`.
#[test]
fn the_too_small_message_in_chinese() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/demo.jsonl");
    let recording = Recording::load(&path).unwrap();
    for (lang, want) in [(Lang::Zh, "终端太小"), (Lang::En, "Terminal too small")] {
        let layout = layout::builtin("default").unwrap();
        let app = App::replay(recording.clone(), layout, lang, Theme::colored()).unwrap();
        let text = buffer_text(&frame_buffer(&app, 50, 15));
        assert!(text.contains(want), "{lang:?}:\n{text}");
        assert!(text.contains("50x15") && text.contains("80x24"), "{text}");
        if lang == Lang::Zh {
            let stray: BTreeSet<String> = words(&text)
                .into_iter()
                .filter(|w| w != "default")
                .collect();
            assert!(
                stray.is_empty(),
                "English in the Chinese message: {stray:?}\n{text}"
            );
        }
    }
}
