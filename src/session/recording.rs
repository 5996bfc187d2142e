//! Recordings (SPEC §4): JSON Lines, UTF-8. Line 1 is the header; every other
//! non-blank line is one step. Unknown fields are ignored; an unknown action
//! or a wrong version is an error naming the file and the line. Typed fields
//! (`acks`, `crash_after`, the tear target) are parsed here, and every header
//! and step is held to the caps of [`crate::session::limits`], so a recording
//! that reads is one the driver can apply without allocating absurd amounts or
//! wrapping the clock (SPEC §5 "Errors").
//!
//! ```text
//! {"mk_recording":1,"title":"…","rules":"minikafka","cluster":{…},"layout":"transactions","terminal":{"cols":120,"rows":36}}
//! {"at_ms":0,"action":{"begin":{"txn":"tx-1"}},"caption":{"en":"Open a transaction","zh":"开启事务"}}
//! ```
//!
//! The format is documented with a worked example in `docs/recording-format.md`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::config::Rules;
use crate::session::action::Action;
use crate::session::limits;

/// The recording format version this build reads and writes.
pub const RECORDING_VERSION: u32 = 1;

/// The header line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub mk_recording: u32,
    #[serde(default)]
    pub title: String,
    /// The title in Chinese, for `--lang zh` (optional; `title` serves
    /// both without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_zh: Option<String>,
    /// "minikafka" (default) or "kafka".
    #[serde(default = "default_rules")]
    pub rules: String,
    pub cluster: ClusterSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<TerminalSize>,
}

impl Header {
    /// The title in `lang` ("en" or "zh").
    pub fn title_in(&self, lang: &str) -> &str {
        match &self.title_zh {
            Some(zh) if lang == "zh" && !zh.is_empty() => zh,
            _ => &self.title,
        }
    }
}

fn default_rules() -> String {
    Rules::Minikafka.name().to_string()
}

/// The cluster a recording starts from (its step 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterSpec {
    pub brokers: Vec<u32>,
    #[serde(default)]
    pub topics: Vec<TopicSpec>,
    #[serde(default)]
    pub config: ConfigSpec,
}

/// A topic created before step 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicSpec {
    pub name: String,
    pub partitions: u32,
    pub replication_factor: u32,
}

/// Configuration overrides; anything absent keeps the book's default.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ConfigSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_insync_replicas: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_lag_time_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_lag_max_offsets: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment_max_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_timeout_ms: Option<u64>,
    /// A consumer-group member's session (E15): the book's
    /// `group_session_timeout_ms`, 10,000 by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_session_timeout_ms: Option<u64>,
    /// When the ISR is judged: `"at_fetch"`, the book's `refresh_isr` after
    /// followers fetch (the default under `minikafka`), or `"by_clock"`, as
    /// the clock moves (the default under `kafka`); docs/book-differences.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isr_evaluation: Option<IsrEvaluationSpec>,
    /// Kafka's `transaction.version`: 1, chapter 8's protocol (the default
    /// under both rule sets), or 2, Kafka 4's (KIP-890: the epoch bumped at
    /// every end), which needs `rules: "kafka"` (docs/recording-format.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_version: Option<u8>,
}

/// The one-line complaint about a recording's `config.transaction_version`
/// under `rules`, if it has one.
pub fn transaction_version_error(version: Option<u8>, rules: Rules) -> Option<String> {
    match version {
        None | Some(1) => None,
        Some(2) if rules == Rules::Kafka => None,
        Some(2) => Some(
            "field cluster.config.transaction_version: 2 needs rules \"kafka\" (its epochs are producer epochs, which the book's rules do not give)".to_string(),
        ),
        Some(n) => Some(format!(
            "field cluster.config.transaction_version: {n} is not a transaction version: 1 (chapter 8's, KIP-98) or 2 (Kafka 4's, KIP-890)"
        )),
    }
}

/// `config.isr_evaluation` of a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IsrEvaluationSpec {
    ByClock,
    AtFetch,
}

/// The largest terminal side `render`, `export` and a recording's
/// `terminal` accept: a frame is drawn in memory, and 1000x1000 cells is
/// already far past any screen.
pub const MAX_TERMINAL_SIDE: u16 = 1000;

/// The terminal size a recording reads well at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalSize {
    pub cols: u16,
    pub rows: u16,
}

/// A caption: plain text, or English and Chinese.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Caption {
    Text(String),
    Bilingual { en: String, zh: String },
}

impl Caption {
    /// The caption in `lang` ("en" or "zh"); plain text serves both.
    pub fn text(&self, lang: &str) -> &str {
        match self {
            Caption::Text(t) => t,
            Caption::Bilingual { en, zh } => {
                if lang == "zh" {
                    zh
                } else {
                    en
                }
            }
        }
    }
}

/// One step: when to show it (playback pace only), what it does, and what
/// to say about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    #[serde(default)]
    pub at_ms: u64,
    pub action: Action,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caption: Option<Caption>,
    /// The panes presentation mode shows from this step on (see
    /// [`crate::session::present`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub present: Option<crate::session::present::Present>,
}

impl Step {
    /// True for a `ui` step: a screen change, which carries no caption of
    /// its own unless one was written on it.
    pub fn is_screen_only(&self) -> bool {
        matches!(self.action, Action::Ui(_))
    }
}

/// The step whose caption is on screen after the first `n` of `steps`
/// (1-based; 0 for none): the newest, except that a `ui` step without a
/// caption keeps the one on screen, so the newest step before it that is
/// not such a step (a new user's trial: `?` with `--record` took the
/// demo's caption, the one that says `? shows every key`, off the screen).
pub fn caption_step(steps: &[Step], n: usize) -> usize {
    steps[..n.min(steps.len())]
        .iter()
        .rposition(|s| s.caption.is_some() || !s.is_screen_only())
        .map_or(0, |i| i + 1)
}

/// A whole recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    pub header: Header,
    pub steps: Vec<Step>,
}

/// A recording that could not be read: one line naming the file, the line
/// and the column or field: `FILE:LINE:COLUMN: …` for bad JSON or text,
/// `FILE:LINE: field …` for a bad value, `FILE: …` when the file cannot be
/// read at all (`line` 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingError {
    pub file: String,
    /// 1-based; 0 when the error is about the whole file.
    pub line: usize,
    /// 1-based, when the error is at one character.
    pub column: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for RecordingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.column) {
            (0, _) => write!(f, "{}: {}", self.file, self.message),
            (line, Some(column)) => write!(f, "{}:{line}:{column}: {}", self.file, self.message),
            (line, None) => write!(f, "{}:{line}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for RecordingError {}

/// The error of a JSON line that does not parse, at `line` of the file:
/// serde_json's message without its own (line-relative) position.
pub(crate) fn json_error(file: &str, line: usize, e: &serde_json::Error) -> RecordingError {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    RecordingError {
        file: file.to_string(),
        line,
        column: Some(e.column()),
        message: full.strip_suffix(&suffix).unwrap_or(&full).to_string(),
    }
}

/// A recording file's name (for errors) and text: refused in one line
/// when it cannot be read (`FILE: cannot read: …`) or is not UTF-8
/// (`FILE:LINE:COLUMN: not valid UTF-8`, where the first bad byte is).
/// Engine and observation recordings read alike.
pub(crate) fn read_text(path: &Path) -> Result<(String, String), RecordingError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| RecordingError {
        file: file.clone(),
        line: 0,
        column: None,
        message: format!("cannot read: {e}"),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let before = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        RecordingError {
            file: file.clone(),
            line: 1 + before.iter().filter(|&&b| b == b'\n').count(),
            column: Some(
                1 + String::from_utf8_lossy(&before[line_start..])
                    .chars()
                    .count(),
            ),
            message: "not valid UTF-8".into(),
        }
    })?;
    Ok((file, text))
}

/// A header line that is valid JSON but not a valid header, as one error
/// naming the field and where its value starts (issue 25: a header number
/// error said `invalid value: integer -3, expected u32` without either):
/// `FILE:LINE:COLUMN: field cluster.topics[0].partitions: …`. serde_json
/// reports where in the line it stopped; [`value_spans`] finds the
/// innermost value there, which is the field (an object, for a missing
/// field). The column counts characters, as every column here does.
pub(crate) fn header_from_line<T: serde::de::DeserializeOwned>(
    file: &str,
    line: usize,
    text: &str,
) -> Result<T, RecordingError> {
    let e = match serde_json::from_str::<T>(text) {
        Ok(header) => return Ok(header),
        Err(e) => e,
    };
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = friendly_range(full.strip_suffix(&suffix).unwrap_or(&full));
    // serde_json's column is 1-based, in bytes, at the last byte it read.
    let at = e.column().saturating_sub(1);
    let found = value_spans(text)
        .into_iter()
        .filter(|(_, start, end)| *start <= at && at < *end)
        .max_by_key(|(_, start, _)| *start);
    let (message, start) = match found {
        Some((path, start, _)) if !path.is_empty() => (format!("field {path}: {message}"), start),
        _ => (format!("header: {message}"), at),
    };
    let column = 1 + text.get(..start).map_or(start, |s| s.chars().count());
    Err(RecordingError {
        file: file.to_string(),
        line,
        column: Some(column),
        message,
    })
}

/// serde's "expected u32" said as the range it means.
fn friendly_range(message: &str) -> String {
    for (ty, max) in [
        ("u16", u64::from(u16::MAX)),
        ("u32", u64::from(u32::MAX)),
        ("u64", u64::MAX),
        ("usize", u64::MAX),
    ] {
        if let Some(head) = message.strip_suffix(&format!("expected {ty}")) {
            return format!("{head}expected an integer from 0 to {max}");
        }
    }
    message.to_string()
}

/// Every value of the JSON `text` (already known to parse) with its path
/// (`cluster.topics[0].partitions`; the whole text is `""`) and its byte
/// span. Nesting is bounded by serde_json's recursion limit, which the
/// text has passed.
pub(crate) fn value_spans(text: &str) -> Vec<(String, usize, usize)> {
    fn ws(b: &[u8], i: &mut usize) {
        while b.get(*i).is_some_and(u8::is_ascii_whitespace) {
            *i += 1;
        }
    }
    fn string_end(b: &[u8], mut i: usize) -> usize {
        // `i` is at the opening quote.
        i += 1;
        while let Some(&c) = b.get(i) {
            match c {
                b'\\' => i += 2,
                b'"' => return i + 1,
                _ => i += 1,
            }
        }
        i
    }
    fn value(text: &str, i: &mut usize, path: String, out: &mut Vec<(String, usize, usize)>) {
        let b = text.as_bytes();
        ws(b, i);
        let start = *i;
        match b.get(*i) {
            Some(b'{') => {
                *i += 1;
                loop {
                    ws(b, i);
                    match b.get(*i) {
                        Some(b'}') => {
                            *i += 1;
                            break;
                        }
                        Some(b'"') => {
                            let end = string_end(b, *i);
                            let key: String = text
                                .get(*i..end)
                                .and_then(|k| serde_json::from_str(k).ok())
                                .unwrap_or_default();
                            *i = end;
                            ws(b, i);
                            if b.get(*i) == Some(&b':') {
                                *i += 1;
                            }
                            let child = if path.is_empty() {
                                key
                            } else {
                                format!("{path}.{key}")
                            };
                            value(text, i, child, out);
                        }
                        Some(_) => *i += 1, // ','
                        None => break,
                    }
                }
            }
            Some(b'[') => {
                *i += 1;
                let mut n = 0;
                loop {
                    ws(b, i);
                    match b.get(*i) {
                        Some(b']') => {
                            *i += 1;
                            break;
                        }
                        Some(b',') => *i += 1,
                        Some(_) => {
                            value(text, i, format!("{path}[{n}]"), out);
                            n += 1;
                        }
                        None => break,
                    }
                }
            }
            Some(b'"') => *i = string_end(b, *i),
            Some(_) => {
                while b
                    .get(*i)
                    .is_some_and(|c| !matches!(c, b',' | b']' | b'}') && !c.is_ascii_whitespace())
                {
                    *i += 1;
                }
            }
            None => {}
        }
        out.push((path, start, *i));
    }
    let mut out = Vec::new();
    value(text, &mut 0, String::new(), &mut out);
    out
}

/// A line of a recording and its number, from 1.
pub(crate) type Numbered<'a> = (usize, &'a str);

/// A recording's lines that are not blank, numbered from 1: its first
/// (the header, for [`header_from_line`]), checked to be JSON whose
/// version field `key` is `version` (`what` names the format in the
/// message for another version, `missing` is the message when the field
/// is absent), and the rest. Engine and observation recordings begin
/// alike.
pub(crate) fn versioned_header<'a>(
    file: &str,
    text: &'a str,
    (key, version, what, missing): (&str, u32, &str, &str),
) -> Result<(Numbered<'a>, impl Iterator<Item = Numbered<'a>>), RecordingError> {
    let err = |line: usize, message: String| RecordingError {
        file: file.to_string(),
        line,
        column: None,
        message,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty());
    let (first, header_line) = lines
        .next()
        .ok_or_else(|| err(1, "empty recording: line 1 must be the header".into()))?;
    let value: serde_json::Value =
        serde_json::from_str(header_line).map_err(|e| json_error(file, first, &e))?;
    match value.get(key).and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(version) => Ok(((first, header_line), lines)),
        Some(v) => Err(err(
            first,
            format!("{what} version {v} is not supported; this build reads version {version}"),
        )),
        None => Err(err(first, missing.to_string())),
    }
}

impl Recording {
    /// Reads and checks a recording file.
    pub fn load(path: &Path) -> Result<Self, RecordingError> {
        let (file, text) = read_text(path)?;
        Self::parse(&file, &text)
    }

    /// Parses recording text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, RecordingError> {
        let err = |line: usize, message: String| RecordingError {
            file: file.to_string(),
            line,
            column: None,
            message,
        };
        let ((first, header_line), lines) = versioned_header(
            file,
            text,
            (
                "mk_recording",
                RECORDING_VERSION,
                "recording",
                "field mk_recording: missing; line 1 must be the header",
            ),
        )?;
        let header: Header = header_from_line(file, first, header_line)?;
        let rules = header
            .rules
            .parse::<Rules>()
            .map_err(|e| err(first, format!("field rules: {e}")))?;
        if let Some(e) = transaction_version_error(header.cluster.config.transaction_version, rules)
        {
            return Err(err(first, e));
        }
        let side = 1..=MAX_TERMINAL_SIDE;
        if let Some(t) = header.terminal
            && !(side.contains(&t.cols) && side.contains(&t.rows))
        {
            return Err(err(
                first,
                format!(
                    "field terminal: {}x{} is not a terminal size: cols and rows go from 1 to {MAX_TERMINAL_SIDE}",
                    t.cols, t.rows
                ),
            ));
        }
        if header.cluster.brokers.is_empty() {
            return Err(err(
                first,
                "field cluster.brokers: needs at least one broker".into(),
            ));
        }
        let mut budget =
            limits::check_cluster(&header.cluster).map_err(|e| err(first, e.to_string()))?;
        let mut steps = Vec::new();
        for (n, line) in lines {
            let value: serde_json::Value =
                serde_json::from_str(line).map_err(|e| json_error(file, n, &e))?;
            let action_value = value
                .get("action")
                .ok_or_else(|| err(n, "field action: missing".into()))?;
            let action = Action::from_json(action_value)
                .and_then(|a| limits::check_action(&a).map(|()| a))
                .map_err(|e| err(n, e.to_string()))?;
            budget.spend(&action).map_err(|e| err(n, e.to_string()))?;
            let at_ms = match value.get("at_ms") {
                None => 0,
                Some(v) => v
                    .as_u64()
                    .ok_or_else(|| err(n, "field at_ms: expected a non-negative integer".into()))?,
            };
            let caption = match value.get("caption") {
                None | Some(serde_json::Value::Null) => None,
                Some(c) => Some(serde_json::from_value(c.clone()).map_err(|_| {
                    err(
                        n,
                        "field caption: expected a string or {\"en\":…,\"zh\":…}".into(),
                    )
                })?),
            };
            let present = match value.get("present") {
                None | Some(serde_json::Value::Null) => None,
                Some(p) => {
                    Some(crate::session::present::Present::from_json(p).map_err(|e| err(n, e))?)
                }
            };
            steps.push(Step {
                at_ms,
                action,
                caption,
                present,
            });
        }
        Ok(Self { header, steps })
    }

    /// The recording as JSON Lines.
    pub fn to_jsonl(&self) -> String {
        let mut out = serde_json::to_string(&self.header).expect("header serialises");
        out.push('\n');
        for step in &self.steps {
            out.push_str(&serde_json::to_string(step).expect("step serialises"));
            out.push('\n');
        }
        out
    }
}

/// Writes a recording as a live session goes: the header at once, then each
/// step appended and flushed to disk as it is applied, so a crash of the
/// program loses at most the step in progress.
#[derive(Debug)]
pub struct RecordingWriter {
    path: PathBuf,
    file: File,
    /// The file's length after its last whole line.
    len: u64,
}

/// Appends `line` and a newline to `file`, whose length after its last
/// whole line is `*len`, and syncs it. The line reaches the file whole or
/// not at all (issue 25: a full disk left a half line, and `state` and
/// `check` refused the whole recording): it is written in one buffer, and
/// a write or sync that fails cuts the file back to `*len`, so what is
/// there is a whole recording up to the failure. If the cut fails too,
/// the error says so (the half line then stays, and the reader names it).
pub(crate) fn append_line(file: &mut File, len: &mut u64, line: &str) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    let written = file
        .seek(SeekFrom::Start(*len))
        .and_then(|_| file.write_all(&buf))
        .and_then(|()| file.flush())
        .and_then(|()| file.sync_data());
    match written {
        Ok(()) => {
            *len += buf.len() as u64;
            Ok(())
        }
        Err(e) => match file.set_len(*len).and_then(|()| file.sync_data()) {
            Ok(()) => Err(e),
            Err(cut) => Err(std::io::Error::new(
                e.kind(),
                format!("{e}; and cutting the half-written line failed: {cut}"),
            )),
        },
    }
}

impl RecordingWriter {
    /// Creates (or replaces) the file and writes the header.
    pub fn create(path: &Path, header: &Header) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)?;
        let mut writer = Self {
            path: path.to_path_buf(),
            file,
            len: 0,
        };
        writer.write_line(&serde_json::to_string(header).expect("header serialises"))?;
        Ok(writer)
    }

    /// Appends one step and syncs it.
    pub fn append(&mut self, step: &Step) -> std::io::Result<()> {
        self.write_line(&serde_json::to_string(step).expect("step serialises"))
    }

    fn write_line(&mut self, line: &str) -> std::io::Result<()> {
        append_line(&mut self.file, &mut self.len, line)
    }

    /// Replaces the whole file with `header` and `steps` (an undone step
    /// leaves the recording): written to a temporary sibling, synced, then
    /// renamed over the file, so a failed write leaves the old recording
    /// whole. Later steps append to the new file.
    pub fn rewrite(&mut self, header: &Header, steps: &[Step]) -> std::io::Result<()> {
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let tmp = tempfile::NamedTempFile::new_in(dir)?;
        let mut next = Self {
            path: self.path.clone(),
            file: tmp.reopen()?,
            len: 0,
        };
        next.write_line(&serde_json::to_string(header).expect("header serialises"))?;
        for step in steps {
            next.append(step)?;
        }
        tmp.persist(&self.path).map_err(|e| e.error)?;
        self.file = OpenOptions::new().write(true).open(&self.path)?;
        self.len = next.len;
        Ok(())
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"mk_recording":1,"title":"t","rules":"minikafka","cluster":{"brokers":[1,2],"topics":[{"name":"out","partitions":1,"replication_factor":2}],"config":{"min_insync_replicas":1}},"layout":"transactions","terminal":{"cols":120,"rows":36}}"#;

    #[test]
    fn a_header_value_error_names_its_field_and_column() {
        let line = r#"{"mk_recording":1, "cluster":{"brokers":[1,2],"topics":[{"name":"a\"}","partitions":1,"replication_factor":1},{"name":"b","partitions":-3,"replication_factor":1}]}}"#;
        let e = Recording::parse("r.jsonl", line).unwrap_err();
        let column = line.find("-3").unwrap() + 1;
        assert_eq!(
            e.to_string(),
            format!(
                "r.jsonl:1:{column}: field cluster.topics[1].partitions: invalid value: integer `-3`, expected an integer from 0 to 4294967295"
            )
        );
        let spans = value_spans(r#"{"a":[1,{"b":"x"}],"c":null}"#);
        let paths: Vec<&str> = spans.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(paths, ["a[0]", "a[1].b", "a[1]", "a", "c", ""]);
    }

    #[test]
    fn parses_the_specs_example() {
        let text = format!(
            "{HEADER}\n{}\n\n{}\n",
            r#"{"at_ms":0,"action":{"begin":{"txn":"tx-1"}},"caption":{"en":"Open a transaction","zh":"开启事务"}}"#,
            r#"{"at_ms":900,"action":{"send":{"txn":"tx-1","topic":"out","partition":0,"value":"pending"}},"caption":"plain"}"#
        );
        let r = Recording::parse("r.jsonl", &text).unwrap();
        assert_eq!(r.header.cluster.brokers, [1, 2]);
        assert_eq!(
            r.header.terminal,
            Some(TerminalSize {
                cols: 120,
                rows: 36
            })
        );
        assert_eq!(r.steps.len(), 2);
        assert_eq!(r.steps[0].caption.as_ref().unwrap().text("zh"), "开启事务");
        assert_eq!(r.steps[1].caption.as_ref().unwrap().text("zh"), "plain");
        assert_eq!(r.steps[1].at_ms, 900);
        assert_eq!(Recording::parse("r.jsonl", &r.to_jsonl()).unwrap(), r);
    }

    #[test]
    fn errors_name_file_line_and_column_or_field() {
        let bad_json = format!("{HEADER}\n{{\"at_ms\":0,\"action\":\n");
        let e = Recording::parse("r.jsonl", &bad_json)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "r.jsonl:2:20: EOF while parsing a value");
        let unknown = format!("{HEADER}\n{{\"action\":{{\"explode\":{{}}}}}}\n");
        let e = Recording::parse("r.jsonl", &unknown)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("r.jsonl:2: field action: unknown action \"explode\""),
            "{e}"
        );
        assert!(e.contains("create_topic"), "{e}");
        let version = HEADER.replace("\"mk_recording\":1", "\"mk_recording\":2");
        let e = Recording::parse("r.jsonl", &version)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "r.jsonl:1: recording version 2 is not supported; this build reads version 1"
        );
        let missing = format!("{HEADER}\n{{\"action\":{{\"begin\":{{}}}}}}\n");
        let e = Recording::parse("r.jsonl", &missing)
            .unwrap_err()
            .to_string();
        assert!(e.contains("r.jsonl:2") && e.contains("txn"), "{e}");
        let rules = HEADER.replace("\"minikafka\"", "\"book\"");
        assert!(
            Recording::parse("r.jsonl", &rules)
                .unwrap_err()
                .to_string()
                .contains("field rules")
        );
        assert!(Recording::parse("r.jsonl", "").is_err());
        let caption = format!("{HEADER}\n{{\"action\":\"crash\",\"caption\":5}}\n");
        assert!(
            Recording::parse("r.jsonl", &caption)
                .unwrap_err()
                .to_string()
                .contains("field caption")
        );
    }

    #[test]
    fn typed_fields_and_limits_are_checked_on_reading_with_line_and_field() {
        let parse = |steps: &[&str]| {
            Recording::parse("r.jsonl", &format!("{HEADER}\n{}\n", steps.join("\n")))
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            parse(&[
                r#"{"action":"note"}"#,
                r#"{"action":{"produce":{"topic":"out","value":"v","acks":"2"}}}"#
            ])
            .unwrap_err(),
            "r.jsonl:3: field action.produce.acks: unknown acks \"2\": expected \"0\", \"1\" or \"all\""
        );
        assert!(
            parse(&[r#"{"action":{"abort":{"txn":"t","crash_after":"later"}}}"#])
                .unwrap_err()
                .starts_with("r.jsonl:2: field action.abort.crash_after: unknown cut point")
        );
        // The clock's total counts across steps; the line is the one past it.
        assert!(
            parse(&[
                r#"{"action":{"advance_clock":{"ms":9007199254740000}}}"#,
                r#"{"action":{"advance_clock":{"ms":991}}}"#,
                r#"{"action":{"advance_clock":{"ms":1}}}"#
            ])
            .unwrap_err()
            .starts_with("r.jsonl:4: field action.advance_clock.ms: ")
        );
        let header = HEADER.replace("\"partitions\":1", "\"partitions\":257");
        assert_eq!(
            Recording::parse("r.jsonl", &header)
                .unwrap_err()
                .to_string(),
            "r.jsonl:1: field cluster.topics[0].partitions: 257 partitions; the cap is 256 partitions per topic"
        );
        let r = parse(&[
            r#"{"action":{"produce":{"topic":"out","value":"v","acks":"0"}}}"#,
            r#"{"action":{"commit":{"txn":"t","crash_after":"marker:2"}}}"#,
            r#"{"action":{"tear":{"target":{"topic":"out","partition":0,"broker":1},"cut_bytes":3}}}"#,
        ])
        .unwrap();
        assert_eq!(Recording::parse("r.jsonl", &r.to_jsonl()).unwrap(), r);
        assert!(r.to_jsonl().contains(r#""acks":"0""#));
        assert!(r.to_jsonl().contains(r#""crash_after":"marker:2""#));
    }

    #[test]
    fn a_writer_flushes_every_step() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.jsonl");
        let header: Header = serde_json::from_str(HEADER).unwrap();
        let mut w = RecordingWriter::create(&path, &header).unwrap();
        w.append(&Step {
            present: None,
            at_ms: 5,
            action: Action::Crash {},
            caption: None,
        })
        .unwrap();
        // read while the writer is still open: the step is already on disk
        let r = Recording::load(&path).unwrap();
        assert_eq!(r.steps.len(), 1);
        assert_eq!(r.header, header);
    }
}
