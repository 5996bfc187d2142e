//! Frames of the dashboard's polish found by a new user's review (issue 14
//! item 3 and the dashboard after issue 13), drawn through the same code
//! as the live UI into ratatui's TestBackend: each is an insta snapshot,
//! and where a colour means something the Buffer's cell styles are
//! asserted too. See docs/dashboard.md for what each decides.

use minikafka::session::recording::Header;
use minikafka::session::snapshot::{ClientGroup, ClientSnapshot, ListenerSnapshot};
use minikafka::session::{Driver, Snapshot};
use minikafka::ui::app::App;
use minikafka::ui::headless::{buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;

fn header() -> Header {
    serde_json::from_value(serde_json::json!({
        "mk_recording": 1,
        "title": "clients",
        "rules": "minikafka",
        "cluster": {"brokers": [1, 2, 3],
                    "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}]},
    }))
    .unwrap()
}

/// Where `what` starts in the frame: (column, row) in cells.
fn find(text: &str, what: &str) -> Option<(u16, u16)> {
    text.lines().enumerate().find_map(|(y, l)| {
        l.find(what)
            .map(|i| (l[..i].chars().count() as u16, y as u16))
    })
}

fn cell_at<'a>(buf: &'a Buffer, text: &str, what: &str) -> &'a ratatui::buffer::Cell {
    let (x, y) = find(text, what).unwrap_or_else(|| panic!("{what:?} not drawn:\n{text}"));
    &buf[(x, y)]
}

/// A `--listen` dashboard's state: a producer whose acks=all produce
/// waits, a transactional producer, and a consumer polling all the time:
/// 40 empty fetches around one produce and one EndTxn.
fn clients_view(fault_armed: bool) -> Snapshot {
    let driver = Driver::new(&header(), None).unwrap();
    let mut view = Snapshot::of(&driver);
    view.title = "clients".into();
    view.listeners = (1..=3)
        .map(|b| ListenerSnapshot {
            broker: b,
            address: format!("127.0.0.1:{}", 9091 + b),
            open: b != 3,
        })
        .collect();
    let client = |connection, peer: &str, client_id: &str| ClientSnapshot {
        connection,
        broker: 1,
        peer: peer.into(),
        client_id: client_id.into(),
        requests: 0,
        in_flight: None,
        producer_id: None,
        producer_epoch: None,
        transactional_id: None,
        group: None,
    };
    view.clients = vec![
        ClientSnapshot {
            requests: 6,
            in_flight: Some("Produce v9 acks=all waiting".into()),
            ..client(1, "127.0.0.1:50686", "rdkafka")
        },
        ClientSnapshot {
            requests: 9,
            producer_id: Some(4000),
            producer_epoch: Some(0),
            transactional_id: Some("tx-1".into()),
            ..client(2, "127.0.0.1:50702", "tx-app")
        },
        ClientSnapshot {
            requests: 41,
            in_flight: Some("Fetch v11".into()),
            ..client(3, "127.0.0.1:50710", "consumer")
        },
    ];
    let fetch =
        "broker 1 127.0.0.1:50710: Fetch v11 from client \"consumer\": read_committed, 0 bytes";
    let mut log = vec![fetch.to_string(); 20];
    log.push(
        "broker 1 127.0.0.1:50686: Produce v9 from client \"rdkafka\": acks=all t-0 offset 0 (1 record(s), pending)"
            .into(),
    );
    log.extend(vec![fetch.to_string(); 10]);
    log.push("broker 1 127.0.0.1:50702: EndTxn v3 from client \"tx-app\": tx-1 commit".into());
    log.extend(vec![fetch.to_string(); 10]);
    view.client_log = log;
    if fault_armed {
        view.fault_armed = Some("drop-produce-response".into());
    }
    view
}

/// Issue 14 item 3 at 80x24: every connection's request in flight whole
/// (the peer column goes first); with one row left for the log, the
/// consumer's folded fetches give way to the EndTxn; the armed fault in
/// the clients pane's title, in the warning style. At 120x36 the log has
/// room: the produce, the EndTxn and the consumer's 40 empty fetches as
/// one dim line.
#[test]
fn the_clients_pane_keeps_requests_in_flight_and_folds_empty_fetches() {
    let theme = Theme::colored();
    let app = |armed| {
        App::saved(
            clients_view(armed),
            layout::builtin("clients").unwrap(),
            Lang::En,
            theme,
        )
    };
    let buf = frame_buffer(&app(true), 80, 24);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("clients_80x24_fault_armed", text);
    for whole in [
        "Produce v9 acks=all waiting",
        "4000 / 0 / tx-1",
        "EndTxn v3",
    ] {
        assert!(text.contains(whole), "{whole}:\n{text}");
    }
    assert!(!text.contains("×40"), "the fetches give way:\n{text}");
    // The waiting request in the waiting colour, the armed fault in the
    // warning style (reversed, so NO_COLOR keeps it).
    let waiting = cell_at(&buf, &text, "Produce v9 acks=all waiting");
    assert_eq!(Some(waiting.fg), theme.waiting().fg, "{waiting:?}");
    let mark = cell_at(&buf, &text, "⚠ fault armed");
    assert_eq!(Some(mark.fg), theme.warning().fg, "{mark:?}");
    assert!(mark.modifier.contains(Modifier::REVERSED | Modifier::BOLD));

    let buf = frame_buffer(&app(false), 120, 36);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("clients_120x36", text);
    assert!(!text.contains('⚠'), "not armed:\n{text}");
    let at = |what| {
        find(&text, what)
            .unwrap_or_else(|| panic!("{what}:\n{text}"))
            .1
    };
    let (produce, end_txn, fetches) = (
        at("Produce v9 from client"),
        at("EndTxn v3"),
        at("Fetch v11 ×40, empty (read_committed)"),
    );
    assert!(produce < end_txn && end_txn < fetches, "{text}");
    // The folded fetches dim, the produce line not.
    let folded = cell_at(&buf, &text, "Fetch v11 ×40");
    assert_eq!(Some(folded.fg), theme.dim().fg, "{folded:?}");
    let line = cell_at(&buf, &text, "Produce v9 from client");
    assert_ne!(Some(line.fg), theme.dim().fg, "{line:?}");
}

/// The armed fault's mark follows the fault: `D` arms it (the title says
/// so), and the drop of the next Produce's response disarms it. Driven by
/// kcat (CI installs it, `.ci/run`); skipped with a reason elsewhere.
#[test]
fn the_fault_mark_shows_from_d_until_the_response_is_dropped() {
    use minikafka::kafka::live::{self, ListenOptions};
    use minikafka::ui::app::Msg;
    use minikafka::ui::keys::KeyCommand;
    use std::time::{Duration, Instant};
    let kcat = std::process::Command::new("kcat").arg("-V").output();
    if !kcat.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "CI installs kcat (.ci/run)"
        );
        println!("skipped: kcat is not installed");
        return;
    }
    let driver = Driver::new(&header(), None).unwrap();
    let options = ListenOptions {
        listen: "127.0.0.1:0".into(),
        allow_remote: false,
        auto_replicate_ms: 0,
        auto_create_topics: false,
    };
    let listeners = live::open(&driver, &options).unwrap();
    let boot = format!("127.0.0.1:{}", listeners.addresses()[0].port);
    let mut app = App::live(
        driver,
        header(),
        None,
        layout::builtin("clients").unwrap(),
        Lang::En,
        Theme::colored(),
    )
    .with_listeners(Box::new(listeners));
    let title = |app: &App| {
        let text = buffer_text(&frame_buffer(app, 120, 36));
        let line = text.lines().find(|l| l.contains("┌Clients")).unwrap();
        line.to_string()
    };
    assert!(!title(&app).contains('⚠'));
    app.update(Msg::Command(KeyCommand::DropProduceResponse))
        .unwrap();
    assert_eq!(
        app.snapshot().fault_armed.as_deref(),
        Some("drop-produce-response")
    );
    assert!(title(&app).contains("⚠ fault armed"), "{}", title(&app));
    // One acks=1 produce: its response is dropped (kcat retries it on a
    // new connection; what it writes is not this test's business).
    let mut child = std::process::Command::new("kcat")
        .args(["-P", "-b", &boot, "-t", "t", "-p", "0", "-X", "acks=1"])
        .args(["-X", "message.timeout.ms=3000"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "v").unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while app.snapshot().fault_armed.is_some() {
        assert!(Instant::now() < deadline, "no response dropped");
        app.update(Msg::Serve).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = app.status.clone().unwrap().text;
    assert!(status.contains("dropped"), "the drop disarmed it: {status}");
    assert!(!title(&app).contains('⚠'), "{}", title(&app));
    let _ = child.kill();
    let _ = child.wait();
}

/// A layout of these tests' own, so the built-in layouts can change
/// without the key bar's frames changing.
fn small_layout() -> layout::Layout {
    layout::parse(
        "ui-frames-test.json",
        r#"{"layout":1,"name":"ui-frames-test","min_size":{"cols":80,"rows":24},
            "root":{"split":"vertical","children":[
              {"pane":"events","size":{"fill":1}},
              {"pane":"caption","size":{"length":4}}]}}"#,
    )
    .unwrap()
}

/// The demo session, live, in `layout`.
fn live_demo(layout: layout::Layout) -> App {
    let demo = minikafka::demo::recording();
    let mut driver = Driver::new(&demo.header, None).unwrap();
    for s in &demo.steps {
        driver.apply(&s.action);
    }
    App::live(
        driver,
        demo.header,
        None,
        layout,
        Lang::En,
        Theme::colored(),
    )
}

/// The key bar at 80 columns ends on a whole key, and `? help` and
/// `q quit` always end it, after a long status too (the status is
/// shortened at a word; the keys between go whole or not at all).
#[test]
fn the_key_bar_ends_on_whole_keys_with_help_and_quit() {
    let mut app = live_demo(small_layout());
    let buf = frame_buffer(&app, 80, 24);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("key_bar_live_80x24", text);
    let bar = text.lines().last().unwrap().trim_end();
    assert!(bar.ends_with("? help q quit"), "{bar}");
    assert!(bar.contains("t clock"), "{bar}");
    assert!(!bar.contains("crash"), "x crash does not fit whole: {bar}");
    // The key names are bold, their words are not.
    let q = cell_at(&buf, &text, "q quit");
    assert!(q.modifier.contains(Modifier::BOLD), "{q:?}");
    let (x, y) = find(&text, "q quit").unwrap();
    assert!(!buf[(x + 2, y)].modifier.contains(Modifier::BOLD));

    app.status = Some(minikafka::ui::app::Status::error(
        "step 30: produce: refused: broker 3 is stopped and cannot lead orders-2 until it starts again",
    ));
    let buf = frame_buffer(&app, 80, 24);
    let text = buffer_text(&buf);
    let bar = text.lines().last().unwrap().trim_end();
    insta::assert_snapshot!("key_bar_long_status_80x24", bar);
    assert!(bar.ends_with("│ ? help q quit"), "{bar}");
    assert!(bar.contains("cannot lead… │"), "shortened at a word: {bar}");
    assert_eq!(
        Some(buf[(1, 23)].fg),
        Theme::colored().bad().fg,
        "the error's colour"
    );
    // Wide enough, every key.
    let wide = buffer_text(&frame_buffer(&live_demo(small_layout()), 120, 24));
    assert!(
        wide.lines()
            .last()
            .unwrap()
            .trim_end()
            .ends_with("x crash ? help q quit"),
        "{wide}"
    );
}

fn recording(name: &str) -> minikafka::session::Recording {
    minikafka::session::Recording::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("recordings")
            .join(name),
    )
    .unwrap()
}

/// Chapter 6's leader failure, after the promotion: the old leader's LEO
/// is beyond the new leader's. The replicas pane says it is ahead on a
/// divergent history (`≠ +1 ahead`), in the divergent style, never a lag
/// of -1; the snapshot keeps the number as it is.
#[test]
fn a_replica_ahead_of_its_leader_shows_as_divergent() {
    use minikafka::ui::app::Msg;
    let rec = recording("ch06-leader-failure.jsonl");
    let steps = rec.steps.len();
    let mut app = App::replay(
        rec,
        layout::builtin("replication").unwrap(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    let step = (0..=steps)
        .find(|&s| {
            app.update(Msg::Goto(s)).unwrap();
            app.snapshot()
                .partitions
                .iter()
                .flat_map(|p| &p.replicas)
                .any(|r| r.lag < 0)
        })
        .expect("a step with a replica ahead of its leader");
    let buf = frame_buffer(&app, 120, 36);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("replica_ahead_120x36", text);
    let replicas: Vec<&str> = text.lines().filter(|l| l.contains("ms ")).collect();
    assert!(
        !replicas
            .iter()
            .any(|l| l.contains(" -1 ") || l.contains(" -2 ")),
        "step {step}:\n{text}"
    );
    let cell = cell_at(&buf, &text, "≠ +");
    assert_eq!(Some(cell.fg), Theme::colored().divergent().fg, "{cell:?}");
    assert!(
        cell.modifier
            .contains(Modifier::UNDERLINED | Modifier::BOLD)
    );
}

/// The demo's transactional ids (`tx-cancel`, `tx-open`) are longer than
/// the six cells the columns had: the partitions pane's values and the
/// journal's states now start in one column on every row, and an id
/// longer than the column is cut with `…`.
#[test]
fn columns_stay_aligned_with_long_transactional_ids() {
    let app = live_demo(layout::builtin("transactions").unwrap());
    let text = buffer_text(&frame_buffer(&app, 200, 60));
    insta::assert_snapshot!("long_txn_ids_transactions_200x60", text);
    // The column where the rows' values start, in the partitions pane
    // (the left half of the top row).
    let value_at = |what: &str| {
        let line = text
            .lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("{what}:\n{text}"));
        line[..line.find(what).unwrap()].chars().count()
    };
    assert_eq!(value_at("[in-flight]"), value_at("[order-6]"), "{text}");
    assert_eq!(value_at("[in-flight]"), value_at("COMMIT"), "{text}");
    let states: Vec<usize> = text
        .lines()
        .filter(|l| l.contains(" ✓ tx-"))
        .map(|l| {
            let after = l.find(" ✓ tx-").unwrap() + " ✓ ".len();
            let rest = &l[after..];
            let id_end = rest.find(' ').unwrap();
            let gap = rest[id_end..].len() - rest[id_end..].trim_start().len();
            l[..after].chars().count() + rest[..id_end].chars().count() + gap
        })
        .collect();
    assert!(states.len() >= 2, "{text}");
    assert!(
        states.windows(2).all(|w| w[0] == w[1]),
        "{states:?}\n{text}"
    );
}

/// Keys typed into the app as the terminal would send them (`\n` Enter,
/// `\u{1b}` Esc, `\u{7f}` Backspace, `←`, `\u{15}` Ctrl-U).
fn press(app: &mut App, keys: &str) {
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    for c in keys.chars() {
        let (code, mods) = match c {
            '\n' => (KeyCode::Enter, KeyModifiers::NONE),
            '\u{1b}' => (KeyCode::Esc, KeyModifiers::NONE),
            '\u{7f}' => (KeyCode::Backspace, KeyModifiers::NONE),
            '\u{15}' => (KeyCode::Char('u'), KeyModifiers::CONTROL),
            '←' => (KeyCode::Left, KeyModifiers::NONE),
            c => (KeyCode::Char(c), KeyModifiers::NONE),
        };
        let key = Event::Key(KeyEvent::new(code, mods));
        if let Some(msg) = minikafka::ui::run::message(app, &key) {
            app.update(msg).unwrap();
        }
    }
}

/// `g` as a new user types it: the prompt opens with the current step
/// selected, so typing a number replaces it; a refused entry stays, says
/// why in the error colour, and is selected again to be typed over (or
/// edited after a cursor key); Esc closes the prompt and forgets it.
#[test]
fn a_refused_go_to_step_keeps_its_text_selected_to_fix() {
    use minikafka::ui::app::Msg;
    let theme = Theme::colored();
    let rec = recording("ch08-visibility.jsonl");
    let mut app = App::replay(rec, small_layout(), Lang::En, theme).unwrap();
    app.update(Msg::Goto(2)).unwrap();
    let step = |app: &App| app.snapshot().step;
    press(&mut app, "g");
    let prompt = app.prompt.clone().unwrap();
    assert_eq!((prompt.text.as_str(), prompt.selected), ("2", true));
    press(&mut app, "99\n");
    let prompt = app.prompt.clone().expect("a refused prompt stays open");
    assert_eq!(
        (prompt.text.as_str(), prompt.selected),
        ("99", true),
        "typed over the 2"
    );
    assert_eq!(step(&app), 2, "nothing moved");
    let buf = frame_buffer(&app, 80, 24);
    let text = buffer_text(&buf);
    let bar = text.lines().last().unwrap().trim_end();
    insta::assert_snapshot!("goto_refused_80x24", bar);
    assert!(
        bar.contains("› 99 ▏ ✗ no step 99: a step from 0 to 6 (Esc=cancel)"),
        "{bar}"
    );
    // The kept text is drawn selected (reversed and underlined), the
    // refusal as an error.
    let kept = cell_at(&buf, &text, "99 ▏");
    assert!(
        kept.modifier
            .contains(Modifier::REVERSED | Modifier::UNDERLINED),
        "{kept:?}"
    );
    let refusal = cell_at(&buf, &text, "✗ no step");
    assert_eq!(Some(refusal.fg), theme.bad().fg, "{refusal:?}");
    // A cursor key ends the selection, and the text is edited in place.
    press(&mut app, "←");
    let prompt = app.prompt.clone().unwrap();
    assert!(!prompt.selected && prompt.refusal.is_some(), "{prompt:?}");
    press(&mut app, "\u{7f}");
    let prompt = app.prompt.clone().unwrap();
    assert_eq!(prompt.text, "9", "edited, not replaced");
    assert!(prompt.refusal.is_none(), "an edit clears the reason");
    press(&mut app, "\n");
    assert!(
        app.prompt.as_ref().unwrap().selected,
        "refused again, selected again"
    );
    press(&mut app, "5\n");
    assert!(app.prompt.is_none());
    assert_eq!(step(&app), 5, "typed over and went");
    // Esc closes it and forgets the text: the next g starts from the step.
    press(&mut app, "gabc\n");
    assert!(
        app.prompt
            .as_ref()
            .unwrap()
            .refusal
            .as_deref()
            .unwrap()
            .contains("\"abc\" is not a step number")
    );
    press(&mut app, "\u{1b}");
    assert!(app.prompt.is_none());
    assert_eq!(step(&app), 5);
    press(&mut app, "g");
    assert_eq!(app.prompt.as_ref().unwrap().text, "5");
}

/// The demo at 80x24 in the default layout: six partitions in four rows.
/// The partitions pane used to show six headers' worth of headers and no
/// batch; now the anchor (the partition the last step wrote to) keeps its
/// newest batches, in their fate's colour, and the others are counted on
/// the border.
#[test]
fn the_partitions_pane_at_80x24_shows_the_anchors_batches() {
    let theme = Theme::colored();
    let app = live_demo(layout::builtin_default());
    let buf = frame_buffer(&app, 80, 24);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("partitions_demo_80x24", text);
    // The partitions pane's rows: the left 28 columns of rows 2 to 5.
    let pane: Vec<String> = text
        .lines()
        .skip(2)
        .take(4)
        .map(|l| l.chars().skip(1).take(27).collect())
        .collect();
    let body: Vec<&String> = pane
        .iter()
        .filter(|l| {
            l.trim_start_matches(['▸', ' '])
                .starts_with(['✓', '✗', '…', '◆', '‖', '▵'])
        })
        .collect();
    assert!(!body.is_empty(), "at least one batch row:\n{text}");
    assert!(
        text.lines().nth(6).unwrap().contains("more ┘"),
        "the others are counted:\n{text}"
    );
    // The batch row is drawn in its fate's colour.
    let (x, y) = find(&text, body[0].trim_start_matches(['▸', ' '])).unwrap();
    let fate = minikafka::session::snapshot::Fate::Committed;
    assert_eq!(Some(buf[(x, y)].fg), theme.fate(fate).fg, "{text}");
}

/// The caption's timeline is the whole bottom border: at every step of
/// chapter 8, at 80x24 and 120x36, in both languages, the current step's
/// `▲` is drawn (bold) and the last step, which has a caption, is the
/// border's last cell; the caption's "↓ 1 more" goes on the top border,
/// never over the timeline.
#[test]
fn the_timeline_keeps_the_current_and_the_last_step_in_view() {
    use minikafka::ui::app::Msg;
    let rec = recording("ch08-visibility.jsonl");
    let last = rec.steps.len();
    assert!(
        rec.steps[last - 1].caption.is_some(),
        "the last step has a caption"
    );
    for lang in [Lang::En, Lang::Zh] {
        let mut app = App::replay(
            rec.clone(),
            layout::builtin("transactions").unwrap(),
            lang,
            Theme::colored(),
        )
        .unwrap();
        for (w, h) in [(80u16, 24u16), (120, 36)] {
            for step in 0..=last {
                app.update(Msg::Goto(step)).unwrap();
                let buf = frame_buffer(&app, w, h);
                let text = buffer_text(&buf);
                if (step, w, lang) == (2, 80, Lang::En) {
                    insta::assert_snapshot!("timeline_step2_80x24", text);
                }
                // The caption is the last pane: its bottom border is the
                // row above the key bar.
                let y = h - 2;
                let border: String = (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect();
                assert!(border.starts_with('└') && border.ends_with('┘'), "{text}");
                assert!(
                    !border.contains("more") && !border.contains('↓'),
                    "step {step}: {border}"
                );
                assert_eq!(border.matches('▲').count(), 1, "step {step}: {border}");
                let end = buf[(w - 2, y)].symbol();
                let want = if step == last { "▲" } else { "●" };
                assert_eq!(end, want, "step {step} at {w}x{h}: {border}");
                let x = (0..w).find(|&x| buf[(x, y)].symbol() == "▲").unwrap();
                assert!(buf[(x, y)].modifier.contains(Modifier::BOLD), "{border}");
            }
        }
    }
}

/// A frame into a buffer of `cols` x `rows` as the terminal draws it
/// ([`App::draw`]: the app keeps its map).
fn draw(app: &mut App, cols: u16, rows: u16) -> Buffer {
    let mut buf = Buffer::empty(ratatui::layout::Rect::new(0, 0, cols, rows));
    app.draw(&mut buf);
    buf
}

/// One snapshot per change of state (issue 24 item 2): a key press and
/// the frame after it build it once, however many panes, keys and
/// clicks read it; a key that changes no state builds none.
#[test]
fn a_key_press_builds_the_snapshot_once() {
    use minikafka::ui::app::Msg;
    let mut app = live_demo(layout::builtin_default());
    app.update(Msg::Resize(120, 36)).unwrap();
    draw(&mut app, 120, 36);
    let builds = |app: &App| app.snapshot_builds();
    let mut before = builds(&app);
    // An engine key (`r`: a step), a replay step, a selection, a scroll,
    // a click and the frames after them.
    for (keys, built) in [("r", 1), ("x", 1), (" ", 1), ("J", 0), ("\t", 0), ("j", 0)] {
        press(&mut app, keys);
        draw(&mut app, 120, 36);
        assert_eq!(builds(&app) - before, built, "{keys:?}");
        before = builds(&app);
    }
    app.update(Msg::Click(60, 30)).unwrap();
    draw(&mut app, 120, 36);
    assert_eq!(builds(&app), before, "a click");

    // A replay: one per step moved, the moment of death of a crash and
    // its recovery each a state of their own.
    let mut replay = App::replay(
        recording("ch08-torn-journal.jsonl"),
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    draw(&mut replay, 120, 36);
    for _ in 0..3 {
        let before = builds(&replay);
        press(&mut replay, " ");
        draw(&mut replay, 120, 36);
        assert_eq!(builds(&replay) - before, 1);
    }
}

/// A click focuses the pane the last frame drew under it (issue 24 item
/// 2): the app keeps that frame's map and never lays the screen out again
/// itself. Before any frame, the map is the current state drawn at the
/// terminal's size into a throwaway buffer.
#[test]
fn a_click_uses_the_map_of_the_last_draw() {
    use minikafka::ui::app::Msg;
    use minikafka::ui::panes::PaneId;
    let mut app = live_demo(layout::builtin_default());
    app.update(Msg::Resize(120, 36)).unwrap();
    draw(&mut app, 120, 36);
    let map = app.frame_map().unwrap().clone();
    assert_eq!(map.area, ratatui::layout::Rect::new(0, 0, 120, 36));
    let at = |pane: PaneId| {
        let r = map.panes.iter().find(|(p, _)| *p == pane).unwrap().1;
        (r.x + 1, r.y + 1)
    };
    let (ex, ey) = at(PaneId::Events);
    assert_eq!(app.focused(), Some(PaneId::Partitions));
    // Zoomed, the partitions pane would fill the body; the frame on screen
    // still shows the layout until the next draw, and the click goes to
    // the pane drawn there.
    press(&mut app, "f");
    app.update(Msg::Click(ex, ey)).unwrap();
    assert_eq!(app.focused(), Some(PaneId::Events), "the drawn map");
    // Drawn zoomed, the events pane fills the body: a click anywhere in it
    // keeps it.
    draw(&mut app, 120, 36);
    let (px, py) = at(PaneId::Partitions);
    app.update(Msg::Click(px, py)).unwrap();
    assert_eq!(app.focused(), Some(PaneId::Events), "the zoomed frame");
    assert_eq!(
        app.frame_map().unwrap().panes,
        [(PaneId::Events, ratatui::layout::Rect::new(0, 1, 120, 34))]
    );

    // Nothing drawn yet: the map is the current state's, drawn at the
    // terminal's size; none while the size is unknown.
    let mut fresh = live_demo(layout::builtin_default());
    assert!(fresh.frame_map().is_none());
    fresh.update(Msg::Click(ex, ey)).unwrap();
    assert_eq!(fresh.focused(), Some(PaneId::Partitions), "no size, no map");
    fresh.update(Msg::Resize(120, 36)).unwrap();
    fresh.update(Msg::Click(ex, ey)).unwrap();
    assert_eq!(fresh.focused(), Some(PaneId::Events));
    assert_eq!(fresh.frame_map().unwrap().panes, map.panes);
}

/// A replay's timeline (the caption pane's bottom border) is clickable
/// (issue 28's polish: it looked clickable and was not): a click on a
/// caption's `●` goes to that captioned step and draws it, a click
/// elsewhere on the line to the step nearest the place, and the step's
/// `▲` is then drawn in the cell clicked. A click in the pane's body
/// still only focuses it.
#[test]
fn a_click_on_the_timeline_goes_to_that_step() {
    use minikafka::ui::app::Msg;
    use minikafka::ui::panes::PaneId;
    let mut replay = App::replay(
        recording("ch08-visibility.jsonl"),
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    replay.update(Msg::Resize(160, 48)).unwrap();
    let buf = draw(&mut replay, 160, 48);
    let area = replay
        .frame_map()
        .unwrap()
        .panes
        .iter()
        .find(|(p, _)| *p == PaneId::Caption)
        .expect("the default layout shows the caption")
        .1;
    let row = area.bottom() - 1;
    let line = |buf: &Buffer| -> Vec<(u16, String)> {
        (area.x + 1..area.right() - 1)
            .map(|x| (x, buf[(x, row)].symbol().to_string()))
            .collect()
    };
    let captions = replay.view().captioned_steps.clone();
    let total = replay.view().total_steps.unwrap();
    assert!(captions.len() >= 3, "{captions:?}");
    // The second caption's mark, found on screen, not computed.
    let marks: Vec<u16> = line(&buf)
        .into_iter()
        .filter(|(_, s)| s == "●")
        .map(|(x, _)| x)
        .collect();
    assert!(marks.len() >= 2, "{marks:?}");
    let before = replay.view().step;
    replay.update(Msg::Click(marks[1], row)).unwrap();
    let went = replay.view().step;
    assert_ne!(went, before);
    assert!(captions.contains(&went), "a ● is a caption: {went}");
    let buf = draw(&mut replay, 160, 48);
    let at: Vec<u16> = line(&buf)
        .into_iter()
        .filter(|(_, s)| s == "▲")
        .map(|(x, _)| x)
        .collect();
    assert_eq!(at, [marks[1]], "the ▲ is where the click was");
    // The line's right end is the last step.
    replay.update(Msg::Click(area.right() - 2, row)).unwrap();
    assert_eq!(replay.view().step, total);
    // The pane's body: a focus, no move.
    replay.update(Msg::Click(area.x + 2, area.y + 1)).unwrap();
    assert_eq!(replay.view().step, total);
    assert_eq!(replay.focused(), Some(PaneId::Caption));
}

/// `mk-tui serve`'s consumer group members in the clients pane: each
/// member's row names its group, generation and the partitions the leader
/// assigned it, in the good colour while the group is stable and in the
/// waiting colour while it rebalances (a member that just joined has no
/// assignment yet). A connection that is no member shows `-`.
#[test]
fn the_clients_pane_shows_each_members_group_generation_and_assignment() {
    let theme = Theme::colored();
    let mut view = clients_view(false);
    let member = |id: &str, generation, state: &str, assignment: &[&str]| ClientGroup {
        group: "g".into(),
        member_id: id.into(),
        generation,
        state: state.into(),
        assignment: assignment.iter().map(|p| p.to_string()).collect(),
    };
    let consumer = view.clients[2].clone();
    view.clients[2].group = Some(member("rdkafka-1", 3, "Stable", &["t-0", "t-2"]));
    view.clients.push(ClientSnapshot {
        connection: 4,
        peer: "127.0.0.1:50720".into(),
        group: Some(member("rdkafka-2", 3, "Stable", &["t-1", "t-3"])),
        ..consumer.clone()
    });
    let stable = App::saved(
        view.clone(),
        layout::builtin("clients").unwrap(),
        Lang::En,
        theme,
    );
    let buf = frame_buffer(&stable, 120, 36);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("clients_group_members_120x36", text);
    assert!(text.contains("group / gen / parts"), "{text}");
    assert!(text.contains("g / 3 / t-0,t-2"), "{text}");
    assert!(text.contains("g / 3 / t-1,t-3"), "{text}");
    let good = cell_at(&buf, &text, "g / 3 / t-0,t-2");
    assert_eq!(Some(good.fg), theme.good().fg, "{good:?}");
    // A third member joins: the group rebalances, the new one has nothing
    // yet, and every member is drawn waiting.
    for c in view.clients.iter_mut().filter(|c| c.group.is_some()) {
        if let Some(g) = &mut c.group {
            g.state = "PreparingRebalance".into();
        }
    }
    view.clients.push(ClientSnapshot {
        connection: 5,
        peer: "127.0.0.1:50730".into(),
        group: Some(member("rdkafka-3", 3, "PreparingRebalance", &[])),
        ..consumer
    });
    let rebalancing = App::saved(view, layout::builtin("clients").unwrap(), Lang::En, theme);
    let buf = frame_buffer(&rebalancing, 120, 36);
    let text = buffer_text(&buf);
    let waiting = cell_at(&buf, &text, "g / 3 / t-1,t-3");
    assert_eq!(Some(waiting.fg), theme.waiting().fg, "{waiting:?}");
    let new = cell_at(&buf, &text, "g / 3 / -");
    assert_eq!(Some(new.fg), theme.waiting().fg, "{new:?}");
}

/// A new user's trial: at 80 columns a refused produce prompt's reason was
/// cut after `✗ un`. Where it does not fit after the text it gets lines of
/// its own above the prompt, whole and in the error colour with the way
/// out, and the prompt line keeps the text and the cursor; where it fits (200
/// columns) it stays on the prompt's line.
#[test]
fn a_long_prompt_refusal_is_read_whole_at_80_columns() {
    let theme = Theme::colored();
    let mut app = live_demo(layout::builtin_default());
    press(&mut app, "p\u{15}nosuch x acks=2\n");
    let reason = app
        .prompt
        .as_ref()
        .and_then(|p| p.refusal.clone())
        .expect("refused, and still open");
    assert!(reason.starts_with("unknown topic \"nosuch\""), "{reason}");
    let buf = frame_buffer(&app, 80, 24);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("prompt_refused_80x24", text);
    let lines: Vec<&str> = text.lines().collect();
    let bar = lines[23].trim_end();
    assert!(bar.contains("› nosuch x acks=2"), "{bar}");
    assert!(
        bar.ends_with("› nosuch x acks=2"),
        "nothing after the cursor: {bar}"
    );
    // Every word of the reason is on screen, above the prompt, in order.
    let band: String = lines[..23]
        .iter()
        .rev()
        .take_while(|l| !l.starts_with('─'))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(band, format!("✗ {reason} (Esc=cancel)"), "{text}");
    let cross = cell_at(&buf, &text, "✗ unknown");
    assert_eq!(Some(cross.fg), theme.bad().fg, "{cross:?}");
    let (x, y) = find(&text, "the topics are").unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        Some(buf[(x, y)].fg),
        theme.bad().fg,
        "the whole reason is an error"
    );
    // Wide, it fits on the prompt's line and nothing covers the panes.
    let wide = buffer_text(&frame_buffer(&app, 200, 60));
    let wide_bar = wide.lines().last().unwrap().trim_end();
    assert!(
        wide_bar.ends_with(&format!("▏ ✗ {reason} (Esc=cancel)")),
        "{wide_bar}"
    );
    assert!(!wide.lines().any(|l| l.starts_with(&"─".repeat(200))));
    // An edit clears the reason, and the band goes with it.
    press(&mut app, "\u{7f}");
    let text = buffer_text(&frame_buffer(&app, 80, 24));
    assert!(!text.contains("✗"), "{text}");
    // A reason longer than a line wraps at words, indented under itself.
    press(&mut app, "\u{15}a-topic-name-nobody-made-in-this-demo x\n");
    let reason = app.prompt.as_ref().unwrap().refusal.clone().unwrap();
    let text = buffer_text(&frame_buffer(&app, 80, 24));
    let lines: Vec<&str> = text.lines().collect();
    let rule = lines.iter().rposition(|l| l.starts_with('─')).unwrap();
    assert_eq!(rule, 20, "two lines of reason:\n{text}");
    assert!(lines[21].starts_with(" ✗ unknown topic"), "{text}");
    assert!(
        lines[22].starts_with("   ") && !lines[22].trim().is_empty(),
        "{text}"
    );
    let band = format!("{} {}", lines[21].trim(), lines[22].trim());
    assert_eq!(band, format!("✗ {reason} (Esc=cancel)"), "{text}");
}

/// A new user's trial: after a broker was stopped the log legend said
/// `▵ above HW` and `- above HW`, two glyphs with one label. They are the
/// same offsets, a batch's cell and the scale under it (not on every ISR
/// replica yet, read by no consumer), so one item names both; without an
/// `↑` batch drawn, the scale's `-` keeps its own item. Chapter 6's leader
/// failure: broker 1 stopped, its acks=1 write above the HW.
#[test]
fn the_log_legend_gives_above_hw_one_item_for_both_glyphs() {
    use minikafka::session::snapshot::fate::Fate;
    use minikafka::ui::app::Msg;
    let rec = recording("ch06-leader-failure.jsonl");
    let steps = rec.steps.len();
    let mut app = App::replay(rec, layout::builtin_default(), Lang::En, Theme::colored()).unwrap();
    let legend_of = |text: &str| -> String {
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("= stable")).collect();
        assert_eq!(lines.len(), 1, "one legend line:\n{text}");
        lines[0].to_string()
    };
    let (mut with, mut without) = (None, None);
    for step in 0..=steps {
        app.update(Msg::Goto(step)).unwrap();
        let buf = frame_buffer(&app, 160, 48);
        let text = buffer_text(&buf);
        let legend = legend_of(&text);
        if legend.contains('▵') {
            with.get_or_insert((step, buf, text, legend));
        } else {
            without.get_or_insert(legend);
        }
    }
    let (step, buf, text, legend) = with.expect("a step draws an ▵ batch");
    insta::assert_snapshot!("log_legend_above_hw_160x48", text);
    assert!(
        legend.contains("▵ above HW (- on the scale)"),
        "step {step}: {legend}"
    );
    assert_eq!(legend.matches("above HW").count(), 1, "{legend}");
    let item = cell_at(&buf, &text, "▵ above HW (");
    assert_eq!(
        Some(item.fg),
        Theme::colored().fate(Fate::AboveHighWatermark).fg
    );
    let without = without.expect("a step draws no ↑ batch");
    assert!(without.contains("- above HW"), "{without}");
}

/// A new user's trial: in the help overlay `Ctrl-U/Ctrl-W` was wider than
/// the key column, so its row's text started three columns right of every
/// other row's. The column is as wide as the longest key: every entry's
/// text starts in one column, at 80x24 (scrolled to the prompt's keys) and
/// at 200x60 (everything on one page).
#[test]
fn the_help_key_column_fits_its_longest_key() {
    let mut app = live_demo(layout::builtin_default());
    press(&mut app, "?");
    // The column where an entry's text starts, on the row of `key`.
    let text_at = |text: &str, key: &str, what: &str| -> usize {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("{key}  {what}")))
            .unwrap_or_else(|| panic!("{key:?} then {what:?} not drawn:\n{text}"));
        let i = line.find(&format!("{key}  {what}")).unwrap();
        line[..i].chars().count() + key.chars().count() + 2
    };
    let mut found = None;
    for _ in 0..60 {
        let text = buffer_text(&frame_buffer(&app, 80, 24));
        if text.contains("Ctrl-U/Ctrl-W") && text.contains("Enter/Esc") {
            found = Some(text);
            break;
        }
        press(&mut app, "j");
    }
    let small = found.expect("the prompt's keys are on some page at 80x24");
    insta::assert_snapshot!("help_prompt_keys_80x24", small);
    let col = text_at(&small, "Ctrl-U/Ctrl-W", "delete to the start");
    assert_eq!(text_at(&small, "Enter/Esc", "apply/cancel"), col, "{small}");
    assert_eq!(text_at(&small, "Bksp/Del", "delete before"), col, "{small}");
    // A wrapped entry's next line starts in the same column.
    press(&mut app, "??");
    let wide = buffer_text(&frame_buffer(&app, 200, 60));
    insta::assert_snapshot!("help_200x60", wide);
    let col = text_at(&wide, "Ctrl-U/Ctrl-W", "delete to the start");
    for (key, what) in [
        ("?", "help"),
        ("Tab/S-Tab", "focus next"),
        ("Enter/Esc", "apply"),
    ] {
        assert_eq!(text_at(&wide, key, what), col, "{key}:\n{wide}");
    }
}

/// A new user's trial: at 80x24 the commit-and-crash prompt's key hint was
/// cut inside a word (`▏ Enter=a`). The hint keeps whole words only,
/// `Enter=apply` alone where both do not fit, and all of it where they do.
#[test]
fn a_prompts_key_hint_is_cut_between_words_never_inside_one() {
    let mut app = live_demo(layout::builtin_default());
    press(&mut app, "b\ns\nX");
    assert!(app.prompt.is_some(), "the commit-and-crash prompt is open");
    let bar = |cols| {
        let text = buffer_text(&frame_buffer(&app, cols, 24));
        text.lines().last().unwrap().trim_end().to_string()
    };
    let narrow = bar(80);
    assert!(narrow.contains("› tx-1 "), "{narrow}");
    let hint = narrow.split('▏').nth(1).map(str::trim);
    assert!(
        matches!(
            hint,
            None | Some("Enter=apply") | Some("Enter=apply Esc=cancel")
        ),
        "{narrow}"
    );
    let wide = bar(200);
    assert!(wide.ends_with("▏ Enter=apply Esc=cancel"), "{wide}");
}
