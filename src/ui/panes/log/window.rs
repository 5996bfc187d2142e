//! The log pane's model: which offsets a partition's rows show (the
//! [`Window`] of [`Slot`]s, one per offset or one per batch) and what each
//! replica holds at each of them (a [`Cell`]). Pure functions of the
//! snapshot, so the drawing and the tests read the same cells.

use crate::session::snapshot::{BatchSnapshot, PartitionSnapshot, ReplicaBatch, ReplicaSnapshot};

/// The narrowest cell: a glyph, one character, its right boundary.
pub const MIN_CELL: usize = 3;
/// The widest cell: a glyph, fourteen characters, its right boundary.
pub const MAX_CELL: usize = 16;

/// The offsets one column of cells stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub from: i64,
    pub to: i64,
}

/// Which offsets a partition's rows show, and how wide a cell is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The columns, in offset order, contiguous.
    pub slots: Vec<Slot>,
    /// One cell per batch (the offsets do not fit) instead of one per offset.
    pub per_batch: bool,
    /// Columns per cell, its right boundary included.
    pub cell: usize,
}

impl Window {
    /// The offset after the last slot.
    pub fn end(&self) -> Option<i64> {
        self.slots.last().map(|s| s.to + 1)
    }

    /// The index of the slot that starts at or holds `offset`, or the
    /// number of slots for the end; None when `offset` is outside.
    pub fn boundary(&self, offset: i64) -> Option<usize> {
        let first = self.slots.first()?;
        if offset < first.from || offset > self.end()? {
            return None;
        }
        Some(self.slots.partition_point(|s| s.to < offset))
    }
}

/// The window of partition `p` for rows `rows` in `width` columns of cells:
/// one cell per offset if every offset the snapshot holds fits, else one
/// per batch (the union of every row's batch boundaries, so rows stay
/// aligned), the newest that fit.
pub fn window(p: &PartitionSnapshot, rows: &[&ReplicaSnapshot], width: usize) -> Window {
    let leader = p.window();
    let first = leader.first().map_or(p.log_start_offset, |b| b.base_offset);
    let end = rows
        .iter()
        .map(|r| r.log_end_offset)
        .chain([p.log_end_offset])
        .max()
        .unwrap_or(first);
    let fit = width / MIN_CELL;
    if end <= first || fit == 0 {
        return Window {
            slots: Vec::new(),
            per_batch: false,
            cell: MIN_CELL,
        };
    }
    let (slots, per_batch) = if end - first <= fit as i64 {
        let slots = (first..end).map(|o| Slot { from: o, to: o }).collect();
        (slots, false)
    } else {
        let mut starts: Vec<i64> = leader
            .iter()
            .map(|b| b.base_offset)
            .chain(
                rows.iter()
                    .flat_map(|r| r.window().iter().map(|b| b.base_offset)),
            )
            .chain([first])
            .filter(|o| (first..end).contains(o))
            .collect();
        // Runs already in order (the leader's, then each replica's):
        // the stable sort merges them, where an unstable one sorts anew.
        starts.sort();
        starts.dedup();
        let starts = &starts[starts.len().saturating_sub(fit)..];
        let slots = starts
            .iter()
            .enumerate()
            .map(|(i, &from)| Slot {
                from,
                to: starts.get(i + 1).map_or(end, |next| *next) - 1,
            })
            .collect();
        (slots, true)
    };
    let n: usize = Vec::len(&slots);
    Window {
        cell: (width / n).clamp(MIN_CELL, MAX_CELL),
        slots,
        per_batch,
    }
}

/// The replicas of `p` as rows: the leader first, then the others in the
/// partition's order.
pub fn rows(p: &PartitionSnapshot) -> Vec<&ReplicaSnapshot> {
    let is_leader = |r: &ReplicaSnapshot| r.is_leader || r.broker == p.leader;
    let leader = p.replicas.iter().position(is_leader);
    leader
        .map(|i| &p.replicas[i])
        .into_iter()
        .chain(
            p.replicas
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != leader)
                .map(|(_, r)| r),
        )
        .collect()
}

/// What one row shows at one slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell<'a> {
    /// The replica does not hold the offset (yet): its row is shorter.
    Empty,
    /// The leader's batch (its index in the partition's window): on the
    /// leader, or on a follower that holds the same batch.
    Batch(usize, &'a BatchSnapshot),
    /// A batch of this replica that the leader does not hold.
    Divergent(&'a ReplicaBatch),
    /// Held, but older than every batch the snapshot carries.
    Unknown,
    /// An offset no batch holds any more: key compaction removed its
    /// record and with it the whole batch (E16).
    Compacted,
}

/// The leader's batch at `offset` (its index in the window).
pub fn leader_batch(p: &PartitionSnapshot, offset: i64) -> Option<(usize, &BatchSnapshot)> {
    let w = p.window();
    let i = w.partition_point(|b| b.last_offset < offset);
    w.get(i).filter(|b| b.base_offset <= offset).map(|b| (i, b))
}

/// What replica `r` (the leader if `leader`) holds at `offset`.
pub fn cell<'a>(
    p: &'a PartitionSnapshot,
    r: &'a ReplicaSnapshot,
    leader: bool,
    offset: i64,
) -> Cell<'a> {
    if offset >= r.log_end_offset || offset < p.log_start_offset {
        return Cell::Empty;
    }
    if !leader {
        let w = r.window();
        let i = w.partition_point(|b| b.last_offset < offset);
        if let Some(b) = w.get(i).filter(|b| b.covers(offset))
            && b.divergent
        {
            return Cell::Divergent(b);
        }
    }
    match leader_batch(p, offset) {
        Some((i, b)) => Cell::Batch(i, b),
        // Between batches the snapshot carries: a gap compaction left.
        None if p.window().first().is_some_and(|b| b.base_offset < offset) => Cell::Compacted,
        None => Cell::Unknown,
    }
}

/// Whether two neighbouring cells of a row are the same batch (the
/// boundary between them is then `┊`, not `│`).
pub fn same_batch(a: Cell<'_>, b: Cell<'_>) -> bool {
    match (a, b) {
        (Cell::Batch(i, _), Cell::Batch(j, _)) => i == j,
        (Cell::Divergent(x), Cell::Divergent(y)) => std::ptr::eq(x, y),
        _ => false,
    }
}
