//! The sentences the events pane and the status line give for a step, in
//! English and Chinese: how it ended ([`step`]), how an earlier step's
//! pending operation ended ([`completed`], [`failed`]), and for a crash, a
//! tear, or a commit or abort that crashed at its cut point, what crashed
//! and then what recovery did, built only from the [`RecoveryReport`]
//! fields, in its order, so the text is deterministic and never claims
//! more than the report says. Pure functions: the driver only calls them.
//!
//! ```text
//! commit of tx-1 crashed after PREPARE_COMMIT (cut point prepare); recovery completed tx-1 (offsets published, no markers written: book rules)
//! crash: recovery truncated 12 journal bytes, left tx-2 open (ongoing)
//! tear journal: cut 86 bytes; recovery truncated 86 journal bytes, left tx-2 open (ongoing)
//! ```

use crate::engine::MiniKafkaError;
use crate::engine::core::cluster::delete::DeletedTopic;
use crate::engine::core::recovery::{CompletedTransaction, RecoveryReport, ResentMarker};
use crate::engine::fault::TearReport;
use crate::engine::transaction::CutPoint;
use crate::engine::transaction::model::TransactionState;
use crate::session::action::{Action, TearTargetSpec};
use crate::session::outcome::ActionError;
use crate::session::said::{self, Said};

/// How a step's own action ended, as its sentence needs it.
#[derive(Debug, Clone, Copy)]
pub enum StepEnd<'a> {
    Ok,
    Pending,
    /// An exact retry answered with the original's offsets (E7).
    Duplicate {
        first: i64,
        last: i64,
    },
    /// It crashed the cluster on purpose: what crashed and the recovery.
    Recovered(&'a Said),
    /// It went well, and what it did is worth saying (a consumer-group
    /// step's rebalance, a poll's records: `narrate_groups`).
    OkTold(&'a Said),
    /// It went well, but an earlier step's pending commit or abort crashed
    /// at its cut point meanwhile (that crash's sentence).
    OkThenCrash(&'a Said),
    Error(&'a ActionError),
}

/// The sentence of a step: "produce: ok", "commit: error: …".
pub fn step(action: &Action, end: StepEnd) -> Said {
    let (name, name_zh) = (action.name(), said::action_zh(action.name()));
    match end {
        StepEnd::Error(e) => Said::new(
            format!("{name}: error: {e}"),
            format!(
                "{name_zh}：错误 {}：{}",
                e.code(),
                crate::session::error_zh::action_error_zh(e)
            ),
        ),
        StepEnd::Recovered(told) => told.clone(),
        StepEnd::Duplicate { first, last } => Said::new(
            format!(
                "{name}: an exact retry, answered with the original offsets {first}..{last} (E7: duplicate, nothing appended)"
            ),
            format!(
                "{name_zh}：完全相同的重试，以原 offset {first}..{last} 回答（E7：重复，未追加）"
            ),
        ),
        StepEnd::OkTold(told) => Said::new(
            format!("{name}: ok; {}", told.en),
            format!("{name_zh}：完成；{}", told.zh),
        ),
        StepEnd::OkThenCrash(crash) => Said::new(
            format!("{name}: ok; {}", crash.en),
            format!("{name_zh}：完成；{}", crash.zh),
        ),
        StepEnd::Ok => plain(name, name_zh, "ok"),
        StepEnd::Pending => match action {
            // `X` on a commit or abort that waits: the crash is armed, and
            // the status says so (a new user's trial saw only "pending",
            // then the crash on a later `r`).
            Action::Commit {
                crash_after: Some(cut),
                ..
            }
            | Action::Abort {
                crash_after: Some(cut),
                ..
            } => Said::new(
                format!(
                    "{name}: pending; crash armed at cut point {}: it fires when the {name} runs",
                    cut.name()
                ),
                format!(
                    "{name_zh}：等待中；已设定在切点 {} 崩溃：{name_zh}执行时触发",
                    cut.name()
                ),
            ),
            _ => plain(name, name_zh, "pending"),
        },
    }
}

/// "produce: ok", "生产：完成".
fn plain(name: &str, name_zh: &str, outcome: &str) -> Said {
    Said::new(
        format!("{name}: {outcome}"),
        format!("{name_zh}：{}", said::outcome_zh(outcome)),
    )
}

/// A topic grown by `create_partitions`: what a lesson on it watches for.
pub fn grown(topic: &str, from: u32, to: u32) -> Said {
    Said::new(
        format!(
            "topic {topic} grows from {from} to {to} partitions: a key now hashes mod {to}, so it may land on another partition than before, and a group rebalances onto the new ones when its members see them"
        ),
        format!(
            "topic {topic} 的分区从 {from} 个增加到 {to} 个：key 现在按 {to} 取模，可能落到与之前不同的分区；消费组的成员看到新分区后重平衡到它们上"
        ),
    )
}

/// A topic deleted by `delete_topic`: what went with it.
pub fn deleted_topic(topic: &str, gone: &DeletedTopic) -> Said {
    let DeletedTopic {
        partitions,
        replicas,
        offsets,
    } = gone;
    Said::new(
        format!(
            "topic {topic} deleted: its {partitions} partition(s), {replicas} replica log(s) on the brokers and {offsets} committed offset(s); a consumer drops its partitions, and the name is free again"
        ),
        format!(
            "topic {topic} 已删除：{partitions} 个分区、broker 上的 {replicas} 个副本日志和 {offsets} 个已提交的 offset 随之删除；消费者不再读它的分区，这个名字可以再次使用"
        ),
    )
}

/// A pending operation of an earlier step that finished well.
pub fn completed(kind: &str, step: usize) -> Said {
    Said::new(
        format!("{kind} of step {step} completed"),
        format!("步骤 {step} 的{}已完成", said::action_zh(kind)),
    )
}

/// A pending operation of an earlier step that failed.
pub fn failed(kind: &str, step: usize, e: &MiniKafkaError) -> Said {
    Said::new(
        format!("{kind} of step {step} failed: {e}"),
        format!(
            "步骤 {step} 的{}失败，错误 {}：{}",
            said::action_zh(kind),
            e.code(),
            crate::session::error_zh::error_zh(e)
        ),
    )
}

/// What recovery did, as one clause list: "recovery truncated …, completed
/// tx-1 (…), left tx-2 open (ongoing)". `resend_markers` is the rule
/// switch: under the book's rules recovery writes no markers.
pub fn recovery(report: &RecoveryReport, resend_markers: bool) -> Said {
    let mut clauses = Vec::new();
    if report.journal_truncated_bytes > 0 {
        let n = report.journal_truncated_bytes;
        clauses.push(Said::new(
            format!("truncated {n} journal bytes"),
            format!("截断事务日志 {n} 字节"),
        ));
    }
    for t in &report.logs_truncated {
        let (n, tp, b) = (t.truncated_bytes, &t.tp, t.broker);
        clauses.push(Said::new(
            format!("truncated {n} bytes of {tp} on broker {b}"),
            format!("截断 broker {b} 上 {tp} 的 {n} 字节"),
        ));
    }
    for r in &report.swaps_repaired {
        let (tp, b) = (&r.tp, r.broker);
        clauses.push(Said::new(
            format!("on broker {b}, {tp}: {}", r.repair.describe()),
            format!("broker {b} 上的 {tp}：{}", r.repair.describe_zh()),
        ));
    }
    for e in &report.leaders_reelected {
        let (tp, a, b, epoch) = (&e.tp, e.old_leader, e.new_leader, e.leader_epoch);
        clauses.push(Said::new(
            format!("moved the leader of {tp} from broker {a} to broker {b} (epoch {epoch})"),
            format!("把 {tp} 的 leader 从 broker {a} 移到 broker {b}（epoch {epoch}）"),
        ));
    }
    for c in &report.completed {
        clauses.push(completed_in_recovery(
            c,
            &report.markers_resent,
            resend_markers,
        ));
    }
    // Markers of no completed transaction (not expected: recovery re-sends
    // only while completing one) are still told.
    for m in report
        .markers_resent
        .iter()
        .filter(|m| !report.completed.iter().any(|c| c.id == m.id))
    {
        let control = m.control.name().to_uppercase();
        clauses.push(Said::new(
            format!(
                "re-sent the {control} marker of {} to {} at offset {}",
                m.id, m.tp, m.offset
            ),
            format!(
                "向 {} 补写 {} 的 {control}标记（offset {}）",
                m.tp, m.id, m.offset
            ),
        ));
    }
    if !report.deletions_finished.is_empty() {
        clauses.push(Said::new(
            format!(
                "finished deleting topic {} (cut short by the crash)",
                report.deletions_finished.join(", ")
            ),
            format!(
                "完成了被崩溃打断的 topic {} 删除",
                report.deletions_finished.join("、")
            ),
        ));
    }
    if !report.left_open.is_empty() {
        clauses.push(Said::new(
            format!("left {} open (ongoing)", report.left_open.join(", ")),
            format!("{} 仍为进行中（ONGOING）", report.left_open.join("、")),
        ));
    }
    if clauses.is_empty() {
        Said::new("recovery found nothing to repair", "恢复：无需修复")
    } else {
        let all = Said::join(&clauses, ", ", "，");
        Said::new(format!("recovery {}", all.en), format!("恢复：{}", all.zh))
    }
}

/// "completed tx-1 (offsets published, COMMIT marker re-sent to out-0 at offset 3)".
fn completed_in_recovery(
    c: &CompletedTransaction,
    resent: &[ResentMarker],
    resend_markers: bool,
) -> Said {
    let offsets = if c.to == TransactionState::CompleteCommit {
        Said::new("offsets published", "offset 已发布")
    } else {
        Said::new("offsets discarded", "offset 已丢弃")
    };
    let mine: Vec<&ResentMarker> = resent.iter().filter(|m| m.id == c.id).collect();
    let markers = match mine.as_slice() {
        [] if resend_markers => Said::new("no marker was missing", "没有缺失的标记"),
        [] => Said::new("no markers written: book rules", "不写标记：书中规则"),
        list => {
            let control = list[0].control.name().to_uppercase();
            let plural = if list.len() == 1 { "marker" } else { "markers" };
            let at: Vec<String> = list
                .iter()
                .map(|m| format!("{} at offset {}", m.tp, m.offset))
                .collect();
            let at_zh: Vec<String> = list
                .iter()
                .map(|m| format!("{}（offset {}）", m.tp, m.offset))
                .collect();
            Said::new(
                format!("{control} {plural} re-sent to {}", at.join(" and ")),
                format!("向 {} 补写 {control}标记", at_zh.join("和")),
            )
        }
    };
    Said::new(
        format!("completed {} ({}, {})", c.id, offsets.en, markers.en),
        format!("完成 {}（{}，{}）", c.id, offsets.zh, markers.zh),
    )
}

/// Where a commit (`commit` true) or abort stopped: "after PREPARE_COMMIT".
pub fn cut_point(commit: bool, cut: CutPoint) -> Said {
    let (prepare, control) = if commit {
        ("PREPARE_COMMIT", "COMMIT")
    } else {
        ("PREPARE_ABORT", "ABORT")
    };
    match cut {
        CutPoint::Prepare | CutPoint::Marker(0) => {
            Said::new(format!("after {prepare}"), format!("写完 {prepare} 之后"))
        }
        CutPoint::Marker(1) => Said::new(
            format!("after its first {control} marker"),
            format!("写完第一个 {control}标记之后"),
        ),
        CutPoint::Marker(k) => Said::new(
            format!("after its first {k} {control} markers (or all, if fewer)"),
            format!("写完前 {k} 个 {control}标记之后（不足 {k} 个则全部写完）"),
        ),
        CutPoint::Markers => Said::new(
            format!("after all its {control} markers"),
            format!("写完全部 {control}标记之后"),
        ),
        CutPoint::Offsets if commit => {
            Said::new("after publishing its offsets", "发布 offset 之后")
        }
        CutPoint::Offsets => Said::new("after discarding its offsets", "丢弃 offset 之后"),
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
) -> Said {
    let (kind, kind_zh) = if commit {
        ("commit", "提交")
    } else {
        ("abort", "中止")
    };
    let at = issued_at.map_or_else(String::new, |s| format!(" (step {s})"));
    let at_zh = issued_at.map_or_else(String::new, |s| format!("（步骤 {s}）"));
    let (point, recovered) = (cut_point(commit, cut), recovery(report, resend_markers));
    Said::new(
        format!(
            "{kind} of {txn}{at} crashed {} (cut point {}); {}",
            point.en,
            cut.name(),
            recovered.en
        ),
        format!(
            "{txn} 的{kind_zh}{at_zh}在{}崩溃（切点 {}）；{}",
            point.zh,
            cut.name(),
            recovered.zh
        ),
    )
}

/// A `crash` step.
pub fn crash(report: &RecoveryReport, resend_markers: bool) -> Said {
    let r = recovery(report, resend_markers);
    Said::new(format!("crash: {}", r.en), format!("崩溃：{}", r.zh))
}

/// A `tear` step: the file, what was done to its tail, and the recovery.
pub fn tear(
    target: &TearTargetSpec,
    torn: &TearReport,
    report: &RecoveryReport,
    resend_markers: bool,
) -> Said {
    let file = match target {
        TearTargetSpec::Journal => Said::new("journal", "事务日志"),
        TearTargetSpec::Log {
            topic,
            partition,
            broker,
        } => Said::new(
            format!("{topic}-{partition} on broker {broker}"),
            format!("broker {broker} 上的 {topic}-{partition}"),
        ),
    };
    let damage = if torn.size_after < torn.size_before {
        let n = torn.size_before - torn.size_after;
        Said::new(format!("cut {n} bytes"), format!("截掉 {n} 字节"))
    } else if torn.size_after > torn.size_before {
        let n = torn.size_after - torn.size_before;
        Said::new(
            format!("appended {n} garbage bytes"),
            format!("追加 {n} 字节垃圾"),
        )
    } else {
        Said::new("the file was unchanged", "文件没有变化")
    };
    let r = recovery(report, resend_markers);
    Said::new(
        format!("tear {}: {}; {}", file.en, damage.en, r.en),
        format!("撕裂{}：{}；{}", file.zh, damage.zh, r.zh),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::TopicPartition;
    use crate::engine::core::batch::ControlType;
    use crate::engine::core::recovery::{LeaderReelection, LogTruncation, SwapRepaired};
    use crate::engine::log::segment_swap::SwapRepair;

    fn done(id: &str, from: TransactionState, to: TransactionState) -> CompletedTransaction {
        CompletedTransaction {
            id: id.into(),
            from,
            to,
        }
    }

    #[test]
    fn steps_are_told_in_both_languages() {
        let replicate = Action::Replicate {
            broker: None,
            topic: None,
            partition: None,
        };
        let s = step(&replicate, StepEnd::Ok);
        assert_eq!(
            (s.en.as_str(), s.zh.as_str()),
            ("replicate: ok", "复制：完成")
        );
        let s = step(&replicate, StepEnd::Pending);
        assert_eq!(
            (s.en.as_str(), s.zh.as_str()),
            ("replicate: pending", "复制：等待中")
        );
        let commit = Action::Commit {
            txn: "tx-2".into(),
            crash_after: Some(CutPoint::Prepare),
        };
        let s = step(&commit, StepEnd::Pending);
        assert_eq!(
            (s.en.as_str(), s.zh.as_str()),
            (
                "commit: pending; crash armed at cut point prepare: it fires when the commit runs",
                "提交：等待中；已设定在切点 prepare 崩溃：提交执行时触发"
            )
        );
        let e = ActionError::from(MiniKafkaError::Crashed);
        let s = step(&replicate, StepEnd::Error(&e));
        assert_eq!(s.en, format!("replicate: error: {e}"));
        assert_eq!(s.zh, "复制：错误 Crashed：操作被丢弃：集群在它完成之前崩溃");
        let s = step(&replicate, StepEnd::Duplicate { first: 3, last: 4 });
        assert_eq!(
            s.en,
            "replicate: an exact retry, answered with the original offsets 3..4 (E7: duplicate, nothing appended)"
        );
        assert_eq!(
            s.zh,
            "复制：完全相同的重试，以原 offset 3..4 回答（E7：重复，未追加）"
        );
        let crash = Said::new("crash: x", "崩溃：x");
        let s = step(&replicate, StepEnd::Recovered(&crash));
        assert_eq!(s, crash);
        let s = step(&replicate, StepEnd::OkThenCrash(&crash));
        assert_eq!(
            (s.en.as_str(), s.zh.as_str()),
            ("replicate: ok; crash: x", "复制：完成；崩溃：x")
        );
    }

    #[test]
    fn earlier_steps_are_told_by_their_step() {
        let s = completed("commit", 4);
        assert_eq!(
            (s.en.as_str(), s.zh.as_str()),
            ("commit of step 4 completed", "步骤 4 的提交已完成")
        );
        let s = failed("produce", 2, &MiniKafkaError::Crashed);
        let e = MiniKafkaError::Crashed;
        assert_eq!(s.en, format!("produce of step 2 failed: {e}"));
        assert_eq!(
            s.zh,
            "步骤 2 的生产失败，错误 Crashed：操作被丢弃：集群在它完成之前崩溃"
        );
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
            cut_crash(true, "tx-1", CutPoint::Prepare, None, &report, false).en,
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
            swaps_repaired: vec![SwapRepaired {
                tp: tp.clone(),
                broker: 1,
                repair: SwapRepair::DiscardedReplacement,
            }],
            deletions_finished: vec!["gone".into()],
        };
        assert_eq!(
            crash(&report, true).en,
            "crash: recovery truncated 12 journal bytes, truncated 11 bytes of out-0 on broker 2, \
             on broker 1, out-0: an unswapped compaction was discarded; the log before it stands, \
             moved the leader of out-0 from broker 1 to broker 2 (epoch 3), \
             completed tx-a (offsets discarded, ABORT markers re-sent to out-0 at offset 4 and out-1 at offset 2), \
             finished deleting topic gone (cut short by the crash), \
             left tx-b, tx-c open (ongoing)"
        );
        assert_eq!(
            crash(&RecoveryReport::default(), false).en,
            "crash: recovery found nothing to repair"
        );
    }

    #[test]
    fn cut_points_and_tears_are_named() {
        assert_eq!(
            cut_point(false, CutPoint::Prepare).en,
            "after PREPARE_ABORT"
        );
        assert_eq!(
            cut_point(true, CutPoint::Marker(1)).en,
            "after its first COMMIT marker"
        );
        assert_eq!(
            cut_point(true, CutPoint::Markers).en,
            "after all its COMMIT markers"
        );
        assert_eq!(
            cut_point(true, CutPoint::Offsets).en,
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
            tear(&TearTargetSpec::Journal, &torn, &report, false).en,
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
                .en
                .starts_with("tear out-1 on broker 3: appended 15 garbage bytes; recovery")
        );
    }
}
