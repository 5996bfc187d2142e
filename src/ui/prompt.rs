//! The bottom-line prompt (SPEC §6: "single keys for produce, begin/send/…"):
//! its text and what it asks for, and the pure parsing of that text into an
//! [`Action`].
//!
//! Words are separated by spaces; double quotes keep spaces in a value
//! (`orders "hello world"`), and inside quotes `\"` and `\\` stand for `"`
//! and `\`. A word with an unquoted `=` is a field (`acks=all`,
//! `key="a b"`). Parsing refuses, with the reason, anything that would only
//! make a failed step: a malformed or out-of-range value, an unknown field,
//! a word too many, an unterminated quote, and — checked against [`Facts`],
//! what the current snapshot says of the cluster — a broker, topic or partition that
//! does not exist and a stopped broker to promote. What the engine refuses
//! by its rules (commit of an unknown transaction, promoting an out-of-sync
//! replica, acks=all below the minimum ISR) is left to the engine: that
//! refusal is a lesson, recorded as a failed step (docs/dashboard.md).

use std::collections::{BTreeMap, BTreeSet};

use crate::session::Action;
use crate::session::action::{GarbageSpec, OffsetSpec, TearTargetSpec};
use crate::session::said::Said;
use crate::session::snapshot::Snapshot;
use crate::ui::i18n::Lang;
use crate::ui::keys::PromptKind;

/// The words a prompt's parser takes as they are, so its label and its
/// refusals show them in English in any language: the optional fields
/// (`acks=`, `key=`, …), the cut points and a tear's `garbage`.
pub const TYPED_WORDS: &[&str] = &[
    "acks",
    "all",
    "key",
    "partition",
    "producer",
    "retention_ms",
    "retention_bytes",
    "delete_retention_ms",
    "prepare",
    "marker",
    "markers",
    "offsets",
    "garbage",
];

/// A useful default for prompt `kind`, from the current state `view`
/// (`last_txn`: the transaction last begun from a key; `selected`: the
/// batch selected with `J`/`K`, as [`crate::ui::panes::partitions::selected_batch`]
/// finds it in `view`).
///
/// A default names only what the state has: a group prompt that needs an
/// existing group (`G`, `h`, `E`) opens empty while there is none (its
/// label names the words to type), and `o`'s offset is where a consumer
/// of the partition stands, never the step number (a new user's trial:
/// `o` at step 40 offered offset 40 on an empty partition).
pub fn default_text(
    kind: PromptKind,
    view: &Snapshot,
    last_txn: Option<&str>,
    selected: Option<(usize, usize)>,
) -> String {
    let open_txn = view
        .transactions
        .iter()
        .rev()
        .find(|t| t.state.is_unstable())
        .map(|t| t.id.clone());
    // The transaction begun last, while it is open; else the newest open.
    let last_open = last_txn.map(str::to_string).filter(|id| {
        view.transactions
            .iter()
            .any(|t| &t.id == id && t.state.is_unstable())
    });
    let txn = last_open.or(open_txn).unwrap_or_else(|| "tx-1".into());
    let stopped = view
        .partitions
        .iter()
        .flat_map(|p| p.replicas.iter())
        .find(|r| r.stopped)
        .map(|r| r.broker);
    // Chapter 8's topic `out` when there is one (the demo has it, so
    // the chapter's experiment is a few presses of Enter), else the
    // first topic.
    let lesson = view
        .partitions
        .iter()
        .find(|p| p.topic == "out")
        .or(view.partitions.first());
    let topic = lesson.map_or_else(|| "out".to_string(), |p| p.topic.clone());
    let first_tp = lesson.map_or_else(|| "out-0".to_string(), |p| p.name());
    let n = view.step + 1;
    let broker = view
        .partitions
        .first()
        .and_then(|p| p.replicas.iter().find(|r| !r.is_leader))
        .map_or(1, |r| r.broker);
    // Chapter 9: the first group (or `workers`, the lesson's, for a join
    // or staged offsets, which need no group yet), and its member whose
    // session ends first (the one `E` expires, `h` renews).
    let group = view.groups.first();
    let group_id = group.map_or_else(|| "workers".to_string(), |g| g.group.clone());
    let next_to_expire = group.and_then(|g| g.members.iter().min_by_key(|m| m.deadline_ms));
    // `G`, `h` and `E` act on a member the group has: with no group the
    // prompt opens empty, with no member it holds the group and a space.
    let member_of = |then: &dyn Fn(&str) -> String| match (group, next_to_expire) {
        (None, _) => String::new(),
        (Some(g), None) => format!("{} ", g.group),
        (Some(g), Some(m)) => then(&format!("{} {}", g.group, m.member)),
    };
    let generation = group.map_or(1, |g| g.generation);
    // `o`: the selected batch's partition and the offset after it (the
    // consumer has processed it), else the lesson's partition and its
    // LSO, where a read_committed consumer that read it all stands.
    let offsets_at = selected
        .and_then(|(p, b)| {
            let part = view.partitions.get(p)?;
            Some((part.name(), part.batches.get(b)?.last_offset + 1))
        })
        .or_else(|| lesson.map(|p| (p.name(), p.last_stable_offset)))
        .unwrap_or_else(|| ("out-0".to_string(), 0));
    let new_member = (1..)
        .map(|i| format!("member-{i}"))
        .find(|id| group.is_none_or(|g| !g.members.iter().any(|m| &m.member == id)))
        .expect("some member id is free");
    match kind {
        PromptKind::JoinGroup => format!("{group_id} {new_member} {topic}"),
        PromptKind::LeaveGroup | PromptKind::Expire => member_of(&|gm| gm.to_string()),
        PromptKind::Heartbeat => member_of(&|gm| format!("{gm} {generation}")),
        PromptKind::Retention => format!("{topic} retention_ms=1000"),
        PromptKind::Compact => format!("{topic} 1000"),
        PromptKind::CreateTopic => {
            // A name no topic has, one partition, one replica per running
            // broker up to three: the chapters' shape.
            let name = (1..)
                .map(|i| format!("topic-{i}"))
                .find(|n| !view.partitions.iter().any(|p| &p.topic == n))
                .expect("some name is free");
            let running = view.brokers.iter().filter(|b| !b.stopped).count();
            format!("{name} 1 {}", running.clamp(1, 3))
        }
        PromptKind::Produce => format!("{topic} value-{n} acks=1"),
        PromptKind::Begin => (1..)
            .map(|i| format!("tx-{i}"))
            .find(|id| !view.transactions.iter().any(|t| &t.id == id))
            .expect("some id is free"),
        PromptKind::Send => format!("{txn} {topic} value-{n}"),
        PromptKind::SendOffsets => {
            let (tp, offset) = offsets_at;
            format!("{txn} {group_id} {tp} {offset}")
        }
        PromptKind::Commit | PromptKind::Abort => txn,
        PromptKind::CrashAtCut => format!("{txn} prepare"),
        PromptKind::ReplicateBroker => broker.to_string(),
        PromptKind::AdvanceClock => "1000".into(),
        PromptKind::TearJournal => "5".into(),
        PromptKind::TearLog => format!(
            "{first_tp} {} 5",
            view.partitions.first().map_or(1, |p| p.leader)
        ),
        PromptKind::StopBroker => broker.to_string(),
        PromptKind::StartBroker => stopped.unwrap_or(broker).to_string(),
        PromptKind::Promote => format!("{first_tp} {broker}"),
        PromptKind::GotoStep => view.step.to_string(),
    }
}

/// The step typed into the `g` prompt, from 0 to `last`; or, in `lang`,
/// what was wrong with what was typed and what is right (the text stays,
/// selected, to be typed over or edited: docs/dashboard.md "Go to step").
pub fn parse_step(text: &str, last: usize, lang: Lang) -> Result<usize, String> {
    let text = text.trim();
    match text.parse::<usize>() {
        Ok(n) if n <= last => Ok(n),
        Ok(n) => Err(lang.pick(
            format!("no step {n}: a step from 0 to {last}"),
            format!("没有步骤 {n}：步骤应在 0 到 {last} 之间"),
        )),
        Err(_) if text.is_empty() => Err(lang.pick(
            format!("type a step from 0 to {last}"),
            format!("请输入 0 到 {last} 之间的步骤"),
        )),
        Err(_) => Err(lang.pick(
            format!("{text:?} is not a step number: a step from 0 to {last}"),
            format!("{text:?} 不是步骤号：步骤应在 0 到 {last} 之间"),
        )),
    }
}

/// An open prompt: which action, the text being edited, where the cursor
/// is, and why the last Enter was refused (cleared by the next edit). The
/// editing keys are in `ui::prompt_edit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub kind: PromptKind,
    pub text: String,
    /// The cursor, as a byte offset into `text` on a character boundary:
    /// typing inserts there.
    pub cursor: usize,
    pub refusal: Option<String>,
    /// The whole text is selected: typing replaces it, Backspace, Delete
    /// or Ctrl-U clear it, and a cursor key ends the selection and moves
    /// in the text (the `g` prompt's step, docs/dashboard.md "Go to step").
    pub selected: bool,
}

impl Prompt {
    /// A prompt for `kind` holding `text`, the cursor at its end.
    pub fn new(kind: PromptKind, text: String) -> Self {
        Self {
            kind,
            cursor: text.len(),
            text,
            refusal: None,
            selected: false,
        }
    }

    /// [`Prompt::new`] with the text selected, so that typing replaces it.
    pub fn selecting(kind: PromptKind, text: String) -> Self {
        Self {
            selected: !text.is_empty(),
            ..Self::new(kind, text)
        }
    }

    /// What the prompt asks for, shown before the input.
    pub fn label(&self, lang: Lang) -> &'static str {
        if lang == Lang::Zh {
            return match self.kind {
                PromptKind::Produce => "生产：topic 值 [acks= key= partition= producer=]",
                PromptKind::Begin => "开启事务：事务 ID",
                PromptKind::Send => "事务内发送：事务 topic 值 [key= partition=]",
                PromptKind::SendOffsets => "暂存 offset：事务 消费组 topic-分区 offset",
                PromptKind::Commit => "提交：事务",
                PromptKind::Abort => "中止：事务",
                PromptKind::CrashAtCut => {
                    "提交并崩溃：事务 切点（prepare|marker:N|markers|offsets）"
                }
                PromptKind::ReplicateBroker => "复制：broker",
                PromptKind::AdvanceClock => "推进时钟：毫秒",
                PromptKind::TearJournal => "撕裂事务日志：截掉的字节数，或 garbage",
                PromptKind::TearLog => "撕裂日志：topic-分区 broker 字节数|garbage",
                PromptKind::StopBroker => "停止 broker",
                PromptKind::StartBroker => "启动 broker",
                PromptKind::Promote => "提升副本：topic-分区 broker",
                PromptKind::JoinGroup => "加入消费组：消费组 成员 topic[,topic…]",
                PromptKind::LeaveGroup => "离开消费组：组 成员",
                PromptKind::Heartbeat => "心跳：组 成员 代数",
                PromptKind::Expire => "过期（时钟越过成员的会话期限）：组 成员",
                PromptKind::Retention => {
                    "保留策略：topic[-分区] [retention_ms=毫秒] [retention_bytes=字节]"
                }
                PromptKind::Compact => "压缩：topic[-分区] delete_retention_ms",
                PromptKind::CreateTopic => "新建 topic：名称 分区数 副本数",
                PromptKind::GotoStep => "跳到步骤：N",
            };
        }
        match self.kind {
            PromptKind::Produce => "produce: topic value [acks= key= partition= producer=]",
            PromptKind::Begin => "begin: transaction id",
            PromptKind::Send => "send: txn topic value [key= partition=]",
            PromptKind::SendOffsets => "send offsets: txn group topic-partition offset",
            PromptKind::Commit => "commit: txn",
            PromptKind::Abort => "abort: txn",
            PromptKind::CrashAtCut => "commit and crash: txn prepare|marker:N|markers|offsets",
            PromptKind::ReplicateBroker => "replicate: broker",
            PromptKind::AdvanceClock => "advance clock: ms",
            PromptKind::TearJournal => "tear journal: bytes to cut, or 'garbage'",
            PromptKind::TearLog => "tear log: topic-partition broker bytes|garbage",
            PromptKind::StopBroker => "stop broker",
            PromptKind::StartBroker => "start broker",
            PromptKind::Promote => "promote: topic-partition broker",
            PromptKind::JoinGroup => "join: group member topic[,topic…]",
            PromptKind::LeaveGroup => "leave: group member",
            PromptKind::Heartbeat => "heartbeat: group member generation",
            PromptKind::Expire => "expire (clock past the member's deadline): group member",
            PromptKind::Retention => {
                "retention: topic[-partition] [retention_ms=N] [retention_bytes=N]"
            }
            PromptKind::Compact => "compact: topic[-partition] delete_retention_ms",
            PromptKind::CreateTopic => "new topic: name partitions replication_factor",
            PromptKind::GotoStep => "go to step: N",
        }
    }
}

/// What a prompt may check before it makes an action: the cluster's
/// structure, from a snapshot ([`Facts::of`], `App::facts`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// The configured brokers.
    pub brokers: BTreeSet<u32>,
    pub stopped: BTreeSet<u32>,
    /// Topic name -> partition count.
    pub topics: BTreeMap<String, u32>,
    /// (topic, partition) -> the brokers holding a replica.
    pub replicas: BTreeMap<(String, u32), Vec<u32>>,
    /// The engine clock: what `E` counts a member's deadline from.
    pub clock_ms: u64,
    /// Group id -> member id -> its session deadline (ms on the clock).
    pub deadlines: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Facts {
    /// The facts a snapshot shows: its brokers (those that hold no replica
    /// too) and the partitions' replicas.
    pub fn of(snapshot: &Snapshot) -> Self {
        let mut facts = Facts {
            clock_ms: snapshot.clock_ms,
            ..Facts::default()
        };
        for g in &snapshot.groups {
            let members = g
                .members
                .iter()
                .map(|m| (m.member.clone(), m.deadline_ms))
                .collect();
            facts.deadlines.insert(g.group.clone(), members);
        }
        for b in &snapshot.brokers {
            facts.brokers.insert(b.id);
            if b.stopped {
                facts.stopped.insert(b.id);
            }
        }
        for p in &snapshot.partitions {
            let count = facts.topics.entry(p.topic.clone()).or_default();
            *count = (*count).max(p.partition + 1);
            let replicas: Vec<u32> = p.replicas.iter().map(|r| r.broker).collect();
            facts.brokers.extend(&replicas);
            facts
                .stopped
                .extend(p.replicas.iter().filter(|r| r.stopped).map(|r| r.broker));
            facts
                .replicas
                .insert((p.topic.clone(), p.partition), replicas);
        }
        facts
    }
}

/// One word of a prompt: its text with quotes and escapes resolved, and the
/// byte position in `text` of its first `=` outside quotes, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub eq: Option<usize>,
}

/// Splits a prompt into words (see the module comment for the quoting).
pub fn words(text: &str) -> Result<Vec<Word>, Said> {
    let mut out = Vec::new();
    let mut chars = text.chars();
    let mut current: Option<Word> = None;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            out.extend(current.take());
            continue;
        }
        let word = current.get_or_insert_with(|| Word {
            text: String::new(),
            eq: None,
        });
        match c {
            '"' => loop {
                match chars.next() {
                    None => {
                        return Err(unterminated());
                    }
                    Some('"') => break,
                    Some('\\') => match chars.next() {
                        Some(e @ ('"' | '\\')) => word.text.push(e),
                        Some(other) => {
                            return Err(Said::new(
                                format!(
                                    "unknown escape \\{other} in quotes: only \\\" and \\\\ are escapes"
                                ),
                                format!("引号内不认识 \\{other}：只有 \\\" 和 \\\\ 是转义"),
                            ));
                        }
                        None => {
                            return Err(unterminated());
                        }
                    },
                    Some(other) => word.text.push(other),
                }
            },
            '=' if word.eq.is_none() => {
                word.eq = Some(word.text.len());
                word.text.push('=');
            }
            other => word.text.push(other),
        }
    }
    out.extend(current);
    Ok(out)
}

/// A prompt's words sorted out: the positional values and the fields.
struct Args {
    plain: Vec<String>,
    fields: BTreeMap<String, String>,
}

impl Args {
    /// Positional value `i` (there are exactly as many as [`args`] was
    /// asked for).
    fn at(&self, i: usize) -> &str {
        &self.plain[i]
    }

    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// Sorts `words` into exactly `positional.len()` values and fields from
/// `allowed` (a kind without fields reads every word as a value).
fn args(words: Vec<Word>, positional: &[&str], allowed: &[&str]) -> Result<Args, Said> {
    let mut plain = Vec::new();
    let mut fields = BTreeMap::new();
    for w in words {
        match w.eq {
            Some(at) if !allowed.is_empty() => {
                let (name, value) = (&w.text[..at], &w.text[at + 1..]);
                if !allowed.contains(&name) {
                    let fields = allowed
                        .iter()
                        .map(|f| format!("{f}="))
                        .collect::<Vec<_>>()
                        .join(" ");
                    return Err(Said::new(
                        format!(
                            "unknown field {name}=: the fields are {fields} (a value with '=' goes in double quotes)"
                        ),
                        format!(
                            "没有字段 {name}=：可用的字段是 {fields}（含 '=' 的值要放在双引号里）"
                        ),
                    ));
                }
                fields.insert(name.to_string(), value.to_string());
            }
            _ => plain.push(w.text),
        }
    }
    if let Some(missing) = positional.get(plain.len()) {
        return Err(Said::new(
            format!("missing {missing}"),
            format!("缺少 {}", word_zh(missing)),
        ));
    }
    if let Some(extra) = plain.get(positional.len()) {
        return Err(Said::new(
            format!(
                "one word too many: {extra:?} (a value with spaces goes in double quotes: \"hello world\")"
            ),
            format!("多了一个词：{extra:?}（含空格的值要放在双引号里：\"你好 世界\"）"),
        ));
    }
    Ok(Args { plain, fields })
}

/// The whole numbers a prompt reads, with the largest each holds: a
/// number past it is said to be too large, with the bound, not to be no
/// whole number.
trait Whole: std::str::FromStr {
    const MAX: u64;
}

impl Whole for u32 {
    const MAX: u64 = u32::MAX as u64;
}

impl Whole for u64 {
    const MAX: u64 = u64::MAX;
}

impl Whole for i32 {
    const MAX: u64 = i32::MAX as u64;
}

impl Whole for i64 {
    const MAX: u64 = i64::MAX as u64;
}

/// `s` as a whole number, or why not.
fn number<T: Whole>(s: &str, what: &str) -> Result<T, Said> {
    s.parse().map_err(|_| {
        let digits = s.strip_prefix('+').unwrap_or(s);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            let max = T::MAX;
            return Said::new(
                format!("{what} is too large: at most {max}, got {s}"),
                format!("{} 太大：最大为 {max}，而不是 {s}", word_zh(what)),
            );
        }
        Said::new(
            format!("{what} must be a whole number, got {s:?}"),
            format!("{} 必须是整数，而不是 {s:?}", word_zh(what)),
        )
    })
}

/// A consumer offset: a whole number, 0 or more (Kafka's OffsetCommit
/// refuses a negative one).
fn offset(s: &str) -> Result<i64, Said> {
    let o: i64 = number(s, "offset")?;
    if o < 0 {
        return Err(Said::new(
            format!("offset must be 0 or more, got {o}"),
            format!("{} 必须大于等于 0，而不是 {o}", word_zh("offset")),
        ));
    }
    Ok(o)
}

fn list<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let items: Vec<String> = items.into_iter().map(|i| i.to_string()).collect();
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// [`list`] in Chinese: an empty one is 无.
fn list_zh(list: &str) -> &str {
    if list == "none" { "无" } else { list }
}

/// A topic of the cluster.
fn topic(facts: &Facts, name: &str) -> Result<String, Said> {
    if facts.topics.contains_key(name) {
        Ok(name.to_string())
    } else {
        let topics = list(facts.topics.keys());
        Err(Said::new(
            format!("unknown topic {name:?}: the topics are {topics}"),
            format!("没有 topic {name:?}：现有 topic 是 {}", list_zh(&topics)),
        ))
    }
}

/// A partition of `topic` (already known).
fn partition(facts: &Facts, topic: &str, p: &str) -> Result<u32, Said> {
    let p: u32 = number(p, "partition")?;
    let count = facts.topics.get(topic).copied().unwrap_or(0);
    if p < count {
        Ok(p)
    } else {
        let last = count.saturating_sub(1);
        Err(Said::new(
            format!("unknown partition {topic}-{p}: {topic} has partitions 0 to {last}"),
            format!("没有分区 {topic}-{p}：{topic} 的分区是 0 到 {last}"),
        ))
    }
}

/// `topic-partition` (split at the last '-') of the cluster.
fn topic_partition(facts: &Facts, s: &str) -> Result<(String, u32), Said> {
    let (t, p) = s.rsplit_once('-').ok_or_else(|| {
        Said::new(
            format!("{s:?}: expected topic-partition, like out-0"),
            format!("{s:?}：应为 topic-分区，例如 out-0"),
        )
    })?;
    let t = topic(facts, t)?;
    let p = partition(facts, &t, p)?;
    Ok((t, p))
}

/// A configured broker.
fn broker(facts: &Facts, s: &str) -> Result<u32, Said> {
    let b: u32 = number(s, "broker")?;
    if facts.brokers.contains(&b) {
        Ok(b)
    } else {
        let brokers = list(&facts.brokers);
        Err(Said::new(
            format!("unknown broker {b}: the brokers are {brokers}"),
            format!("没有 broker {b}：现有 broker 是 {}", list_zh(&brokers)),
        ))
    }
}

/// A broker holding a replica of `topic-partition`.
fn replica(facts: &Facts, topic: &str, partition: u32, s: &str) -> Result<u32, Said> {
    let b = broker(facts, s)?;
    let replicas = facts
        .replicas
        .get(&(topic.to_string(), partition))
        .map_or(&[][..], Vec::as_slice);
    if replicas.contains(&b) {
        Ok(b)
    } else {
        let replicas = list(replicas);
        Err(Said::new(
            format!(
                "broker {b} holds no replica of {topic}-{partition} (its replicas: {replicas})"
            ),
            format!(
                "broker {b} 上没有 {topic}-{partition} 的副本（它的副本在：{}）",
                list_zh(&replicas)
            ),
        ))
    }
}

/// A topic (every partition of it) or one `topic-partition` of the
/// cluster: a topic's own name wins, so `my-topic` is the topic, not
/// partition `topic` of `my`.
fn topic_or_partition(facts: &Facts, s: &str) -> Result<(String, Option<u32>), Said> {
    if facts.topics.contains_key(s) {
        return Ok((s.to_string(), None));
    }
    match s.rsplit_once('-') {
        Some((t, p)) if facts.topics.contains_key(t) => {
            Ok((t.to_string(), Some(partition(facts, t, p)?)))
        }
        _ => topic(facts, s).map(|t| (t, None)),
    }
}

/// A group or member id: any text but the empty one.
fn id(s: &str, what: &str) -> Result<String, Said> {
    if s.is_empty() {
        Err(Said::new(
            format!("{what} is empty: give its id"),
            format!("{} 为空：请给出它的 ID", word_zh(what)),
        ))
    } else {
        Ok(s.to_string())
    }
}

/// The session deadline of member `member` of group `group`, from the
/// snapshot: `E` can only move the clock past a deadline it knows.
fn deadline(facts: &Facts, group: &str, member: &str) -> Result<u64, Said> {
    let Some(members) = facts.deadlines.get(group) else {
        let groups = list(facts.deadlines.keys());
        return Err(Said::new(
            format!("unknown group {group:?}: the groups are {groups}"),
            format!("没有消费组 {group:?}：现有消费组是 {}", list_zh(&groups)),
        ));
    };
    members.get(member).copied().ok_or_else(|| {
        let names = list(members.keys());
        Said::new(
            format!("{member:?} is not a member of {group}: its members are {names}"),
            format!(
                "{member:?} 不是 {group} 的成员：它的成员是 {}",
                list_zh(&names)
            ),
        )
    })
}

/// `cut_bytes` or the default garbage tail.
fn tear(target: TearTargetSpec, how: &str) -> Result<Action, Said> {
    Ok(if how == "garbage" {
        Action::Tear {
            target,
            cut_bytes: None,
            append_garbage: Some(GarbageSpec::Default(true)),
        }
    } else {
        Action::Tear {
            target,
            cut_bytes: Some(number(how, "bytes to cut")?),
            append_garbage: None,
        }
    })
}

/// "unterminated quote …", in both languages.
fn unterminated() -> Said {
    Said::new(
        "unterminated quote: close the value with \" (write \\\" for a quote inside)",
        "引号没有闭合：用 \" 结束这个值（值里的引号写作 \\\"）",
    )
}

/// An action field's own parse error: its English, and in Chinese the
/// field's allowed values (the value itself is on the prompt line).
fn field_error(e: impl std::fmt::Display, zh: &str) -> Said {
    Said::new(e.to_string(), zh.to_string())
}

/// A prompt word's name (`args`' positional names, `number`'s `what`)
/// in Chinese.
fn word_zh(what: &str) -> &str {
    match what {
        "topic" => "topic",
        "value" => "值",
        "transaction id" => "事务 ID",
        "group" => "消费组",
        "topic-partition" => "topic-分区",
        "offset" => "offset",
        "cut point" => "切点",
        "broker" => "broker",
        "milliseconds" => "毫秒数",
        "partition" => "分区",
        "bytes to cut" => "截掉的字节数",
        "bytes to cut or garbage" => "截掉的字节数或 garbage",
        "member" => "成员",
        "topics" => "topic（多个用逗号分隔）",
        "generation" => "代数",
        "topic or topic-partition" => "topic 或 topic-分区",
        "retention_ms" => "retention_ms",
        "retention_bytes" => "retention_bytes",
        "name" => "名称",
        "partitions" => "分区数",
        "replication_factor" => "副本数",
        other => other,
    }
}

/// Turns a prompt's text into an action, or says why it cannot.
pub fn parse(kind: PromptKind, text: &str, facts: &Facts) -> Result<Action, Said> {
    let words = words(text)?;
    let a = |positional: &[&str], allowed: &[&str]| args(words.clone(), positional, allowed);
    Ok(match kind {
        PromptKind::GotoStep => {
            return Err(Said::new(
                "go to step moves the replay; it is not an engine action",
                "跳到步骤移动的是回放，不是引擎动作",
            ));
        }
        PromptKind::JoinGroup => {
            let a = a(&["group", "member", "topics"], &[])?;
            let topics = a
                .at(2)
                .split(',')
                .map(|t| topic(facts, t))
                .collect::<Result<Vec<_>, _>>()?;
            Action::JoinGroup {
                group: id(a.at(0), "group")?,
                member: id(a.at(1), "member")?,
                topics,
            }
        }
        PromptKind::LeaveGroup => {
            let a = a(&["group", "member"], &[])?;
            Action::LeaveGroup {
                group: id(a.at(0), "group")?,
                member: id(a.at(1), "member")?,
            }
        }
        PromptKind::Heartbeat => {
            let a = a(&["group", "member", "generation"], &[])?;
            Action::Heartbeat {
                group: id(a.at(0), "group")?,
                member: id(a.at(1), "member")?,
                generation: number(a.at(2), "generation")?,
            }
        }
        PromptKind::Expire => {
            let a = a(&["group", "member"], &[])?;
            let deadline = deadline(facts, a.at(0), a.at(1))?;
            // Expiry is strict (`now > deadline`): one millisecond past it.
            Action::AdvanceClock {
                ms: deadline.saturating_sub(facts.clock_ms) + 1,
            }
        }
        PromptKind::Retention => {
            let a = a(
                &["topic or topic-partition"],
                &["retention_ms", "retention_bytes"],
            )?;
            let (topic, partition) = topic_or_partition(facts, a.at(0))?;
            let field = |name| a.field(name).map(|v| number::<u64>(v, name)).transpose();
            let (retention_ms, retention_bytes) =
                (field("retention_ms")?, field("retention_bytes")?);
            match (retention_ms, retention_bytes) {
                (None, None) => {
                    return Err(Said::new(
                        "give retention_ms=, retention_bytes= or both",
                        "请给出 retention_ms=、retention_bytes= 或两者",
                    ));
                }
                (_, Some(0)) => {
                    return Err(Said::new(
                        "retention_bytes must be positive",
                        "retention_bytes 必须大于 0",
                    ));
                }
                _ => {}
            }
            Action::Retention {
                topic,
                partition,
                retention_ms,
                retention_bytes,
            }
        }
        PromptKind::CreateTopic => {
            let a = a(&["name", "partitions", "replication_factor"], &[])?;
            let name = id(a.at(0), "name")?;
            if facts.topics.contains_key(&name) {
                return Err(Said::new(
                    format!("topic {name:?} exists already"),
                    format!("topic {name:?} 已经存在"),
                ));
            }
            let partitions: u32 = number(a.at(1), "partitions")?;
            let replication_factor: u32 = number(a.at(2), "replication_factor")?;
            let brokers = facts.brokers.len();
            if partitions == 0 || replication_factor == 0 {
                return Err(Said::new(
                    "partitions and replication_factor must be at least 1",
                    "分区数和副本数至少为 1",
                ));
            }
            if replication_factor as usize > brokers {
                return Err(Said::new(
                    format!(
                        "replication_factor {replication_factor} is more than the {brokers} brokers"
                    ),
                    format!("副本数 {replication_factor} 多于 broker 数 {brokers}"),
                ));
            }
            Action::CreateTopic {
                name,
                partitions,
                replication_factor,
                timestamp_type: Default::default(),
                config: Default::default(),
            }
        }
        PromptKind::Compact => {
            let a = a(&["topic or topic-partition", "delete_retention_ms"], &[])?;
            let (topic, partition) = topic_or_partition(facts, a.at(0))?;
            Action::Compact {
                topic,
                partition,
                delete_retention_ms: number(a.at(1), "delete_retention_ms")?,
                crash_at: None,
            }
        }
        PromptKind::Produce => {
            let a = a(
                &["topic", "value"],
                &["acks", "key", "partition", "producer"],
            )?;
            let topic = topic(facts, a.at(0))?;
            Action::Produce {
                partition: a
                    .field("partition")
                    .map(|p| partition(facts, &topic, p))
                    .transpose()?,
                topic,
                key: a.field("key").map(str::to_string),
                value: Some(a.at(1).to_string()),
                records: Vec::new(),
                // Parsed into the action's typed field, by the same parser a
                // recording's `acks` goes through: the prompt accepts exactly
                // what a recording does.
                acks: a
                    .field("acks")
                    .map(str::parse)
                    .transpose()
                    .map_err(|e| field_error(e, "acks 只能是 0、1 或 all"))?,
                producer: a.field("producer").map(str::to_string),
                wire: None,
            }
        }
        PromptKind::Begin => Action::Begin {
            txn: a(&["transaction id"], &[])?.at(0).to_string(),
            init: false,
        },
        PromptKind::Send => {
            let a = a(&["transaction id", "topic", "value"], &["key", "partition"])?;
            let topic = topic(facts, a.at(1))?;
            Action::Send {
                txn: a.at(0).to_string(),
                partition: a
                    .field("partition")
                    .map(|p| partition(facts, &topic, p))
                    .transpose()?,
                topic,
                key: a.field("key").map(str::to_string),
                value: Some(a.at(2).to_string()),
                records: Vec::new(),
                wire: None,
            }
        }
        PromptKind::SendOffsets => {
            let a = a(
                &["transaction id", "group", "topic-partition", "offset"],
                &[],
            )?;
            // The offsets are of the input topic the transaction consumed,
            // which need not be a topic of this cluster.
            let (topic, p) = a.at(2).rsplit_once('-').ok_or_else(|| {
                Said::new(
                    format!("{:?}: expected topic-partition, like in-0", a.at(2)),
                    format!("{:?}：应为 topic-分区，例如 in-0", a.at(2)),
                )
            })?;
            Action::SendOffsets {
                txn: a.at(0).to_string(),
                group: a.at(1).to_string(),
                offsets: vec![OffsetSpec {
                    topic: topic.to_string(),
                    partition: number(p, "partition")?,
                    offset: offset(a.at(3))?,
                }],
            }
        }
        PromptKind::Commit => Action::Commit {
            txn: a(&["transaction id"], &[])?.at(0).to_string(),
            crash_after: None,
        },
        PromptKind::Abort => Action::Abort {
            txn: a(&["transaction id"], &[])?.at(0).to_string(),
            crash_after: None,
        },
        PromptKind::CrashAtCut => {
            let a = a(&["transaction id", "cut point"], &[])?;
            Action::Commit {
                txn: a.at(0).to_string(),
                crash_after: Some(a.at(1).parse().map_err(|e| {
                    field_error(e, "切点只能是 prepare、marker:N、markers 或 offsets")
                })?),
            }
        }
        PromptKind::ReplicateBroker => Action::Replicate {
            broker: Some(broker(facts, a(&["broker"], &[])?.at(0))?),
            topic: None,
            partition: None,
        },
        PromptKind::AdvanceClock => Action::AdvanceClock {
            ms: number(a(&["milliseconds"], &[])?.at(0), "milliseconds")?,
        },
        PromptKind::TearJournal => tear(
            TearTargetSpec::Journal,
            a(&["bytes to cut or garbage"], &[])?.at(0),
        )?,
        PromptKind::TearLog => {
            let a = a(
                &["topic-partition", "broker", "bytes to cut or garbage"],
                &[],
            )?;
            let (topic, partition) = topic_partition(facts, a.at(0))?;
            let broker = replica(facts, &topic, partition, a.at(1))?;
            tear(
                TearTargetSpec::Log {
                    topic,
                    partition,
                    broker,
                },
                a.at(2),
            )?
        }
        PromptKind::StopBroker => Action::StopBroker {
            broker: broker(facts, a(&["broker"], &[])?.at(0))?,
        },
        PromptKind::StartBroker => Action::StartBroker {
            broker: broker(facts, a(&["broker"], &[])?.at(0))?,
        },
        PromptKind::Promote => {
            let a = a(&["topic-partition", "broker"], &[])?;
            let (topic, partition) = topic_partition(facts, a.at(0))?;
            let broker = replica(facts, &topic, partition, a.at(1))?;
            if facts.stopped.contains(&broker) {
                return Err(Said::new(
                    format!(
                        "broker {broker} is stopped: a stopped broker cannot lead; start it first (Z)"
                    ),
                    format!("broker {broker} 已停止：停止的 broker 不能当 leader；先启动它（Z）"),
                ));
            }
            Action::Promote {
                topic,
                partition,
                broker,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brokers 1-3 (3 stopped); `out` with 2 partitions on 1 and 2,
    /// `my-topic` with 3 partitions on all three.
    fn facts() -> Facts {
        let mut f = Facts {
            brokers: [1, 2, 3].into(),
            stopped: [3].into(),
            topics: [("out".to_string(), 2), ("my-topic".to_string(), 3)].into(),
            replicas: BTreeMap::new(),
            clock_ms: 6000,
            deadlines: [(
                "workers".to_string(),
                [
                    ("member-1".to_string(), 10_000),
                    ("member-2".to_string(), 16_000),
                ]
                .into(),
            )]
            .into(),
        };
        for p in 0..2 {
            f.replicas.insert(("out".into(), p), vec![1, 2]);
        }
        for p in 0..3 {
            f.replicas.insert(("my-topic".into(), p), vec![1, 2, 3]);
        }
        f
    }

    /// A frame's snapshot of a cluster with `brokers` and one topic `out`
    /// of `partitions` x `rf`, after broker `stopped` was stopped.
    fn snapshot_with_stopped(
        brokers: &str,
        partitions: u32,
        rf: u32,
        stopped: u32,
    ) -> crate::session::Snapshot {
        let header: crate::session::recording::Header = serde_json::from_str(&format!(
            r#"{{"mk_recording":1,"cluster":{{"brokers":{brokers},"topics":[{{"name":"out","partitions":{partitions},"replication_factor":{rf}}}]}}}}"#
        ))
        .unwrap();
        let mut driver = crate::session::Driver::new(&header, None).unwrap();
        driver.apply(&Action::StopBroker { broker: stopped });
        crate::session::snapshot::build(&driver, &crate::session::snapshot::Bounds::FRAME)
    }

    #[test]
    fn facts_come_from_the_snapshot() {
        let snapshot = snapshot_with_stopped("[1,2,3]", 2, 2, 3);
        let facts = Facts::of(&snapshot);
        assert_eq!(facts.topics, [("out".to_string(), 2)].into());
        assert_eq!(facts.brokers, [1, 2, 3].into());
        assert_eq!(facts.stopped, [3].into());
        let replicas: Vec<u32> = snapshot.partitions[1]
            .replicas
            .iter()
            .map(|r| r.broker)
            .collect();
        assert_eq!(facts.replicas[&("out".to_string(), 1)], replicas);
        assert_eq!(facts.replicas.len(), 2);
        let stopped_replica = |p: u32| facts.replicas[&("out".to_string(), p)].contains(&3);
        let p = if stopped_replica(0) { 0 } else { 1 };
        let e = parse(PromptKind::Promote, &format!("out-{p} 3"), &facts).unwrap_err();
        assert!(e.en.starts_with("broker 3 is stopped"), "{e}");
        assert!(e.zh.starts_with("broker 3 已停止"), "{}", e.zh);
    }

    #[test]
    fn a_broker_without_replicas_is_known_from_the_snapshot() {
        let snapshot = snapshot_with_stopped("[1,2,3,4]", 1, 1, 4);
        assert!(
            snapshot.partitions[0]
                .replicas
                .iter()
                .all(|r| r.broker != 4)
        );
        let facts = Facts::of(&snapshot);
        assert_eq!(facts.brokers, [1, 2, 3, 4].into());
        assert_eq!(facts.stopped, [4].into());
        assert!(parse(PromptKind::StartBroker, "4", &facts).is_ok());
        assert!(parse(PromptKind::StartBroker, "5", &facts).is_err());
    }

    fn ok(kind: PromptKind, text: &str) -> Action {
        parse(kind, text, &facts()).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    fn refused(kind: PromptKind, text: &str) -> String {
        match parse(kind, text, &facts()) {
            Ok(a) => panic!("{text:?} was accepted as {a:?}"),
            Err(e) => {
                // Every refusal of the prompt is said in Chinese too.
                assert!(
                    !e.zh.is_empty() && e.zh != e.en,
                    "{text:?}: no Chinese for {e}"
                );
                e.en
            }
        }
    }

    fn texts(text: &str) -> Vec<String> {
        words(text).unwrap().into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn quotes_keep_spaces_and_escapes() {
        assert_eq!(texts(r#"out "hello world""#), ["out", "hello world"]);
        assert_eq!(texts(r#"  a   "" b "#), ["a", "", "b"]);
        assert_eq!(
            texts(r#""say \"hi\"" "back\\slash""#),
            [r#"say "hi""#, r"back\slash"]
        );
        assert_eq!(texts(r#"key="a b"c"#), ["key=a bc"]);
        assert_eq!(
            texts(r"a\b"),
            [r"a\b"],
            "outside quotes a backslash is itself"
        );
        // an '=' inside quotes is text, outside it makes a field
        let w = words(r#""a=b" k=v k="=""#).unwrap();
        assert_eq!(
            w.iter().map(|w| w.eq).collect::<Vec<_>>(),
            [None, Some(1), Some(1)]
        );
    }

    #[test]
    fn bad_quoting_is_refused_with_the_reason() {
        for text in [r#"out "hello"#, r#"out "a\"#, r#"out ""#] {
            let e = words(text).unwrap_err();
            assert!(e.en.starts_with("unterminated quote"), "{text}: {e}");
            assert!(e.zh.starts_with("引号没有闭合"), "{text}: {}", e.zh);
        }
        let e = words(r#"out "a\tb""#).unwrap_err();
        assert!(e.en.contains(r"unknown escape \t"), "{e}");
    }

    #[test]
    fn a_quoted_value_with_spaces_is_stored_whole() {
        assert_eq!(
            ok(
                PromptKind::Produce,
                r#"out "hello world" acks=all key="k 1""#
            ),
            Action::Produce {
                topic: "out".into(),
                partition: None,
                key: Some("k 1".into()),
                value: Some("hello world".into()),
                records: vec![],
                acks: Some("all".parse().unwrap()),
                producer: None,
                wire: None,
            }
        );
        assert!(matches!(
            ok(PromptKind::Send, r#"tx-1 out "a b" partition=1"#),
            Action::Send { ref value, partition: Some(1), .. } if value.as_deref() == Some("a b")
        ));
        assert!(matches!(
            ok(PromptKind::Begin, r#""tx one""#),
            Action::Begin { ref txn, .. } if txn == "tx one"
        ));
        assert!(matches!(
            ok(PromptKind::Produce, r#"out "x=1""#),
            Action::Produce { ref value, .. } if value.as_deref() == Some("x=1")
        ));
    }

    #[test]
    fn every_prompt_makes_its_action() {
        assert!(matches!(
            ok(PromptKind::TearLog, "out-0 2 garbage"),
            Action::Tear {
                target: TearTargetSpec::Log { broker: 2, .. },
                append_garbage: Some(GarbageSpec::Default(true)),
                ..
            }
        ));
        assert!(matches!(
            ok(PromptKind::TearJournal, "5"),
            Action::Tear {
                cut_bytes: Some(5),
                ..
            }
        ));
        assert!(matches!(
            ok(PromptKind::Promote, "my-topic-2 2"),
            Action::Promote { ref topic, partition: 2, broker: 2 } if topic == "my-topic"
        ));
        assert!(matches!(
            ok(PromptKind::CrashAtCut, "tx-1 marker:1"),
            Action::Commit { crash_after: Some(c), .. } if c.name() == "marker:1"
        ));
        assert!(matches!(
            ok(PromptKind::SendOffsets, "tx-1 workers in-0 7"),
            Action::SendOffsets { ref offsets, .. } if offsets[0].topic == "in" && offsets[0].offset == 7
        ));
        assert_eq!(
            ok(PromptKind::AdvanceClock, "1000"),
            Action::AdvanceClock { ms: 1000 }
        );
        assert_eq!(
            ok(PromptKind::StartBroker, "3"),
            Action::StartBroker { broker: 3 }
        );
        assert_eq!(
            ok(PromptKind::StopBroker, "1"),
            Action::StopBroker { broker: 1 }
        );
        assert!(matches!(
            ok(PromptKind::ReplicateBroker, "2"),
            Action::Replicate {
                broker: Some(2),
                ..
            }
        ));
        assert!(
            matches!(ok(PromptKind::Commit, "tx-9"), Action::Commit { .. }),
            "an unknown transaction is the engine's to refuse"
        );
        assert!(matches!(
            ok(PromptKind::Abort, "tx-1"),
            Action::Abort { .. }
        ));
    }

    #[test]
    fn the_new_topic_prompt_makes_create_topic_or_says_why_not() {
        assert_eq!(
            ok(PromptKind::CreateTopic, "lab 1 3"),
            Action::CreateTopic {
                name: "lab".into(),
                partitions: 1,
                replication_factor: 3,
                timestamp_type: Default::default(),
                config: Default::default(),
            }
        );
        assert!(refused(PromptKind::CreateTopic, "out 1 1").contains("exists already"));
        assert!(refused(PromptKind::CreateTopic, "lab 1 4").contains("more than the 3 brokers"));
        assert!(refused(PromptKind::CreateTopic, "lab 0 1").contains("at least 1"));
        assert!(refused(PromptKind::CreateTopic, "lab 1").contains("missing replication_factor"));
        // The default names a free topic, one partition, one replica per
        // running broker up to three.
        let view = crate::ui::panes::testkit::view();
        let text = default_text(PromptKind::CreateTopic, &view, None, None);
        let action = parse(PromptKind::CreateTopic, &text, &Facts::of(&view));
        assert!(
            matches!(action, Ok(Action::CreateTopic { partitions: 1, .. })),
            "{text:?}: {action:?}"
        );
    }

    /// A new user's trial: `o` offered the step number as the offset
    /// (`tx-open workers out-0 40` on a partition with LEO 0), and `h`/`E`
    /// offered `workers member-1` with no group, which `E` then refused.
    #[test]
    fn prompt_defaults_name_only_what_the_state_has() {
        let mut view = crate::ui::panes::testkit::view();
        let text = |view: &Snapshot, kind, selected| default_text(kind, view, None, selected);
        // out-0: LSO 3 (the view is at step 8): a read_committed consumer
        // that read it all stands at 3; with the batch 3-4 selected, at 5.
        let o = text(&view, PromptKind::SendOffsets, None);
        assert!(o.ends_with(" workers out-0 3"), "{o:?}");
        let o = text(&view, PromptKind::SendOffsets, Some((0, 3)));
        assert!(o.ends_with(" workers out-0 5"), "{o:?}");
        // No group: the prompts that need one open empty.
        for kind in [
            PromptKind::LeaveGroup,
            PromptKind::Heartbeat,
            PromptKind::Expire,
        ] {
            assert_eq!(text(&view, kind, None), "", "{kind:?}");
        }
        assert!(text(&view, PromptKind::JoinGroup, None).starts_with("workers member-1 "));
        // A group: its name everywhere, its member whose session ends first.
        view.groups = serde_json::from_value(serde_json::json!([{
            "group": "readers", "state": "stable", "generation": 2,
            "session_timeout_ms": 10000, "partitions": [],
            "members": [
                {"member": "m-b", "subscriptions": [], "assignment": [], "deadline_ms": 9000},
                {"member": "m-a", "subscriptions": [], "assignment": [], "deadline_ms": 7000}
            ]
        }]))
        .unwrap();
        assert_eq!(text(&view, PromptKind::Expire, None), "readers m-a");
        assert_eq!(text(&view, PromptKind::Heartbeat, None), "readers m-a 2");
        let o = text(&view, PromptKind::SendOffsets, None);
        assert!(o.ends_with(" readers out-0 3"), "{o:?}");
        // A group with no member left: the group, ready for a member.
        view.groups[0].members.clear();
        assert_eq!(text(&view, PromptKind::LeaveGroup, None), "readers ");
    }

    #[test]
    fn group_and_cleanup_prompts_make_their_actions() {
        assert_eq!(
            ok(PromptKind::JoinGroup, "workers member-3 out,my-topic"),
            Action::JoinGroup {
                group: "workers".into(),
                member: "member-3".into(),
                topics: vec!["out".into(), "my-topic".into()],
            }
        );
        assert_eq!(
            ok(PromptKind::LeaveGroup, "workers member-2"),
            Action::LeaveGroup {
                group: "workers".into(),
                member: "member-2".into(),
            }
        );
        assert_eq!(
            ok(PromptKind::Heartbeat, "workers member-2 3"),
            Action::Heartbeat {
                group: "workers".into(),
                member: "member-2".into(),
                generation: 3,
            }
        );
        // Clock 6000, member-1's deadline 10000: 4001 ms is just past it.
        assert_eq!(
            ok(PromptKind::Expire, "workers member-1"),
            Action::AdvanceClock { ms: 4001 }
        );
        assert_eq!(
            ok(PromptKind::Expire, "workers member-2"),
            Action::AdvanceClock { ms: 10_001 }
        );
        assert_eq!(
            ok(PromptKind::Retention, "my-topic retention_ms=1500"),
            Action::Retention {
                topic: "my-topic".into(),
                partition: None,
                retention_ms: Some(1500),
                retention_bytes: None,
            }
        );
        assert_eq!(
            ok(PromptKind::Retention, "out-1 retention_bytes=1"),
            Action::Retention {
                topic: "out".into(),
                partition: Some(1),
                retention_ms: None,
                retention_bytes: Some(1),
            }
        );
        assert_eq!(
            ok(PromptKind::Compact, "my-topic-2 1000"),
            Action::Compact {
                topic: "my-topic".into(),
                partition: Some(2),
                delete_retention_ms: 1000,
                crash_at: None,
            }
        );
        assert!(
            matches!(
                ok(PromptKind::LeaveGroup, "nope m"),
                Action::LeaveGroup { .. }
            ),
            "an unknown member leaving is the coordinator's to refuse"
        );
    }

    #[test]
    fn group_and_cleanup_prompts_refuse_bad_values_in_one_line() {
        use PromptKind as K;
        for (kind, text, reason) in [
            (K::JoinGroup, "workers m", "missing topics"),
            (
                K::JoinGroup,
                "workers m out,nope",
                r#"unknown topic "nope": the topics are my-topic, out"#,
            ),
            (K::JoinGroup, r#""" m out"#, "group is empty: give its id"),
            (
                K::LeaveGroup,
                r#"workers """#,
                "member is empty: give its id",
            ),
            (
                K::Heartbeat,
                "workers member-1 two",
                r#"generation must be a whole number, got "two""#,
            ),
            (
                K::Expire,
                "others member-1",
                r#"unknown group "others": the groups are workers"#,
            ),
            (
                K::Expire,
                "workers member-9",
                r#""member-9" is not a member of workers: its members are member-1, member-2"#,
            ),
            (
                K::Retention,
                "out",
                "give retention_ms=, retention_bytes= or both",
            ),
            (
                K::Retention,
                "out retention_bytes=0",
                "retention_bytes must be positive",
            ),
            (
                K::Retention,
                "out retention_ms=soon",
                r#"retention_ms must be a whole number, got "soon""#,
            ),
            (
                K::Retention,
                "out size=1",
                "unknown field size=: the fields are retention_ms= retention_bytes=",
            ),
            (
                K::Retention,
                "out-5 retention_ms=1",
                "unknown partition out-5",
            ),
            (K::Compact, "gone 1000", r#"unknown topic "gone""#),
            (K::Compact, "out", "missing delete_retention_ms"),
            (
                K::Compact,
                "out -1",
                r#"delete_retention_ms must be a whole number, got "-1""#,
            ),
        ] {
            let e = refused(kind, text);
            assert!(e.starts_with(reason), "{kind:?} {text:?}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }

    #[test]
    fn invalid_values_are_refused_with_the_reason() {
        use PromptKind as K;
        for (kind, text, reason) in [
            (
                K::Produce,
                "out v acks=2",
                r#"unknown acks "2": expected "0", "1" or "all""#,
            ),
            (
                K::Produce,
                "out v colour=red",
                "unknown field colour=: the fields are acks= key= partition= producer=",
            ),
            (
                K::Produce,
                "out hello world",
                r#"one word too many: "world""#,
            ),
            (K::Produce, "out", "missing value"),
            (
                K::Produce,
                "nope v",
                r#"unknown topic "nope": the topics are my-topic, out"#,
            ),
            (
                K::Produce,
                "out v partition=2",
                "unknown partition out-2: out has partitions 0 to 1",
            ),
            (
                K::Produce,
                "out v partition=x",
                r#"partition must be a whole number, got "x""#,
            ),
            (K::Send, "tx-1 out", "missing value"),
            (K::Send, "tx-1 nope v", r#"unknown topic "nope""#),
            (
                K::CrashAtCut,
                "tx-1 whenever",
                r#"unknown cut point "whenever": expected "prepare", "marker:N", "markers" or "offsets""#,
            ),
            (K::CrashAtCut, "tx-1 marker:x", "unknown cut point"),
            (
                K::AdvanceClock,
                "soon",
                r#"milliseconds must be a whole number, got "soon""#,
            ),
            (K::AdvanceClock, "-5", "milliseconds must be a whole number"),
            (
                K::AdvanceClock,
                "99999999999999999999",
                "milliseconds is too large: at most 18446744073709551615, got 99999999999999999999",
            ),
            (
                K::SendOffsets,
                "tx-1 g in-0 -3",
                "offset must be 0 or more, got -3",
            ),
            (
                K::SendOffsets,
                "tx-1 g in-0 9223372036854775808",
                "offset is too large: at most 9223372036854775807",
            ),
            (
                K::ReplicateBroker,
                "9",
                "unknown broker 9: the brokers are 1, 2, 3",
            ),
            (
                K::StopBroker,
                "two",
                r#"broker must be a whole number, got "two""#,
            ),
            (K::StartBroker, "0", "unknown broker 0"),
            (
                K::Promote,
                "out-0 3",
                "broker 3 holds no replica of out-0 (its replicas: 1, 2)",
            ),
            (K::Promote, "my-topic-0 3", "broker 3 is stopped"),
            (K::Promote, "my-topic-7 1", "unknown partition my-topic-7"),
            (K::Promote, "out 1", r#""out": expected topic-partition"#),
            (K::Promote, "out-0 9", "unknown broker 9"),
            (
                K::TearLog,
                "out-0 1 lots",
                r#"bytes to cut must be a whole number, got "lots""#,
            ),
            (K::TearLog, "gone-0 1 5", r#"unknown topic "gone""#),
            (K::TearJournal, "", "missing bytes to cut or garbage"),
            (
                K::SendOffsets,
                "tx-1 g in-0 many",
                r#"offset must be a whole number, got "many""#,
            ),
            (K::Begin, "", "missing transaction id"),
            (K::Begin, r#""tx"#, "unterminated quote"),
        ] {
            let e = refused(kind, text);
            assert!(e.starts_with(reason), "{kind:?} {text:?}: {e}");
        }
    }
}
