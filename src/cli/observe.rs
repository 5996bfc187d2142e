//! `mk-tui observe`'s arguments (issue 15, first slice): the clap side of
//! [`crate::observe`]. This slice prints one snapshot (`--state`) or one
//! frame (`--render`) and exits; refreshing on an interval or a key is not
//! built yet (docs/observe.md "Not yet").

use clap::{ArgGroup, Args};

use crate::observe::{self, Options};
use crate::ui::headless::{self, Format, Look};

/// The options of `mk-tui observe` (its help is the `Command::Observe`
/// doc comment, which clap shows).
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("mode").required(true).args(["state", "render"])))]
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
    /// Print the snapshot as one JSON object (the keys of `mk-tui state`,
    /// and `unavailable`: the fields the protocol cannot fill).
    #[arg(long)]
    pub state: bool,
    /// Print one frame as `mk-tui render` draws it.
    #[arg(long)]
    pub render: bool,
    /// With --render: terminal size, COLSxROWS (default 120x36).
    #[arg(long, requires = "render")]
    pub size: Option<String>,
    /// With --render: text or ansi.
    #[arg(long, default_value = "text", requires = "render")]
    pub format: String,
}

/// Observes once; returns what to print.
pub fn run(args: ObserveArgs, look: Look) -> Result<String, String> {
    let format = match args.format.as_str() {
        "text" => Format::Text,
        "ansi" => Format::Ansi,
        other => return Err(format!("--format {other:?}: expected text or ansi")),
    };
    let (cols, rows) = match args.size.as_deref() {
        Some(s) => super::parse_size(s)?,
        None => (120, 36),
    };
    let options = Options {
        bootstrap: observe::bootstrap::parse(&args.bootstrap)?,
        topics: args.topics,
        groups: args.groups,
    };
    let snapshot = observe::observe(&options)?;
    if args.render {
        headless::render_saved_in(snapshot, cols, rows, format, look)
    } else {
        Ok(format!("{}\n", snapshot.to_json()))
    }
}
