//! The book's `consumer` package: committed consumer-group offsets (E8),
//! the group coordinator and its assignor (E15), and the consumer a group
//! member polls with.

pub mod assignor;
pub mod classic;
// The type is the book's `Consumer`, in the book's `consumer.py`.
#[allow(clippy::module_inception)]
pub mod consumer;
pub mod group;
pub mod offsets;
pub mod range_assignor;

pub use assignor::round_robin_assign;
pub use classic::{Assignment, SyncOutcome};
pub use consumer::Consumer;
pub use group::{Group, GroupCoordinator, GroupMember, GroupState, JoinResult};
pub use offsets::OffsetStore;
pub use range_assignor::range_assign;
