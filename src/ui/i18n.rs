//! Labels in English (default) and Chinese (`--lang zh`), for the book's
//! Chinese readers. Every label the dashboard prints goes through [`Lang::t`].

/// The interface language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    En,
    Zh,
}

impl std::str::FromStr for Lang {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "en" => Ok(Lang::En),
            "zh" => Ok(Lang::Zh),
            other => Err(format!(
                "unknown language {other:?}: expected \"en\" or \"zh\""
            )),
        }
    }
}

impl Lang {
    /// "en" or "zh" (captions are chosen by it).
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    /// Whether this is Chinese: which half of a [`crate::session::said::Said`]
    /// sentence, event or explanation to print.
    pub fn zh(self) -> bool {
        self == Lang::Zh
    }

    /// `en` or `zh`, by language: for the dashboard's own sentences that
    /// carry numbers (the fixed labels are in [`LABELS`]).
    pub fn pick(self, en: String, zh: String) -> String {
        if self.zh() { zh } else { en }
    }

    /// An error line in this language: in Chinese, its code (Kafka's
    /// error name) and its Chinese sentence (`zh`, which names the same
    /// numbers); without one (an observer's line), the gloss of its code
    /// before the English message.
    pub fn error(self, code: &str, message: &str, zh: &str) -> String {
        match (self.zh(), code.is_empty(), zh.is_empty()) {
            (true, false, false) => format!("错误 {code}：{zh}"),
            (true, false, true) => {
                format!("{}：{message}", crate::session::said::error_zh(code))
            }
            _ => message.to_string(),
        }
    }

    /// A rule set's name (`minikafka`, `kafka`) as the title bar shows it:
    /// in Chinese by the system's own name, which the interface keeps.
    pub fn rules_name(self, rules: &str) -> String {
        match (self, rules) {
            (Lang::Zh, "minikafka") => "MiniKafka".into(),
            (Lang::Zh, "kafka") => "Kafka".into(),
            _ => rules.to_string(),
        }
    }

    /// A transaction state's name: in Chinese as the book's journal
    /// writes it (`ONGOING`, `PREPARE_COMMIT`), a name the Chinese
    /// interface keeps (docs/dashboard.md "Chinese").
    pub fn state_name(self, state: impl std::fmt::Display) -> String {
        if self.zh() {
            state.to_string().to_uppercase()
        } else {
            state.to_string()
        }
    }

    /// A key's name as printed (`space`, `space/→`): the space bar in
    /// this language.
    pub fn key_name(self, keys: &str) -> String {
        if keys == "RU RC" {
            // The help's line for the log cells' readers.
            return format!("{} {}", self.t("ru_cell"), self.t("rc_cell"));
        }
        keys.replace("space", self.t("space"))
    }

    /// The label for `key` in this language; an unknown key is itself.
    pub fn t(self, key: &'static str) -> &'static str {
        if self == Lang::En {
            return LABELS
                .iter()
                .find(|(k, _, _)| *k == key)
                .map_or(key, |(_, en, _)| en);
        }
        LABELS
            .iter()
            .find(|(k, _, _)| *k == key)
            .map_or(key, |(_, _, zh)| zh)
    }
}

/// (key, English, Chinese).
const LABELS: &[(&str, &str, &str)] = &[
    ("log", "Log", "分区日志"),
    ("partitions", "Partitions", "分区"),
    ("replicas", "Replicas", "副本"),
    ("watermarks", "Watermarks", "水位"),
    ("journal", "Transaction journal", "事务日志"),
    ("offsets", "Consumer offsets", "消费位移"),
    ("consumers", "Consumers", "消费者"),
    ("pending", "Pending", "等待中"),
    ("events", "Events", "事件"),
    ("caption", "Caption", "说明"),
    ("clients", "Clients", "客户端"),
    ("groups", "Consumer groups", "消费组"),
    (
        "no_groups",
        "no consumer groups (g: a member joins)",
        "没有消费组（g：成员加入）",
    ),
    (
        "groups_not_observed",
        "group members are not observed; committed offsets: the offsets pane",
        "未观察消费组成员；已提交的 offset 见消费位移面板",
    ),
    ("nobody", "nobody", "无人"),
    ("nothing_assigned", "nothing assigned", "未分配分区"),
    ("partition", "partition", "分区"),
    ("owner", "owner", "拥有者"),
    ("broker", "broker", "broker"),
    ("peer", "peer", "对端地址"),
    ("client_id", "client id", "客户端 ID"),
    ("requests", "reqs", "请求数"),
    ("in_flight", "in flight", "处理中"),
    ("producer_id", "producer id", "生产者 ID"),
    ("txn_id", "txn id", "事务 ID"),
    (
        "producer_short",
        "pid / epoch / txn",
        "生产者 / epoch / 事务",
    ),
    (
        "group_long",
        "group / generation / assigned",
        "消费者组 / 代 / 分配的分区",
    ),
    ("group_short", "group / gen / parts", "组 / 代 / 分区"),
    ("empty_fetches", "empty", "空"),
    (
        "fault_armed_long",
        "⚠ fault armed: the next Produce's response will be dropped",
        "⚠ 故障已就绪：下一个 Produce 的响应将被丢弃",
    ),
    ("fault_armed_short", "⚠ fault armed", "⚠ 故障已就绪"),
    ("listening", "listening", "监听"),
    ("closed", "closed", "已关闭"),
    (
        "no_listeners",
        "no Kafka listeners (mk-tui --listen ADDR opens them)",
        "没有 Kafka 监听（mk-tui --listen 地址 打开）",
    ),
    ("no_clients", "no client connected", "没有客户端连接"),
    ("help", "Help", "帮助"),
    ("leader", "leader", "leader"),
    ("epoch", "epoch", "epoch"),
    ("in_sync", "in sync", "同步"),
    ("out_of_sync", "out of sync", "不同步"),
    ("stopped", "stopped", "已停止"),
    ("lag", "lag", "落后"),
    ("ahead", "ahead", "超前"),
    ("committed", "committed", "已提交"),
    ("aborted", "aborted", "已中止"),
    ("ongoing", "ongoing", "进行中"),
    ("decided", "decided", "已决未写"),
    ("held_back", "held back", "LSO 挡住"),
    ("orphaned", "orphaned", "无主"),
    ("control", "control", "控制"),
    ("above_hw", "above HW", "高于 HW"),
    // After `▵ above HW` in the log pane's legend: the scale's band there.
    ("above_hw_on_scale", " (- on the scale)", "（刻度上为 -）"),
    ("below_lso", "stable", "已稳定"),
    ("lso_to_hw", "unstable", "未稳定"),
    ("recovery", "recovery", "恢复"),
    ("seen", "seen", "可读"),
    ("unseen", "not seen", "不可读"),
    ("isolation", "view", "视角"),
    ("staged", "staged", "暂存"),
    ("pending_commit", "pending in a transaction", "事务中待提交"),
    ("read_uncommitted", "read_uncommitted", "read_uncommitted"),
    ("read_committed", "read_committed", "read_committed"),
    ("ru_short", "uncommitted", "读未提交"),
    ("rc_short", "committed", "读已提交"),
    // The isolation levels in two letters, where nothing longer fits.
    ("RU", "RU", "未提交"),
    ("RC", "RC", "已提交"),
    // The same on a log cell's readers line, one wide character each.
    ("ru_cell", "RU", "未"),
    ("rc_cell", "RC", "已"),
    // A journal frame that starts a transaction, and its producer id
    // (KIP-98's `pid`) under the kafka rules.
    ("frame_begin", "begin", "开始"),
    ("frame_same_as", "same as", "同"),
    (
        "frame_each_send",
        " (each send writes a frame)",
        "（每次发送都写一帧）",
    ),
    ("pid", "pid", "生产者"),
    // The key bar's and the help's name of the space bar.
    ("space", "space", "空格"),
    ("nothing_pending_short", "none", "无"),
    ("waiting_for", "waiting for", "等待"),
    ("queued_behind", "queued behind step", "排在步骤之后"),
    // A pending commit or abort with a crash armed at its cut point.
    ("crash_armed", "crash at", "崩溃于切点"),
    ("nothing_pending", "nothing pending", "没有等待中的操作"),
    // A producer's batch filling in its accumulator (E17): records, bytes
    // against batch_size, and when its linger runs out (or "due": it has).
    ("records_short", "rec", "条"),
    ("linger_until", "linger to", "攒批至"),
    ("linger_due", "due", "已到期"),
    ("no_transactions", "no transactions", "没有事务"),
    ("nothing_staged", "nothing staged", "没有暂存的 offset"),
    // After the offsets pane's `✓ committed` when no offset is committed.
    ("colon", ": ", "："),
    ("none_yet", "none yet", "暂无"),
    ("no_frames", "no journal frames", "事务日志为空"),
    ("last_recovery", "last recovery", "上次恢复"),
    ("torn", "torn bytes cut", "截断的坏尾字节"),
    ("torn_now", "torn", "撕裂"),
    (
        "moment_of_death",
        "moment of death: before recovery",
        "崩溃瞬间：恢复之前",
    ),
    ("reelected", "leader re-elected", "重新选举 leader"),
    ("step", "step", "步骤"),
    ("mode_replay", "replay", "回放"),
    ("mode_live", "live", "实时"),
    ("mode_saved", "saved state", "保存的状态"),
    ("mode_observed", "observed", "观察"),
    ("stale", "· stale", "· 过期"),
    (
        "not_visible",
        "not visible over the Kafka protocol",
        "通过 Kafka 协议看不到",
    ),
    ("not_visible_short", "not visible", "看不到"),
    (
        "staged_not_visible",
        "staged offsets: not visible over Kafka",
        "暂存的 offset：通过 Kafka 看不到",
    ),
    (
        "staged_not_visible_short",
        "staged: not visible",
        "暂存：看不到",
    ),
    (
        "journal_txns",
        "journal not visible over Kafka; transactions:",
        "看不到事务日志；事务：",
    ),
    (
        "journal_no_txns",
        "journal not visible over Kafka; no transactions",
        "看不到事务日志；没有事务",
    ),
    ("no_topics", "no topics yet", "还没有主题"),
    (
        "nothing_observed",
        "nothing observed yet",
        "尚未观察到任何内容",
    ),
    ("clock", "clock", "时钟"),
    ("rules", "rules", "规则"),
    ("too_small", "Terminal too small", "终端太小"),
    ("keys", "keys", "按键"),
    ("help_short", "help", "帮助"),
    ("next", "next", "下一步"),
    ("back", "back", "上一步"),
    ("play", "play", "播放"),
    ("pause", "pause", "暂停"),
    ("player_pause", "play/pause", "播放/暂停"),
    (
        "player_chapter",
        "previous/next caption",
        "上一个/下一个字幕",
    ),
    ("player_frame", "one frame (paused)", "单帧（暂停时）"),
    ("zoom", "zoom", "放大"),
    ("unzoom", "unzoom", "还原"),
    ("present", "present", "演示"),
    ("end_present", "end presentation", "结束演示"),
    ("present_panes", "panes", "换面板"),
    ("presentation", "presentation", "演示"),
    ("zoomed", "zoom", "放大"),
    (
        "help_close",
        "?/Esc close · j/k scroll",
        "?/Esc 关闭 · j/k 滚动",
    ),
    (
        "help_recorded",
        "as recorded · ?/Esc hide · keys still work",
        "录制时打开 · ?/Esc 隐藏 · 按键照常可用",
    ),
    ("prompt_keys", "In a prompt", "输入框内"),
    (
        "prompt_keys_hint",
        "Enter=apply Esc=cancel",
        "Enter=执行 Esc=取消",
    ),
    ("prompt_cancel", "Esc=cancel", "Esc=取消"),
    ("help_keys", "In the help", "帮助窗口内"),
    ("help_marks", "On screen", "屏幕上的标记"),
    // "↓ 3 more" / "↓ 还有 3": the words before and after the number.
    ("more_pre", "", "还有 "),
    ("more_post", " more", ""),
    ("quit", "quit", "退出"),
    ("produce", "produce", "生产"),
    ("begin", "begin", "开启事务"),
    ("send", "send", "发送"),
    ("commit", "commit", "提交"),
    ("abort", "abort", "中止"),
    ("replicate", "replicate", "复制"),
    ("refresh", "refresh", "刷新"),
    ("crash", "crash", "崩溃"),
    ("join", "join", "加入"),
    ("leave", "leave", "离开"),
    ("heartbeat", "heartbeat", "心跳"),
    ("expire", "expire", "过期"),
    ("retention", "retention", "保留"),
    ("compact", "compact", "压缩"),
    ("log_leader", "ldr", "主"),
    ("log_in_sync", "isr", "同步"),
    ("log_out_of_sync", "out", "不同步"),
    ("divergent", "divergent", "分叉"),
    ("compacted", "compacted", "已压缩"),
    ("tombstone", "tombstone", "墓碑"),
    ("null_value", "null", "空值"),
    ("log_compacted_away", "compacted away", "个 offset 已压缩掉"),
    ("log_per_batch", "1 cell = 1 batch", "一格一批"),
    ("log_per_batch_short", "batches", "按批"),
    ("log_earlier", "earlier offsets", "个更早的 offset"),
    (
        "log_observed",
        "the leader's log up to the HW; followers' logs are not visible over the Kafka protocol",
        "leader 到 HW 为止的日志；通过 Kafka 协议看不到 follower 的日志",
    ),
    ("log_observed_short", "leader to the HW", "leader 到 HW"),
    ("log_start", "log start", "日志起点"),
    ("log_start_short", "start", "起点"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_in_both_languages() {
        assert_eq!(Lang::En.t("replicas"), "Replicas");
        assert_eq!(Lang::Zh.t("replicas"), "副本");
        assert_eq!(Lang::Zh.t("no-such-key"), "no-such-key");
        assert!("fr".parse::<Lang>().is_err());
        let keys: std::collections::BTreeSet<_> = LABELS.iter().map(|(k, _, _)| k).collect();
        assert_eq!(keys.len(), LABELS.len(), "keys are unique");
    }
}
