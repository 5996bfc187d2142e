//! The topics a classic group's members subscribe to, read from their
//! JoinGroup metadata as Kafka's `ClassicGroup.computeSubscribedTopics`
//! reads it: only for the `consumer` protocol type, from each member's
//! metadata for the protocol chosen, parsed as the consumer protocol's
//! `Subscription` at version 0 (the prefix of every later version: a
//! version, then the topics). OffsetDelete refuses a topic in this set
//! (GROUP_SUBSCRIBED_TO_TOPIC).

use std::collections::BTreeSet;

use bytes::{Buf, Bytes};
use kafka_protocol::messages::ConsumerProtocolSubscription;
use kafka_protocol::protocol::Decodable;

/// Kafka's consumer protocol type (`ConsumerProtocol.PROTOCOL_TYPE`).
pub const CONSUMER: &str = "consumer";

/// The union of the members' subscribed topics, or None when it cannot be
/// known: another protocol type, no protocol chosen, or a member's
/// metadata that is not a consumer protocol subscription. No members:
/// the empty set (of the consumer protocol type).
pub fn subscribed_topics<'a>(
    protocol_type: Option<&str>,
    protocol: Option<&str>,
    metadata: impl IntoIterator<Item = &'a Bytes>,
) -> Option<BTreeSet<String>> {
    if protocol_type != Some(CONSUMER) {
        return None;
    }
    let mut metadata = metadata.into_iter().peekable();
    if metadata.peek().is_none() {
        return Some(BTreeSet::new());
    }
    protocol?;
    let mut topics = BTreeSet::new();
    for m in metadata {
        topics.extend(topics_of(m)?);
    }
    Some(topics)
}

/// One member's subscribed topics, if its metadata parses.
fn topics_of(metadata: &Bytes) -> Option<Vec<String>> {
    let mut buf = metadata.clone();
    if buf.remaining() < 2 {
        return None;
    }
    // Any version: version 0's fields lead every later one.
    let _version = buf.get_i16();
    let s = ConsumerProtocolSubscription::decode(&mut buf, 0).ok()?;
    Some(s.topics.iter().map(|t| t.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, BytesMut};
    use kafka_protocol::protocol::{Encodable, StrBytes};

    fn subscription(version: i16, topics: &[&str]) -> Bytes {
        let s = ConsumerProtocolSubscription::default().with_topics(
            topics
                .iter()
                .map(|t| StrBytes::from_string(t.to_string()))
                .collect(),
        );
        let mut buf = BytesMut::new();
        buf.put_i16(version);
        s.encode(&mut buf, version).unwrap();
        buf.freeze()
    }

    #[test]
    fn the_union_of_every_members_topics_at_any_version() {
        let a = subscription(0, &["orders", "audit"]);
        let b = subscription(3, &["payments", "orders"]);
        assert_eq!(
            subscribed_topics(Some("consumer"), Some("range"), [&a, &b]),
            Some(BTreeSet::from([
                "audit".to_string(),
                "orders".to_string(),
                "payments".to_string()
            ]))
        );
    }

    #[test]
    fn unknown_unless_the_consumer_protocol_parses() {
        let a = subscription(1, &["orders"]);
        assert_eq!(subscribed_topics(Some("connect"), Some("x"), [&a]), None);
        assert_eq!(subscribed_topics(None, None, [&a]), None);
        assert_eq!(subscribed_topics(Some("consumer"), None, [&a]), None);
        let junk = Bytes::from_static(&[0, 0, 0, 0, 0, 9, 1]);
        assert_eq!(
            subscribed_topics(Some("consumer"), Some("range"), [&a, &junk]),
            None,
            "one member's metadata that does not parse"
        );
        assert_eq!(
            subscribed_topics(Some("consumer"), None, []),
            Some(BTreeSet::new()),
            "no members: subscribed to nothing"
        );
    }
}
