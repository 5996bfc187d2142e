//! True words: every captioned step of every recording in `recordings/` is
//! drawn (its layout, its terminal size, English and Chinese), and each
//! pane or label its caption names must be on that frame, outside the
//! caption itself. The names are the glossary's (`minikafka::ui::glossary`),
//! the one the panes draw their titles and labels from, so a caption that
//! says `(… open)` where the screen says `… ongoing`, or names a pane no
//! layout shows, fails here.
//!
//! - A pane: its English title as a word (`Pending`, `Consumer offsets`).
//!   A Chinese caption naming a pane in English names a title its frame
//!   does not show (the Chinese frame's titles are Chinese).
//! - A label: a glyph of the glossary's (`✓ ✗ … ◐ ‖ ▵ ? ◆`) starting a
//!   phrase, followed by a word. It must be one of the glossary's labels
//!   (`✗ aborted`, in Chinese `✗ 已中止`) on the frame, or else quote the
//!   frame verbatim up to the next punctuation (`◆ COMMIT out-0 @1`). A
//!   glyph alone (`(✓)`) must be on the frame. A marker label may be a
//!   Log cell (`◆COMMIT`); `?` before a word that is no label is the key.

use std::path::Path;

use minikafka::session::Recording;
use minikafka::ui::glossary;
use minikafka::ui::headless::{self, Format};
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::panes::PaneId;

/// The frame above its caption pane: the caption is the bottom strip in
/// every built-in layout (`builtin_caption_is_a_short_bottom_strip`).
fn above_caption(frame: &str, lang: Lang) -> String {
    let title = glossary::pane_title(PaneId::Caption, lang);
    let lines: Vec<&str> = frame.lines().collect();
    let at = lines
        .iter()
        .position(|l| is_title(l, title))
        .unwrap_or_else(|| panic!("no caption pane on the frame:\n{frame}"));
    lines[..at].join("\n")
}

/// Whether `line` has a pane border that starts with `title`.
fn is_title(line: &str, title: &str) -> bool {
    ['┌', '┏', '╭', '╔']
        .iter()
        .any(|c| line.contains(&format!("{c}{title}")))
}

/// Whether `text` has `word` with no letter or digit either side of it.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// What is wrong with `caption` on `frame` (the frame above the caption).
fn wrong_words(caption: &str, frame: &str, lang: Lang) -> Vec<String> {
    let mut wrong = Vec::new();
    for pane in PaneId::ALL {
        if pane == PaneId::Caption {
            continue;
        }
        let en = glossary::pane_title(pane, Lang::En);
        if has_word(caption, en) {
            let shown = glossary::pane_title(pane, lang);
            if !frame.lines().any(|l| is_title(l, shown)) || (lang == Lang::Zh && shown != en) {
                wrong.push(format!("names the pane {en:?}, not on this frame"));
            }
        }
    }
    let labels = glossary::labels(lang);
    let chars: Vec<(usize, char)> = caption.char_indices().collect();
    for (n, &(i, c)) in chars.iter().enumerate() {
        if !glossary::GLYPHS.contains(&c) {
            continue;
        }
        // A label starts a phrase; a glyph after a word is punctuation
        // (a question mark, an ellipsis).
        let before = n.checked_sub(1).map(|p| chars[p].1);
        if before.is_some_and(|b| !(b.is_whitespace() || "(（\"“「：:，,、".contains(b))) {
            continue;
        }
        let rest = &caption[i..];
        let mut after = rest.chars().skip(1);
        let (space, next) = (after.next(), after.next());
        if space != Some(' ') || !next.is_some_and(char::is_alphabetic) {
            if !frame.contains(c) {
                wrong.push(format!("names the glyph {c}, not on this frame"));
            }
            continue;
        }
        let label = labels.iter().find(|l| {
            rest.starts_with(l.as_str())
                && !rest[l.len()..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric)
        });
        match label {
            // A marker is also a Log cell: its glyph against its name.
            Some(l) if frame.contains(l.as_str()) || frame.contains(&l.replacen("◆ ", "◆", 1)) =>
                {}
            Some(l) => wrong.push(format!("names the label {l:?}, not on this frame")),
            // `?` before a word that is no label is a key's name (`?
            // shows every key`), as the key bar says.
            None if c == '?' => {}
            None => {
                let end = rest
                    .find(|c: char| ")）,，.。;；:：".contains(c))
                    .unwrap_or(rest.len());
                let phrase = rest[..end].trim_end();
                if !frame.contains(phrase) {
                    wrong.push(format!(
                        "names {phrase:?}: no pane draws that label (the glossary's: {labels:?}) and the frame does not show it"
                    ));
                }
            }
        }
    }
    wrong
}

#[test]
fn every_caption_names_only_what_its_frame_shows() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in &files {
        let recording = Recording::load(file).unwrap();
        let captioned: Vec<usize> = recording
            .steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.caption.is_some())
            .map(|(i, _)| i + 1)
            .collect();
        if captioned.is_empty() {
            continue;
        }
        let (cols, rows) = recording
            .header
            .terminal
            .as_ref()
            .map_or((120, 36), |t| (t.cols, t.rows));
        for lang in [Lang::En, Lang::Zh] {
            let layout = match recording.header.layout.as_deref() {
                Some(name) => layout::load(name).unwrap(),
                None => layout::builtin_default(),
            };
            let frames = headless::render(
                recording.clone(),
                &captioned,
                cols,
                rows,
                Format::Text,
                layout,
                lang,
            )
            .unwrap();
            for (&step, frame) in captioned.iter().zip(&frames) {
                let caption = recording.steps[step - 1]
                    .caption
                    .as_ref()
                    .unwrap()
                    .text(lang.code());
                let above = above_caption(frame, lang);
                checked += 1;
                for w in wrong_words(caption, &above, lang) {
                    let name = file.file_name().unwrap().to_string_lossy();
                    wrong.push(format!("{name} step {step} ({}): {w}", lang.code()));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} captions checked");
    assert!(
        wrong.is_empty(),
        "{} caption words not on their frames:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_check_fails_on_a_label_no_pane_draws() {
    let frame = "┌Log──┐\n│✓a  │ … ongoing  ‖ held back\n";
    assert!(wrong_words("tx-1 writes a (… ongoing).", frame, Lang::En).is_empty());
    assert_eq!(
        wrong_words("a at offset 1 (… open).", frame, Lang::En).len(),
        1
    );
    assert_eq!(wrong_words("see Watermarks: H.", frame, Lang::En).len(), 1);
    assert!(wrong_words("see the Log pane.", frame, Lang::En).is_empty());
    assert_eq!(wrong_words("b is ✗ aborted.", frame, Lang::En).len(), 1);
    // A question mark or an ellipsis after a word is punctuation.
    assert!(wrong_words("Why? Because… it waits.", frame, Lang::En).is_empty());
    assert!(wrong_words("b is ? orphaned.", frame, Lang::En).len() == 1);
    // A Chinese caption names the Chinese frame's labels.
    let zh = "┌分区日志──┐\n│ … 进行中 \n";
    assert!(wrong_words("tx-1 写入 a（… 进行中）。", zh, Lang::Zh).is_empty());
    assert_eq!(
        wrong_words("tx-1 写入 a（… ongoing）。", zh, Lang::Zh).len(),
        1
    );
    assert_eq!(wrong_words("看 Log 中的 H。", zh, Lang::Zh).len(), 1);
}

/// Each lab's captions: the first, and the key guide's after each of
/// the lesson's own steps (the chapter's keys make the same actions).
#[test]
fn every_labs_captions_name_only_what_their_frames_show() {
    use minikafka::lab::LABS;
    use minikafka::session::Driver;
    use minikafka::ui::app::{App, Msg};
    use minikafka::ui::theme::Theme;
    for lab in LABS {
        let recording = lab.recording().unwrap();
        for lang in [Lang::En, Lang::Zh] {
            let layout = layout::load(recording.header.layout.as_deref().unwrap()).unwrap();
            let driver = Driver::new(&recording.header, None).unwrap();
            let mut app = App::live(
                driver,
                recording.header.clone(),
                None,
                layout,
                lang,
                Theme::colored(),
            )
            .with_guide(lab.guide());
            for at in 0..=recording.steps.len() {
                if at > 0 {
                    app.update(Msg::Apply(recording.steps[at - 1].action.clone()))
                        .unwrap();
                }
                let frame = headless::buffer_text(&headless::frame_buffer(&app, 160, 48));
                let caption = app.session().snapshot().caption.expect("a caption");
                let caption = caption.text(lang.code());
                // The caption is on screen, and it names what is.
                let first_words: String = caption.chars().take(20).collect();
                assert!(frame.contains(&first_words), "{}:\n{frame}", lab.name);
                let wrong = wrong_words(caption, &above_caption(&frame, lang), lang);
                assert!(
                    wrong.is_empty(),
                    "{} ({}) step {at}: {wrong:?}",
                    lab.name,
                    lang.code()
                );
            }
        }
    }
}
