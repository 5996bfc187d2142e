//! What the app knows of the frames it draws: the input a frame is drawn
//! from, and the map of the last one drawn (docs/dashboard.md "The
//! frame's map"), which clicks and scroll limits read so the app never
//! lays the screen out itself.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{App, NORMAL_SPEED, SPEEDS};
use crate::session::Snapshot;
use crate::ui::frame::{self, FrameInput, FrameMap, Shown, ViewState};
use crate::ui::panes::PaneId;

impl App {
    /// The help's last useful scroll position: its last page in the
    /// frame's map, or (size unknown) its last entry.
    pub(super) fn help_scroll_limit(&mut self) -> usize {
        match self.frame_map() {
            Some(map) => map.help_last,
            None => crate::ui::help::entries(&*self).saturating_sub(1),
        }
    }

    /// How far pane `pane` scrolls, in its own unit (partitions, frames,
    /// rows): past it the pane would show nothing new. Panes whose rows
    /// wrap count them at their width in the frame's map when they are on
    /// screen; otherwise they get a bound that is never too short.
    pub(super) fn scroll_limit(&mut self, pane: PaneId) -> usize {
        let exact = self
            .frame_map()
            .and_then(|map| map.rows.get(&pane))
            .map(|n| n.saturating_sub(1));
        exact.unwrap_or_else(|| crate::ui::panes::scroll_limit(pane, self.view()))
    }

    /// The map of the frame on screen: the last one drawn ([`Self::draw`]),
    /// or, before the first draw or when the state changed since one drawn
    /// only for its map, the current state drawn at the terminal's size
    /// into a throwaway buffer by the same [`frame::draw`]
    /// (docs/dashboard.md "The frame's map"). None while the size is
    /// unknown.
    pub fn frame_map(&mut self) -> Option<&FrameMap> {
        let area = self.size.map(|(cols, rows)| Rect::new(0, 0, cols, rows));
        let kept = match &self.last_map {
            Some((map, None)) => area.is_none_or(|a| a == map.area),
            Some((map, Some(n))) => Some(map.area) == area && *n == self.generation,
            None => false,
        };
        if !kept {
            let mut buf = Buffer::empty(area?);
            let input = FrameInput {
                values: None,
                ..self.frame_input()
            };
            let map = frame::draw(&input, &mut buf);
            self.last_map = Some((map, Some(self.generation)));
        }
        self.last_map.as_ref().map(|(map, _)| map)
    }

    /// Draws the frame into `buf` (the terminal's) and keeps its map for
    /// the clicks and scrolling that follow.
    pub fn draw(&mut self, buf: &mut Buffer) {
        let map = frame::draw(&self.frame_input(), buf);
        self.last_map = Some((map, None));
    }

    /// What the next frame is drawn from: the current snapshot and view
    /// state, and the source of its values.
    pub fn frame_input(&self) -> FrameInput<'_> {
        FrameInput {
            view: self.view(),
            state: self.into(),
            values: Some(self.session.source()),
        }
    }

    /// The snapshot a frame of `area` is drawn from: [`Self::view`] with
    /// the records of the batch rows that frame draws.
    pub fn snapshot_for(&self, area: Rect) -> Snapshot {
        let input = self.frame_input();
        let mut view = input.view.clone();
        frame::values(&input, &frame::map(&input, area)).write_into(&mut view);
        view
    }
}

impl<'a> From<&'a App> for ViewState<'a> {
    /// The view state a frame of `app` is drawn with.
    fn from(app: &'a App) -> Self {
        let session = &app.session;
        let shown = match () {
            _ if session.is_live() => Shown::Live,
            _ if session.is_saved() => Shown::Saved,
            _ if app.is_playing() => Shown::Playing,
            _ if app.is_replay() => Shown::Replay,
            _ => Shown::Observing,
        };
        ViewState {
            layout: &app.layout,
            lang: app.lang,
            theme: app.theme,
            focus: app.focused(),
            scroll: &app.scroll,
            selected: &app.selected,
            isolation: app.isolation,
            touched: app.touched_partition(),
            zoomed: app.zoomed,
            presenting: app.presenting,
            present_pick: app.present_pick,
            help: app.help_drawn().then_some(app.help_scroll),
            help_recorded: app.recorded_help && !app.show_help,
            prompt: app.prompt.as_ref(),
            status: app.status.as_ref(),
            shown,
            speed: (app.speed != NORMAL_SPEED).then_some(SPEEDS[app.speed]),
            live_at_moment: app.live_at_moment(),
            bar: crate::ui::keys::BarState {
                replay: app.is_replay(),
                playing: app.is_playing(),
                zoomed: app.zoomed,
                presenting: app.presenting,
                saved: session.is_saved(),
                observing: app.is_observing(),
                focus: app.focused(),
                player: app.player_keys,
            },
        }
    }
}
