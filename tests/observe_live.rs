//! The live observer (issue 15 items 3 and 4; docs/observe.md "Live"):
//! `mk-tui observe` without --state or --render refreshes on an interval,
//! each refresh is a step of an observation recording, and a failed
//! refresh is that step's error while the observer keeps going.
//!
//! Against `mk-tui serve`: the observer runs headless (one line per
//! refresh) while the test kills the server and starts another cluster on
//! the same port; the recording must then replay, step for step, to what
//! was observed (each refresh's snapshot equal to `observe --state` of the
//! same server), with the stale steps in between and the changes of the
//! refresh that answered again. And frames of the observed dashboard
//! (TestBackend + insta) with its status line, driven by a refresher that
//! answers from fixtures (`tests/observe_live/*.json`: `mk-tui observe
//! --state` of `mk-tui serve recordings/ch08-visibility.jsonl`, its first
//! two steps and all six, titled `observe 127.0.0.1:9092`). Every wait is
//! bounded; every child is stopped.

#[allow(dead_code)]
#[path = "serve/server.rs"]
mod server;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use minikafka::session::Snapshot;
use minikafka::session::observation::{
    Observation, ObservationHeader, ObservationTimeline, ObservedSession, REFRESH_FAILED,
    Refreshed, Refresher,
};
use minikafka::ui::app::{App, Msg, StatusKind};
use minikafka::ui::headless::{buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::keys::KeyCommand;
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;
use serde_json::{Value, json};
use server::Server;

/// How long any one awaited line may take.
const LINE_TIMEOUT: Duration = Duration::from_secs(30);

fn mk_tui(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(args)
        .output()
        .expect("mk-tui runs")
}

/// A loopback port nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `mk-tui serve FILE` on `port` (one broker: the recordings used here
/// have one, so the port is the cluster's only address).
fn serve_on(file: &str, port: u16) -> Server {
    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("data");
    let listen = format!("127.0.0.1:{port}");
    Server::start_with(
        temp,
        data_dir,
        &["serve", file, "--listen", &listen, "--auto-replicate", "0"],
    )
}

/// `mk-tui observe --bootstrap B --state` as JSON.
fn observe_once(bootstrap: &str) -> Value {
    let out = mk_tui(&["observe", "--bootstrap", bootstrap, "--state"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The live observer as a child, its lines read as they come.
struct Observer {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Observer {
    fn start(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mk-tui starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for a line that `wanted` accepts; returns it.
    fn wait_for(&mut self, what: &str, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + LINE_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if wanted(&line) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no line {what} in time; lines so far:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// SIGTERM, and the exit code (128 + 15: a signal ended it).
    fn stop(mut self) -> Option<i32> {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the observer did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The step number a line `refresh N…` is about.
fn refresh_number(line: &str) -> usize {
    line.strip_prefix("refresh ")
        .and_then(|rest| rest.split([':', ',', ' ']).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a refresh line: {line}"))
}

/// The first `steps` steps of `recording`, written into `dir`.
fn prefix(recording: &str, steps: usize, dir: &Path) -> String {
    let text = std::fs::read_to_string(recording).unwrap();
    let lines: Vec<&str> = text.lines().take(steps + 1).collect();
    let path = dir.join(format!("prefix-{steps}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.to_str().unwrap().to_string()
}

/// The raw snapshots the recording holds, one per line (null for a failed
/// refresh).
fn recorded(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["observed"].clone())
        .collect()
}

#[test]
fn a_live_observation_survives_its_broker_and_replays_to_what_it_saw() {
    let temp = tempfile::tempdir().unwrap();
    let open = prefix("recordings/ch08-visibility.jsonl", 2, temp.path());
    let port = free_port();
    let bootstrap = format!("127.0.0.1:{port}");
    let record = temp.path().join("observed.jsonl");
    let first = serve_on(&open, port);
    let expected_open = observe_once(&bootstrap);
    let mut observer = Observer::start(&[
        "observe",
        "--bootstrap",
        &bootstrap,
        "--interval",
        "150",
        "--record",
        record.to_str().unwrap(),
    ]);
    observer.wait_for("refresh 2 ok", |l| l.starts_with("refresh 2: ok"));
    // The broker goes away for good (SIGKILL): no goodbye on the wire.
    drop(first);
    let failed = observer.wait_for("a failed refresh", |l| l.contains(" failed, "));
    assert!(
        failed.contains("showing refresh") && failed.contains("(stale)"),
        "{failed}"
    );
    let first_failed = refresh_number(&failed);
    // Another cluster on the same port: the whole recording (tx-1
    // committed, tx-2 aborted).
    let second = serve_on("recordings/ch08-visibility.jsonl", port);
    let expected_settled = observe_once(&bootstrap);
    let back = observer.wait_for("the cluster answering again", |l| {
        l.contains("answers again")
    });
    let back_at = refresh_number(&back);
    observer.wait_for("a refresh after it", |l| {
        l.starts_with("refresh ") && refresh_number(l) > back_at
    });
    let lines = observer.seen.clone();
    assert_eq!(observer.stop(), Some(128 + 15));
    drop(second);

    // Each refresh is a line, in order, and none ended the observer.
    let numbered: Vec<usize> = lines
        .iter()
        .filter(|l| !l.contains("answers again"))
        .map(|l| refresh_number(l))
        .collect();
    assert_eq!(
        numbered,
        (1..=numbered.len()).collect::<Vec<_>>(),
        "{lines:?}"
    );
    let answered = lines
        .iter()
        .find(|l| l.starts_with(&format!("refresh {back_at}: ok")))
        .unwrap();
    for said in ["out-0 HW 1 → 4", "out-0 LSO 0 → 4"] {
        assert!(answered.contains(said), "{said:?} in {answered}");
    }

    // The recording holds what was observed: each refresh that answered
    // is `observe --state` of the server it asked.
    let check = mk_tui(&["check", record.to_str().unwrap()]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let raw = recorded(&record);
    let steps = raw.len();
    assert!(steps > back_at, "{steps} steps");
    for (i, line) in raw.iter().enumerate() {
        let n = i + 1;
        // As `observe --state` prints it: its unavailable fields null.
        let snapshot = &match line {
            Value::Null => Value::Null,
            line => {
                let snapshot: Snapshot = serde_json::from_value(line.clone()).unwrap();
                serde_json::from_str::<Value>(&snapshot.to_json()).unwrap()
            }
        };
        // Between the two, every refresh failed (null: the line's error).
        let expected = match n {
            n if n < first_failed => &expected_open,
            n if n >= back_at => &expected_settled,
            _ => &Value::Null,
        };
        assert_eq!(snapshot, expected, "refresh {n}");
    }

    // `mk-tui state FILE --step N` shows each step as the replay does.
    let state_at = |n: usize| -> Value {
        let out = mk_tui(&["state", record.to_str().unwrap(), "--step", &n.to_string()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let before_failure = state_at(first_failed - 1);
    let stale = state_at(first_failed);
    let recovered = state_at(back_at);
    assert_eq!(stale["step"], first_failed);
    assert_eq!(stale["partitions"], before_failure["partitions"]);
    assert_eq!(
        stale["changes"]["partitions"],
        Value::Null,
        "{}",
        stale["changes"]
    );
    let error = stale["errors"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(error["step"], first_failed);
    assert_eq!(error["code"], REFRESH_FAILED);
    assert_eq!(recovered["partitions"], expected_settled["partitions"]);
    assert_eq!(recovered["consumers"], expected_settled["consumers"]);
    let out0 = &recovered["changes"]["partitions"]["out-0"];
    assert_eq!(out0["high_watermark"], json!([1, 4]), "{out0}");
    assert_eq!(out0["last_stable_offset"], json!([0, 4]), "{out0}");
    assert_eq!(out0["new_batches"], json!([1, 2, 3]), "{out0}");
    assert_eq!(out0["read_committed_gained"], json!([0]), "{out0}");
    // Told since the last refresh that answered, not the stale step
    // before it.
    assert_eq!(recovered["changes"]["since_step"], first_failed - 1);
    assert!(
        recovered["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["step"] == back_at && e["text"].as_str().unwrap().contains("answers again")),
        "{}",
        recovered["events"]
    );
    // Observed time is the clock, in order; the cluster's own is not known.
    let clocks: Vec<u64> = (1..=steps)
        .map(|n| state_at(n)["clock_ms"].as_u64().unwrap())
        .collect();
    assert!(clocks.windows(2).all(|w| w[0] <= w[1]), "{clocks:?}");

    // Forward and back, the timeline gives the same steps as the CLI.
    let mut timeline = ObservationTimeline::new(Observation::load(&record).unwrap());
    for n in [steps, 1, back_at, first_failed, 0, back_at] {
        timeline.goto(n);
        assert_eq!(timeline.step(), n);
        if n > 0 {
            let cli: Snapshot = Snapshot::from_json(&state_at(n).to_string()).unwrap();
            assert_eq!(timeline.view(), &cli, "step {n}");
        }
    }

    // As a cast: the first frame, then each refresh at its `at_ms`.
    let cast = temp.path().join("observed.cast");
    let out = mk_tui(&[
        "export",
        record.to_str().unwrap(),
        "--cast",
        cast.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frames: Vec<Value> = std::fs::read_to_string(&cast)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &Value| e[1] == "o")
        .collect();
    assert_eq!(frames.len(), steps + 1);
    for (n, frame) in frames.iter().enumerate().skip(1) {
        let t = frame[0].as_f64().unwrap();
        // After the title's 2 s, at the refresh's time since step 0.
        let expected = 2.0 + clocks[n - 1] as f64 / 1000.0;
        assert!(
            (t - expected).abs() < 1e-6,
            "frame {n} at {t}, expected {expected}"
        );
    }

    // The frame of the stale step says so, and of the recovery what changed.
    let frame = mk_tui(&[
        "render",
        record.to_str().unwrap(),
        "--step",
        &first_failed.to_string(),
        "--size",
        "120x36",
    ]);
    let frame = String::from_utf8(frame.stdout).unwrap();
    assert!(frame.contains("│ replay · stale │"), "{frame}");
    assert!(
        frame.contains(&format!("refresh {first_failed} failed,")),
        "{frame}"
    );
    // The status line says it, as it did live.
    let status = frame.lines().last().unwrap();
    assert!(
        status.starts_with(&format!(
            " refresh {first_failed} failed, showing refresh {} (stale): ",
            first_failed - 1
        )),
        "{status}"
    );
}

/// A headless run whose last refresh failed: every refresh was tried (its
/// lines are all there), and it exits 2 with the last one's cause on
/// standard error, so a script can tell it from a run that observed.
fn ended_failing(out: &std::process::Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let last = String::from_utf8_lossy(&out.stdout);
    let last = last.lines().last().unwrap_or_default();
    assert!(stderr.trim_end().ends_with(last), "{stderr} vs {last}");
}

#[test]
fn the_observer_keeps_going_when_the_cluster_refuses_or_lacks_what_it_asks() {
    // Nobody on the port, a missing topic: each refresh fails and the next
    // tries again; --refreshes bounds the run, which ends with exit 2
    // since its last refresh failed.
    let port = free_port();
    let bootstrap = format!("127.0.0.1:{port}");
    let out = mk_tui(&[
        "observe",
        "--bootstrap",
        &bootstrap,
        "--interval",
        "100",
        "--refreshes",
        "3",
    ]);
    ended_failing(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        assert!(
            line.starts_with(&format!(
                "refresh {n} failed, nothing observed yet: {bootstrap}: cannot connect"
            )),
            "{line}"
        );
    }
    let mut server = Server::start(&["recordings/ch08-visibility.jsonl", "--auto-replicate", "0"]);
    let boot = server.bootstrap();
    let out = mk_tui(&[
        "observe",
        "--bootstrap",
        &boot,
        "--topic",
        "nope",
        "--interval",
        "100",
        "--refreshes",
        "2",
    ]);
    server.stop();
    ended_failing(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.lines()
            .all(|l| l.contains("failed, nothing observed yet: topic nope: not found")),
        "{text}"
    );
}

/// A fake broker on a free loopback port that reads one request per
/// connection and hands the connection to `answer` (as tests/observe.rs's).
fn fake_broker(answers: Vec<fn(&mut std::net::TcpStream, &[u8])>) -> String {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for answer in answers {
            let Ok((mut s, _)) = listener.accept() else {
                return;
            };
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut size = [0u8; 4];
            if s.read_exact(&mut size).is_err() {
                continue;
            }
            let mut request = vec![0u8; i32::from_be_bytes(size) as usize];
            if s.read_exact(&mut request).is_ok() {
                answer(&mut s, &request);
            }
        }
    });
    address
}

#[test]
fn a_broker_that_closes_or_speaks_no_usable_version_fails_a_refresh_not_the_observer() {
    use std::io::Write;
    let address = fake_broker(vec![|_, _| {}, |s, request| {
        // ApiVersions v0: Metadata only at v0-3.
        let mut body = request[4..8].to_vec();
        body.extend_from_slice(&0i16.to_be_bytes());
        body.extend_from_slice(&2i32.to_be_bytes());
        for (key, min, max) in [(18i16, 0i16, 3i16), (3, 0, 3)] {
            for v in [key, min, max] {
                body.extend_from_slice(&v.to_be_bytes());
            }
        }
        let mut frame = (body.len() as i32).to_be_bytes().to_vec();
        frame.extend_from_slice(&body);
        let _ = s.write_all(&frame);
    }]);
    let out = mk_tui(&[
        "observe",
        "--bootstrap",
        &address,
        "--interval",
        "100",
        "--refreshes",
        "2",
    ]);
    ended_failing(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("refresh 1 failed, nothing observed yet: ")
            && lines[0].contains("closed"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("refresh 2 failed, nothing observed yet: ")
            && lines[1].contains("unsupported API version"),
        "{text}"
    );
}

#[test]
fn the_live_options_are_checked_before_anything_is_asked_or_written() {
    let temp = tempfile::tempdir().unwrap();
    let existing = temp.path().join("kept.jsonl");
    std::fs::write(&existing, "keep me\n").unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--interval", "0"],
            "mk-tui: --interval 0: expected milliseconds from 100 to 3600000\n",
        ),
        (
            &["--interval", "99999999"],
            "mk-tui: --interval 99999999: expected milliseconds from 100 to 3600000\n",
        ),
        (
            &["--refreshes", "0"],
            "mk-tui: --refreshes 0: expected a number of refreshes from 1 to 864000\n",
        ),
        (&["--state", "--interval", "500"], "--interval"),
        (&["--record", existing.to_str().unwrap()], "already exists"),
    ];
    for (extra, said) in cases {
        let mut args = vec!["observe", "--bootstrap", "127.0.0.1:1"];
        args.extend_from_slice(extra);
        let out = mk_tui(&args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(said), "{said:?} in {stderr}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep me\n");
}

/// A refresher that answers what the test hands it, and counts `r`.
#[derive(Clone, Default)]
struct Handed {
    queue: Arc<Mutex<Vec<Refreshed>>>,
    asked: Arc<Mutex<usize>>,
}

impl Refresher for Handed {
    fn wake(&self) -> Arc<tokio::sync::Notify> {
        Arc::new(tokio::sync::Notify::new())
    }
    fn request(&self) -> bool {
        *self.asked.lock().unwrap() += 1;
        true
    }
    fn take(&mut self) -> Vec<Refreshed> {
        std::mem::take(&mut *self.queue.lock().unwrap())
    }
}

fn fixture(name: &str) -> Snapshot {
    let text = std::fs::read_to_string(format!("tests/observe_live/{name}.json")).unwrap();
    Snapshot::from_json(&text).unwrap()
}

fn observed_app() -> (App, Handed) {
    let handed = Handed::default();
    let header = ObservationHeader::new(&["127.0.0.1:9092".into()], &[], &[], 1000);
    let app = App::observing(
        ObservedSession::new(header, None),
        Box::new(handed.clone()),
        layout::builtin_default(),
        Lang::En,
        Theme::plain(),
    );
    (app, handed)
}

fn hand(app: &mut App, handed: &Handed, at_ms: u64, outcome: Result<Snapshot, String>) {
    handed
        .queue
        .lock()
        .unwrap()
        .push(Refreshed { at_ms, outcome });
    app.update(Msg::Serve).unwrap();
}

#[test]
fn the_observed_dashboard_draws_each_refresh_and_says_when_it_is_stale() {
    let (mut app, handed) = observed_app();
    let frame = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(frame.contains("refresh 1: asking the cluster…"), "{frame}");
    hand(&mut app, &handed, 0, Ok(fixture("ch08-visibility-open")));
    hand(
        &mut app,
        &handed,
        1000,
        Ok(fixture("ch08-visibility-settled")),
    );
    let fresh = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(
        fresh.contains("│ observed │ step 2 │ clock 1000 ms │"),
        "{fresh}"
    );
    assert!(fresh.contains("refresh 2: ok, "), "{fresh}");
    assert!(fresh.contains("out-0 HW 1 → 4"), "{fresh}");
    insta::assert_snapshot!("observed_live_refreshed_120x36", fresh);
    hand(
        &mut app,
        &handed,
        2000,
        Err("127.0.0.1:9092: cannot connect: Connection refused (os error 111)".into()),
    );
    let stale = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(stale.contains("│ observed · stale │ step 3 │"), "{stale}");
    assert!(
        stale.contains(" refresh 3 failed, showing refresh 2 (stale): 127.0.0.1:9092"),
        "{stale}"
    );
    assert!(stale.contains(" r refresh "), "{stale}");
    assert!(!stale.contains(" p produce"), "{stale}");
    assert_eq!(app.status.as_ref().unwrap().kind, StatusKind::Error);
    insta::assert_snapshot!("observed_live_stale_120x36", stale);
    // `r` asks at once, engine keys stay off, and quitting does not wait
    // for the refresh it asked for.
    app.update(Msg::Command(KeyCommand::ReplicateAll)).unwrap();
    assert_eq!(*handed.asked.lock().unwrap(), 1);
    assert!(
        app.status
            .as_ref()
            .unwrap()
            .text
            .contains("refresh 4: asking")
    );
    app.update(Msg::Command(KeyCommand::Crash)).unwrap();
    assert!(
        app.status
            .as_ref()
            .unwrap()
            .text
            .contains("engine keys are off")
    );
    app.update(Msg::Command(KeyCommand::Quit)).unwrap();
    assert!(app.quit);
}

#[test]
fn an_observation_replays_with_the_replay_keys_forward_back_and_playing() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("obs.jsonl");
    let header = ObservationHeader::new(&["127.0.0.1:9092".into()], &[], &[], 1000);
    let writer =
        minikafka::session::observation::ObservationWriter::create(&file, &header).unwrap();
    let mut live = ObservedSession::new(header, Some(writer));
    let refreshes = [
        (0, Ok(fixture("ch08-visibility-open"))),
        (1000, Err("127.0.0.1:9092: connection closed".to_string())),
        (2500, Ok(fixture("ch08-visibility-settled"))),
    ];
    let mut views = vec![live.view().clone()];
    for (at_ms, outcome) in refreshes {
        live.push(Refreshed { at_ms, outcome }).unwrap();
        views.push(live.view().clone());
    }
    let timeline = ObservationTimeline::new(Observation::load(&file).unwrap());
    let mut app = App::observation_replay(
        timeline,
        layout::builtin_default(),
        Lang::En,
        Theme::plain(),
    );
    let shown = |app: &App| {
        let mut s = app.snapshot();
        assert_eq!(s.total_steps, Some(3));
        s.total_steps = None;
        s
    };
    assert!(app.is_replay() && !app.is_observing());
    for (command, step) in [
        (KeyCommand::NextStep, 1),
        (KeyCommand::NextStep, 2),
        (KeyCommand::LastStep, 3),
        (KeyCommand::PrevStep, 2),
        (KeyCommand::FirstStep, 0),
        // `]`: the next refresh where something happened (step 1 saw the
        // cluster first).
        (KeyCommand::NextCaption, 1),
        (KeyCommand::LastStep, 3),
    ] {
        app.update(Msg::Command(command)).unwrap();
        assert_eq!(shown(&app), views[step], "{command:?}");
    }
    // Played from the end it starts over, at the recorded pace.
    app.update(Msg::Command(KeyCommand::PlayPause)).unwrap();
    assert!(app.is_playing());
    assert_eq!(app.snapshot().step, 0);
    assert_eq!(app.next_step_delay_ms(), Some(0));
    app.update(Msg::Tick).unwrap();
    assert_eq!(app.next_step_delay_ms(), Some(1000));
    app.update(Msg::Tick).unwrap();
    assert_eq!(app.next_step_delay_ms(), Some(1500));
    app.update(Msg::Tick).unwrap();
    assert_eq!(shown(&app), views[3]);
    assert!(!app.is_playing(), "the end stops playing");
    // `g` goes to a step, as in any replay.
    use minikafka::ui::keys::{PromptEdit, PromptKind};
    app.update(Msg::Command(KeyCommand::Prompt(PromptKind::GotoStep)))
        .unwrap();
    app.update(Msg::Edit(PromptEdit::Char('2'))).unwrap();
    app.update(Msg::Edit(PromptEdit::Submit)).unwrap();
    assert!(app.prompt.is_none());
    assert_eq!(shown(&app), views[2]);
    app.update(Msg::Command(KeyCommand::LastStep)).unwrap();
    // No engine behind it: branching says so and changes nothing.
    app.update(Msg::Command(KeyCommand::Branch)).unwrap();
    assert!(app.status.as_ref().unwrap().text.contains("cannot branch"));
    assert!(app.is_replay());
    let frame = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(
        frame.contains("│ replay │ step 3/3 │ clock 2500 ms │"),
        "{frame}"
    );
}

/// Two consecutive loopback ports nobody listens on (broker N of `mk-tui
/// serve --listen 127.0.0.1:P` listens on P + N - 1).
fn free_ports_2() -> u16 {
    for _ in 0..100 {
        let p = free_port();
        if p < u16::MAX && std::net::TcpListener::bind(("127.0.0.1", p + 1)).is_ok() {
            return p;
        }
    }
    panic!("no two free ports in a row");
}

#[test]
fn a_leader_that_moves_between_refreshes_is_followed_and_marked() {
    // ch06: leader 1 until broker 1 stops and broker 2 is promoted
    // (epoch 1). The observer asks both brokers first; the second cluster's
    // broker 1 is stopped, so its listener is closed and broker 2 answers.
    let temp = tempfile::tempdir().unwrap();
    let before = prefix("recordings/ch06-leader-failure.jsonl", 4, temp.path());
    let after = prefix("recordings/ch06-leader-failure.jsonl", 7, temp.path());
    let port = free_ports_2();
    let bootstrap = format!("127.0.0.1:{port},127.0.0.1:{}", port + 1);
    let first = serve_on(&before, port);
    let record = temp.path().join("failover.jsonl");
    let mut observer = Observer::start(&[
        "observe",
        "--bootstrap",
        &bootstrap,
        "--interval",
        "150",
        "--record",
        record.to_str().unwrap(),
    ]);
    observer.wait_for("refresh 1 ok", |l| l.starts_with("refresh 1: ok"));
    drop(first);
    observer.wait_for("a failed refresh", |l| l.contains(" failed, "));
    let second = serve_on(&after, port);
    let back = observer.wait_for("the new leader", |l| l.contains("answers again"));
    let back_at = refresh_number(&back);
    assert_eq!(observer.stop(), Some(128 + 15));
    drop(second);
    let out = mk_tui(&[
        "state",
        record.to_str().unwrap(),
        "--step",
        &back_at.to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let state: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t0 = &state["partitions"][0];
    assert_eq!(
        (t0["leader"].clone(), t0["leader_epoch"].clone()),
        (json!(2), json!(1))
    );
    let changed = &state["changes"]["partitions"]["t-0"];
    assert_eq!(changed["leader"], json!([1, 2]), "{changed}");
    assert_eq!(changed["leader_epoch"], json!([0, 1]), "{changed}");
    assert!(
        state["changes"]["sentences"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().contains("leader")),
        "{}",
        state["changes"]
    );
}

/// An observation has no captions: `]` and `[` jump between the refreshes
/// where something happened (a change, a failure, an answer again), over
/// the quiet ones (a new user's review: `]` went straight to the end).
#[test]
fn brackets_jump_over_the_refreshes_where_nothing_happened() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("obs.jsonl");
    let header = ObservationHeader::new(&["127.0.0.1:9092".into()], &[], &[], 1000);
    let writer =
        minikafka::session::observation::ObservationWriter::create(&file, &header).unwrap();
    let mut live = ObservedSession::new(header, Some(writer));
    let (open, settled) = (
        fixture("ch08-visibility-open"),
        fixture("ch08-visibility-settled"),
    );
    // 1 first seen, 2 changed, 3 and 4 the same, 5 changed, 6 the same.
    for (i, snapshot) in [&open, &settled, &settled, &settled, &open, &open]
        .into_iter()
        .enumerate()
    {
        let refreshed = Refreshed {
            at_ms: 1000 * i as u64,
            outcome: Ok(snapshot.clone()),
        };
        live.push(refreshed).unwrap();
        let quiet = live.view().changes.sentences.is_empty();
        assert_eq!(quiet, [3, 4, 6].contains(&(i + 1)), "refresh {}", i + 1);
    }
    let timeline = ObservationTimeline::new(Observation::load(&file).unwrap());
    let mut app = App::observation_replay(
        timeline,
        layout::builtin_default(),
        Lang::En,
        Theme::plain(),
    );
    for (command, step) in [
        (KeyCommand::NextCaption, 1),
        (KeyCommand::NextCaption, 2),
        (KeyCommand::NextCaption, 5),
        (KeyCommand::NextCaption, 6),
        (KeyCommand::PrevCaption, 5),
        (KeyCommand::PrevCaption, 2),
        (KeyCommand::NextStep, 3),
        (KeyCommand::PrevCaption, 2),
        (KeyCommand::PrevCaption, 1),
        (KeyCommand::PrevCaption, 0),
    ] {
        app.update(Msg::Command(command)).unwrap();
        assert_eq!(app.snapshot().step, step, "{command:?}");
    }
}
