//! The session layer (SPEC §2, §4, §5): the action vocabulary, the
//! deterministic driver, recordings, time travel and the headless state.

pub mod action;
pub mod recording;

pub use action::Action;
pub use recording::{Recording, RecordingError, RecordingWriter, Step};
