//! Kafka requests from Rust, encoded with the `kafka-protocol` crate's
//! client side (the `testkit` feature turns it on): for the load test and
//! the bad-input tests, which need no Python client. One request at a time
//! per connection, every read bounded by a timeout.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{
    CreateTopicsRequest, MetadataRequest, MetadataResponse, ProduceRequest, ProduceResponse,
    RequestHeader, ResponseHeader, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

/// How long a response may take (an acks=all produce waits for a
/// replication tick; a loaded debug server is slow).
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// One client connection that speaks the protocol.
pub struct Conn {
    pub stream: TcpStream,
    correlation: i32,
    client_id: String,
}

impl Conn {
    pub fn connect(port: u16, client_id: &str) -> Self {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        stream.set_nodelay(true).unwrap();
        Self {
            stream,
            correlation: 0,
            client_id: client_id.to_string(),
        }
    }

    /// The frame of `request` at `version` (size prefix, header, body).
    pub fn frame<R: Request>(&mut self, request: &R, version: i16) -> Vec<u8> {
        self.correlation += 1;
        let header = RequestHeader::default()
            .with_request_api_key(R::KEY)
            .with_request_api_version(version)
            .with_correlation_id(self.correlation)
            .with_client_id(Some(StrBytes::from_string(self.client_id.clone())));
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&[0; 4]);
        header.encode(&mut buf, R::header_version(version)).unwrap();
        request.encode(&mut buf, version).unwrap();
        let size = (buf.len() - 4) as i32;
        buf[..4].copy_from_slice(&size.to_be_bytes());
        buf.to_vec()
    }

    /// Sends `request` and reads its response; `None` when the server
    /// closed the connection instead of answering.
    pub fn call<R: Request>(&mut self, request: &R, version: i16) -> Option<R::Response> {
        self.call_sized(request, version).map(|(r, _)| r)
    }

    /// [`Self::call`], with the size of the response frame in bytes.
    pub fn call_sized<R: Request>(
        &mut self,
        request: &R,
        version: i16,
    ) -> Option<(R::Response, usize)> {
        let frame = self.frame(request, version);
        self.stream.write_all(&frame).ok()?;
        let payload = self.read_frame()?;
        let size = payload.len();
        Some((self.decode::<R>(payload, version), size))
    }

    /// Sends `request` without reading its response ([`Self::answer`]
    /// reads it): a fetch that waits.
    pub fn send<R: Request>(&mut self, request: &R, version: i16) {
        let frame = self.frame(request, version);
        self.stream.write_all(&frame).unwrap();
    }

    /// The response to the request [`Self::send`] sent last; `None` when
    /// the server closed the connection (or the read timed out).
    pub fn answer<R: Request>(&mut self, version: i16) -> Option<R::Response> {
        let payload = self.read_frame()?;
        Some(self.decode::<R>(payload, version))
    }

    fn decode<R: Request>(&self, payload: Vec<u8>, version: i16) -> R::Response {
        let mut payload = Bytes::from(payload);
        let header =
            ResponseHeader::decode(&mut payload, R::Response::header_version(version)).unwrap();
        assert_eq!(header.correlation_id, self.correlation, "correlation id");
        R::Response::decode(&mut payload, version).unwrap()
    }

    /// One response frame's payload, or `None` at EOF.
    fn read_frame(&mut self) -> Option<Vec<u8>> {
        let mut size = [0u8; 4];
        self.stream.read_exact(&mut size).ok()?;
        let mut payload = vec![0u8; i32::from_be_bytes(size) as usize];
        self.stream.read_exact(&mut payload).ok()?;
        Some(payload)
    }
}

/// Creates `topic` with `partitions` partitions of `replicas` replicas;
/// panics on a refusal.
pub fn create_topic(conn: &mut Conn, topic: &str, partitions: i32, replicas: i16) {
    let request = CreateTopicsRequest::default()
        .with_timeout_ms(10_000)
        .with_topics(vec![
            CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.into())))
                .with_num_partitions(partitions)
                .with_replication_factor(replicas),
        ]);
    let response = conn.call(&request, 4).expect("CreateTopics answered");
    assert_eq!(response.topics[0].error_code, 0, "{response:?}");
}

/// The leader of each partition of `topic`, by partition index.
pub fn leaders(conn: &mut Conn, topic: &str) -> Vec<i32> {
    let request = MetadataRequest::default().with_topics(None);
    let response: MetadataResponse = conn.call(&request, 12).expect("Metadata answered");
    let t = response
        .topics
        .iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.0.as_str() == topic))
        .unwrap_or_else(|| panic!("no {topic} in {response:?}"));
    let mut parts: Vec<(i32, i32)> = t
        .partitions
        .iter()
        .map(|p| (p.partition_index, p.leader_id.0))
        .collect();
    parts.sort();
    parts.into_iter().map(|(_, leader)| leader).collect()
}

/// A plain producer's v2 batch (no producer id, uncompressed) of `values`.
pub fn batch(values: &[String]) -> Bytes {
    let records: Vec<Record> = values
        .iter()
        .enumerate()
        .map(|(i, v)| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: -1,
            timestamp: 0,
            key: None,
            value: Some(Bytes::copy_from_slice(v.as_bytes())),
            headers: Default::default(),
        })
        .collect();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        records.iter(),
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    buf.freeze()
}

/// A Produce request of one partition's `records` bytes.
pub fn produce(topic: &str, partition: i32, acks: i16, records: Bytes) -> ProduceRequest {
    ProduceRequest::default()
        .with_acks(acks)
        .with_timeout_ms(20_000)
        .with_topic_data(vec![
            TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_string(topic.into())))
                .with_partition_data(vec![
                    PartitionProduceData::default()
                        .with_index(partition)
                        .with_records(Some(records)),
                ]),
        ])
}

/// The one partition's (error code, base offset) of a produce response.
pub fn produced(response: &ProduceResponse) -> (i16, i64) {
    let p = &response.responses[0].partition_responses[0];
    (p.error_code, p.base_offset)
}
