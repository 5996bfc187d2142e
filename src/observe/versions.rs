//! ApiVersions (key 18): which version of each API the observer speaks to
//! a broker (docs/observe.md "Versions"). The request is version 0, which
//! every broker answers (Kafka keeps ApiVersions v0 so that a client can
//! always ask); each later request then uses the newest version both the
//! broker and the observer know, or stops with one line naming the API
//! and both ranges.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use kafka_protocol::messages::{ApiKey, ApiVersionsRequest};

use super::connection::Conn;

use crate::session::SessionError;

/// The versions this observer can send of each API it uses, and why the
/// lower bounds are where they are.
pub mod ours {
    use std::ops::RangeInclusive;
    /// v4 adds `allow_auto_topic_creation`, sent as false: an older
    /// Metadata naming a missing topic may create it, and the observer
    /// never writes. v12 is the newest `mk-tui serve` serves, so the
    /// newest tested.
    pub const METADATA: RangeInclusive<i16> = 4..=12;
    /// v2 adds the isolation level (latest under read_committed = LSO).
    pub const LIST_OFFSETS: RangeInclusive<i16> = 2..=7;
    /// v4 adds the isolation level, the LSO and `aborted_transactions`;
    /// v13 names topics by id only.
    pub const FETCH: RangeInclusive<i16> = 4..=12;
    /// v1 adds the key type; v4 asks for several keys at once (one at a
    /// time is enough here).
    pub const FIND_COORDINATOR: RangeInclusive<i16> = 1..=3;
    /// v2 reads every topic of a group (topics null); v8 asks for several
    /// groups at once (one at a time is enough here).
    pub const OFFSET_FETCH: RangeInclusive<i16> = 2..=7;
    /// v0 lists every group the broker coordinates; v4's state and v5's
    /// type filters are sent empty (all groups).
    pub const LIST_GROUPS: RangeInclusive<i16> = 0..=5;
    /// v1 is the oldest the protocol crate keeps (KIP-896 removed v0); v4
    /// adds the volume's bytes, not used.
    pub const DESCRIBE_LOG_DIRS: RangeInclusive<i16> = 1..=4;
    /// v0 lists every transactional id with its producer id and state; v1's
    /// duration filter and v2's id pattern are not used.
    pub const LIST_TRANSACTIONS: RangeInclusive<i16> = 0..=1;
    /// v0, the only version (KIP-664).
    pub const DESCRIBE_TRANSACTIONS: RangeInclusive<i16> = 0..=0;
    /// v0, the only version (KIP-664).
    pub const DESCRIBE_PRODUCERS: RangeInclusive<i16> = 0..=0;
    /// v1 adds each config's source (only a topic's own settings are
    /// taken) and is the oldest Kafka 4 serves; v4 is the newest.
    pub const DESCRIBE_CONFIGS: RangeInclusive<i16> = 1..=4;
}

/// The version ranges one broker advertised, by API key.
#[derive(Debug, Clone)]
pub struct Versions {
    address: String,
    ranges: BTreeMap<i16, (i16, i16)>,
}

impl Versions {
    /// Asks the broker on `conn`.
    pub async fn ask(conn: &mut Conn) -> Result<Self, SessionError> {
        let response = conn
            .call("ApiVersions", &ApiVersionsRequest::default(), 0)
            .await?;
        if response.error_code != 0 {
            return Err(SessionError::protocol(
                &conn.address,
                format!("ApiVersions v0 answered error code {}", response.error_code),
            ));
        }
        Ok(Self {
            address: conn.address.clone(),
            ranges: response
                .api_keys
                .iter()
                .map(|k| (k.api_key, (k.min_version, k.max_version)))
                .collect(),
        })
    }

    /// The newest version of `key` in both ranges, or None when the broker
    /// does not advertise `key` or no version of it is in both: for the
    /// APIs the observer can do without (it then lists what they would
    /// have filled as unavailable).
    pub fn optional(&self, key: ApiKey, ours: RangeInclusive<i16>) -> Option<i16> {
        let &(min, max) = self.ranges.get(&(key as i16))?;
        let top = max.min(*ours.end());
        (top >= min.max(*ours.start())).then_some(top)
    }

    /// The newest version of `key` in both the broker's range and `ours`.
    pub fn pick(
        &self,
        key: ApiKey,
        name: &str,
        ours: RangeInclusive<i16>,
    ) -> Result<i16, SessionError> {
        let Some(&(min, max)) = self.ranges.get(&(key as i16)) else {
            return Err(SessionError::protocol(
                &self.address,
                format!(
                    "the broker does not support {name} (API key {}), which the observer needs",
                    key as i16
                ),
            ));
        };
        let top = max.min(*ours.end());
        if top < min.max(*ours.start()) {
            return Err(SessionError::protocol(
                &self.address,
                format!(
                    "unsupported API version: the broker serves {name} v{min}-{max}, the observer speaks v{}-{}",
                    ours.start(),
                    ours.end()
                ),
            ));
        }
        Ok(top)
    }
}
