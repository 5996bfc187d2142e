//! The book's `consumer` package: committed consumer-group offsets (E8).

pub mod offsets;

pub use offsets::OffsetStore;
