//! What the engine adds around the book's transaction types
//! (`engine::transaction`), kept out of them so that those read like the
//! book: the index of transaction instances behind per-instance visibility
//! (`instances`), the bookkeeping of a commit run one engine step at a time
//! (`steps`), the late write that hangs a transaction under version 1
//! (`late_writes`), the kafka rules' group commit of the journal's syncs
//! (`group_commit`, its crash tests in `group_commit_crashes`), and what
//! the dashboard, the Kafka edge and the tests read of the coordinator
//! (`readers`). A checkpoint's memo and a crash's carry are in
//! `engine::time_travel::transactions`.

pub mod group_commit;
pub mod instances;
pub mod late_writes;
pub mod readers;
pub mod steps;

#[cfg(test)]
mod deferred_syncs;
#[cfg(test)]
mod group_commit_crashes;
