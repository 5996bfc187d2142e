//! Which panes presentation mode shows beside the caption (docs/dashboard.md
//! "Presentation"): the pair picked with `v`, else the lesson's (a step's
//! `present` hint, held until the next), else the pair that shows what the
//! step changed. Two panes stand side by side where the body is at least
//! [`SIDE_BY_SIDE`] columns wide; narrower, one above the other where the
//! body has the rows ([`stacks`]: 80x24 does), else the first alone.

use ratatui::layout::{Constraint, Layout, Rect};

use crate::session::snapshot::Snapshot;
use crate::ui::panes::{PaneId, touched};

/// The narrowest body that shows two panes side by side.
pub const SIDE_BY_SIDE: u16 = 100;

/// The rows each of two stacked panes gets at least: a partition's
/// header, its cells, their label row and the offsets under them in the
/// Log pane.
pub const STACKED_PANE_ROWS: u16 = 6;

/// Whether a body `width` x `height` too narrow for two panes side by
/// side stacks them, one above the other, over a caption of at least
/// [`crate::ui::presentation::MIN_ROWS`] rows.
pub fn stacks(width: u16, height: u16) -> bool {
    width < SIDE_BY_SIDE && height >= 2 * STACKED_PANE_ROWS + crate::ui::presentation::MIN_ROWS
}

/// The lowest area over the caption that also holds the events strip.
pub const STRIP_FROM_ROWS: u16 = 24;

/// The area of the chosen panes and, where `area` is at least
/// [`STRIP_FROM_ROWS`] high and they are not the events, the Events pane
/// under them across the width (a third of the height): what the last
/// steps did, in words, where a projector has the rows for it.
pub fn with_strip(shown: &[PaneId], area: Rect) -> (Rect, Option<(PaneId, Rect)>) {
    if area.height < STRIP_FROM_ROWS || shown.contains(&PaneId::Events) {
        return (area, None);
    }
    let [pair, strip] = Layout::vertical([Constraint::Fill(2), Constraint::Fill(1)]).areas(area);
    (pair, Some((PaneId::Events, strip)))
}

/// The pairs `v` cycles through, after the lesson's or the step's own.
pub const PAIRS: [[PaneId; 2]; 7] = [
    [PaneId::Log, PaneId::Consumers],
    [PaneId::Journal, PaneId::Offsets],
    [PaneId::Log, PaneId::Replicas],
    [PaneId::Log, PaneId::Journal],
    [PaneId::Partitions, PaneId::Consumers],
    [PaneId::Log, PaneId::Pending],
    [PaneId::Groups, PaneId::Offsets],
];

/// The next pick after `pick` (None: the lesson's or the step's, `own`):
/// the pairs in order, then back to None. A pair that is `own` is passed
/// over, so each press of `v` changes what the room sees.
pub fn next_pick(pick: Option<usize>, own: &[PaneId]) -> Option<usize> {
    let from = pick.map_or(0, |i| i + 1);
    (from..PAIRS.len()).find(|&i| PAIRS[i] != own)
}

/// The pair shown when `v` picked none: the lesson's (a step's `present`
/// hint), else the step's own ([`by_step`]).
pub fn own(view: &Snapshot) -> Vec<PaneId> {
    let lesson: Vec<PaneId> = view
        .present
        .iter()
        .filter_map(|n| PaneId::from_name(n))
        .collect();
    if lesson.is_empty() {
        by_step(view).to_vec()
    } else {
        lesson
    }
}

/// The panes shown, left (or top) first, in a body `width` x `height`.
pub fn chosen(pick: Option<usize>, view: &Snapshot, width: u16, height: u16) -> Vec<PaneId> {
    let mut panes = match pick.and_then(|i| PAIRS.get(i)) {
        Some(pair) => pair.to_vec(),
        None => own(view),
    };
    if width < SIDE_BY_SIDE && !stacks(width, height) {
        panes.truncate(1);
    }
    panes
}

/// The pair that shows what the step of `view` changed, the first rule
/// that holds:
///
/// 1. a crash (its moment of death, or recovery ran): journal and log;
/// 2. consumer offsets published or staged: journal and offsets;
/// 3. only the journal changed (a transaction began): journal and log;
/// 4. a broker stopped or started, or only replicas moved (a fetch, a
///    leader or ISR change, no log written on the leader): log and
///    replicas;
/// 5. something waits (an acks=all append, a producer's accumulator):
///    log and pending;
/// 6. consumer groups exist and no log changed: groups and offsets;
/// 7. otherwise what readers see: log and consumers.
pub fn by_step(view: &Snapshot) -> [PaneId; 2] {
    let c = &view.changes;
    let written = view
        .partitions
        .iter()
        .filter_map(|p| c.partition(&p.name()))
        .any(|pc| {
            !pc.new_batches.is_empty()
                || !pc.removed.is_empty()
                || !pc.fate_changed.is_empty()
                || pc.log_start_offset.is_some()
        });
    // Offsets staged: the step wrote the journal and no log while a
    // transaction holds staged offsets (a send_offsets).
    let staged = !c.journal_frames.is_empty()
        && !written
        && view
            .transactions
            .iter()
            .any(|t| !t.staged_offsets.is_empty());
    let crashed = view.before_recovery || view.moment_of_death.is_some();
    if crashed {
        [PaneId::Journal, PaneId::Log]
    } else if !c.published.is_empty() || staged {
        [PaneId::Journal, PaneId::Offsets]
    } else if !c.journal_frames.is_empty() && c.partitions.is_empty() {
        [PaneId::Journal, PaneId::Log]
    } else if !c.brokers_stopped.is_empty()
        || !c.brokers_started.is_empty()
        || (!written && touched::changed(view).is_some() && c.journal_frames.is_empty())
    {
        [PaneId::Log, PaneId::Replicas]
    } else if !view.pending.is_empty() || !view.accumulators.is_empty() {
        [PaneId::Log, PaneId::Pending]
    } else if !view.groups.is_empty() && !written {
        [PaneId::Groups, PaneId::Offsets]
    } else {
        [PaneId::Log, PaneId::Consumers]
    }
}

#[cfg(test)]
mod tests {
    use super::super::panes::testkit::view;
    use super::*;
    use crate::session::snapshot::diff::PartitionChanges;

    #[test]
    fn v_cycles_the_pairs_and_back_to_the_lessons() {
        let mut pick = None;
        let mut seen = Vec::new();
        for _ in 0..=PAIRS.len() {
            pick = next_pick(pick, &[PaneId::Events]);
            seen.push(pick);
        }
        assert_eq!(seen.first(), Some(&Some(0)));
        assert_eq!(seen[PAIRS.len() - 1], Some(PAIRS.len() - 1));
        assert_eq!(seen.last(), Some(&None));
    }

    #[test]
    fn v_passes_over_the_pair_already_shown() {
        // The lesson shows log and consumers, the first pair: the first
        // press shows the second.
        let own = [PaneId::Log, PaneId::Consumers];
        assert_eq!(PAIRS[0], own);
        assert_eq!(next_pick(None, &own), Some(1));
        let journal_offsets = [PaneId::Journal, PaneId::Offsets];
        assert_eq!(next_pick(Some(0), &journal_offsets), Some(2));
        let last = [PaneId::Groups, PaneId::Offsets];
        assert_eq!(PAIRS[PAIRS.len() - 1], last);
        assert_eq!(next_pick(Some(PAIRS.len() - 2), &last), None);
    }

    #[test]
    fn the_lesson_chooses_before_the_step_and_the_key_before_both() {
        let mut v = view();
        v.changes = Default::default();
        v.pending.clear();
        v.accumulators.clear();
        v.groups.clear();
        assert_eq!(chosen(None, &v, 160, 46), [PaneId::Log, PaneId::Consumers]);
        v.present = vec!["journal".into(), "offsets".into()];
        assert_eq!(
            chosen(None, &v, 160, 46),
            [PaneId::Journal, PaneId::Offsets]
        );
        assert_eq!(
            chosen(Some(2), &v, 160, 46),
            [PaneId::Log, PaneId::Replicas]
        );
        // 80x24's body (22 rows) stacks the two; lower, the first alone.
        let both = [PaneId::Journal, PaneId::Offsets];
        assert_eq!(chosen(None, &v, 80, 22), both, "narrow: stacked");
        assert_eq!(chosen(None, &v, 80, 17), [PaneId::Journal], "low: one");
    }

    #[test]
    fn the_step_kind_picks_the_pair() {
        let mut v = view();
        v.changes = Default::default();
        v.pending.clear();
        v.accumulators.clear();
        v.groups.clear();
        v.transactions.clear();
        let name = v.partitions[0].name();
        v.changes.journal_frames = vec![3];
        assert_eq!(by_step(&v), [PaneId::Journal, PaneId::Log], "a begin");
        v.changes.partitions.insert(
            name.clone(),
            PartitionChanges {
                new_batches: vec![0],
                ..Default::default()
            },
        );
        assert_eq!(by_step(&v), [PaneId::Log, PaneId::Consumers], "a send");
        v.changes.published.push(("g".into(), name.clone(), 1));
        assert_eq!(by_step(&v), [PaneId::Journal, PaneId::Offsets]);
        v.changes = Default::default();
        v.changes.partitions.insert(
            name,
            PartitionChanges {
                replica_leo: [(2, (0, 1))].into(),
                ..Default::default()
            },
        );
        assert_eq!(by_step(&v), [PaneId::Log, PaneId::Replicas], "a fetch");
    }
}
