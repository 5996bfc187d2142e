//! cargo-fuzz target: see `minikafka::fuzzing::journal_recovery`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| minikafka::fuzzing::journal_recovery(data));
