//! The session's own tests: apply, undo, branch and goto on a live
//! session and a replay, and the `at_ms` their steps get.

use super::*;
use crate::session::Outcome;
use crate::session::ui_step::PaneName;

/// Step 1 produces `a`, step 2 (captioned) `b`, step 3 focuses the
/// journal, step 4 crashes the cluster.
const RECORDING: &str = r#"{"mk_recording":1,"title":"t","cluster":{"brokers":[1],"topics":[{"name":"out","partitions":1,"replication_factor":1}]}}
{"at_ms":0,"action":{"produce":{"topic":"out","partition":0,"value":"a"}}}
{"at_ms":1500,"action":{"produce":{"topic":"out","partition":0,"value":"b"}},"caption":"b"}
{"at_ms":2500,"action":{"ui":{"focus":"journal"}}}
{"at_ms":4000,"action":{"crash":{}}}
"#;

fn recording() -> Recording {
    Recording::parse("t.jsonl", RECORDING).unwrap()
}

fn live() -> Session {
    let header = recording().header;
    let driver = Driver::new(&header, None).unwrap();
    Session::live(driver, header, None)
}

fn replay() -> Session {
    Session::replay(recording(), 2).unwrap()
}

fn produce(value: &str) -> Action {
    let json = serde_json::json!({"produce": {"topic": "out", "partition": 0, "value": value}});
    serde_json::from_value(json).unwrap()
}

/// How many records partition out-0 holds.
fn values(session: &Session) -> usize {
    session.snapshot().partitions[0].log_end_offset as usize
}

#[test]
fn live_steps_are_applied_kept_and_one_beat_apart() {
    let mut s = live();
    let first = s.apply(produce("a"), None).unwrap();
    assert_eq!((first.step, first.outcome.clone()), (1, Outcome::Ok));
    assert!(!first.said.en.is_empty(), "the driver says what it did");
    let caption = Caption::Text("second".into());
    s.apply(produce("b"), Some(caption.clone())).unwrap();
    assert_eq!(values(&s), 2);
    let at: Vec<u64> = s.history().iter().map(|s| s.at_ms).collect();
    assert_eq!(at, [0, 1000]);
    assert_eq!(
        s.snapshot().caption,
        Some(caption),
        "the last step's caption"
    );
    assert_eq!(s.step_now(), Some(2));
}

#[test]
fn engine_keys_are_off_outside_a_live_session() {
    let mut r = replay();
    let off = r.apply(produce("a"), None).unwrap_err();
    assert_eq!(off.en, "replay: engine keys are off");
    assert_eq!(r.driver().unwrap().step(), 0, "nothing applied");
    let mut saved = Session::saved(r.snapshot());
    assert_eq!(
        saved.apply(Action::Crash {}, None).unwrap_err().en,
        "saved state: engine keys are off"
    );
    assert!(saved.undo().is_none(), "a saved state has nothing to undo");
}

#[test]
fn undo_replays_all_but_the_last_step_into_a_fresh_driver() {
    let mut s = live();
    s.apply(produce("a"), None).unwrap();
    s.apply(produce("b"), None).unwrap();
    let undone = s.undo().unwrap().unwrap();
    assert_eq!(undone.en, "undid step 2 (produce)");
    assert_eq!(s.driver().unwrap().step(), 1);
    assert_eq!(values(&s), 1);
    assert_eq!(s.history().len(), 1);
    s.undo().unwrap().unwrap();
    assert_eq!(values(&s), 0);
    let nothing = s.undo().unwrap().unwrap_err();
    assert_eq!(nothing.en, "undo: nothing to undo");
    // The next step is paced after the undone ones: their beats passed.
    s.apply(produce("c"), None).unwrap();
    assert_eq!(s.history()[0].at_ms, 2000);
}

#[test]
fn undo_rewrites_the_recording_without_the_step() {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("live.jsonl");
    let header = recording().header;
    let writer = RecordingWriter::create(&path, &header).unwrap();
    let driver = Driver::new(&header, None).unwrap();
    let mut s = Session::live(driver, header, Some(writer));
    s.apply(produce("a"), None).unwrap();
    s.apply(Action::Crash {}, None).unwrap();
    s.undo().unwrap().unwrap();
    let written = Recording::load(&path).unwrap();
    assert_eq!(written.steps.len(), 1);
    assert_eq!(written.steps[0].action, produce("a"));
}

#[test]
fn a_recording_session_records_screen_changes_as_ui_steps() {
    let mut plain = live();
    assert!(plain.record_ui(UiStep::default()).is_none(), "not a step");
    assert_eq!(plain.driver().unwrap().step(), 0);
    let temp = tempfile::tempdir().unwrap();
    let header = recording().header;
    let writer = RecordingWriter::create(&temp.path().join("r.jsonl"), &header).unwrap();
    let driver = Driver::new(&header, None).unwrap();
    let mut s = Session::live(driver, header, Some(writer));
    let focus = UiStep {
        focus: Some(PaneName::Journal),
        ..UiStep::default()
    };
    s.record_ui(focus.clone()).unwrap().unwrap();
    assert_eq!(s.history()[0].action, Action::Ui(focus));
}

#[test]
fn a_replay_goes_to_a_step_and_says_the_recorded_screens() {
    let mut r = replay();
    let Went::Recording {
        left,
        reached,
        moved,
    } = r.goto(3)
    else {
        panic!("a replay moves through its recording")
    };
    moved.unwrap();
    assert_eq!(left.focus, None);
    assert_eq!(reached.focus, Some(PaneName::Journal));
    assert_eq!(r.step_now(), Some(3));
    assert_eq!(values(&r), 2);
    let Went::Recording { left, reached, .. } = r.goto(1) else {
        panic!("a replay")
    };
    assert_eq!((left.focus, reached.focus), (Some(PaneName::Journal), None));
    assert_eq!(values(&r), 1);
    assert!(matches!(live().goto(1), Went::Nowhere));
}

#[test]
fn replay_keys_go_by_steps_captions_and_crash_moments() {
    let mut r = replay();
    assert_eq!(r.travel(Move::NextCaption), Travel::To(2));
    assert_eq!(r.travel(Move::Last), Travel::To(4));
    assert_eq!(r.travel(Move::Next), Travel::To(1));
    r.goto(3);
    assert_eq!(r.travel(Move::PrevCaption), Travel::To(2));
    // Forward onto the crash: its moment of death first, then recovery.
    let Travel::To(4) = r.travel(Move::Next) else {
        panic!("to the crash")
    };
    r.goto(4);
    assert!(r.land_on_moment(3));
    assert!(r.timeline().unwrap().at_moment());
    assert_eq!(r.travel(Move::Next), Travel::Stay, "to its recovery");
    assert!(!r.timeline().unwrap().at_moment());
    assert_eq!(r.travel(Move::Prev), Travel::Stay, "back to its moment");
    assert!(r.timeline().unwrap().at_moment());
    assert_eq!(r.travel(Move::Prev), Travel::To(3));
    assert_eq!(live().travel(Move::Next), Travel::Stay);
}

#[test]
fn playing_goes_at_the_recorded_pace_and_starts_over_from_the_end() {
    let mut r = replay();
    assert_eq!(r.next_step_delay_ms(1.0), None, "paused");
    assert_eq!(r.play_pause(), None);
    assert!(r.is_playing());
    r.goto(1);
    assert_eq!(r.next_step_delay_ms(1.0), Some(1500));
    assert_eq!(r.next_step_delay_ms(2.0), Some(750));
    r.goto(4);
    r.stop_at_end();
    assert!(!r.is_playing(), "the end stops playing");
    assert_eq!(r.play_pause(), Some(0), "played from the end: from 0");
}

#[test]
fn a_branch_is_a_live_session_from_the_replays_step() {
    let mut r = replay();
    r.goto(2);
    let Branch::Branched { title, said } = r.branch().unwrap() else {
        panic!("a replay branches")
    };
    assert_eq!(title.en, "t (branched at step 2)");
    assert!(said.en.starts_with("branched at step 2"), "{said:?}");
    assert!(r.is_live());
    assert_eq!(r.history().len(), 2, "the replay's steps up to here");
    assert_eq!(values(&r), 2);
    let step = r.apply(Action::Crash {}, None).unwrap();
    assert_eq!(step.step, 3);
    assert_eq!(r.history()[2].at_ms, 2500, "one beat after step 2's 1500");
    assert!(matches!(r.branch().unwrap(), Branch::NotHere));
    let undone = r.undo().unwrap().unwrap();
    assert_eq!(undone.en, "undid step 3 (crash)");
}

/// A branch keeps a caption: the recording's at a captioned step; at an
/// uncaptioned one, a caption saying where it branched and what to try,
/// until a step of its own (and again after undoing back to the branch).
#[test]
fn a_branch_never_starts_with_a_blank_caption() {
    let caption = |s: &Session| s.snapshot().caption.map(|c| c.text("en").to_string());
    let mut r = replay();
    r.goto(2);
    r.branch().unwrap();
    assert_eq!(caption(&r).as_deref(), Some("b"), "the step's own caption");
    let mut r = replay();
    r.goto(1);
    r.branch().unwrap();
    let intro = caption(&r).expect("a caption at an uncaptioned branch");
    assert!(
        intro.starts_with("Branched at step 1 of \u{201c}t\u{201d}"),
        "{intro}"
    );
    assert!(
        r.snapshot().caption.unwrap().text("zh").contains("步骤 1"),
        "Chinese too"
    );
    r.apply(produce("c"), None).unwrap();
    assert_eq!(caption(&r), None, "a key's step has no caption");
    r.undo().unwrap().unwrap();
    assert_eq!(caption(&r), Some(intro), "back at the branch");
}
