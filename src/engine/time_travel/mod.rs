//! Time travel and crash-recovery speed-ups, kept out of the book's types.
//! A checkpoint's memo lets a step back reopen the checkpoint's copy
//! without reading its files again; a crash's carry lets the reopen parse
//! only what was written since the last recovery. Neither changes what the
//! engine does: each is trusted only where the file still holds the bytes
//! it came from (docs/engine-decisions.md, "A crash's recovery reads what
//! changed since the last one"; docs/performance.md).

pub mod log;
pub mod replication;
pub mod transactions;
