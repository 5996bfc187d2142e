//! The book's `log` package (E2): segmented, CRC-checked, append-only
//! partition logs with a sparse offset index.

pub mod compaction;
pub mod frame_copy;
pub mod frames;
pub mod index;
pub mod lineage;
pub mod partition_log;
pub mod recovery;
pub mod retention;
pub mod segment;
pub mod segment_swap;

pub use compaction::{CompactionResult, LogCompactor};
pub use frame_copy::FetchedFrames;
pub use partition_log::{BatchSummary, LogRecovery, PartitionLog};
pub use retention::RetentionManager;
