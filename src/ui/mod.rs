//! The dashboard (SPEC §6): ratatui + crossterm. `View` snapshots the
//! session; panes render it; layouts arrange panes; `App` holds focus,
//! selection and mode; `frame::draw` is the one drawing path for the live
//! UI, `render` and `export`.

pub mod app;
pub mod frame;
pub mod headless;
pub mod i18n;
pub mod keys;
pub mod layout;
pub mod panes;
pub mod run;
pub mod theme;
pub mod view;
