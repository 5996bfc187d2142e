//! `mk-tui`: see `minikafka::cli`.

use std::process::ExitCode;

use clap::Parser;
use minikafka::cli::{Cli, run};

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("mk-tui: {message}");
            ExitCode::from(2)
        }
    }
}
