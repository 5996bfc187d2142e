//! The lesson page, `mk-tui export FILE --html DIR` (docs/lesson-page.md):
//! what it writes, and the page itself in headless Chromium, opened from
//! file:// with every host name resolving nowhere
//! (`tests/tools/lesson_page.py` drives it over the DevTools protocol on a
//! pipe). The page loads with no request leaving file://, lists one
//! chapter per caption in each language, and clicking a chapter shows that
//! step's frame: the player's screen is the text `mk-tui render --step N`
//! draws (but for the key bar, which names the player's keys), or the
//! step's moment of death when it crashed the cluster. The Chromium test
//! is skipped, saying why, only when no Chromium is installed and CI is
//! unset; `.ci/run` installs Debian's `chromium`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn mk_tui(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn mk_tui_ok(args: &[&str]) -> String {
    let (code, out, err) = mk_tui(args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    out
}

/// The captioned steps of a recording and their captions (en, zh).
fn captions(rec: &str) -> Vec<(usize, String, String)> {
    let text = std::fs::read_to_string(root().join(rec)).unwrap();
    text.lines()
        .skip(1)
        .enumerate()
        .filter_map(|(i, line)| {
            let step: Value = serde_json::from_str(line).unwrap();
            let c = step.get("caption")?;
            let en = c["en"].as_str().unwrap().to_string();
            let zh = c["zh"].as_str().map_or(en.clone(), str::to_string);
            Some((i + 1, en, zh))
        })
        .collect()
}

/// The page's data: lesson.js is `window.MK_LESSON = {…};`.
fn lesson_of(dir: &Path) -> Value {
    let js = std::fs::read_to_string(dir.join("lesson.js")).unwrap();
    let json = js
        .strip_prefix("window.MK_LESSON = ")
        .and_then(|s| s.trim_end().strip_suffix(';'))
        .expect("lesson.js sets window.MK_LESSON");
    serde_json::from_str(json).unwrap()
}

#[test]
fn the_page_holds_both_casts_the_player_and_a_chapter_per_caption_with_its_state() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("page");
    let rec = "recordings/ch08-torn-journal.jsonl";
    mk_tui_ok(&["export", rec, "--html", dir.to_str().unwrap()]);
    for name in [
        "index.html",
        "lesson.js",
        "page.js",
        "page.css",
        "asciinema-player.min.js",
        "asciinema-player.css",
        "asciinema-player-LICENSE.txt",
    ] {
        assert!(dir.join(name).is_file(), "{name}");
    }
    // The player's files are the vendored ones, byte for byte, licence kept.
    for (shipped, vendored) in [
        ("asciinema-player.min.js", "asciinema-player.min.js"),
        ("asciinema-player.css", "asciinema-player.css"),
        ("asciinema-player-LICENSE.txt", "LICENSE"),
    ] {
        assert_eq!(
            std::fs::read(dir.join(shipped)).unwrap(),
            std::fs::read(root().join("assets/asciinema-player").join(vendored)).unwrap(),
            "{shipped}"
        );
    }
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        !index.contains("http://") && !index.contains("https://"),
        "the page names nothing on the network"
    );
    let lesson = lesson_of(&dir);
    assert_eq!(lesson["lang"], "en", "the page opens in --lang's language");
    // Each language's cast is the one `export --cast --lang` writes, inline
    // and as a file.
    for lang in ["en", "zh"] {
        let cast = scratch.path().join(format!("{lang}.cast"));
        mk_tui_ok(&[
            "export",
            rec,
            "--cast",
            cast.to_str().unwrap(),
            "--lang",
            lang,
        ]);
        let cast = std::fs::read_to_string(cast).unwrap();
        assert_eq!(
            lesson["casts"][lang].as_str(),
            Some(cast.as_str()),
            "{lang}"
        );
        let file = std::fs::read_to_string(dir.join(format!("lesson.{lang}.cast"))).unwrap();
        assert_eq!(file, cast, "{lang}");
    }
    let chapters = lesson["chapters"].as_array().unwrap();
    let expected = captions(rec);
    assert_eq!(chapters.len(), expected.len(), "one chapter per caption");
    for (chapter, (step, en, zh)) in chapters.iter().zip(&expected) {
        assert_eq!(chapter["step"].as_u64(), Some(*step as u64));
        assert_eq!(chapter["caption"]["en"].as_str(), Some(en.as_str()));
        assert_eq!(chapter["caption"]["zh"].as_str(), Some(zh.as_str()));
        let state: Value =
            serde_json::from_str(&mk_tui_ok(&["state", rec, "--step", &step.to_string()])).unwrap();
        assert_eq!(chapter["state"], state, "step {step}'s state");
    }
}

#[test]
fn a_used_directory_is_refused_unless_forced_and_then_only_the_page_s_files_change() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    std::fs::write(dir.join("index.html"), "old").unwrap();
    let rec = "recordings/ch08-visibility.jsonl";
    let (code, out, err) = mk_tui(&["export", rec, "--html", dir.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty() && err.lines().count() == 1, "{err}");
    assert!(
        err.contains("not empty") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        2,
        "nothing written"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("index.html")).unwrap(),
        "old"
    );
    mk_tui_ok(&[
        "export",
        rec,
        "--html",
        dir.to_str().unwrap(),
        "--force",
        "--lang",
        "zh",
    ]);
    assert_eq!(
        lesson_of(dir)["lang"],
        "zh",
        "the page opens in --lang's language"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    assert!(
        std::fs::read_to_string(dir.join("index.html"))
            .unwrap()
            .contains("<html")
    );
    // A file where the directory should be, and --html with --cast.
    let file = dir.join("notes.txt");
    let (code, _, err) = mk_tui(&["export", rec, "--html", file.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a directory"), "{err}");
    let (code, _, err) = mk_tui(&["export", rec, "--html", "x", "--cast", "y.cast"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Chromium: `$MK_TUI_CHROMIUM`, else `chromium` or `chromium-browser`
/// on the PATH.
fn chromium() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("MK_TUI_CHROMIUM").map(PathBuf::from),
        Some(PathBuf::from("chromium")),
        Some(PathBuf::from("chromium-browser")),
    ];
    candidates.into_iter().flatten().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Drives the page in `dir` (tests/tools/lesson_page.py): clicks every
/// chapter, in `lang`; saves a screenshot at the first to `png`.
fn drive(chromium: &Path, dir: &Path, lang: &str, png: &Path) -> Value {
    let out = Command::new("python3")
        .arg(root().join("tests/tools/lesson_page.py"))
        .arg(chromium)
        .arg(dir)
        .arg("all")
        .args(["--lang", lang, "--screenshot"])
        .arg(png)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "lesson_page.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A screen's rows but the last (the key bar), trailing spaces trimmed.
fn body(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    lines.pop();
    lines
}

#[test]
fn in_chromium_the_page_loads_offline_and_each_chapter_shows_its_step_s_frame() {
    let Some(chromium) = chromium() else {
        if std::env::var_os("CI").is_some() {
            panic!("CI installs chromium (.ci/run): it must be on the PATH");
        }
        eprintln!("skipped: no Chromium (apt-get install chromium, or set MK_TUI_CHROMIUM)");
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    // (recording, size, language): a lesson whose steps crash the cluster,
    // in English; a Chinese one at the narrowest size a lesson reads at.
    let cases = [
        ("recordings/ch08-torn-journal.jsonl", "160x48", "en"),
        ("recordings/ch08-visibility.jsonl", "100x30", "zh"),
    ];
    for (n, (rec, size, lang)) in cases.into_iter().enumerate() {
        let dir = scratch.path().join(format!("page-{n}"));
        mk_tui_ok(&[
            "export",
            rec,
            "--html",
            dir.to_str().unwrap(),
            "--size",
            size,
        ]);
        let png = scratch.path().join(format!("page-{n}.png"));
        let page = drive(&chromium, &dir, lang, &png);
        let requests: Vec<&str> = page["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u.as_str().unwrap())
            .collect();
        assert!(
            requests
                .iter()
                .any(|u| u.ends_with("/asciinema-player.min.js")),
            "the page loaded its player: {requests:?}"
        );
        for url in &requests {
            assert!(
                url.starts_with("file://"),
                "{rec}: a request left file://: {url}"
            );
        }
        assert_eq!(
            page["errors"],
            Value::Array(vec![]),
            "{rec}: the page's errors"
        );
        let expected = captions(rec);
        let labels = page["chapters"].as_array().unwrap();
        assert_eq!(
            labels.len(),
            expected.len(),
            "{rec}: one chapter per caption"
        );
        let word = if lang == "zh" { "步骤" } else { "step" };
        for (label, (step, en, zh)) in labels.iter().zip(&expected) {
            let caption = if lang == "zh" { zh } else { en };
            assert_eq!(
                label.as_str().unwrap(),
                format!("{word} {step} {caption}"),
                "{rec}"
            );
        }
        let shots = page["shots"].as_array().unwrap();
        assert_eq!(shots.len(), expected.len());
        let mut crashed = 0;
        for (shot, (step, _, _)) in shots.iter().zip(&expected) {
            let screen = shot["screen"].as_str().unwrap();
            let step_s = step.to_string();
            let frame = mk_tui_ok(&[
                "render", rec, "--step", &step_s, "--size", size, "--lang", lang,
            ]);
            let title = screen.lines().next().unwrap_or_default();
            if title.contains('✝') {
                // A crash's chapter opens on its moment of death, as the
                // replay's space does; `render --step N` draws the recovery.
                crashed += 1;
                assert!(title.contains(&format!("step {step}✝/")), "{rec}: {title}");
                assert_ne!(body(screen), body(&frame));
            } else {
                assert_eq!(
                    body(screen),
                    body(&frame),
                    "{rec} ({lang}) step {step}:\nplayer:\n{screen}\nrender:\n{frame}"
                );
            }
            let bar = screen.lines().last().unwrap_or_default();
            let space = if lang == "zh" { "空格" } else { "space" };
            assert!(bar.contains(space) && bar.contains("[ ]"), "{rec}: {bar}");
            let state: Value =
                serde_json::from_str(&mk_tui_ok(&["state", rec, "--step", &step_s])).unwrap();
            assert_eq!(shot["state"], state, "{rec}: step {step}'s state toggle");
        }
        if rec.contains("torn") {
            assert_eq!(crashed, 2, "steps 5 and 8 tear the journal and restart");
        }
        let png = std::fs::read(&png).unwrap();
        assert!(
            png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
            "a screenshot"
        );
        if let Some(keep) = std::env::var_os("MK_TUI_KEEP_SCREENSHOTS") {
            std::fs::write(Path::new(&keep).join(format!("lesson-page-{n}.png")), png).unwrap();
        }
    }
}
