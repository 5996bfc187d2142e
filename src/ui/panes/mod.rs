//! The panes (SPEC §6). Each is one small file with a `render` function that
//! draws from the [`View`] into a rectangle, touching only what is visible.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::ui::i18n::Lang;
use crate::ui::theme::Theme;
use crate::ui::view::View;

/// Every pane a layout can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PaneId {
    Partitions,
    Replicas,
    Watermarks,
    Journal,
    Offsets,
    Consumers,
    Pending,
    Events,
    Caption,
}

impl PaneId {
    /// Every pane, in focus order.
    pub const ALL: [PaneId; 9] = [
        PaneId::Partitions,
        PaneId::Replicas,
        PaneId::Watermarks,
        PaneId::Journal,
        PaneId::Offsets,
        PaneId::Consumers,
        PaneId::Pending,
        PaneId::Events,
        PaneId::Caption,
    ];

    /// The name in layout files.
    pub fn name(self) -> &'static str {
        match self {
            PaneId::Partitions => "partitions",
            PaneId::Replicas => "replicas",
            PaneId::Watermarks => "watermarks",
            PaneId::Journal => "journal",
            PaneId::Offsets => "offsets",
            PaneId::Consumers => "consumers",
            PaneId::Pending => "pending",
            PaneId::Events => "events",
            PaneId::Caption => "caption",
        }
    }

    /// The pane named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What a pane needs besides the view: language, theme, whether it has the
/// focus, its scroll position and the selected row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneContext {
    pub lang: Lang,
    pub theme: Theme,
    pub focused: bool,
    /// Rows scrolled from the natural position (the top, or for lists that
    /// follow new data, the bottom).
    pub scroll: usize,
    /// The selected row, if the pane has a selection.
    pub selected: Option<usize>,
}

/// Draws pane `id`.
pub fn render(id: PaneId, view: &View, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let _ = (id, view, ctx, area, buf);
}
