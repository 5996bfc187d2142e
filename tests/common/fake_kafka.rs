//! A fake Kafka broker for `mk-tui observe` tests (issue 25): enough of
//! the protocol for one observation (ApiVersions v0, Metadata, ListOffsets,
//! Fetch; nothing else advertised, so the admin APIs are listed
//! unavailable), one topic `t` of one partition led by this broker, whose
//! log is the raw record batches the test gives. Metadata may list other
//! brokers too, such as [`silent`] ones. Each connection is served on a
//! thread of its own until the client closes it; the listener lives as
//! long as the test process.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsResponse, BrokerId, FetchRequest, FetchResponse, ListOffsetsRequest,
    ListOffsetsResponse, MetadataResponse, RequestHeader, ResponseHeader, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

/// How the fake answers.
#[derive(Clone)]
pub struct Fake {
    /// Other brokers Metadata lists: (id, HOST:PORT). This one is broker 1.
    pub others: Vec<(i32, String)>,
    /// The log of `t-0`: (base offset, batch bytes), in offset order; the
    /// HW is the end of the last batch (`hw` when set).
    pub log: Vec<(i64, i64, Bytes)>,
    pub hw: Option<i64>,
    /// Answer a fetch with the one batch holding its offset (librdkafka's
    /// mock does), not every batch from there.
    pub one_batch_per_fetch: bool,
    /// Wait this long before answering each Fetch.
    pub fetch_delay: Duration,
}

impl Fake {
    /// A fake whose log is `batches` of `per_batch` plain records each.
    pub fn with_batches(batches: i64, per_batch: i64) -> Self {
        let log = (0..batches)
            .map(|i| {
                let base = i * per_batch;
                (base, base + per_batch - 1, batch(base, per_batch))
            })
            .collect();
        Self {
            others: Vec::new(),
            log,
            hw: None,
            one_batch_per_fetch: false,
            fetch_delay: Duration::ZERO,
        }
    }

    /// Starts serving on a free loopback port; returns `HOST:PORT`.
    pub fn start(self) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let fake = Arc::new(self);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let fake = Arc::clone(&fake);
                let port = address.port();
                std::thread::spawn(move || fake.serve(stream, port));
            }
        });
        address.to_string()
    }

    fn hw(&self) -> i64 {
        self.hw
            .unwrap_or_else(|| self.log.last().map_or(0, |(_, last, _)| last + 1))
    }

    fn serve(&self, mut s: TcpStream, port: u16) {
        loop {
            let mut size = [0u8; 4];
            if s.read_exact(&mut size).is_err() {
                return;
            }
            let mut frame = vec![0; i32::from_be_bytes(size) as usize];
            if s.read_exact(&mut frame).is_err() {
                return;
            }
            let mut payload = Bytes::from(frame);
            let key = i16::from_be_bytes([payload[0], payload[1]]);
            let version = i16::from_be_bytes([payload[2], payload[3]]);
            let api = ApiKey::try_from(key).unwrap();
            let header =
                RequestHeader::decode(&mut payload, api.request_header_version(version)).unwrap();
            let mut out = BytesMut::new();
            out.put_i32(0);
            let header_version = if api == ApiKey::ApiVersions {
                0
            } else {
                api.response_header_version(version)
            };
            ResponseHeader::default()
                .with_correlation_id(header.correlation_id)
                .encode(&mut out, header_version)
                .unwrap();
            match api {
                ApiKey::ApiVersions => {
                    let keys = [(18, 0, 3), (3, 4, 12), (2, 2, 7), (1, 4, 12)];
                    ApiVersionsResponse::default()
                        .with_api_keys(
                            keys.iter()
                                .map(|&(k, min, max)| {
                                    ApiVersion::default()
                                        .with_api_key(k)
                                        .with_min_version(min)
                                        .with_max_version(max)
                                })
                                .collect(),
                        )
                        .encode(&mut out, 0)
                        .unwrap();
                }
                ApiKey::Metadata => {
                    let mut brokers = vec![(1, format!("127.0.0.1:{port}"))];
                    brokers.extend(self.others.iter().cloned());
                    MetadataResponse::default()
                        .with_brokers(
                            brokers
                                .iter()
                                .map(|(id, addr)| {
                                    let (host, port) = addr.rsplit_once(':').unwrap();
                                    MetadataResponseBroker::default()
                                        .with_node_id(BrokerId(*id))
                                        .with_host(StrBytes::from_string(host.to_string()))
                                        .with_port(port.parse().unwrap())
                                })
                                .collect(),
                        )
                        .with_topics(vec![
                            MetadataResponseTopic::default()
                                .with_name(Some(TopicName(StrBytes::from_static_str("t"))))
                                .with_partitions(vec![
                                    MetadataResponsePartition::default()
                                        .with_partition_index(0)
                                        .with_leader_id(BrokerId(1))
                                        .with_leader_epoch(0)
                                        .with_replica_nodes(vec![BrokerId(1)])
                                        .with_isr_nodes(vec![BrokerId(1)]),
                                ]),
                        ])
                        .encode(&mut out, version)
                        .unwrap();
                }
                ApiKey::ListOffsets => {
                    let request = ListOffsetsRequest::decode(&mut payload, version).unwrap();
                    let asked = &request.topics[0].partitions[0];
                    let offset = if asked.timestamp == -2 {
                        self.log.first().map_or(0, |(b, _, _)| *b)
                    } else {
                        self.hw()
                    };
                    ListOffsetsResponse::default()
                        .with_topics(vec![
                            ListOffsetsTopicResponse::default()
                                .with_name(request.topics[0].name.clone())
                                .with_partitions(vec![
                                    ListOffsetsPartitionResponse::default()
                                        .with_partition_index(0)
                                        .with_timestamp(-1)
                                        .with_offset(offset),
                                ]),
                        ])
                        .encode(&mut out, version)
                        .unwrap();
                }
                ApiKey::Fetch => {
                    std::thread::sleep(self.fetch_delay);
                    let request = FetchRequest::decode(&mut payload, version).unwrap();
                    let asked = &request.topics[0].partitions[0];
                    let from = self
                        .log
                        .iter()
                        .filter(|(_, last, _)| *last >= asked.fetch_offset);
                    let mut records = BytesMut::new();
                    for (_, _, b) in from.take(if self.one_batch_per_fetch {
                        1
                    } else {
                        usize::MAX
                    }) {
                        records.extend_from_slice(b);
                    }
                    FetchResponse::default()
                        .with_responses(vec![
                            FetchableTopicResponse::default()
                                .with_topic(request.topics[0].topic.clone())
                                .with_partitions(vec![
                                    PartitionData::default()
                                        .with_partition_index(0)
                                        .with_high_watermark(self.hw())
                                        .with_last_stable_offset(self.hw())
                                        .with_records(Some(records.freeze())),
                                ]),
                        ])
                        .encode(&mut out, version)
                        .unwrap();
                }
                other => panic!("the fake broker does not serve {other:?}"),
            }
            let size = (out.len() - 4) as i32;
            out[..4].copy_from_slice(&size.to_be_bytes());
            if s.write_all(&out).is_err() {
                return;
            }
        }
    }
}

/// A broker that accepts connections and never answers; its address.
pub fn silent() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            match stream {
                Ok(s) => held.push(s),
                Err(_) => return,
            }
        }
    });
    address
}

/// A batch of `count` plain records from `base` (values `v<offset>`).
pub fn batch(base: i64, count: i64) -> Bytes {
    let records: Vec<Record> = (base..base + count)
        .map(|offset| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset,
            sequence: (offset - base) as i32,
            timestamp: 0,
            key: None,
            value: Some(Bytes::from(format!("v{offset}"))),
            headers: Default::default(),
        })
        .collect();
    let mut buf = BytesMut::new();
    let options = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut buf, records.iter(), &options).unwrap();
    buf.freeze()
}
