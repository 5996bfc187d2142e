//! cargo-fuzz target: see `minikafka::fuzzing::recording_parse`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| minikafka::fuzzing::recording_parse(data));
