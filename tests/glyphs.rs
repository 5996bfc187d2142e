//! Every glyph on screen is one the terminals' common monospace font
//! draws (docs/dashboard.md, "Every glyph is one DejaVu Sans Mono
//! draws"): every step of every recording in `recordings/`, in its layout
//! and at its size, in English and Chinese, in the layout and in
//! presentation mode, is drawn, and each character that is neither ASCII
//! nor Chinese (which a CJK font draws) must be in DejaVu Sans Mono's
//! character set as fontconfig reads it (`fc-query --format=%{charset}`).
//! A glyph the font lacks is a box on a projector (`⧗`, U+29D7, was one).
//!
//! The font comes from Debian's `fonts-dejavu-core` and fontconfig's
//! `fc-query` (`.ci/run` installs both); without them the test says so
//! and passes, except under CI, where it fails.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use minikafka::session::Recording;
use minikafka::ui::headless::{self, Format, Look};
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;

const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";

/// The code points `fc-query` says the font at `path` has, from its
/// charset: space-separated hex ranges (`20-7e a0-1c3 2d6`).
fn charset(path: &str) -> Option<Vec<(u32, u32)>> {
    let out = Command::new("fc-query")
        .args(["--format=%{charset}", path])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let hex = |s: &str| u32::from_str_radix(s, 16).ok();
    let ranges: Option<Vec<(u32, u32)>> = text
        .split_whitespace()
        .map(|r| match r.split_once('-') {
            Some((a, b)) => Some((hex(a)?, hex(b)?)),
            None => hex(r).map(|c| (c, c)),
        })
        .collect();
    ranges.filter(|r| !r.is_empty())
}

/// Chinese text and its punctuation: drawn by the terminal's CJK font.
fn chinese(c: char) -> bool {
    matches!(u32::from(c),
        0x2E80..=0x2FDF | 0x3000..=0x303F | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFFEF)
}

/// The glyphs drawn at every step of every recording, with where each was
/// first seen.
fn glyphs_drawn() -> (Vec<(char, String)>, usize) {
    let mut seen: BTreeSet<char> = BTreeSet::new();
    let mut first = Vec::new();
    let mut frames = 0;
    for file in common::recordings() {
        let recording = Recording::load(&file).unwrap();
        let steps: Vec<usize> = (0..=recording.steps.len()).collect();
        let (cols, rows) = recording
            .header
            .terminal
            .as_ref()
            .map_or((120, 36), |t| (t.cols, t.rows));
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        for lang in [Lang::En, Lang::Zh] {
            for present in [false, true] {
                let layout = match recording.header.layout.as_deref() {
                    Some(name) => layout::load(name).unwrap(),
                    None => layout::builtin_default(),
                };
                let look = Look {
                    present,
                    ..Look::new(layout, lang)
                };
                let drawn =
                    headless::render_in(recording.clone(), &steps, cols, rows, Format::Text, look)
                        .unwrap();
                for (step, frame) in steps.iter().zip(&drawn) {
                    frames += 1;
                    for c in frame.chars().filter(|c| !c.is_ascii() && !chinese(*c)) {
                        if seen.insert(c) {
                            let mode = if present { " presenting" } else { "" };
                            first.push((c, format!("{name} step {step} ({}{mode})", lang.code())));
                        }
                    }
                }
            }
        }
    }
    (first, frames)
}

#[test]
fn every_glyph_drawn_is_in_dejavu_sans_mono() {
    let Some(ranges) = Path::new(FONT).exists().then(|| charset(FONT)).flatten() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI has no {FONT} or no fc-query: .ci/run installs fonts-dejavu-core and fontconfig"
        );
        eprintln!("skipped: no {FONT} or no fc-query");
        return;
    };
    let has = |c: char| ranges.iter().any(|&(a, b)| (a..=b).contains(&u32::from(c)));
    let (glyphs, frames) = glyphs_drawn();
    assert!(frames > 1000, "only {frames} frames drawn");
    // The frames' own glyphs (borders, cells' marks) are there to be checked.
    assert!(
        glyphs.len() > 20,
        "only {} glyphs: {glyphs:?}",
        glyphs.len()
    );
    let missing: Vec<String> = glyphs
        .iter()
        .filter(|(c, _)| !has(*c))
        .map(|(c, at)| format!("{c} (U+{:04X}) first at {at}", u32::from(*c)))
        .collect();
    assert!(
        missing.is_empty(),
        "glyphs DejaVu Sans Mono lacks:\n{}",
        missing.join("\n")
    );
}

/// The check itself: the charset is read as ranges, and `⧗` is outside it.
#[test]
fn the_charset_is_read_as_ranges_and_lacks_the_old_hourglass() {
    let Some(ranges) = Path::new(FONT).exists().then(|| charset(FONT)).flatten() else {
        assert!(std::env::var_os("CI").is_none(), "CI has no {FONT}");
        return;
    };
    let has = |c: char| ranges.iter().any(|&(a, b)| (a..=b).contains(&u32::from(c)));
    assert!(has('A') && has('─') && has('◐') && has('▸'));
    assert!(!has('⧗'), "U+29D7 is the glyph the font lacks");
}
