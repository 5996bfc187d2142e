//! cargo-fuzz target: see `minikafka::fuzzing::mkb1_decode`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| minikafka::fuzzing::mkb1_decode(data));
