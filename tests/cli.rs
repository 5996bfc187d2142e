//! The `mk-tui` binary, as the README runs it. These tests live in their own
//! test binary: they spawn processes, and a process forked while another
//! test holds a data directory's lock would briefly share that lock.

use std::process::Command;

#[test]
fn mk_tui_prints_the_demo_cluster() {
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui")).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("orders-2: leader 1 (epoch 1)"), "{text}");
    assert!(text.contains("broker 3: LEO"), "{text}");
    assert!(text.contains("out of sync, stopped"), "{text}");
    assert!(
        text.contains("HW 7, LSO 5"),
        "an open transaction holds the LSO below the HW: {text}"
    );
    assert!(
        text.contains("transaction tx-open: ongoing [orders-1@5]"),
        "{text}"
    );
    assert!(
        text.contains("group shipping: payments-0 committed at 2"),
        "{text}"
    );
}

#[test]
fn mk_tui_reopens_a_persistent_data_directory_and_reports_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_mk-tui"))
            .arg("--data-dir")
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let first = run();
    assert!(first.status.success());
    let segment = dir
        .path()
        .join("broker-1/orders-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes.truncate(bytes.len() - 3);
    std::fs::write(&segment, bytes).unwrap();
    let second = run();
    let text = String::from_utf8(second.stdout).unwrap();
    assert!(text.contains("recovery: cut"), "{text}");
    assert!(text.contains("orders-0 on broker 1"), "{text}");
}

#[test]
fn mk_tui_reports_a_locked_or_bad_data_directory_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("metadata.json"), "not json").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("mk-tui: corrupt ") && err.contains("metadata.json"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

fn mk_tui(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const HEADER: &str = r#"{"mk_recording":1,"title":"t","cluster":{"brokers":[1],"topics":[{"name":"out","partitions":1,"replication_factor":1}]}}"#;

fn write_recording(dir: &std::path::Path, name: &str, lines: &[&str]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.display().to_string()
}

/// `mk-tui state` shows the consumer groups (E15): state, generation,
/// members with assignment, deadline and positions, each partition's
/// owner, committed offset and lag, and what the last rebalance moved.
#[test]
fn state_shows_the_consumer_groups() {
    let (code, out, err) = mk_tui(&["state", "recordings/ch09-rebalance.jsonl", "--step", "11"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let g = &v["groups"][0];
    assert_eq!(
        (g["group"].as_str(), g["state"].as_str()),
        (Some("workers"), Some("stable"))
    );
    assert_eq!(g["generation"], 2);
    let members = g["members"].as_array().unwrap();
    assert_eq!(members.len(), 2);
    assert_eq!(members[1]["member"], "member-2");
    assert_eq!(
        members[1]["assignment"],
        serde_json::json!(["orders-1", "orders-3"])
    );
    assert_eq!(members[1]["deadline_ms"], 10_000);
    assert_eq!(
        members[1]["positions"],
        serde_json::json!({"orders-1": 2, "orders-3": 2})
    );
    assert_eq!(
        members[1]["last_poll"][0],
        serde_json::json!({"partition": "orders-1", "offset": 1, "value": "b1"})
    );
    let p1 = &g["partitions"][1];
    assert_eq!(p1["partition"], "orders-1");
    assert_eq!(
        (p1["owner"].as_str(), p1["committed"].as_i64()),
        (Some("member-2"), Some(1))
    );
    assert_eq!(
        (p1["high_watermark"].as_i64(), p1["lag"].as_i64()),
        (Some(2), Some(1))
    );
    let moved = &g["last_rebalance"]["moved"];
    assert_eq!(
        moved[0],
        serde_json::json!({"partition": "orders-1", "from": "member-1", "to": "member-2"})
    );
    // After the expiry (step 14) member-2 owns every partition at generation 3.
    let (_, out, _) = mk_tui(&["state", "recordings/ch09-rebalance.jsonl", "--step", "14"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["groups"][0]["generation"], 3);
    assert_eq!(v["groups"][0]["members"].as_array().unwrap().len(), 1);
    assert_eq!(v["clock_ms"], 10_001);
    // A recording without groups has no `groups` key at all.
    let (_, out, _) = mk_tui(&["state", "recordings/ch08-visibility.jsonl"]);
    assert!(!out.contains("\"groups\""));
}

#[test]
fn state_prints_the_spec_json_at_any_step_and_the_same_bytes_twice() {
    let (code, out, err) = mk_tui(&["state", "recordings/ch08-visibility.jsonl", "--step", "2"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["step"], 2);
    assert_eq!(
        v["consumers"]["read_uncommitted"]["out-0"],
        serde_json::json!(["pending"])
    );
    assert_eq!(
        v["consumers"]["read_committed"]["out-0"],
        serde_json::json!([])
    );
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    for key in [
        "step",
        "clock_ms",
        "rules",
        "partitions",
        "transactions",
        "committed_offsets",
        "journal",
        "last_recovery",
        "consumers",
        "pending",
        "errors",
    ] {
        assert!(keys.contains(&key), "missing {key}");
    }
    let (_, again, _) = mk_tui(&["state", "recordings/ch08-visibility.jsonl", "--step", "2"]);
    assert_eq!(out, again);
    let (_, last, _) = mk_tui(&["state", "recordings/ch08-visibility.jsonl"]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&last).unwrap()["step"],
        6
    );
}

#[test]
fn bad_recordings_give_one_line_naming_file_and_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let v7 = HEADER.replace("\"mk_recording\":1", "\"mk_recording\":7");
    let rf3 = HEADER.replace("\"replication_factor\":1", "\"replication_factor\":3");
    let cases = [
        (
            vec![HEADER, r#"{"at_ms":0,"action":"#],
            ":2:20: EOF while parsing",
        ),
        (
            vec![HEADER, r#"{"action":{"explode":{}}}"#],
            "valid actions: create_topic, produce",
        ),
        (
            vec![&v7[..]],
            "version 7 is not supported; this build reads version 1",
        ),
        (
            vec![HEADER, r#"{"action":{"send":{"txn":"t"}}}"#],
            ":2: field action",
        ),
        (vec![&rf3[..]], ":1: field cluster.topics[0]"),
    ];
    for (i, (lines, expected)) in cases.iter().enumerate() {
        let file = write_recording(dir.path(), &format!("bad{i}.jsonl"), lines);
        for command in [vec!["state", &file[..]], vec!["check", &file[..]]] {
            let (code, out, err) = mk_tui(&command);
            assert_eq!(code, Some(2), "{command:?}: {err}");
            assert!(
                out.trim().is_empty() || command[0] == "check",
                "nothing printed: {out}"
            );
            assert_eq!(err.lines().count(), 1, "one line: {err}");
            assert!(err.starts_with(&format!("mk-tui: {file}")), "{err}");
            assert!(err.contains(expected), "{command:?}: {err}");
        }
    }
    let (code, _, err) = mk_tui(&["state", "no/such/file.jsonl"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("no/such/file.jsonl") && err.contains("cannot read"),
        "{err}"
    );
    let (code, _, err) = mk_tui(&["state", "recordings/ch08-visibility.jsonl", "--step", "99"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("past the last step, 6"), "{err}");
}

#[test]
fn a_failed_action_inside_a_valid_recording_is_an_error_event_with_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_recording(
        dir.path(),
        "r.jsonl",
        &[
            HEADER,
            r#"{"action":{"commit":{"txn":"ghost"}}}"#,
            r#"{"action":{"produce":{"topic":"out","value":"v"}}}"#,
        ],
    );
    let (code, out, err) = mk_tui(&["state", &file]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["errors"][0]["step"], 1);
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("ghost")
    );
    assert_eq!(
        v["consumers"]["read_uncommitted"]["out-0"],
        serde_json::json!(["v"]),
        "the run continued"
    );
}

#[test]
fn check_reports_each_file() {
    let (code, out, err) = mk_tui(&["check", "recordings/ch08-visibility.jsonl"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "recordings/ch08-visibility.jsonl: ok (6 steps)");
}

#[test]
fn state_with_a_data_dir_leaves_the_data_there_and_reads_an_existing_dir_without_changing_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (code, out, err) = mk_tui(&[
        "state",
        "recordings/ch08-visibility.jsonl",
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(data.join("transactions.journal").exists());
    let snapshot = |d: &std::path::Path| {
        let mut files = Vec::new();
        let mut stack = vec![d.to_path_buf()];
        while let Some(p) = stack.pop() {
            for e in std::fs::read_dir(&p).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                } else {
                    files.push((e.path(), std::fs::read(e.path()).unwrap()));
                }
            }
        }
        files.sort();
        files
    };
    let before = snapshot(&data);
    let (code, existing, err) = mk_tui(&["state", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(snapshot(&data), before, "opened on a private copy");
    let a: serde_json::Value = serde_json::from_str(&out).unwrap();
    let b: serde_json::Value = serde_json::from_str(&existing).unwrap();
    assert_eq!(a["consumers"], b["consumers"]);
    assert_eq!(a["transactions"], b["transactions"]);
    let (code, _, err) = mk_tui(&[
        "state",
        "recordings/ch08-visibility.jsonl",
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("must be empty or absent"), "{err}");
}

#[test]
fn render_prints_frames_as_the_dashboard_draws_them() {
    let (code, out, err) = mk_tui(&[
        "render",
        "recordings/ch08-visibility.jsonl",
        "--step",
        "2",
        "--size",
        "100x30",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.lines().count(), 30);
    assert!(out.contains("step 2/6") && out.contains("LSO 0"), "{out}");
    let (code, all, _) = mk_tui(&[
        "render",
        "recordings/ch08-visibility.jsonl",
        "--all",
        "--size",
        "80x24",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(all.matches("── step ").count(), 7, "steps 0 to 6");
    let (code, ansi, _) = mk_tui(&[
        "render",
        "recordings/ch08-visibility.jsonl",
        "--format",
        "ansi",
    ]);
    assert_eq!(code, Some(0));
    assert!(ansi.contains('\u{1b}'));
    for (args, expected) in [
        (vec!["--size", "wide"], "expected COLSxROWS"),
        (vec!["--format", "html"], "expected text or ansi"),
        (vec!["--step", "9"], "past the last step"),
        (vec!["--layout", "nope"], "unknown layout \"nope\""),
    ] {
        let mut command = vec!["render", "recordings/ch08-visibility.jsonl"];
        command.extend(args);
        let (code, out, err) = mk_tui(&command);
        assert_eq!(code, Some(2), "{command:?}");
        assert!(out.is_empty());
        assert!(err.contains(expected), "{command:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn export_writes_an_asciicast_file() {
    let dir = tempfile::tempdir().unwrap();
    let cast = dir.path().join("ch08.cast");
    let (code, _, err) = mk_tui(&[
        "export",
        "recordings/ch08-visibility.jsonl",
        "--cast",
        cast.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let text = std::fs::read_to_string(&cast).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        (
            header["version"].as_u64(),
            header["width"].as_u64(),
            header["height"].as_u64()
        ),
        (Some(2), Some(120), Some(36))
    );
    assert_eq!(text.lines().filter(|l| l.contains(r#","m","#)).count(), 6);

    // Again: the cast is kept, one line and exit 2; --force replaces it.
    std::fs::write(&cast, "mine\n").unwrap();
    let again = |force: bool| {
        let mut args = vec![
            "export",
            "recordings/ch08-visibility.jsonl",
            "--cast",
            cast.to_str().unwrap(),
        ];
        args.extend(force.then_some("--force"));
        mk_tui(&args)
    };
    let (code, out, err) = again(false);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty() && err.lines().count() == 1, "{err}");
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&cast).unwrap(), "mine\n");
    let (code, _, err) = again(true);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(std::fs::read_to_string(&cast).unwrap(), text);
}

#[test]
fn export_cuts_a_cast_to_a_chapter() {
    let dir = tempfile::tempdir().unwrap();
    let cast = dir.path().join("part.cast");
    let (code, _, err) = mk_tui(&[
        "export",
        "recordings/ch08-visibility.jsonl",
        "--cast",
        cast.to_str().unwrap(),
        "--from",
        "2",
        "--to",
        "4",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let text = std::fs::read_to_string(&cast).unwrap();
    let events: Vec<serde_json::Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let frames = events.iter().filter(|e| e[1] == "o").count();
    assert_eq!(frames, 3, "step 2 (held), then steps 3 and 4");
    let markers: Vec<&str> = events
        .iter()
        .filter(|e| e[1] == "m")
        .map(|e| e[2].as_str().unwrap())
        .collect();
    // The cut opens on the caption the screen shows at step 2, not on the
    // recording's title.
    assert!(
        markers[0].starts_with("step 2: Before the marker"),
        "{markers:?}"
    );
    assert!(
        markers[1..]
            .iter()
            .all(|m| m.starts_with("step 3") || m.starts_with("step 4"))
    );
    assert_eq!(
        events.last().unwrap()[0].as_f64(),
        Some(2.0 + 3.0),
        "paced from step 2"
    );
    // A range past the end, or backwards, is one line and exit 2.
    for (from, to) in [("3", "2"), ("0", "99")] {
        let (code, out, err) = mk_tui(&[
            "export",
            "recordings/ch08-visibility.jsonl",
            "--cast",
            dir.path().join("bad.cast").to_str().unwrap(),
            "--from",
            from,
            "--to",
            to,
        ]);
        assert_eq!(code, Some(2), "{err}");
        assert!(out.is_empty() && err.lines().count() == 1, "{err}");
        assert!(
            err.contains("--from") && err.contains("the last step"),
            "{err}"
        );
        assert!(!dir.path().join("bad.cast").exists());
    }
}

#[test]
fn check_validates_layout_files_with_json_paths() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"layout":1,"root":{"split":"vertical","children":[{"pane":"jurnal"}]}}"#,
    )
    .unwrap();
    let (code, _, err) = mk_tui(&["check", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("bad.json")
            && err.contains("$.root.children[0].pane")
            && err.contains("unknown pane \"jurnal\""),
        "{err}"
    );
    let (code, out, err) = mk_tui(&["check", "layouts/default.json", "layouts/crash.json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("layouts/default.json: ok (layout default, 9 panes)"),
        "{out}"
    );
}

/// `--theme` (issue 13 item 5): a bad name is one line and exit 2, nothing
/// printed; `light` paints its white ground in `render --format ansi`, and
/// `NO_COLOR` still turns every colour off; `high-contrast` draws the
/// focused pane thick.
#[test]
fn the_theme_flag_picks_the_palette_and_no_color_still_wins() {
    let (code, out, err) = mk_tui(&[
        "--theme",
        "pastel",
        "render",
        "recordings/ch08-visibility.jsonl",
    ]);
    assert_eq!(code, Some(2));
    assert!(out.is_empty(), "{out}");
    assert_eq!(
        err.trim_end(),
        r#"mk-tui: --theme: unknown theme "pastel": expected "dark", "light" or "high-contrast""#
    );
    let render = |theme: &str, no_color: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mk-tui"));
        cmd.args([
            "render",
            "recordings/ch08-visibility.jsonl",
            "--format",
            "ansi",
        ])
        .args(["--size", "80x24", "--theme", theme])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR");
        if no_color {
            cmd.env("NO_COLOR", "1");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let ground = "48;5;231m";
    assert!(render("light", false).contains(ground));
    assert!(!render("dark", false).contains(ground));
    let plain = render("light", true);
    assert!(
        !plain.contains("48;5;") && !plain.contains("38;5;"),
        "NO_COLOR"
    );
    assert!(render("high-contrast", false).contains('┏'));
}

/// `--rules` is honoured by the demo without a terminal too (issue 17
/// item 10: it used to run the book's rules whatever was asked), and the
/// flags of the dashboard are refused before a command that would ignore
/// them (the bad-input catalogue has the exact lines).
#[test]
fn the_demo_without_a_terminal_runs_the_rules_asked_for() {
    for (args, rules) in [
        (&[][..], "minikafka"),
        (&["--rules", "kafka"][..], "kafka"),
        (&["--rules", "minikafka"][..], "minikafka"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            text.lines().nth(1),
            Some(format!("rules: {rules}").as_str()),
            "{args:?}"
        );
    }
    let (code, _, err) = mk_tui(&["--rules", "bogus"]);
    assert_eq!(code, Some(2));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("mk-tui: --rules: "), "{err}");
}

/// The `--layout` help line of every command names every built-in layout
/// (it left out `groups` once): the list is read from the help text each
/// command prints and compared with `ui::layout`'s own.
#[test]
fn every_layout_help_line_names_every_built_in_layout() {
    use clap::CommandFactory;
    let commands: Vec<String> = minikafka::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    assert!(commands.iter().any(|c| c == "export"), "{commands:?}");
    let want: Vec<&str> = minikafka::ui::layout::BUILTIN_NAMES.to_vec();
    for command in std::iter::once(None).chain(commands.iter().map(Some)) {
        let mut args: Vec<&str> = command.map(String::as_str).into_iter().collect();
        args.push("--help");
        let (code, help, err) = mk_tui(&args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        // The text is on the option's line, or on the next one where clap
        // lays help out long (the top level's).
        let lines: Vec<&str> = help.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.trim_start().starts_with("--layout"))
            .unwrap_or_else(|| panic!("{args:?}: no --layout line in {help}"));
        let line = lines[at..lines.len().min(at + 2)].join(" ");
        let listed: Vec<&str> = line
            .split_once("a built-in name (")
            .and_then(|(_, rest)| rest.split_once(';'))
            .map(|(list, _)| list.split(", ").collect())
            .unwrap_or_else(|| panic!("{args:?}: no list in {line}"));
        assert_eq!(listed, want, "{args:?}: {line}");
    }
}

/// An argument error inside a command points at that command's help,
/// where what it names is listed; one outside any command, at the top's.
#[test]
fn argument_errors_point_at_the_help_of_their_command() {
    let cases: [(&[&str], &str); 5] = [
        (&["lab"], "mk-tui: missing <NAME> (see mk-tui lab --help)\n"),
        (
            &["export", "recordings/ch08-visibility.jsonl"],
            "mk-tui: missing --cast <OUT> or --html <DIR> (see mk-tui export --help)\n",
        ),
        (
            &["--layout", "lab", "replay"],
            "mk-tui: missing <FILE> (see mk-tui replay --help)\n",
        ),
        (
            &["render", "--bogus"],
            "mk-tui: unknown argument --bogus (see mk-tui render --help)\n",
        ),
        (
            &["nosuch"],
            "mk-tui: unknown command nosuch (see mk-tui --help)\n",
        ),
    ];
    for (args, want) in cases {
        let (code, out, err) = mk_tui(args);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (Some(2), "", want),
            "{args:?}"
        );
    }
}

/// `lab NAME --record FILE` is the lab's own option (a new user's trial
/// got `unknown argument --record`): an existing FILE is refused as the
/// dashboard's --record refuses it, before the lab needs a terminal, and
/// given before the command it is pointed after it.
#[test]
fn lab_takes_record_and_refuses_an_existing_file_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.jsonl");
    std::fs::write(&file, "mine\n").unwrap();
    let path = file.to_str().unwrap();
    let (code, _, err) = mk_tui(&["lab", "ch08", "--record", path]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
    // With --force it goes on to the terminal, which a test has not.
    let (code, _, err) = mk_tui(&["lab", "ch08", "--record", path, "--force"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a terminal"), "{err}");
    let (_, _, err) = mk_tui(&["--record", path, "lab", "ch08"]);
    assert!(
        err.contains("give it after the command: mk-tui lab … --record"),
        "{err}"
    );
}
