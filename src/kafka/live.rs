//! `mk-tui --listen ADDR`: the dashboard with the Kafka listeners open,
//! per-broker ports as `mk-tui serve` has them. The listeners and connections
//! run on their own network runtime; the dashboard's live session keeps the
//! one [`Driver`], and its loop hands the requests that came in to
//! [`LiveListeners::serve`] between keys, so keys and clients are actions of
//! the same driver in arrival order, and both are steps of the session's
//! recording.
//!
//! Unlike `serve`, the engine clock stays the lecturer's (no
//! `advance_clock` for real time) and nothing replicates by itself unless
//! `--auto-replicate MS` is given: an `acks=all` produce from a client
//! waits, visibly, until `r`.

use std::collections::BTreeSet;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;

use crate::engine::config::BrokerId;
use crate::kafka::broker::Advertised;
use crate::kafka::registry::Registry;
use crate::kafka::server::{self, Commands, Net};
use crate::kafka::worker::{Command, ServerState};
use crate::kafka::{advertise, bind_all, listen_address, network_runtime};
use crate::session::listeners::{Listeners, Steps};
use crate::session::snapshot::{ClientSnapshot, ListenerSnapshot};
use crate::session::{Driver, SessionError};

/// What `--listen` asks for.
#[derive(Debug, Clone)]
pub struct ListenOptions {
    /// The first broker's address; broker N on its port + N - 1.
    pub listen: String,
    pub allow_remote: bool,
    /// Replicate every this many ms; 0: only when the lecturer says (`r`).
    pub auto_replicate_ms: u64,
    /// Create the topics a Metadata request asks to be created (Kafka's
    /// `auto.create.topics.enable`).
    pub auto_create_topics: bool,
}

/// The open listeners of a live dashboard.
pub struct LiveListeners {
    runtime: Option<tokio::runtime::Runtime>,
    tasks: JoinSet<()>,
    state: ServerState,
    commands: mpsc::Receiver<Command>,
    wake: Arc<Notify>,
    gates: watch::Receiver<BTreeSet<BrokerId>>,
}

impl std::fmt::Debug for LiveListeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveListeners")
            .field("brokers", &self.state.brokers)
            .finish_non_exhaustive()
    }
}

/// Opens one listener per broker of `driver`'s cluster. Refuses a
/// non-loopback address unless asked, as `serve` does.
pub fn open(driver: &Driver, options: &ListenOptions) -> Result<LiveListeners, SessionError> {
    let listen = listen_address(&options.listen, options.allow_remote)?;
    let brokers = driver.cluster().config().broker_ids.clone();
    let runtime = network_runtime()?;
    let listeners = runtime.block_on(bind_all(listen, &brokers))?;
    let advertised: Vec<Advertised> = advertise(&listeners)?;
    let registry = Registry::default();
    let (gates_tx, gates) = watch::channel(BTreeSet::new());
    let (tx, commands) = mpsc::channel();
    let wake = Arc::new(Notify::new());
    let mut state = ServerState::new(
        advertised,
        options.auto_replicate_ms,
        false,
        registry.clone(),
        gates_tx,
    );
    state.set_auto_create_topics(options.auto_create_topics);
    // A broker stopped already (a reopened directory) starts closed.
    state.after_step(driver);
    let net = Net {
        commands: Commands::waking(tx, wake.clone()),
        registry,
        gates: gates.clone(),
        to_stderr: false,
        quiet: false,
        reading: crate::kafka::codec::ReadBudget::default(),
        transaction_version: driver.cluster().config().rules.transaction_version,
    };
    let tasks = {
        let _inside = runtime.enter();
        server::spawn_listeners(listeners, net)
    };
    Ok(LiveListeners {
        runtime: Some(runtime),
        tasks,
        state,
        commands,
        wake,
        gates,
    })
}

impl LiveListeners {
    /// Each broker's advertised address, in broker order.
    pub fn addresses(&self) -> &[Advertised] {
        &self.state.brokers
    }
}

impl Listeners for LiveListeners {
    fn serve(&mut self, driver: &mut Driver, steps: &mut dyn Steps) -> bool {
        let before = driver.step();
        // One round: its journal frames share one sync, before its
        // answers go out ([`crate::kafka::held`]).
        self.state.begin_round(driver);
        while let Ok(command) = self.commands.try_recv() {
            match command {
                Command::Request(request, reply, room) => {
                    self.state.handle(driver, steps, *request, reply);
                    drop(room);
                }
                Command::Shutdown => {}
            }
        }
        self.state.on_timer(driver, steps);
        self.state.end_round(driver, steps);
        driver.step() != before
    }

    fn after_step(&mut self, driver: &Driver) {
        self.state.after_step(driver);
    }

    fn wake(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    fn next_due(&self) -> Option<Duration> {
        self.state.has_timers().then(|| self.state.sleep_for())
    }

    fn clients(&self) -> Vec<ClientSnapshot> {
        self.state.clients()
    }

    fn log(&self, lines: usize) -> Vec<String> {
        self.state.registry().recent(lines)
    }

    fn arm_drop_produce_response(
        &mut self,
        driver: &mut Driver,
        steps: &mut dyn Steps,
    ) -> Result<(), SessionError> {
        self.state.arm(
            driver,
            steps,
            crate::kafka::fault::Fault::DropProduceResponse,
        )
    }

    fn armed_fault(&self) -> Option<String> {
        self.state.armed_fault().map(|f| f.name().to_string())
    }

    fn listeners(&self) -> Vec<ListenerSnapshot> {
        let stopped = self.gates.borrow();
        self.state
            .brokers
            .iter()
            .map(|a| ListenerSnapshot {
                broker: a.broker,
                address: format!("{}:{}", a.host, a.port),
                open: !stopped.contains(&a.broker),
            })
            .collect()
    }
}

impl Drop for LiveListeners {
    /// Closes every listener and connection without waiting for them.
    fn drop(&mut self) {
        self.tasks.abort_all();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
