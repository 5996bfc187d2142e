//! The dashboard (SPEC §6): ratatui + crossterm. Panes are pure renderers of
//! a `session::Snapshot` (nothing here names the engine); layouts arrange
//! panes; `App` holds focus, selection and mode and asks its
//! `SnapshotSource` for the snapshot of each frame; `frame::draw` is the one
//! drawing path for the live UI, `render` and `export`.

pub mod app;
pub mod client_steps;
pub mod frame;
pub mod headless;
pub mod help;
pub mod i18n;
pub mod keys;
pub mod layout;
pub mod panes;
pub mod presentation;
pub mod prompt;
pub mod prompt_edit;
pub mod run;
pub mod signals;
pub mod status;
pub mod theme;
pub mod wrap;
