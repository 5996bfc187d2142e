//! `--rules minikafka` against the book's own code (issue 16).
//!
//! Seeded random recordings (brokers 1-3, topics 1-2, partitions 1-2, at most
//! 25 steps; `tests/book/generate.rs`) are applied step by step to mk-tui's
//! session driver and, through `tests/book/drive_book.py`, to the book's
//! Python code in `../shared/book/src`. After every step the comparable
//! state (`tests/book/compare.rs`) and the bytes of the journal,
//! `offsets.json`, `metadata.json` and every segment must be equal. The
//! first difference that is not a decided one (docs/book-differences.md)
//! fails the test with the seed and a shrunk recording.
//!
//! A third generator (`cleanup_header`, `cleanup_action`) mixes keyed
//! batches with tombstones in small segments, clock steps, `retention` and
//! `compact` (E16), through the book's `RetentionManager` and
//! `LogCompactor`.
//!
//! 300 cases by default; `MK_BOOK_CASES=N` for a long run, `MK_BOOK_SEED=S`
//! to start at another seed. Without Python 3.12+ or the book's code the
//! tests print why and pass, except under `CI=true`, where `.ci/run`
//! provides both and a missing one fails.

mod book;

use std::collections::BTreeMap;

use book::compare::{differences, file_differences, files, mk_view};
use book::generate::{self, Ids, Rng};
use book::{Book, unavailable};
use minikafka::session::recording::Header;
use minikafka::session::{Action, Driver, Outcome, Snapshot};
use serde_json::{Map, Value, json};

/// The decided differences that a step can run into, by their entry in
/// docs/book-differences.md. A step that would is left out of the case
/// (both sides skip it) and counted; each one is pinned by its own test
/// below, which fails if the difference goes away or changes.
fn excepted(action: &Value, view: &Value) -> Option<&'static str> {
    let (name, fields) = action.as_object()?.iter().next()?;
    let txn_state = |fields: &Value| {
        view["transactions"][fields["txn"].as_str().unwrap_or_default()]["state"]
            .as_str()
            .map(str::to_string)
    };
    // A commit or abort of this transaction is still pending: an action on
    // it queued now runs after the end.
    let ending = |fields: &Value| {
        view["pending_ops"].as_array().is_some_and(|ops| {
            ops.iter()
                .any(|p| (p[0] == "commit" || p[0] == "abort") && p[1] == fields["txn"])
        })
    };
    match name.as_str() {
        "promote" => {
            let p = &view["partitions"]
                [format!("{}-{}", fields["topic"].as_str()?, fields["partition"])];
            let leo = &p["replicas"][fields["broker"].to_string()];
            if p["leader"] == fields["broker"] {
                // D5: the book bumps the epoch and truncates the leader to
                // the HW.
                Some("D5 promote the leader")
            } else if leo.as_i64() > p["high_watermark"].as_i64()
                && p["isr"].as_array()?.contains(&fields["broker"])
            {
                // D10: the book truncates the new leader to the HW.
                Some("D10 promote a replica past the HW")
            } else {
                None
            }
        }
        // D15: the book commits every batch of the id, also one the
        // transaction never recorded (its send was dropped by a crash
        // before the ack); mk-tui commits the instance's own writes.
        // D16: a commit or abort of a transaction left in PREPARE_* (its
        // marker failed) resumes in mk-tui; the book refuses it.
        "commit" | "abort"
            if txn_state(fields).is_some_and(|s| s.starts_with("prepare")) || ending(fields) =>
        {
            Some("D16 resume a prepared transaction")
        }
        // D17: an instance whose marker is already in the log (its
        // PREPARE frame was torn away after the marker was written) gets
        // no second marker here; the book writes another.
        "commit" | "abort"
            if {
                let id = fields["txn"].as_str()?;
                let t = &view["transactions"][id];
                t["state"] == "ongoing"
                    && view["partitions"].as_object()?.iter().any(|(name, p)| {
                        let first = t["first_offsets"][name].as_i64();
                        p["batches"].as_array().is_some_and(|bs| {
                            bs.iter().any(|b| {
                                b["transactional_id"] == id
                                    && b["kind"] == "control"
                                    && first.is_some_and(|f| b["base_offset"].as_i64() > Some(f))
                            })
                        })
                    })
            } =>
        {
            Some("D17 a marker already in the log")
        }
        "commit" => {
            let id = fields["txn"].as_str()?;
            let t = &view["transactions"][id];
            let orphan = view["partitions"].as_object()?.iter().any(|(name, p)| {
                let first = t["first_offsets"][name].as_i64();
                p["batches"].as_array().is_some_and(|bs| {
                    bs.iter().any(|b| {
                        b["transactional_id"] == id
                            && b["kind"] == "data"
                            && first.is_none_or(|f| b["base_offset"].as_i64() < Some(f))
                    })
                })
            });
            orphan.then_some("D15 commit a transaction with an unrecorded write")
        }
        // D12: mk-tui elects the most complete replica when recovery cut
        // the leader's log; the book keeps the torn leader.
        "tear" if fields["target"].is_object() && fields["cut_bytes"].is_u64() => {
            let t = &fields["target"];
            let p = &view["partitions"][format!("{}-{}", t["topic"].as_str()?, t["partition"])];
            (p["leader"] == t["broker"] && p["replicas"].as_object()?.len() > 1)
                .then_some("D12 tear the leader's log")
        }
        // D11: the book keeps a last frame that lost only its newline.
        "tear" if fields["target"] == "journal" && fields["cut_bytes"] == 1 => {
            Some("D11 journal frame without its newline")
        }
        // D26: mk-tui's retention deletes only segments wholly below the
        // high watermark; the book's applies to a lone log.
        "retention" => {
            let topic = fields["topic"].as_str()?;
            let past_hw = view["partitions"].as_object()?.iter().any(|(name, p)| {
                name.rsplit_once('-')
                    .is_some_and(|(t, n)| t == topic && names_partition(fields, n))
                    && p["replicas"][p["leader"].to_string()].as_i64()
                        > p["high_watermark"].as_i64()
            });
            past_hw.then_some("D26 retention with records past the HW")
        }
        // D27: a follower that has not fetched all of a compacted log
        // meets an offset gap both sides refuse; mk-tui keeps the HW the
        // batches before the gap earned, the book's fetch round raises
        // before moving it.
        "compact" => {
            let topic = fields["topic"].as_str()?;
            let behind = view["partitions"].as_object()?.iter().any(|(name, p)| {
                name.rsplit_once('-')
                    .is_some_and(|(t, n)| t == topic && names_partition(fields, n))
                    && p["replicas"].as_object().is_some_and(|r| {
                        r.values()
                            .any(|leo| leo != &p["replicas"][p["leader"].to_string()])
                    })
            });
            behind.then_some("D27 compact while a follower is behind")
        }
        // D6: the book journals offsets staged into a finished transaction.
        // (Also one queued behind a pending commit or abort: it runs after.)
        "send_offsets" => match txn_state(fields) {
            Some(state) if state != "ongoing" || ending(fields) => {
                Some("D6 send_offsets after the end")
            }
            _ => None,
        },
        // D7 (SPEC E14): visibility is per id in the book, so a new
        // instance of a finished id hides (or, once committed, shows) the
        // data of the earlier instances. An active id is refused by both.
        // (Also a begin queued behind the id's pending commit or abort.)
        "begin" => (txn_state(fields).is_some_and(|s| s.starts_with("complete")) || ending(fields))
            .then_some("D7 reuse a finished id"),
        _ => None,
    }
}

/// Whether a cleanup action's `partition` (none: every one) is `number`.
fn names_partition(fields: &Value, number: &str) -> bool {
    fields["partition"].is_null() || number.parse::<u64>().ok() == fields["partition"].as_u64()
}

/// D21: the book's `size_bytes` counts one 12-byte index entry more per
/// non-empty segment, so `retention_bytes` can select more segments there.
/// From the segment files of each replica of the partitions a `retention`
/// step names, whether the two counts select differently after any number
/// of segments already chosen by time (conservative: time is not judged).
fn d21_retention_by_bytes(action: &Value, dir: &std::path::Path) -> Option<&'static str> {
    let fields = action.get("retention")?;
    let limit = fields["retention_bytes"].as_u64()?;
    let topic = fields["topic"].as_str()?;
    let prefix = format!("{topic}-");
    for broker in std::fs::read_dir(dir).ok()?.flatten() {
        for part in std::fs::read_dir(broker.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = part.file_name().to_string_lossy().into_owned();
            let Some(number) = name.strip_prefix(&prefix) else {
                continue;
            };
            if !names_partition(fields, number) {
                continue;
            }
            // (base, log + index bytes, non-empty), oldest first.
            let mut segments: Vec<(String, u64, bool)> = Vec::new();
            for file in std::fs::read_dir(part.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let file_name = file.file_name().to_string_lossy().into_owned();
                let Some(base) = file_name.strip_suffix(".log") else {
                    continue;
                };
                let log = file.metadata().map_or(0, |m| m.len());
                let index = std::fs::metadata(part.path().join(format!("{base}.index")))
                    .map_or(0, |m| m.len());
                segments.push((base.to_string(), log + index, log > 0));
            }
            segments.sort();
            let closed = segments.len().saturating_sub(1);
            let select = |extra: u64, from: usize| {
                let mut total: u64 = segments[from..]
                    .iter()
                    .map(|s| s.1 + extra * u64::from(s.2))
                    .sum();
                let mut n = 0;
                for s in &segments[from..closed] {
                    if total <= limit {
                        break;
                    }
                    total -= s.1 + extra * u64::from(s.2);
                    n += 1;
                }
                n
            };
            if (0..=closed).any(|from| select(0, from) != select(12, from)) {
                return Some("D21 retention_bytes near the index bytes");
            }
        }
    }
    None
}

/// How one case went.
struct Run {
    /// The steps applied (excepted ones left out).
    applied: Vec<Value>,
    /// The first difference: step number and what differs.
    difference: Option<(usize, Vec<String>)>,
    excepted: BTreeMap<&'static str, usize>,
}

/// The comparable view of mk-tui's driver now.
fn view_of(driver: &Driver) -> Value {
    mk_view(&serde_json::to_value(Snapshot::of(driver)).unwrap())
}

/// mk-tui's HW and ISR per partition, for the book to adopt after a
/// reopen (D4).
fn adoption(view: &Value) -> Value {
    let parts: Map<String, Value> = view["partitions"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, p)| {
            (
                name.clone(),
                json!({"high_watermark": p["high_watermark"], "isr": p["isr"]}),
            )
        })
        .collect();
    Value::Object(parts)
}

/// Applies the actions `next` gives (given the step number and mk-tui's
/// view) to both sides until it gives none or they differ.
fn run(book: &mut Book, header: &Value, next: impl FnMut(usize, &Value) -> Option<Value>) -> Run {
    run_with(book, header, true, next).0
}

/// Both sides' views after every step (step 0 first), with no decided
/// difference skipped or adopted: what the pinning tests look at.
fn raw(book: &mut Book, header: &Value, steps: &[Value]) -> Vec<(Value, Value)> {
    run_with(book, header, false, |i, _| steps.get(i).cloned()).1
}

/// [`run`], or with `decided` false the raw views of both sides.
fn run_with(
    book: &mut Book,
    header: &Value,
    decided: bool,
    mut next: impl FnMut(usize, &Value) -> Option<Value>,
) -> (Run, Vec<(Value, Value)>) {
    let parsed: Header = serde_json::from_value(header.clone()).expect("a valid header");
    let mut driver = Driver::new(&parsed, None).expect("the header opens");
    let book_dir = tempfile::tempdir().unwrap();
    let mut mk = view_of(&driver);
    let book_state = book.open(header, book_dir.path());
    let mut out = Run {
        applied: Vec::new(),
        difference: None,
        excepted: BTreeMap::new(),
    };
    let compare = |mk: &Value, book_state: &Value, step: usize, driver: &Driver| {
        let mut diffs = differences(mk, book_state);
        diffs.extend(file_differences(
            &files(driver.data_dir()),
            &files(book_dir.path()),
        ));
        if !diffs.is_empty() {
            diffs.push(format!("mk-tui errors: {}", mk["error_messages"]));
            diffs.push(format!("book errors: {}", book_state["error_messages"]));
        }
        (!diffs.is_empty()).then_some((step, diffs))
    };
    let mut views = vec![(mk.clone(), with_files(book_state.clone(), book_dir.path()))];
    views[0].0 = with_files(views[0].0.clone(), driver.data_dir());
    out.difference = compare(&mk, &book_state, 0, &driver).filter(|_| decided);
    let mut i = 0;
    while out.difference.is_none() {
        let Some(action) = next(i, &mk) else { break };
        i += 1;
        // D13: a follower whose log diverges from the leader's at or below
        // the leader's LEO keeps its divergent batches in the book (it
        // truncates only when longer than the leader), and the book counts
        // their offsets towards the HW and acks=all. From here on the two
        // differ by design: the case ends.
        if decided
            && mk["divergent"]
                .as_object()
                .unwrap()
                .values()
                .any(|b| b.as_array().is_some_and(|b| !b.is_empty()))
        {
            *out.excepted
                .entry("D13 a divergent follower (case ended)")
                .or_default() += 1;
            break;
        }
        if let Some(d) = excepted(&action, &mk)
            .or_else(|| d21_retention_by_bytes(&action, driver.data_dir()))
            .filter(|_| decided)
        {
            *out.excepted.entry(d).or_default() += 1;
            continue;
        }
        out.applied.push(action.clone());
        let typed: Action = serde_json::from_value(action.clone()).expect("a valid action");
        let reopened = matches!(driver.apply(&typed), Outcome::Recovered(_));
        mk = view_of(&driver);
        let adopt = (reopened && decided).then(|| adoption(&mk));
        let book_state = book.step(&action, adopt.as_ref());
        assert!(
            book_state.get("unsupported").is_none(),
            "the generator made a step the book cannot run: {action} ({})",
            book_state["unsupported"]
        );
        views.push((
            with_files(mk.clone(), driver.data_dir()),
            with_files(book_state.clone(), book_dir.path()),
        ));
        out.difference = compare(&mk, &book_state, out.applied.len(), &driver).filter(|_| decided);
    }
    book.close();
    (out, views)
}

/// A view with the text of the journal and of each segment (lossy UTF-8)
/// under `files`, for the pinning tests to read.
fn with_files(mut view: Value, dir: &std::path::Path) -> Value {
    let texts: Map<String, Value> = files(dir)
        .into_iter()
        .map(|(name, bytes)| {
            (
                name,
                Value::from(String::from_utf8_lossy(&bytes).into_owned()),
            )
        })
        .collect();
    view["files"] = Value::Object(texts);
    view
}

/// Replays a fixed list of actions.
fn replay(book: &mut Book, header: &Value, steps: &[Value]) -> Run {
    run(book, header, |i, _| steps.get(i).cloned())
}

/// The shortest list found by dropping steps one at a time that still
/// differs (any difference).
fn shrink(book: &mut Book, header: &Value, mut steps: Vec<Value>) -> Vec<Value> {
    let mut changed = true;
    while changed {
        changed = false;
        let mut i = steps.len();
        while i > 0 {
            i -= 1;
            let mut fewer = steps.clone();
            fewer.remove(i);
            if replay(book, header, &fewer).difference.is_some() {
                steps = fewer;
                changed = true;
            }
        }
    }
    steps
}

/// A recording's JSON Lines text.
fn recording(header: &Value, steps: &[Value]) -> String {
    let mut text = format!("{header}\n");
    for (i, s) in steps.iter().enumerate() {
        text.push_str(&format!("{}\n", json!({"at_ms": i * 1000, "action": s})));
    }
    text
}

/// One generated case: its header and its run.
fn generated(book: &mut Book, seed: u64) -> (Value, Run) {
    let mut rng = Rng::new(seed);
    let header = generate::header(&mut rng);
    let length = rng.range(1, 25);
    let mut ids = Ids {
        brokers: header["cluster"]["brokers"].as_array().unwrap().len(),
        ..Ids::default()
    };
    let run = run(book, &header, |i, view| {
        (i < length).then(|| generate::action(&mut rng, view, &mut ids, i + 1))
    });
    (header, run)
}

fn cases() -> u64 {
    std::env::var("MK_BOOK_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

#[test]
fn random_recordings_do_what_the_book_does() {
    if let Some(reason) = unavailable() {
        eprintln!("skipped: {reason}");
        return;
    }
    let first: u64 = std::env::var("MK_BOOK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut book = Book::start();
    let mut excepted: BTreeMap<&str, usize> = BTreeMap::new();
    let mut steps = 0;
    for seed in first..first + cases() {
        let (header, run) = generated(&mut book, seed);
        steps += run.applied.len();
        for (d, n) in &run.excepted {
            *excepted.entry(d).or_default() += n;
        }
        if let Some((step, diffs)) = run.difference {
            let shrunk = shrink(&mut book, &header, run.applied.clone());
            let again = replay(&mut book, &header, &shrunk);
            let (shrunk_step, shrunk_diffs) = again.difference.unwrap_or((step, diffs.clone()));
            panic!(
                "seed {seed}: mk-tui and the book differ at step {step}:\n  {}\n\
                 shrunk to {} steps, differing at step {shrunk_step}:\n  {}\n\
                 recording (save as a .jsonl; `python3 tests/book/drive_book.py FILE` \
                 prints the book's states):\n{}",
                diffs.join("\n  "),
                shrunk.len(),
                shrunk_diffs.join("\n  "),
                recording(&header, &shrunk)
            );
        }
    }
    eprintln!(
        "{} cases from seed {first}, {steps} steps compared; steps left out as decided differences: {excepted:?}",
        cases()
    );
    assert!(steps > cases() as usize, "the cases ran steps");
}

/// One generated consumer-group case (E15): its header and its run.
fn generated_groups(book: &mut Book, seed: u64) -> (Value, Run) {
    let mut rng = Rng::new(seed);
    let header = generate::group_header(&mut rng);
    let length = rng.range(5, 30);
    let run = run(book, &header, |i, view| {
        (i < length).then(|| generate::group_action(&mut rng, view, i + 1))
    });
    (header, run)
}

/// The book's `GroupCoordinator` and `Consumer` against mk-tui's: joins,
/// leaves, heartbeats and commits (some at a stale generation), polls,
/// expiry as the clock moves, crashes; after every step each group's
/// state, generation, members' assignments, deadlines, positions and last
/// polls, the committed offsets and every file must be equal.
/// `MK_BOOK_GROUP_CASES=N` for more than 150.
#[test]
fn random_group_recordings_do_what_the_books_coordinator_does() {
    if let Some(reason) = unavailable() {
        eprintln!("skipped: {reason}");
        return;
    }
    let cases: u64 = std::env::var("MK_BOOK_GROUP_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let mut book = Book::start();
    let (mut steps, mut group_steps) = (0, 0);
    for seed in 0..cases {
        let (header, run) = generated_groups(&mut book, seed);
        steps += run.applied.len();
        group_steps += run
            .applied
            .iter()
            .filter(|a| {
                let name = a.as_object().unwrap().keys().next().unwrap();
                name.contains("group") || name == "poll" || name == "heartbeat"
            })
            .count();
        if let Some((step, diffs)) = run.difference {
            let shrunk = shrink(&mut book, &header, run.applied.clone());
            panic!(
                "group seed {seed}: mk-tui and the book differ at step {step}:\n  {}\n\
                 shrunk recording:\n{}",
                diffs.join("\n  "),
                recording(&header, &shrunk)
            );
        }
    }
    eprintln!("{cases} group cases, {steps} steps compared, {group_steps} of them group steps");
    assert!(group_steps > cases as usize, "the cases ran group steps");
}

/// One generated cleanup case (E16): its header and its run.
fn generated_cleanup(book: &mut Book, seed: u64) -> (Value, Run) {
    let mut rng = Rng::new(seed);
    let header = generate::cleanup_header(&mut rng);
    let length = rng.range(10, 40);
    let run = run(book, &header, |i, view| {
        (i < length).then(|| generate::cleanup_action(&mut rng, view, i + 1))
    });
    (header, run)
}

/// The book's `RetentionManager` and `LogCompactor` against mk-tui's:
/// batches of keyed records and tombstones in small segments, fetch
/// rounds, clock steps, retention by time and bytes, compaction (some
/// crashed at `before_swap`), crashes; after every step each partition's
/// log start, records (offset, key, value), LEOs and high watermark, and
/// every segment's bytes must be equal. `MK_BOOK_CLEANUP_CASES=N` for more
/// than 150.
#[test]
fn random_cleanup_recordings_do_what_the_books_retention_and_compactor_do() {
    if let Some(reason) = unavailable() {
        eprintln!("skipped: {reason}");
        return;
    }
    let cases: u64 = std::env::var("MK_BOOK_CLEANUP_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let mut book = Book::start();
    let mut excepted: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut steps, mut retention, mut compaction) = (0, 0, 0);
    for seed in 0..cases {
        let (header, run) = generated_cleanup(&mut book, seed);
        steps += run.applied.len();
        for a in &run.applied {
            match a.as_object().unwrap().keys().next().unwrap().as_str() {
                "retention" => retention += 1,
                "compact" => compaction += 1,
                _ => {}
            }
        }
        for (d, n) in &run.excepted {
            *excepted.entry(d).or_default() += n;
        }
        if let Some((step, diffs)) = run.difference {
            let shrunk = shrink(&mut book, &header, run.applied.clone());
            panic!(
                "cleanup seed {seed}: mk-tui and the book differ at step {step}:\n  {}\n\
                 shrunk recording:\n{}",
                diffs.join("\n  "),
                recording(&header, &shrunk)
            );
        }
    }
    eprintln!(
        "{cases} cleanup cases, {steps} steps compared, {retention} retention and \
         {compaction} compact steps; left out as decided differences: {excepted:?}"
    );
    assert!(
        retention > cases as usize / 2,
        "the cases ran retention steps"
    );
    assert!(
        compaction > cases as usize / 2,
        "the cases ran compact steps"
    );
}

// ---- each decided difference, pinned on both sides --------------------
//
// Each test runs a short recording on both sides with nothing skipped or
// adopted and asserts the difference docs/book-differences.md describes:
// if either side changes, the entry (and the exception above) must be
// revisited.

fn book_or_skip() -> Option<Book> {
    match unavailable() {
        Some(reason) => {
            eprintln!("skipped: {reason}");
            None
        }
        None => Some(Book::start()),
    }
}

fn header(brokers: &[u32], topics: &[(&str, u32, u32)], config: Value) -> Value {
    json!({
        "mk_recording": 1, "rules": "minikafka",
        "cluster": {
            "brokers": brokers,
            "topics": topics.iter().map(|(n, p, rf)| json!({"name": n, "partitions": p, "replication_factor": rf})).collect::<Vec<_>>(),
            "config": config,
        },
    })
}

fn actions(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The last step's views, mk-tui's then the book's.
fn last(views: &[(Value, Value)]) -> (&Value, &Value) {
    let (mk, book) = views.last().unwrap();
    (mk, book)
}

#[test]
fn d1_keyless_records_go_round_robin_here_and_to_partition_0_in_a_book_transaction() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1], &[("out", 2, 1)], json!({}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"begin":{"txn":"t"}}
        {"send":{"txn":"t","topic":"out","value":"x"}}
        {"send":{"txn":"t","topic":"out","value":"y"}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    assert_eq!(
        mk["transactions"]["t"]["partitions"],
        json!(["out-0", "out-1"])
    );
    assert_eq!(bk["transactions"]["t"]["partitions"], json!(["out-0"]));
}

#[test]
fn d3_transaction_partitions_are_sorted_so_journals_are_byte_identical() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1], &[("out", 2, 1)], json!({}));
    let steps = actions(
        r#"
        {"begin":{"txn":"t"}}
        {"send":{"txn":"t","topic":"out","partition":1,"value":"x"}}
        {"send":{"txn":"t","topic":"out","partition":0,"value":"y"}}
        {"commit":{"txn":"t","crash_after":"marker:1"}}
    "#,
    );
    let run = replay(&mut book, &h, &steps);
    assert_eq!(run.difference, None);
    let views = raw(&mut book, &h, &steps);
    let (mk, bk) = last(&views);
    assert_eq!(
        mk["files"]["transactions.journal"],
        bk["files"]["transactions.journal"]
    );
    // marker:1 cut after the out-0 marker: the book's sorted order.
    let control = |v: &Value, p: &str| {
        v["partitions"][p]["batches"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["kind"] == "control")
    };
    assert!(control(mk, "out-0") && !control(mk, "out-1"));
}

#[test]
fn d4_a_reopen_keeps_the_checkpointed_hw_and_every_replica_in_the_isr_here() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1, 2], &[("t", 1, 2)], json!({"min_insync_replicas": 2}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"produce":{"topic":"t","partition":0,"value":"a","acks":"1"}}
        {"crash":{}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    assert_eq!(mk["partitions"]["t-0"]["isr"], json!([1, 2]));
    assert_eq!(bk["partitions"]["t-0"]["isr"], json!([1]));
}

#[test]
fn d5_promoting_the_leader_is_refused_here_and_bumps_the_epoch_in_the_book() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1, 2], &[("t", 1, 2)], json!({}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"promote":{"topic":"t","partition":0,"broker":1}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    assert_eq!(
        (
            mk["errors"].clone(),
            mk["partitions"]["t-0"]["leader_epoch"].clone()
        ),
        (json!(1), json!(0))
    );
    assert_eq!(
        (
            bk["errors"].clone(),
            bk["partitions"]["t-0"]["leader_epoch"].clone()
        ),
        (json!(0), json!(1))
    );
}

#[test]
fn d6_send_offsets_after_a_commit_is_refused_here_and_journaled_by_the_book() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1], &[("t", 1, 1)], json!({}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"begin":{"txn":"t"}}
        {"commit":{"txn":"t"}}
        {"send_offsets":{"txn":"t","group":"g","offsets":[{"topic":"t","partition":0,"offset":3}]}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    assert_eq!(mk["errors"], json!(1));
    assert_eq!(mk["transactions"]["t"]["staged_offsets"], json!({}));
    assert_eq!(bk["errors"], json!(0));
    assert_eq!(
        bk["transactions"]["t"]["staged_offsets"],
        json!({"g": {"t-0": 3}})
    );
    assert_eq!(
        bk["committed_offsets"],
        json!({}),
        "staged in a finished transaction, never published"
    );
}

#[test]
fn d7_a_reused_id_does_not_show_an_aborted_instance_here() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1], &[("t", 1, 1)], json!({}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"begin":{"txn":"t"}}
        {"send":{"txn":"t","topic":"t","partition":0,"value":"aborted"}}
        {"abort":{"txn":"t"}}
        {"begin":{"txn":"t"}}
        {"send":{"txn":"t","topic":"t","partition":0,"value":"kept"}}
        {"commit":{"txn":"t"}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    assert_eq!(mk["partitions"]["t-0"]["read_committed"], json!(["kept"]));
    assert_eq!(
        bk["partitions"]["t-0"]["read_committed"],
        json!(["aborted", "kept"])
    );
}

#[test]
fn d8_the_journal_exists_empty_from_the_start_here() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1], &[("t", 1, 1)], json!({}));
    let views = raw(&mut book, &h, &[]);
    let (mk, bk) = last(&views);
    assert!(
        mk["files"].get("transactions.journal").is_none(),
        "empty files are left out"
    );
    assert!(bk["files"].get("transactions.journal").is_none());
}

#[test]
fn d11_a_last_journal_frame_without_its_newline_is_torn_here_and_kept_by_the_book() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1], &[("t", 1, 1)], json!({}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"begin":{"txn":"t"}}
        {"tear":{"target":"journal","cut_bytes":1}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    assert_eq!(mk["transactions"], json!({}));
    assert_eq!(bk["transactions"]["t"]["state"], json!("ongoing"));
}

#[test]
fn d12_a_torn_leader_is_replaced_here_and_kept_by_the_book() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1, 2], &[("a", 1, 2)], json!({}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"produce":{"topic":"a","partition":0,"value":"v1","acks":"1"}}
        {"replicate":{}}
        {"tear":{"target":{"topic":"a","partition":0,"broker":1},"cut_bytes":41}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    assert_eq!(mk["partitions"]["a-0"]["leader"], json!(2));
    assert_eq!(mk["partitions"]["a-0"]["read_uncommitted"], json!(["v1"]));
    assert_eq!(bk["partitions"]["a-0"]["leader"], json!(1));
    assert_eq!(bk["partitions"]["a-0"]["batches"], json!([]));
}

#[test]
fn d13_a_divergent_follower_is_truncated_here_and_kept_by_the_book() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1, 2], &[("a", 1, 2)], json!({}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"produce":{"topic":"a","partition":0,"value":"old","acks":"all"}}
        {"promote":{"topic":"a","partition":0,"broker":2}}
        {"produce":{"topic":"a","partition":0,"value":"new","acks":"1"}}
        {"replicate":{"topic":"a","partition":0}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    let log = |v: &Value| {
        v["files"]["broker-1/a-0/00000000000000000000.log"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(log(mk).contains("new") && !log(mk).contains("old"));
    assert!(log(bk).contains("old") && !log(bk).contains("new"));
}

#[test]
fn d15_a_write_a_crash_dropped_before_its_ack_is_never_committed_here() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1, 2], &[("a", 1, 2)], json!({}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"begin":{"txn":"t"}}
        {"send":{"txn":"t","topic":"a","partition":0,"value":"dropped"}}
        {"crash":{}}
        {"commit":{"txn":"t"}}
        {"replicate":{}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    assert_eq!(mk["partitions"]["a-0"]["read_committed"], json!([]));
    assert_eq!(
        bk["partitions"]["a-0"]["read_committed"],
        json!(["dropped"])
    );
}

#[test]
fn d16_a_commit_or_abort_left_prepared_resumes_here_and_is_refused_by_the_book() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1, 2], &[("a", 1, 2)], json!({}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"begin":{"txn":"t"}}
        {"send":{"txn":"t","topic":"a","partition":0,"value":"x"}}
        {"replicate":{}}
        {"abort":{"txn":"t"}}
        {"promote":{"topic":"a","partition":0,"broker":2}}
        {"abort":{"txn":"t"}}
        {"replicate":{}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    assert_eq!(mk["transactions"]["t"]["state"], json!("complete_abort"));
    assert_eq!(bk["transactions"]["t"]["state"], json!("prepare_abort"));
}

// ---- what the book does, and so do we (issue 16's findings, fixed) ------

#[test]
fn isr_fixes_the_issue_found_agree_with_the_book() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    // acks=all, a clock move past the lag time, then a replicate: pending,
    // then complete (no NotEnoughReplicasAfterAppend).
    let h = header(
        &[1, 2],
        &[("t", 1, 2)],
        json!({"min_insync_replicas": 2, "replica_lag_time_ms": 1000}),
    );
    let steps = actions(
        r#"
        {"produce":{"topic":"t","partition":0,"value":"a","acks":"all"}}
        {"advance_clock":{"ms":1500}}
        {"replicate":{}}
    "#,
    );
    assert_eq!(replay(&mut book, &h, &steps).difference, None);
    let views = raw(&mut book, &h, &steps);
    assert_eq!(views[2].0["pending"], json!(1));
    assert_eq!(last(&views).0["pending"], json!(0));
    assert_eq!(last(&views).0["errors"], json!(0));
    // Offset lag: three acks=1 appends keep the ISR [1,2] and the HW 0.
    let h = header(
        &[1, 2],
        &[("t", 1, 2)],
        json!({"replica_lag_max_offsets": 2}),
    );
    let steps = actions(
        r#"
        {"produce":{"topic":"t","partition":0,"value":"a"}}
        {"produce":{"topic":"t","partition":0,"value":"b"}}
        {"produce":{"topic":"t","partition":0,"value":"c"}}
    "#,
    );
    assert_eq!(replay(&mut book, &h, &steps).difference, None);
    let views = raw(&mut book, &h, &steps);
    assert_eq!(last(&views).0["partitions"]["t-0"]["isr"], json!([1, 2]));
    assert_eq!(
        last(&views).0["partitions"]["t-0"]["high_watermark"],
        json!(0)
    );
    // Right after a promotion the new leader is alone in the ISR: acks=all
    // with min ISR 2 is refused.
    let h = header(&[1, 2], &[("t", 1, 2)], json!({"min_insync_replicas": 2}));
    let steps = actions(
        r#"
        {"promote":{"topic":"t","partition":0,"broker":2}}
        {"produce":{"topic":"t","partition":0,"value":"a","acks":"all"}}
    "#,
    );
    assert_eq!(replay(&mut book, &h, &steps).difference, None);
    assert_eq!(last(&raw(&mut book, &h, &steps)).0["errors"], json!(1));
}

#[test]
fn two_completions_in_one_step_journal_in_the_books_order() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(
        &[1, 2, 3],
        &[("a", 2, 2), ("b", 2, 2)],
        json!({"replica_lag_time_ms": 1000}),
    );
    let steps = actions(
        r#"
        {"begin":{"txn":"tx-1"}}
        {"send":{"partition":1,"topic":"b","txn":"tx-1","value":"v13"}}
        {"begin":{"txn":"tx-2"}}
        {"send":{"partition":1,"topic":"a","txn":"tx-2","value":"v20"}}
        {"abort":{"crash_after":"markers","txn":"tx-2"}}
        {"replicate":{}}
    "#,
    );
    assert_eq!(replay(&mut book, &h, &steps).difference, None);
}

#[test]
fn d17_a_commit_whose_marker_is_already_logged_writes_no_second_one_here() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1, 2], &[("a", 2, 2)], json!({}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"begin":{"txn":"t"}}
        {"send":{"txn":"t","topic":"a","partition":0,"value":"v"}}
        {"replicate":{}}
        {"commit":{"txn":"t"}}
        {"tear":{"target":"journal","cut_bytes":18}}
        {"commit":{"txn":"t"}}
        {"replicate":{}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    let markers = |v: &Value| {
        v["partitions"]["a-0"]["batches"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["kind"] == "control")
            .count()
    };
    assert_eq!((markers(mk), markers(bk)), (1, 2));
}

#[test]
fn d26_retention_keeps_what_the_hw_has_not_passed_here_and_the_book_deletes_it() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    // Two replicas, the follower never fetches: the HW stays at 0.
    let h = header(&[1, 2], &[("a", 1, 2)], json!({"segment_max_bytes": 150}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"produce":{"topic":"a","partition":0,"records":[{"key":"k0","value":"v1"},{"key":"k1","value":"v2"}]}}
        {"produce":{"topic":"a","partition":0,"records":[{"key":"k0","value":"v3"},{"key":"k1","value":"v4"}]}}
        {"produce":{"topic":"a","partition":0,"records":[{"key":"k0","value":"v5"},{"key":"k1","value":"v6"}]}}
        {"advance_clock":{"ms":1000}}
        {"retention":{"topic":"a","partition":0,"retention_ms":0}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    let start = |v: &Value| v["partitions"]["a-0"]["log_start_offset"].as_i64().unwrap();
    assert_eq!(mk["partitions"]["a-0"]["high_watermark"], json!(0));
    assert_eq!(start(mk), 0, "nothing below the HW: nothing deleted here");
    assert!(
        start(bk) > 0,
        "the book deletes closed segments past the HW"
    );
}

#[test]
fn d27_a_follower_meeting_a_compacted_gap_keeps_the_hw_it_earned_here_and_not_in_the_book() {
    let Some(mut book) = book_or_skip() else {
        return;
    };
    let h = header(&[1, 2], &[("a", 1, 2)], json!({"segment_max_bytes": 250}));
    let views = raw(
        &mut book,
        &h,
        &actions(
            r#"
        {"produce":{"acks":"all","topic":"a","partition":0,"records":[{"key":"k3","value":"v2.0"},{"key":"k1","value":"v2.1"}]}}
        {"produce":{"acks":"all","topic":"a","partition":0,"records":[{"key":"k1","value":"v6.0"}]}}
        {"produce":{"acks":"1","topic":"a","partition":0,"records":[{"key":"k1","value":"v7.0"},{"key":"k0","value":"v7.1"}]}}
        {"compact":{"topic":"a","partition":0,"delete_retention_ms":3000}}
        {"replicate":{}}
    "#,
        ),
    );
    let (mk, bk) = last(&views);
    // Both refuse the batch after the gap (a book bug both keep) ...
    assert_eq!(
        (mk["errors"].clone(), bk["errors"].clone()),
        (json!(1), json!(1))
    );
    // ... and both followers hold the batch before it ...
    assert_eq!(mk["partitions"]["a-0"]["replicas"]["2"], json!(2));
    assert_eq!(bk["partitions"]["a-0"]["replicas"]["2"], json!(2));
    // ... which moved the HW here only.
    assert_eq!(mk["partitions"]["a-0"]["high_watermark"], json!(2));
    assert_eq!(bk["partitions"]["a-0"]["high_watermark"], json!(0));
}
