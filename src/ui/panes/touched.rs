//! The partition the last step touched: the one every pane that lists
//! partitions (partitions, log, consumers, replicas, watermarks) brings
//! into view and marks, in live, replay and observe alike
//! (docs/dashboard.md "Following the step").
//!
//! It is read from the snapshot's changes (the same diff the panes mark
//! with `▸`), most telling change first, so a step that wrote to one
//! partition and moved another's HW is followed to the one it wrote:
//!
//! 1. its log: a batch appended, removed or whose fate changed, or the
//!    log start moved;
//! 2. what readers see: the HW or LSO moved, a reader gained records;
//! 3. its replicas: a LEO moved, the ISR or the leader changed;
//! 4. a committed offset published for it.
//!
//! Within a rank, the first in the snapshot's order. A step that changed
//! no partition is followed to the partition its action names, if it
//! names one (the app knows the action: [`named`]).

use ratatui::text::Span;

use super::PaneContext;
use crate::session::snapshot::Snapshot;
use crate::session::snapshot::diff::PartitionChanges;
use crate::ui::theme::Theme;

/// How telling a partition's change is: lower is more (see the module
/// comment); None when it did not change.
fn rank(c: &PartitionChanges) -> Option<u8> {
    if !c.new_batches.is_empty()
        || !c.removed.is_empty()
        || !c.fate_changed.is_empty()
        || c.log_start_offset.is_some()
    {
        Some(0)
    } else if c.high_watermark.is_some()
        || c.last_stable_offset.is_some()
        || !c.read_committed_gained.is_empty()
        || !c.read_uncommitted_gained.is_empty()
    {
        Some(1)
    } else if !c.replica_leo.is_empty()
        || !c.isr_joined.is_empty()
        || !c.isr_left.is_empty()
        || c.leader.is_some()
        || c.leader_epoch.is_some()
    {
        Some(2)
    } else {
        None
    }
}

/// The partition (its index in `view.partitions`) the step of `view`
/// changed most tellingly, or None when it changed none.
pub fn changed(view: &Snapshot) -> Option<usize> {
    let ranked = view
        .partitions
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let r = rank(view.changes.partition(&p.name())?)?;
            Some((r, i))
        })
        .min();
    ranked.map(|(_, i)| i).or_else(|| {
        view.changes
            .published
            .iter()
            .find_map(|(_, name, _)| view.partitions.iter().position(|p| p.name() == *name))
    })
}

/// The index of partition `partition` of `topic` in `view`, if it has one:
/// what a step that changed nothing is followed to.
pub fn named(view: &Snapshot, topic: &str, partition: u32) -> Option<usize> {
    view.partitions
        .iter()
        .position(|p| p.topic == topic && p.partition == partition)
}

/// The mark before the touched partition's name: the changed glyph, so
/// `NO_COLOR` keeps it, in the changed mark's colour.
pub fn mark(ctx: &PaneContext) -> Span<'static> {
    Span::styled(Theme::CHANGED_GLYPH, ctx.theme.changed_mark())
}

/// `name` as a pane writes the partition at `index`: after the mark when
/// it is the touched one.
pub fn name_spans(ctx: &PaneContext, index: usize, name: String) -> Vec<Span<'static>> {
    let mut spans = Vec::with_capacity(2);
    if ctx.touched == Some(index) {
        spans.push(mark(ctx));
    }
    spans.push(Span::styled(name, ctx.theme.strong()));
    spans
}

/// The smallest scroll (in partitions) from which `heights[p]` (each
/// partition's rows, a separator included) is drawn whole in `height`
/// rows, or `p` when it never is: a pane that skips whole partitions
/// brings `p` into view with as many of the partitions before it as fit.
pub fn first_shown(heights: &[usize], height: usize, p: usize) -> usize {
    let mut used = 0;
    let mut first = p;
    for s in (0..=p.min(heights.len().saturating_sub(1))).rev() {
        used += heights[s];
        if used > height {
            break;
        }
        first = s;
    }
    first
}

#[cfg(test)]
mod tests {
    use super::super::testkit::view;
    use super::*;
    use crate::session::snapshot::diff::PartitionChanges;

    fn two() -> Snapshot {
        let mut v = view();
        let mut second = v.partitions[0].clone();
        second.partition = 1;
        v.partitions.push(second);
        v.changes.partitions.clear();
        v
    }

    #[test]
    fn a_written_log_wins_over_a_moved_mark_and_order_breaks_ties() {
        let mut v = two();
        assert_eq!(changed(&v), None);
        v.changes.partitions.insert(
            "out-0".into(),
            PartitionChanges {
                high_watermark: Some((1, 2)),
                ..Default::default()
            },
        );
        assert_eq!(changed(&v), Some(0));
        v.changes.partitions.insert(
            "out-1".into(),
            PartitionChanges {
                new_batches: vec![6],
                ..Default::default()
            },
        );
        assert_eq!(changed(&v), Some(1), "the log written, not the HW moved");
        v.changes.partitions.insert(
            "out-0".into(),
            PartitionChanges {
                removed: vec![3],
                ..Default::default()
            },
        );
        assert_eq!(changed(&v), Some(0), "same rank: the first");
    }

    #[test]
    fn published_offsets_and_named_partitions() {
        let mut v = two();
        v.changes.published.push(("g".into(), "out-1".into(), 4));
        assert_eq!(changed(&v), Some(1));
        assert_eq!(named(&v, "out", 1), Some(1));
        assert_eq!(named(&v, "out", 7), None);
        assert_eq!(named(&v, "orders", 0), None);
    }

    #[test]
    fn first_shown_keeps_earlier_partitions_that_fit() {
        assert_eq!(first_shown(&[3, 3, 3, 3], 7, 0), 0);
        assert_eq!(first_shown(&[3, 3, 3, 3], 7, 1), 0);
        assert_eq!(first_shown(&[3, 3, 3, 3], 7, 3), 2);
        // Too tall to fit whole: from itself.
        assert_eq!(first_shown(&[3, 9, 3], 7, 1), 1);
    }
}
