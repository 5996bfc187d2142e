//! The session layer (SPEC §2, §4, §5): the action vocabulary, the
//! deterministic driver, recordings, time travel and the one read-only
//! [`Snapshot`] every screen and the headless state are made from.

pub mod action;
pub mod cleanup;
pub mod client_steps;
pub mod cluster_file;
pub mod data_dir;
pub mod driver;
pub mod error;
pub mod error_zh;
pub mod guide;
pub mod history;
pub mod limits;
pub mod listeners;
pub mod live;
pub mod narrate;
pub mod narrate_classic;
pub mod narrate_groups;
pub mod observation;
pub mod observed;
pub mod outcome;
pub mod payload;
pub mod present;
pub mod recording;
pub mod replay;
pub mod said;
pub mod scratch;
// The type is `session::Session`; its file is named after it.
#[allow(clippy::module_inception)]
pub mod session;
pub mod snapshot;
pub mod step_log;
pub mod tasks;
pub mod timeline;
pub mod ui_step;

pub use action::Action;
pub use driver::Driver;
pub use error::SessionError;
pub use outcome::{ActionError, Outcome, OutcomeKind};
pub use recording::{Recording, RecordingError, RecordingWriter, Step};
pub use session::Session;
pub use snapshot::{Snapshot, SnapshotSource};
pub use timeline::Timeline;
