//! Limits instead of aborts (SPEC §5 "Errors"): every count, size and time a
//! recording can ask for has a cap, checked when the recording is read, so
//! `mk-tui check` and `mk-tui state` refuse an absurd value with one line
//! (file, line, field) in well under a second, instead of allocating gigabytes
//! or wrapping the clock. The driver checks the same caps before applying an
//! action, so a live session cannot pass them either. Every cap, and why it
//! has its value, is in the table of docs/recording-format.md ("Limits"); a
//! test keeps the two in step.

use crate::engine::core::metadata::{MAX_PARTITIONS, MAX_TOPIC_NAME_LEN};
use crate::session::action::{Action, FieldError, GarbageSpec, RecordSpec, TearTargetSpec};
use crate::session::recording::ClusterSpec;

/// Brokers in a cluster: each is a column of the replication panes and a
/// folder of logs.
pub const MAX_BROKERS: usize = 16;
/// The largest broker id: ids are drawn in three-character cells.
pub const MAX_BROKER_ID: u32 = 999;
/// Partitions of one topic: the engine's own cap (`create_topic` refuses
/// more with a typed error).
pub const MAX_TOPIC_PARTITIONS: u32 = MAX_PARTITIONS;
/// Replicas of one partition: one per broker at most.
pub const MAX_REPLICATION_FACTOR: u32 = MAX_BROKERS as u32;
/// Topics a recording creates (header and `create_topic` steps together):
/// what a served session's clients may create too, so its recording
/// replays (docs/recording-format.md gives the measured costs).
pub const MAX_TOPICS: usize = 256;
/// Replicas a recording creates (partitions times replication factor,
/// summed over its topics): each keeps a segment and an index open. Past
/// the process's open-file limit the engine refuses the topic itself
/// (`ulimit -n`; 1024 replicas need about 2,100 files).
pub const MAX_REPLICAS: u64 = 1024;
/// A record's key or value, and a tear's garbage text, in bytes: Kafka's
/// default `message.max.bytes` is about 1 MiB.
pub const MAX_VALUE_BYTES: usize = 1 << 20;
/// Records of one batch `produce` or `send`: above librdkafka's default
/// `batch.num.messages` (10,000), so a client's batch fits one action.
pub const MAX_BATCH_RECORDS: usize = 65_536;
/// Keys and values of one batch together, in bytes: Kafka's
/// `message.max.bytes` bounds a whole record batch, and so does this.
pub const MAX_BATCH_BYTES: usize = MAX_VALUE_BYTES;
/// Headers of one record, and a header key's bytes: MKB1 writes both
/// lengths as u16 (FORMATS.md), and Kafka sets no cap of its own.
pub const MAX_RECORD_HEADERS: usize = u16::MAX as usize;
pub const MAX_HEADER_KEY_BYTES: usize = u16::MAX as usize;
/// Topic, transactional id, group and producer names, in bytes: Kafka's
/// topic name limit, used for every name.
pub const MAX_NAME_BYTES: usize = MAX_TOPIC_NAME_LEN;
/// Topics one `join_group` subscribes to: more than a cluster can hold
/// (`MAX_TOPICS`) names a topic twice or one that does not exist.
pub const MAX_SUBSCRIBED_TOPICS: usize = MAX_TOPICS;
/// The clock, in ms: the total of a recording's `advance_clock` steps, and
/// the live clock. 2^53 - 1 is the largest integer every JSON reader holds
/// exactly, so `clock_ms` in the state JSON is never rounded.
pub const MAX_CLOCK_MS: u64 = (1 << 53) - 1;

/// The error of a value past its cap.
fn over(field: impl Into<String>, value: impl std::fmt::Display, cap: &str) -> FieldError {
    FieldError::new(field, format!("{value}; the cap is {cap}"))
}

/// The caps of a batch's `records`: their count, and their keys' and
/// values' bytes together.
fn check_batch(field: &str, records: &[RecordSpec]) -> Result<(), FieldError> {
    if records.len() > MAX_BATCH_RECORDS {
        return Err(over(
            field,
            format!("{} records", records.len()),
            &format!("{MAX_BATCH_RECORDS} records"),
        ));
    }
    let bytes: usize = records.iter().map(RecordSpec::bytes).sum();
    if bytes > MAX_BATCH_BYTES {
        return Err(over(
            field,
            format!("{bytes} bytes of keys and values"),
            &format!("{MAX_BATCH_BYTES} bytes"),
        ));
    }
    for (i, r) in records.iter().enumerate() {
        if r.headers.len() > MAX_RECORD_HEADERS {
            return Err(over(
                format!("{field}[{i}].headers"),
                format!("{} headers", r.headers.len()),
                &format!("{MAX_RECORD_HEADERS} headers"),
            ));
        }
        if let Some(h) = r
            .headers
            .iter()
            .find(|h| h.key.len() > MAX_HEADER_KEY_BYTES)
        {
            return Err(over(
                format!("{field}[{i}].headers"),
                format!("a key of {} bytes", h.key.len()),
                &format!("{MAX_HEADER_KEY_BYTES} bytes"),
            ));
        }
    }
    Ok(())
}

/// Checks a header's cluster and returns the budget its steps may spend.
pub fn check_cluster(cluster: &ClusterSpec) -> Result<Budget, FieldError> {
    if cluster.config.group_session_timeout_ms == Some(0) {
        return Err(FieldError::new(
            "cluster.config.group_session_timeout_ms",
            "a member's session lasts at least 1 ms",
        ));
    }
    let brokers = &cluster.brokers;
    if brokers.len() > MAX_BROKERS {
        return Err(over(
            "cluster.brokers",
            format!("{} brokers", brokers.len()),
            &format!("{MAX_BROKERS} brokers"),
        ));
    }
    if let Some((i, id)) = brokers
        .iter()
        .enumerate()
        .find(|(_, id)| **id > MAX_BROKER_ID)
    {
        return Err(over(
            format!("cluster.brokers[{i}]"),
            format!("broker id {id}"),
            &format!("{MAX_BROKER_ID}"),
        ));
    }
    let mut budget = Budget::default();
    for (i, t) in cluster.topics.iter().enumerate() {
        let field = format!("cluster.topics[{i}]");
        budget.spend_topic(&field, &t.name, t.partitions, t.replication_factor)?;
    }
    Ok(budget)
}

/// Checks the caps of one action on its own (sizes, names, counts).
pub fn check_action(action: &Action) -> Result<(), FieldError> {
    let name = action.name();
    let field = |f: &str| format!("action.{name}.{f}");
    let text = |f: &str, value: &str, cap: usize| -> Result<(), FieldError> {
        if value.len() > cap {
            return Err(over(
                field(f),
                format!("{} bytes", value.len()),
                &format!("{cap} bytes"),
            ));
        }
        Ok(())
    };
    if let Some(txn) = action.txn() {
        text("txn", txn, MAX_NAME_BYTES)?;
    }
    match action {
        Action::CreateTopic {
            name,
            partitions,
            replication_factor,
            ..
        } => check_topic_shape(
            "action.create_topic",
            name,
            *partitions,
            *replication_factor,
        ),
        Action::Produce {
            topic,
            key,
            value,
            records,
            producer,
            ..
        } => {
            text("topic", topic, MAX_NAME_BYTES)?;
            text("key", key.as_deref().unwrap_or(""), MAX_VALUE_BYTES)?;
            text("value", value.as_deref().unwrap_or(""), MAX_VALUE_BYTES)?;
            check_batch(&field("records"), records)?;
            text(
                "producer",
                producer.as_deref().unwrap_or(""),
                MAX_NAME_BYTES,
            )
        }
        Action::Send {
            topic,
            key,
            value,
            records,
            ..
        } => {
            text("topic", topic, MAX_NAME_BYTES)?;
            text("key", key.as_deref().unwrap_or(""), MAX_VALUE_BYTES)?;
            text("value", value.as_deref().unwrap_or(""), MAX_VALUE_BYTES)?;
            check_batch(&field("records"), records)
        }
        Action::SendOffsets { group, offsets, .. } | Action::CommitOffsets { group, offsets } => {
            text("group", group, MAX_NAME_BYTES)?;
            for (i, o) in offsets.iter().enumerate() {
                text(&format!("offsets[{i}].topic"), &o.topic, MAX_NAME_BYTES)?;
            }
            Ok(())
        }
        Action::Replicate { topic, .. } => {
            text("topic", topic.as_deref().unwrap_or(""), MAX_NAME_BYTES)
        }
        Action::Accumulate {
            producer,
            topic,
            key,
            value,
            linger_ms,
            ..
        } => {
            text("producer", producer, MAX_NAME_BYTES)?;
            text("topic", topic, MAX_NAME_BYTES)?;
            text("key", key.as_deref().unwrap_or(""), MAX_VALUE_BYTES)?;
            text("value", value, MAX_VALUE_BYTES)?;
            match linger_ms {
                Some(ms) if *ms > MAX_CLOCK_MS => Err(over(
                    field("linger_ms"),
                    format!("{ms} ms"),
                    &format!("{MAX_CLOCK_MS} ms"),
                )),
                _ => Ok(()),
            }
        }
        Action::Flush { producer } => text("producer", producer, MAX_NAME_BYTES),
        Action::AdvanceClock { ms } if *ms > MAX_CLOCK_MS => Err(over(
            field("ms"),
            format!("{ms} ms"),
            &format!("{MAX_CLOCK_MS} ms"),
        )),
        Action::Tear {
            target,
            append_garbage,
            ..
        } => {
            if let TearTargetSpec::Log { topic, .. } = target {
                text("target.topic", topic, MAX_NAME_BYTES)?;
            }
            if let Some(GarbageSpec::Text(garbage)) = append_garbage {
                text("append_garbage", garbage, MAX_VALUE_BYTES)?;
            }
            Ok(())
        }
        Action::Promote { topic, .. } => text("topic", topic, MAX_NAME_BYTES),
        Action::JoinGroup {
            group,
            member,
            topics,
        } => {
            text("group", group, MAX_NAME_BYTES)?;
            text("member", member, MAX_NAME_BYTES)?;
            if topics.len() > MAX_SUBSCRIBED_TOPICS {
                return Err(over(
                    field("topics"),
                    format!("{} topics", topics.len()),
                    &format!("{MAX_SUBSCRIBED_TOPICS} topics"),
                ));
            }
            for (i, t) in topics.iter().enumerate() {
                text(&format!("topics[{i}]"), t, MAX_NAME_BYTES)?;
            }
            Ok(())
        }
        Action::DeleteGroup { group } => text("group", group, MAX_NAME_BYTES),
        Action::AlterTopicConfig { topic, .. } => text("topic", topic, MAX_NAME_BYTES),
        Action::DeleteTopic { name } => text("name", name, MAX_NAME_BYTES),
        Action::CreatePartitions { topic, count } => {
            text("topic", topic, MAX_NAME_BYTES)?;
            if *count > MAX_TOPIC_PARTITIONS {
                return Err(over(
                    field("count"),
                    format!("{count} partitions"),
                    &format!("{MAX_TOPIC_PARTITIONS} partitions per topic"),
                ));
            }
            Ok(())
        }
        Action::DeleteOffsets { group, partitions } => {
            text("group", group, MAX_NAME_BYTES)?;
            for (i, p) in partitions.iter().enumerate() {
                text(&format!("partitions[{i}].topic"), &p.topic, MAX_NAME_BYTES)?;
            }
            Ok(())
        }
        Action::LeaveGroup { group, member }
        | Action::Heartbeat { group, member, .. }
        | Action::Poll { group, member, .. } => {
            text("group", group, MAX_NAME_BYTES)?;
            text("member", member, MAX_NAME_BYTES)
        }
        Action::SyncGroup {
            group,
            member,
            assignment,
            ..
        } => {
            text("group", group, MAX_NAME_BYTES)?;
            text("member", member, MAX_NAME_BYTES)?;
            for (m, partitions) in assignment.iter().flatten() {
                text("assignment", m, MAX_NAME_BYTES)?;
                for (i, p) in partitions.iter().enumerate() {
                    text(
                        &format!("assignment.{m}[{i}].topic"),
                        &p.topic,
                        MAX_NAME_BYTES,
                    )?;
                }
            }
            Ok(())
        }
        Action::CommitGroupOffsets {
            group,
            member,
            offsets,
            ..
        } => {
            text("group", group, MAX_NAME_BYTES)?;
            text("member", member, MAX_NAME_BYTES)?;
            for (i, o) in offsets.iter().enumerate() {
                text(&format!("offsets[{i}].topic"), &o.topic, MAX_NAME_BYTES)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A new topic's own caps: name length, partitions, replication factor.
fn check_topic_shape(
    field: &str,
    name: &str,
    partitions: u32,
    replication_factor: u32,
) -> Result<(), FieldError> {
    let at = |f: &str| format!("{field}.{f}");
    if name.len() > MAX_NAME_BYTES {
        return Err(over(
            at("name"),
            format!("{} bytes", name.len()),
            &format!("{MAX_NAME_BYTES} bytes"),
        ));
    }
    if partitions > MAX_TOPIC_PARTITIONS {
        return Err(over(
            at("partitions"),
            format!("{partitions} partitions"),
            &format!("{MAX_TOPIC_PARTITIONS} partitions per topic"),
        ));
    }
    if replication_factor > MAX_REPLICATION_FACTOR {
        return Err(over(
            at("replication_factor"),
            format!("replication factor {replication_factor}"),
            &format!("{MAX_REPLICATION_FACTOR}"),
        ));
    }
    Ok(())
}

/// What a recording has used of the caps that add up over its steps:
/// topics, replicas and the clock. A `create_topic` step counts whether or
/// not the engine then accepts it, so a recording that passes `check` never
/// meets these caps when it is applied; a `create_partitions` step counts
/// the replicas it would add to the topic as first created.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Budget {
    pub topics: usize,
    pub replicas: u64,
    pub clock_ms: u64,
    /// Each topic's partition count and replication factor, for the
    /// replicas a `create_partitions` adds.
    pub shapes: std::collections::BTreeMap<String, (u32, u32)>,
}

impl Budget {
    /// Spends a step's share; on error, nothing is spent.
    pub fn spend(&mut self, action: &Action) -> Result<(), FieldError> {
        match action {
            Action::CreateTopic {
                name,
                partitions,
                replication_factor,
                ..
            } => self.spend_topic(
                "action.create_topic",
                name,
                *partitions,
                *replication_factor,
            ),
            Action::CreatePartitions { topic, count } => self.spend_partitions(topic, *count),
            Action::DeleteTopic { name } => {
                self.give_back(name);
                Ok(())
            }
            Action::AdvanceClock { ms } => {
                let reached = self.clock_ms.saturating_add(*ms);
                if reached > MAX_CLOCK_MS {
                    return Err(FieldError::new(
                        "action.advance_clock.ms",
                        format!(
                            "advancing {ms} ms from {} ms would take the clock past its cap, {MAX_CLOCK_MS} ms",
                            self.clock_ms
                        ),
                    ));
                }
                self.clock_ms = reached;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn spend_topic(
        &mut self,
        field: &str,
        name: &str,
        partitions: u32,
        replication_factor: u32,
    ) -> Result<(), FieldError> {
        check_topic_shape(field, name, partitions, replication_factor)?;
        if self.topics + 1 > MAX_TOPICS {
            return Err(over(
                field,
                format!("topic {}", self.topics + 1),
                &format!("{MAX_TOPICS} topics"),
            ));
        }
        let replicas = u64::from(partitions) * u64::from(replication_factor);
        if self.replicas + replicas > MAX_REPLICAS {
            return Err(over(
                field,
                format!(
                    "{} replicas in all ({replicas} for this topic)",
                    self.replicas + replicas
                ),
                &format!("{MAX_REPLICAS} replicas"),
            ));
        }
        self.topics += 1;
        self.replicas += replicas;
        self.shapes
            .entry(name.to_string())
            .or_insert((partitions, replication_factor));
        Ok(())
    }

    /// A deleted topic's share given back: a recording that creates and
    /// deletes topics in turn counts only those that exist together, as
    /// the engine holds them. An unknown topic gives back nothing (the
    /// engine refuses the step).
    fn give_back(&mut self, topic: &str) {
        if let Some((partitions, factor)) = self.shapes.remove(topic) {
            self.topics -= 1;
            self.replicas -= u64::from(partitions) * u64::from(factor);
        }
    }

    /// A topic's growth to `count` partitions: the replicas it adds. A
    /// topic not created, or a count not above its own, adds none (the
    /// engine refuses the step).
    fn spend_partitions(&mut self, topic: &str, count: u32) -> Result<(), FieldError> {
        let Some(&(partitions, factor)) = self.shapes.get(topic) else {
            return Ok(());
        };
        if count <= partitions {
            return Ok(());
        }
        let added = u64::from(count - partitions) * u64::from(factor);
        if self.replicas + added > MAX_REPLICAS {
            return Err(over(
                "action.create_partitions.count",
                format!(
                    "{} replicas in all ({added} for the new partitions)",
                    self.replicas + added
                ),
                &format!("{MAX_REPLICAS} replicas"),
            ));
        }
        self.replicas += added;
        self.shapes.insert(topic.to_string(), (count, factor));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(json: &str) -> Action {
        Action::from_json(&serde_json::from_str(json).unwrap()).unwrap()
    }

    #[test]
    fn the_clock_budget_refuses_what_would_pass_the_cap_and_spends_nothing() {
        let mut b = Budget::default();
        b.spend(&act(r#"{"advance_clock":{"ms":9007199254740990}}"#))
            .unwrap();
        let e = b.spend(&act(r#"{"advance_clock":{"ms":10}}"#)).unwrap_err();
        assert_eq!(e.field, "action.advance_clock.ms");
        assert!(e.message.contains("9007199254740991"), "{e}");
        assert_eq!(b.clock_ms, MAX_CLOCK_MS - 1, "nothing spent");
        b.spend(&act(r#"{"advance_clock":{"ms":1}}"#)).unwrap();
        assert_eq!(b.clock_ms, MAX_CLOCK_MS);
        let e = check_action(&act(r#"{"advance_clock":{"ms":18446744073709551615}}"#)).unwrap_err();
        assert_eq!(e.field, "action.advance_clock.ms");
    }

    #[test]
    fn topics_and_replicas_add_up_over_the_steps() {
        let mut b = Budget::default();
        let topic = |i: usize, p: u32| {
            act(&format!(
                r#"{{"create_topic":{{"name":"t{i}","partitions":{p},"replication_factor":1}}}}"#
            ))
        };
        for i in 0..MAX_TOPICS {
            b.spend(&topic(i, 1)).unwrap();
        }
        let e = b.spend(&topic(999, 1)).unwrap_err();
        assert_eq!(e.field, "action.create_topic");
        assert!(e.message.contains("256 topics"), "{e}");
        let mut b = Budget::default();
        for i in 0..3 {
            b.spend(&topic(i, 256)).unwrap();
        }
        b.spend(&topic(3, 200)).unwrap();
        let e = b.spend(&topic(4, 57)).unwrap_err();
        assert!(e.message.contains("1025 replicas"), "{e}");
        assert_eq!(b.replicas, 968, "nothing spent");
        let e = b.spend(&topic(1, 4_294_967_295)).unwrap_err();
        assert_eq!(e.field, "action.create_topic.partitions");
    }

    #[test]
    fn a_topics_growth_spends_its_new_replicas() {
        let mut b = Budget::default();
        b.spend(&act(
            r#"{"create_topic":{"name":"t","partitions":2,"replication_factor":5}}"#,
        ))
        .unwrap();
        let grow = |count: u32| {
            act(&format!(
                r#"{{"create_partitions":{{"topic":"t","count":{count}}}}}"#
            ))
        };
        b.spend(&grow(4)).unwrap();
        assert_eq!(b.replicas, 20, "two partitions of five replicas added");
        b.spend(&grow(3)).unwrap();
        assert_eq!(
            b.replicas, 20,
            "no growth: the engine refuses it, nothing spent"
        );
        b.spend(&act(r#"{"create_partitions":{"topic":"none","count":9}}"#))
            .unwrap();
        assert_eq!(b.replicas, 20, "an unknown topic spends nothing");
        let e = b.spend(&grow(256)).unwrap_err();
        assert_eq!(e.field, "action.create_partitions.count");
        assert!(e.message.contains("1280 replicas in all"), "{e}");
        assert_eq!(b.replicas, 20, "nothing spent");
        let e = check_action(&grow(257)).unwrap_err();
        assert_eq!(e.field, "action.create_partitions.count");
    }

    #[test]
    fn sizes_and_names_are_capped_with_the_field_named() {
        let big = "v".repeat(MAX_VALUE_BYTES + 1);
        let e = check_action(&Action::Produce {
            topic: "out".into(),
            partition: None,
            key: None,
            value: Some(big.clone()),
            records: vec![],
            acks: None,
            producer: None,
            wire: None,
        })
        .unwrap_err();
        assert_eq!(e.field, "action.produce.value");
        // A batch: its records' count and bytes together.
        let batch = |n: usize, each: usize| {
            act(&serde_json::json!({"send": {"txn": "x", "topic": "out",
                "records": vec![serde_json::json!({"value": "v".repeat(each)}); n]}})
            .to_string())
        };
        assert!(check_action(&batch(MAX_BATCH_RECORDS, 0)).is_ok());
        let e = check_action(&batch(MAX_BATCH_RECORDS + 1, 0)).unwrap_err();
        assert_eq!(e.field, "action.send.records");
        assert!(e.message.contains("65537 records"), "{e}");
        assert!(check_action(&batch(16, MAX_BATCH_BYTES / 16)).is_ok());
        let e = check_action(&batch(16, MAX_BATCH_BYTES / 16 + 1)).unwrap_err();
        assert_eq!(e.field, "action.send.records");
        assert!(e.message.contains("bytes of keys and values"), "{e}");
        // A record's headers: their count and each key, as MKB1 holds them.
        let headers = |n: usize, key: usize| {
            let header = serde_json::json!({"key": "h".repeat(key)});
            act(&serde_json::json!({"produce": {"topic": "out", "records": [
                {"value": "v", "headers": vec![header; n]}]}})
            .to_string())
        };
        assert!(check_action(&headers(MAX_RECORD_HEADERS, 1)).is_ok());
        let e = check_action(&headers(MAX_RECORD_HEADERS + 1, 1)).unwrap_err();
        assert_eq!(e.field, "action.produce.records[0].headers");
        assert!(check_action(&headers(1, MAX_HEADER_KEY_BYTES)).is_ok());
        let e = check_action(&headers(1, MAX_HEADER_KEY_BYTES + 1)).unwrap_err();
        assert_eq!(e.field, "action.produce.records[0].headers", "{e}");
        assert!(e.message.contains("a key of 65536 bytes"), "{e}");
        let e = check_action(&Action::Begin {
            txn: "x".repeat(MAX_NAME_BYTES + 1),
            init: false,
        })
        .unwrap_err();
        assert_eq!(e.field, "action.begin.txn");
        assert!(
            check_action(&Action::Begin {
                txn: "x".repeat(MAX_NAME_BYTES),
                init: false,
            })
            .is_ok()
        );
        let e = check_action(&Action::Tear {
            target: TearTargetSpec::Journal,
            cut_bytes: None,
            append_garbage: Some(GarbageSpec::Text(big)),
        })
        .unwrap_err();
        assert_eq!(e.field, "action.tear.append_garbage");
    }

    /// docs/recording-format.md lists every cap with its value.
    #[test]
    fn the_documented_table_has_every_cap() {
        let doc = include_str!("../../docs/recording-format.md");
        for (what, cap) in [
            ("brokers", MAX_BROKERS.to_string()),
            ("broker id", MAX_BROKER_ID.to_string()),
            ("partitions of a topic", MAX_TOPIC_PARTITIONS.to_string()),
            ("replication factor", MAX_REPLICATION_FACTOR.to_string()),
            ("topics", MAX_TOPICS.to_string()),
            ("replicas", MAX_REPLICAS.to_string()),
            ("key, value, garbage", MAX_VALUE_BYTES.to_string()),
            ("records of a batch", MAX_BATCH_RECORDS.to_string()),
            ("bytes of a batch", MAX_BATCH_BYTES.to_string()),
            ("headers of a record", MAX_RECORD_HEADERS.to_string()),
            ("header key", MAX_HEADER_KEY_BYTES.to_string()),
            ("names", MAX_NAME_BYTES.to_string()),
            ("clock", MAX_CLOCK_MS.to_string()),
        ] {
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| {what} |")))
                .unwrap_or_else(|| panic!("no row for {what:?} in the limits table"));
            assert!(
                row.contains(&format!("| {cap} ")),
                "the row for {what:?} does not give {cap}: {row}"
            );
        }
    }
}
