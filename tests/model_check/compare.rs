//! The engine's headless state against the model: every field compared
//! after every step, and the ground-truth invariants.

use std::collections::BTreeMap;

use minikafka::session::Snapshot;

use crate::model::replication::Payload;
use crate::model::txn::TxState;
use crate::model::{Failure, Model, Tp, tp_name};

/// Deliberate model errors, to prove that each comparison can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sabotage {
    None,
    HighWatermarkPlusOne,
    ShowAbortedData,
    ForgetCommittedOffsets,
    CompleteLooksPrepared,
    /// Ownership without end markers: the candidate instance owns every
    /// later batch of its id.
    RangesNeverEnd,
    /// Ownership by id: the id's latest instance decides (the book's
    /// `is_committed(transaction_id)`, the flaw SPEC E14 fixes).
    OwnerIsLatestOfId,
}

/// Compares one field; the message names it and shows both sides.
fn same<T: PartialEq + std::fmt::Debug>(what: &str, engine: T, model: T) -> Result<(), String> {
    if engine == model {
        Ok(())
    } else {
        Err(format!("{what}: engine {engine:?}, model {model:?}"))
    }
}

/// The state the engine shows against the model's prediction.
pub fn compare(state: &Snapshot, m: &Model, sabotage: Sabotage) -> Result<(), String> {
    same("clock_ms", state.clock_ms, m.clock)?;
    let tps: Vec<&Tp> = m.parts.keys().collect();
    same(
        "partitions",
        state
            .partitions
            .iter()
            .map(|p| format!("{}-{}", p.topic, p.partition))
            .collect::<Vec<_>>(),
        tps.iter().map(|tp| tp_name(tp)).collect(),
    )?;
    for (p, (tp, part)) in state.partitions.iter().zip(&m.parts) {
        let name = tp_name(tp);
        let at = |field: &str| format!("{name} {field}");
        same(&at("leader"), p.leader, part.leader)?;
        same(&at("leader_epoch"), p.leader_epoch, part.epoch)?;
        same(
            &at("isr"),
            p.isr.clone(),
            part.isr.iter().copied().collect(),
        )?;
        let mut hw = part.hw;
        if sabotage == Sabotage::HighWatermarkPlusOne && hw > 0 {
            hw += 1;
        }
        same(&at("high_watermark"), p.high_watermark, hw)?;
        same(&at("last_stable_offset"), p.last_stable_offset, m.lso(tp))?;
        same(
            &at("replicas (broker, LEO, in sync, stopped)"),
            p.replicas
                .iter()
                .map(|r| (r.broker, r.log_end_offset, r.in_sync, r.stopped))
                .collect::<Vec<_>>(),
            part.assignment
                .iter()
                .map(|b| {
                    let r = &part.replicas[b];
                    (*b, r.log.len() as i64, part.isr.contains(b), r.stopped)
                })
                .collect(),
        )?;
        same(
            &at("batches (offset, epoch, producer id, what)"),
            p.batches
                .iter()
                .map(|b| {
                    let what = match (b.kind.name(), b.control.map(|c| c.name())) {
                        ("control", Some(c)) => {
                            format!(
                                "{c} marker of {}",
                                b.transactional_id.clone().unwrap_or_default()
                            )
                        }
                        _ => {
                            let values: Vec<String> = b
                                .records
                                .iter()
                                .map(|r| r.value.clone().unwrap_or_default())
                                .collect();
                            match &b.transactional_id {
                                Some(t) => format!("{} in {t}", values.join(",")),
                                None => values.join(","),
                            }
                        }
                    };
                    (
                        b.base_offset,
                        i64::from(b.leader_epoch),
                        format!("pid {} {what}", b.producer_id),
                    )
                })
                .collect::<Vec<_>>(),
            part.leader_log()
                .iter()
                .enumerate()
                .map(|(o, b)| {
                    let what = match &b.payload {
                        Payload::Marker { txn, commit } => {
                            format!(
                                "{} marker of {txn}",
                                if *commit { "commit" } else { "abort" }
                            )
                        }
                        Payload::Data {
                            value,
                            txn: Some(t),
                        } => format!("{value} in {t}"),
                        Payload::Data { value, txn: None } => value.clone(),
                    };
                    (
                        o as i64,
                        i64::from(b.epoch),
                        format!("pid {} {what}", b.producer.0),
                    )
                })
                .collect(),
        )?;
        for b in &p.batches {
            same(&at("batch offsets"), b.last_offset, b.base_offset)?;
        }
        let (ru, mut rc) = m.consumers(tp);
        if sabotage == Sabotage::ShowAbortedData {
            rc = part
                .leader_log()
                .iter()
                .enumerate()
                .filter(|(o, _)| (*o as i64) < m.lso(tp) && !part.leader_stopped())
                .filter_map(|(_, b)| match &b.payload {
                    Payload::Data { value, .. } => Some(value.clone()),
                    Payload::Marker { .. } => None,
                })
                .collect();
        }
        let log = part.leader_log();
        let id_at = |o: i64| match &log[o as usize].payload {
            Payload::Data { txn: Some(id), .. } => Some(id.as_str()),
            _ => None,
        };
        let committed = |i: usize| m.coord.instance(i).state == TxState::CompleteCommit;
        match sabotage {
            Sabotage::RangesNeverEnd => {
                rc = m
                    .consumers_by(tp, |o| {
                        id_at(o)
                            .and_then(|id| m.coord.candidate(id, tp, o))
                            .is_some_and(committed)
                    })
                    .1;
            }
            Sabotage::OwnerIsLatestOfId => {
                rc = m
                    .consumers_by(tp, |o| {
                        id_at(o)
                            .and_then(|id| m.coord.latest(id))
                            .is_some_and(committed)
                    })
                    .1;
            }
            _ => {}
        }
        let values = |v: Option<&Vec<Option<String>>>| -> Vec<String> {
            v.map(|v| v.iter().map(|x| x.clone().unwrap_or_default()).collect())
                .unwrap_or_default()
        };
        same(
            &at("read_uncommitted"),
            values(state.consumers.read_uncommitted.get(&name)),
            ru,
        )?;
        same(
            &at("read_committed"),
            values(state.consumers.read_committed.get(&name)),
            rc,
        )?;
    }
    type TxnRow = (String, String, Vec<String>, BTreeMap<String, i64>, String);
    let transactions: Vec<TxnRow> = m
        .coord
        .current()
        .into_iter()
        .map(|(id, i)| {
            let d = m.coord.instance(i);
            let mut state = d.state.name();
            if sabotage == Sabotage::CompleteLooksPrepared && d.state == TxState::CompleteCommit {
                state = TxState::PrepareCommit.name();
            }
            (
                id.clone(),
                state.to_string(),
                d.first.iter().map(|(tp, _)| tp_name(tp)).collect(),
                d.first.iter().map(|(tp, o)| (tp_name(tp), *o)).collect(),
                format!(
                    "{:?}",
                    d.staged
                        .iter()
                        .map(|(g, o)| (
                            g.clone(),
                            o.iter().map(|(tp, v)| (tp_name(tp), *v)).collect()
                        ))
                        .collect::<BTreeMap<String, BTreeMap<String, i64>>>()
                ),
            )
        })
        .collect();
    same(
        "transactions (id, state, partitions, first offsets, staged offsets)",
        state
            .transactions
            .iter()
            .map(|t| {
                (
                    t.id.clone(),
                    t.state.to_string(),
                    t.partitions.clone(),
                    t.first_offsets.clone(),
                    format!("{:?}", t.staged_offsets),
                )
            })
            .collect::<Vec<_>>(),
        transactions,
    )?;
    let mut committed: BTreeMap<String, BTreeMap<String, i64>> = m
        .offsets
        .iter()
        .map(|(g, o)| {
            (
                g.clone(),
                o.iter().map(|(tp, v)| (tp_name(tp), *v)).collect(),
            )
        })
        .collect();
    if sabotage == Sabotage::ForgetCommittedOffsets {
        committed.clear();
    }
    same(
        "committed_offsets",
        state.committed_offsets.clone(),
        committed,
    )?;
    same(
        "journal (frames, bytes)",
        (state.journal.frames, state.journal.bytes),
        (m.coord.frames.len(), m.coord.journal_bytes()),
    )?;
    same(
        "last_recovery (journal truncated bytes, logs truncated, leaders re-elected, completed, markers re-sent, left open)",
        state.last_recovery.as_ref().map(|r| {
            (
                r.journal_truncated_bytes,
                r.logs_truncated
                    .iter()
                    .map(|l| (format!("{}-{}", l.topic, l.partition), l.broker))
                    .collect::<Vec<_>>(),
                r.leaders_reelected
                    .iter()
                    .map(|e| {
                        (
                            format!("{}-{}", e.topic, e.partition),
                            e.old_leader,
                            e.new_leader,
                            e.leader_epoch,
                        )
                    })
                    .collect::<Vec<_>>(),
                r.completed.clone(),
                r.markers_resent
                    .iter()
                    .map(|mk| {
                        (
                            mk.txn.clone(),
                            mk.partition.clone(),
                            mk.control.name(),
                            mk.offset,
                        )
                    })
                    .collect::<Vec<_>>(),
                r.left_open.clone(),
            )
        }),
        m.last_recovery.as_ref().map(|r| {
            (
                r.journal_truncated_bytes,
                r.logs_truncated.clone(),
                r.leaders_reelected.clone(),
                r.completed.clone(),
                r.markers_resent.clone(),
                r.left_open.clone(),
            )
        }),
    )?;
    same(
        "pending (step, kind, txn, waiting for, queued behind)",
        state
            .pending
            .iter()
            .map(|p| {
                (
                    p.action_step,
                    p.kind.clone(),
                    p.txn.clone(),
                    p.waiting_for.clone(),
                    p.queued_behind,
                )
            })
            .collect::<Vec<_>>(),
        m.pending()
            .into_iter()
            .map(|p| {
                (
                    p.step,
                    p.kind.to_string(),
                    p.txn,
                    p.waiting_for,
                    p.queued_behind,
                )
            })
            .collect(),
    )?;
    let mut errors: Vec<(usize, Option<Failure>)> = state
        .errors
        .iter()
        .map(|e| (e.step, Failure::classify(&e.message)))
        .collect();
    errors.sort();
    let mut expected: Vec<(usize, Option<Failure>)> =
        m.errors.iter().map(|&(s, f)| (s, Some(f))).collect();
    expected.sort();
    same("errors (step, kind)", errors, expected)?;
    Ok(())
}

/// Ground-truth invariants, independent of how the engine (and the model)
/// attribute batches to transaction instances.
pub fn invariants(m: &Model) -> Result<(), String> {
    // Acknowledged writes stay in the leader's log, at their offset; an
    // acknowledged send of a committed instance is read_committed once the
    // LSO passes it, unless a tear cut that instance's journal frames (a
    // send whose frame is gone belongs to no instance: E9, documented).
    for w in &m.truth.acked {
        let b = m.parts[&w.tp].leader_log().get(w.offset as usize);
        let kept = b
            .is_some_and(|b| matches!(&b.payload, Payload::Data { value: v, .. } if *v == w.value));
        if !kept {
            return Err(format!(
                "acknowledged {:?} at {}@{} is gone from the leader's log",
                w.value,
                tp_name(&w.tp),
                w.offset
            ));
        }
        let committed = w
            .writer
            .filter(|i| !m.truth.torn.contains(i))
            .and_then(|i| m.coord.get(i))
            .is_some_and(|d| d.state == TxState::CompleteCommit);
        if committed && w.offset < m.lso(&w.tp) && !m.parts[&w.tp].leader_stopped() {
            let (_, rc) = m.consumers(&w.tp);
            if !rc.contains(&w.value) {
                return Err(format!(
                    "acknowledged {:?} at {}@{} of a committed instance is not read_committed",
                    w.value,
                    tp_name(&w.tp),
                    w.offset
                ));
            }
        }
    }
    // read_committed never shows data whose writing instance did not commit.
    for (tp, part) in &m.parts {
        if part.leader_stopped() {
            continue;
        }
        let lso = m.lso(tp);
        for (offset, b) in part.leader_log().iter().enumerate() {
            let offset = offset as i64;
            let Payload::Data {
                txn: Some(id),
                value,
            } = &b.payload
            else {
                continue;
            };
            let log = part.leader_log();
            if offset >= lso || !m.coord.is_committed(tp, offset, log) {
                continue;
            }
            let writer = b.writer.and_then(|w| m.coord.get(w));
            let writer_committed = writer.is_some_and(|w| w.state == TxState::CompleteCommit);
            // The book's documented limit (docs/engine-decisions.md, "Known
            // limits"): a committed instance without an end marker (recovery
            // did not write it) owns a later instance's unjournaled write.
            let owner = m.coord.owner(tp, offset, log);
            let book_limit = !m.setup.kafka
                && owner != b.writer
                && owner.is_some_and(|o| m.coord.marker(o, tp, true, log).is_none());
            if !writer_committed && !book_limit {
                return Err(format!(
                    "read_committed shows {value:?} at {}@{offset}, written by {id} instance {:?} which is {}",
                    tp_name(tp),
                    b.writer,
                    writer.map_or("unknown to the journal", |w| w.state.name())
                ));
            }
        }
    }
    // Committed offsets come from committed instances only.
    for (group, offsets) in &m.offsets {
        for (tp, value) in offsets {
            let by = m.truth.staged_by.get(value).and_then(|&i| m.coord.get(i));
            if by.is_none_or(|d| d.state != TxState::CompleteCommit) {
                return Err(format!(
                    "committed offset {group} {} = {value} was staged by an instance that is {}",
                    tp_name(tp),
                    by.map_or("unknown", |d| d.state.name())
                ));
            }
        }
    }
    Ok(())
}
