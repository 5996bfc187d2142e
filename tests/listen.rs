//! `mk-tui --listen` (issue 14): the dashboard with the Kafka listeners
//! open. Real clients (confluent-kafka, tests/clients/) and keys drive the
//! one driver of the live session: a client's produce is a step, an
//! `acks=all` produce waits until `r`, stopping a broker closes its
//! listener and starting it reopens it on the same port, and the clients
//! pane shows each connection. In process, headless (the app is pumped as
//! the dashboard's loop pumps it), loopback only, every wait bounded.

#[path = "serve/python.rs"]
mod python;

use std::io::Read;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use minikafka::kafka::live::{self, ListenOptions};
use minikafka::session::recording::Header;
use minikafka::session::snapshot::{ClientSnapshot, ListenerSnapshot};
use minikafka::session::{Action, Driver, Recording, RecordingWriter, Snapshot};
use minikafka::ui::app::{App, Msg};
use minikafka::ui::headless::{buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::keys::KeyCommand;
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;

/// How long any one wait of these tests may take.
const WAIT: Duration = Duration::from_secs(60);

fn header() -> Header {
    serde_json::from_value(serde_json::json!({
        "mk_recording": 1,
        "title": "listen test",
        "rules": "minikafka",
        "cluster": {"brokers": [1, 2, 3],
                    "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}]},
    }))
    .unwrap()
}

/// A live app on a fresh cluster with listeners on ports the system picks
/// (no auto-replication); returns it and each broker's port.
fn live_app(record: Option<&Path>) -> (App, Vec<u16>) {
    live_app_replicating(record, 0)
}

/// [`live_app`] replicating by itself every `auto_replicate_ms` (0: never).
fn live_app_replicating(record: Option<&Path>, auto_replicate_ms: u64) -> (App, Vec<u16>) {
    live_app_with(header(), record, auto_replicate_ms)
}

/// [`live_app_replicating`] on the cluster of `header`.
fn live_app_with(header: Header, record: Option<&Path>, auto_replicate_ms: u64) -> (App, Vec<u16>) {
    let driver = Driver::new(&header, None).unwrap();
    let options = ListenOptions {
        listen: "127.0.0.1:0".into(),
        allow_remote: false,
        auto_replicate_ms,
        auto_create_topics: false,
    };
    let listeners = live::open(&driver, &options).unwrap();
    let ports = listeners.addresses().iter().map(|a| a.port).collect();
    let writer = record.map(|p| RecordingWriter::create(p, &header).unwrap());
    let app = App::live(
        driver,
        header,
        writer,
        layout::builtin("clients").unwrap(),
        Lang::En,
        Theme::colored(),
    )
    .with_listeners(Box::new(listeners));
    (app, ports)
}

/// Runs `job` on a thread while the app serves its clients as the
/// dashboard's loop does, calling `each` between rounds; returns what the
/// job returned (a panic in it fails the test).
fn serve_while<T: Send + 'static>(
    app: &mut App,
    job: impl FnOnce() -> T + Send + 'static,
    mut each: impl FnMut(&mut App),
) -> T {
    let handle = std::thread::spawn(job);
    let deadline = Instant::now() + 2 * WAIT;
    while !handle.is_finished() {
        assert!(Instant::now() < deadline, "the client ran past {WAIT:?}");
        app.update(Msg::Serve).unwrap();
        each(app);
        std::thread::sleep(Duration::from_millis(2));
    }
    app.update(Msg::Serve).unwrap();
    handle.join().unwrap()
}

fn state(app: &App) -> Snapshot {
    Snapshot::of(app.driver().unwrap())
}

fn values(s: &Snapshot) -> Vec<String> {
    s.partitions[0]
        .batches
        .iter()
        .flat_map(|b| b.records.iter().filter_map(|r| r.value.clone()))
        .collect()
}

#[test]
fn a_clients_produce_is_a_step_of_the_dashboards_driver_and_acks_all_waits_for_r() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("live.jsonl");
    let (mut app, ports) = live_app(Some(&file));
    let boot = format!("127.0.0.1:{}", ports[0]);

    // acks=1: written by the same driver the keys drive, shown at once.
    let (b, p) = (boot.clone(), py.clone());
    let out = serve_while(
        &mut app,
        move || python::run(&p, "ck_produce.py", &[&b, "t", "0", "1", "3", "a"]),
        |_| {},
    );
    assert_eq!(out.matches("delivered").count(), 3, "{out}");
    assert_eq!(values(&state(&app)), ["a0", "a1", "a2"]);
    let frame = buffer_text(&frame_buffer(&app, 160, 45));
    assert!(
        frame.contains("(Kafka client)"),
        "the status says who:\n{frame}"
    );

    // acks=all: pending until the lecturer's `r`, and the pane says so.
    let (b, p) = (boot.clone(), py.clone());
    let mut seen: Option<Instant> = None;
    let mut waiting_frame = String::new();
    let mut replicated = false;
    let out = serve_while(
        &mut app,
        move || {
            python::run(
                &p,
                "ck_produce.py",
                &[&b, "t", "0", "all", "1", "w", "20000"],
            )
        },
        |app| {
            if replicated {
                return;
            }
            let view = app.snapshot();
            let waits = view
                .clients
                .iter()
                .any(|c| c.in_flight.as_deref() == Some("Produce v9 acks=all waiting"));
            match seen {
                None if waits && !view.pending.is_empty() => {
                    seen = Some(Instant::now());
                    waiting_frame = buffer_text(&frame_buffer(app, 160, 45));
                }
                // Nothing replicates by itself: still waiting a second on.
                Some(at) if at.elapsed() > Duration::from_millis(1500) => {
                    assert!(waits, "still waiting before r: {:?}", view.clients);
                    assert_eq!(view.pending.len(), 1);
                    app.update(Msg::Command(KeyCommand::ReplicateAll)).unwrap();
                    replicated = true;
                }
                _ => {}
            }
        },
    );
    assert!(replicated, "the produce was seen waiting:\n{out}");
    assert_eq!(out.lines().next(), Some("delivered 3"), "{out}");
    assert!(
        waiting_frame.contains("Produce v9 acks=all waiting"),
        "{waiting_frame}"
    );
    assert!(waiting_frame.contains("rdkafka"), "{waiting_frame}");
    let s = state(&app);
    assert_eq!(s.partitions[0].high_watermark, 4);
    assert!(s.pending.is_empty());

    // The recording holds the clients' steps and `r`, and replays to the
    // same partitions without any client.
    drop(app);
    let recording = Recording::load(&file).unwrap();
    let names: Vec<&str> = recording.steps.iter().map(|s| s.action.name()).collect();
    // A client's batch is one `produce` step carrying all its records.
    let produced: usize = recording
        .steps
        .iter()
        .map(|s| match &s.action {
            Action::Produce {
                key,
                value,
                records,
                ..
            } => minikafka::session::action::payload(key, value, records).len(),
            _ => 0,
        })
        .sum();
    assert_eq!(produced, 4, "{names:?}");
    assert!(names.contains(&"replicate"), "{names:?}");
    let mut replay = Driver::new(&recording.header, None).unwrap();
    for step in &recording.steps {
        replay.apply(&step.action);
    }
    let replayed = Snapshot::of(&replay);
    assert_eq!(replayed.partitions, s.partitions);
}

#[test]
fn with_auto_replicate_an_acks_all_produce_completes_without_r() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("auto.jsonl");
    let (mut app, ports) = live_app_replicating(Some(&file), 100);
    let boot = format!("127.0.0.1:{}", ports[0]);
    let out = serve_while(
        &mut app,
        move || {
            python::run(
                &py,
                "ck_produce.py",
                &[&boot, "t", "0", "all", "2", "z", "20000"],
            )
        },
        |_| {},
    );
    assert_eq!(out.matches("delivered").count(), 2, "{out}");
    assert_eq!(state(&app).partitions[0].high_watermark, 2);
    drop(app);
    let recording = Recording::load(&file).unwrap();
    assert!(
        recording
            .steps
            .iter()
            .any(|s| s.action.name() == "replicate"),
        "the ticks are steps of the recording"
    );
    assert!(
        recording
            .steps
            .iter()
            .all(|s| s.action.name() != "advance_clock"),
        "the dashboard's clock stays the lecturer's"
    );
}

#[test]
fn listen_needs_a_terminal_and_loopback() {
    for (args, said) in [
        (
            &["--listen", "127.0.0.1:0"][..],
            "the dashboard needs a terminal",
        ),
        (&["--listen", "0.0.0.0:0"][..], "--allow-remote"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mk-tui"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing else ran");
    }
}

/// Connects to `port`, retrying until `want` (true: accepted) or the wait.
fn wait_connect(port: u16, want: bool) {
    let deadline = Instant::now() + WAIT;
    loop {
        let ok = TcpStream::connect(("127.0.0.1", port)).is_ok();
        if ok == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "port {port} never became {}",
            if want { "open" } else { "closed" }
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn stopping_a_broker_closes_its_listener_and_starting_it_reopens_the_same_port() {
    let (mut app, ports) = live_app(None);
    let port = ports[1];
    let mut open = TcpStream::connect(("127.0.0.1", port)).unwrap();
    open.set_read_timeout(Some(WAIT)).unwrap();
    // Accepted: the clients pane has it.
    let deadline = Instant::now() + WAIT;
    while app.snapshot().clients.iter().all(|c| c.broker != 2) {
        assert!(Instant::now() < deadline, "never accepted");
        std::thread::sleep(Duration::from_millis(10));
    }
    app.update(Msg::Apply(Action::StopBroker { broker: 2 }))
        .unwrap();
    wait_connect(port, false);
    // Its open connection is closed too, as a stopped broker's are.
    let mut byte = [0u8; 1];
    assert_eq!(open.read(&mut byte).unwrap(), 0, "closed by the server");
    // The others still listen.
    wait_connect(ports[0], true);
    let listeners = app.snapshot().listeners;
    assert_eq!(
        listeners
            .iter()
            .map(|l| (l.broker, l.open))
            .collect::<Vec<_>>(),
        [(1, true), (2, false), (3, true)]
    );
    app.update(Msg::Apply(Action::StartBroker { broker: 2 }))
        .unwrap();
    wait_connect(port, true);
    assert!(app.snapshot().listeners.iter().all(|l| l.open));
}

#[test]
fn a_replay_branches_into_a_live_session_with_the_listeners_open() {
    let recording = Recording::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/recordings/ch08-visibility.jsonl"
    )))
    .unwrap();
    let mut app = App::replay(
        recording,
        layout::builtin("clients").unwrap(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap()
    .with_branch_listeners(Box::new(|driver| {
        let l = live::open(
            driver,
            &ListenOptions {
                listen: "127.0.0.1:0".into(),
                allow_remote: false,
                auto_replicate_ms: 0,
                auto_create_topics: false,
            },
        )?;
        Ok((Box::new(l), "Kafka listeners open".to_string()))
    }));
    assert!(app.snapshot().listeners.is_empty(), "a replay has none");
    app.update(Msg::Command(KeyCommand::LastStep)).unwrap();
    app.update(Msg::Command(KeyCommand::Branch)).unwrap();
    let status = app.status.clone().unwrap().text;
    assert!(
        status.contains("branched at step 6") && status.contains("Kafka listeners open"),
        "{status}"
    );
    let listeners = app.snapshot().listeners;
    assert_eq!(listeners.len(), 1, "one per broker of the lesson's cluster");
    let port: u16 = listeners[0]
        .address
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    wait_connect(port, true);
}

#[test]
fn undo_is_refused_while_clients_listen() {
    let (mut app, _) = live_app(None);
    app.update(Msg::Apply(Action::Replicate {
        broker: None,
        topic: None,
        partition: None,
    }))
    .unwrap();
    app.update(Msg::Command(KeyCommand::Undo)).unwrap();
    let status = app.status.clone().unwrap();
    assert!(status.text.contains("--listen"), "{}", status.text);
    assert_eq!(app.driver().unwrap().step(), 1, "nothing undone");
}

/// The clients pane in the clients layout, from a state with two
/// connections: the frame is a snapshot, and the waiting request is drawn
/// in the waiting colour.
#[test]
fn the_clients_pane_frame_and_its_waiting_colour() {
    let driver = Driver::new(&header(), None).unwrap();
    let mut view = Snapshot::of(&driver);
    view.title = "clients".into();
    view.listeners = vec![
        ListenerSnapshot {
            broker: 1,
            address: "127.0.0.1:9092".into(),
            open: true,
        },
        ListenerSnapshot {
            broker: 2,
            address: "127.0.0.1:9093".into(),
            open: false,
        },
        ListenerSnapshot {
            broker: 3,
            address: "127.0.0.1:9094".into(),
            open: true,
        },
    ];
    view.clients = vec![
        ClientSnapshot {
            connection: 1,
            broker: 1,
            peer: "127.0.0.1:50686".into(),
            client_id: "rdkafka".into(),
            requests: 6,
            in_flight: Some("Produce v9 acks=all waiting".into()),
            producer_id: None,
            producer_epoch: None,
            transactional_id: None,
            group: None,
        },
        ClientSnapshot {
            connection: 2,
            broker: 3,
            peer: "127.0.0.1:50702".into(),
            client_id: "tx-app".into(),
            requests: 3,
            in_flight: None,
            producer_id: Some(4000),
            producer_epoch: Some(0),
            transactional_id: Some("tx-1".into()),
            group: None,
        },
    ];
    view.client_log = vec![
        "broker 1 127.0.0.1:50686: Produce v9 from client \"rdkafka\": acks=all t-0 offset 0 (1 record(s), pending)".into(),
    ];
    let theme = Theme::colored();
    let app = App::saved(view, layout::builtin("clients").unwrap(), Lang::En, theme);
    let buf = frame_buffer(&app, 120, 36);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("clients_pane_120x36", text);
    // The cell where "acks=all waiting" starts has the waiting style.
    let (x, y) = text
        .lines()
        .enumerate()
        .find_map(|(y, l)| {
            l.find("Produce v9 acks=all")
                .map(|i| (l[..i].chars().count(), y))
        })
        .expect("drawn");
    let cell = &buf[(x as u16, y as u16)];
    assert_eq!(cell.fg, theme.waiting().fg.unwrap(), "{cell:?}");
    // A closed listener in the bad colour, an open one in the good.
    let (x, y) = text
        .lines()
        .enumerate()
        .find_map(|(y, l)| {
            l.find("2 127.0.0.1:9093 closed")
                .map(|i| (l[..i].chars().count(), y))
        })
        .expect("drawn");
    assert_eq!(buf[(x as u16, y as u16)].fg, theme.bad().fg.unwrap());
}

/// A transaction through the dashboard (issue 14): its `send` and its
/// commit's marker wait for the followers like any acks=all write, so the
/// client's commit_transaction() finishes only after the lecturer's `r`
/// presses; meanwhile the clients pane shows the connection waiting. The
/// recording replays the transaction without the client.
#[test]
fn a_transaction_through_the_dashboard_waits_for_r_at_its_send_and_its_marker() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("txn.jsonl");
    let (mut app, ports) = live_app(Some(&file));
    let boot = format!("127.0.0.1:{}", ports[0]);
    let mut presses = 0;
    let mut waited_since: Option<Instant> = None;
    let mut seen_waiting = false;
    let out = serve_while(
        &mut app,
        move || python::run(&py, "ck_txn_commit.py", &[&boot, "t", "tx-live", "x"]),
        |app| {
            let view = app.snapshot();
            if view.clients.iter().any(|c| {
                c.in_flight
                    .as_deref()
                    .is_some_and(|f| f.contains("waiting in the cluster"))
            }) {
                seen_waiting = true;
            }
            if view.pending.is_empty() {
                waited_since = None;
                return;
            }
            // Nothing replicates by itself: press r once it has waited.
            let since = *waited_since.get_or_insert_with(Instant::now);
            if since.elapsed() > Duration::from_millis(300) {
                app.update(Msg::Command(KeyCommand::ReplicateAll)).unwrap();
                presses += 1;
                waited_since = None;
            }
        },
    );
    assert_eq!(out.trim(), "committed", "{out}");
    assert!(
        seen_waiting,
        "the clients pane showed the transaction waiting"
    );
    assert!(
        presses >= 2,
        "the send and the marker each waited for r ({presses})"
    );
    let s = state(&app);
    assert_eq!(values(&s), ["x"]);
    let tx = s
        .transactions
        .iter()
        .find(|t| t.id == "tx-live")
        .expect("the transaction");
    assert_eq!(tx.state.name(), "complete_commit");
    drop(app);
    let recording = Recording::load(&file).unwrap();
    let names: Vec<&str> = recording.steps.iter().map(|s| s.action.name()).collect();
    for name in ["begin", "send", "commit", "replicate"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let mut replay = Driver::new(&recording.header, None).unwrap();
    for step in &recording.steps {
        replay.apply(&step.action);
    }
    assert_eq!(Snapshot::of(&replay).partitions, s.partitions);
}

/// The lesson on idempotence through the dashboard (issue 14 item 3): `D`
/// arms the fault (a `note` step, said by the status line and the caption
/// pane), the next Produce's response is dropped and its connection
/// closed, the real idempotent producer retries, and the sequence check
/// answers the retry with the original offset: the records are written
/// once, the delivery reports carry offsets 0..4, the clients pane's log
/// says both, and the recording keeps the three notes and replays.
#[test]
fn d_drops_the_next_produce_response_and_the_retry_gets_the_original_offsets() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("fault.jsonl");
    let (mut app, ports) = live_app_replicating(Some(&file), 100);
    let boot = format!("127.0.0.1:{}", ports[0]);
    app.update(Msg::Command(KeyCommand::DropProduceResponse))
        .unwrap();
    let status = app.status.clone().unwrap().text;
    assert!(
        status.contains("fault armed: the response to the next Produce will be dropped"),
        "{status}"
    );
    let frame = buffer_text(&frame_buffer(&app, 160, 45));
    assert!(
        frame.contains("fault armed"),
        "the caption pane says it:\n{frame}"
    );
    // Armed once: a second D changes nothing.
    let steps = app.driver().unwrap().step();
    app.update(Msg::Command(KeyCommand::DropProduceResponse))
        .unwrap();
    assert!(
        app.status.clone().unwrap().text.contains("armed already"),
        "{:?}",
        app.status
    );
    assert_eq!(app.driver().unwrap().step(), steps);
    assert_eq!(
        app.snapshot().fault_armed.as_deref(),
        Some("drop-produce-response"),
        "the clients pane hears it from the listeners"
    );
    let out = serve_while(
        &mut app,
        move || python::run(&py, "ck_idempotent_retry.py", &[&boot, "t", "5", "v"]),
        |_| {},
    );
    assert_eq!(
        app.snapshot().fault_armed,
        None,
        "disarmed once it took its Produce"
    );
    println!("{out}");
    let reports: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("elapsed_ms"))
        .collect();
    assert_eq!(
        reports,
        [
            "delivered 0",
            "delivered 1",
            "delivered 2",
            "delivered 3",
            "delivered 4"
        ],
        "{out}"
    );
    let s = state(&app);
    assert_eq!(values(&s), ["v0", "v1", "v2", "v3", "v4"], "written once");
    let log = app.snapshot().client_log.join("\n");
    assert_eq!(log.matches("response dropped (fault)").count(), 1, "{log}");
    assert!(
        log.contains(
            "retry of producer 1000 seq 0..4 answered with the original offset 0 (duplicate, nothing appended)"
        ),
        "{log}"
    );
    drop(app);
    let recording = Recording::load(&file).unwrap();
    let notes: Vec<String> = recording
        .steps
        .iter()
        .filter(|s| s.action.name() == "note")
        .map(|s| s.caption.as_ref().unwrap().text("en").to_string())
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].starts_with("fault armed"), "{notes:?}");
    assert!(
        notes[1].starts_with("fault: response to Produce v9 from client \"rdkafka\" dropped"),
        "{notes:?}"
    );
    // The retry is a `produce` of the same identity as its original; the
    // engine answers it (E7), live and in the replay alike.
    let identities: Vec<String> = recording
        .steps
        .iter()
        .filter_map(|s| match &s.action {
            Action::Produce { wire: Some(w), .. } => {
                Some(format!("{} {} {}", w.producer_id, w.epoch, w.base_sequence))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        identities,
        ["1000 0 0", "1000 0 0"],
        "the original and its retry"
    );
    let mut replay = Driver::new(&recording.header, None).unwrap();
    for step in &recording.steps {
        replay.apply(&step.action);
    }
    assert_eq!(Snapshot::of(&replay).partitions, s.partitions);
    assert!(
        replay.events().iter().any(|e| e
            .text
            .contains("an exact retry, answered with the original offsets 0..4")),
        "the replay says what the live session said"
    );
}

/// The book's leader-failure lab (ch06, SPEC E6; examples/leader_failure.rs)
/// through a real acks=1 producer and the dashboard's actions: the client's
/// write is acknowledged by the leader alone (HW 0: no follower fetched
/// it; nothing replicates without `r`), then the lecturer stops the leader
/// (broker 1, its listener closes), promotes the follower (broker 2),
/// starts broker 1 again and replicates: the old leader truncates its
/// divergent tail, and a real consumer reads nothing. The client prints
/// the example's three lines; the recording replays to the same logs.
fn leader_failure_lab(py: std::path::PathBuf, script: &'static str) {
    let header: Header = serde_json::from_value(serde_json::json!({
        "mk_recording": 1,
        "title": "leader failure lab",
        "rules": "minikafka",
        "cluster": {"brokers": [1, 2],
                    "topics": [{"name": "lab", "partitions": 1, "replication_factor": 2}]},
    }))
    .unwrap();
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("lab.jsonl");
    let (mut app, ports) = live_app_with(header, Some(&file), 0);
    let boot = format!("127.0.0.1:{}", ports[0]);
    let leader = |app: &App| state(app).partitions[0].leader;
    assert_eq!(leader(&app), 1, "broker 1 leads lab-0");
    let (b, p) = (boot.clone(), py.clone());
    let produced = serve_while(
        &mut app,
        move || python::run(&p, script, &["produce", &b, "lab"]),
        |_| {},
    );
    let s = state(&app);
    assert_eq!(s.partitions[0].high_watermark, 0, "no follower fetched");
    assert_eq!(s.partitions[0].log_end_offset, 1, "the leader has it");
    // The lecturer's failover, as the keys z 1, e lab 0 2, Z 1 and r apply it.
    for action in [
        Action::StopBroker { broker: 1 },
        Action::Promote {
            topic: "lab".into(),
            partition: 0,
            broker: 2,
        },
        Action::StartBroker { broker: 1 },
    ] {
        app.update(Msg::Apply(action.clone())).unwrap();
        let status = app.status.clone().unwrap();
        assert!(
            !status.text.contains("error"),
            "{action:?}: {}",
            status.text
        );
    }
    app.update(Msg::Command(KeyCommand::ReplicateAll)).unwrap();
    assert_eq!(leader(&app), 2, "the follower leads now");
    wait_connect(ports[0], true);
    let consumed = serve_while(
        &mut app,
        move || python::run(&py, script, &["consume", &boot, "lab"]),
        |_| {},
    );
    let printed: Vec<String> = produced
        .lines()
        .chain(consumed.lines())
        .map(String::from)
        .collect();
    println!("{script}:\n{}", printed.join("\n"));
    assert_eq!(
        printed,
        [
            "acknowledged offset: 0",
            "consumer-visible end (HW): 0",
            "records after failover: 0",
        ],
        "the book's three lines"
    );
    let s = state(&app);
    let p = &s.partitions[0];
    assert_eq!((p.leader, p.log_end_offset, p.high_watermark), (2, 0, 0));
    assert!(
        p.replicas.iter().all(|r| r.log_end_offset == 0),
        "the old leader truncated its divergent tail: {:?}",
        p.replicas
    );
    drop(app);
    let recording = Recording::load(&file).unwrap();
    let names: Vec<&str> = recording.steps.iter().map(|s| s.action.name()).collect();
    assert_eq!(
        names,
        [
            "produce",
            "stop_broker",
            "promote",
            "start_broker",
            "replicate"
        ],
        "the client's write and the lecturer's failover"
    );
    let mut replay = Driver::new(&recording.header, None).unwrap();
    for step in &recording.steps {
        replay.apply(&step.action);
    }
    assert_eq!(Snapshot::of(&replay).partitions, s.partitions);
}

#[test]
fn the_leader_failure_lab_loses_a_confluent_kafka_acks_1_write() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    leader_failure_lab(py, "ck_leader_failure.py");
}

#[test]
fn the_leader_failure_lab_loses_a_kafka_python_acks_1_write() {
    let Some(py) = python::with("kafka") else {
        return;
    };
    leader_failure_lab(py, "kp_leader_failure.py");
}

/// A client's own retry of an acks=all produce that is still waiting (its
/// request timed out before the lecturer's `r`): kafka-python closes the
/// connection and resends the batch; the sequence check knows it, and the
/// retry's answer waits for the original's appends as the original did
/// (Kafka answers a duplicate once the original is replicated). After `r`
/// the client gets the original offsets, and nothing is written twice.
#[test]
fn a_retry_of_a_waiting_acks_all_produce_waits_for_r_too() {
    let Some(py) = python::with("kafka") else {
        return;
    };
    let (mut app, ports) = live_app(None);
    let boot = format!("127.0.0.1:{}", ports[0]);
    let mut replicated = false;
    let out = serve_while(
        &mut app,
        move || {
            python::run(
                &py,
                "kp_idempotent_retry.py",
                &[&boot, "t", "3", "w", "1500"],
            )
        },
        |app| {
            if replicated {
                return;
            }
            let view = app.snapshot();
            let retried = view
                .client_log
                .iter()
                .any(|l| l.contains("its original is still waiting for the followers"));
            if retried {
                // Not answered before r: the pending appends are the
                // original's (its records as one batch, or as the client
                // split them: never more appends than records).
                assert!((1..=3).contains(&view.pending.len()), "{:?}", view.pending);
                assert_eq!(values(&state(app)), ["w0", "w1", "w2"]);
                app.update(Msg::Command(KeyCommand::ReplicateAll)).unwrap();
                replicated = true;
            }
        },
    );
    assert!(replicated, "the client retried while waiting:\n{out}");
    assert_eq!(out.lines().next(), Some("offsets 0 1 2"), "{out}");
    let s = state(&app);
    assert_eq!(values(&s), ["w0", "w1", "w2"], "written once");
    assert_eq!(s.partitions[0].high_watermark, 3);
}

#[test]
fn with_auto_create_topics_a_clients_produce_creates_its_topic_as_a_step() {
    if std::process::Command::new("kcat")
        .arg("-V")
        .output()
        .is_err()
    {
        println!("skipped: kcat is not installed");
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("auto-create.jsonl");
    let driver = Driver::new(&header(), None).unwrap();
    let options = ListenOptions {
        listen: "127.0.0.1:0".into(),
        allow_remote: false,
        auto_replicate_ms: 100,
        auto_create_topics: true,
    };
    let listeners = live::open(&driver, &options).unwrap();
    let boot = format!("127.0.0.1:{}", listeners.addresses()[0].port);
    let writer = RecordingWriter::create(&file, &header()).unwrap();
    let mut app = App::live(
        driver,
        header(),
        Some(writer),
        layout::builtin("clients").unwrap(),
        Lang::En,
        Theme::colored(),
    )
    .with_listeners(Box::new(listeners));
    let out = serve_while(
        &mut app,
        move || {
            std::process::Command::new("sh")
                .args([
                    "-c",
                    &format!("printf 'one\\ntwo\\n' | timeout 20 kcat -b {boot} -P -t fresh"),
                ])
                .output()
                .unwrap()
        },
        |_| {},
    );
    assert!(
        out.status.success(),
        "kcat -P: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fresh = state(&app)
        .partitions
        .into_iter()
        .find(|p| p.topic == "fresh")
        .expect("the topic the producer named");
    assert_eq!(fresh.log_end_offset, 2);
    drop(app);
    let recording = Recording::load(&file).unwrap();
    assert!(
        recording
            .steps
            .iter()
            .any(|s| s.action.name() == "create_topic"),
        "the creation is a step of the recording"
    );
}

/// A real consumer checks its position with OffsetForLeaderEpoch after a
/// leader change (KIP-320), and serve's answer keeps it reading where it
/// was. confluent-kafka reads lab-0's three records from broker 1 (epoch
/// 0, replicated: the HW is 3); the lecturer stops broker 1 and promotes
/// broker 2 (epoch 1); a producer writes three more there. The consumer
/// sees the new epoch in its metadata, asks broker 2 where epoch 0 ends
/// (3, its position: nothing it read was lost), and reads on: each of the
/// six records once, in order. An end below its position would have made
/// it reset (a truncation) and read records again.
#[test]
fn a_consumer_validates_its_position_after_a_leader_change_and_reads_on() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let header: Header = serde_json::from_value(serde_json::json!({
        "mk_recording": 1,
        "title": "epoch validation",
        "rules": "kafka",
        "cluster": {"brokers": [1, 2],
                    "topics": [{"name": "lab", "partitions": 1, "replication_factor": 2}]},
    }))
    .unwrap();
    let (mut app, ports) = live_app_with(header, None, 0);
    let boot = format!("127.0.0.1:{},127.0.0.1:{}", ports[0], ports[1]);
    let (b, p) = (boot.clone(), py.clone());
    let out = serve_while(
        &mut app,
        move || python::run(&p, "ck_produce.py", &[&b, "lab", "0", "1", "3", "a"]),
        |_| {},
    );
    assert_eq!(out.matches("delivered").count(), 3, "{out}");
    app.update(Msg::Command(KeyCommand::ReplicateAll)).unwrap();
    assert_eq!(state(&app).partitions[0].high_watermark, 3);

    let temp = tempfile::tempdir().unwrap();
    let progress = temp.path().join("read.txt");
    let (b, p, file) = (boot.clone(), py.clone(), progress.clone());
    let mut producer: Option<std::thread::JoinHandle<String>> = None;
    let second = format!("127.0.0.1:{}", ports[1]);
    let read = serve_while(
        &mut app,
        move || {
            let file = file.to_str().unwrap().to_string();
            python::run(&p, "ck_truncation.py", &[&b, "lab", "0", "6", &file, "45"])
        },
        |app| {
            let lines = std::fs::read_to_string(&progress).unwrap_or_default();
            if producer.is_none() && lines.lines().count() >= 3 {
                for action in [
                    Action::StopBroker { broker: 1 },
                    Action::Promote {
                        topic: "lab".into(),
                        partition: 0,
                        broker: 2,
                    },
                ] {
                    app.update(Msg::Apply(action)).unwrap();
                }
                let (b, p) = (second.clone(), py.clone());
                producer = Some(std::thread::spawn(move || {
                    python::run(&p, "ck_produce.py", &[&b, "lab", "0", "1", "3", "b"])
                }));
            }
        },
    );
    println!("{read}");
    let records: Vec<&str> = read.lines().filter(|l| !l.starts_with("log:")).collect();
    assert_eq!(
        records,
        ["0 a0", "1 a1", "2 a2", "3 b0", "4 b1", "5 b2"],
        "each record once, in order:\n{read}"
    );
    // librdkafka's own account: it asked broker 2 (the new leader) and
    // took its answer, epoch 0 ending at 3.
    assert!(
        read.lines().any(|l| l.starts_with("log:")
            && l.contains(
                "/2: lab [0]: offset and epoch validation succeeded: broker end offset 3"
            )),
        "the consumer validated its position with OffsetForLeaderEpoch:\n{read}"
    );
    let s = state(&app);
    assert_eq!(
        (s.partitions[0].leader, s.partitions[0].leader_epoch),
        (2, 1)
    );
}
