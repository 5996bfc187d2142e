//! What may sit beside a live session's driver and drive it too: the Kafka
//! listeners of `mk-tui --listen` (SPEC §2). The session knows them only
//! through these two traits, so the session and ui layers name no network
//! code, and the one [`Driver`] stays the only engine: keys and clients both
//! become actions it applies, in the order they arrive, and every one of them
//! is a step of the session's recording.

use std::sync::Arc;
use std::time::Duration;

use crate::session::recording::Caption;
use crate::session::snapshot::{ClientSnapshot, ListenerSnapshot};
use crate::session::{Action, Driver, Outcome};

/// Told of every action applied for someone other than a key (a client's
/// request, the server's replication tick, real time passing), so the
/// session records it as a step as it records a key's.
pub trait Steps {
    /// Just before the driver applies `action` (the snapshot before it is
    /// what the step changed).
    fn before(&mut self, driver: &Driver, action: &Action) {
        let _ = (driver, action);
    }

    /// Just after the driver applied `action`: record it.
    fn applied(&mut self, driver: &Driver, action: &Action, outcome: &Outcome);

    /// Just after the driver applied a `note` step that says `caption`
    /// (the server's word for what the engine's actions do not show: a
    /// fault armed, a response dropped, a retry answered from the
    /// sequence check; docs/kafka-protocol.md). Recorded with its caption.
    fn noted(&mut self, driver: &Driver, caption: &Caption) {
        let _ = caption;
        self.applied(driver, &Action::Note {}, &Outcome::Ok);
    }
}

/// Steps that go nowhere (a headless caller that records nothing).
#[derive(Debug, Default)]
pub struct NoSteps;

impl Steps for NoSteps {
    fn applied(&mut self, _: &Driver, _: &Action, _: &Outcome) {}
}

/// Listeners beside a live session's driver.
pub trait Listeners {
    /// Handles every request that came in and every timer that is due
    /// (replication ticks, request timeouts), applying what changes the
    /// engine through `driver` and telling `steps`. True when the engine
    /// changed.
    fn serve(&mut self, driver: &mut Driver, steps: &mut dyn Steps) -> bool;

    /// After the session applied a step of its own (a key): answers the
    /// requests it finished (an `acks=all` produce after `r`), and closes
    /// or reopens the listeners of brokers it stopped or started.
    fn after_step(&mut self, driver: &Driver);

    /// Notified whenever a request comes in: the dashboard's loop waits on
    /// it beside the terminal's events.
    fn wake(&self) -> Arc<tokio::sync::Notify>;

    /// How long until a timer is due (None: none is set).
    fn next_due(&self) -> Option<Duration>;

    /// The open connections, in the order they were accepted.
    fn clients(&self) -> Vec<ClientSnapshot>;

    /// The last `lines` lines of the request log, oldest first.
    fn log(&self, lines: usize) -> Vec<String>;

    /// Each broker's listener: its address and whether it is open.
    fn listeners(&self) -> Vec<ListenerSnapshot>;

    /// The fault armed and waiting for its request, by name
    /// (`drop-produce-response`), if any: the clients pane says so.
    fn armed_fault(&self) -> Option<String>;

    /// The dashboard's `D`: drop the response of the next Produce (the
    /// lesson on idempotence), told to `steps` as a `note` step. Err when
    /// it is armed already.
    fn arm_drop_produce_response(
        &mut self,
        driver: &mut Driver,
        steps: &mut dyn Steps,
    ) -> Result<(), crate::session::SessionError>;
}
