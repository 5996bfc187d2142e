//! The engine's errors in Chinese (`--lang zh`): one sentence per typed
//! error variant, made from the variant's own fields, so it names the same
//! numbers, partitions and ids as the English `Display` of
//! [`MiniKafkaError`] without reading its text. The engine stays English
//! and knows nothing of languages; the session says both.
//!
//! A few variants carry a free-text reason made deep in the engine. The
//! reasons of the errors a key can cause (a topic name typed at `n`, a
//! broker promoted with `l`) are Chinese too ([`reason_zh`], each of the
//! engine's reasons tested below); the rest (a corrupt file's, a refused
//! configuration's) follow the Chinese sentence in English, in parentheses
//! (docs/dashboard.md "Chinese").

use crate::engine::MiniKafkaError as E;
use crate::session::outcome::ActionError;

/// The Chinese of an action's error: the engine's, or a refused action's
/// field and what is wrong with it.
pub fn action_error_zh(e: &ActionError) -> String {
    match e {
        ActionError::Engine(e) => error_zh(e),
        ActionError::Invalid(f) => format!("字段 {}（{}）", f.field, f.message),
    }
}

/// The Chinese of an engine error: what `Display` says, in Chinese.
pub fn error_zh(e: &E) -> String {
    match e {
        E::InvalidConfig(why) => format!("配置无效（{why}）"),
        E::InvalidTopicName { name, reason } => {
            format!("topic 名 {name:?} 无效（{}）", reason_zh(reason))
        }
        E::TopicAlreadyExists(name) => format!("topic {name:?} 已存在"),
        E::TopicInOpenTransaction { topic, txn } => format!(
            "topic {topic:?} 暂时不能再次创建：事务 {txn:?} 写过以这个名字删除的 topic，且尚未结束；先提交或中止它，再创建（未结束的事务按集群的 transaction_timeout_ms 超时，而不是客户端的 transaction.timeout.ms）"
        ),
        E::InvalidPartitions(n) => format!(
            "分区数 {n} 无效：一个 topic 有 1 到 {} 个分区",
            crate::engine::config::MAX_PARTITIONS
        ),
        E::PartitionsNotIncreased {
            topic,
            current,
            requested,
        } => format!("topic {topic:?} 已有 {current} 个分区：分区只能增加，{requested} 不比它多"),
        E::InvalidReplicationFactor { factor, brokers } => {
            format!("副本数 {factor} 无效：应在 1 到已配置的 {brokers} 个 broker 之间")
        }
        E::UnknownTopicOrPartition(tp) => format!("没有 topic 或分区 {tp}"),
        E::UnknownBroker(b) => format!("没有 broker {b}"),
        E::OffsetOutOfRange {
            what,
            offset,
            start,
            end,
        } => format!("{what} 的 offset {offset} 超出范围：有效 offset 为 {start}..={end}"),
        E::NotABatchBoundary { what, offset } => {
            format!("不能把 {what} 截断到 offset {offset}：那里不是批次边界")
        }
        E::LeaderNotAvailable { tp, broker } => {
            format!("{tp} 的 leader broker {broker} 已停止")
        }
        E::BrokerStopped { broker } => format!("broker {broker} 已停止"),
        E::NotEnoughReplicas { tp, isr, min } => {
            format!("{tp} 的副本不足：ISR 有 {isr} 个，min.insync.replicas 为 {min}")
        }
        E::NotEnoughReplicasAfterAppend {
            tp,
            offset,
            isr,
            min,
        } => format!(
            "追加到 {tp} 的 offset {offset} 之后副本不足：ISR 缩小到 {isr} 个，min.insync.replicas 为 {min}"
        ),
        E::FencedLeaderEpoch {
            tp,
            request,
            current,
        } => format!(
            "{tp} 的 leader epoch 已过期：请求的 epoch 为 {request}，leader epoch 为 {current}"
        ),
        E::NotLeaderOrFenced {
            tp,
            offset,
            old,
            new,
        } => format!(
            "追加到 {tp} 的 offset {offset} 被隔离：确认之前 leader 已更换（epoch {old} -> {new}）"
        ),
        E::InvalidPromotion { tp, broker, reason } => {
            format!(
                "不能把 broker {broker} 提升为 {tp} 的 leader（{}）",
                reason_zh(reason)
            )
        }
        E::OutOfOrderSequence {
            tp,
            producer_id,
            expected,
            got,
        } => format!("生产者 {producer_id} 在 {tp} 上序列号乱序：应为 {expected}，收到 {got}"),
        E::ProducerFenced {
            tp,
            producer_id,
            epoch,
            current,
        } => format!("生产者 {producer_id} 在 {tp} 上被隔离：epoch {epoch} 早于 {current}"),
        E::InvalidProducerEpoch {
            tp,
            producer_id,
            epoch,
            current,
        } => format!(
            "生产者 {producer_id} 在 {tp} 上被隔离：epoch {epoch} 已随它的事务结束（事务协议版本 2 把它加到 {current}）"
        ),
        E::TransactionAlreadyActive { id, state } => format!(
            "事务 {id:?} 已在进行中（{}）：先提交或中止它",
            state_zh(state)
        ),
        E::InvalidGroupId(why) => format!("消费组请求无效（{why}）"),
        E::UnknownMember { group, member } => match member {
            Some(m) => format!("{m:?} 不是消费组 {group:?} 的成员"),
            None => format!("没有消费组 {group:?}"),
        },
        E::IllegalGeneration {
            group,
            generation,
            current,
        } => format!("消费组 {group:?} 的代数不匹配：第 {generation} 代，当前为第 {current} 代"),
        E::GroupNotEmpty { group, members } => {
            format!("消费组 {group:?} 不为空：它的 {members} 个成员离开后才能删除")
        }
        E::GroupSubscribedToTopic { group, topic } => {
            format!("消费组 {group:?} 订阅了主题 {topic:?}：有成员订阅时不能删除它的 offset")
        }
        E::GroupIdNotFound(group) => {
            format!("没有消费组 {group:?}：它既没有成员，也没有已提交的 offset")
        }
        E::RebalanceInProgress(group) => {
            format!("消费组 {group:?} 正在重平衡：重新加入，或再次请求分配")
        }
        E::NotPartitionOwner { group, member, tp } => {
            format!("消费组 {group:?} 的成员 {member:?} 不拥有 {tp}：它只能提交自己的分区")
        }
        E::InvalidTransactionalId(id) => format!("事务 ID {id:?} 无效：不能为空"),
        E::UnknownTransaction(id) => format!("没有事务 {id:?}"),
        E::InvalidTransactionState {
            id,
            operation,
            state,
            expected,
        } => format!(
            "不能{}事务 {id:?}：它处于 {}，不是 {}",
            operation_zh(operation),
            state_zh(state),
            state_zh(expected)
        ),
        E::TransactionFenced { id, epoch, current } => {
            format!("事务 {id:?} 的句柄被隔离：生产者 epoch {epoch} 早于 {current}")
        }
        E::TransactionInProgress(id) => format!("事务 {id:?} 的提交或中止已在进行中"),
        E::SendsPending { id, count } => {
            format!("事务 {id:?} 还有 {count} 个发送在等待 acks=all：提交或中止之前先等它们完成")
        }
        E::TransactionInterrupted { id, operation } => format!(
            "事务 {id:?} 的{}被打断：另一次开启事务或超时先完成了它",
            operation_zh(operation)
        ),
        E::InvalidBatch(why) => format!("批次无效（{why}）"),
        E::ProducerBufferFull {
            total_bytes,
            adding,
            max_buffer_bytes,
        } => format!(
            "生产者的累加器已满：已有 {total_bytes} 字节在等待，再加 {adding} 字节会超过 max_buffer_bytes {max_buffer_bytes}"
        ),
        E::InvalidCleanup(why) => format!("日志清理参数无效（{why}）"),
        E::Corrupt { path, reason } => format!("{} 已损坏（{reason}）", path.display()),
        E::Io { path, source } => format!("{}：读写错误（{source}）", path.display()),
        E::DataDirLocked { path, pid } => match pid {
            Some(pid) => format!(
                "数据目录 {} 正被另一个 mk-tui 使用（进程 {pid}）",
                path.display()
            ),
            None => format!(
                "数据目录 {} 正被另一个 mk-tui 使用（它的锁文件 .mk-tui.lock 被占用）",
                path.display()
            ),
        },
        E::DataDirUnwritable {
            path,
            action,
            source,
        } => format!(
            "不能{}数据目录 {}（{source}）",
            operation_zh(action),
            path.display()
        ),
        E::NewerFormat {
            path,
            found,
            supported,
        } => format!(
            "{}：由更新的 mk-tui 写入（格式版本 {found}；本程序读版本 {supported}）：请升级 mk-tui",
            path.display()
        ),
        E::KafkaStorage { path, reason } => format!(
            "{} 已离线（KafkaStorageException）：{reason}；集群重启之前不再接受写入",
            path.display()
        ),
        E::TooLarge { path, reason } => format!("{}：过大（{reason}）", path.display()),
        E::NotARegularFile { path, kind } => {
            format!("{}：不是普通文件（{kind}）", path.display())
        }
        E::Crashed => "操作被丢弃：集群在它完成之前崩溃".to_string(),
        E::ClusterDown { reason } => {
            format!("集群已关闭：恢复失败（{reason}）；修复数据目录后再次崩溃以重新打开")
        }
    }
}

/// An operation an error names (`commit`, `abort`, `create`), in Chinese.
fn operation_zh(op: &str) -> &str {
    match op {
        "commit" => "提交",
        "abort" => "中止",
        "send" => "发送",
        "send_offsets" | "send offsets" => "暂存 offset",
        "begin" => "开启",
        "create" => "创建",
        "lock" => "锁定",
        "write" => "写入",
        "deliver a late write of" => "投递迟到的写入到",
        "write the lock file of" => "写入锁文件到",
        other => other,
    }
}

/// A transaction's state as an error names it: the state's name, as the
/// book's journal writes it, or what the engine expected instead.
fn state_zh(state: &str) -> String {
    match state {
        "unknown" => "未知".to_string(),
        "ended (commit or abort it first)" => "已结束（先提交或中止它）".to_string(),
        name => name.to_uppercase(),
    }
}

/// The Chinese of the engine's reasons for refusing a topic name
/// (`validate_topic_name`) or a promotion (`PartitionReplicaSet::promote`,
/// `Cluster::promote`); any other reason as it is.
fn reason_zh(reason: &str) -> String {
    let exact = match reason {
        "must not be empty" => Some("不能为空"),
        "longer than 249 characters" => Some("超过 249 个字符"),
        "'.' and '..' are reserved" => Some("'.' 和 '..' 是保留名"),
        "only ASCII letters, digits, '.', '_' and '-' are allowed" => {
            Some("只能用 ASCII 字母、数字、'.'、'_' 和 '-'")
        }
        "not a replica" => Some("它不是副本"),
        "already the leader" => Some("它已经是 leader"),
        "the broker is stopped" => Some("该 broker 已停止"),
        _ => None,
    };
    if let Some(zh) = exact {
        return zh.to_string();
    }
    if let Some(isr) = reason.strip_prefix("not in the ISR ") {
        return format!("它不在 ISR {isr} 中");
    }
    if reason.starts_with("the leader epoch is already the largest") {
        return format!(
            "leader epoch 已是最大值 {}（Kafka 的 leader epoch 是 int32）",
            crate::engine::core::metadata::MAX_LEADER_EPOCH
        );
    }
    reason.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// English words left in `zh` (runs of three or more ASCII letters
    /// other than the Kafka terms and names these sentences keep).
    fn english(zh: &str) -> Vec<String> {
        zh.split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| w.len() >= 3)
            .filter(|w| {
                ![
                    "topic", "broker", "leader", "ISR", "ASCII", "epoch", "Kafka", "int",
                ]
                .contains(w)
            })
            .map(str::to_string)
            .collect()
    }

    /// Every reason the engine gives for a bad topic name or a refused
    /// promotion comes out Chinese: made by the engine itself, not copied.
    #[test]
    fn the_reasons_a_key_can_cause_are_chinese() {
        use crate::engine::core::metadata::validate_topic_name;
        let long = "t".repeat(250);
        for name in ["", long.as_str(), "..", "a b"] {
            let zh = error_zh(&validate_topic_name(name).unwrap_err());
            let left: Vec<String> = english(&zh)
                .into_iter()
                .filter(|w| !w.starts_with("ttt"))
                .collect();
            assert!(left.is_empty(), "{zh}: {left:?}");
        }
        // The promotions' reasons: tests/replication.rs makes each.
        assert!(english(&reason_zh("not in the ISR [1,2]")).is_empty());
    }

    #[test]
    fn the_chinese_names_the_same_numbers() {
        let e = E::InvalidProducerEpoch {
            tp: "out-0".into(),
            producer_id: 7,
            epoch: 0,
            current: 1,
        };
        let zh = error_zh(&e);
        assert!(zh.contains("生产者 7") && zh.contains("out-0"), "{zh}");
        assert!(zh.contains("epoch 0") && zh.contains("加到 1"), "{zh}");
        let e = E::InvalidTransactionState {
            id: "tx-1".into(),
            operation: "abort",
            state: "complete_commit".into(),
            expected: "ongoing",
        };
        assert_eq!(
            error_zh(&e),
            "不能中止事务 \"tx-1\"：它处于 COMPLETE_COMMIT，不是 ONGOING"
        );
    }
}
