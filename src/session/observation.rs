//! Observation sessions (SPEC §4-§6; docs/observe.md "Live" and
//! docs/recording-format.md "Observation recordings"): the live observer of a
//! real Kafka cluster refreshes its [`Snapshot`] again and again, and each
//! refresh is a step. A replay cannot ask the cluster again, so an observation
//! recording holds what each refresh saw: the observer's snapshot (bounded by
//! its fetch bounds, docs/observe.md) or the one line saying why the refresh
//! failed.
//!
//! The view of step N is a pure function of the file's first N refresh
//! lines ([`compose`] and [`Progress`]): the live session
//! ([`ObservedSession`]) and the replay ([`ObservationTimeline`]) both go
//! through it, so a replay shows, step for step, what the live screen
//! showed — the same snapshot, the same "what changed" ([`diff`] against
//! the step before), the same errors. Wall time enters only as data: each
//! line's `at_ms` (milliseconds since the observation began, when the
//! refresh started) is the step's `clock_ms` and paces playback.
//!
//! This module names no network code: the refreshes come from a
//! [`Refresher`] (`crate::observe::live` with the `serve` feature), so an
//! observation replays in any build.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::session::SessionError;
use crate::session::recording::{MAX_TERMINAL_SIDE, RecordingError, TerminalSize, json_error};
use crate::session::snapshot::{
    Bounds, Changes, Consumers, ErrorSnapshot, EventSnapshot, JournalSnapshot, Snapshot,
    SnapshotSource, TAIL, diff, field,
};

/// The observation recording format version this build reads and writes.
pub const OBSERVATION_VERSION: u32 = 1;

/// The `code` of a failed refresh in the state's `errors`.
pub const REFRESH_FAILED: &str = "RefreshFailed";

/// `--interval`'s default: one refresh a second.
pub const DEFAULT_INTERVAL_MS: u64 = 1000;
/// The shortest `--interval`: a refresh is several requests to every
/// leader, and a tighter loop would load the cluster for nothing a human
/// can read.
pub const MIN_INTERVAL_MS: u64 = 100;
/// The longest `--interval`: an hour.
pub const MAX_INTERVAL_MS: u64 = 3_600_000;

/// Line 1 of an observation recording. `mk_observation` (instead of an
/// engine recording's `mk_recording`) tells the two apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservationHeader {
    pub mk_observation: u32,
    /// The title bar's title (`observe HOST:PORT,…`).
    #[serde(default)]
    pub title: String,
    /// What was observed, as given on the command line (information only:
    /// a replay asks no broker).
    pub bootstrap: Vec<String>,
    #[serde(default)]
    pub topics: Vec<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    /// The refresh period asked for (`--interval`).
    pub interval_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<TerminalSize>,
}

impl ObservationHeader {
    /// The header of an observation of `bootstrap`.
    pub fn new(
        bootstrap: &[String],
        topics: &[String],
        groups: &[String],
        interval_ms: u64,
    ) -> Self {
        Self {
            mk_observation: OBSERVATION_VERSION,
            title: format!("observe {}", bootstrap.join(",")),
            bootstrap: bootstrap.to_vec(),
            topics: topics.to_vec(),
            groups: groups.to_vec(),
            interval_ms,
            layout: None,
            terminal: None,
        }
    }
}

/// One refresh as a line of the file: exactly one of `observed` and
/// `error`.
#[derive(Debug, Serialize)]
struct RefreshLine<'a> {
    at_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    observed: Option<&'a Snapshot>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

/// What one refresh ended with: the snapshot the observer built, or the
/// one line saying what failed where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refreshed {
    /// Milliseconds since the observation began, when the refresh started.
    pub at_ms: u64,
    pub outcome: Result<Snapshot, String>,
}

/// Where a live session's refreshes come from: they run off the drawing
/// thread (a slow broker must not freeze the keys), and the session takes
/// each one as it ends.
pub trait Refresher {
    /// Notified when a refresh has ended (its outcome is ready to take).
    fn wake(&self) -> Arc<tokio::sync::Notify>;
    /// Asks for a refresh now (the `r` key); one already under way
    /// counts. False when no refresh will come any more (`--refreshes`
    /// reached).
    fn request(&self) -> bool;
    /// The refreshes that ended since the last call, oldest first.
    fn take(&mut self) -> Vec<Refreshed>;
}

/// What a failed refresh run means for the events and errors: counted over
/// the refreshes in order, the same way live and in a replay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Progress {
    /// The step of the last refresh that answered (0: none yet).
    last_good: usize,
    /// Refreshes that failed since it.
    failed_run: usize,
}

impl Progress {
    /// Counts refresh `n`, which failed with `error` or answered; returns
    /// the event or the error the step adds.
    fn advance(&mut self, n: usize, error: Option<&str>) -> Added {
        match error {
            Some(e) => {
                self.failed_run += 1;
                // What is on screen first: a status line cut short keeps it.
                let showing = match self.last_good {
                    0 => "nothing observed yet".to_string(),
                    m => format!("showing refresh {m} (stale)"),
                };
                Added::Error(ErrorSnapshot {
                    step: n,
                    message: format!("refresh {n} failed, {showing}: {e}"),
                    code: REFRESH_FAILED.into(),
                    zh: String::new(),
                })
            }
            None => {
                let run = std::mem::take(&mut self.failed_run);
                self.last_good = n;
                if run == 0 {
                    return Added::Nothing;
                }
                let plural = if run == 1 { "" } else { "es" };
                Added::Event(EventSnapshot {
                    step: n,
                    text: format!(
                        "refresh {n}: the cluster answers again after {run} failed refresh{plural}"
                    ),
                    zh: format!("刷新 {n}：{run} 次刷新失败之后，集群重新应答"),
                })
            }
        }
    }
}

/// What a refresh adds to the events pane.
enum Added {
    Nothing,
    Event(EventSnapshot),
    Error(ErrorSnapshot),
}

/// The view before the first refresh (step 0): nothing observed yet.
fn nothing_yet(title: &str) -> Snapshot {
    Snapshot {
        step: 0,
        clock_ms: 0,
        rules: "observed".into(),
        brokers: Vec::new(),
        partitions: Vec::new(),
        transactions: Vec::new(),
        committed_offsets: Default::default(),
        groups: Vec::new(),
        journal: JournalSnapshot {
            frames: 0,
            bytes: 0,
            tail: Vec::new(),
        },
        last_recovery: None,
        consumers: Consumers {
            read_uncommitted: Default::default(),
            read_committed: Default::default(),
            counts: Default::default(),
        },
        pending: Vec::new(),
        errors: Vec::new(),
        events: Vec::new(),
        title: title.to_string(),
        total_steps: None,
        caption: None,
        captioned_steps: Vec::new(),
        present: Vec::new(),
        changes: Changes::default(),
        moment_of_death: None,
        before_recovery: false,
        listeners: Vec::new(),
        clients: Vec::new(),
        client_log: Vec::new(),
        fault_armed: None,
        accumulators: Vec::new(),
        unavailable: [
            field::PARTITIONS,
            field::TRANSACTIONS,
            field::COMMITTED_OFFSETS,
            field::JOURNAL,
            field::LAST_RECOVERY,
            field::PENDING,
        ]
        .iter()
        .map(|f| f.to_string())
        .collect(),
    }
}

/// The view of step `n`: `shown` (the snapshot of the last refresh up to
/// `n` that answered; none yet: an empty cluster), numbered `n`, its clock
/// the step's `at_ms`, with what changed since `before` (the same for step
/// `n - 1`) and the session's last events and errors. The observer's clock
/// and its own errors are the session's, so neither is unavailable here.
///
/// `before` is the last refresh that answered before step `n`, with its
/// step: what changed is told since then (`since_step`), so a refresh that
/// answers after failed ones compares with what was last seen, and says
/// so. The first refresh that answers has nothing to compare with: it
/// tells no change (the cluster was not created or begun then, only first
/// seen), and says what it first saw instead.
fn compose(
    title: &str,
    (n, at_ms): (usize, u64),
    shown: Option<&Snapshot>,
    before: Option<(usize, &Snapshot)>,
    events: Vec<EventSnapshot>,
    errors: Vec<ErrorSnapshot>,
) -> Snapshot {
    let mut view = shown.cloned().unwrap_or_else(|| nothing_yet(title));
    view.step = n;
    view.clock_ms = at_ms;
    view.title = title.to_string();
    view.unavailable
        .retain(|f| f != field::CLOCK_MS && f != field::ERRORS);
    match before {
        Some((m, before)) if n > 0 => {
            view.changes = observed_diff(before, &view);
            view.changes.since_step = Some(m);
        }
        _ if n > 0 && shown.is_some() => {
            let (p, t) = (view.partitions.len(), view.transactions.len());
            let g = view.committed_offsets.len();
            view.changes = Changes::default();
            view.changes.sentences = vec![format!(
                "first seen: {p} partition{}, {t} transaction{}, {g} group{}",
                plural(p),
                plural(t),
                plural(g)
            )];
            view.changes.sentences_zh =
                vec![format!("首次看到：{p} 个分区，{t} 个事务，{g} 个消费组")];
        }
        _ => {}
    }
    view.events = events;
    view.errors = errors;
    view
}

/// What changed from `before` to `after`. [`diff`] tells a new batch (and
/// a removed one) by the log end offset, which no client API shows; an
/// observer's batches are those below the HW, so the HW stands in for the
/// log end of both snapshots compared (the view keeps its LEO unavailable).
fn observed_diff(before: &Snapshot, after: &Snapshot) -> Changes {
    let ends_at_hw = |s: &Snapshot| {
        let mut s = s.clone();
        if s.lacks(field::LOG_END_OFFSET) {
            for p in &mut s.partitions {
                p.log_end_offset = p.high_watermark;
            }
        }
        s
    };
    let mut after = ends_at_hw(after);
    // Offsets this refresh could not read (a coordinator unreachable, no
    // ListGroups) are not gone: only those read and absent are told so.
    if after
        .unavailable
        .iter()
        .any(|f| f.starts_with(field::COMMITTED_OFFSETS))
    {
        for (group, offsets) in &before.committed_offsets {
            let now = after.committed_offsets.entry(group.clone()).or_default();
            for (tp, offset) in offsets {
                now.entry(tp.clone()).or_insert(*offset);
            }
        }
    }
    diff(&ends_at_hw(before), &after)
}

/// The events pane's line for refresh `n` that answered and changed
/// something: what it changed, kept among the session's events (the last
/// [`TAIL`]) so a live observer's history stays on screen after the next
/// refresh (a view's `changes` are its own step's only; at one refresh a
/// second they were gone before anyone read them). Made from the view's
/// own `changes`, live and in a replay alike.
pub fn change_event(view: &Snapshot) -> Option<EventSnapshot> {
    let c = &view.changes;
    if c.sentences.is_empty() {
        return None;
    }
    let zh = if c.sentences_zh.len() == c.sentences.len() {
        c.sentences_zh.join("；")
    } else {
        c.sentences.join("; ")
    };
    // The pane writes the step before it (`#2 …`, `step 2: …`).
    Some(EventSnapshot {
        step: view.step,
        text: c.sentences.join("; "),
        zh,
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The newest [`TAIL`] of `items`.
fn tail<T: Clone>(items: &[T]) -> Vec<T> {
    items[items.len().saturating_sub(TAIL)..].to_vec()
}

/// A live observation: the refreshes folded into the view of the current
/// step, each written to the recording (if any) as it comes. It holds the
/// view, the last snapshot that answered and the last [`TAIL`] events and
/// errors: memory does not grow with the session.
pub struct ObservedSession {
    header: ObservationHeader,
    progress: Progress,
    last_good: Option<Snapshot>,
    events: VecDeque<EventSnapshot>,
    errors: VecDeque<ErrorSnapshot>,
    view: Snapshot,
    writer: Option<ObservationWriter>,
}

impl ObservedSession {
    /// A session at step 0, recording to `writer` if given (its header
    /// already written).
    pub fn new(header: ObservationHeader, writer: Option<ObservationWriter>) -> Self {
        let view = compose(&header.title, (0, 0), None, None, Vec::new(), Vec::new());
        Self {
            header,
            progress: Progress::default(),
            last_good: None,
            events: VecDeque::new(),
            errors: VecDeque::new(),
            view,
            writer,
        }
    }

    /// The header the recording starts with.
    pub fn header(&self) -> &ObservationHeader {
        &self.header
    }

    /// The view of the current step.
    pub fn view(&self) -> &Snapshot {
        &self.view
    }

    /// The current step (the number of refreshes taken).
    pub fn step(&self) -> usize {
        self.view.step
    }

    /// The recording being written, if any.
    pub fn recording(&self) -> Option<&Path> {
        self.writer.as_ref().map(|w| w.path())
    }

    /// Takes one refresh as the next step. The step is taken whether or
    /// not it records; the error says why it could not be written.
    pub fn push(&mut self, refreshed: Refreshed) -> Result<(), SessionError> {
        let n = self.view.step + 1;
        let written = match &mut self.writer {
            Some(w) => w.append(&refreshed).map_err(|e| {
                SessionError::os(format!("cannot record refresh {n}"), e).in_(w.path().display())
            }),
            None => Ok(()),
        };
        let error = refreshed.outcome.as_ref().err().map(String::as_str);
        let before_step = self.progress.last_good;
        match self.progress.advance(n, error) {
            Added::Nothing => {}
            Added::Event(e) => self.events.push_back(e),
            Added::Error(e) => self.errors.push_back(e),
        }
        while self.events.len() > TAIL {
            self.events.pop_front();
        }
        while self.errors.len() > TAIL {
            self.errors.pop_front();
        }
        let before = match refreshed.outcome {
            Ok(snapshot) => self.last_good.replace(snapshot),
            Err(_) => self.last_good.clone(),
        };
        self.view = compose(
            &self.header.title,
            (n, refreshed.at_ms),
            self.last_good.as_ref(),
            before.as_ref().map(|b| (before_step, b)),
            self.events.iter().cloned().collect(),
            self.errors.iter().cloned().collect(),
        );
        if let Some(e) = change_event(&self.view) {
            self.events.push_back(e.clone());
            if self.events.len() > TAIL {
                self.events.pop_front();
            }
            self.view.events = self.events.iter().cloned().collect();
        }
        written
    }
}

impl SnapshotSource for ObservedSession {
    /// Observed snapshots hold every record they fetched already.
    fn snapshot(&self, _bounds: &Bounds) -> Snapshot {
        self.view.clone()
    }
}

/// Writes an observation recording as the session goes: the header at
/// once, then each refresh appended and synced as it ends, so a session
/// that is killed loses at most the refresh in progress.
#[derive(Debug)]
pub struct ObservationWriter {
    path: PathBuf,
    file: File,
    /// The file's length after its last whole line.
    len: u64,
}

impl ObservationWriter {
    /// Writes the header to `file` (created by the caller, who decides
    /// whether an existing file may be replaced).
    pub fn create(path: &Path, header: &ObservationHeader) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)?;
        let mut w = Self {
            path: path.to_path_buf(),
            file,
            len: 0,
        };
        w.line(&serde_json::to_string(header).expect("a header serialises"))?;
        Ok(w)
    }

    /// Appends one refresh and syncs it.
    pub fn append(&mut self, refreshed: &Refreshed) -> std::io::Result<()> {
        let line = RefreshLine {
            at_ms: refreshed.at_ms,
            observed: refreshed.outcome.as_ref().ok(),
            error: refreshed.outcome.as_ref().err().map(String::as_str),
        };
        self.line(&serde_json::to_string(&line).expect("a refresh serialises"))
    }

    /// One whole line, or none (a failed write is cut back:
    /// [`crate::session::recording::append_line`]).
    fn line(&mut self, line: &str) -> std::io::Result<()> {
        crate::session::recording::append_line(&mut self.file, &mut self.len, line)
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// One refresh of a loaded recording: its time, and its snapshot's JSON
/// (parsed again when a step shows it) or its error.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RefreshStep {
    at_ms: u64,
    outcome: Result<String, String>,
}

/// An observation recording, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub header: ObservationHeader,
    steps: Vec<RefreshStep>,
}

/// Whether `path` starts with an observation recording's header (its first
/// non-blank line is a JSON object with `mk_observation`). Anything else,
/// unreadable files included, is left to the engine recording's reader and
/// its errors.
pub fn is_observation(path: &Path) -> bool {
    use std::io::BufRead;
    let Ok(file) = File::open(path) else {
        return false;
    };
    // Not a regular file (a FIFO, a device): the engine reader says so.
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let reader = std::io::BufReader::new(file);
    for line in reader.split(b'\n').take(1000) {
        let Ok(line) = line else { return false };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        return serde_json::from_slice::<serde_json::Value>(&line)
            .is_ok_and(|v| v.get("mk_observation").is_some());
    }
    false
}

impl Observation {
    /// Reads and checks an observation recording. Every line is parsed
    /// (and its snapshot checked) now, so a bad file is refused before
    /// anything is drawn.
    pub fn load(path: &Path) -> Result<Self, RecordingError> {
        let (file, text) = crate::session::recording::read_text(path)?;
        Self::parse(&file, &text)
    }

    /// Parses observation recording text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, RecordingError> {
        let err = |line: usize, message: String| RecordingError {
            file: file.to_string(),
            line,
            column: None,
            message,
        };
        let ((first, header_line), lines) = crate::session::recording::versioned_header(
            file,
            text,
            (
                "mk_observation",
                OBSERVATION_VERSION,
                "observation recording",
                "field mk_observation: expected the format version, 1",
            ),
        )?;
        let header: ObservationHeader =
            crate::session::recording::header_from_line(file, first, header_line)?;
        if header.bootstrap.is_empty() {
            return Err(err(
                first,
                "field bootstrap: needs at least one HOST:PORT".into(),
            ));
        }
        if !(MIN_INTERVAL_MS..=MAX_INTERVAL_MS).contains(&header.interval_ms) {
            return Err(err(
                first,
                format!(
                    "field interval_ms: {} is not a refresh period: from {MIN_INTERVAL_MS} to {MAX_INTERVAL_MS} ms",
                    header.interval_ms
                ),
            ));
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
        let mut steps = Vec::new();
        let mut last_at = 0;
        for (n, line) in lines {
            let value: serde_json::Value =
                serde_json::from_str(line).map_err(|e| json_error(file, n, &e))?;
            if !value.is_object() {
                return Err(err(
                    n,
                    "expected a refresh: {\"at_ms\":…,\"observed\":{…}} or {\"at_ms\":…,\"error\":\"…\"}".into(),
                ));
            }
            let at_ms = value
                .get("at_ms")
                .ok_or_else(|| err(n, "field at_ms: missing".into()))?
                .as_u64()
                .ok_or_else(|| err(n, "field at_ms: expected a non-negative integer".into()))?;
            if at_ms < last_at {
                return Err(err(
                    n,
                    format!(
                        "field at_ms: {at_ms} is before the previous refresh's {last_at}; refreshes are in time order"
                    ),
                ));
            }
            last_at = at_ms;
            let observed = value.get("observed").filter(|v| !v.is_null());
            let error = value.get("error").filter(|v| !v.is_null());
            let outcome = match (observed, error) {
                (Some(o), None) => {
                    Snapshot::deserialize(o).map_err(|e| err(n, format!("field observed: {e}")))?;
                    Ok(o.to_string())
                }
                (None, Some(e)) => Err(e
                    .as_str()
                    .ok_or_else(|| err(n, "field error: expected a string".into()))?
                    .to_string()),
                (Some(_), Some(_)) => {
                    return Err(err(
                        n,
                        "fields observed and error: a refresh has one of them, not both".into(),
                    ));
                }
                (None, None) => {
                    return Err(err(
                        n,
                        "field observed: missing (a refresh has observed or error)".into(),
                    ));
                }
            };
            steps.push(RefreshStep { at_ms, outcome });
        }
        Ok(Self { header, steps })
    }

    /// The number of refreshes (steps).
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// True without any refresh.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// `at_ms` of step `n` (0 for step 0).
    pub fn at_ms(&self, n: usize) -> u64 {
        n.checked_sub(1)
            .and_then(|i| self.steps.get(i))
            .map_or(0, |s| s.at_ms)
    }
}

/// An observation recording being replayed: the view of any step, forward
/// and back. What each step shows depends on the error run before it and
/// on two snapshots (its own, or the last that answered, and the step
/// before's), so the runs are counted once when the timeline is made and
/// a step parses at most those two snapshots: going back costs no more
/// than going forward.
pub struct ObservationTimeline {
    observation: Observation,
    /// Per step 0..=len: the step of the last refresh up to it that
    /// answered (0: none).
    last_good: Vec<usize>,
    /// Every event and error of the session, in step order.
    events: Vec<EventSnapshot>,
    errors: Vec<ErrorSnapshot>,
    view: Snapshot,
}

impl ObservationTimeline {
    /// A timeline at step 0.
    pub fn new(observation: Observation) -> Self {
        let mut progress = Progress::default();
        let mut last_good = vec![0];
        let (mut events, mut errors) = (Vec::new(), Vec::new());
        // The last refresh that answered, parsed, to tell each answer's
        // changes as live does (two snapshots at a time).
        let mut before: Option<(usize, Snapshot)> = None;
        let title = &observation.header.title;
        for (i, s) in observation.steps.iter().enumerate() {
            let n = i + 1;
            match progress.advance(n, s.outcome.as_ref().err().map(String::as_str)) {
                Added::Nothing => {}
                Added::Event(e) => events.push(e),
                Added::Error(e) => errors.push(e),
            }
            last_good.push(progress.last_good);
            if let Ok(text) = &s.outcome {
                let shown = Snapshot::from_json(text).expect("checked when the recording was read");
                let view = compose(
                    title,
                    (n, s.at_ms),
                    Some(&shown),
                    before.as_ref().map(|(m, b)| (*m, b)),
                    Vec::new(),
                    Vec::new(),
                );
                events.extend(change_event(&view));
                before = Some((n, shown));
            }
        }
        let mut timeline = Self {
            view: nothing_yet(&observation.header.title),
            observation,
            last_good,
            events,
            errors,
        };
        timeline.view = timeline.compose(0);
        timeline
    }

    /// The steps where something happened: a refresh that changed what
    /// it saw, answered again, or failed; in order. An observation has no
    /// captions, so these are what `]` and `[` jump between.
    pub fn eventful_steps(&self) -> std::collections::BTreeSet<usize> {
        self.events
            .iter()
            .map(|e| e.step)
            .chain(self.errors.iter().map(|e| e.step))
            .collect()
    }

    /// The recording.
    pub fn observation(&self) -> &Observation {
        &self.observation
    }

    /// The current step.
    pub fn step(&self) -> usize {
        self.view.step
    }

    /// The view of the current step.
    pub fn view(&self) -> &Snapshot {
        &self.view
    }

    /// Moves to step `n` (clamped to the last).
    pub fn goto(&mut self, n: usize) {
        let n = n.min(self.observation.len());
        if n != self.view.step {
            self.view = self.compose(n);
        }
    }

    /// The snapshot of refresh `good` (0: none), parsed from its line.
    fn snapshot_of(&self, good: usize) -> Option<Snapshot> {
        let step = self.observation.steps.get(good.checked_sub(1)?)?;
        let text = step.outcome.as_ref().ok()?;
        Some(Snapshot::from_json(text).expect("checked when the recording was read"))
    }

    fn compose(&self, n: usize) -> Snapshot {
        let shown = self.snapshot_of(self.last_good[n]);
        let before_step = n.checked_sub(1).map_or(0, |m| self.last_good[m]);
        let before = self.snapshot_of(before_step);
        let upto = |step: usize| step <= n;
        let events: Vec<EventSnapshot> = self
            .events
            .iter()
            .filter(|e| upto(e.step))
            .cloned()
            .collect();
        let errors: Vec<ErrorSnapshot> = self
            .errors
            .iter()
            .filter(|e| upto(e.step))
            .cloned()
            .collect();
        let mut view = compose(
            &self.observation.header.title,
            (n, self.observation.at_ms(n)),
            shown.as_ref(),
            before.as_ref().map(|b| (before_step, b)),
            tail(&events),
            tail(&errors),
        );
        view.total_steps = Some(self.observation.len());
        view
    }
}

impl SnapshotSource for ObservationTimeline {
    fn snapshot(&self, _bounds: &Bounds) -> Snapshot {
        self.view.clone()
    }
}

/// Whether `view`'s step is a failed refresh: it shows an older snapshot
/// (or none), and the title bar says `stale`.
pub fn is_stale(view: &Snapshot) -> bool {
    view.errors
        .last()
        .is_some_and(|e| e.step == view.step && e.code == REFRESH_FAILED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::snapshot::{BatchKind, BatchSnapshot, Fate, PartitionSnapshot};

    fn observed(hw: i64) -> Snapshot {
        let mut s = nothing_yet("observe 127.0.0.1:9092");
        s.unavailable.retain(|f| f != field::PARTITIONS);
        s.partitions.push(PartitionSnapshot {
            topic: "out".into(),
            config: Default::default(),
            partition: 0,
            leader: 1,
            leader_epoch: 0,
            isr: vec![1],
            log_start_offset: 0,
            high_watermark: hw,
            last_stable_offset: hw,
            log_end_offset: 0,
            replicas: Vec::new(),
            batch_count: hw as usize,
            batches: (0..hw)
                .map(|o| BatchSnapshot {
                    base_offset: o,
                    last_offset: o,
                    kind: BatchKind::Data,
                    control: None,
                    transactional_id: None,
                    producer_id: -1,
                    producer_epoch: -1,
                    base_sequence: -1,
                    leader_epoch: 0,
                    fate: Fate::Committed,
                    explanation: String::new(),
                    explanation_zh: String::new(),
                    records: Vec::new(),
                    compacted: 0,
                })
                .collect(),
        });
        s.unavailable.push(field::CLOCK_MS.into());
        s.unavailable.push(field::LOG_END_OFFSET.into());
        s
    }

    fn refreshes() -> Vec<Refreshed> {
        let ok = |at_ms, hw| Refreshed {
            at_ms,
            outcome: Ok(observed(hw)),
        };
        let failed = |at_ms| Refreshed {
            at_ms,
            outcome: Err("127.0.0.1:9092: cannot connect: Connection refused".into()),
        };
        vec![
            ok(0, 1),
            ok(1000, 2),
            failed(2000),
            failed(3000),
            ok(4000, 4),
        ]
    }

    #[test]
    fn a_live_session_and_its_recording_show_the_same_steps() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("obs.jsonl");
        let header = ObservationHeader::new(&["127.0.0.1:9092".into()], &[], &[], 1000);
        let writer = ObservationWriter::create(&path, &header).unwrap();
        let mut live = ObservedSession::new(header, Some(writer));
        let mut views = vec![live.view().clone()];
        for r in refreshes() {
            live.push(r).unwrap();
            views.push(live.view().clone());
        }
        let mut timeline = ObservationTimeline::new(Observation::load(&path).unwrap());
        // Back and forth: every step is its live view, whatever the path.
        for n in [5, 0, 3, 1, 4, 2, 5] {
            timeline.goto(n);
            let mut replayed = timeline.view().clone();
            assert_eq!(replayed.total_steps, Some(5));
            replayed.total_steps = None;
            assert_eq!(replayed, views[n], "step {n}");
        }
        let v = &views;
        assert_eq!(
            v[2].changes.partition("out-0").unwrap().high_watermark,
            Some((1, 2))
        );
        assert_eq!(v[2].changes.since_step, Some(1));
        assert_eq!(v[2].clock_ms, 1000);
        assert!(!v[2].lacks(field::CLOCK_MS));
        // A failed refresh keeps the last snapshot, stale, says so, and changes nothing.
        assert!(is_stale(&v[3]) && is_stale(&v[4]) && !is_stale(&v[5]));
        assert_eq!(v[3].partitions, v[2].partitions);
        assert!(v[3].changes.is_empty(), "{:?}", v[3].changes);
        assert_eq!(
            v[4].errors.last().unwrap().message,
            "refresh 4 failed, showing refresh 2 (stale): 127.0.0.1:9092: cannot connect: Connection refused"
        );
        // The refresh that answers again is compared with what was shown.
        let back = v[5].changes.partition("out-0").unwrap();
        assert_eq!(back.high_watermark, Some((2, 4)));
        assert_eq!(back.new_batches, [2, 3]);
        assert!(back.removed.is_empty());
        let texts: Vec<&str> = v[5].events.iter().map(|e| e.text.as_str()).collect();
        assert!(
            texts.contains(&"refresh 5: the cluster answers again after 2 failed refreshes"),
            "{texts:?}"
        );
        // What each refresh changed stays among the events after it (a
        // new user's review: live, it was gone at the next refresh).
        let changed = |v: &Snapshot, n: usize| {
            v.events
                .iter()
                .any(|e| e.step == n && e.text.starts_with("out-0@1 appended"))
        };
        assert!(
            changed(&v[2], 2) && changed(&v[4], 2) && changed(&v[5], 2),
            "{:?}",
            v[4].events
        );
        assert!(
            !v[4].events.iter().any(|e| e.step == 4),
            "a failed refresh changes nothing"
        );
        // Since the last refresh that answered (2), not the stale step 4.
        assert_eq!(v[5].changes.since_step, Some(2));
        // Step 1 has nothing to compare with: nothing was created or begun
        // then, only first seen (a new user's review: "out-0 created",
        // "tx begun: complete_abort").
        assert_eq!(
            v[1].changes.sentences,
            ["first seen: 1 partition, 0 transactions, 0 groups"]
        );
        assert!(v[1].changes.partition("out-0").is_none());
        assert_eq!(v[1].changes.since_step, None);
        // Before any answer, the partitions are unknown, not none.
        assert!(v[0].lacks(field::PARTITIONS));
        assert!(!v[1].lacks(field::PARTITIONS));
    }

    #[test]
    fn bad_lines_name_the_file_the_line_and_the_field() {
        let header = r#"{"mk_observation":1,"bootstrap":["h:1"],"interval_ms":1000}"#;
        let parse = |lines: &[&str]| {
            Observation::parse("o.jsonl", &format!("{header}\n{}\n", lines.join("\n")))
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        assert_eq!(parse(&[r#"{"at_ms":0,"error":"x"}"#]), Ok(()));
        assert_eq!(
            parse(&[r#"{"at_ms":5,"error":"x"}"#, r#"{"at_ms":4,"error":"x"}"#]),
            Err("o.jsonl:3: field at_ms: 4 is before the previous refresh's 5; refreshes are in time order".into())
        );
        assert_eq!(
            parse(&[r#"{"at_ms":0}"#]),
            Err("o.jsonl:2: field observed: missing (a refresh has observed or error)".into())
        );
        assert!(
            parse(&[r#"{"at_ms":0,"observed":{"step":0}}"#])
                .unwrap_err()
                .starts_with("o.jsonl:2: field observed: missing field")
        );
        assert_eq!(
            parse(&[r#"{"at_ms":-1,"error":"x"}"#]),
            Err("o.jsonl:2: field at_ms: expected a non-negative integer".into())
        );
        let slow = header.replace("1000", "0");
        assert_eq!(
            Observation::parse("o.jsonl", &slow)
                .unwrap_err()
                .to_string(),
            "o.jsonl:1: field interval_ms: 0 is not a refresh period: from 100 to 3600000 ms"
        );
        let v2 = header.replace("\"mk_observation\":1", "\"mk_observation\":2");
        assert!(
            Observation::parse("o.jsonl", &v2)
                .unwrap_err()
                .to_string()
                .contains("version 2")
        );
    }
}
