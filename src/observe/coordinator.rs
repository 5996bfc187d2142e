//! FindCoordinator (key 10): where a consumer group's or a transactional
//! id's coordinator listens. One request for both, told apart by the key
//! type, as Kafka's own (KIP-98: 0 a group, 1 a transactional id).

use kafka_protocol::messages::FindCoordinatorRequest;
use kafka_protocol::protocol::StrBytes;

use super::connection::Conn;

use crate::session::SessionError;

/// What a coordinator is looked up for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Of {
    Group,
    TransactionalId,
}

impl Of {
    fn key_type(self) -> i8 {
        match self {
            Of::Group => 0,
            Of::TransactionalId => 1,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Of::Group => "group",
            Of::TransactionalId => "transactional id",
        }
    }
}

/// Where the coordinator of `key` listens, `HOST:PORT`; an error code is
/// one line naming the key, the version and the broker asked.
pub async fn find(
    conn: &mut Conn,
    version: i16,
    of: Of,
    key: &str,
) -> Result<String, SessionError> {
    let request = FindCoordinatorRequest::default()
        .with_key(StrBytes::from_string(key.to_string()))
        .with_key_type(of.key_type());
    let response = conn.call("FindCoordinator", &request, version).await?;
    if response.error_code != 0 {
        return Err(SessionError::protocol(
            format!("{} {key}", of.name()),
            format!(
                "FindCoordinator v{version} answered error code {} ({})",
                response.error_code, conn.address
            ),
        ));
    }
    Ok(format!("{}:{}", response.host.as_str(), response.port))
}
