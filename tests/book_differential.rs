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
            if txn_state(fields).is_some_and(|s| s.starts_with("prepare"))
                || view["pending_ops"]
                    .as_array()?
                    .iter()
                    .any(|p| (p[0] == "commit" || p[0] == "abort") && p[1] == fields["txn"]) =>
        {
            Some("D16 resume a prepared transaction")
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
        // D6: the book journals offsets staged into a finished transaction.
        "send_offsets" => match txn_state(fields) {
            Some(state) if state != "ongoing" => Some("D6 send_offsets after the end"),
            _ => None,
        },
        // D7 (SPEC E14): visibility is per id in the book, so a new
        // instance of a finished id hides (or, once committed, shows) the
        // data of the earlier instances. An active id is refused by both.
        "begin" => txn_state(fields)
            .is_some_and(|s| s.starts_with("complete"))
            .then_some("D7 reuse a finished id"),
        _ => None,
    }
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
fn run(
    book: &mut Book,
    header: &Value,
    mut next: impl FnMut(usize, &Value) -> Option<Value>,
) -> Run {
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
    out.difference = compare(&mk, &book_state, 0, &driver);
    let mut i = 0;
    while out.difference.is_none() {
        let Some(action) = next(i, &mk) else { break };
        i += 1;
        // D13: a follower whose log diverges from the leader's at or below
        // the leader's LEO keeps its divergent batches in the book (it
        // truncates only when longer than the leader), and the book counts
        // their offsets towards the HW and acks=all. From here on the two
        // differ by design: the case ends.
        if mk["divergent"]
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
        if let Some(d) = excepted(&action, &mk) {
            *out.excepted.entry(d).or_default() += 1;
            continue;
        }
        out.applied.push(action.clone());
        let typed: Action = serde_json::from_value(action.clone()).expect("a valid action");
        let reopened = matches!(driver.apply(&typed), Outcome::Recovered(_));
        mk = view_of(&driver);
        let adopt = reopened.then(|| adoption(&mk));
        let book_state = book.step(&action, adopt.as_ref());
        assert!(
            book_state.get("unsupported").is_none(),
            "the generator made a step the book cannot run: {action} ({})",
            book_state["unsupported"]
        );
        out.difference = compare(&mk, &book_state, out.applied.len(), &driver);
    }
    book.close();
    out
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
