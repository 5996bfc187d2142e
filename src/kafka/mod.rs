//! `mk-tui serve`: the embedded cluster speaks the Kafka wire protocol on
//! loopback, so real clients (confluent-kafka, kcat, kafka-python) drive it
//! (docs/kafka-protocol.md lists each API and what differs from a real
//! broker).
//!
//! Threads: one driver thread owns the [`Driver`](crate::session::Driver)
//! and applies every change as an action ([`worker`]); a tokio runtime
//! runs the listeners and connections ([`server`]). Frames and headers are
//! read in [`codec`], bodies decoded by the `kafka-protocol` crate, answered
//! by one handler per API ([`handlers`]); [`records`] translates Kafka's v2
//! record batches at the edge and [`errors`] gives engine errors their
//! Kafka codes. The wall clock is read in [`clock`] only.
//!
//! Behind the `serve` cargo feature (on by default; docs/build.md).

pub mod broker;
pub mod by_version;
pub mod cleaner;
pub mod clock;
pub mod codec;
pub mod configs;
pub mod errors;
pub mod fault;
pub mod group_view;
pub mod groups;
pub mod handlers;
pub mod held;
pub mod live;
pub mod producer_ids;
pub mod producers;
pub mod record;
pub mod records;
pub mod registry;
pub mod server;
pub mod steps;
pub mod subscription;
pub mod topic_alter;
pub mod txn_view;
pub mod unkept_configs;
pub mod wire_batch;
pub mod worker;

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use std::collections::BTreeSet;

use crate::engine::config::{BrokerId, Rules, TransactionVersion};
use crate::session::SessionError;
use crate::session::cluster_file::ClusterFile;
use crate::session::recording::{Header, Step};
use crate::session::{Driver, Recording};
use record::RecordSteps;

/// Writes one line of the server's log to standard error, and ignores a
/// failed write: a log read through a pipe that closed (`serve 2>&1 | tee`,
/// then Ctrl-C) must not stop the server, whose clients and data come
/// first (`eprintln!` would panic there and skip the clean stop).
pub fn log_line(line: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Writes one line to standard output (the listening addresses, `ready`)
/// and flushes it, ignoring a failed write as [`log_line`] does.
pub fn out_line(line: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// How often `serve` writes the HW checkpoint, in ms of its clock (which
/// follows real time): Kafka's default
/// `replica.high.watermark.checkpoint.interval.ms`. See
/// [`Driver::set_hw_checkpoint_interval`].
pub const HW_CHECKPOINT_INTERVAL_MS: u64 = 5_000;
use broker::Advertised;
use registry::Registry;
use server::{Commands, Net};
use worker::{Command, ServerState};

/// The default listen address: the first broker's.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9092";

/// What `mk-tui serve` was asked for.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// A recording whose header gives the cluster and whose steps are
    /// applied before the listeners open.
    pub recording: Option<PathBuf>,
    /// The first broker's address; broker N listens on its port + N - 1
    /// (port 0: every broker on a port of the system's choosing).
    pub listen: String,
    /// Keep the data here (reopened when it holds data and no recording is
    /// given); else a temporary directory deleted at exit.
    pub data_dir: Option<PathBuf>,
    /// Rules: the recording's, else minikafka.
    pub rules: Option<String>,
    /// `--transaction-version`: the recording's, else 1.
    pub transaction_version: Option<u8>,
    /// Replicate every this many ms; 0: never.
    pub auto_replicate_ms: u64,
    /// Replicate only at those ticks, not at once when a client waits on
    /// replication (`--tick-replication-only`).
    pub tick_replication_only: bool,
    /// Log no line per request answered (`--quiet`).
    pub quiet: bool,
    /// Clean the configured topics every this many ms; 0: never
    /// ([`cleaner`]).
    pub cleaner_interval_ms: u64,
    /// Create the topics a Metadata request asks to be created
    /// (`--auto-create-topics`, Kafka's `auto.create.topics.enable`).
    pub auto_create_topics: bool,
    /// Allow a non-loopback listen address.
    pub allow_remote: bool,
    /// Record the session here (`--record`).
    pub record: Option<PathBuf>,
    /// With `record`: replace the file if it exists.
    pub force: bool,
    /// Faults armed when serving begins (`--fault`), each a `note` step.
    pub faults: Vec<fault::Fault>,
}

/// Runs the server until SIGTERM, Ctrl-C, SIGHUP or SIGQUIT; returns that
/// signal's number once the server has stopped cleanly (the caller exits
/// with 128 + it). Listening addresses are printed on standard output, one
/// line per broker, then `ready`.
pub fn serve(options: ServeOptions) -> Result<i32, SessionError> {
    let listen = listen_address(&options.listen, options.allow_remote)?;
    if let Some(file) = &options.record {
        check_record(file, options.force, options.data_dir.as_deref())?;
    }
    // Everything that can be checked without writing is checked, and every
    // listener bound, before anything is created (issue 25: ports in use
    // left a journal, a lock file and broker directories in a new
    // --data-dir).
    let plan = plan(&options)?;
    let runtime = network_runtime()?;
    let listeners = runtime.block_on(bind_all(listen, &plan.brokers))?;
    /// The brokers, the transaction version, and whether the rules fence
    /// a transactional id's open transaction (Kafka's) or not (the book's).
    type Opened = (Vec<BrokerId>, TransactionVersion, bool);
    let (ids_tx, ids_rx) = mpsc::channel::<Result<Opened, SessionError>>();
    let (adv_tx, adv_rx) = mpsc::channel::<Vec<Advertised>>();
    let (commands, command_rx) = mpsc::channel::<Command>();
    let registry = Registry::default();
    let (gates, gates_rx) = tokio::sync::watch::channel(BTreeSet::new());
    let opts = options.clone();
    let net_registry = registry.clone();
    // The driver is built, used and dropped on its own thread.
    let thread = std::thread::Builder::new()
        .name("mk-tui-driver".into())
        .spawn(move || -> Option<(usize, PathBuf, Option<PathBuf>)> {
            let reopened = matches!(plan.source, Source::Reopen(_));
            let opened = open_driver(&opts, plan).and_then(|(driver, header, applied)| {
                let steps = match &opts.record {
                    Some(file) => RecordSteps::create(file, &header, &applied, &driver)?,
                    None => RecordSteps::none(),
                };
                Ok((driver, steps))
            });
            let (driver, mut steps) = match opened {
                Ok(d) => d,
                Err(e) => {
                    let _ = ids_tx.send(Err(e));
                    return None;
                }
            };
            if reopened {
                log_line(format_args!("{}", reopened_line(&driver)));
            }
            // The stopped brokers' listeners are closed before `ready`:
            // they were bound with the others (nothing is created before
            // every port is bound), and a client must not reach one.
            gates.send_replace(
                driver
                    .cluster()
                    .with_state(|s| s.stopped_brokers().iter().copied().collect()),
            );
            let config = driver.cluster().config();
            let _ = ids_tx.send(Ok((
                config.broker_ids.clone(),
                config.rules.transaction_version,
                config.rules.fence_zombies,
            )));
            let advertised = adv_rx.recv().ok()?;
            let mut state =
                ServerState::new(advertised, opts.auto_replicate_ms, true, registry, gates);
            state.set_cleaner_interval(opts.cleaner_interval_ms);
            state.set_auto_create_topics(opts.auto_create_topics);
            state.set_replicate_when_waited(!opts.tick_replication_only);
            let mut driver = driver;
            driver.set_hw_checkpoint_interval(Some(HW_CHECKPOINT_INTERVAL_MS));
            // The engine clock follows the wall clock from an origin the
            // data directory keeps (docs/reliability.md, "What the data
            // directory remembers").
            match driver.follow_wall_clock(clock::RealTime::unix_ms()) {
                Ok((origin, _)) => state.resume_wall_clock(&mut driver, &mut steps, origin),
                Err(e) => log_line(format_args!("mk-tui serve: {e}")),
            }
            for f in &opts.faults {
                if let Err(e) = state.arm(&mut driver, &mut steps, *f) {
                    log_line(format_args!("mk-tui serve: {e}"));
                }
            }
            let driver = worker::run(driver, state, &mut steps, command_rx);
            let done = (driver.step(), driver.data_dir().to_path_buf(), steps.path());
            drop(driver);
            Some(done)
        })
        .map_err(|e| SessionError::os("cannot start the driver thread", e))?;
    let bound: Vec<BrokerId> = listeners.iter().map(|(b, _)| *b).collect();
    let (transaction_version, fences) = match ids_rx.recv() {
        Ok(Ok((ids, version, fences))) if ids == bound => (version, fences),
        Ok(Ok((ids, _, _))) => {
            drop(adv_tx);
            let _ = thread.join();
            return Err(SessionError::refused(format!(
                "the cluster opened with brokers {ids:?}, not the {bound:?} listened for"
            )));
        }
        Ok(Err(e)) => {
            let _ = thread.join();
            return Err(e);
        }
        Err(_) => {
            return Err(SessionError::refused(
                "the driver thread stopped before the cluster opened",
            ));
        }
    };
    let advertised = advertise(&listeners)?;
    for a in &advertised {
        out_line(format_args!(
            "broker {} listening on {}:{}",
            a.broker, a.host, a.port
        ));
    }
    let _ = adv_tx.send(advertised);
    let signals = {
        let _inside = runtime.enter();
        server::Signals::install()?
    };
    // A stopped broker's listener is closed before `ready`, so no client
    // reaches it (the gates were set before the broker ids were sent).
    let stopped = gates_rx.borrow().clone();
    let listeners = server::closing(listeners, &stopped)
        .map_err(|e| SessionError::os("a listener has no address", e))?;
    // Said here, not by the listener's task: a client (or a test) that
    // finds the port closed after `ready` also finds the line in the log.
    for (broker, addr, _) in listeners.iter().filter(|(_, _, l)| l.is_none()) {
        log_line(format_args!(
            "mk-tui serve: broker {broker}: stopped: listener on {addr} closed"
        ));
    }
    if !fences {
        // What a real client's application meets first under the book's
        // rules: a producer that died inside a transaction holds the LSO
        // until that transaction ends, and a new instance cannot end it.
        log_line(format_args!(
            "mk-tui serve: the book's rules (minikafka): a transactional id's open transaction \
             is neither fenced by a new producer nor timed out; --rules kafka serves Kafka's"
        ));
    }
    out_line(format_args!("ready"));
    let net = Net {
        commands: Commands::new(commands.clone()),
        registry: net_registry,
        gates: gates_rx,
        to_stderr: true,
        quiet: options.quiet,
        reading: crate::kafka::codec::ReadBudget::default(),
        transaction_version,
    };
    let (signal, number) = runtime.block_on(server::serve_until_signal(listeners, net, signals));
    log_line(format_args!("mk-tui serve: {signal}: closing"));
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    let _ = commands.send(Command::Shutdown);
    match thread.join() {
        Ok(Some((steps, dir, recorded))) => {
            let kept = if options.data_dir.is_some() {
                format!("data in {}", dir.display())
            } else {
                "temporary data directory removed".to_string()
            };
            let recorded = recorded
                .map(|f| format!("; recorded in {}", f.display()))
                .unwrap_or_default();
            log_line(format_args!(
                "mk-tui serve: stopped after {steps} steps; {kept}{recorded}"
            ));
            Ok(number)
        }
        Ok(None) => Ok(number),
        Err(_) => Err(SessionError::refused("the driver thread panicked")),
    }
}

/// The runtime the listeners and connections run on (two threads: the
/// machine's cores are shared with the driver and the dashboard).
pub(crate) fn network_runtime() -> Result<tokio::runtime::Runtime, SessionError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("mk-tui-net")
        .enable_all()
        .build()
        .map_err(|e| SessionError::os("cannot start the network runtime", e))
}

/// Each bound listener's address, as Metadata advertises it.
pub(crate) fn advertise(
    listeners: &[(BrokerId, tokio::net::TcpListener)],
) -> Result<Vec<Advertised>, SessionError> {
    listeners
        .iter()
        .map(|(broker, listener)| {
            let addr = listener
                .local_addr()
                .map_err(|e| SessionError::os(format!("broker {broker}"), e))?;
            Ok(Advertised {
                broker: *broker,
                host: addr.ip().to_string(),
                port: addr.port(),
            })
        })
        .collect()
}

/// `--record FILE`: refused when FILE exists (unless `force`) or would be
/// written inside the data directory (the engine's files; a recording
/// there would be swept with them), before anything is written.
pub fn check_record(file: &Path, force: bool, data_dir: Option<&Path>) -> Result<(), SessionError> {
    if let Some(dir) = data_dir
        && record::inside(file, dir)
    {
        return Err(SessionError::flag(
            format!("--record {}", file.display()),
            format!(
                "inside the data directory {}; record somewhere else",
                dir.display()
            ),
        ));
    }
    if !force && std::fs::symlink_metadata(file).is_ok() {
        return Err(SessionError::path(
            file,
            "already exists; --record does not replace a file (give --force to replace it)",
        ));
    }
    Ok(())
}

/// Parses the listen address and refuses a non-loopback one unless asked.
pub(crate) fn listen_address(text: &str, allow_remote: bool) -> Result<SocketAddr, SessionError> {
    let flag = || format!("--listen {text:?}");
    let addr = text
        .to_socket_addrs()
        .map_err(|e| SessionError::flag(flag(), e))?
        .next()
        .ok_or_else(|| SessionError::flag(flag(), "no address"))?;
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(SessionError::flag(
            flag(),
            format!(
                "not a loopback address; the server is unauthenticated, so binding {} needs --allow-remote",
                addr.ip()
            ),
        ));
    }
    Ok(addr)
}

/// One listener per broker: the first on the given port, the next on
/// port + 1, and so on (port 0: each on a port the system picks).
pub(crate) async fn bind_all(
    listen: SocketAddr,
    brokers: &[BrokerId],
) -> Result<Vec<(BrokerId, tokio::net::TcpListener)>, SessionError> {
    let mut out = Vec::new();
    for (i, broker) in brokers.iter().enumerate() {
        let port = if listen.port() == 0 {
            0
        } else {
            u16::try_from(usize::from(listen.port()) + i).map_err(|_| {
                SessionError::flag(
                    format!("--listen {listen}"),
                    format!("broker {broker}'s port would pass 65535"),
                )
            })?
        };
        let addr = SocketAddr::new(listen.ip(), port);
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
            SessionError::os(format!("cannot listen on {addr}"), e).in_(format!("broker {broker}"))
        })?;
        out.push((*broker, listener));
    }
    Ok(out)
}

/// Where the served cluster comes from, decided before anything is
/// written: the brokers to listen for, and what to open.
#[derive(Debug)]
struct Plan {
    brokers: Vec<BrokerId>,
    source: Source,
}

#[derive(Debug)]
enum Source {
    /// A recording, with its header (rules overridden) and steps.
    Recording(Header, Vec<Step>),
    /// A data directory that holds data, reopened as it was made (its
    /// cluster.json), `--rules` if given agreeing.
    Reopen(Option<Rules>),
    /// 3 brokers, no topics.
    Fresh(Header),
}

/// Reads what `serve` was given without writing anything: the rules, the
/// recording, or a data directory's broker ids (`Driver::open_in_place`
/// reads the same).
fn plan(options: &ServeOptions) -> Result<Plan, SessionError> {
    let rules = options.rules.as_deref();
    let given: Option<Rules> = rules
        .map(str::parse)
        .transpose()
        .map_err(|e| SessionError::flag("--rules", e))?;
    if let Some(file) = &options.recording {
        let recording = Recording::load(file)?;
        let mut header = recording.header;
        if let Some(rules) = rules {
            header.rules = rules.to_string();
        }
        with_transaction_version(&mut header, options.transaction_version)?;
        return Ok(Plan {
            brokers: header.cluster.brokers.clone(),
            source: Source::Recording(header, recording.steps),
        });
    }
    let rules = rules.unwrap_or("minikafka");
    if let Some(dir) = options.data_dir.as_deref().filter(|d| holds_data(d)) {
        if options.record.is_some() {
            // A recording starts from its header's cluster; a reopened
            // directory's history is not one.
            return Err(SessionError::flag(
                "--record",
                format!(
                    "{} already holds data, and a recording starts from a fresh cluster; give an empty --data-dir",
                    dir.display()
                ),
            ));
        }
        // Under the rules and configuration the directory was made with
        // (its cluster.json): --rules may only agree, checked before
        // anything is bound or written.
        let stored = ClusterFile::read(dir)?;
        if let Some(file) = &stored {
            file.check_given(dir, given)?;
            check_transaction_version(dir, file, options.transaction_version)?;
        }
        let brokers = match &stored {
            Some(file) => file.config(dir)?.broker_ids,
            None => crate::session::data_dir::brokers_in(dir)?,
        };
        return Ok(Plan {
            brokers,
            source: Source::Reopen(given),
        });
    }
    let mut header = default_header(rules)?;
    with_transaction_version(&mut header, options.transaction_version)?;
    Ok(Plan {
        brokers: header.cluster.brokers.clone(),
        source: Source::Fresh(header),
    })
}

/// The cluster to serve, as planned: the recording's (its steps applied),
/// a reopened data directory, or 3 brokers with no topics; with the header
/// and steps a recording of the session starts with.
fn open_driver(
    options: &ServeOptions,
    plan: Plan,
) -> Result<(Driver, Header, Vec<Step>), SessionError> {
    let dir = options.data_dir.as_deref();
    match plan.source {
        Source::Recording(header, steps) => {
            let file = options.recording.as_deref().unwrap_or(Path::new(""));
            let mut driver =
                Driver::new(&header, dir).map_err(|e| e.in_(format!("{}:1", file.display())))?;
            for step in &steps {
                driver.apply(&step.action);
            }
            Ok((driver, header, steps))
        }
        Source::Reopen(given) => {
            let dir = dir.expect("a reopened directory is given");
            let driver = Driver::open_in_place(dir, given)?;
            let header = default_header(driver.rules())?;
            Ok((driver, header, Vec::new()))
        }
        Source::Fresh(header) => Ok((Driver::new(&header, dir)?, header, Vec::new())),
    }
}

/// What a reopened data directory holds and what opening it repaired, said
/// before `ready`: the rules kept in its `cluster.json` (a restart takes
/// no `--rules`), its topics, and recovery's sentence, the one the
/// dashboard's journal pane tells (`recovery completed tx-1 (…), left
/// tx-2 open (ongoing)`, or `recovery found nothing to repair`).
fn reopened_line(driver: &Driver) -> String {
    let topics = driver.cluster().topics();
    let partitions: u32 = topics.iter().map(|(_, n)| n).sum();
    let recovery = driver.last_recovery().map_or_else(
        || "no recovery ran".to_string(),
        |r| crate::session::narrate::recovery(r, driver.resends_markers_now()).en,
    );
    let count = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    format!(
        "mk-tui serve: reopened {}: rules {} (kept in its cluster.json), {}, {}; {recovery}",
        driver.data_dir().display(),
        driver.rules(),
        count(topics.len(), "topic"),
        count(partitions as usize, "partition"),
    )
}

/// `--transaction-version` into the header's config, checked against its
/// rules as a recording's `config.transaction_version` is.
fn with_transaction_version(header: &mut Header, given: Option<u8>) -> Result<(), SessionError> {
    let Some(n) = given else {
        return Ok(());
    };
    let rules: Rules = header
        .rules
        .parse()
        .map_err(|e| SessionError::flag("--rules", e))?;
    if let Some(why) = crate::session::recording::transaction_version_error(Some(n), rules) {
        let why = why
            .split_once(": ")
            .map_or(why.as_str(), |(_, rest)| rest)
            .to_string();
        return Err(SessionError::flag(
            format!("--transaction-version {n}"),
            why,
        ));
    }
    header.cluster.config.transaction_version = Some(n);
    Ok(())
}

/// A reopened directory keeps the transaction version it was made with:
/// `--transaction-version` may only agree.
fn check_transaction_version(
    dir: &Path,
    file: &ClusterFile,
    given: Option<u8>,
) -> Result<(), SessionError> {
    match given {
        Some(n) if n != file.config.transaction_version => Err(SessionError::flag(
            format!("--transaction-version {n}"),
            format!(
                "{} was made with transaction version {}; leave --transaction-version out to reopen it as it was made",
                dir.display(),
                file.config.transaction_version
            ),
        )),
        _ => Ok(()),
    }
}

fn holds_data(dir: &Path) -> bool {
    dir.read_dir().is_ok_and(|mut e| e.next().is_some())
}

/// Three brokers, no topics: clients create them with CreateTopics.
fn default_header(rules: &str) -> Result<Header, SessionError> {
    serde_json::from_value(serde_json::json!({
        "mk_recording": 1,
        "title": "mk-tui serve",
        "rules": rules,
        "cluster": {"brokers": [1, 2, 3], "topics": []},
    }))
    .map_err(|source| SessionError::Json {
        what: "the default cluster".into(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_unless_asked() {
        assert!(listen_address("127.0.0.1:9092", false).is_ok());
        assert!(listen_address("[::1]:9092", false).is_ok());
        let err = listen_address("0.0.0.0:9092", false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--allow-remote") && err.contains("unauthenticated"),
            "{err}"
        );
        assert!(listen_address("0.0.0.0:9092", true).is_ok());
        assert!(listen_address("nonsense", false).is_err());
    }

    #[test]
    fn the_default_cluster_is_three_brokers_without_topics() {
        let h = default_header("kafka").unwrap();
        assert_eq!(h.cluster.brokers, vec![1, 2, 3]);
        assert!(h.cluster.topics.is_empty());
        assert_eq!(h.rules, "kafka");
    }
}
