//! The dashboard (SPEC §6): ratatui + crossterm. Panes are pure renderers of
//! a `session::Snapshot` (nothing here names the engine); layouts arrange
//! panes; `App` holds focus, selection and mode, and the snapshot of the
//! current state, built once per change; `frame::draw` is the one drawing
//! path for the live UI, `render` and `export`: it draws from a frozen
//! input and returns the frame's map, which the app keeps for clicks and
//! scrolling.

pub mod app;
pub mod block_font;
pub mod frame;
pub mod glossary;
pub mod headless;
pub mod help;
pub mod i18n;
pub mod ink;
pub mod keys;
pub mod layout;
pub mod panes;
pub mod present_panes;
pub mod presentation;
pub mod prompt;
pub mod prompt_edit;
pub mod run;
pub mod signals;
pub mod status;
pub mod theme;
pub mod wrap;
