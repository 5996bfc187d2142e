//! The sentences the events pane and the status line give for a crash, a
//! tear, and a commit or abort that crashed at its cut point (issue 12
//! item 4): what crashed, then what recovery did, built only from the
//! [`RecoveryReport`] fields, in its order, so the text is deterministic
//! and never claims more than the report says.
//!
//! ```text
//! commit of tx-1 crashed after PREPARE_COMMIT (cut point prepare); recovery completed tx-1 (offsets published, no markers written: book rules)
//! crash: recovery truncated 12 journal bytes, left tx-2 open (ongoing)
//! tear journal: cut 86 bytes; recovery truncated 86 journal bytes, left tx-2 open (ongoing)
//! ```

use crate::engine::core::recovery::{CompletedTransaction, RecoveryReport, ResentMarker};
use crate::engine::fault::TearReport;
use crate::engine::transaction::CutPoint;
use crate::engine::transaction::model::TransactionState;
use crate::session::action::TearTargetSpec;

/// What recovery did, as one clause list: "recovery truncated …, completed
/// tx-1 (…), left tx-2 open (ongoing)". `resend_markers` is the rule
/// switch: under the book's rules recovery writes no markers.
pub fn recovery(report: &RecoveryReport, resend_markers: bool) -> String {
    let mut clauses = Vec::new();
    if report.journal_truncated_bytes > 0 {
        clauses.push(format!(
            "truncated {} journal bytes",
            report.journal_truncated_bytes
        ));
    }
    for t in &report.logs_truncated {
        clauses.push(format!(
            "truncated {} bytes of {} on broker {}",
            t.truncated_bytes, t.tp, t.broker
        ));
    }
    for e in &report.leaders_reelected {
        clauses.push(format!(
            "moved the leader of {} from broker {} to broker {} (epoch {})",
            e.tp, e.old_leader, e.new_leader, e.leader_epoch
        ));
    }
    for c in &report.completed {
        clauses.push(completed(c, &report.markers_resent, resend_markers));
    }
    // Markers of no completed transaction (not expected: recovery re-sends
    // only while completing one) are still told.
    for m in report
        .markers_resent
        .iter()
        .filter(|m| !report.completed.iter().any(|c| c.id == m.id))
    {
        clauses.push(format!(
            "re-sent the {} marker of {} to {} at offset {}",
            m.control.name().to_uppercase(),
            m.id,
            m.tp,
            m.offset
        ));
    }
    if !report.left_open.is_empty() {
        clauses.push(format!(
            "left {} open (ongoing)",
            report.left_open.join(", ")
        ));
    }
    if clauses.is_empty() {
        "recovery found nothing to repair".to_string()
    } else {
        format!("recovery {}", clauses.join(", "))
    }
}

/// "completed tx-1 (offsets published, COMMIT marker re-sent to out-0 at offset 3)".
fn completed(c: &CompletedTransaction, resent: &[ResentMarker], resend_markers: bool) -> String {
    let offsets = if c.to == TransactionState::CompleteCommit {
        "offsets published"
    } else {
        "offsets discarded"
    };
    let mine: Vec<&ResentMarker> = resent.iter().filter(|m| m.id == c.id).collect();
    let markers = match mine.as_slice() {
        [] if resend_markers => "no marker was missing".to_string(),
        [] => "no markers written: book rules".to_string(),
        list => {
            let control = list[0].control.name().to_uppercase();
            let plural = if list.len() == 1 { "marker" } else { "markers" };
            let at: Vec<String> = list
                .iter()
                .map(|m| format!("{} at offset {}", m.tp, m.offset))
                .collect();
            format!("{control} {plural} re-sent to {}", at.join(" and "))
        }
    };
    format!("completed {} ({offsets}, {markers})", c.id)
}

/// Where a commit (`commit` true) or abort stopped: "after PREPARE_COMMIT".
pub fn cut_point(commit: bool, cut: CutPoint) -> String {
    let (prepare, control) = if commit {
        ("PREPARE_COMMIT", "COMMIT")
    } else {
        ("PREPARE_ABORT", "ABORT")
    };
    match cut {
        CutPoint::Prepare | CutPoint::Marker(0) => format!("after {prepare}"),
        CutPoint::Marker(1) => format!("after its first {control} marker"),
        CutPoint::Marker(k) => format!("after its first {k} {control} markers (or all, if fewer)"),
        CutPoint::Markers => format!("after all its {control} markers"),
        CutPoint::Offsets if commit => "after publishing its offsets".to_string(),
        CutPoint::Offsets => "after discarding its offsets".to_string(),
    }
}

/// A commit or abort that crashed at its cut point. `issued_at` is the
/// step that issued it, when it crashed at a later one (it was pending).
pub fn cut_crash(
    commit: bool,
    txn: &str,
    cut: CutPoint,
    issued_at: Option<usize>,
    report: &RecoveryReport,
    resend_markers: bool,
) -> String {
    let kind = if commit { "commit" } else { "abort" };
    let at = issued_at.map_or_else(String::new, |s| format!(" (step {s})"));
    format!(
        "{kind} of {txn}{at} crashed {} (cut point {}); {}",
        cut_point(commit, cut),
        cut.name(),
        recovery(report, resend_markers)
    )
}

/// A `crash` step.
pub fn crash(report: &RecoveryReport, resend_markers: bool) -> String {
    format!("crash: {}", recovery(report, resend_markers))
}

/// A `tear` step: the file, what was done to its tail, and the recovery.
pub fn tear(
    target: &TearTargetSpec,
    torn: &TearReport,
    report: &RecoveryReport,
    resend_markers: bool,
) -> String {
    let file = match target {
        TearTargetSpec::Journal => "journal".to_string(),
        TearTargetSpec::Log {
            topic,
            partition,
            broker,
        } => format!("{topic}-{partition} on broker {broker}"),
    };
    let damage = if torn.size_after < torn.size_before {
        format!("cut {} bytes", torn.size_before - torn.size_after)
    } else if torn.size_after > torn.size_before {
        format!(
            "appended {} garbage bytes",
            torn.size_after - torn.size_before
        )
    } else {
        "the file was unchanged".to_string()
    };
    format!(
        "tear {file}: {damage}; {}",
        recovery(report, resend_markers)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::TopicPartition;
    use crate::engine::core::batch::ControlType;
    use crate::engine::core::recovery::{LeaderReelection, LogTruncation};

    fn done(id: &str, from: TransactionState, to: TransactionState) -> CompletedTransaction {
        CompletedTransaction {
            id: id.into(),
            from,
            to,
        }
    }

    #[test]
    fn the_issues_example() {
        let report = RecoveryReport {
            completed: vec![done(
                "tx-1",
                TransactionState::PrepareCommit,
                TransactionState::CompleteCommit,
            )],
            ..RecoveryReport::default()
        };
        assert_eq!(
            cut_crash(true, "tx-1", CutPoint::Prepare, None, &report, false),
            "commit of tx-1 crashed after PREPARE_COMMIT (cut point prepare); recovery completed tx-1 (offsets published, no markers written: book rules)"
        );
    }

    #[test]
    fn every_field_of_the_report_is_told_in_order() {
        let tp = TopicPartition::new("out", 0);
        let report = RecoveryReport {
            logs_truncated: vec![LogTruncation {
                tp: tp.clone(),
                broker: 2,
                truncated_bytes: 11,
                reason: "bad crc".into(),
            }],
            leaders_reelected: vec![LeaderReelection {
                tp: tp.clone(),
                old_leader: 1,
                new_leader: 2,
                leader_epoch: 3,
            }],
            journal_truncated_bytes: 12,
            journal_reason: Some("torn".into()),
            completed: vec![done(
                "tx-a",
                TransactionState::PrepareAbort,
                TransactionState::CompleteAbort,
            )],
            markers_resent: vec![
                ResentMarker {
                    id: "tx-a".into(),
                    tp: tp.clone(),
                    control: ControlType::Abort,
                    offset: 4,
                },
                ResentMarker {
                    id: "tx-a".into(),
                    tp: TopicPartition::new("out", 1),
                    control: ControlType::Abort,
                    offset: 2,
                },
            ],
            left_open: vec!["tx-b".into(), "tx-c".into()],
        };
        assert_eq!(
            crash(&report, true),
            "crash: recovery truncated 12 journal bytes, truncated 11 bytes of out-0 on broker 2, \
             moved the leader of out-0 from broker 1 to broker 2 (epoch 3), \
             completed tx-a (offsets discarded, ABORT markers re-sent to out-0 at offset 4 and out-1 at offset 2), \
             left tx-b, tx-c open (ongoing)"
        );
        assert_eq!(
            crash(&RecoveryReport::default(), false),
            "crash: recovery found nothing to repair"
        );
    }

    #[test]
    fn cut_points_and_tears_are_named() {
        assert_eq!(cut_point(false, CutPoint::Prepare), "after PREPARE_ABORT");
        assert_eq!(
            cut_point(true, CutPoint::Marker(1)),
            "after its first COMMIT marker"
        );
        assert_eq!(
            cut_point(true, CutPoint::Markers),
            "after all its COMMIT markers"
        );
        assert_eq!(
            cut_point(true, CutPoint::Offsets),
            "after publishing its offsets"
        );
        let report = RecoveryReport {
            journal_truncated_bytes: 86,
            left_open: vec!["tx-2".into()],
            ..RecoveryReport::default()
        };
        let torn = TearReport {
            path: "/x/transactions.journal".into(),
            size_before: 300,
            size_after: 214,
        };
        assert_eq!(
            tear(&TearTargetSpec::Journal, &torn, &report, false),
            "tear journal: cut 86 bytes; recovery truncated 86 journal bytes, left tx-2 open (ongoing)"
        );
        let grown = TearReport {
            size_after: 315,
            ..torn
        };
        let log = TearTargetSpec::Log {
            topic: "out".into(),
            partition: 1,
            broker: 3,
        };
        assert!(
            tear(&log, &grown, &report, false)
                .starts_with("tear out-1 on broker 3: appended 15 garbage bytes; recovery")
        );
    }
}
