//! Sentences in both interface languages ("Chinese,
//! whole"). The session says what a step did, what a batch's fate is and
//! what recovery repaired; the dashboard prints it in `--lang en` or
//! `--lang zh`. Both are made at the same place from the same numbers, so
//! the Chinese line never says more or less than the English one.
//!
//! Kafka's terms stay as they are (leader, ISR, HW, LSO, LEO, offset,
//! epoch: the list is `ui::glossary::KEPT_IN_CHINESE`); the transaction
//! journal is 事务日志, the partition log 分区日志, a marker 标记
//! (docs/dashboard.md "Chinese").

/// One sentence, in English and in Chinese.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Said {
    pub en: String,
    pub zh: String,
}

impl Said {
    pub fn new(en: impl Into<String>, zh: impl Into<String>) -> Self {
        Self {
            en: en.into(),
            zh: zh.into(),
        }
    }

    /// The sentence in `zh` (Chinese) or English.
    pub fn get(&self, zh: bool) -> &str {
        if zh && !self.zh.is_empty() {
            &self.zh
        } else {
            &self.en
        }
    }

    /// The parts joined: English with `en`, Chinese with `zh`.
    pub fn join(parts: &[Said], en: &str, zh: &str) -> Said {
        Said {
            en: parts
                .iter()
                .map(|p| p.en.as_str())
                .collect::<Vec<_>>()
                .join(en),
            zh: parts
                .iter()
                .map(|p| p.zh.as_str())
                .collect::<Vec<_>>()
                .join(zh),
        }
    }
}

/// The English sentence (logs, tests, `mk-tui state`).
impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.en)
    }
}

/// An action's name in Chinese (the English one is [`crate::session::Action::name`]).
pub fn action_zh(name: &str) -> &str {
    match name {
        "create_topic" => "创建 topic",
        "produce" => "生产",
        "begin" => "开启事务",
        "send" => "事务发送",
        "late_send" => "迟到的事务发送",
        "send_offsets" => "暂存 offset",
        "commit_offsets" => "提交 offset",
        "commit" => "提交",
        "abort" => "中止",
        "replicate" => "复制",
        "advance_clock" => "推进时钟",
        "crash" => "崩溃",
        "tear" => "撕裂",
        "stop_broker" => "停止 broker",
        "start_broker" => "启动 broker",
        "promote" => "提升 leader",
        "join_group" => "加入消费组",
        "leave_group" => "离开消费组",
        "heartbeat" => "心跳",
        "sync_group" => "同步消费组",
        "commit_group_offsets" => "组成员提交 offset",
        "poll" => "拉取",
        "retention" => "保留策略",
        "compact" => "压缩",
        "delete_records" => "删除记录",
        "delete_group" => "删除消费组",
        "alter_topic_config" => "修改 topic 配置",
        "create_partitions" => "增加分区",
        "delete_topic" => "删除 topic",
        "delete_offsets" => "删除已提交的 offset",
        "accumulate" => "攒批",
        "flush" => "刷出",
        // A batch an advance_clock sent when its linger ran out.
        "linger" => "攒批到期",
        "note" => "说明",
        "ui" => "界面",
        other => other,
    }
}

/// An outcome's name in Chinese ("ok", "pending", "recovered", "error").
pub fn outcome_zh(name: &str) -> &str {
    match name {
        "ok" => "完成",
        "pending" => "等待中",
        "recovered" => "已恢复",
        "error" => "错误",
        other => other,
    }
}

/// What an error code means, in Chinese: the gloss printed before the
/// engine's own message (which names the numbers, in English), so a
/// Chinese reader knows what went wrong even where the detail is English.
pub fn error_zh(code: &str) -> &'static str {
    match code {
        "InvalidConfig" => "配置无效",
        "InvalidCleanup" => "保留或压缩参数无效",
        "InvalidTopicName" => "topic 名无效",
        "TopicAlreadyExists" => "topic 已存在",
        "TopicInOpenTransaction" => "topic 仍在未结束的事务中",
        "InvalidPartitions" => "分区数无效",
        "InvalidReplicationFactor" => "副本数无效",
        "UnknownTopicOrPartition" => "没有这个 topic 或分区",
        "UnknownBroker" => "没有这个 broker",
        "OffsetOutOfRange" => "offset 超出范围",
        "NotABatchBoundary" => "不是批次边界",
        "LeaderNotAvailable" => "leader 不可用",
        "BrokerStopped" => "broker 已停止",
        "NotEnoughReplicas" => "ISR 副本数少于 min.insync.replicas",
        "NotEnoughReplicasAfterAppend" => "追加后 ISR 副本数不足",
        "FencedLeaderEpoch" => "leader epoch 已过期",
        "NotLeaderOrFenced" => "不是 leader 或已被隔离",
        "InvalidPromotion" => "不能提升这个副本",
        "OutOfOrderSequence" => "序列号乱序",
        "ProducerFenced" => "producer 已被隔离",
        "InvalidProducerEpoch" => "producer epoch 已随事务结束而失效",
        "TransactionAlreadyActive" => "事务已在进行中",
        "InvalidTransactionalId" => "transactional id 无效",
        "UnknownTransaction" => "没有这个事务",
        "InvalidTransactionState" => "事务状态不允许这个操作",
        "TransactionFenced" => "事务已被隔离",
        "TransactionInProgress" => "事务仍在进行中",
        "SendsPending" => "还有发送在等待",
        "TransactionInterrupted" => "事务被崩溃打断",
        "InvalidGroupId" => "消费组请求无效",
        "UnknownMember" => "未知的组成员",
        "IllegalGeneration" => "generation 不匹配",
        "RebalanceInProgress" => "消费组正在重平衡",
        "GroupNotEmpty" => "消费组不为空",
        "GroupIdNotFound" => "没有这个消费组",
        "GroupSubscribedToTopic" => "消费组订阅了该主题",
        "NotPartitionOwner" => "不是该分区的拥有者",
        "InvalidBatch" => "批次无效",
        "ProducerBufferFull" => "生产者缓冲区已满",
        "Corrupt" => "数据损坏",
        "Io" => "读写错误",
        "DataDirLocked" => "数据目录被占用",
        "DataDirUnwritable" => "数据目录不可写",
        "NewerFormat" => "格式版本过新",
        "KafkaStorageException" => "写入失败，文件已离线",
        "NotARegularFile" => "不是普通文件",
        "TooLarge" => "数据目录过大，无法打开",
        "Crashed" => "集群已崩溃",
        "ClusterDown" => "集群已关闭",
        "InvalidAction" => "动作无效",
        // An observer's refresh that failed (docs/observe.md "Live").
        "RefreshFailed" => "刷新失败",
        _ => "错误",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_is_the_fallback() {
        let s = Said::new("broker 3 stopped", "");
        assert_eq!(s.get(true), "broker 3 stopped");
        let s = Said::new("broker 3 stopped", "broker 3 已停止");
        assert_eq!(s.get(true), "broker 3 已停止");
        assert_eq!(s.get(false), "broker 3 stopped");
        let j = Said::join(&[Said::new("a", "甲"), Said::new("b", "乙")], ", ", "，");
        assert_eq!((j.en.as_str(), j.zh.as_str()), ("a, b", "甲，乙"));
    }

    #[test]
    fn every_error_code_has_a_gloss() {
        // Every code `MiniKafkaError::code` returns, read from its source,
        // so a new error cannot go without a gloss.
        let src = include_str!("../engine/error.rs");
        let body = &src[src.find("pub fn code(&self)").unwrap()..];
        let body = &body[..body.find("\n    }\n").unwrap()];
        let codes: Vec<&str> = body
            .split("=> \"")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect();
        assert!(codes.len() > 30, "{codes:?}");
        for code in codes
            .iter()
            .copied()
            .chain(["InvalidAction", crate::session::observation::REFRESH_FAILED])
        {
            assert_ne!(error_zh(code), "错误", "{code} has no Chinese gloss");
        }
    }
}
