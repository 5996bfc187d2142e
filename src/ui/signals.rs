//! SIGTERM, SIGINT, SIGHUP and SIGQUIT. The dashboard waits for them in its
//! event loop (`ui::run`), so it restores the terminal, lets the session close
//! (the recording and the HW checkpoint are written at every step; the cluster
//! closes as the driver drops) and exits with the conventional code, 128 + the
//! signal's number. Every other command (src/cli), which has no loop to wait
//! in, gets a watcher thread that removes the private temporary directories
//! (`session::scratch`) and exits the same way.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The four signals, each with its number.
pub struct Signals {
    streams: Vec<(Signal, i32)>,
}

impl Signals {
    /// Starts catching the four. Must run inside a tokio runtime, which
    /// then delivers them to [`Self::next`].
    pub fn new() -> Result<Self, crate::session::SessionError> {
        let kinds = [
            (SignalKind::terminate(), 15, "SIGTERM"),
            (SignalKind::interrupt(), 2, "SIGINT"),
            (SignalKind::hangup(), 1, "SIGHUP"),
            (SignalKind::quit(), 3, "SIGQUIT"),
        ];
        let mut streams = Vec::new();
        for (kind, number, name) in kinds {
            let s = signal(kind)
                .map_err(|e| crate::session::SessionError::os(format!("cannot catch {name}"), e))?;
            streams.push((s, number));
        }
        Ok(Self { streams })
    }

    /// The number of the next signal that arrives.
    pub async fn next(&mut self) -> i32 {
        let waits = self.streams.iter_mut().map(|(s, n)| {
            let n = *n;
            Box::pin(async move {
                s.recv().await;
                n
            })
        });
        futures::future::select_all(waits).await.0
    }
}

/// The exit code for a run ended by signal `number`.
pub fn exit_code(number: i32) -> i32 {
    128 + number
}

/// For a command without an event loop: a thread that, on any of the
/// four signals, removes the private temporary directories and exits
/// with [`exit_code`]. The signals are caught before this returns.
pub fn exit_cleanly_on_signal() {
    let (ready, caught) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            let _ = ready.send(());
            return;
        };
        runtime.block_on(async move {
            let signals = Signals::new();
            let _ = ready.send(());
            let Ok(mut signals) = signals else { return };
            let number = signals.next().await;
            crate::session::scratch::remove_all();
            std::process::exit(exit_code(number));
        });
    });
    let _ = caught.recv();
}
