//! ApiVersions (versions 0-4): the APIs and versions of [`SUPPORTED`], and
//! nothing else, so a client never picks a version this server cannot
//! answer. A request newer than version 4 gets UNSUPPORTED_VERSION with the
//! list, at version 0, as Kafka answers it; the client then retries.

use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse, ResponseKind};

use super::SUPPORTED;
use crate::kafka::broker::Answer;
use crate::kafka::errors::code;

/// The response listing every supported API.
pub fn listing(error_code: i16) -> ApiVersionsResponse {
    let mut keys: Vec<ApiVersion> = SUPPORTED
        .iter()
        .map(|&(k, min, max)| {
            ApiVersion::default()
                .with_api_key(k as i16)
                .with_min_version(min)
                .with_max_version(max)
        })
        .collect();
    keys.sort_by_key(|k| k.api_key);
    ApiVersionsResponse::default()
        .with_error_code(error_code)
        .with_api_keys(keys)
}

/// Answers a decoded ApiVersions request.
pub fn handle(_request: &ApiVersionsRequest, _version: i16) -> Answer {
    Answer::now(ResponseKind::ApiVersions(listing(code::NONE)), "ok")
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::ApiKey;

    #[test]
    fn the_listing_is_the_supported_table() {
        let l = listing(0);
        assert_eq!(l.api_keys.len(), SUPPORTED.len());
        let produce = l
            .api_keys
            .iter()
            .find(|k| k.api_key == ApiKey::Produce as i16)
            .unwrap();
        assert_eq!((produce.min_version, produce.max_version), (3, 9));
        let txn = |api: ApiKey| {
            l.api_keys
                .iter()
                .find(|k| k.api_key == api as i16)
                .map(|k| (k.min_version, k.max_version))
        };
        assert_eq!(txn(ApiKey::InitProducerId), Some((0, 4)));
        assert_eq!(
            txn(ApiKey::AddPartitionsToTxn),
            Some((0, 3)),
            "KIP-890's batched versions 4-5 are not served"
        );
        assert_eq!(txn(ApiKey::OffsetFetch), Some((1, 7)));
        assert_eq!(txn(ApiKey::JoinGroup), Some((0, 9)));
        assert_eq!(txn(ApiKey::DescribeGroups), Some((0, 6)));
        assert_eq!(
            txn(ApiKey::ConsumerGroupHeartbeat),
            Some((0, 1)),
            "advertised, to refuse KIP-848 consumers out loud"
        );
    }
}
