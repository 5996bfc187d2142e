//! `mk-tui export FILE --html DIR`: the lesson page for the course web site
//! (docs/lesson-page.md). One directory that works from `file://` with no
//! network: `index.html`, the casts of both languages (also inline in
//! `lesson.js`, since a page opened from a file may not fetch one), the
//! chapter list (one entry per caption, in English and Chinese) with each
//! chapter's state JSON, and asciinema-player, vendored under
//! `assets/asciinema-player` (pinned, its licence shipped beside it).

use std::path::{Path, PathBuf};

use crate::session::{Recording, SessionError};
use crate::ui::headless::{self, CastMarker, Look};
use crate::ui::i18n::Lang;

/// The vendored player: `assets/asciinema-player/fetch.sh` re-fetches it
/// from the npm registry and checks it against its pins.
pub const PLAYER_VERSION: &str = "3.18.0";
const PLAYER_JS: &str = include_str!("../../assets/asciinema-player/asciinema-player.min.js");
const PLAYER_CSS: &str = include_str!("../../assets/asciinema-player/asciinema-player.css");
const PLAYER_LICENSE: &str = include_str!("../../assets/asciinema-player/LICENSE");
const INDEX_HTML: &str = include_str!("../../assets/lesson-page/index.html");
const PAGE_JS: &str = include_str!("../../assets/lesson-page/page.js");
const PAGE_CSS: &str = include_str!("../../assets/lesson-page/page.css");

/// The languages of a page, in the order its switch lists them.
const LANGS: [Lang; 2] = [Lang::En, Lang::Zh];

/// What `export --html` needs besides the recording.
pub struct PageArgs<'a> {
    pub file: &'a Path,
    pub dir: &'a Path,
    pub force: bool,
    pub size: (u16, u16),
    pub look: Look,
}

/// Writes the lesson page of the recording `args.file` into `args.dir`.
/// Everything is built before anything is written: a recording that fails
/// (or a DIR that exists and is not empty, without --force) leaves DIR as
/// it was.
pub fn write(recording: Recording, args: PageArgs) -> Result<(), SessionError> {
    refuse_a_used_dir(args.dir, args.force)?;
    let files = build(recording, &args)?;
    std::fs::create_dir_all(args.dir).map_err(|e| SessionError::io(args.dir, e))?;
    for (name, contents) in files {
        let path: PathBuf = args.dir.join(name);
        std::fs::write(&path, contents).map_err(|e| SessionError::io(&path, e))?;
    }
    Ok(())
}

/// DIR may be absent or an empty directory; with `force`, any directory
/// (the page's files are replaced, others kept).
fn refuse_a_used_dir(dir: &Path, force: bool) -> Result<(), SessionError> {
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(SessionError::io(dir, e)),
        Ok(meta) if !meta.is_dir() => {
            return Err(SessionError::path(dir, "--html: not a directory"));
        }
        Ok(_) => {}
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| SessionError::io(dir, e))?;
    if entries.next().is_some() && !force {
        return Err(SessionError::path(
            dir,
            "--html: the directory is not empty (give --force to write the page into it)",
        ));
    }
    Ok(())
}

/// The page's files, by name.
fn build(
    recording: Recording,
    args: &PageArgs,
) -> Result<Vec<(&'static str, String)>, SessionError> {
    let (cols, rows) = args.size;
    let last = recording.steps.len();
    let mut casts = serde_json::Map::new();
    let mut markers: Vec<CastMarker> = Vec::new();
    let mut files: Vec<(&'static str, String)> = Vec::new();
    for lang in LANGS {
        let mut out = Vec::new();
        let look = Look {
            lang,
            ..args.look.clone()
        };
        let these =
            headless::export_cast_in(recording.clone(), cols, rows, look, (0, last), &mut out)
                .map_err(|e| e.in_(format!("{}:1", args.file.display())))?;
        // Both languages mark the same steps: the captions are the steps'.
        markers = these;
        let cast = String::from_utf8(out).expect("a cast is JSON lines, UTF-8");
        casts.insert(lang.code().to_string(), cast.clone().into());
        files.push((cast_name(lang), cast));
    }
    let mut chapters = Vec::new();
    for (index, marker) in markers.iter().enumerate().skip(1) {
        let caption = recording.steps[marker.step - 1]
            .caption
            .as_ref()
            .expect("a marker after the title is a caption's");
        let state = super::state_of_recording(args.file, Some(marker.step), None)?;
        let state: serde_json::Value =
            serde_json::from_str(&state.to_json()).expect("a state's JSON parses");
        chapters.push(serde_json::json!({
            "step": marker.step,
            "marker": index,
            "time": marker.time,
            "caption": {"en": caption.text("en"), "zh": caption.text("zh")},
            "state": state,
        }));
    }
    let title = |lang: Lang| recording.header.title_in(lang.code()).to_string();
    let lesson = serde_json::json!({
        "title": {"en": title(Lang::En), "zh": title(Lang::Zh)},
        // The language the page opens in (`--lang`; `#en`/`#zh` override).
        "lang": args.look.lang.code(),
        "cols": cols,
        "rows": rows,
        "steps": last,
        "casts": casts,
        "chapters": chapters,
    });
    let index = INDEX_HTML
        .replace("{{TITLE}}", &html_escape(&title(Lang::En)))
        .replace("{{PLAYER_VERSION}}", PLAYER_VERSION);
    files.extend([
        ("index.html", index),
        ("lesson.js", format!("window.MK_LESSON = {lesson};\n")),
        ("page.js", PAGE_JS.to_string()),
        ("page.css", PAGE_CSS.to_string()),
        ("asciinema-player.min.js", PLAYER_JS.to_string()),
        ("asciinema-player.css", PLAYER_CSS.to_string()),
        ("asciinema-player-LICENSE.txt", PLAYER_LICENSE.to_string()),
    ]);
    Ok(files)
}

fn cast_name(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "lesson.en.cast",
        Lang::Zh => "lesson.zh.cast",
    }
}

/// Text for HTML: the five characters that could end it or open a tag.
fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_cannot_open_a_tag() {
        assert_eq!(
            html_escape(r#"<script>"a" & 'b'"#),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;"
        );
    }
}
