//! The book's `transaction` package (E9-E14): the journaled transaction state
//! machine, the LSO and `read_committed`, recovery, and the async
//! `Transaction` handle.

pub mod coordinator;
pub mod handle;
pub mod journal;
pub mod manager;
pub mod model;
/// Moved to [`crate::engine::shared_vec`] (the logs use it too).
pub use crate::engine::shared_vec;

pub use coordinator::TransactionCoordinator;
pub use handle::{EndOutcome, Transaction};
pub use journal::{JournalFrame, TransactionJournal};
pub use manager::TransactionManager;
pub use model::{CutPoint, TransactionData, TransactionState};
