//! `mk-tui observe`'s arguments: the clap side of [`crate::observe`].
//! `--state` prints one snapshot and `--render` one frame, then exit (any
//! failure: one line, exit 2). Without either the observation is live
//! (docs/observe.md "Live"): the dashboard in a terminal, or one line per
//! refresh on standard output without one; it refreshes every `--interval` ms
//! and on `r`, each refresh is a step (recorded with `--record`), and a failed
//! refresh is that step's error while the observer keeps going.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::observe::{self, Options, live::Live};
use crate::session::SessionError;
use crate::session::observation::{
    DEFAULT_INTERVAL_MS, MAX_INTERVAL_MS, MIN_INTERVAL_MS, ObservationHeader, ObservationWriter,
    ObservedSession, is_stale,
};
use crate::ui::app::App;
use crate::ui::headless::{self, Format, Look};

/// The most refreshes `--refreshes` may ask for (a day at 100 ms).
const MAX_REFRESHES: usize = 864_000;

/// `--timeout`'s bounds, in ms: as `--interval`'s.
const MIN_TIMEOUT_MS: u64 = 100;
const MAX_TIMEOUT_MS: u64 = 3_600_000;

/// The options of `mk-tui observe` (its help is the `Command::Observe`
/// doc comment, which clap shows).
#[derive(Debug, Args)]
pub struct ObserveArgs {
    /// Brokers to ask first, HOST:PORT[,HOST:PORT…] (PLAINTEXT:// allowed).
    #[arg(long, value_name = "HOST:PORT,…", required = true)]
    pub bootstrap: String,
    /// A topic to observe (repeat for more; default: every non-internal topic).
    #[arg(long = "topic", value_name = "T")]
    pub topics: Vec<String>,
    /// A consumer group whose committed offsets to read (repeat for more;
    /// default: every group ListGroups lists).
    #[arg(long = "group", value_name = "G")]
    pub groups: Vec<String>,
    /// Print one snapshot as one JSON object (the keys of `mk-tui state`,
    /// and `unavailable`: the fields the protocol cannot fill), then exit.
    #[arg(long, conflicts_with = "render")]
    pub state: bool,
    /// Print one frame as `mk-tui render` draws it, then exit.
    #[arg(long)]
    pub render: bool,
    /// With --render: terminal size, COLSxROWS (default 120x36).
    #[arg(long, requires = "render")]
    pub size: Option<String>,
    /// With --render: text or ansi.
    #[arg(long, default_value = "text", requires = "render")]
    pub format: String,
    /// Live: refresh every MS milliseconds, from 100 to 3600000 (default
    /// 1000); `r` refreshes at once.
    #[arg(long, value_name = "MS", conflicts_with_all = ["state", "render"])]
    pub interval: Option<u64>,
    /// Live: stop refreshing after N refreshes (without a terminal, exit
    /// then; default: refresh until quit or a signal).
    #[arg(long, value_name = "N", conflicts_with_all = ["state", "render"])]
    pub refreshes: Option<usize>,
    /// Live: record each refresh to this observation recording (`mk-tui
    /// replay`, `render`, `state` read it). An existing FILE is refused
    /// unless --force is given.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["state", "render"])]
    pub record: Option<PathBuf>,
    /// With --record: replace FILE if it exists.
    #[arg(long, requires = "record")]
    pub force: bool,
    /// The longest one observation (and each live refresh) may take, in
    /// milliseconds, from 100 to 3600000 (default 30000); what the brokers
    /// could not give in time is listed under `unavailable`.
    #[arg(long, value_name = "MS")]
    pub timeout: Option<u64>,
}

impl ObserveArgs {
    /// True for the live observer (neither --state nor --render).
    pub fn is_live(&self) -> bool {
        !self.state && !self.render
    }
}

/// `names` without repeats, in the order first given: `--topic out
/// --topic out` observes `out` once (each partition was listed twice, and
/// the second copy's empty fetch emptied the consumers' lists).
fn first_of_each(names: &[String]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    names
        .iter()
        .filter(|n| seen.insert(n.as_str()))
        .cloned()
        .collect()
}

/// Runs `mk-tui observe`: once (`--state`, `--render`), or live, in the
/// dashboard when `tty` (with the mouse unless `!mouse`), else printing a
/// line per refresh.
pub fn run(args: ObserveArgs, look: Look, tty: bool, mouse: bool) -> Result<(), SessionError> {
    let timeout = args.timeout.unwrap_or(observe::DEFAULT_TIMEOUT_MS);
    if !(MIN_TIMEOUT_MS..=MAX_TIMEOUT_MS).contains(&timeout) {
        return Err(SessionError::flag(
            format!("--timeout {timeout}"),
            format!("expected milliseconds from {MIN_TIMEOUT_MS} to {MAX_TIMEOUT_MS}"),
        ));
    }
    let options = Options {
        bootstrap: observe::bootstrap::parse(&args.bootstrap)?,
        topics: first_of_each(&args.topics),
        groups: first_of_each(&args.groups),
        timeout: Duration::from_millis(timeout),
    };
    if args.size.is_some() && !args.render {
        // clap's `requires` counts a flag's default as given.
        return Err(SessionError::flag(
            "--size",
            "only with --render (a live dashboard takes the terminal's size)",
        ));
    }
    if !args.is_live() {
        return once(&args, options, look);
    }
    let interval = args.interval.unwrap_or(DEFAULT_INTERVAL_MS);
    if !(MIN_INTERVAL_MS..=MAX_INTERVAL_MS).contains(&interval) {
        return Err(SessionError::flag(
            format!("--interval {interval}"),
            format!("expected milliseconds from {MIN_INTERVAL_MS} to {MAX_INTERVAL_MS}"),
        ));
    }
    if let Some(n) = args.refreshes
        && !(1..=MAX_REFRESHES).contains(&n)
    {
        return Err(SessionError::flag(
            format!("--refreshes {n}"),
            format!("expected a number of refreshes from 1 to {MAX_REFRESHES}"),
        ));
    }
    let header = ObservationHeader::new(
        &options.bootstrap,
        &options.topics,
        &options.groups,
        interval,
    );
    let writer = match &args.record {
        Some(path) => Some(open_record(path, args.force, &header)?),
        None => None,
    };
    let session = ObservedSession::new(header, writer);
    let refresher = Live::start(options, Duration::from_millis(interval), args.refreshes);
    if tty {
        let app = App::observing(
            session,
            Box::new(refresher),
            look.layout,
            look.lang,
            look.theme,
        );
        super::dashboard(app, mouse)
    } else {
        headless_loop(session, &refresher)
    }
}

/// `--state` or `--render`: one observation, printed.
fn once(args: &ObserveArgs, options: Options, look: Look) -> Result<(), SessionError> {
    let format = match args.format.as_str() {
        "text" => Format::Text,
        "ansi" => Format::Ansi,
        other => {
            return Err(SessionError::flag(
                format!("--format {other:?}"),
                "expected text or ansi",
            ));
        }
    };
    let (cols, rows) = match args.size.as_deref() {
        Some(s) => super::parse_size(s)?,
        None => (120, 36),
    };
    let snapshot = observe::observe(&options)?;
    let text = if args.render {
        headless::render_saved_in(snapshot, cols, rows, format, look)?
    } else {
        format!("{}\n", snapshot.to_json())
    };
    super::emit(format_args!("{text}"));
    Ok(())
}

/// Creates the recording: refused if it exists without `--force` (and
/// then created only if still absent), its header written at once.
fn open_record(
    path: &std::path::Path,
    force: bool,
    header: &ObservationHeader,
) -> Result<ObservationWriter, SessionError> {
    let io = |e: std::io::Error| SessionError::io(path, e);
    if !force {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => SessionError::path(
                    path,
                    "already exists; --record does not replace a file (give --force to replace it)",
                ),
                _ => io(e),
            })?;
    }
    ObservationWriter::create(path, header).map_err(io)
}

/// Without a terminal: one line per refresh on standard output, until the
/// last refresh (`--refreshes`) or a signal. A failed refresh is a line,
/// not the end; a recording that cannot be written ends it (exit 2), and
/// so does a last refresh that failed (exit 2 after the lines).
fn headless_loop(mut session: ObservedSession, refresher: &Live) -> Result<(), SessionError> {
    while let Some(refreshed) = refresher.recv() {
        session.push(refreshed)?;
        let view = session.view();
        let n = view.step;
        if is_stale(view) {
            let message = view.errors.last().map_or("", |e| e.message.as_str());
            super::emit(format_args!("{message}\n"));
        } else {
            let partitions = view.partitions.len();
            let plural = if partitions == 1 { "" } else { "s" };
            let changes = if view.changes.sentences.is_empty() {
                "nothing changed".to_string()
            } else {
                view.changes.sentences.join("; ")
            };
            super::emit(format_args!(
                "refresh {n}: ok, {partitions} partition{plural}: {changes}\n"
            ));
        }
        // A recovery is an event: say it too (what changed is on the line
        // above already).
        let changes = crate::session::observation::change_event(view);
        for e in view.events.iter().filter(|e| e.step == n) {
            if Some(e) != changes.as_ref() {
                super::emit(format_args!("{}\n", e.text));
            }
        }
    }
    // A script must tell a run whose last refresh failed from one that
    // observed: exit 2 with the cause, as `--state` does (a new user's
    // review: every refresh failing exited 0).
    let view = session.view();
    if view.step > 0 && is_stale(view) {
        let message = view.errors.last().map_or("", |e| e.message.as_str());
        return Err(SessionError::RefreshFailed(message.to_string()));
    }
    Ok(())
}
