//! ApiVersions (versions 0-4): the APIs and versions of [`SUPPORTED`], and
//! nothing else, so a client never picks a version this server cannot
//! answer. A request newer than version 4 gets UNSUPPORTED_VERSION with the
//! list, at version 0, as Kafka answers it; the client then retries.
//!
//! From version 3 on it also carries the one feature this server has,
//! `transaction.version` (KIP-584 features, KIP-890): supported 0-2,
//! finalized at the cluster's version (`--transaction-version`). Kafka's
//! Java client speaks transaction version 2 (EndTxn v5, Produce v12,
//! TxnOffsetCommit v5, no AddPartitionsToTxn) when the finalized level is
//! 2 or more (`TransactionManager.maybeUpdateTransactionV2Enabled`), and
//! reads the finalized features only from a response whose
//! `finalized_features_epoch` is newer than the last it saw (from -1), so
//! the epoch is 0 and never changes: the version is fixed for the
//! cluster's life. librdkafka and kafka-python do not read the feature
//! and stay on version 1's requests.

use kafka_protocol::messages::api_versions_response::{
    ApiVersion, FinalizedFeatureKey, SupportedFeatureKey,
};
use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, ApiVersionsResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use super::SUPPORTED;
use crate::engine::config::TransactionVersion;
use crate::kafka::broker::Answer;
use crate::kafka::errors::code;

/// Kafka's name of the feature.
pub const TRANSACTION_VERSION_FEATURE: &str = "transaction.version";

/// The response listing every supported API, and the transaction version
/// the cluster speaks.
/// The highest Produce version listed at transaction version 1.
const PRODUCE_LISTED_AT_V1: i16 = 9;

pub fn listing(error_code: i16, transactions: TransactionVersion) -> ApiVersionsResponse {
    let mut keys: Vec<ApiVersion> = SUPPORTED
        .iter()
        .map(|&(k, min, max)| {
            // At transaction version 1, Produce is listed up to v9 as it
            // was before version 2 was served: librdkafka at v10 failed
            // the listen and compression suites (docs/kafka-differences.md
            // "Produce versions listed"). The handler takes up to v12.
            let max = match (k, transactions) {
                (ApiKey::Produce, TransactionVersion::V1) => max.min(PRODUCE_LISTED_AT_V1),
                _ => max,
            };
            ApiVersion::default()
                .with_api_key(k as i16)
                .with_min_version(min)
                .with_max_version(max)
        })
        .collect();
    keys.sort_by_key(|k| k.api_key);
    let name = StrBytes::from_static_str(TRANSACTION_VERSION_FEATURE);
    let level = transactions.number() as i16;
    ApiVersionsResponse::default()
        .with_error_code(error_code)
        .with_api_keys(keys)
        .with_supported_features(vec![
            SupportedFeatureKey::default()
                .with_name(name.clone())
                .with_min_version(0)
                .with_max_version(2),
        ])
        .with_finalized_features_epoch(0)
        .with_finalized_features(vec![
            FinalizedFeatureKey::default()
                .with_name(name)
                .with_min_version_level(level)
                .with_max_version_level(level),
        ])
}

/// Answers a decoded ApiVersions request.
pub fn handle(
    _request: &ApiVersionsRequest,
    _version: i16,
    transactions: TransactionVersion,
) -> Answer {
    Answer::now(
        ResponseKind::ApiVersions(listing(code::NONE, transactions)),
        format!("ok (transaction.version {})", transactions.number()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_is_the_supported_table() {
        let l = listing(0, TransactionVersion::V1);
        assert_eq!(l.api_keys.len(), SUPPORTED.len());
        let range = |listing: &ApiVersionsResponse, api: ApiKey| {
            listing
                .api_keys
                .iter()
                .find(|k| k.api_key == api as i16)
                .map(|k| (k.min_version, k.max_version))
        };
        assert_eq!(
            range(&l, ApiKey::Produce),
            Some((3, PRODUCE_LISTED_AT_V1)),
            "version 1 lists Produce as before version 2 was served"
        );
        assert_eq!(
            range(&listing(0, TransactionVersion::V2), ApiKey::Produce),
            Some((3, 12)),
            "v12 adds partitions implicitly (KIP-890); v13 needs topic ids"
        );
        let txn = |api: ApiKey| range(&l, api);
        assert_eq!(txn(ApiKey::InitProducerId), Some((0, 5)));
        assert_eq!(txn(ApiKey::EndTxn), Some((0, 5)));
        assert_eq!(txn(ApiKey::TxnOffsetCommit), Some((0, 5)));
        assert_eq!(
            txn(ApiKey::AddPartitionsToTxn),
            Some((0, 5)),
            "KIP-890's batched versions 4-5, VerifyOnly included"
        );
        assert_eq!(txn(ApiKey::OffsetFetch), Some((1, 7)));
        assert_eq!(
            txn(ApiKey::DescribeConfigs),
            Some((1, 4)),
            "Kafka 4.4's range, so kafka-topics.sh --describe reads a topic's configs"
        );
        assert_eq!(
            txn(ApiKey::AlterConfigs),
            Some((0, 2)),
            "Kafka 4.4's range: a topic's whole config set"
        );
        assert_eq!(
            txn(ApiKey::IncrementalAlterConfigs),
            Some((0, 1)),
            "Kafka 4.4's range, so kafka-configs.sh --alter changes a topic's config"
        );
        assert_eq!(txn(ApiKey::JoinGroup), Some((0, 9)));
        assert_eq!(txn(ApiKey::DescribeGroups), Some((0, 6)));
        assert_eq!(txn(ApiKey::DeleteGroups), Some((0, 2)), "every version");
        assert_eq!(txn(ApiKey::OffsetDelete), Some((0, 0)), "its only version");
        assert_eq!(
            txn(ApiKey::OffsetForLeaderEpoch),
            Some((2, 4)),
            "Kafka 4.4's range: consumers check their position after a leader change"
        );
        assert_eq!(
            txn(ApiKey::CreatePartitions),
            Some((0, 3)),
            "Kafka 4.4's range, so kafka-topics.sh --alter --partitions grows a topic"
        );
        assert_eq!(
            txn(ApiKey::ListOffsets),
            Some((1, 10)),
            "tiered storage's -4 (v8) and -5 (v9), answered without it; v11's -6 is not"
        );
        assert_eq!(
            txn(ApiKey::ConsumerGroupHeartbeat),
            Some((0, 1)),
            "advertised, to refuse KIP-848 consumers out loud"
        );
    }

    #[test]
    fn the_transaction_version_is_the_finalized_feature() {
        for (v, level) in [(TransactionVersion::V1, 1), (TransactionVersion::V2, 2)] {
            let l = listing(0, v);
            assert_eq!(l.finalized_features.len(), 1);
            let f = &l.finalized_features[0];
            assert_eq!(f.name.as_str(), TRANSACTION_VERSION_FEATURE);
            assert_eq!((f.min_version_level, f.max_version_level), (level, level));
            assert_eq!(l.finalized_features_epoch, 0, "newer than the client's -1");
            assert_eq!(l.supported_features[0].max_version, 2);
        }
    }
}
