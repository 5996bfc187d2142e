//! The producer's accumulator (E17) against the book's own
//! `BatchAccumulator`: seeded random operations (adds of records of the
//! book's estimated sizes at a clock that moves forward, `due_partitions`,
//! `pop`, `partitions`) run on both, through `tests/book/drive_accumulator.py`,
//! and every answer and `total_bytes` must agree. The settings are drawn
//! too, so batches fill, lingers run out and the buffer overflows.
//! Skipped with a message where the book or a Python 3.12+ is absent
//! (a failure under `CI=true`), like `tests/book_differential.rs`.

mod book;

use std::io::Write;
use std::process::{Command, Stdio};

use book::generate::Rng;
use minikafka::engine::TopicPartition;
use minikafka::engine::core::record::Record;
use minikafka::engine::producer::{BatchAccumulator, PendingRecord};
use serde_json::{Value, json};

/// The operations of one case and the accumulator's settings.
fn case(seed: u64) -> Value {
    let mut rng = Rng::new(seed);
    let batch_size = *rng.pick(&[40, 68, 120, 400]);
    let linger_ms = *rng.pick(&[0, 10, 100]);
    let max_buffer_bytes = *rng.pick(&[40, 200, 1000]);
    let mut now = 0u64;
    let mut ops = Vec::new();
    for _ in 0..rng.range(5, 40) {
        if rng.chance(30) {
            now += *rng.pick(&[0, 5, 10, 50]);
        }
        let partition = rng.below(3);
        ops.push(match rng.below(10) {
            0..=5 => json!({"add": {"partition": partition,
                "bytes": 39 + rng.below(40), "now_ms": now}}),
            6 | 7 => json!({"due": now}),
            8 => json!({"pop": partition}),
            _ => json!({"partitions": true}),
        });
    }
    json!({"batch_size": batch_size, "linger_ms": linger_ms,
           "max_buffer_bytes": max_buffer_bytes, "ops": ops})
}

/// mk-tui's answers, in the script's shape.
fn ours(spec: &Value) -> Vec<Value> {
    let n = |k: &str| spec[k].as_u64().unwrap();
    let mut acc =
        BatchAccumulator::new(n("batch_size"), n("linger_ms"), n("max_buffer_bytes")).unwrap();
    let tp = |p: &Value| TopicPartition::new("t", p.as_u64().unwrap() as u32);
    let numbers = |tps: Vec<TopicPartition>| tps.iter().map(|t| t.partition).collect::<Vec<_>>();
    let mut out = Vec::new();
    for op in spec["ops"].as_array().unwrap() {
        let (name, arg) = op.as_object().unwrap().iter().next().unwrap();
        let mut answer = match name.as_str() {
            "add" => {
                let pending = PendingRecord {
                    topic_partition: tp(&arg["partition"]),
                    record: Record::new(None, Some(Vec::new().into()), 0),
                    estimated_bytes: arg["bytes"].as_u64().unwrap(),
                };
                match acc.add(pending, arg["now_ms"].as_u64().unwrap()) {
                    Ok(full) => json!({"full": full}),
                    Err(e) => json!({"error": e.code()}),
                }
            }
            "due" => json!({"due": numbers(acc.due_partitions(arg.as_u64().unwrap()))}),
            "pop" => json!({"popped": acc.pop(&tp(arg)).len()}),
            _ => json!({"partitions": numbers(acc.partitions())}),
        };
        answer["total_bytes"] = json!(acc.total_bytes);
        out.push(answer);
    }
    out
}

/// The book's answers, case by case (one process for all: importing the
/// book is most of its cost).
fn theirs(specs: &[Value]) -> Vec<Vec<Value>> {
    let mut child = Command::new(book::python().unwrap())
        .arg(book::repo().join("tests/book/drive_accumulator.py"))
        .env("MK_BOOK_SRC", book::book_src())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(Value::from(specs.to_vec()).to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "drive_accumulator.py failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// How many seeded cases (`MK_BOOK_CASES`, default 200).
fn cases() -> u64 {
    std::env::var("MK_BOOK_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

#[test]
fn random_operations_answer_as_the_books_batch_accumulator() {
    if let Some(reason) = book::unavailable() {
        eprintln!("skipped: {reason}");
        return;
    }
    let specs: Vec<Value> = (0..cases()).map(case).collect();
    let books = theirs(&specs);
    assert_eq!(books.len(), specs.len());
    let (mut full, mut overflow, mut due) = (0, 0, 0);
    for (seed, (spec, book)) in specs.iter().zip(books).enumerate() {
        let mk = ours(spec);
        for (i, (a, b)) in mk.iter().zip(&book).enumerate() {
            assert_eq!(
                a, b,
                "seed {seed} op {i} ({}): mk-tui vs book",
                spec["ops"][i]
            );
        }
        assert_eq!(mk.len(), book.len(), "seed {seed}");
        full += mk.iter().filter(|a| a["full"] == true).count();
        overflow += mk.iter().filter(|a| a.get("error").is_some()).count();
        due += mk
            .iter()
            .filter(|a| a["due"].as_array().is_some_and(|d| !d.is_empty()))
            .count();
    }
    // The cases reach every outcome, or they prove little.
    assert!(
        full > 0 && overflow > 0 && due > 0,
        "{full} {overflow} {due}"
    );
}
