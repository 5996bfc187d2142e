//! The book's `transaction` package (E9-E14), file for file: `model.rs`
//! (`model.py`), `journal.rs` (`journal.py`), `manager.rs` and `handle.rs`
//! (`manager.py`'s `TransactionManager` and `Transaction`). What the engine
//! adds around them is in `engine::txn_support` and
//! `engine::time_travel::transactions` (docs/reading-the-engine.md).

pub mod handle;
pub mod journal;
pub mod manager;
pub mod model;

pub use crate::engine::fault::{CutPoint, EndOutcome};
pub use handle::Transaction;
pub use journal::{JournalFrame, TransactionJournal};
pub use manager::{TransactionCoordinator, TransactionManager};
pub use model::{TransactionData, TransactionState};
