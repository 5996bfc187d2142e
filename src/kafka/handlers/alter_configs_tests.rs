//! IncrementalAlterConfigs and AlterConfigs in process, on
//! [`admin_tests::cluster`]'s topic t (the book's, no settings) and a
//! LogAppendTime topic: each operation's effect on the topic's config,
//! each error code as Kafka's, `validate_only`, and that a change is one
//! recorded step while a refusal is none.

use kafka_protocol::messages::alter_configs_request::{
    AlterConfigsResource as WholeResource, AlterableConfig as WholeConfig,
};
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::{
    AlterConfigsRequest, IncrementalAlterConfigsRequest, RequestKind, ResponseKind,
};
use kafka_protocol::protocol::StrBytes;

use super::admin_tests::{Harness, cluster};
use crate::engine::core::metadata::{CleanupPolicy, TopicConfig};
use crate::kafka::errors::code;
use crate::kafka::topic_alter::{BROKER, TOPIC};

const SET: i8 = 0;
const DELETE: i8 = 1;
const APPEND: i8 = 2;
const SUBTRACT: i8 = 3;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// One resource's incremental changes `(name, op, value)`.
fn resource(kind: i8, name: &str, changes: &[(&str, i8, Option<&str>)]) -> AlterConfigsResource {
    AlterConfigsResource::default()
        .with_resource_type(kind)
        .with_resource_name(s(name))
        .with_configs(
            changes
                .iter()
                .map(|(n, op, v)| {
                    AlterableConfig::default()
                        .with_name(s(n))
                        .with_config_operation(*op)
                        .with_value(v.map(s))
                })
                .collect(),
        )
}

/// Each resource's code and message.
fn incremental(
    h: &mut Harness,
    validate_only: bool,
    resources: Vec<AlterConfigsResource>,
) -> Vec<(i16, String)> {
    let body = RequestKind::IncrementalAlterConfigs(
        IncrementalAlterConfigsRequest::default()
            .with_resources(resources)
            .with_validate_only(validate_only),
    );
    match h.ask(1, 1, body) {
        ResponseKind::IncrementalAlterConfigs(r) => r
            .responses
            .iter()
            .map(|r| {
                (
                    r.error_code,
                    r.error_message
                        .as_ref()
                        .map_or(String::new(), |m| m.to_string()),
                )
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn one(h: &mut Harness, topic: &str, changes: &[(&str, i8, Option<&str>)]) -> (i16, String) {
    incremental(h, false, vec![resource(TOPIC, topic, changes)]).remove(0)
}

fn whole(h: &mut Harness, topic: &str, configs: &[(&str, &str)]) -> (i16, String) {
    let r = WholeResource::default()
        .with_resource_type(TOPIC)
        .with_resource_name(s(topic))
        .with_configs(
            configs
                .iter()
                .map(|(n, v)| {
                    WholeConfig::default()
                        .with_name(s(n))
                        .with_value(Some(s(v)))
                })
                .collect(),
        );
    let body = RequestKind::AlterConfigs(AlterConfigsRequest::default().with_resources(vec![r]));
    match h.ask(1, 2, body) {
        ResponseKind::AlterConfigs(r) => (
            r.responses[0].error_code,
            r.responses[0]
                .error_message
                .as_ref()
                .map_or(String::new(), |m| m.to_string()),
        ),
        other => panic!("{other:?}"),
    }
}

fn config(h: &Harness, topic: &str) -> TopicConfig {
    h.driver.cluster().topic_configs()[topic]
}

#[test]
fn set_and_delete_change_the_topics_config_each_as_one_step() {
    let mut h = cluster("kafka");
    let before = h.driver.step();
    assert_eq!(
        one(
            &mut h,
            "t",
            &[
                ("cleanup.policy", SET, Some("compact")),
                ("retention.bytes", SET, Some("4096")),
                ("delete.retention.ms", SET, Some("250")),
            ]
        ),
        (code::NONE, String::new())
    );
    assert_eq!(h.driver.step(), before + 1, "one step for the resource");
    assert_eq!(
        config(&h, "t"),
        TopicConfig {
            cleanup_policy: CleanupPolicy::Compact,
            retention_bytes: Some(4096),
            delete_retention_ms: Some(250),
            retention_ms: None,
            min_insync_replicas: None,
        }
    );
    // metadata.json holds it, as the cleaner and a restart read it.
    let file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            h.driver
                .data_dir()
                .join(crate::engine::core::metadata::METADATA_FILE),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        file["topics"]["t"]["config"],
        serde_json::json!({"cleanup_policy": "compact", "retention_bytes": 4096,
            "delete_retention_ms": 250})
    );
    assert_eq!(
        one(
            &mut h,
            "t",
            &[
                ("retention.bytes", DELETE, None),
                ("retention.ms", SET, Some("-1")),
                ("delete.retention.ms", DELETE, Some("ignored")),
            ]
        )
        .0,
        code::NONE
    );
    assert_eq!(
        config(&h, "t"),
        TopicConfig {
            cleanup_policy: CleanupPolicy::Compact,
            ..TopicConfig::default()
        },
        "deleted settings go back to their defaults; -1 is no limit"
    );
}

#[test]
fn append_and_subtract_take_the_list_config_only() {
    let mut h = cluster("kafka");
    let r = one(&mut h, "t", &[("retention.ms", APPEND, Some("5"))]);
    assert_eq!(
        r,
        (
            code::INVALID_CONFIG,
            "Can't APPEND to key retention.ms because its type is not LIST.".into()
        )
    );
    // delete (the default) and compact: both, as Kafka's list; then
    // delete subtracted, compact alone.
    let r = one(&mut h, "t", &[("cleanup.policy", APPEND, Some("compact"))]);
    assert_eq!(r.0, code::NONE, "{}", r.1);
    assert_eq!(config(&h, "t").cleanup_policy, CleanupPolicy::CompactDelete);
    let r = one(&mut h, "t", &[("cleanup.policy", SUBTRACT, Some("delete"))]);
    assert_eq!(r.0, code::NONE, "{}", r.1);
    assert_eq!(config(&h, "t").cleanup_policy, CleanupPolicy::Compact);
    assert_eq!(
        one(&mut h, "t", &[("cleanup.policy", SET, Some("delete"))]).0,
        code::NONE
    );
    assert_eq!(
        one(
            &mut h,
            "t",
            &[
                ("cleanup.policy", SET, Some("compact")),
                ("cleanup.policy", APPEND, Some("compact")),
            ]
        )
        .0,
        code::INVALID_REQUEST,
        "duplicate keys"
    );
    assert_eq!(
        one(
            &mut h,
            "t",
            &[("cleanup.policy", SUBTRACT, Some("compact"))]
        )
        .0,
        code::NONE,
        "nothing to subtract"
    );
    assert_eq!(
        one(&mut h, "t", &[("cleanup.policy", SET, Some("compact"))]).0,
        code::NONE
    );
    assert_eq!(
        one(&mut h, "t", &[("cleanup.policy", APPEND, Some("compact"))]).0,
        code::NONE,
        "already there"
    );
    let r = one(
        &mut h,
        "t",
        &[("cleanup.policy", SUBTRACT, Some("compact"))],
    );
    assert_eq!(r.0, code::INVALID_CONFIG, "no policy at all: {}", r.1);
    assert_eq!(config(&h, "t").cleanup_policy, CleanupPolicy::Compact);
}

#[test]
fn each_refusal_has_kafkas_code_and_records_no_step() {
    let mut h = cluster("kafka");
    let before = h.driver.step();
    let cases: Vec<(AlterConfigsResource, i16, &str)> = vec![
        (
            resource(TOPIC, "t", &[("retention.mss", SET, Some("5"))]),
            code::INVALID_CONFIG,
            "Unknown topic config name: retention.mss",
        ),
        (
            resource(TOPIC, "t", &[("segment.bytes", SET, Some("1000"))]),
            code::INVALID_CONFIG,
            "topic config segment.bytes is not supported",
        ),
        (
            resource(TOPIC, "t", &[("retention.ms", SET, Some("soon"))]),
            code::INVALID_CONFIG,
            "Invalid value soon for configuration retention.ms",
        ),
        (
            resource(TOPIC, "t", &[("retention.bytes", SET, Some("0"))]),
            code::INVALID_CONFIG,
            "Invalid value 0 for configuration retention.bytes",
        ),
        (
            resource(TOPIC, "t", &[("retention.ms", SET, None)]),
            code::INVALID_REQUEST,
            "Null value not supported for : retention.ms",
        ),
        (
            resource(TOPIC, "t", &[("cleanup.policy", APPEND, None)]),
            code::INVALID_REQUEST,
            "Null value not supported for : cleanup.policy",
        ),
        (
            resource(TOPIC, "t", &[("retention.ms", 7, Some("5"))]),
            code::UNKNOWN_SERVER_ERROR,
            "",
        ),
        (
            resource(TOPIC, "nope", &[("retention.ms", SET, Some("5"))]),
            code::UNKNOWN_TOPIC_OR_PARTITION,
            "The topic 'nope' does not exist.",
        ),
        (
            resource(TOPIC, "", &[("retention.ms", SET, Some("5"))]),
            code::INVALID_REQUEST,
            "Default topic resources are not allowed.",
        ),
        (
            resource(TOPIC, "a/b", &[("retention.ms", SET, Some("5"))]),
            code::INVALID_TOPIC_EXCEPTION,
            "",
        ),
        (
            resource(
                TOPIC,
                "t",
                &[("message.timestamp.type", SET, Some("LogAppendTime"))],
            ),
            code::INVALID_CONFIG,
            "keeps a topic's timestamp type from its creation",
        ),
        (
            resource(BROKER, "1", &[("log.retention.ms", SET, Some("5"))]),
            code::INVALID_REQUEST,
            "Cannot update these configs dynamically: [log.retention.ms]",
        ),
        (
            resource(8, "root", &[("kafka", SET, Some("DEBUG"))]),
            code::INVALID_REQUEST,
            "Unsupported resource type: 8",
        ),
    ];
    for (r, code, message) in cases {
        let name = r.resource_name.to_string();
        let (got, said) = incremental(&mut h, false, vec![r]).remove(0);
        assert_eq!(got, code, "{name}: {said}");
        assert!(said.contains(message), "{name}: {said}");
    }
    assert_eq!(h.driver.step(), before, "a refusal is no step");
    assert_eq!(config(&h, "t"), TopicConfig::default());
    assert_eq!(
        one(
            &mut h,
            "t",
            &[("message.timestamp.type", SET, Some("CreateTime"))]
        ),
        (code::NONE, String::new()),
        "the type it has"
    );
    assert_eq!(
        incremental(&mut h, false, vec![resource(BROKER, "1", &[])]),
        [(code::NONE, String::new())],
        "nothing to change"
    );
}

#[test]
fn a_logappendtime_topic_keeps_its_type() {
    let mut h = cluster("kafka");
    h.act(
        serde_json::json!({"create_topic": {"name": "lat", "partitions": 1,
        "replication_factor": 1, "timestamp_type": "LogAppendTime"}}),
    );
    let r = one(&mut h, "lat", &[("message.timestamp.type", DELETE, None)]);
    assert_eq!(r.0, code::INVALID_CONFIG, "{}", r.1);
    let r = whole(&mut h, "lat", &[("retention.ms", "1000")]);
    assert_eq!(
        r.0,
        code::INVALID_CONFIG,
        "the whole set drops the type: {}",
        r.1
    );
    assert_eq!(
        whole(
            &mut h,
            "lat",
            &[
                ("retention.ms", "1000"),
                ("message.timestamp.type", "LogAppendTime")
            ]
        )
        .0,
        code::NONE
    );
    assert_eq!(config(&h, "lat").retention_ms, Some(1000));
}

#[test]
fn validate_only_changes_nothing() {
    let mut h = cluster("kafka");
    let before = h.driver.step();
    let answers = incremental(
        &mut h,
        true,
        vec![
            resource(TOPIC, "t", &[("retention.ms", SET, Some("1000"))]),
            resource(TOPIC, "t2", &[("retention.ms", SET, Some("1000"))]),
        ],
    );
    assert_eq!(answers[0], (code::NONE, String::new()));
    assert_eq!(answers[1].0, code::UNKNOWN_TOPIC_OR_PARTITION);
    assert_eq!(h.driver.step(), before);
    assert_eq!(config(&h, "t"), TopicConfig::default());
}

#[test]
fn alter_configs_replaces_the_whole_set() {
    let mut h = cluster("kafka");
    assert_eq!(
        one(
            &mut h,
            "t",
            &[
                ("cleanup.policy", SET, Some("compact")),
                ("retention.ms", SET, Some("60000")),
            ]
        )
        .0,
        code::NONE
    );
    assert_eq!(
        whole(&mut h, "t", &[("retention.bytes", "8192")]).0,
        code::NONE
    );
    assert_eq!(
        config(&h, "t"),
        TopicConfig {
            retention_bytes: Some(8192),
            ..TopicConfig::default()
        },
        "cleanup.policy and retention.ms not named: back to their defaults"
    );
    let r = whole(&mut h, "t", &[("flush.ms", "5")]);
    assert_eq!(r.0, code::INVALID_CONFIG);
    assert_eq!(
        whole(&mut h, "nope", &[]).0,
        code::UNKNOWN_TOPIC_OR_PARTITION
    );
    assert_eq!(whole(&mut h, "t", &[]).0, code::NONE);
    assert_eq!(config(&h, "t"), TopicConfig::default());
}
