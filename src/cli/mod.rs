//! The clap front end (SPEC §2 `cli`): `mk-tui` runs the demo cluster;
//! `state` and `check` are the headless interface of SPEC §5. Every error is
//! one line naming what and where, and exits with code 2.

use std::path::{Path, PathBuf};

use clap::{ArgGroup, Parser, Subcommand};

pub use arg_error::argument_error;

mod arg_error;
mod lesson_page;
mod observation;
#[cfg(feature = "serve")]
mod observe;
mod out_file;
#[cfg(feature = "serve")]
mod serve;

use std::io::IsTerminal;

use crate::demo;
use crate::engine::config::Rules;
use crate::session::recording::RecordingError;
use crate::session::recording::{Header, MAX_TERMINAL_SIDE, Step, TerminalSize};
use crate::session::snapshot::Bounds;
use crate::session::snapshot::source::{apply_all, with_changes};
use crate::session::snapshot::text as state_text;
use crate::session::{Driver, Recording, RecordingWriter, SessionError, Snapshot};
use crate::ui::{
    self,
    app::App,
    headless::{self, Format},
    i18n::Lang,
    layout::{self, Layout},
    theme::{Palette, Theme},
};

/// Writes to standard output. When the reader has gone away (`mk-tui render
/// --all | head`), the program ends quietly with success, as Unix filters do,
/// instead of panicking the way `print!` would.
fn emit(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("mk-tui: standard output: {e}");
        std::process::exit(2);
    }
}

macro_rules! out {
    ($($arg:tt)*) => { emit(format_args!($($arg)*)) };
}

macro_rules! outln {
    ($($arg:tt)*) => { emit(format_args!("{}\n", format_args!($($arg)*))) };
}

/// A terminal dashboard for the internals of an embedded MiniKafka cluster.
///
/// Without a command, mk-tui starts the dashboard on a built-in demo cluster
/// in a temporary data directory (when standard output is not a terminal, it
/// prints the demo cluster's state instead).
#[derive(Debug, Parser)]
#[command(name = "mk-tui", version, about)]
pub struct Cli {
    /// Keep the cluster's data here instead of in a temporary directory.
    /// Reopening a directory that holds data shows what recovery found.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Engine rules for the dashboard's cluster: minikafka (the book,
    /// default) or kafka. A recording names its own rules, and a reopened
    /// --data-dir keeps the ones it was made with (others are refused).
    #[arg(long)]
    pub rules: Option<String>,
    /// Labels and captions: en or zh.
    #[arg(long, default_value = "en", global = true)]
    pub lang: String,
    /// Colours: dark (the terminal's own ground), light (black on white) or
    /// high-contrast (bold and bright on black). NO_COLOR=1 still turns
    /// colour off.
    #[arg(long, default_value = "dark", global = true)]
    pub theme: String,
    /// Layout: a built-in name, a file in layouts/, or a path (the list of
    /// built-ins is made from `layout::BUILTIN_NAMES`, so it names each).
    #[arg(long, global = true, help = layout_help())]
    pub layout: Option<String>,
    /// Write the session's actions to this recording as they happen. An
    /// existing FILE is refused unless --force is given.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// With --record: replace FILE if it exists.
    #[arg(long, requires = "record")]
    pub force: bool,
    /// Leave the mouse to the terminal (its own text selection) instead of
    /// clicking to focus panes and scrolling them with the wheel.
    #[arg(long, global = true)]
    pub no_mouse: bool,
    /// Open the Kafka listeners beside the dashboard (docs/kafka-protocol.md):
    /// broker N on ADDR's port + N - 1. Real clients then drive the same
    /// cluster as the keys; unauthenticated, loopback unless --allow-remote.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// With --listen: allow a non-loopback address.
    #[arg(long, requires = "listen")]
    pub allow_remote: bool,
    /// With --listen: replicate every MS milliseconds by itself (default:
    /// never; `r` replicates, and an acks=all produce waits for it).
    #[arg(long, value_name = "MS", requires = "listen")]
    pub auto_replicate: Option<u64>,
    /// With --listen: create a topic a client's Metadata request asks for
    /// (Kafka's `auto.create.topics.enable`; off unless given).
    #[arg(long, requires = "listen")]
    pub auto_create_topics: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `--layout`'s help line (every command shows it: the option is global).
fn layout_help() -> String {
    format!(
        "Layout: a built-in name ({}; --listen defaults to clients), a file in layouts/, or a path",
        layout::BUILTIN_NAMES.join(", ")
    )
}

/// Headless commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the state after step N of a recording (default: the last step)
    /// as one JSON object; or, with only --data-dir, the state of an
    /// existing data directory, opened on a private copy (a directory a
    /// running mk-tui holds is refused: stop it first, as its files are
    /// still being written).
    State {
        /// The recording (JSON Lines).
        file: Option<PathBuf>,
        /// The step (0 is the fresh cluster).
        #[arg(long)]
        step: Option<usize>,
        /// Apply the recording in DIR (empty or absent) and leave the data
        /// there; without FILE, read the existing directory DIR.
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
        /// Rules for an existing data directory: minikafka or kafka
        /// (default: the ones it was made with, kept in its cluster.json,
        /// which other rules contradict; without that file, minikafka).
        #[arg(long)]
        rules: Option<String>,
    },
    /// Check recordings (each is read and its cluster built) and layouts
    /// (files ending in .json under a layouts folder, or named layout files).
    Check {
        /// Recording or layout files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Start live where a chapter's experiment starts: its lesson's
    /// cluster with nothing on it, and a caption naming the chapter's keys
    /// (ch08: one broker, topic `out` with one partition and one replica;
    /// docs/lectures.md lists the keystrokes).
    Lab {
        /// The lab: ch08.
        name: String,
        /// Write the lab's steps to this recording as they happen (each
        /// with the key guide's caption); `mk-tui replay FILE` shows it.
        /// An existing FILE is refused unless --force is given.
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        /// With --record: replace FILE if it exists.
        #[arg(long, requires = "record")]
        force: bool,
    },
    /// Replay a recording in the dashboard: space/→ next step, ← previous,
    /// p play/pause at the recorded pace.
    Replay {
        /// The recording.
        file: PathBuf,
        /// Branching (`b`) records the new live session here: the
        /// replay's steps up to the branch, then every step after it. An
        /// existing FILE is refused unless --force is given.
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        /// With --record: replace FILE if it exists.
        #[arg(long, requires = "record")]
        force: bool,
        /// Branching (`b`) opens the Kafka listeners beside the new live
        /// session (see `mk-tui --listen`).
        #[arg(long, value_name = "ADDR")]
        listen: Option<String>,
        /// With --listen: allow a non-loopback address.
        #[arg(long, requires = "listen")]
        allow_remote: bool,
        /// With --listen: replicate every MS milliseconds by itself.
        #[arg(long, value_name = "MS", requires = "listen")]
        auto_replicate: Option<u64>,
        /// With --listen: create a topic a client's Metadata request asks
        /// for (Kafka's `auto.create.topics.enable`; off unless given).
        #[arg(long, requires = "listen")]
        auto_create_topics: bool,
    },
    /// Print frames of a recording exactly as the dashboard draws them; or,
    /// with --state, the frame of a state saved by `mk-tui state`.
    // One of the two, named together when neither is given.
    #[command(group(ArgGroup::new("input").required(true).args(["file", "state"])))]
    Render {
        /// The recording.
        file: Option<PathBuf>,
        /// A state saved by `mk-tui state` (JSON) to draw instead.
        #[arg(long, value_name = "FILE.json", conflicts_with_all = ["step", "all"])]
        state: Option<PathBuf>,
        /// The step to draw (default: the last).
        #[arg(long, conflicts_with = "all")]
        step: Option<usize>,
        /// Draw every step from 0 to the last.
        #[arg(long)]
        all: bool,
        /// Terminal size, COLSxROWS (default: the recording's, else 120x36).
        #[arg(long)]
        size: Option<String>,
        /// text or ansi.
        #[arg(long, default_value = "text")]
        format: String,
        /// Draw presentation mode (`P`): two panes above a large caption.
        #[arg(long, conflicts_with = "state")]
        present: bool,
    },
    /// Serve the cluster to real Kafka clients on loopback (docs/kafka-protocol.md).
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
    /// Observe a real Kafka cluster, read-only: live in the dashboard
    /// (refreshing every --interval ms and on r; --record keeps each
    /// refresh for replay; without a terminal, one line per refresh), or
    /// one snapshot (--state) or one frame (--render).
    ///
    /// It sends only reads (ApiVersions, Metadata, ListOffsets, Fetch, and
    /// the admin reads: ListGroups, OffsetFetch, the transaction APIs,
    /// DescribeLogDirs): it never writes, commits or joins a group.
    /// Plaintext only: authentication
    /// (SASL) and TLS are out of scope, and SASL_*:// or SSL:// bootstrap
    /// addresses are refused. docs/observe.md lists which fields the
    /// protocol fills; the others are listed under "unavailable".
    #[cfg(feature = "serve")]
    Observe(observe::ObserveArgs),
    /// Export a recording as an asciinema cast (asciicast v2), or as a
    /// lesson page (--html): the cast in asciinema-player, its captions as
    /// chapters in English and Chinese, each with its state
    /// (docs/lesson-page.md).
    // One of the two, named together when neither is given.
    #[command(group(ArgGroup::new("output").required(true).args(["cast", "html"])))]
    Export {
        /// The recording.
        file: PathBuf,
        /// The .cast file to write; an existing OUT is refused unless
        /// --force is given.
        #[arg(long, value_name = "OUT")]
        cast: Option<PathBuf>,
        /// Write a self-contained lesson page into DIR (absent or empty),
        /// which works from file:// with no network.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["from", "to"])]
        html: Option<PathBuf>,
        /// Replace an existing --cast OUT; with --html, write into DIR even
        /// if it is not empty (the page's files are replaced, others kept).
        #[arg(long)]
        force: bool,
        /// Terminal size, COLSxROWS (default: the recording's, else 120x36).
        #[arg(long)]
        size: Option<String>,
        /// The first step shown (its state is the first frame; default 0).
        #[arg(long, value_name = "N")]
        from: Option<usize>,
        /// The last step shown (default: the recording's last).
        #[arg(long, value_name = "M")]
        to: Option<usize>,
    },
}

/// Runs the command line; the error is the one line to print.
pub fn run(cli: Cli) -> Result<(), SessionError> {
    // The dashboard and the server wait for signals in their own loops;
    // every other path gets a watcher that cleans up and exits.
    let tty = std::io::stdout().is_terminal();
    let looping = match &cli.command {
        None => tty,
        Some(Command::Replay { .. } | Command::Lab { .. }) => true,
        #[cfg(feature = "serve")]
        Some(Command::Serve(_)) => true,
        // The live observer's dashboard waits for them as the live one does.
        #[cfg(feature = "serve")]
        Some(Command::Observe(o)) => o.is_live() && tty,
        Some(_) => false,
    };
    if !looping {
        ui::signals::exit_cleanly_on_signal();
    }
    refuse_unused(&cli)?;
    // Given or not: a reopened data directory keeps the rules it was made
    // with, and refuses other ones (Driver::open_in_place).
    let rules: Option<Rules> = cli
        .rules
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e| SessionError::flag("--rules", e))?;
    let lang: Lang = cli
        .lang
        .parse()
        .map_err(|e| SessionError::flag("--lang", e))?;
    let palette: Palette = cli
        .theme
        .parse()
        .map_err(|e| SessionError::flag("--theme", e))?;
    let theme = Theme::from_env(palette);
    let layout_spec = cli.layout.clone();
    let layout_for = |recording_layout: Option<&str>| -> Result<Layout, SessionError> {
        match layout_spec.as_deref().or(recording_layout) {
            Some(spec) => Ok(layout::load(spec)?),
            None => Ok(layout::builtin_default()),
        }
    };
    match cli.command {
        None => {
            let record = cli.record.map(|path| Record {
                path,
                force: cli.force,
            });
            if let Some(r) = &record {
                r.refuse_existing()?;
            }
            let listen = cli.listen.map(|listen| Listen {
                listen,
                allow_remote: cli.allow_remote,
                auto_replicate_ms: cli.auto_replicate.unwrap_or(0),
                auto_create_topics: cli.auto_create_topics,
            });
            // The layout is checked whatever standard output is, so that a
            // typo is refused the same way in a pipe, where the state is
            // printed instead and the layout would otherwise go unread. The
            // clients pane is the point of --listen: its layout unless
            // another is asked for.
            let layout = match (&listen, layout_spec.is_none()) {
                (Some(_), true) => layout::builtin("clients").expect("built in"),
                _ => layout_for(None)?,
            };
            if let Some(l) = &listen {
                l.check(record.as_ref(), cli.data_dir.as_deref())?;
                if !tty {
                    return Err(SessionError::flag(
                        "--listen",
                        "the dashboard needs a terminal; `mk-tui serve` runs the listeners headless",
                    ));
                }
            }
            if tty {
                run_live(
                    cli.data_dir,
                    rules,
                    record,
                    listen,
                    (layout, lang, theme),
                    !cli.no_mouse,
                )
            } else {
                run_demo(cli.data_dir, rules, record)
            }
        }
        Some(Command::Lab {
            name,
            record,
            force,
        }) => {
            let Some(lab) = crate::lab::Lab::named(&name) else {
                return Err(SessionError::flag(
                    format!("lab {name}"),
                    format!("no such lab; the labs are {}", crate::lab::Lab::names()),
                ));
            };
            // As the dashboard's --record: refused before anything starts.
            let record = record.map(|path| Record { path, force });
            if let Some(r) = &record {
                r.refuse_existing()?;
            }
            if !tty {
                return Err(SessionError::flag(
                    format!("lab {name}"),
                    format!(
                        "standard output is not a terminal; `mk-tui state {} --step 0` prints where it starts",
                        lab.file
                    ),
                ));
            }
            let recording = lab
                .recording()
                .map_err(|e| SessionError::flag(format!("lab {name}"), e))?;
            let layout = layout_for(recording.header.layout.as_deref())?;
            let driver = Driver::new(&recording.header, None)?;
            let mut header = recording.header;
            header.terminal = this_terminal().or(header.terminal);
            let recorder = record.map(|r| r.open(&header, &[])).transpose()?;
            let app =
                App::live(driver, header, recorder, layout, lang, theme).with_guide(lab.guide());
            dashboard(app, !cli.no_mouse)
        }
        Some(Command::Replay {
            file,
            record,
            force,
            listen,
            allow_remote,
            auto_replicate,
            auto_create_topics,
        }) => {
            // The file is read first: its own error is the one to fix.
            let loaded = match observation::load(&file) {
                Some(observation) => Ok(observation?),
                None => Err(Recording::load(&file)?),
            };
            // A replay draws into a terminal; into a pipe or a file it would
            // leave the terminal raw and write escape codes nobody reads.
            if !tty {
                return Err(SessionError::flag(
                    format!("replay {}", file.display()),
                    format!(
                        "standard output is not a terminal; `mk-tui render {} --all` prints its frames",
                        file.display()
                    ),
                ));
            }
            // Ok: an observation; Err: a recording (both read).
            let recording = match loaded {
                Err(recording) => recording,
                Ok(observation) => {
                    if record.is_some() || listen.is_some() {
                        return Err(observation::refuse(
                            &file,
                            "be branched (--record, --listen)",
                            "it holds what a cluster showed, not actions to run",
                        ));
                    }
                    let look = headless::Look {
                        layout: layout_for(observation.header.layout.as_deref())?,
                        lang,
                        theme,
                        present: false,
                    };
                    return dashboard(observation::replay(observation, look), !cli.no_mouse);
                }
            };
            let layout = layout_for(recording.header.layout.as_deref())?;
            let record = record.map(|path| Record { path, force });
            if let Some(r) = &record {
                r.refuse_existing()?;
            }
            let mut app = App::replay(recording, layout, lang, theme)
                .map_err(|e| e.in_(format!("{}:1", file.display())))?;
            if let Some(l) = listen.map(|listen| Listen {
                listen,
                allow_remote,
                auto_replicate_ms: auto_replicate.unwrap_or(0),
                auto_create_topics,
            }) {
                l.check(None, None)?;
                app = app.with_branch_listeners(Box::new(move |driver| l.open(driver, lang)));
            }
            if let Some(r) = record {
                app =
                    app.with_branch_recorder(Box::new(move |header, steps| r.open(header, steps)));
            }
            dashboard(app, !cli.no_mouse)
        }
        Some(Command::Render {
            file,
            state,
            step,
            all,
            size,
            format,
            present,
        }) => {
            let format = match format.as_str() {
                "text" => Format::Text,
                "ansi" => Format::Ansi,
                other => {
                    return Err(SessionError::flag(
                        format!("--format {other:?}"),
                        "expected text or ansi",
                    ));
                }
            };
            if let Some(path) = state {
                let snapshot = load_state(&path)?;
                let (cols, rows) = match size.as_deref() {
                    Some(s) => parse_size(s)?,
                    None => (120, 36),
                };
                let look = headless::Look {
                    layout: layout_for(None)?,
                    lang,
                    theme,
                    present: false,
                };
                let frame = headless::render_saved_in(snapshot, cols, rows, format, look)?;
                out!("{frame}");
                return Ok(());
            }
            let file = file.expect("clap requires FILE without --state");
            if let Some(observation) = observation::load(&file) {
                let observation = observation?;
                let look = headless::Look {
                    layout: layout_for(observation.header.layout.as_deref())?,
                    lang,
                    theme,
                    present: false,
                };
                let frames = observation::render(
                    &file,
                    observation,
                    (step, all),
                    size.as_deref(),
                    format,
                    look,
                )?;
                for (step, frame) in frames {
                    if all {
                        outln!("── step {step} ──");
                    }
                    out!("{frame}");
                }
                return Ok(());
            }
            let recording = Recording::load(&file)?;
            let layout = layout_for(recording.header.layout.as_deref())?;
            let (cols, rows) = size_of(size.as_deref(), &recording)?;
            let last = recording.steps.len();
            let steps: Vec<usize> = match (step, all) {
                (_, true) => (0..=last).collect(),
                (Some(s), false) if s > last => {
                    return Err(SessionError::path(
                        &file,
                        format!("--step {s} is past the last step, {last}"),
                    ));
                }
                (Some(s), false) => vec![s],
                (None, false) => vec![last],
            };
            let look = headless::Look {
                layout,
                lang,
                theme,
                present,
            };
            let frames = headless::render_in(recording, &steps, cols, rows, format, look)
                .map_err(|e| e.in_(format!("{}:1", file.display())))?;
            for (step, frame) in steps.iter().zip(frames) {
                if all {
                    outln!("── step {step} ──");
                }
                out!("{frame}");
            }
            Ok(())
        }
        #[cfg(feature = "serve")]
        Some(Command::Serve(args)) => serve::run(args),
        #[cfg(feature = "serve")]
        Some(Command::Observe(args)) => {
            let look = headless::Look {
                layout: layout_for(None)?,
                lang,
                theme,
                present: false,
            };
            observe::run(args, look, tty, !cli.no_mouse)
        }
        Some(Command::Export {
            file,
            cast,
            html,
            force,
            size,
            from,
            to,
        }) => {
            if let Some(dir) = html {
                if observation::load(&file).is_some() {
                    return Err(SessionError::path(
                        &file,
                        "--html: an observation has no captions to make chapters of; export it with --cast",
                    ));
                }
                let recording = Recording::load(&file)?;
                let look = headless::Look {
                    layout: layout_for(recording.header.layout.as_deref())?,
                    lang,
                    theme,
                    present: false,
                };
                let size = size_of(size.as_deref(), &recording)?;
                let args = lesson_page::PageArgs {
                    file: &file,
                    dir: &dir,
                    force,
                    size,
                    look,
                };
                return lesson_page::write(recording, args);
            }
            let cast = out_file::OutFile {
                path: cast.expect("clap requires --cast without --html"),
                force,
            };
            cast.refuse_existing()?;
            if let Some(observation) = observation::load(&file) {
                let observation = observation?;
                let look = headless::Look {
                    layout: layout_for(observation.header.layout.as_deref())?,
                    lang,
                    theme,
                    present: false,
                };
                let out =
                    observation::export(&file, observation, (from, to), size.as_deref(), look)?;
                return cast.write(&out);
            }
            let recording = Recording::load(&file)?;
            let layout = layout_for(recording.header.layout.as_deref())?;
            let (cols, rows) = size_of(size.as_deref(), &recording)?;
            let last = recording.steps.len();
            let (from, to) = (from.unwrap_or(0), to.unwrap_or(last));
            if from > to || to > last {
                return Err(SessionError::path(
                    &file,
                    format!(
                        "--from {from} --to {to}: expected 0 <= from <= to <= {last}, the last step"
                    ),
                ));
            }
            let mut out = Vec::new();
            let look = headless::Look {
                layout,
                lang,
                theme,
                present: false,
            };
            headless::export_cast_in(recording, cols, rows, look, (from, to), &mut out)
                .map_err(|e| e.in_(format!("{}:1", file.display())))?;
            cast.write(&out)
        }
        Some(Command::State {
            file,
            step,
            data_dir,
            rules,
        }) => {
            let state = match (file, data_dir) {
                (Some(file), dir) => match observation::load(&file) {
                    Some(o) => observation::state(&file, o?, step, dir.as_deref())?,
                    None => state_of_recording(&file, step, dir.as_deref())?,
                },
                (None, Some(dir)) => {
                    let rules: Option<Rules> = rules
                        .as_deref()
                        .map(str::parse)
                        .transpose()
                        .map_err(|e| SessionError::flag("--rules", e))?;
                    Snapshot::of(&Driver::open_copy(&dir, rules)?)
                }
                (None, None) => {
                    return Err(SessionError::flag(
                        "state",
                        "give a recording FILE or --data-dir DIR",
                    ));
                }
            };
            outln!("{}", state.to_json());
            Ok(())
        }
        Some(Command::Check { files }) => {
            let mut failed = Vec::new();
            for file in &files {
                let is_layout = file.extension().is_some_and(|e| e == "json");
                if is_layout {
                    match layout::load(&file.display().to_string()) {
                        Ok(l) => outln!(
                            "{}: ok (layout {}, {} panes)",
                            file.display(),
                            l.name,
                            l.panes().len()
                        ),
                        Err(e) => failed.push(e.into()),
                    }
                    continue;
                }
                match check(file) {
                    Ok(steps) => outln!("{}: ok ({steps} steps)", file.display()),
                    Err(e) => failed.push(e),
                }
            }
            if failed.is_empty() {
                Ok(())
            } else {
                Err(SessionError::Several(failed))
            }
        }
    }
}

/// The state after `step` (default: the last) of the recording in `file`.
pub fn state_of_recording(
    file: &Path,
    step: Option<usize>,
    data_dir: Option<&Path>,
) -> Result<Snapshot, SessionError> {
    let recording = Recording::load(file)?;
    let last = recording.steps.len();
    let target = step.unwrap_or(last);
    if target > last {
        return Err(SessionError::path(
            file,
            format!("--step {target} is past the last step, {last}"),
        ));
    }
    let header_error = |e: SessionError| e.in_(format!("{}:1", file.display()));
    if data_dir.is_some() {
        // Build the cluster once in a temporary directory first, so that a
        // header the engine refuses leaves DIR as it was (SPEC §5).
        Driver::new(&recording.header, None).map_err(header_error)?;
    }
    let mut driver = match data_dir {
        // The header is fine: what fails now is about DIR.
        Some(_) => Driver::new(&recording.header, data_dir)?,
        None => Driver::new(&recording.header, None).map_err(header_error)?,
    };
    let mut before = None;
    for (i, s) in recording.steps[..target].iter().enumerate() {
        if i + 1 == target {
            before = Some(Snapshot::of(&driver));
            // The state JSON's `moment_of_death` is read in full, as the
            // rest of it (docs/recording-format.md).
            driver.set_moment_bounds(Bounds::FULL);
        }
        driver.apply(&s.action);
    }
    let mut snapshot = with_changes(&driver, before.as_ref(), Snapshot::of(&driver));
    snapshot.title = recording.header.title.clone();
    snapshot.total_steps = Some(last);
    snapshot.captioned_steps = crate::session::snapshot::source::captioned_steps(&recording);
    snapshot.caption = target
        .checked_sub(1)
        .and_then(|i| recording.steps[i].caption.clone());
    Ok(snapshot)
}

/// A state saved by `mk-tui state`: one JSON object. A file that is not one
/// is refused with its name and the line and column serde found wrong.
pub fn load_state(path: &Path) -> Result<Snapshot, SessionError> {
    let text = std::fs::read_to_string(path).map_err(|e| SessionError::io(path, e))?;
    // serde_json's line is 0 only for an I/O error, which a string cannot
    // give: the position is always there.
    Snapshot::from_json(&text).map_err(|e| {
        RecordingError {
            file: path.display().to_string(),
            line: e.line(),
            column: Some(e.column()),
            message: format!("not a state written by `mk-tui state`: {e}"),
        }
        .into()
    })
}

/// Checks one recording; returns its number of steps.
pub fn check(file: &Path) -> Result<usize, SessionError> {
    if let Some(observation) = observation::load(file) {
        return Ok(observation?.len());
    }
    let recording = Recording::load(file)?;
    Driver::new(&recording.header, None).map_err(|e| e.in_(format!("{}:1", file.display())))?;
    Ok(recording.steps.len())
}

/// `COLSxROWS`, or the recording's terminal size, or 120x36.
fn size_of(size: Option<&str>, recording: &Recording) -> Result<(u16, u16), SessionError> {
    match size {
        Some(s) => parse_size(s),
        None => Ok(recording
            .header
            .terminal
            .map_or((120, 36), |t| (t.cols, t.rows))),
    }
}

/// `COLSxROWS`, each side from 1 to [`MAX_TERMINAL_SIDE`].
fn parse_size(s: &str) -> Result<(u16, u16), SessionError> {
    let parsed = s
        .split_once(['x', 'X'])
        .and_then(|(c, r)| Some((c.parse().ok()?, r.parse().ok()?)));
    let side = 1..=MAX_TERMINAL_SIDE;
    parsed
        .filter(|(c, r): &(u16, u16)| side.contains(c) && side.contains(r))
        .ok_or_else(|| {
            SessionError::flag(
                format!("--size {s:?}"),
                format!("expected COLSxROWS, like 120x36, each from 1 to {MAX_TERMINAL_SIDE}"),
            )
        })
}

/// `--record FILE [--force]`: where a session is recorded.
struct Record {
    path: PathBuf,
    force: bool,
}

impl Record {
    /// Refuses an existing file unless `--force`, before anything is
    /// written anywhere (the data directory included).
    fn refuse_existing(&self) -> Result<(), SessionError> {
        if !self.force && std::fs::symlink_metadata(&self.path).is_ok() {
            return Err(self.exists());
        }
        Ok(())
    }

    fn exists(&self) -> SessionError {
        SessionError::path(
            &self.path,
            "already exists; --record does not replace a file (give --force to replace it)",
        )
    }

    /// Creates the recording with `header` and the steps already applied.
    /// Without `--force` the file is created only if it is still absent,
    /// so a file that appeared since [`Record::refuse_existing`] is kept.
    fn open(&self, header: &Header, applied: &[Step]) -> Result<RecordingWriter, SessionError> {
        let io = |e: std::io::Error| SessionError::io(&self.path, e);
        if !self.force {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&self.path)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => self.exists(),
                    _ => io(e),
                })?;
        }
        let mut w = RecordingWriter::create(&self.path, header).map_err(io)?;
        for step in applied {
            w.append(step).map_err(io)?;
        }
        Ok(w)
    }
}

/// The session `mk-tui` starts: the demo cluster with the demo's steps
/// applied, or a data directory that holds data reopened in place (no
/// steps). Returns the driver, the header a recording of it starts with,
/// and the steps applied.
/// The driver of a live session, its header, the steps already applied,
/// and the frame snapshot before the last of them (what it changed).
type Session = (Driver, Header, Vec<Step>, Option<Snapshot>);

fn start_session(data_dir: Option<&Path>, rules: Option<Rules>) -> Result<Session, SessionError> {
    let reopen = data_dir.is_some_and(|d| d.read_dir().is_ok_and(|mut e| e.next().is_some()));
    let mut demo = demo::recording();
    demo.header.rules = rules.unwrap_or_default().name().to_string();
    match data_dir {
        Some(dir) if reopen => {
            // As the directory was made (its cluster.json); `rules`, if
            // given, must agree.
            let driver = Driver::open_in_place(dir, rules)?;
            demo.header.rules = driver.rules().to_string();
            let mut header = demo.header;
            header.title = format!("{} (reopened)", dir.display());
            Ok((driver, header, Vec::new(), None))
        }
        _ => {
            let mut driver = Driver::new(&demo.header, data_dir)?;
            let before = apply_all(&mut driver, demo.steps.iter().map(|s| &s.action));
            Ok((driver, demo.header, demo.steps, before))
        }
    }
}

/// The live dashboard on the demo cluster (or a reopened data directory),
/// with the Kafka listeners open beside it if asked.
fn run_live(
    data_dir: Option<PathBuf>,
    rules: Option<Rules>,
    record: Option<Record>,
    listen: Option<Listen>,
    (layout, lang, theme): (Layout, Lang, Theme),
    mouse: bool,
) -> Result<(), SessionError> {
    let (driver, mut header, applied, _) = start_session(data_dir.as_deref(), rules)?;
    header.terminal = this_terminal().or(header.terminal);
    let listeners = listen.map(|l| l.open(&driver, lang)).transpose()?;
    let recorder = record.map(|r| r.open(&header, &applied)).transpose()?;
    // The demo's own steps built the cluster: the first frame lists none
    // of their events and no change (no `before`), so the Events pane
    // starts clean.
    let mut app = App::live(driver, header, recorder, layout, lang, theme)
        .with_history(applied)
        .with_clean_events();
    if let Some((listeners, said)) = listeners {
        app = app.with_listeners(listeners);
        app.status = Some(ui::app::Status {
            kind: ui::app::StatusKind::Ok,
            text: said,
        });
    }
    dashboard(app, mouse)
}

/// A recording reads well at the size it was made in
/// (docs/recording-format.md, `terminal`): this terminal's, not the demo's
/// or the lesson's. None without a size a recording can hold (not a
/// terminal, or one past MAX_TERMINAL_SIDE): the header's then stays.
fn this_terminal() -> Option<TerminalSize> {
    let side = 1..=MAX_TERMINAL_SIDE;
    let (cols, rows) = crossterm::terminal::size().ok()?;
    (side.contains(&cols) && side.contains(&rows)).then_some(TerminalSize { cols, rows })
}

/// `--listen ADDR [--allow-remote] [--auto-replicate MS]`.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
struct Listen {
    listen: String,
    allow_remote: bool,
    auto_replicate_ms: u64,
    auto_create_topics: bool,
}

impl Listen {
    /// What is refused before anything opens: a non-loopback address
    /// without `--allow-remote`, a `--record` file inside the data
    /// directory (as `serve` refuses it), a build without the listeners.
    fn check(&self, record: Option<&Record>, data_dir: Option<&Path>) -> Result<(), SessionError> {
        #[cfg(feature = "serve")]
        {
            crate::kafka::listen_address(&self.listen, self.allow_remote)?;
            if let (Some(r), Some(dir)) = (record, data_dir)
                && crate::kafka::record::inside(&r.path, dir)
            {
                return Err(SessionError::flag(
                    format!("--record {}", r.path.display()),
                    format!(
                        "inside the data directory {}; record somewhere else",
                        dir.display()
                    ),
                ));
            }
            Ok(())
        }
        #[cfg(not(feature = "serve"))]
        {
            let _ = (record, data_dir);
            Err(no_listeners())
        }
    }

    /// Opens the listeners beside `driver`; returns them and the line that
    /// says where they listen, in `lang`.
    #[cfg(feature = "serve")]
    fn open(
        &self,
        driver: &Driver,
        lang: Lang,
    ) -> Result<(Box<dyn crate::session::listeners::Listeners>, String), SessionError> {
        let l = crate::kafka::live::open(
            driver,
            &crate::kafka::live::ListenOptions {
                listen: self.listen.clone(),
                allow_remote: self.allow_remote,
                auto_replicate_ms: self.auto_replicate_ms,
                auto_create_topics: self.auto_create_topics,
            },
        )?;
        // A stopped broker's listener stays closed until it starts: say so.
        let stopped: std::collections::BTreeSet<u32> = Snapshot::of(driver)
            .brokers
            .iter()
            .filter(|b| b.stopped)
            .map(|b| b.id)
            .collect();
        let (en, zh): (Vec<String>, Vec<String>) = l
            .addresses()
            .iter()
            .map(|a| {
                let at = format!("{}:{}", a.host, a.port);
                if stopped.contains(&a.broker) {
                    (
                        format!(
                            "broker {} on {at} (stopped: closed until it starts)",
                            a.broker
                        ),
                        format!("broker {} 在 {at}（已停止：启动后才打开）", a.broker),
                    )
                } else {
                    (
                        format!("broker {} on {at}", a.broker),
                        format!("broker {} 在 {at}", a.broker),
                    )
                }
            })
            .unzip();
        let said = lang.pick(
            format!("Kafka listeners: {}", en.join(", ")),
            format!("Kafka 监听：{}", zh.join("，")),
        );
        Ok((Box::new(l), said))
    }

    #[cfg(not(feature = "serve"))]
    fn open(
        &self,
        _: &Driver,
        _: Lang,
    ) -> Result<(Box<dyn crate::session::listeners::Listeners>, String), SessionError> {
        Err(no_listeners())
    }
}

/// `--listen` in a build without the `serve` feature.
#[cfg(not(feature = "serve"))]
fn no_listeners() -> SessionError {
    SessionError::flag(
        "--listen",
        "this build has no Kafka listeners (the `serve` feature)",
    )
}

/// The dashboard's own options (`--data-dir`, `--rules`, `--record`,
/// `--force` before any command) are refused with a command, which would
/// otherwise ignore them silently (issue 17 item 10): `render`, `export`
/// and `check` draw from the recording alone, `state` and `serve` have
/// their own `--data-dir` and `--rules`, and `replay` its own `--record`.
fn refuse_unused(cli: &Cli) -> Result<(), SessionError> {
    let Some(command) = &cli.command else {
        return Ok(());
    };
    let name = match command {
        Command::State { .. } => "state",
        Command::Check { .. } => "check",
        Command::Replay { .. } => "replay",
        Command::Lab { .. } => "lab",
        Command::Render { .. } => "render",
        #[cfg(feature = "serve")]
        Command::Serve(_) => "serve",
        #[cfg(feature = "serve")]
        Command::Observe(_) => "observe",
        Command::Export { .. } => "export",
    };
    if cli.layout.is_some() && matches!(name, "state" | "check" | "serve") {
        return Err(SessionError::flag(
            "--layout",
            format!("{name} draws no frames (`mk-tui check LAYOUT.json` checks a layout file)"),
        ));
    }
    let given = [
        ("--data-dir", cli.data_dir.is_some()),
        ("--rules", cli.rules.is_some()),
        ("--record", cli.record.is_some()),
        ("--listen", cli.listen.is_some()),
        ("--auto-replicate", cli.auto_replicate.is_some()),
        ("--auto-create-topics", cli.auto_create_topics),
    ];
    let Some((flag, _)) = given.iter().find(|(_, on)| *on) else {
        return Ok(());
    };
    let own = match (name, *flag) {
        ("state" | "serve", "--data-dir" | "--rules")
        | (
            "replay" | "serve",
            "--record" | "--listen" | "--auto-replicate" | "--auto-create-topics",
        )
        | ("observe" | "lab", "--record") => {
            format!("; give it after the command: mk-tui {name} … {flag}")
        }
        _ => format!("; {name} does not use it"),
    };
    Err(SessionError::refused(format!(
        "{flag} before the command is the dashboard's option{own}"
    )))
}

/// Runs the dashboard; after a signal (the terminal restored, the session
/// closed) removes the private temporary directories and exits with 128 +
/// the signal's number, as a shell expects of a program a signal ended.
fn dashboard(app: App, mouse: bool) -> Result<(), SessionError> {
    match ui::run::run(app, mouse)? {
        ui::run::Ended::Quit => Ok(()),
        ui::run::Ended::Signal(number) => {
            crate::session::scratch::remove_all();
            std::process::exit(ui::signals::exit_code(number));
        }
    }
}

/// Standard output is not a terminal: print the demo cluster's state. With
/// `--record`, the session that ran (the demo's steps, or none on a
/// reopened directory) is written as a recording, as a live session's
/// recording starts.
fn run_demo(
    data_dir: Option<PathBuf>,
    rules: Option<Rules>,
    record: Option<Record>,
) -> Result<(), SessionError> {
    let (driver, header, applied, _) = start_session(data_dir.as_deref(), rules)?;
    if let Some(r) = &record {
        r.open(&header, &applied)?;
    }
    let recovery = driver.cluster().last_recovery();
    match &data_dir {
        Some(dir) => outln!("MiniKafka demo cluster in {}", dir.display()),
        None => outln!("MiniKafka demo cluster in a temporary directory"),
    }
    outln!("rules: {}", driver.rules());
    for t in &recovery.logs_truncated {
        outln!(
            "recovery: cut {} bytes from {} on broker {} ({})",
            t.truncated_bytes,
            t.tp,
            t.broker,
            t.reason
        );
    }
    for e in &recovery.leaders_reelected {
        println!(
            "recovery: {} leader broker {} -> broker {} (leader epoch {})",
            e.tp, e.old_leader, e.new_leader, e.leader_epoch
        );
    }
    for errors in driver.errors() {
        outln!("step {}: {}", errors.step, errors.message);
    }
    out!("{}", state_text::render(&Snapshot::of(&driver)));
    Ok(())
}
