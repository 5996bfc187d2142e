//! User records (E1): key, value, timestamp and headers. Keys and values may be
//! null, as in Kafka.
//!
//! Keys and values are [`Bytes`]: the records of one batch may slice one
//! buffer (a Kafka client's produce request, a decoded frame, a caller's
//! buffer), so building a batch and dropping it cost one allocation and one
//! `free`, not one per key and value (docs/performance.md, P3).

use bytes::Bytes;

/// One record header: a UTF-8 key and a nullable byte value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub key: String,
    pub value: Option<Bytes>,
}

/// One record inside a batch. Its offset is the batch's base offset plus
/// `offset_delta`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    pub offset_delta: i32,
    pub timestamp_ms: i64,
    pub key: Option<Bytes>,
    pub value: Option<Bytes>,
    pub headers: Vec<Header>,
}

impl Record {
    /// The book's `Record(key, value, timestamp_ms)`: nullable key and value
    /// and an explicit timestamp (0 lets the leader stamp the clock's time).
    pub fn new(key: Option<Bytes>, value: Option<Bytes>, timestamp_ms: i64) -> Self {
        Self {
            key,
            value,
            timestamp_ms,
            ..Self::default()
        }
    }

    /// The same record with this timestamp.
    pub fn with_timestamp(mut self, timestamp_ms: i64) -> Self {
        self.timestamp_ms = timestamp_ms;
        self
    }

    /// A record with only a value (offset delta and timestamp set by the batch).
    pub fn value(value: impl Into<Bytes>) -> Self {
        Self {
            value: Some(value.into()),
            ..Self::default()
        }
    }

    /// A record with a key and a value.
    pub fn keyed(key: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        Self {
            key: Some(key.into()),
            value: Some(value.into()),
            ..Self::default()
        }
    }

    /// Adds a header.
    pub fn with_header(mut self, key: impl Into<String>, value: Option<Bytes>) -> Self {
        self.headers.push(Header {
            key: key.into(),
            value,
        });
        self
    }
}

/// A record as a consumer sees it: with its absolute offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerRecord {
    pub offset: i64,
    pub timestamp_ms: i64,
    pub key: Option<Bytes>,
    pub value: Option<Bytes>,
    pub headers: Vec<Header>,
}
