//! The names of the files in a data directory (FORMATS.md), in one leaf
//! module: whoever needs a name (the file's owner, the copies of a data
//! directory in `shared_files`, the tests) imports it from here, so no
//! engine module imports another one just for a name.

/// `metadata.json`: topics, assignments, leaders and leader epochs.
pub const METADATA_FILE: &str = "metadata.json";

/// `offsets.json`: the consumer groups' committed offsets.
pub const OFFSETS_FILE: &str = "offsets.json";

/// The producer ids and epochs handed out so far.
pub const IDENTITIES_FILE: &str = "producer-identities.json";

/// The high watermarks, in Kafka's checkpoint format.
pub const CHECKPOINT_FILE: &str = "replication-offset-checkpoint";

/// The transaction journal.
pub const JOURNAL_FILE: &str = "transactions.journal";

/// The advisory lock file.
pub const LOCK_FILE: &str = ".mk-tui.lock";

/// The `.log` file name for a segment starting at `base_offset`.
pub fn log_file_name(base_offset: i64) -> String {
    format!("{base_offset:020}.log")
}

/// The `.index` file name for a segment starting at `base_offset`.
pub fn index_file_name(base_offset: i64) -> String {
    format!("{base_offset:020}.index")
}
