//! The interactive loop: `ratatui::init()` (which restores the terminal on
//! panic), a tokio runtime awaiting crossterm's `EventStream` or the next
//! tick, and the engine work done between awaits. The engine's driver runs
//! its own single-threaded runtime, which must not be nested in another, so
//! the UI runtime is entered only to wait for the next event. A frame is
//! drawn when something changed; nothing spins while idle.
//!
//! The loop only translates: [`message`] turns a terminal event into an
//! [`Msg`], and [`App::update`] is the one place the state changes. With
//! `--listen` it also wakes when a Kafka request comes in, or a server
//! timer is due, and sends [`Msg::Serve`]: the requests are handled here,
//! between keys, by the session's one driver.

use std::time::Duration;

use crossterm::event::{
    DisableMouseCapture, EnableMouseCapture, Event, EventStream, KeyEventKind, MouseButton,
    MouseEventKind,
};
use futures::StreamExt;

use crate::session::SessionError;
use crate::ui::app::{App, Msg};
use crate::ui::keys;

/// How often an idle dashboard wakes up (for play mode pacing).
const TICK: Duration = Duration::from_millis(250);

/// How a dashboard run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The user quit (`q`, Ctrl-C) or the terminal closed its input.
    Quit,
    /// SIGTERM, SIGINT, SIGHUP or SIGQUIT (its number): the terminal is
    /// restored and the session closed; the caller exits with 128 + it.
    Signal(i32),
}

/// Runs the dashboard until the user quits, with the mouse captured
/// (click to focus a pane, the wheel scrolls it) unless `mouse` is false
/// (`--no-mouse`, so the terminal's own selection works). The terminal is
/// restored on return, on error, on panic and on a signal, mouse capture
/// included; the app (its driver, its recording) is dropped before this
/// returns.
pub fn run(mut app: App, mouse: bool) -> Result<Ended, SessionError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| SessionError::os("cannot start the runtime", e))?;
    // Caught before the terminal goes raw, so none is missed.
    let mut signals = runtime.block_on(async { crate::ui::signals::Signals::new() })?;
    let mut terminal =
        ratatui::try_init().map_err(|e| SessionError::os("cannot open the terminal", e))?;
    if mouse {
        // ratatui's panic hook restores the screen, not the mouse: release
        // it first, then let that hook run.
        let restore_screen = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            release_mouse();
            restore_screen(info);
        }));
        if let Err(e) = crossterm::execute!(std::io::stdout(), EnableMouseCapture) {
            ratatui::restore();
            return Err(SessionError::Mouse(e));
        }
    }
    let result = event_loop(&mut app, &mut terminal, &runtime, &mut signals);
    if mouse {
        release_mouse();
    }
    ratatui::restore();
    drop(app);
    result
}

fn release_mouse() {
    let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
}

fn event_loop(
    app: &mut App,
    terminal: &mut ratatui::DefaultTerminal,
    runtime: &tokio::runtime::Runtime,
    signals: &mut crate::ui::signals::Signals,
) -> Result<Ended, SessionError> {
    let mut events = EventStream::new();
    let mut dirty = true;
    let mut last_draw = std::time::Instant::now();
    let size = terminal
        .size()
        .map_err(|e| SessionError::os("cannot read the terminal's size", e))?;
    let _ = app.update(Msg::Resize(size.width, size.height));
    while !app.quit {
        if dirty {
            // The view is built for the frame's own area, after the
            // terminal resized itself, so every drawn row has its values.
            terminal
                .draw(|f| app.draw(f.buffer_mut()))
                .map_err(|e| SessionError::os("cannot draw", e))?;
            dirty = false;
            last_draw = std::time::Instant::now();
        }
        let served = app.serve_wake();
        let mut wait = app
            .next_step_delay_ms()
            .map_or(TICK, |ms| Duration::from_millis(ms.clamp(1, 60_000)));
        if let Some((_, Some(due))) = &served {
            wait = wait.min(*due);
        }
        let wake = served.map(|(wake, _)| wake);
        let next = runtime.block_on(async {
            tokio::select! {
                event = events.next() => Wake::Terminal(event),
                () = notified(wake.as_deref()) => Wake::Clients,
                () = tokio::time::sleep(wait) => Wake::Timeout,
                number = signals.next() => Wake::Signal(number),
            }
        });
        match next {
            Wake::Signal(number) => return Ok(Ended::Signal(number)),
            Wake::Terminal(Some(Ok(event))) => {
                if let Some(msg) = message(app, &event) {
                    // An error is on the status line already.
                    let _ = app.update(msg);
                    dirty = true;
                }
            }
            Wake::Terminal(Some(Err(e))) => {
                return Err(SessionError::os("terminal input failed", e));
            }
            Wake::Terminal(None) => return Ok(Ended::Quit),
            Wake::Clients | Wake::Timeout if wake.is_some() => {
                let step = app.step_now();
                let _ = app.update(Msg::Serve);
                // A new step is drawn at once; the clients pane's counts
                // (a consumer's fetch every few ms) at most every tick.
                let moved = app.step_now() != step;
                if moved || last_draw.elapsed() >= TICK {
                    dirty = true;
                }
            }
            Wake::Clients | Wake::Timeout => {
                if app.next_step_delay_ms().is_some() {
                    let _ = app.update(Msg::Tick);
                    dirty = true;
                }
            }
        }
    }
    Ok(Ended::Quit)
}

/// What ended a wait of the loop.
enum Wake {
    Terminal(Option<std::io::Result<Event>>),
    /// A Kafka request came in (`--listen`).
    Clients,
    Timeout,
    /// SIGTERM, SIGINT, SIGHUP or SIGQUIT (its number).
    Signal(i32),
}

/// Resolves when `wake` is notified; never without listeners.
async fn notified(wake: Option<&tokio::sync::Notify>) {
    match wake {
        Some(n) => n.notified().await,
        None => std::future::pending().await,
    }
}

/// The message for a terminal event, given what is on screen: Ctrl-C quits
/// everywhere; with a prompt open a key edits it; with the help open only
/// its own keys do anything (it is modal); otherwise the key map of the
/// mode applies. Key releases and repeats of other kinds are ignored.
pub fn message(app: &App, event: &Event) -> Option<Msg> {
    match event {
        Event::Key(key) if key.kind == KeyEventKind::Press => {
            if keys::is_ctrl_c(*key) {
                Some(Msg::Command(keys::KeyCommand::Quit))
            } else if app.prompt.is_some() {
                keys::prompt_edit(*key).map(Msg::Edit)
            } else if app.show_help {
                keys::help_command(*key).map(Msg::Command)
            } else {
                keys::command(*key, app.is_replay()).map(Msg::Command)
            }
        }
        Event::Resize(cols, rows) => Some(Msg::Resize(*cols, *rows)),
        Event::Mouse(m) => match m.kind {
            MouseEventKind::Down(MouseButton::Left) => Some(Msg::Click(m.column, m.row)),
            MouseEventKind::ScrollUp => Some(Msg::Wheel(m.column, m.row, true)),
            MouseEventKind::ScrollDown => Some(Msg::Wheel(m.column, m.row, false)),
            _ => None,
        },
        _ => None,
    }
}
