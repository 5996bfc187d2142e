//! cargo-fuzz target: see `minikafka::fuzzing::layout_parse`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| minikafka::fuzzing::layout_parse(data));
