//! The action vocabulary of SPEC §4: everything a key press, a recording step
//! or a test can do to the cluster. Serialised externally tagged, snake_case:
//! `{"begin":{"txn":"tx-1"}}`. Unknown fields are ignored; optional fields
//! have the defaults the spec states.

use serde::{Deserialize, Serialize};

/// One action. Field names are the recording's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    CreateTopic {
        name: String,
        partitions: u32,
        replication_factor: u32,
    },
    Produce {
        topic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        value: String,
        /// "0", "1" (default) or "all".
        #[serde(default, skip_serializing_if = "Option::is_none")]
        acks: Option<String>,
        /// A named idempotent producer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        producer: Option<String>,
    },
    Begin {
        txn: String,
    },
    Send {
        txn: String,
        topic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        value: String,
    },
    SendOffsets {
        txn: String,
        group: String,
        offsets: Vec<OffsetSpec>,
    },
    Commit {
        txn: String,
        /// "prepare", "marker:N", "markers" or "offsets".
        #[serde(default, skip_serializing_if = "Option::is_none")]
        crash_after: Option<String>,
    },
    Abort {
        txn: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        crash_after: Option<String>,
    },
    Replicate {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        broker: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        topic: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
    },
    AdvanceClock {
        ms: u64,
    },
    Crash {},
    Tear {
        target: TearTargetSpec,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cut_bytes: Option<u64>,
        /// `true` for the default garbage, or the garbage text itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        append_garbage: Option<GarbageSpec>,
    },
    StopBroker {
        broker: u32,
    },
    StartBroker {
        broker: u32,
    },
    Promote {
        topic: String,
        partition: u32,
        broker: u32,
    },
    Note {},
    /// Typed in [`crate::session::ui_step`].
    Ui(crate::session::ui_step::UiStep),
}

/// The names of every action, in the spec's order (for error messages).
pub const ACTION_NAMES: [&str; 16] = [
    "create_topic",
    "produce",
    "begin",
    "send",
    "send_offsets",
    "commit",
    "abort",
    "replicate",
    "advance_clock",
    "crash",
    "tear",
    "stop_broker",
    "start_broker",
    "promote",
    "note",
    "ui",
];

/// One staged offset of `send_offsets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetSpec {
    pub topic: String,
    pub partition: u32,
    pub offset: i64,
}

/// `tear`'s target: `"journal"` or `{topic, partition, broker}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TearTargetSpec {
    Named(String),
    Log {
        topic: String,
        partition: u32,
        broker: u32,
    },
}

/// `append_garbage`: `true` (a default garbage tail) or the bytes as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum GarbageSpec {
    Default(bool),
    Text(String),
}

impl Action {
    /// The action's name, as in recordings.
    pub fn name(&self) -> &'static str {
        match self {
            Action::CreateTopic { .. } => "create_topic",
            Action::Produce { .. } => "produce",
            Action::Begin { .. } => "begin",
            Action::Send { .. } => "send",
            Action::SendOffsets { .. } => "send_offsets",
            Action::Commit { .. } => "commit",
            Action::Abort { .. } => "abort",
            Action::Replicate { .. } => "replicate",
            Action::AdvanceClock { .. } => "advance_clock",
            Action::Crash {} => "crash",
            Action::Tear { .. } => "tear",
            Action::StopBroker { .. } => "stop_broker",
            Action::StartBroker { .. } => "start_broker",
            Action::Promote { .. } => "promote",
            Action::Note {} => "note",
            Action::Ui { .. } => "ui",
        }
    }

    /// The transaction an action works on, if any: such actions run in
    /// order per transaction (SPEC §4).
    pub fn txn(&self) -> Option<&str> {
        match self {
            Action::Begin { txn }
            | Action::Send { txn, .. }
            | Action::SendOffsets { txn, .. }
            | Action::Commit { txn, .. }
            | Action::Abort { txn, .. } => Some(txn),
            _ => None,
        }
    }

    /// Parses one action from JSON. A bare string names an action without
    /// fields (`"crash"`). Errors name the field or list the valid actions.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, String> {
        let normalised = match value {
            serde_json::Value::String(name) => serde_json::json!({ name.clone(): {} }),
            other => other.clone(),
        };
        let name = match &normalised {
            serde_json::Value::Object(map) if map.len() == 1 => {
                map.keys().next().cloned().unwrap_or_default()
            }
            _ => {
                return Err(
                    "an action is an object with exactly one key, the action's name".to_string(),
                );
            }
        };
        if !ACTION_NAMES.contains(&name.as_str()) {
            return Err(format!(
                "unknown action {name:?}; valid actions: {}",
                ACTION_NAMES.join(", ")
            ));
        }
        let mut normalised = normalised;
        if normalised[&name].is_null() {
            normalised[&name] = serde_json::json!({});
        }
        serde_json::from_value(normalised).map_err(|e| format!("action {name:?}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn externally_tagged_snake_case_with_defaults() {
        let a = Action::from_json(
            &serde_json::json!({"send":{"txn":"tx-1","topic":"out","value":"pending","extra":1}}),
        )
        .unwrap();
        assert_eq!(
            a,
            Action::Send {
                txn: "tx-1".into(),
                topic: "out".into(),
                partition: None,
                key: None,
                value: "pending".into()
            }
        );
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"send":{"txn":"tx-1","topic":"out","value":"pending"}}"#
        );
        assert_eq!(
            Action::from_json(&serde_json::json!("crash")).unwrap(),
            Action::Crash {}
        );
        assert_eq!(
            Action::from_json(&serde_json::json!({"crash":null})).unwrap(),
            Action::Crash {}
        );
        assert_eq!(
            serde_json::to_string(&Action::Crash {}).unwrap(),
            r#"{"crash":{}}"#
        );
    }

    #[test]
    fn every_action_round_trips_and_has_its_name() {
        let all = [
            r#"{"create_topic":{"name":"t","partitions":2,"replication_factor":1}}"#,
            r#"{"produce":{"topic":"t","partition":1,"key":"k","value":"v","acks":"all","producer":"p"}}"#,
            r#"{"begin":{"txn":"x"}}"#,
            r#"{"send":{"txn":"x","topic":"t","partition":0,"key":"k","value":"v"}}"#,
            r#"{"send_offsets":{"txn":"x","group":"g","offsets":[{"topic":"in","partition":0,"offset":7}]}}"#,
            r#"{"commit":{"txn":"x","crash_after":"marker:1"}}"#,
            r#"{"abort":{"txn":"x"}}"#,
            r#"{"replicate":{"broker":2,"topic":"t","partition":0}}"#,
            r#"{"advance_clock":{"ms":100}}"#,
            r#"{"crash":{}}"#,
            r#"{"tear":{"target":"journal","cut_bytes":5}}"#,
            r#"{"tear":{"target":{"topic":"t","partition":0,"broker":1},"append_garbage":true}}"#,
            r#"{"stop_broker":{"broker":2}}"#,
            r#"{"start_broker":{"broker":2}}"#,
            r#"{"promote":{"topic":"t","partition":0,"broker":2}}"#,
            r#"{"note":{}}"#,
            r#"{"ui":{"focus":"journal"}}"#,
        ];
        let mut names = std::collections::BTreeSet::new();
        for text in all {
            let a = Action::from_json(&serde_json::from_str(text).unwrap()).unwrap();
            assert_eq!(serde_json::to_string(&a).unwrap(), text);
            assert!(text.contains(a.name()));
            names.insert(a.name());
        }
        assert_eq!(names.len(), ACTION_NAMES.len(), "every action kind covered");
    }

    #[test]
    fn errors_name_the_action_or_list_the_valid_ones() {
        let err = Action::from_json(&serde_json::json!({"explode":{}})).unwrap_err();
        assert!(
            err.contains("unknown action \"explode\"") && err.contains("create_topic, produce"),
            "{err}"
        );
        let err = Action::from_json(&serde_json::json!({"begin":{}})).unwrap_err();
        assert!(err.contains("begin") && err.contains("txn"), "{err}");
        assert!(Action::from_json(&serde_json::json!({"a":{},"b":{}})).is_err());
    }
}
