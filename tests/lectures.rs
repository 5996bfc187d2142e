//! The lecture recordings in `recordings/` (see `docs/lectures.md`): each one
//! loads and builds its cluster, is well formed for a projector, replays to
//! the facts its captions state (asserted step by step), and draws the same
//! frames at its captioned steps (one insta snapshot per recording).

use std::path::{Path, PathBuf};

use minikafka::session::snapshot::PartitionSnapshot as PartitionState;
use minikafka::session::snapshot::groups::MemberRebalance;
use minikafka::session::{Driver, Outcome, Recording, Snapshot};
use minikafka::ui::headless::{self, Format};
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;

/// Every lecture recording, each with a test below. `demo.jsonl` is the
/// live dashboard's demo cluster, not a lecture.
const LECTURES: [&str; 21] = [
    "ch03-batching",
    "ch04-compaction",
    "ch04-retention",
    "ch05-high-watermark",
    "ch06-isr-shrink",
    "ch06-leader-failure",
    "ch08-abort",
    "ch08-acks-all-pending",
    "ch08-cut-points",
    "ch08-hanging-transaction",
    "ch08-lso-blocks",
    "ch08-missing-markers",
    "ch08-missing-markers-kafka",
    "ch08-offsets",
    "ch08-reused-id",
    "ch08-torn-journal",
    "ch08-transaction-v2",
    "ch08-visibility",
    "ch08-zombie",
    "ch09-rebalance",
    "ch09-rebalance-kafka",
];

fn recordings_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings")
}

fn path_of(name: &str) -> PathBuf {
    recordings_dir().join(format!("{name}.jsonl"))
}

/// A recording replayed once: the state after every step (index 0 is the
/// fresh cluster) and each step's outcome (index 0 unused).
struct Lesson {
    name: &'static str,
    recording: Recording,
    states: Vec<Snapshot>,
    outcomes: Vec<Outcome>,
}

impl Lesson {
    fn replay(name: &'static str) -> Self {
        let recording = Recording::load(&path_of(name)).unwrap_or_else(|e| panic!("{e}"));
        let mut driver = Driver::new(&recording.header, None).unwrap();
        let mut states = vec![Snapshot::of(&driver)];
        let mut outcomes = vec![Outcome::Ok];
        for step in &recording.steps {
            outcomes.push(driver.apply(&step.action));
            states.push(Snapshot::of(&driver));
        }
        Self {
            name,
            recording,
            states,
            outcomes,
        }
    }

    fn at(&self, step: usize) -> At<'_> {
        At {
            name: self.name,
            s: &self.states[step],
        }
    }

    /// Only the listed steps end in an error; every other step is ok or
    /// pending.
    fn errors_only_at(&self, steps: &[usize]) {
        for (n, outcome) in self.outcomes.iter().enumerate().skip(1) {
            assert_eq!(
                matches!(outcome, Outcome::Error(_)),
                steps.contains(&n),
                "{} step {n}: {outcome:?}",
                self.name
            );
        }
    }

    /// The frames of every captioned step at the recording's own size and
    /// layout, in one snapshot.
    fn snapshot_captioned_frames(&self) {
        self.snapshot_captioned_frames_in(Lang::En, "");
    }

    /// [`Self::snapshot_captioned_frames`] in `lang`, its snapshot named
    /// with `suffix`.
    fn snapshot_captioned_frames_in(&self, lang: Lang, suffix: &str) {
        let captioned: Vec<usize> = self
            .recording
            .steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.caption.is_some())
            .map(|(i, _)| i + 1)
            .collect();
        let terminal = self.recording.header.terminal.expect("terminal size");
        let layout_name = self.recording.header.layout.as_deref().expect("layout");
        let frames = headless::render(
            self.recording.clone(),
            &captioned,
            terminal.cols,
            terminal.rows,
            Format::Text,
            layout::load(layout_name).unwrap(),
            lang,
        )
        .unwrap();
        let mut text = String::new();
        for (step, frame) in captioned.iter().zip(frames) {
            text.push_str(&format!("── step {step} ──\n{frame}"));
            if !text.ends_with('\n') {
                text.push('\n');
            }
        }
        insta::assert_snapshot!(format!("{}{suffix}", self.name.replace('-', "_")), text);
    }
}

/// The state at one step, with readers for the facts captions talk about.
struct At<'a> {
    name: &'a str,
    s: &'a Snapshot,
}

fn values(list: Option<&Vec<Option<String>>>) -> Vec<String> {
    list.map(|l| l.iter().map(|v| v.clone().unwrap_or_default()).collect())
        .unwrap_or_default()
}

impl At<'_> {
    fn ctx(&self) -> String {
        format!("{} step {}", self.name, self.s.step)
    }

    fn part(&self, tp: &str) -> &PartitionState {
        self.s
            .partitions
            .iter()
            .find(|p| format!("{}-{}", p.topic, p.partition) == tp)
            .unwrap_or_else(|| panic!("{}: no partition {tp}", self.ctx()))
    }

    /// What a fresh read_committed consumer gets from offset 0.
    fn rc(&self, tp: &str) -> Vec<String> {
        values(self.s.consumers.read_committed.get(tp))
    }

    /// What a fresh read_uncommitted consumer gets from offset 0.
    fn ru(&self, tp: &str) -> Vec<String> {
        values(self.s.consumers.read_uncommitted.get(tp))
    }

    fn hw(&self, tp: &str) -> i64 {
        self.part(tp).high_watermark
    }

    fn lso(&self, tp: &str) -> i64 {
        self.part(tp).last_stable_offset
    }

    /// Each replica's LEO, as (broker, LEO), in the partition's order.
    fn leos(&self, tp: &str) -> Vec<(u32, i64)> {
        self.part(tp)
            .replicas
            .iter()
            .map(|r| (r.broker, r.log_end_offset))
            .collect()
    }

    fn leo_of(&self, tp: &str, broker: u32) -> i64 {
        self.leos(tp)
            .into_iter()
            .find(|&(b, _)| b == broker)
            .unwrap()
            .1
    }

    fn isr(&self, tp: &str) -> Vec<u32> {
        self.part(tp).isr.clone()
    }

    /// The control markers in the leader's log: (offset, "commit"/"abort").
    fn markers(&self, tp: &str) -> Vec<(i64, &'static str)> {
        self.part(tp)
            .batches
            .iter()
            .filter_map(|b| b.control.map(|c| (b.base_offset, c.name())))
            .collect()
    }

    /// Every record value in the leader's log.
    fn log_values(&self, tp: &str) -> Vec<String> {
        self.part(tp)
            .batches
            .iter()
            .flat_map(|b| b.records.iter())
            .map(|r| r.value.clone().unwrap_or_default())
            .collect()
    }

    /// The state of the latest instance of a transaction id.
    fn txn(&self, id: &str) -> &'static str {
        self.s
            .transactions
            .iter()
            .find(|t| t.id == id)
            .unwrap_or_else(|| panic!("{}: no transaction {id}", self.ctx()))
            .state
            .name()
    }

    fn txn_partitions(&self, id: &str) -> Vec<String> {
        self.s
            .transactions
            .iter()
            .find(|t| t.id == id)
            .unwrap()
            .partitions
            .clone()
    }

    fn staged(&self, id: &str, group: &str, tp: &str) -> Option<i64> {
        self.s
            .transactions
            .iter()
            .find(|t| t.id == id)
            .and_then(|t| t.staged_offsets.get(group))
            .and_then(|g| g.get(tp))
            .copied()
    }

    fn committed(&self, group: &str, tp: &str) -> Option<i64> {
        self.s
            .committed_offsets
            .get(group)
            .and_then(|g| g.get(tp))
            .copied()
    }

    /// Pending operations as (issuing step, kind, waiting for, queued behind).
    fn pending(&self) -> Vec<(usize, &str, Vec<u32>, Option<usize>)> {
        self.s
            .pending
            .iter()
            .map(|p| {
                (
                    p.action_step,
                    p.kind.as_str(),
                    p.waiting_for.clone(),
                    p.queued_behind,
                )
            })
            .collect()
    }

    fn frames(&self) -> (usize, u64) {
        (self.s.journal.frames, self.s.journal.bytes)
    }

    fn recovery(&self) -> &minikafka::session::snapshot::RecoverySnapshot {
        self.s
            .last_recovery
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no recovery yet", self.ctx()))
    }

    fn completed(&self) -> Vec<String> {
        self.recovery().completed.clone()
    }

    fn left_open(&self) -> Vec<String> {
        self.recovery().left_open.clone()
    }

    fn resent(&self) -> Vec<(String, String, &'static str, i64)> {
        self.recovery()
            .markers_resent
            .iter()
            .map(|m| {
                (
                    m.txn.clone(),
                    m.partition.clone(),
                    m.control.name(),
                    m.offset,
                )
            })
            .collect()
    }

    fn errors(&self) -> Vec<(usize, String)> {
        self.s
            .errors
            .iter()
            .map(|e| (e.step, e.message.clone()))
            .collect()
    }
}

/// `assert_eq!` that names the recording and step.
macro_rules! check {
    ($at:expr, $left:expr, $right:expr) => {
        assert_eq!($left, $right, "{}: {}", $at.ctx(), stringify!($left))
    };
}

/// Terminal cells: CJK characters and full-width punctuation take two.
fn display_width(text: &str) -> usize {
    text.chars()
        .map(|c| {
            if ('\u{2E80}'..='\u{FFEF}').contains(&c) {
                2
            } else {
                1
            }
        })
        .sum()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------------
// Every recording

#[test]
fn every_lecture_recording_passes_check_and_is_covered_here() {
    let mut found: Vec<String> = std::fs::read_dir(recordings_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != "demo")
        .collect();
    found.sort();
    assert_eq!(
        found, LECTURES,
        "a recording without its lecture test (or a test without its file)"
    );
    for name in LECTURES {
        let steps = minikafka::cli::check(&path_of(name)).unwrap_or_else(|e| panic!("{e}"));
        assert!(steps > 0, "{name}");
    }
}

#[test]
fn every_lecture_reads_well_on_a_projector() {
    for name in LECTURES {
        let r = Recording::load(&path_of(name)).unwrap();
        let h = &r.header;
        assert!(!h.title.is_empty(), "{name}: a title");
        let layout_name = h
            .layout
            .as_deref()
            .unwrap_or_else(|| panic!("{name}: a layout"));
        layout::load(layout_name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let t = h
            .terminal
            .unwrap_or_else(|| panic!("{name}: a terminal size"));
        assert!(
            t.cols >= 80 && t.rows >= 24,
            "{name}: {}x{}",
            t.cols,
            t.rows
        );
        assert_eq!(r.steps[0].at_ms, 0, "{name}: the first step at 0 ms");
        for (i, pair) in r.steps.windows(2).enumerate() {
            let gap = pair[1].at_ms - pair[0].at_ms;
            assert!(
                (1000..=3000).contains(&gap),
                "{name}: step {} comes {gap} ms after step {}",
                i + 2,
                i + 1
            );
        }
        let mut captioned = 0;
        for (i, s) in r.steps.iter().enumerate() {
            if let Some(c) = &s.caption {
                captioned += 1;
                for lang in ["en", "zh"] {
                    let text = c.text(lang);
                    assert!(!text.is_empty(), "{name} step {}: {lang} caption", i + 1);
                    // at most the caption strip's two lines
                    assert!(
                        display_width(text) <= 2 * (t.cols as usize - 2),
                        "{name} step {}: {lang} caption too long for {} columns",
                        i + 1,
                        t.cols
                    );
                }
                assert_ne!(c.text("en"), c.text("zh"), "{name} step {}", i + 1);
            }
        }
        assert!(captioned * 2 >= r.steps.len(), "{name}: mostly captioned");
    }
}

/// docs/lectures.md says what is true of the recordings and the replay:
/// the chapters its introduction lists are the recordings' chapters, every
/// terminal size a recording is made for is named (and each recording not
/// made for the usual 160x48), and its table of replay keys names every key
/// the replay answers (`ui::keys::command`). It said "chapters 5, 6 and 8",
/// "160x48, or 200x60", and left out `]`, `[`, `b`, `g`, `+`, `-`, `P`, `f`.
#[test]
fn lectures_md_names_the_chapters_sizes_and_replay_keys() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use minikafka::ui::keys;
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/lectures.md"))
            .unwrap();
    let words = doc.split_whitespace().collect::<Vec<_>>().join(" ");

    let mut chapters: Vec<u32> = LECTURES.iter().map(|n| n[2..4].parse().unwrap()).collect();
    chapters.dedup();
    let listed: Vec<u32> = words
        .split_once("lessons for chapters ")
        .and_then(|(_, rest)| rest.split_once(" of the book"))
        .map(|(list, _)| {
            list.split([',', ' '])
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .expect("\"lessons for chapters … of the book\"");
    assert_eq!(listed, chapters);

    let sizes = words
        .split_once("Each recording names its layout")
        .and_then(|(_, rest)| rest.split_once("The dashboard uses"))
        .expect("the paragraph on sizes")
        .0;
    for name in LECTURES.iter().copied().chain(["demo"]) {
        let r = Recording::load(&path_of(name)).unwrap();
        let t = r.header.terminal.unwrap();
        let size = format!("{}x{}", t.cols, t.rows);
        assert!(sizes.contains(&size), "{name}: {size} not named");
        if size != "160x48" {
            assert!(sizes.contains(name), "{name} ({size}) not named");
        }
    }

    let table = doc
        .split_once("| key | in replay |")
        .and_then(|(_, rest)| rest.split_once("\n\n"))
        .expect("the replay key table")
        .0;
    for c in ' '..='~' {
        let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        // `=` is `+` without Shift, the same key on most keyboards.
        if keys::command(key, true).is_none() || c == '=' {
            continue;
        }
        let named = match c {
            ' ' => "`space`".to_string(),
            c => format!("`{c}`"),
        };
        assert!(
            table.contains(&named),
            "replay key {named} not in the table"
        );
    }
}

// ---------------------------------------------------------------------------
// Chapter 8

#[test]
fn ch08_visibility() {
    let l = Lesson::replay("ch08-visibility");
    l.errors_only_at(&[]);
    let s = l.at(2);
    check!(s, s.ru("out-0"), strs(&["pending"]));
    check!(s, s.rc("out-0"), strs(&[]));
    check!(s, (s.hw("out-0"), s.lso("out-0")), (1, 0));
    let s = l.at(3);
    check!(s, s.txn("tx-1"), "complete_commit");
    check!(s, s.rc("out-0"), strs(&["pending"]));
    let s = l.at(6);
    check!(s, s.txn("tx-2"), "complete_abort");
    check!(s, s.rc("out-0"), strs(&["pending"]));
    check!(s, s.ru("out-0"), strs(&["pending", "discard-me"]));
    check!(s, s.markers("out-0"), vec![(1, "commit"), (3, "abort")]);
    l.snapshot_captioned_frames();
}

#[test]
fn ch08_abort() {
    let l = Lesson::replay("ch08-abort");
    l.errors_only_at(&[]);
    let s = l.at(1);
    check!(s, s.rc("out-0"), strs(&["before"]));
    check!(s, (s.hw("out-0"), s.lso("out-0")), (1, 1));
    let s = l.at(2);
    check!(s, s.txn("tx-a"), "ongoing");
    check!(s, s.frames().0, 1);
    let s = l.at(3);
    check!(s, s.ru("out-0"), strs(&["before", "oops-1"]));
    check!(s, s.rc("out-0"), strs(&["before"]));
    check!(s, s.lso("out-0"), 1);
    let s = l.at(4);
    check!(s, (s.hw("out-0"), s.lso("out-0")), (3, 1));
    let s = l.at(5);
    check!(s, s.txn("tx-a"), "complete_abort");
    check!(s, s.markers("out-0"), vec![(3, "abort")]);
    check!(s, (s.hw("out-0"), s.lso("out-0")), (4, 4));
    check!(s, s.ru("out-0"), strs(&["before", "oops-1", "oops-2"]));
    check!(s, s.rc("out-0"), strs(&["before"]));
    let s = l.at(6);
    check!(s, s.rc("out-0"), strs(&["before", "after"]));
    check!(
        s,
        s.ru("out-0"),
        strs(&["before", "oops-1", "oops-2", "after"])
    );
    l.snapshot_captioned_frames();
}

#[test]
fn ch08_offsets() {
    let l = Lesson::replay("ch08-offsets");
    l.errors_only_at(&[]);
    check!(l.at(7), l.at(7).hw("in-0"), 7);
    let s = l.at(9);
    check!(s, s.rc("out-0"), strs(&[]));
    // the tx_offsets exercise: None before the commit ...
    let s = l.at(10);
    check!(s, s.staged("tx-1", "workers", "in-0"), Some(7));
    check!(s, s.committed("workers", "in-0"), None);
    // ... and 7 after it
    let s = l.at(11);
    check!(s, s.txn("tx-1"), "complete_commit");
    check!(s, s.committed("workers", "in-0"), Some(7));
    check!(s, s.rc("out-0"), strs(&["result-1"]));
    check!(s, s.markers("out-0"), vec![(1, "commit")]);
    check!(s, s.hw("in-0"), 7);
    let s = l.at(17);
    check!(s, s.staged("tx-2", "workers", "in-0"), Some(10));
    check!(s, s.committed("workers", "in-0"), Some(7));
    let s = l.at(18);
    check!(s, s.txn("tx-2"), "complete_abort");
    check!(s, s.staged("tx-2", "workers", "in-0"), None);
    check!(s, s.committed("workers", "in-0"), Some(7));
    check!(s, s.rc("out-0"), strs(&["result-1"]));
    check!(s, s.ru("out-0"), strs(&["result-1", "result-2"]));
    check!(s, s.markers("out-0"), vec![(1, "commit"), (3, "abort")]);
    check!(s, s.hw("in-0"), 10);
    l.snapshot_captioned_frames();
}

#[test]
fn ch08_acks_all_pending() {
    let l = Lesson::replay("ch08-acks-all-pending");
    l.errors_only_at(&[]);
    // the data waits for the follower
    let s = l.at(2);
    check!(s, s.pending(), vec![(2, "send", vec![2], None)]);
    check!(
        s,
        (s.hw("out-0"), s.leos("out-0")),
        (0, vec![(1, 1), (2, 0)])
    );
    check!(s, s.ru("out-0"), strs(&[]));
    check!(s, s.frames().0, 1);
    let s = l.at(3);
    check!(s, s.pending(), vec![]);
    check!(s, s.hw("out-0"), 1);
    check!(s, s.frames().0, 2);
    check!(s, s.ru("out-0"), strs(&["a"]));
    check!(s, s.rc("out-0"), strs(&[]));
    // the COMMIT marker waits
    let s = l.at(4);
    check!(s, s.txn("tx-1"), "prepare_commit");
    check!(s, s.frames().0, 3);
    check!(s, s.markers("out-0"), vec![(1, "commit")]);
    check!(s, s.pending(), vec![(4, "commit", vec![2], None)]);
    check!(s, s.rc("out-0"), strs(&[]));
    let s = l.at(5);
    check!(s, s.txn("tx-1"), "complete_commit");
    check!(s, s.frames().0, 4);
    check!(s, s.hw("out-0"), 2);
    check!(s, s.rc("out-0"), strs(&["a"]));
    let s = l.at(7);
    check!(s, s.pending(), vec![(7, "send", vec![2], None)]);
    // abort is queued behind its own send
    let s = l.at(8);
    check!(
        s,
        s.pending(),
        vec![(7, "send", vec![2], None), (8, "abort", vec![], Some(7))]
    );
    check!(s, s.frames().0, 5);
    // the ABORT marker waits
    let s = l.at(9);
    check!(s, s.txn("tx-2"), "prepare_abort");
    check!(s, s.pending(), vec![(8, "abort", vec![2], None)]);
    check!(s, s.markers("out-0"), vec![(1, "commit"), (3, "abort")]);
    let s = l.at(10);
    check!(s, s.txn("tx-2"), "complete_abort");
    check!(s, s.pending(), vec![]);
    check!(s, s.hw("out-0"), 4);
    check!(s, s.rc("out-0"), strs(&["a"]));
    check!(s, s.ru("out-0"), strs(&["a", "b"]));
    l.snapshot_captioned_frames();
}

#[test]
fn ch08_lso_blocks() {
    let l = Lesson::replay("ch08-lso-blocks");
    l.errors_only_at(&[]);
    let s = l.at(1);
    check!(s, (s.hw("out-0"), s.leo_of("out-0", 1)), (0, 1));
    check!(s, s.ru("out-0"), strs(&[]));
    let s = l.at(2);
    check!(s, (s.hw("out-0"), s.lso("out-0")), (1, 1));
    check!(s, s.rc("out-0"), strs(&["p0"]));
    check!(l.at(4), l.at(4).pending(), vec![(4, "send", vec![2], None)]);
    let s = l.at(5);
    check!(s, (s.hw("out-0"), s.lso("out-0")), (2, 1));
    check!(s, s.ru("out-0"), strs(&["p0", "t1"]));
    check!(s, s.rc("out-0"), strs(&["p0"]));
    // a replicated, non-transactional record is held back by the LSO
    let s = l.at(7);
    check!(s, (s.hw("out-0"), s.lso("out-0")), (3, 1));
    check!(s, s.ru("out-0"), strs(&["p0", "t1", "p2"]));
    check!(s, s.rc("out-0"), strs(&["p0"]));
    check!(s, s.txn("tx-1"), "ongoing");
    let s = l.at(8);
    check!(s, s.txn("tx-1"), "prepare_commit");
    check!(s, s.lso("out-0"), 1);
    check!(s, s.pending(), vec![(8, "commit", vec![2], None)]);
    let s = l.at(9);
    check!(s, (s.hw("out-0"), s.lso("out-0")), (4, 4));
    check!(s, s.rc("out-0"), strs(&["p0", "t1", "p2"]));
    l.snapshot_captioned_frames();
}

#[test]
fn ch08_cut_points() {
    let l = Lesson::replay("ch08-cut-points");
    l.errors_only_at(&[]);
    let s = l.at(4);
    check!(s, s.staged("tx-p", "workers", "in-0"), Some(1));
    check!(s, s.committed("workers", "in-0"), None);
    // cut after PREPARE_COMMIT: no marker at all, offsets published by recovery
    let s = l.at(5);
    check!(s, s.completed(), strs(&["tx-p"]));
    check!(s, s.resent(), vec![]);
    check!(s, s.txn("tx-p"), "complete_commit");
    check!(s, s.committed("workers", "in-0"), Some(1));
    check!(
        s,
        (s.markers("out-0"), s.markers("out-1")),
        (vec![], vec![])
    );
    check!(
        s,
        (s.rc("out-0"), s.rc("out-1")),
        (strs(&["p0"]), strs(&["p1"]))
    );
    // cut after the first of two markers
    let s = l.at(10);
    check!(s, s.completed(), strs(&["tx-m"]));
    check!(s, s.committed("workers", "in-0"), Some(2));
    check!(
        s,
        (s.markers("out-0"), s.markers("out-1")),
        (vec![(2, "commit")], vec![])
    );
    check!(s, s.rc("out-1"), strs(&["p1", "m1"]));
    // cut after both markers, before the offsets
    let s = l.at(14);
    check!(s, s.committed("workers", "in-0"), Some(2));
    let s = l.at(15);
    check!(s, s.completed(), strs(&["tx-a"]));
    check!(s, s.committed("workers", "in-0"), Some(3));
    check!(
        s,
        (s.markers("out-0"), s.markers("out-1")),
        (vec![(2, "commit"), (4, "commit")], vec![(3, "commit")])
    );
    // cut after the offsets, before COMPLETE_COMMIT
    let s = l.at(20);
    check!(s, s.completed(), strs(&["tx-o"]));
    check!(s, s.txn("tx-o"), "complete_commit");
    check!(s, s.committed("workers", "in-0"), Some(4));
    check!(
        s,
        (s.markers("out-0"), s.markers("out-1")),
        (
            vec![(2, "commit"), (4, "commit"), (6, "commit")],
            vec![(3, "commit"), (5, "commit")]
        )
    );
    check!(s, s.rc("out-0"), strs(&["p0", "m0", "a0", "o0"]));
    check!(s, s.rc("out-1"), strs(&["p1", "m1", "a1", "o1"]));
    // a crash before PREPARE leaves the transaction open
    let s = l.at(23);
    check!(s, s.left_open(), strs(&["tx-x"]));
    check!(s, s.completed(), strs(&[]));
    check!(s, s.txn("tx-x"), "ongoing");
    check!(s, (s.hw("out-0"), s.lso("out-0")), (8, 7));
    check!(s, s.rc("out-0"), strs(&["p0", "m0", "a0", "o0"]));
    let s = l.at(24);
    check!(s, s.txn("tx-x"), "complete_abort");
    check!(s, s.markers("out-0").last(), Some(&(8, "abort")));
    check!(s, (s.hw("out-0"), s.lso("out-0")), (9, 9));
    check!(s, s.rc("out-0"), strs(&["p0", "m0", "a0", "o0"]));
    check!(s, s.committed("workers", "in-0"), Some(4));
    l.snapshot_captioned_frames();
}

#[test]
fn ch08_torn_journal() {
    let l = Lesson::replay("ch08-torn-journal");
    l.errors_only_at(&[]);
    let s = l.at(4);
    check!(s, s.frames(), (5, 641));
    check!(s, s.committed("workers", "in-0"), Some(5));
    // the COMPLETE_COMMIT frame is torn: back to PREPARE_COMMIT, completed again
    let s = l.at(5);
    check!(s, s.recovery().journal_truncated_bytes, 116);
    check!(s, s.completed(), strs(&["tx-1"]));
    check!(s, s.frames(), (5, 641));
    check!(s, s.txn("tx-1"), "complete_commit");
    check!(s, s.committed("workers", "in-0"), Some(5));
    check!(s, s.rc("out-0"), strs(&["a"]));
    let s = l.at(7);
    check!(s, s.frames(), (7, 853));
    check!(s, s.txn_partitions("tx-2"), strs(&["out-0"]));
    check!(s, s.lso("out-0"), 2);
    // the frame that recorded tx-2's write is torn: back to its begin frame
    let s = l.at(8);
    check!(s, s.recovery().journal_truncated_bytes, 86);
    check!(s, s.left_open(), strs(&["tx-2"]));
    check!(s, s.frames(), (6, 737));
    check!(s, s.txn("tx-2"), "ongoing");
    check!(s, s.txn_partitions("tx-2"), strs(&[]));
    check!(s, (s.hw("out-0"), s.lso("out-0")), (3, 3));
    check!(s, s.ru("out-0"), strs(&["a", "b"]));
    check!(s, s.rc("out-0"), strs(&["a"]));
    let s = l.at(9);
    check!(s, s.txn("tx-2"), "complete_abort");
    check!(s, s.markers("out-0"), vec![(1, "commit")]);
    check!(s, s.rc("out-0"), strs(&["a"]));
    l.snapshot_captioned_frames();
}

#[test]
fn ch08_missing_markers_under_the_books_rules() {
    let l = Lesson::replay("ch08-missing-markers");
    l.errors_only_at(&[]);
    check!(l.at(0), l.at(0).s.rules.as_str(), "minikafka");
    let s = l.at(5);
    check!(s, s.txn_partitions("tx-1"), strs(&["out-0", "out-1"]));
    check!(s, s.pending(), vec![]);
    let s = l.at(6);
    check!(s, s.completed(), strs(&["tx-1"]));
    check!(s, s.resent(), vec![]);
    check!(s, s.txn("tx-1"), "complete_commit");
    check!(
        s,
        (s.markers("out-0"), s.markers("out-1")),
        (vec![], vec![])
    );
    check!(
        s,
        (s.rc("out-0"), s.rc("out-1")),
        (strs(&["d0"]), strs(&["d1"]))
    );
    let s = l.at(8);
    check!(s, s.pending(), vec![(8, "send", vec![2], None)]);
    let s = l.at(9);
    check!(s, s.pending(), vec![]);
    check!(s, s.errors().len(), 1);
    check!(s, s.errors()[0].0, 8);
    check!(s, s.left_open(), strs(&["tx-1"]));
    check!(s, (s.hw("out-0"), s.leo_of("out-0", 1)), (1, 2));
    // the orphan counts as the committed instance's: the book's known limit
    let s = l.at(10);
    check!(s, s.hw("out-0"), 2);
    check!(s, s.rc("out-0"), strs(&["d0", "orphan"]));
    l.snapshot_captioned_frames();
}

#[test]
fn ch08_missing_markers_under_the_kafka_rules() {
    let l = Lesson::replay("ch08-missing-markers-kafka");
    l.errors_only_at(&[]);
    check!(l.at(0), l.at(0).s.rules.as_str(), "kafka");
    let s = l.at(6);
    check!(s, s.completed(), strs(&["tx-1"]));
    check!(
        s,
        s.resent(),
        vec![
            ("tx-1".to_string(), "out-0".to_string(), "commit", 1),
            ("tx-1".to_string(), "out-1".to_string(), "commit", 1)
        ]
    );
    check!(
        s,
        (s.markers("out-0"), s.markers("out-1")),
        (vec![(1, "commit")], vec![(1, "commit")])
    );
    // written by the leader alone
    check!(s, (s.hw("out-0"), s.leo_of("out-0", 1)), (1, 2));
    check!(s, (s.hw("out-1"), s.leo_of("out-1", 2)), (1, 2));
    check!(l.at(8), l.at(8).pending(), vec![(8, "send", vec![2], None)]);
    let s = l.at(9);
    check!(s, s.errors()[0].0, 8);
    check!(s, s.left_open(), strs(&["tx-1"]));
    let s = l.at(10);
    check!(s, s.hw("out-0"), 3);
    check!(s, s.ru("out-0"), strs(&["d0", "orphan"]));
    check!(s, s.rc("out-0"), strs(&["d0"]));
    l.snapshot_captioned_frames();
}

#[test]
fn both_missing_marker_lessons_run_the_same_actions() {
    let book = Recording::load(&path_of("ch08-missing-markers")).unwrap();
    let kafka = Recording::load(&path_of("ch08-missing-markers-kafka")).unwrap();
    let actions = |r: &Recording| r.steps.iter().map(|s| s.action.clone()).collect::<Vec<_>>();
    assert_eq!(actions(&book), actions(&kafka));
    assert_eq!(book.header.cluster, kafka.header.cluster);
    assert_eq!(
        (book.header.rules.as_str(), kafka.header.rules.as_str()),
        ("minikafka", "kafka")
    );
}

#[test]
fn ch08_zombie() {
    let l = Lesson::replay("ch08-zombie");
    l.errors_only_at(&[]);
    check!(l.at(0), l.at(0).s.rules.as_str(), "kafka");
    let s = l.at(2);
    check!(s, s.ru("out-0"), strs(&["zombie"]));
    check!(s, s.rc("out-0"), strs(&[]));
    // the second begin fences and aborts the first instance
    let s = l.at(3);
    check!(s, s.markers("out-0"), vec![(1, "abort")]);
    check!(s, s.txn("tx-1"), "ongoing");
    check!(s, s.frames().0, 5);
    check!(s, s.lso("out-0"), 2);
    let s = l.at(5);
    check!(s, s.txn("tx-1"), "complete_commit");
    check!(s, s.markers("out-0"), vec![(1, "abort"), (3, "commit")]);
    check!(s, s.rc("out-0"), strs(&["fresh"]));
    check!(s, s.ru("out-0"), strs(&["zombie", "fresh"]));
    // under the kafka rules transactional batches carry a producer id
    let ids: Vec<i64> = s
        .part("out-0")
        .batches
        .iter()
        .map(|b| b.producer_id)
        .collect();
    assert!(ids.iter().all(|&id| id >= 0), "{ids:?}");
    l.snapshot_captioned_frames();
}

/// The producer id and epoch of `id` as the state shows them:
/// (producer id, epoch, epoch its end bumped to).
fn producer_of(s: &At<'_>, id: &str) -> (Option<i64>, Option<i32>, Option<i32>) {
    let t = (s.s.transactions.iter())
        .find(|t| t.id == id)
        .unwrap_or_else(|| panic!("{}: no transaction {id}", s.ctx()));
    (t.producer_id, t.producer_epoch, t.next_producer_epoch)
}

/// The fate of the batch at `offset` and the reason the state gives.
fn fate_at(s: &At<'_>, tp: &str, offset: i64) -> (String, String) {
    let b = (s.part(tp).batches.iter())
        .find(|b| b.base_offset == offset)
        .unwrap_or_else(|| panic!("{}: no batch at {offset}", s.ctx()));
    (b.fate.name().to_string(), b.explanation.clone())
}

#[test]
fn ch08_hanging_transaction() {
    let l = Lesson::replay("ch08-hanging-transaction");
    l.errors_only_at(&[]);
    check!(l.at(0), l.at(0).s.rules.as_str(), "kafka");
    let s = l.at(3);
    check!(s, s.markers("out-0"), vec![(1, "commit")]);
    check!(s, producer_of(&s, "tx-1"), (Some(0), Some(0), None));
    check!(s, s.lso("out-0"), 2);
    // the late write lands after the marker, and hangs the LSO there
    let s = l.at(4);
    check!(s, s.log_values("out-0"), strs(&["a", "late"]));
    check!(s, s.lso("out-0"), 2);
    check!(s, s.hw("out-0"), 3);
    let (fate, why) = fate_at(&s, "out-0", 2);
    check!(s, fate, "orphaned");
    assert!(why.contains("hanging transaction"), "{why}");
    let s = l.at(5);
    check!(s, s.lso("out-0"), 2);
    check!(s, s.rc("out-0"), strs(&["a"]));
    check!(s, s.ru("out-0"), strs(&["a", "late", "after"]));
    let (fate, why) = fate_at(&s, "out-0", 3);
    check!(s, fate, "held_back");
    assert!(why.contains("hanging transaction"), "{why}");
    // the transaction timeout aborts it: an ABORT marker, the LSO moves on
    let s = l.at(7);
    check!(s, s.markers("out-0"), vec![(1, "commit"), (4, "abort")]);
    check!(s, s.lso("out-0"), 5);
    check!(s, s.rc("out-0"), strs(&["a", "after"]));
    l.snapshot_captioned_frames();
    l.snapshot_captioned_frames_in(Lang::Zh, "_zh");
}

#[test]
fn ch08_transaction_v2() {
    let l = Lesson::replay("ch08-transaction-v2");
    // the late write is fenced: its step is the one error
    l.errors_only_at(&[4]);
    let Outcome::Error(e) = &l.outcomes[4] else {
        unreachable!()
    };
    assert!(format!("{e:?}").contains("InvalidProducerEpoch"), "{e:?}");
    let s = l.at(3);
    check!(s, producer_of(&s, "tx-1"), (Some(0), Some(0), Some(1)));
    let epochs: Vec<(i64, i32)> = (s.part("out-0").batches.iter())
        .map(|b| (b.base_offset, b.producer_epoch))
        .collect();
    check!(s, epochs, vec![(0, 0), (1, 1)]);
    let s = l.at(4);
    check!(s, s.log_values("out-0"), strs(&["a"]));
    check!(s, s.lso("out-0"), 2);
    let s = l.at(5);
    check!(s, s.rc("out-0"), strs(&["a", "after"]));
    check!(s, s.lso("out-0"), 3);
    // the next transaction goes on with the bumped epoch, and bumps it again
    let s = l.at(6);
    check!(s, producer_of(&s, "tx-1"), (Some(0), Some(1), None));
    let s = l.at(8);
    check!(s, producer_of(&s, "tx-1"), (Some(0), Some(1), Some(2)));
    check!(s, s.markers("out-0"), vec![(1, "commit"), (4, "commit")]);
    check!(s, s.rc("out-0"), strs(&["a", "after", "b"]));
    l.snapshot_captioned_frames();
    l.snapshot_captioned_frames_in(Lang::Zh, "_zh");
}

#[test]
fn ch08_reused_id() {
    let l = Lesson::replay("ch08-reused-id");
    l.errors_only_at(&[]);
    let s = l.at(3);
    check!(s, s.txn("tx-1"), "complete_abort");
    check!(s, s.markers("out-0"), vec![(1, "abort")]);
    let s = l.at(4);
    check!(s, s.txn("tx-1"), "ongoing");
    check!(s, s.frames().0, 5);
    check!(s, s.lso("out-0"), 2);
    let s = l.at(5);
    check!(s, (s.hw("out-0"), s.lso("out-0")), (3, 2));
    let s = l.at(6);
    check!(s, s.txn("tx-1"), "complete_commit");
    check!(s, s.rc("out-0"), strs(&["second-try"]));
    check!(s, s.ru("out-0"), strs(&["first-try", "second-try"]));
    l.snapshot_captioned_frames();
}

// ---------------------------------------------------------------------------
// Chapters 5 and 6

#[test]
fn ch05_high_watermark() {
    let l = Lesson::replay("ch05-high-watermark");
    l.errors_only_at(&[]);
    check!(l.at(1), l.outcomes[1], Outcome::Ok);
    let s = l.at(1);
    check!(
        s,
        (s.hw("t-0"), s.leos("t-0")),
        (0, vec![(1, 1), (2, 0), (3, 0)])
    );
    check!(s, s.ru("t-0"), strs(&[]));
    let s = l.at(2);
    check!(
        s,
        (s.hw("t-0"), s.leos("t-0")),
        (0, vec![(1, 2), (2, 0), (3, 0)])
    );
    // HW = min LEO over the ISR
    let s = l.at(3);
    check!(
        s,
        (s.hw("t-0"), s.leos("t-0")),
        (0, vec![(1, 2), (2, 2), (3, 0)])
    );
    let s = l.at(4);
    check!(
        s,
        (s.hw("t-0"), s.leos("t-0")),
        (2, vec![(1, 2), (2, 2), (3, 2)])
    );
    check!(s, s.ru("t-0"), strs(&["m0", "m1"]));
    let s = l.at(5);
    check!(s, l.outcomes[5], Outcome::Pending);
    check!(s, s.pending(), vec![(5, "produce", vec![2, 3], None)]);
    let s = l.at(6);
    check!(s, s.pending(), vec![(5, "produce", vec![3], None)]);
    check!(s, s.hw("t-0"), 2);
    let s = l.at(7);
    check!(s, s.pending(), vec![]);
    check!(s, s.hw("t-0"), 3);
    check!(s, s.ru("t-0"), strs(&["m0", "m1", "m2"]));
    l.snapshot_captioned_frames();
}

#[test]
fn ch06_isr_shrink() {
    let l = Lesson::replay("ch06-isr-shrink");
    l.errors_only_at(&[13]);
    let fetch_ms = |at: &At, broker: u32| {
        at.part("t-0")
            .replicas
            .iter()
            .find(|r| r.broker == broker)
            .unwrap()
            .ms_since_fetch
    };
    check!(
        l.at(1),
        l.at(1).pending(),
        vec![(1, "produce", vec![2, 3], None)]
    );
    let s = l.at(2);
    check!(s, (s.hw("t-0"), s.isr("t-0")), (1, vec![1, 2, 3]));
    check!(l.at(3), l.at(3).isr("t-0"), vec![1, 2, 3]);
    let s = l.at(4);
    check!(s, (fetch_ms(&s, 2), fetch_ms(&s, 3)), (6000, 6000));
    let s = l.at(5);
    check!(s, (fetch_ms(&s, 2), fetch_ms(&s, 3)), (0, 6000));
    // past the lag time, but judged only at the next fetch round
    let s = l.at(6);
    check!(s, s.s.clock_ms, 12000);
    check!(s, s.isr("t-0"), vec![1, 2, 3]);
    check!(l.at(7), l.at(7).isr("t-0"), vec![1, 2]);
    check!(
        l.at(8),
        l.at(8).pending(),
        vec![(8, "produce", vec![2], None)]
    );
    check!(l.at(9), l.at(9).hw("t-0"), 2);
    check!(l.at(11), l.at(11).isr("t-0"), vec![1, 2]);
    check!(l.at(12), l.at(12).isr("t-0"), vec![1]);
    // below min.insync.replicas: refused before appending
    let s = l.at(13);
    check!(s, s.errors().len(), 1);
    check!(s, s.errors()[0].0, 13);
    assert!(
        s.errors()[0].1.contains("not enough replicas"),
        "{:?}",
        s.errors()
    );
    check!(s, s.leo_of("t-0", 1), 2);
    check!(s, s.log_values("t-0"), strs(&["a", "b"]));
    let s = l.at(14);
    check!(s, s.hw("t-0"), 3);
    check!(s, s.ru("t-0"), strs(&["a", "b", "d"]));
    check!(l.at(16), l.at(16).isr("t-0"), vec![1]);
    let s = l.at(17);
    check!(s, s.isr("t-0"), vec![1, 2, 3]);
    check!(s, s.leos("t-0"), vec![(1, 3), (2, 3), (3, 3)]);
    l.snapshot_captioned_frames();
}

#[test]
fn ch06_leader_failure() {
    let l = Lesson::replay("ch06-leader-failure");
    l.errors_only_at(&[]);
    check!(l.at(2), l.at(2).hw("t-0"), 1);
    let s = l.at(4);
    check!(s, (s.hw("t-0"), s.leos("t-0")), (1, vec![(1, 3), (2, 1)]));
    let s = l.at(5);
    check!(s, s.part("t-0").replicas[0].stopped, true);
    check!(s, s.ru("t-0"), strs(&[]));
    let s = l.at(6);
    check!(
        s,
        (s.part("t-0").leader, s.part("t-0").leader_epoch),
        (2, 1)
    );
    check!(s, (s.hw("t-0"), s.isr("t-0")), (1, vec![2]));
    check!(s, s.ru("t-0"), strs(&["safe"]));
    check!(l.at(7), l.at(7).ru("t-0"), strs(&["safe", "new"]));
    let s = l.at(8);
    check!(s, (s.leo_of("t-0", 1), s.isr("t-0")), (3, vec![2]));
    // the acknowledged acks=1 writes are gone
    let s = l.at(9);
    check!(s, (s.leo_of("t-0", 1), s.isr("t-0")), (2, vec![1, 2]));
    check!(s, s.log_values("t-0"), strs(&["safe", "new"]));
    check!(s, s.rc("t-0"), strs(&["safe", "new"]));
    l.snapshot_captioned_frames();
}

// ---------------------------------------------------------------------------
// Chapter 9 (consumer groups, E15)

#[test]
fn ch09_rebalance() {
    let l = Lesson::replay("ch09-rebalance");
    // IllegalGeneration, NotPartitionOwner, UnknownMember.
    l.errors_only_at(&[9, 10, 16]);
    let codes: Vec<String> = l.states[17].errors.iter().map(|e| e.code.clone()).collect();
    assert_eq!(
        codes,
        ["IllegalGeneration", "NotPartitionOwner", "UnknownMember"]
    );
    let group = |step: usize| l.states[step].groups[0].clone();
    let owned = |step: usize, member: &str| -> Vec<String> {
        group(step)
            .members
            .iter()
            .find(|m| m.member == member)
            .map(|m| m.assignment.clone())
            .unwrap_or_default()
    };
    check!(
        l.at(5),
        (group(5).generation, owned(5, "member-1").len()),
        (1, 4)
    );
    let s = l.at(7);
    check!(s, s.committed("workers", "orders-0"), Some(2));
    check!(s, s.committed("workers", "orders-1"), Some(1));
    check!(
        l.at(8),
        owned(8, "member-2"),
        strs(&["orders-1", "orders-3"])
    );
    check!(
        l.at(8),
        owned(8, "member-1"),
        strs(&["orders-0", "orders-2"])
    );
    // The fenced commits changed nothing.
    check!(l.at(10), l.at(10).committed("workers", "orders-1"), Some(1));
    let polled: Vec<(String, i64)> = group(11).members[1]
        .last_poll
        .iter()
        .map(|p| (p.partition.clone(), p.offset))
        .collect();
    check!(
        l.at(11),
        polled,
        vec![
            ("orders-1".to_string(), 1),
            ("orders-3".to_string(), 0),
            ("orders-3".to_string(), 1)
        ]
    );
    check!(l.at(13), group(13).members[1].deadline_ms, 16_000);
    check!(
        l.at(14),
        (group(14).generation, owned(14, "member-2").len()),
        (3, 4)
    );
    check!(
        l.at(17),
        (group(17).state.as_str(), group(17).generation),
        ("empty", 4)
    );
    check!(l.at(17), l.at(17).committed("workers", "orders-0"), Some(2));
    l.snapshot_captioned_frames();
}

#[test]
fn ch09_rebalance_kafka() {
    let l = Lesson::replay("ch09-rebalance-kafka");
    // Two heartbeats and a poll told RebalanceInProgress.
    l.errors_only_at(&[5, 16, 22]);
    let codes: Vec<String> = l.states[23].errors.iter().map(|e| e.code.clone()).collect();
    assert_eq!(codes, ["RebalanceInProgress"; 3]);
    let group = |step: usize| l.states[step].groups[0].clone();
    let member = |step: usize, name: &str| {
        group(step)
            .members
            .into_iter()
            .find(|m| m.member == name)
            .unwrap_or_else(|| panic!("step {step}: no {name}"))
    };
    let head = |step: usize| {
        let g = group(step);
        (g.state, g.generation, g.leader)
    };
    let leader = Some("member-1".to_string());
    check!(
        l.at(2),
        head(2),
        ("completing_rebalance".into(), 1, leader.clone())
    );
    check!(l.at(3), member(3, "member-1").assignment.len(), 6);
    check!(
        l.at(4),
        head(4),
        ("preparing_rebalance".into(), 1, leader.clone())
    );
    check!(
        l.at(4),
        member(4, "member-2").rebalance,
        Some(MemberRebalance::Rejoined)
    );
    check!(
        l.at(4),
        member(4, "member-1").rebalance,
        Some(MemberRebalance::MustRejoin)
    );
    check!(
        l.at(7),
        head(7),
        ("completing_rebalance".into(), 2, leader.clone())
    );
    // member-2 synced first: it waits, its assignment pending.
    let waiting = member(8, "member-2");
    check!(
        l.at(8),
        (waiting.rebalance, waiting.assignment.len()),
        (Some(MemberRebalance::AwaitsAssignment), 0)
    );
    // The leader's sync: Kafka's RangeAssignor, two each; member-2 answered.
    check!(l.at(9), head(9).0, "stable".to_string());
    check!(l.at(9), member(9, "member-2").rebalance, None);
    check!(l.at(9), member(9, "member-2").client_generation, Some(2));
    check!(
        l.at(9),
        member(9, "member-2").assignment,
        strs(&["orders-2", "orders-3"])
    );
    check!(
        l.at(9),
        member(9, "member-3").rebalance,
        Some(MemberRebalance::OwesSync)
    );
    // member-4's join waits for the rest until 3000 + 10000 ms.
    check!(l.at(16), head(16).0, "preparing_rebalance".to_string());
    check!(l.at(16), member(16, "member-3").deadline_ms, 17_000);
    // The rebalance timeout removes member-3, though its session runs on.
    let names: Vec<String> = group(17).members.iter().map(|m| m.member.clone()).collect();
    check!(l.at(17), names, strs(&["member-1", "member-2", "member-4"]));
    check!(
        l.at(17),
        head(17),
        ("completing_rebalance".into(), 3, leader)
    );
    check!(
        l.at(18),
        member(18, "member-4").assignment,
        strs(&["orders-4", "orders-5"])
    );
    check!(l.at(21), l.at(21).committed("workers", "orders-4"), Some(2));
    check!(l.at(23), member(23, "member-2").rebalance, None);
    l.snapshot_captioned_frames();
}

/// A batch as the compaction lesson checks it: base offset, compacted
/// offsets, (key, value or "null") of its records.
type BatchRecords = (i64, i64, Vec<(String, String)>);

impl At<'_> {
    fn start(&self, tp: &str) -> i64 {
        self.part(tp).log_start_offset
    }

    /// Each batch of the leader's log: (base offset, compacted offsets,
    /// (key, value or "null") of its records).
    fn batch_records(&self, tp: &str) -> Vec<BatchRecords> {
        self.part(tp)
            .batches
            .iter()
            .map(|b| {
                let records = b
                    .records
                    .iter()
                    .map(|r| {
                        (
                            r.key.clone().unwrap_or_default(),
                            r.value.clone().unwrap_or_else(|| "null".into()),
                        )
                    })
                    .collect();
                (b.base_offset, b.compacted, records)
            })
            .collect()
    }
}

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// What waits in producer `p`'s accumulator: (partition, values, bytes,
/// linger deadline) per batch filling.
fn filling(s: &At) -> Vec<(String, Vec<String>, u64, u64)> {
    s.s.accumulators
        .iter()
        .filter(|a| a.producer == "p")
        .flat_map(|a| &a.batches)
        .map(|b| {
            (
                b.partition.clone(),
                values(Some(&b.records)),
                b.bytes,
                b.linger_deadline_ms,
            )
        })
        .collect()
}

/// The base and last offset of each batch of a partition.
fn batch_offsets(s: &At, tp: &str) -> Vec<(i64, i64)> {
    s.part(tp)
        .batches
        .iter()
        .map(|b| (b.base_offset, b.last_offset))
        .collect()
}

#[test]
fn ch03_batching() {
    let l = Lesson::replay("ch03-batching");
    l.errors_only_at(&[]);
    let waiting =
        |tp: &str, vals: &[&str], bytes, until| vec![(tp.to_string(), strs(vals), bytes, until)];
    let s = l.at(1);
    check!(s, filling(&s), waiting("events-0", &["a"], 40, 100));
    check!(s, batch_offsets(&s, "events-0"), vec![]);
    let s = l.at(2);
    check!(s, filling(&s), waiting("events-0", &["a", "b"], 80, 100));
    let s = l.at(3);
    check!(s, (s.s.clock_ms, filling(&s).len()), (50, 1));
    check!(s, batch_offsets(&s, "events-0"), vec![]);
    // Full at batch_size: one batch of three, before the linger ran out.
    let s = l.at(4);
    check!(s, filling(&s), vec![]);
    check!(s, batch_offsets(&s, "events-0"), vec![(0, 2)]);
    check!(s, s.ru("events-0"), strs(&["a", "b", "c"]));
    let s = l.at(5);
    check!(s, filling(&s), waiting("events-1", &["d"], 40, 150));
    // The linger ran out on the clock: a batch of one.
    let s = l.at(6);
    check!(s, (s.s.clock_ms, filling(&s)), (150, vec![]));
    check!(s, batch_offsets(&s, "events-1"), vec![(0, 0)]);
    let s = l.at(7);
    check!(s, filling(&s), waiting("events-0", &["e"], 40, 250));
    let s = l.at(8);
    check!(s, filling(&s), vec![]);
    check!(s, batch_offsets(&s, "events-0"), vec![(0, 2), (3, 3)]);
    check!(s, s.ru("events-0"), strs(&["a", "b", "c", "e"]));
    l.snapshot_captioned_frames();
}

#[test]
fn ch04_retention() {
    let l = Lesson::replay("ch04-retention");
    l.errors_only_at(&[]);
    let s = l.at(7);
    check!(s, (s.s.clock_ms, s.start("events-0")), (3000, 0));
    check!(s, s.ru("events-0"), strs(&[]));
    let s = l.at(8);
    check!(s, s.hw("events-0"), 4);
    check!(s, s.ru("events-0"), strs(&["v0", "v1", "v2", "v3"]));
    let s = l.at(9);
    check!(s, s.start("events-0"), 2);
    check!(s, s.ru("events-0"), strs(&["v2", "v3"]));
    let s = l.at(10);
    check!(s, s.start("events-0"), 3);
    check!(s, s.ru("events-0"), strs(&["v3"]));
    check!(s, s.leos("events-0"), vec![(1, 4), (2, 4)]);
    l.snapshot_captioned_frames();
}

#[test]
fn ch04_compaction() {
    let l = Lesson::replay("ch04-compaction");
    l.errors_only_at(&[]);
    let before = l.at(6).batch_records("state-0");
    check!(l.at(6), before.len(), 5);
    // The crash at before_swap: the live log stands, the replacement is gone.
    let s = l.at(7);
    check!(
        s,
        l.outcomes[7].kind(),
        minikafka::session::OutcomeKind::Recovered
    );
    check!(s, s.batch_records("state-0"), before);
    let repaired = &s.s.last_recovery.as_ref().unwrap().swaps_repaired;
    check!(s, repaired.len(), 1);
    check!(s, repaired[0].repair.as_str(), "discarded_replacement");
    let s = l.at(8);
    check!(
        s,
        s.batch_records("state-0"),
        vec![
            (2, 0, kv(&[("a", "a=2")])),
            (3, 0, kv(&[("b", "null")])),
            (4, 0, kv(&[("c", "c=1")])),
        ]
    );
    check!(s, s.start("state-0"), 0);
    let s = l.at(10);
    check!(
        s,
        s.batch_records("state-0"),
        vec![(2, 0, kv(&[("a", "a=2")])), (4, 0, kv(&[("c", "c=1")]))]
    );
    check!(s, s.ru("state-0"), strs(&["a=2", "c=1"]));
    l.snapshot_captioned_frames();
}
