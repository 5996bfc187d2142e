//! DescribeConfigs in process, on [`admin_tests::cluster`]'s two brokers
//! with topic t (the book's, no settings) and a compacted LogAppendTime
//! topic: each resource's answer and error as Kafka's, the key filter,
//! synonyms and documentation only when asked, and nothing recorded.

use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::describe_configs_response::DescribeConfigsResult;
use kafka_protocol::messages::{DescribeConfigsRequest, RequestKind, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use super::admin_tests::{Harness, cluster};
use super::describe_configs::{BROKER, TOPIC};
use crate::kafka::errors::code;

fn resource(kind: i8, name: &str, keys: Option<&[&str]>) -> DescribeConfigsResource {
    DescribeConfigsResource::default()
        .with_resource_type(kind)
        .with_resource_name(StrBytes::from_string(name.into()))
        .with_configuration_keys(keys.map(|k| {
            k.iter()
                .map(|k| StrBytes::from_string(k.to_string()))
                .collect()
        }))
}

fn ask(
    h: &mut Harness,
    broker: u32,
    version: i16,
    request: DescribeConfigsRequest,
) -> Vec<DescribeConfigsResult> {
    match h.ask(broker, version, RequestKind::DescribeConfigs(request)) {
        ResponseKind::DescribeConfigs(r) => r.results,
        other => panic!("{other:?}"),
    }
}

fn one(h: &mut Harness, broker: u32, r: DescribeConfigsResource) -> DescribeConfigsResult {
    let request = DescribeConfigsRequest::default().with_resources(vec![r]);
    ask(h, broker, 4, request).remove(0)
}

/// `name=value source` of each config.
fn lines(r: &DescribeConfigsResult) -> Vec<String> {
    r.configs
        .iter()
        .map(|c| {
            format!(
                "{}={} {}",
                c.name.as_str(),
                c.value.as_ref().map_or("null", |v| v.as_str()),
                c.config_source
            )
        })
        .collect()
}

fn with_compacted_topic() -> Harness {
    let mut h = cluster("kafka");
    h.act(
        serde_json::json!({"create_topic": {"name": "cmp", "partitions": 1,
        "replication_factor": 1, "timestamp_type": "LogAppendTime",
        "config": {"cleanup_policy": "compact", "delete_retention_ms": 1000}}}),
    );
    h
}

#[test]
fn a_topics_configs_are_its_settings_over_the_servers_and_kafkas_defaults() {
    let mut h = with_compacted_topic();
    let step = h.driver.step();
    let r = one(&mut h, 2, resource(TOPIC, "cmp", None));
    assert_eq!(r.error_code, code::NONE);
    assert_eq!((r.resource_type, r.resource_name.as_str()), (TOPIC, "cmp"));
    assert_eq!(
        lines(&r),
        [
            "cleanup.policy=compact 1",
            "delete.retention.ms=1000 1",
            "index.interval.bytes=4096 5",
            "max.message.bytes=1048576 4",
            "message.timestamp.type=LogAppendTime 1",
            "min.insync.replicas=1 5",
            "retention.bytes=-1 5",
            "retention.ms=-1 4",
            "segment.bytes=1048576 4",
        ]
    );
    assert!(r.configs.iter().all(|c| !c.read_only && !c.is_sensitive));
    assert!(
        r.configs
            .iter()
            .all(|c| c.synonyms.is_empty() && c.documentation.is_none()),
        "neither asked"
    );
    assert_eq!(h.driver.step(), step, "reading records nothing");
    let plain = one(
        &mut h,
        1,
        resource(TOPIC, "t", Some(&["cleanup.policy", "nope"])),
    );
    assert_eq!(lines(&plain), ["cleanup.policy=delete 5"]);
}

#[test]
fn synonyms_and_documentation_come_when_asked() {
    let mut h = with_compacted_topic();
    let request = DescribeConfigsRequest::default()
        .with_resources(vec![resource(TOPIC, "cmp", Some(&["cleanup.policy"]))])
        .with_include_synonyms(true)
        .with_include_documentation(true);
    let r = ask(&mut h, 1, 4, request.clone()).remove(0);
    let c = &r.configs[0];
    let synonyms: Vec<String> = c
        .synonyms
        .iter()
        .map(|s| {
            format!(
                "{}={} {}",
                s.name.as_str(),
                s.value.as_ref().unwrap().as_str(),
                s.source
            )
        })
        .collect();
    assert_eq!(
        synonyms,
        ["cleanup.policy=compact 1", "log.cleanup.policy=delete 5"]
    );
    assert_eq!(c.config_type, 7, "LIST");
    assert!(
        c.documentation
            .as_ref()
            .is_some_and(|d| d.contains("compact"))
    );
    let v2 = ask(&mut h, 1, 2, request).remove(0);
    assert!(v2.configs[0].documentation.is_none(), "v3+ only");
}

#[test]
fn a_bad_or_missing_topic_is_kafkas_error() {
    let mut h = cluster("minikafka");
    let request = DescribeConfigsRequest::default().with_resources(vec![
        resource(TOPIC, "nosuch", None),
        resource(TOPIC, "bad name!", None),
        resource(TOPIC, "", None),
        resource(TOPIC, "t", None),
    ]);
    let r = ask(&mut h, 1, 1, request);
    let codes: Vec<i16> = r.iter().map(|r| r.error_code).collect();
    assert_eq!(
        codes,
        [
            code::UNKNOWN_TOPIC_OR_PARTITION,
            code::INVALID_TOPIC_EXCEPTION,
            code::INVALID_TOPIC_EXCEPTION,
            code::NONE
        ]
    );
    assert!(r[0].configs.is_empty());
    assert_eq!(r[0].error_message.as_deref(), Some(""), "Kafka's: empty");
    assert_eq!(r[1].resource_name.as_str(), "bad name!");
}

#[test]
fn a_broker_describes_itself_only() {
    let mut h = cluster("minikafka");
    let own = one(
        &mut h,
        2,
        resource(BROKER, "2", Some(&["broker.id", "node.id"])),
    );
    assert_eq!(own.error_code, code::NONE);
    assert_eq!(lines(&own), ["broker.id=2 4", "node.id=2 4"]);
    assert!(own.configs.iter().all(|c| c.read_only));
    let all = one(&mut h, 1, resource(BROKER, "1", None));
    assert!(
        lines(&all).contains(&"auto.create.topics.enable=false 4".to_string()),
        "{:?}",
        lines(&all)
    );
    let defaults = one(&mut h, 1, resource(BROKER, "", None));
    assert_eq!(
        (defaults.error_code, defaults.configs.len()),
        (code::NONE, 0),
        "no dynamic defaults"
    );
    let other = one(&mut h, 1, resource(BROKER, "2", None));
    assert_eq!(other.error_code, code::INVALID_REQUEST);
    assert_eq!(
        other.error_message.unwrap().as_str(),
        "Unexpected broker id, expected 1 or empty string, but received 2"
    );
    let word = one(&mut h, 1, resource(BROKER, "one", None));
    assert_eq!(word.error_code, code::INVALID_REQUEST);
    for kind in [8, 16, 32, 0, 99] {
        let r = one(&mut h, 1, resource(kind, "x", None));
        assert_eq!(r.error_code, code::INVALID_REQUEST, "type {kind}");
        assert_eq!(r.resource_type, kind);
    }
}

/// CreateTopics v5+ lists the created topic's configs as DescribeConfigs
/// then answers them, as Kafka fills them in (none below v5).
#[test]
fn create_topics_answers_the_configs_describe_configs_reads() {
    use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
    use kafka_protocol::messages::{CreateTopicsRequest, TopicName};

    let mut h = cluster("kafka");
    let create = |h: &mut Harness, name: &str, version: i16| {
        let topic = CreatableTopic::default()
            .with_name(TopicName(StrBytes::from_string(name.into())))
            .with_num_partitions(1)
            .with_replication_factor(1)
            .with_configs(vec![
                CreatableTopicConfig::default()
                    .with_name(StrBytes::from_static_str("cleanup.policy"))
                    .with_value(Some(StrBytes::from_static_str("compact"))),
            ]);
        let body =
            RequestKind::CreateTopics(CreateTopicsRequest::default().with_topics(vec![topic]));
        match h.ask(1, version, body) {
            ResponseKind::CreateTopics(mut r) => r.topics.remove(0),
            other => panic!("{other:?}"),
        }
    };
    let created = create(&mut h, "cmp", 7);
    assert_eq!(created.error_code, code::NONE);
    let answered: Vec<String> = created
        .configs
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}={} {}",
                c.name.as_str(),
                c.value.as_ref().unwrap().as_str(),
                c.config_source
            )
        })
        .collect();
    assert!(
        answered.contains(&"cleanup.policy=compact 1".to_string()),
        "{answered:?}"
    );
    let described = one(&mut h, 1, resource(TOPIC, "cmp", None));
    assert_eq!(answered, lines(&described));
    assert!(
        create(&mut h, "old", 4)
            .configs
            .unwrap_or_default()
            .is_empty(),
        "not filled below v5, whose response has no configs"
    );
}
