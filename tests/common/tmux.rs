//! A tmux server of a test's own (`-L`), for the tests that drive the real
//! dashboard in a real terminal (tmux_e2e, listen_tmux, signals): one
//! session, keys in, the screen out, every wait bounded, the server killed
//! when the value drops. CI installs tmux (`.ci/run`); elsewhere a test
//! without it says so and skips.

use std::process::Command;
use std::time::{Duration, Instant};

/// How long [`Tmux::wait_for`] waits for a text to appear.
const PATIENCE: Duration = Duration::from_secs(30);

pub struct Tmux {
    socket: String,
    /// The one session's name (`-t`).
    session: String,
}

impl Tmux {
    /// A server named after `tag` and this process, for session `session`;
    /// `None` (after printing why) where tmux is missing, which under
    /// `CI=true` is a failure instead.
    pub fn new(tag: &str, session: &str) -> Option<Self> {
        let ok = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            assert!(
                std::env::var("CI").map_or(true, |v| v != "true"),
                "CI installs tmux (.ci/run): it must be on the PATH"
            );
            println!("skipped: tmux is not installed");
            return None;
        }
        Some(Tmux {
            socket: format!("mk-{tag}-{}", std::process::id()),
            session: session.to_string(),
        })
    }

    /// Runs a tmux command on this server; its standard output.
    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Starts the session, `cols` x `rows`, running `command` (its words).
    pub fn start(&self, cols: u16, rows: u16, command: &[&str]) {
        let (cols, rows) = (cols.to_string(), rows.to_string());
        let mut args = vec![
            "new-session",
            "-d",
            "-s",
            &self.session,
            "-x",
            &cols,
            "-y",
            &rows,
        ];
        args.extend_from_slice(command);
        self.run(&args);
    }

    /// Sends keys (tmux `send-keys` words) to the session.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.session];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// The session's screen, as text.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", &self.session])
    }

    /// A tmux format (`#{alternate_on}`, …) of the session's pane.
    pub fn display(&self, format: &str) -> String {
        self.run(&["display-message", "-p", "-t", &self.session, format])
    }

    /// Whether the session still runs.
    pub fn alive(&self) -> bool {
        self.run(&["list-sessions"]).contains(&self.session)
    }

    /// Waits (at most `within`) until the session has ended (the program
    /// in it quit).
    pub fn wait_gone(&self, within: Duration) {
        let start = Instant::now();
        while self.alive() {
            assert!(
                start.elapsed() < within,
                "the program in tmux did not quit within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits (at most 30 s) until the screen contains `text`; the screen.
    pub fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "waited {PATIENCE:?} for {text:?}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}
