//! `mk-tui serve`'s arguments: the clap side of [`crate::kafka::serve`].

use std::path::PathBuf;

use clap::Args;

use crate::kafka::{self, ServeOptions};

/// Serve the cluster to real Kafka clients on loopback (headless; one log
/// line per request on standard error). Unauthenticated: see
/// docs/kafka-protocol.md.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A recording: its header gives the cluster and its steps are applied
    /// first. Without one: 3 brokers, no topics.
    pub recording: Option<PathBuf>,
    /// The first broker's address; broker N listens on the port + N - 1.
    #[arg(long, default_value = kafka::DEFAULT_LISTEN, value_name = "ADDR")]
    pub listen: String,
    /// Allow a non-loopback --listen address (the server is unauthenticated).
    #[arg(long)]
    pub allow_remote: bool,
    /// Keep the data here (reopened if it holds data and no recording is
    /// given); read it afterwards with `mk-tui state --data-dir DIR`.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Engine rules: minikafka or kafka (default: the recording's, else
    /// minikafka). A reopened --data-dir keeps the rules, configuration and
    /// clock it was made with (its cluster.json); other rules are refused.
    #[arg(long)]
    pub rules: Option<String>,
    /// Kafka's `transaction.version` the server finalizes: 1 (chapter 8's
    /// protocol, KIP-98) or 2 (Kafka 4's, KIP-890: the epoch bumped at
    /// every EndTxn, partitions added by Produce v12); 2 needs --rules
    /// kafka. Default: the recording's, else 1 (docs/kafka-protocol.md,
    /// "Transaction versions").
    #[arg(long, value_name = "N")]
    pub transaction_version: Option<u8>,
    /// Replicate every MS milliseconds, and at once when a client waits on it (an acks=all produce, a consumer waiting for the high watermark); 0: never, so acks=all waits.
    #[arg(long, default_value_t = 50, value_name = "MS")]
    pub auto_replicate: u64,
    /// Replicate only at the --auto-replicate ticks, not at once when a client waits on it: an acks=all produce or a commit's markers then wait for the next tick (a lesson that shows them pending, a test that kills the server in between)
    #[arg(long)]
    pub tick_replication_only: bool,
    /// Log no line for each request answered (a client's requests come to thousands of lines a minute): the server's own lines (ready, a transaction timed out, a fault) and a connection's errors stay
    #[arg(long)]
    pub quiet: bool,
    /// Clean the topics created with cleanup.policy=compact or a retention
    /// config every MS milliseconds, as recorded `compact` and `retention`
    /// steps (0: never; docs/kafka-differences.md).
    #[arg(long, default_value_t = kafka::cleaner::DEFAULT_CLEANER_INTERVAL_MS, value_name = "MS")]
    pub cleaner_interval: u64,
    /// Create a topic when a client's Metadata request names it and asks
    /// for it to be created, as Kafka does with `auto.create.topics.enable`
    /// (Kafka's default is on; off here unless given, as in the reference
    /// cluster the tests compare with): one partition and the replication
    /// factor CreateTopics gives by default, recorded as a `create_topic`
    /// step (docs/kafka-protocol.md, "Metadata").
    #[arg(long)]
    pub auto_create_topics: bool,
    /// Record the served session here as it goes (SPEC §4): `mk-tui state
    /// FILE` replays it without the clients. Not inside --data-dir; an
    /// existing FILE is refused unless --force is given.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// With --record: replace FILE if it exists.
    #[arg(long, requires = "record")]
    pub force: bool,
    /// Arm a fault when serving begins: drop-produce-response drops the
    /// response of the next Produce, so the client retries (the lesson on
    /// idempotence; docs/kafka-protocol.md). Recorded as a note step.
    #[arg(long, value_name = "FAULT")]
    pub fault: Vec<String>,
}

/// Runs the server; once a signal has stopped it cleanly, removes the
/// private temporary directories and exits with 128 + the signal's number
/// (143 for SIGTERM, 130 for Ctrl-C, 129 for SIGHUP), as every other
/// command does (issue 25: `serve` exited 0).
pub fn run(args: ServeArgs) -> Result<(), crate::session::SessionError> {
    let faults = args
        .fault
        .iter()
        .map(|f| kafka::fault::Fault::from_name(f))
        .collect::<Result<Vec<_>, _>>()?;
    let signal = kafka::serve(ServeOptions {
        recording: args.recording,
        listen: args.listen,
        data_dir: args.data_dir,
        rules: args.rules,
        transaction_version: args.transaction_version,
        auto_replicate_ms: args.auto_replicate,
        tick_replication_only: args.tick_replication_only,
        quiet: args.quiet,
        cleaner_interval_ms: args.cleaner_interval,
        auto_create_topics: args.auto_create_topics,
        allow_remote: args.allow_remote,
        record: args.record,
        force: args.force,
        faults,
    })?;
    crate::session::scratch::remove_all();
    std::process::exit(crate::ui::signals::exit_code(signal));
}
