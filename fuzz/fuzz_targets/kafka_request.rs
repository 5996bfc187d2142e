//! cargo-fuzz target: see `minikafka::fuzzing::kafka_request`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| minikafka::fuzzing::kafka_request(data));
