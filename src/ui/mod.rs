//! The dashboard (SPEC §6): ratatui + crossterm. `View` snapshots the
//! session; panes render it; layouts arrange panes; `App` holds focus,
//! selection and mode.

pub mod i18n;
pub mod panes;
pub mod theme;
pub mod view;
