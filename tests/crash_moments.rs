//! Crashes as moments (issue 13, item 3; docs/dashboard.md "Crashes as
//! moments"): a step that crashes the cluster keeps its moment of death,
//! what was on disk at the instant of the crash before recovery ran; the
//! state JSON of the step stays the state after recovery (SPEC §5) with the
//! moment as an extra key; a replay steps through both sub-steps.

mod common;

use std::path::Path;

use minikafka::cli::state_of_recording;
use minikafka::session::snapshot::{BatchKind, Snapshot, TxnState};
use minikafka::session::{Driver, Recording};
use minikafka::ui::app::{App, Msg};
use minikafka::ui::headless::{buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::keys::KeyCommand;
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;
use ratatui::style::Modifier;

fn path(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("recordings")
        .join(name)
}

fn load(name: &str) -> Recording {
    Recording::load(&path(name)).unwrap()
}

/// The driver after the first `steps` steps of `recording`.
fn driver_at(recording: &Recording, steps: usize) -> Driver {
    let mut driver = Driver::new(&recording.header, None).unwrap();
    for s in &recording.steps[..steps] {
        driver.apply(&s.action);
    }
    driver
}

/// The step of the recording file `name` whose line first holds `needle`
/// (line 2 is step 1, SPEC §5).
fn step_of(name: &str, needle: &str) -> usize {
    std::fs::read_to_string(path(name))
        .unwrap()
        .lines()
        .position(|l| l.contains(needle))
        .expect("the recording has the step")
}

#[test]
fn a_commit_cut_after_prepare_dies_with_prepare_commit_last_and_nothing_published() {
    let recording = load("ch08-cut-points.jsonl");
    let n = step_of("ch08-cut-points.jsonl", "\"crash_after\":\"prepare\"");
    let driver = driver_at(&recording, n);
    let after = Snapshot::of(&driver);
    let moment = after.moment_of_death.as_deref().expect("the step crashed");
    // The journal at the instant: PREPARE_COMMIT is the last frame, and no
    // COMPLETE_COMMIT of tx-p exists yet.
    let last = moment.journal.tail.last().unwrap();
    assert_eq!(
        (last.data.id.as_str(), last.data.state),
        ("tx-p", TxnState::PrepareCommit)
    );
    assert!(
        moment
            .journal
            .tail
            .iter()
            .all(|f| f.data.state != TxnState::CompleteCommit),
        "no COMPLETE_COMMIT before recovery"
    );
    // Markers as far as the cut: none.
    for p in &moment.partitions {
        assert!(
            p.batches.iter().all(|b| b.kind == BatchKind::Data),
            "{}: no marker was written before the cut",
            p.name()
        );
    }
    // The staged offsets are in the frame, not yet published.
    assert_eq!(last.data.staged_offsets["workers"]["in-0"], 1);
    assert!(!moment.committed_offsets.contains_key("workers"));
    assert!(moment.torn.is_none(), "a crash tears nothing");

    // The state itself is the one after recovery: COMPLETE_COMMIT written
    // and in-0 = 1 published.
    assert_eq!(
        after.journal.tail.last().unwrap().data.state,
        TxnState::CompleteCommit
    );
    assert_eq!(after.committed_offsets["workers"]["in-0"], 1);
    assert!(after.journal.frames > moment.journal.frames);
    let recovery = after.last_recovery.as_ref().unwrap();
    assert_eq!(recovery.completed, vec!["tx-p".to_string()]);

    // `mk-tui state --step N` prints the same: the recovered state, with
    // the moment as `moment_of_death`.
    let state = state_of_recording(&path("ch08-cut-points.jsonl"), Some(n), None).unwrap();
    let json: serde_json::Value = serde_json::from_str(&state.to_json()).unwrap();
    assert_eq!(json["step"], n);
    assert_eq!(json["committed_offsets"]["workers"]["in-0"], 1);
    let m = &json["moment_of_death"];
    let frames = m["journal"]["tail"].as_array().unwrap();
    assert_eq!(frames.last().unwrap()["state"], "prepare_commit");
    assert_eq!(m["committed_offsets"], serde_json::json!({}));
    // The step before did not crash: no key at all.
    let before = state_of_recording(&path("ch08-cut-points.jsonl"), Some(n - 1), None).unwrap();
    assert!(!before.to_json().contains("moment_of_death"));
}

#[test]
fn each_cut_point_dies_with_the_markers_and_offsets_written_so_far() {
    let recording = load("ch08-cut-points.jsonl");
    // (cut, markers on disk, in-0 published at the moment)
    let cases = [
        ("\"crash_after\":\"marker:1\"", 1, Some(1)),
        ("\"crash_after\":\"markers\"", 2, Some(2)),
        ("\"crash_after\":\"offsets\"", 2, Some(4)),
    ];
    for (needle, markers, published) in cases {
        let n = step_of("ch08-cut-points.jsonl", needle);
        let after = Snapshot::of(&driver_at(&recording, n));
        let m = after.moment_of_death.as_deref().unwrap();
        let id = &m.journal.tail.last().unwrap().data.id;
        let written = m
            .partitions
            .iter()
            .flat_map(|p| &p.batches)
            .filter(|b| b.kind == BatchKind::Control && b.transactional_id.as_ref() == Some(id))
            .count();
        assert_eq!(written, markers, "{needle}: markers of {id} at the moment");
        assert_eq!(
            m.committed_offsets.get("workers").map(|o| o["in-0"]),
            published,
            "{needle}: in-0 at the moment"
        );
        assert_eq!(
            m.journal.tail.last().unwrap().data.state,
            TxnState::PrepareCommit,
            "{needle}"
        );
    }
}

#[test]
fn a_torn_journal_dies_with_its_torn_bytes() {
    let recording = load("ch08-torn-journal.jsonl");
    let n = step_of("ch08-torn-journal.jsonl", "\"tear\"");
    let after = Snapshot::of(&driver_at(&recording, n));
    let m = after.moment_of_death.as_deref().unwrap();
    let torn = m.torn.as_ref().expect("a tear says what it tore");
    assert_eq!(torn.file, "transactions.journal");
    assert_eq!(torn.cut_bytes(), 30);
    assert_eq!(torn.appended_bytes(), 0);
    assert_eq!(torn.size_after, torn.size_before - 30);
    assert_eq!(m.journal.bytes, torn.size_after, "the journal as on disk");
    // The frame the tear reached is on disk short; recovery then cut it.
    let last = m.journal.tail.last().unwrap();
    assert!(torn.tears_frame(last));
    assert!(
        !m.journal
            .tail
            .iter()
            .rev()
            .skip(1)
            .any(|f| torn.tears_frame(f))
    );
    assert_eq!(
        after
            .last_recovery
            .as_ref()
            .unwrap()
            .journal_truncated_bytes,
        last.len - 30
    );
    assert_eq!(
        torn.describe(),
        format!(
            "−30 B transactions.journal ({}→{} B)",
            torn.size_before, torn.size_after
        )
    );
}

#[test]
fn the_crash_observer_changes_nothing_on_disk() {
    // The same recording in two directories, one cluster without the
    // observer: byte-identical directories after every step, and reading
    // the moment changes nothing either.
    let recording = load("ch08-cut-points.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let mut with = Driver::new(&recording.header, Some(&a)).unwrap();
    let mut without = Driver::new(&recording.header, Some(&b)).unwrap();
    without.cluster().set_crash_observer(None);
    let mut moments = 0;
    for s in &recording.steps {
        with.apply(&s.action);
        without.apply(&s.action);
        assert!(without.last_moment().is_none());
        let before = common::dir_snapshot(&a);
        assert_eq!(before, common::dir_snapshot(&b), "step {}", with.step());
        if let Some(view) = Snapshot::of(&with).at_moment() {
            moments += 1;
            assert!(view.before_recovery && view.last_recovery.is_none());
        }
        assert!(
            common::dir_snapshot(&a) == before,
            "a read changed the directory"
        );
    }
    assert_eq!(moments, 5, "four cut points and a crash, five moments");
}

fn replay(name: &str) -> App {
    let recording = load(name);
    let layout = layout::load(recording.header.layout.as_deref().unwrap_or("default")).unwrap();
    App::replay(recording, layout, Lang::En, Theme::colored()).unwrap()
}

/// (step, at the moment) of a replay.
fn at(app: &App) -> (usize, bool) {
    let timeline = app.session().timeline().expect("a replay");
    (timeline.step(), timeline.at_moment())
}

fn go(app: &mut App, command: KeyCommand) -> (usize, bool) {
    app.update(Msg::Command(command)).unwrap();
    at(app)
}

/// Whether the title bar starts with the moment-of-death banner, drawn
/// reversed (so it shows under NO_COLOR too).
fn banner(app: &App) -> bool {
    let buf = frame_buffer(app, 120, 36);
    let title: String = (0..40).map(|x| buf[(x, 0)].symbol().to_string()).collect();
    let shown = title.contains("moment of death: before recovery");
    assert_eq!(
        buf[(3, 0)].modifier.contains(Modifier::REVERSED),
        shown,
        "the banner, and only the banner, is reversed: {title}"
    );
    shown
}

#[test]
fn replay_steps_through_the_moment_then_the_recovery_and_back() {
    let mut app = replay("ch08-cut-points.jsonl");
    let n = step_of("ch08-cut-points.jsonl", "\"crash_after\":\"prepare\"");
    app.update(Msg::Goto(n - 1)).unwrap();
    assert_eq!(at(&app), (n - 1, false));
    assert!(!banner(&app));
    assert_eq!(go(&mut app, KeyCommand::NextStep), (n, true));
    assert!(banner(&app));
    let moment = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(moment.contains(&format!("step {n}✝/")), "{moment}");
    insta::assert_snapshot!("ch08_cut_points_moment_120x36", moment);
    assert_eq!(go(&mut app, KeyCommand::NextStep), (n, false));
    assert!(!banner(&app));
    let recovered = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(recovered.contains(&format!("step {n}+/")), "{recovered}");
    insta::assert_snapshot!("ch08_cut_points_recovered_120x36", recovered);
    assert_eq!(go(&mut app, KeyCommand::NextStep), (n + 1, false));
    // And back, the same way in reverse.
    assert_eq!(go(&mut app, KeyCommand::PrevStep), (n, false));
    assert_eq!(go(&mut app, KeyCommand::PrevStep), (n, true));
    assert!(banner(&app));
    assert_eq!(
        buffer_text(&frame_buffer(&app, 120, 36)),
        moment,
        "back onto the moment draws it again"
    );
    assert_eq!(go(&mut app, KeyCommand::PrevStep), (n - 1, false));
    // A jump lands after the recovery (the state of step N, SPEC §5).
    app.update(Msg::Goto(n)).unwrap();
    assert_eq!(at(&app), (n, false));
}

fn app_recording(app: &App) -> &Recording {
    app.session().timeline().expect("a replay").recording()
}

#[test]
fn a_replayed_tear_shows_its_torn_bytes_at_the_moment() {
    let mut app = replay("ch08-torn-journal.jsonl");
    let n = step_of("ch08-torn-journal.jsonl", "\"tear\"");
    app.update(Msg::Goto(n - 1)).unwrap();
    assert_eq!(go(&mut app, KeyCommand::NextStep), (n, true));
    assert!(banner(&app));
    let moment = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(
        moment.contains("✗ torn: −30 B transactions.journal"),
        "{moment}"
    );
    insta::assert_snapshot!("ch08_torn_journal_moment_120x36", moment);
    assert_eq!(go(&mut app, KeyCommand::NextStep), (n, false));
    let recovered = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(!recovered.contains("✗ torn: −30 B"), "{recovered}");
    insta::assert_snapshot!("ch08_torn_journal_recovered_120x36", recovered);
}

#[test]
fn playing_does_not_stop_on_the_last_steps_moment() {
    let mut app = replay("ch08-torn-journal.jsonl");
    let last = app_recording(&app).steps.len();
    app.update(Msg::Goto(last - 1)).unwrap();
    app.update(Msg::Command(KeyCommand::PlayPause)).unwrap();
    app.update(Msg::Tick).unwrap();
    let playing = |app: &App| app.is_playing();
    // The last step is a tear or not; either way the player ends after it.
    if at(&app).1 {
        assert!(playing(&app), "the moment is not the end");
        app.update(Msg::Tick).unwrap();
    }
    assert_eq!(at(&app), (last, false));
    assert!(!playing(&app));
}

#[test]
fn the_banner_is_translated() {
    let recording = load("ch08-cut-points.jsonl");
    let layout = layout::load(recording.header.layout.as_deref().unwrap_or("default")).unwrap();
    let mut app = App::replay(recording, layout, Lang::Zh, Theme::colored()).unwrap();
    let n = step_of("ch08-cut-points.jsonl", "\"crash_after\":\"prepare\"");
    app.update(Msg::Goto(n - 1)).unwrap();
    assert_eq!(go(&mut app, KeyCommand::NextStep), (n, true));
    let frame = buffer_text(&frame_buffer(&app, 120, 36));
    let title = frame.lines().next().unwrap();
    assert!(title.contains("✝ 崩溃瞬间：恢复之前"), "{title}");
    assert!(title.contains(&format!("{n}✝/")), "{title}");
}

#[test]
fn a_torn_log_dies_with_the_garbage_on_its_segment_and_the_batches_it_held() {
    let text = r#"{"mk_recording":1,"title":"log tear","rules":"minikafka","cluster":{"brokers":[1,2],"topics":[{"name":"out","partitions":1,"replication_factor":2}]}}
{"at_ms":0,"action":{"produce":{"topic":"out","partition":0,"value":"a","acks":"all"}}}
{"at_ms":0,"action":{"replicate":{}}}
{"at_ms":0,"action":{"tear":{"target":{"topic":"out","partition":0,"broker":1},"append_garbage":"xyzw"}}}
"#;
    let recording = Recording::parse("log-tear.jsonl", text).unwrap();
    let after = Snapshot::of(&driver_at(&recording, 3));
    let m = after
        .moment_of_death
        .as_deref()
        .expect("a tear is a moment");
    let torn = m.torn.as_ref().unwrap();
    assert!(
        torn.file.starts_with("broker-1/") && torn.file.ends_with(".log"),
        "{}",
        torn.file
    );
    assert_eq!((torn.appended_bytes(), torn.cut_bytes()), (4, 0));
    assert!(
        torn.describe().starts_with("+4 B broker-1/"),
        "{}",
        torn.describe()
    );
    // The batch is there at the moment, with its value read before recovery.
    let batch = &m.partitions[0].batches[0];
    assert_eq!(batch.values_text(), "a");
    // Recovery cut exactly the garbage.
    let cut = &after.last_recovery.as_ref().unwrap().logs_truncated;
    assert_eq!(cut.len(), 1);
    assert_eq!((cut[0].broker, cut[0].truncated_bytes), (1, 4));
}

/// Playing across a crash step keeps the recorded pace: its two sub-steps
/// (the moment, then the recovery) share the gap to the next step.
#[test]
fn the_two_sub_steps_share_the_gap_to_the_next_step() {
    let mut app = replay("ch08-cut-points.jsonl");
    let steps = app_recording(&app).steps.clone();
    // Line 6 of the recording is step 5: a commit crashed after PREPARE_COMMIT.
    let n = 5;
    assert!(matches!(
        steps[n - 1].action,
        minikafka::session::Action::Commit {
            crash_after: Some(_),
            ..
        }
    ));
    let gap = steps[n].at_ms - steps[n - 1].at_ms;
    app.update(Msg::Goto(n - 1)).unwrap();
    app.update(Msg::Command(KeyCommand::PlayPause)).unwrap();
    app.update(Msg::Tick).unwrap();
    assert_eq!(at(&app), (n, true), "the moment");
    let first = app.next_step_delay_ms().unwrap();
    app.update(Msg::Tick).unwrap();
    assert_eq!(at(&app), (n, false), "the recovery");
    let second = app.next_step_delay_ms().unwrap();
    assert_eq!(first + second, gap, "{first} + {second}");
    app.update(Msg::Tick).unwrap();
    assert_eq!(at(&app), (n + 1, false));
}
