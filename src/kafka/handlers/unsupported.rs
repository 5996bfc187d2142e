//! Requests this server does not handle, or not at the version asked ("never a
//! dropped connection without a log line"). An API whose response has a
//! top-level error code is answered with UNSUPPORTED_VERSION in that code, at
//! the request's version, so the client reports it; any other (an unknown API
//! key, a version the protocol crate cannot encode, an API whose errors sit
//! per partition) closes the connection after one log line, as Kafka does for
//! a request it cannot parse.

use kafka_protocol::messages::{
    AddOffsetsToTxnResponse, ApiKey, EndTxnResponse, FindCoordinatorResponse, HeartbeatResponse,
    InitProducerIdResponse, JoinGroupResponse, LeaveGroupResponse, ListGroupsResponse,
    ResponseKind, SaslHandshakeResponse, SyncGroupResponse,
};

use crate::kafka::errors::code::UNSUPPORTED_VERSION;

/// The UNSUPPORTED_VERSION response to `api` at `version`, where there is
/// one to give.
pub fn error_response(api: ApiKey, version: i16) -> Option<ResponseKind> {
    let range = api.valid_versions();
    if version < range.min || version > range.max {
        return None;
    }
    let e = UNSUPPORTED_VERSION;
    Some(match api {
        // From version 4 its errors are per coordinator key.
        ApiKey::FindCoordinator if version < 4 => {
            ResponseKind::FindCoordinator(FindCoordinatorResponse::default().with_error_code(e))
        }
        ApiKey::InitProducerId => {
            ResponseKind::InitProducerId(InitProducerIdResponse::default().with_error_code(e))
        }
        ApiKey::JoinGroup => {
            ResponseKind::JoinGroup(JoinGroupResponse::default().with_error_code(e))
        }
        ApiKey::SyncGroup => {
            ResponseKind::SyncGroup(SyncGroupResponse::default().with_error_code(e))
        }
        ApiKey::Heartbeat => {
            ResponseKind::Heartbeat(HeartbeatResponse::default().with_error_code(e))
        }
        ApiKey::LeaveGroup => {
            ResponseKind::LeaveGroup(LeaveGroupResponse::default().with_error_code(e))
        }
        ApiKey::ListGroups => {
            ResponseKind::ListGroups(ListGroupsResponse::default().with_error_code(e))
        }
        ApiKey::SaslHandshake => {
            ResponseKind::SaslHandshake(SaslHandshakeResponse::default().with_error_code(e))
        }
        ApiKey::AddOffsetsToTxn => {
            ResponseKind::AddOffsetsToTxn(AddOffsetsToTxnResponse::default().with_error_code(e))
        }
        ApiKey::EndTxn => ResponseKind::EndTxn(EndTxnResponse::default().with_error_code(e)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apis_with_a_top_level_error_are_answered_and_others_are_not() {
        assert!(error_response(ApiKey::Heartbeat, 0).is_some());
        assert!(error_response(ApiKey::FindCoordinator, 3).is_some());
        assert!(error_response(ApiKey::FindCoordinator, 4).is_none());
        assert!(
            error_response(ApiKey::Heartbeat, 99).is_none(),
            "past what can be encoded"
        );
        assert!(
            error_response(ApiKey::OffsetCommit, 8).is_none(),
            "errors per partition"
        );
    }
}
