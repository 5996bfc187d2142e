//! The model-based test harness: generating cases, comparing the engine's
//! state with the model, counting what the cases exercised.

pub mod compare;
pub mod generate;
pub mod stats;
