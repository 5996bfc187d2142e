//! What `mk-tui serve` promises a client across a restart (issue 25 items
//! 1, 2 and 6): real confluent-kafka clients stay alive while the server
//! is killed with SIGKILL (`kill -9`) and restarted on the same data
//! directory and ports, as a Kafka client outlives a broker's restart. A
//! client keeps its producer id, epoch, sequence numbers and transaction;
//! the server must answer them as Kafka would: no acknowledged record lost
//! or doubled, no client wedged, every transaction wholly visible or
//! wholly invisible at read_committed.
//!
//! The clients are tests/clients/ck_restart_*.py, driven line by line
//! ([`Script`]); every wait is bounded and every process is killed when
//! the test ends, passed or not.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::python;
use crate::script::Script;
use crate::server::Server;

pub const MINUTE: Duration = Duration::from_secs(60);

/// A record as a client was told or read it: topic, partition, offset,
/// value.
pub type Record = (String, i32, i64, String);

/// The `delivered TOPIC PARTITION OFFSET VALUE` lines among `lines`.
pub fn delivered(lines: &[String]) -> Vec<Record> {
    with_prefix(lines, "delivered")
}

fn with_prefix(lines: &[String], prefix: &str) -> Vec<Record> {
    lines
        .iter()
        .filter_map(|l| {
            let w: Vec<&str> = l.splitn(5, ' ').collect();
            match w[..] {
                [p, t, part, o, v] if p == prefix => Some((
                    t.into(),
                    part.parse().unwrap(),
                    o.parse().unwrap(),
                    v.into(),
                )),
                _ => None,
            }
        })
        .collect()
}

/// Lines starting with `prefix` (a word).
pub fn lines_of<'a>(lines: &'a [String], prefix: &str) -> Vec<&'a String> {
    lines
        .iter()
        .filter(|l| l.split(' ').next() == Some(prefix))
        .collect()
}

/// The fatal errors a script reported (`error NAME fatal ...`).
pub fn fatal(lines: &[String]) -> Vec<&String> {
    lines
        .iter()
        .filter(|l| l.starts_with("error ") && l.split(' ').nth(2) == Some("fatal"))
        .collect()
}

/// Every record of `topics` (name, partitions) from the beginning to the
/// end at `isolation`, as a confluent-kafka consumer reads it.
pub fn read_all(py: &Path, boot: &str, isolation: &str, topics: &[(&str, u32)]) -> Vec<Record> {
    let (read, unended) = read_to_end(py, boot, isolation, topics);
    assert!(
        unended.is_empty(),
        "the reader did not reach the end of {unended:?} within 60 s"
    );
    read
}

/// The same, with the partitions whose end the reader did not reach
/// within 60 s (at read_committed: a transaction left open holds the LSO
/// back) instead of a panic.
pub fn read_to_end(
    py: &Path,
    boot: &str,
    isolation: &str,
    topics: &[(&str, u32)],
) -> (Vec<Record>, Vec<String>) {
    let mut args = vec![boot.to_string(), isolation.into(), "once".into()];
    args.extend(topics.iter().map(|(t, n)| format!("{t}:{n}")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut reader = Script::start(py, "ck_restart_read.py", &args);
    let out = reader.finish(Duration::from_secs(90));
    let ends: Vec<&String> = lines_of(&out, "end");
    let unended = topics
        .iter()
        .flat_map(|(t, n)| (0..*n).map(move |p| format!("{t}-{p}")))
        .filter(|tp| {
            let (t, p) = tp.rsplit_once('-').unwrap();
            !ends.contains(&&format!("end {t} {p}"))
        })
        .collect();
    (with_prefix(&out, "read"), unended)
}

/// What became of the acknowledged records in what was read back.
#[derive(Debug, Default)]
pub struct Audit {
    pub acknowledged: usize,
    pub read: usize,
    /// Acknowledged, and not read at the offset it was acknowledged at.
    pub lost: Vec<Record>,
    /// Values read more than once (value, times).
    pub doubled: Vec<(String, usize)>,
}

impl Audit {
    pub fn of(acked: &[Record], read: &[Record]) -> Self {
        let at: BTreeMap<(&str, i32, i64), &str> = read
            .iter()
            .map(|(t, p, o, v)| ((t.as_str(), *p, *o), v.as_str()))
            .collect();
        let mut times: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, _, _, v) in read {
            *times.entry(v).or_default() += 1;
        }
        Audit {
            acknowledged: acked.len(),
            read: read.len(),
            lost: acked
                .iter()
                .filter(|(t, p, o, v)| at.get(&(t.as_str(), *p, *o)) != Some(&v.as_str()))
                .cloned()
                .collect(),
            doubled: times
                .into_iter()
                .filter(|(_, n)| *n > 1)
                .map(|(v, n)| (v.to_string(), n))
                .collect(),
        }
    }

    pub fn ok(&self) -> bool {
        self.lost.is_empty() && self.doubled.is_empty()
    }

    /// One line of figures, and the first few lost and doubled records.
    pub fn summary(&self) -> String {
        format!(
            "{} acknowledged, {} read, {} lost {:?}, {} read twice or more {:?}",
            self.acknowledged,
            self.read,
            self.lost.len(),
            &self.lost[..self.lost.len().min(5)],
            self.doubled.len(),
            &self.doubled[..self.doubled.len().min(5)],
        )
    }
}

/// The producer ids and epochs a script reported (`ids PID EPOCH`).
fn ids(lines: &[String]) -> Vec<(i64, i16)> {
    lines
        .iter()
        .filter_map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            match w[..] {
                ["ids", pid, epoch] => Some((pid.parse().unwrap(), epoch.parse().unwrap())),
                _ => None,
            }
        })
        .collect()
}

/// 1a. Producer ids are never reused. Producer A is given an id and
/// writes to t-0 before the restart; after it, producer B is given an id
/// and writes to t-0 and t-1; then A writes 5 more records to each. Every
/// record either was told it was written is in the log at the offset it
/// was told, once. (On a server that gives out its ids from 1000 again
/// after the restart, B gets A's id, and A's first records on t-1 look
/// like retries of B's: acknowledged at B's offsets and never written.)
#[test]
fn producer_ids_are_never_reused_across_a_restart() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start_restartable(&[]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "2", "3"]);
    let mut a = Script::start(&py, "ck_restart_producer.py", &[&boot, "A"]);
    a.run("produce t 0 5 a-before-", MINUTE);
    server.kill();
    server.restart();
    let mut b = Script::start(&py, "ck_restart_producer.py", &[&boot, "B"]);
    b.run("produce t 0 5 b-p0-", MINUTE);
    b.run("produce t 1 5 b-p1-", MINUTE);
    a.run("produce t 0 5 a-after-p0-", MINUTE);
    a.run("produce t 1 5 a-after-p1-", MINUTE);
    let (a_lines, b_lines) = (a.all(), b.all());
    let mut acked = delivered(&a_lines);
    acked.extend(delivered(&b_lines));
    let read = read_all(&py, &boot, "read_committed", &[("t", 2)]);
    let audit = Audit::of(&acked, &read);
    let (a_ids, b_ids) = (ids(&a_lines), ids(&b_lines));
    println!(
        "producer ids: A {a_ids:?}, B {b_ids:?}; {}",
        audit.summary()
    );
    let not_delivered: Vec<&String> = a_lines
        .iter()
        .chain(&b_lines)
        .filter(|l| l.starts_with("failed") || l.starts_with("left"))
        .collect();
    assert!(
        not_delivered.is_empty(),
        "every record delivered: {not_delivered:?}"
    );
    assert_eq!(acked.len(), 25);
    assert!(
        audit.ok(),
        "every acknowledged record in the log once: {}\nlog:\n{}",
        audit.summary(),
        tail(&server.log(), 30)
    );
    assert!(
        a_ids
            .iter()
            .all(|(pid, _)| b_ids.iter().all(|(other, _)| other != pid)),
        "B was not given A's producer id: A {a_ids:?}, B {b_ids:?}"
    );
    assert_eq!(audit.read, 25, "nothing else in the log");
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The time of the first line after `since` that `accept` takes.
pub fn first_after(
    script: &mut Script,
    since: Instant,
    accept: impl Fn(&str) -> bool,
) -> Option<Instant> {
    script.poll();
    script
        .seen
        .iter()
        .find(|(at, l)| *at > since && accept(l))
        .map(|(at, _)| *at)
}

/// Waits (at most `bound`) until each script has said, after `since`, a
/// line `accept` takes; the indexes of those that did not.
pub fn progress_after(
    scripts: &mut [Script],
    since: Instant,
    bound: Duration,
    accept: impl Fn(&str) -> bool + Copy,
) -> Vec<usize> {
    let deadline = since + bound;
    loop {
        let stuck: Vec<usize> = (0..scripts.len())
            .filter(|i| first_after(&mut scripts[*i], since, accept).is_none())
            .collect();
        if stuck.is_empty() || Instant::now() > deadline {
            return stuck;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// 1b. Idempotent producers survive a restart: three idempotent producers
/// write without a pause while the server is killed and restarted. None
/// fails fatally (the server forgetting the ids it gave out makes each
/// one's next batch UNKNOWN_PRODUCER_ID, fatal to librdkafka), each
/// delivers again within 30 s of the restart, and every acknowledged
/// record is read back once, at the offset it was acknowledged at.
#[test]
fn idempotent_producers_keep_producing_across_a_kill_and_restart() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start_restartable(&[]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "3", "3"]);
    let mut producers: Vec<Script> = (0..3)
        .map(|i| {
            let name = format!("p{i}");
            Script::start(
                &py,
                "ck_restart_idempotent.py",
                &[&boot, "t", "3", &name, "50"],
            )
        })
        .collect();
    let started = Instant::now();
    let before = progress_after(&mut producers, started, Duration::from_secs(30), |l| {
        l.starts_with("delivered")
    });
    assert!(
        before.is_empty(),
        "producers {before:?} delivered nothing before the kill"
    );
    std::thread::sleep(Duration::from_secs(1));
    server.kill();
    server.restart();
    let restarted = Instant::now();
    let stuck = progress_after(&mut producers, restarted, Duration::from_secs(30), |l| {
        l.starts_with("delivered")
    });
    // Some more time for the producers to deliver after the restart.
    std::thread::sleep(Duration::from_secs(2));
    let outs: Vec<Vec<String>> = producers
        .iter_mut()
        .map(|p| p.finish(Duration::from_secs(90)))
        .collect();
    let acked: Vec<Record> = outs.iter().flat_map(|o| delivered(o)).collect();
    let fatal: Vec<&String> = outs.iter().flat_map(|o| fatal(o)).collect();
    let failed: usize = outs.iter().map(|o| lines_of(o, "failed").len()).sum();
    let read = read_all(&py, &boot, "read_committed", &[("t", 3)]);
    let audit = Audit::of(&acked, &read);
    println!(
        "3 idempotent producers across kill -9: {}; {failed} failed; fatal errors {fatal:?}; \
         no delivery within 30 s of the restart: {stuck:?}",
        audit.summary()
    );
    assert!(fatal.is_empty(), "no producer failed fatally: {fatal:?}");
    assert!(
        stuck.is_empty(),
        "producers {stuck:?} delivered nothing within 30 s of the restart"
    );
    assert!(audit.ok(), "{}", audit.summary());
    assert_eq!(failed, 0, "no record failed");
}

/// 2, KIP-360. An idempotent producer whose message timed out in flight
/// (the server paused with SIGSTOP past message.timeout.ms, then resumed
/// with SIGCONT) bumps its epoch (librdkafka asks InitProducerId with its
/// producer id and epoch) and goes on writing with the new epoch from
/// sequence 0, as Kafka accepts. (A server that refuses the new epoch
/// answers INVALID_PRODUCER_EPOCH to every later batch.)
#[test]
fn an_idempotent_producers_epoch_bump_after_a_timed_out_message_is_accepted() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let server = Server::start_restartable(&[]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "1", "3"]);
    let mut c = Script::start(
        &py,
        "ck_restart_producer.py",
        &[
            &boot,
            "C",
            "message.timeout.ms=2000",
            "request.timeout.ms=1000",
        ],
    );
    let first = delivered(&c.run("produce t 0 2 x-", MINUTE));
    assert_eq!(first.len(), 2, "{:?}", c.all());
    server.pause(true);
    let timed_out = c.run("produce t 0 1 y-", MINUTE);
    server.pause(false);
    assert!(
        timed_out.iter().any(|l| l == "failed t y-0 _MSG_TIMED_OUT"),
        "the record sent while the server was paused timed out: {timed_out:?}"
    );
    let after = c.run("produce t 0 5 z-", MINUTE);
    let lines = c.all();
    let epochs = ids(&lines);
    let mut acked = first;
    acked.extend(delivered(&after));
    let read = read_all(&py, &boot, "read_committed", &[("t", 1)]);
    // y-0 was not acknowledged; it may be in the log or not.
    let read: Vec<Record> = read.into_iter().filter(|r| r.3 != "y-0").collect();
    let audit = Audit::of(&acked, &read);
    println!(
        "epoch bump: ids {epochs:?}; after it: {:?}; {}",
        after,
        audit.summary()
    );
    assert!(
        epochs.len() >= 2
            && epochs
                .windows(2)
                .all(|w| w[0].0 == w[1].0 && w[1].1 > w[0].1),
        "the client bumped its epoch, keeping its producer id: {epochs:?}"
    );
    assert_eq!(
        delivered(&after).len(),
        5,
        "the records after the bump were delivered: {after:?}"
    );
    assert!(audit.ok(), "{}", audit.summary());
    assert_eq!(audit.read, 7, "x-0, x-1 and z-0..z-4 once each");
}

/// The state of transactional id `txn` in the last frame of the data
/// directory's transaction journal that names it (`ongoing`,
/// `prepare_commit`, `complete_commit`...), read while the server is
/// down or running (each frame is `CRC JSON`, docs/recording-format.md).
fn journal_state(data_dir: &Path, txn: &str) -> Option<String> {
    let text = std::fs::read_to_string(data_dir.join("transactions.journal")).ok()?;
    text.lines().rev().find_map(|line| {
        let json: serde_json::Value = serde_json::from_str(line.split_once(' ')?.1).ok()?;
        (json["id"] == txn).then(|| json["state"].as_str().unwrap_or_default().to_string())
    })
}

/// Waits (at most `bound`) for the journal to say `state` for `txn`.
fn await_journal(data_dir: &Path, txn: &str, state: &str, bound: Duration) -> bool {
    let deadline = Instant::now() + bound;
    while Instant::now() < deadline {
        if journal_state(data_dir, txn).as_deref() == Some(state) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}

/// The logical transactions of `ck_restart_txn.py` in what was read:
/// value `K.I/N@A` grouped by (K, A), each with the I read.
pub fn attempts(read: &[Record]) -> BTreeMap<(String, String), Vec<String>> {
    let mut out: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (_, _, _, v) in read {
        let (record, attempt) = v.split_once('@').unwrap();
        let (k, i) = record.split_once('.').unwrap();
        out.entry((k.to_string(), attempt.to_string()))
            .or_default()
            .push(i.to_string());
    }
    out
}

/// What a transactional client was told (`lines` of ck_restart_txn.py)
/// against what read_committed shows (`seen`, from [`attempts`]): every
/// attempt wholly visible or invisible, none told aborted visible, each
/// told committed visible, and no logical transaction visible twice.
pub fn transaction_problems(
    lines: &[String],
    seen: &BTreeMap<(String, String), Vec<String>>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut logical: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for ((k, a), records) in seen {
        let n: usize = records[0].split_once('/').unwrap().1.parse().unwrap();
        if records.len() != n {
            problems.push(format!(
                "transaction {k} attempt {a} partly visible: {records:?}"
            ));
        }
        if lines
            .iter()
            .any(|l| l.starts_with(&format!("aborted {k} {a} ")))
        {
            problems.push(format!(
                "transaction {k} attempt {a} visible though the client was told it aborted"
            ));
        }
        logical.entry(k).or_default().push(a);
    }
    for (k, a) in &logical {
        if a.len() > 1 {
            problems.push(format!("transaction {k} visible twice, attempts {a:?}"));
        }
    }
    for l in lines {
        if let ["committed", k, a] = l.split(' ').collect::<Vec<_>>()[..]
            && !seen.contains_key(&(k.to_string(), a.to_string()))
        {
            problems.push(format!(
                "transaction {k} attempt {a} told committed, not visible"
            ));
        }
    }
    problems
}

/// 1d. A commit in flight when the server is killed: the transaction's
/// PREPARE_COMMIT is in the journal (the commit's markers wait for the
/// next replication round, every 3 s here), the client's EndTxn has no
/// answer yet. After the restart recovery completes the commit, and the
/// client's retried EndTxn must be told so (success), not an error that
/// makes it abort and send the records again. At read_committed every
/// record of a logical transaction is there once; every attempt is
/// wholly visible or wholly invisible; one the client was told aborted
/// is invisible, one told committed is visible; and the producer goes on
/// to commit its next transaction.
fn a_commit_in_flight_at_a_kill(rules: &[&str]) {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut args = rules.to_vec();
    // The markers wait for the tick (3 s), not written at once for the
    // client waiting on its EndTxn: the kill lands in between.
    args.extend(["--auto-replicate", "3000", "--tick-replication-only"]);
    let mut server = Server::start_restartable(&args);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "1", "3"]);
    let mut producer = Script::start(&py, "ck_restart_txn.py", &[&boot, "T1"]);
    // The kill must land between PREPARE_COMMIT and the markers: a few
    // tries, in case a replication round completes the commit first.
    let mut caught = None;
    for k in 1..=5 {
        producer.send(&format!("txn {k} 3 t"));
        producer.until(|l| l == format!("committing {k} 1"), MINUTE);
        let prepared = await_journal(
            &server.data_dir,
            "T1",
            "prepare_commit",
            Duration::from_secs(10),
        );
        server.kill();
        let state = journal_state(&server.data_dir, "T1");
        server.restart();
        producer.until(|l| l == "ok txn", Duration::from_secs(120));
        if prepared && state.as_deref() == Some("prepare_commit") {
            caught = Some(k);
            break;
        }
        println!("transaction {k}: killed at {state:?}, not in PREPARE_COMMIT; again");
    }
    let caught = caught.expect("a kill landed between PREPARE_COMMIT and the markers in 5 tries");
    let next = caught + 1;
    producer.send(&format!("txn {next} 3 t"));
    producer.until(|l| l == "ok txn", Duration::from_secs(120));
    let lines = producer.all();
    let read = read_all(&py, &boot, "read_committed", &[("t", 1)]);
    let seen = attempts(&read);
    let outcome: Vec<&String> = lines
        .iter()
        .filter(|l| {
            ["committed", "aborted", "abort", "retry", "fatal", "gave"]
                .contains(&l.split(' ').next().unwrap())
        })
        .collect();
    println!(
        "{rules:?}: kill during the commit of transaction {caught}; the client: {outcome:?}; \
         read_committed (transaction, attempt) -> records: {seen:?}"
    );
    let mut problems = transaction_problems(&lines, &seen);
    if !lines.contains(&format!("committed {caught} 1")) {
        problems.push(format!(
            "the retried EndTxn of transaction {caught} was not answered with success"
        ));
    }
    if !lines.contains(&format!("committed {next} 1")) {
        problems.push(format!(
            "the next transaction {next} did not commit at its first attempt"
        ));
    }
    let fatal = fatal(&lines);
    if !fatal.is_empty() {
        problems.push(format!("fatal errors {fatal:?}"));
    }
    assert!(
        problems.is_empty(),
        "{rules:?}:\n{}\nclient: {outcome:?}\nlog:\n{}",
        problems.join("\n"),
        tail(&server.log(), 25)
    );
}

#[test]
fn a_commit_in_flight_at_a_kill_is_answered_committed_after_the_restart_kafka_rules() {
    a_commit_in_flight_at_a_kill(&["--rules", "kafka"]);
}

#[test]
fn a_commit_in_flight_at_a_kill_is_answered_committed_after_the_restart_book_rules() {
    a_commit_in_flight_at_a_kill(&[]);
}

/// Where the full-disk tests find their tmpfs (set when this binary
/// re-runs itself inside a private mount namespace).
const TMPFS_ENV: &str = "MK_TEST_SERVE_TMPFS_DIR";

/// Runs `body` with a real 1 MiB tmpfs: inside the re-run of the test
/// `name` ([`crate::tmpfs::in_a_tmpfs`]), whose `figures` lines are printed.
fn in_a_tmpfs(name: &str, body: impl FnOnce(&Path)) {
    match std::env::var(TMPFS_ENV) {
        Ok(dir) => body(Path::new(&dir)),
        Err(_) => crate::tmpfs::in_a_tmpfs(name, TMPFS_ENV, "figures"),
    }
}

/// Fills the file system of `dir` with `filler` until a write fails,
/// then gives back `free` bytes.
fn fill(dir: &Path, free: u64) {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let chunk = [0u8; 4096];
    let mut len = 0u64;
    while f.write_all(&chunk).is_ok() {
        len += chunk.len() as u64;
    }
    let _ = f.sync_all();
    // A partial last write counts too.
    let len = std::fs::metadata(&path).map_or(len, |m| m.len());
    f.set_len(len.saturating_sub(free)).unwrap();
}

/// 1e. A transaction told "aborted" never becomes visible, and no client
/// is wedged, on a full disk. With the disk full (a file fills it to the
/// last page) 16 transactions run one after the other from one producer
/// (3 records, then commit; an abort when the commit fails, and the
/// records sent again, at most 3 attempts; a producer that fails fatally
/// is replaced by one of a new transactional id, and the rounds end if
/// none can be initialised). On tmpfs a write fails only when it needs a new page, so
/// as the journal and the logs grow, the failing write is in turn a
/// record, a PREPARE_COMMIT, a marker or a COMPLETE_COMMIT. Then the
/// space is given back, the server killed and restarted, and a last
/// transaction must commit. At read_committed each attempt is wholly
/// visible or invisible, none the client was told aborted is visible,
/// each told committed is, no logical transaction is visible twice, and
/// no client saw a fatal error.
fn a_transaction_told_aborted_on_a_full_disk(rules: &[&str], dir: &Path) {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let data = dir.join("data");
    let mut server = Server::start_restartable_in(Some(&data), rules);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "1", "3"]);
    // A first transaction with room to spare: the producer is
    // initialised and the topic's files exist.
    let mut producer = Script::start(
        &py,
        "ck_restart_txn.py",
        &[&boot, "T-full", "message.timeout.ms=5000"],
    );
    producer.run("txn first 3 t", Duration::from_secs(120));
    fill(dir, 0);
    let mut lines = Vec::new();
    let mut told = Vec::new();
    for k in 0..16 {
        let out = producer.run(&format!("txn {k} 3 t"), Duration::from_secs(120));
        told.push(
            out.iter()
                .filter(|l| {
                    !l.starts_with("delivered") && !l.starts_with("error _") && *l != "ok txn"
                })
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
        );
        if out.iter().any(|l| l.starts_with("init failed")) {
            // No producer can start on this full disk: no more rounds.
            break;
        }
        if out
            .iter()
            .any(|l| l.starts_with("fatal") || l.starts_with("abort failed"))
        {
            // That producer is done for (a problem of its own, below):
            // the next rounds go on with a new one, of a new id.
            lines.extend(producer.all());
            producer = Script::start(
                &py,
                "ck_restart_txn.py",
                &[&boot, &format!("T{k}"), "message.timeout.ms=5000"],
            );
        }
    }
    lines.extend(producer.all());
    drop(producer);
    std::fs::remove_file(dir.join("filler")).unwrap();
    server.kill();
    server.restart();
    let mut last = Script::start(&py, "ck_restart_txn.py", &[&boot, "T-last"]);
    let last = last.run("txn last 3 t", Duration::from_secs(120));
    lines.extend(last.iter().cloned());
    let (read, unended) = read_to_end(&py, &boot, "read_committed", &[("t", 1)]);
    let seen = attempts(&read);
    let mut problems = transaction_problems(&lines, &seen);
    // While the disk stays full, a decided transaction's markers cannot
    // be written, and the id's next transaction waits for them
    // (CONCURRENT_TRANSACTIONS), as on Kafka: an abort can time out then,
    // which a client retries. Any other failed abort is fatal.
    let retriable = ["_TIMED_OUT", "CONCURRENT_TRANSACTIONS", "NOT_COORDINATOR"];
    let fatal: Vec<&String> = lines
        .iter()
        .filter(|l| {
            l.starts_with("fatal ")
                || (l.starts_with("abort failed")
                    && !l
                        .split(' ')
                        .next_back()
                        .is_some_and(|e| retriable.contains(&e)))
                || (l.starts_with("error ") && l.split(' ').nth(2) == Some("fatal"))
        })
        .collect();
    if !fatal.is_empty() {
        problems.push(format!("fatal errors {fatal:?}"));
    }
    if !last.iter().any(|l| l.starts_with("committed last")) {
        problems.push(format!(
            "no last transaction committed once space was back: {last:?}"
        ));
    }
    if !unended.is_empty() {
        problems.push(format!(
            "read_committed did not reach the end of {unended:?}"
        ));
    }
    println!(
        "figures {rules:?}: on the full disk each transaction's client was told: {}; \
         read_committed (transaction, attempt) -> records: {seen:?}",
        told.join(" | ")
    );
    assert!(
        problems.is_empty(),
        "{rules:?}:\n{}\nlog:\n{}",
        problems.join("\n"),
        tail(&server.log(), 30)
    );
}

#[test]
fn a_transaction_told_aborted_on_a_full_disk_never_becomes_visible_book_rules() {
    in_a_tmpfs(
        "restart_promises::a_transaction_told_aborted_on_a_full_disk_never_becomes_visible_book_rules",
        |dir| a_transaction_told_aborted_on_a_full_disk(&[], dir),
    );
}

#[test]
fn a_transaction_told_aborted_on_a_full_disk_never_becomes_visible_kafka_rules() {
    in_a_tmpfs(
        "restart_promises::a_transaction_told_aborted_on_a_full_disk_never_becomes_visible_kafka_rules",
        |dir| a_transaction_told_aborted_on_a_full_disk(&["--rules", "kafka"], dir),
    );
}
