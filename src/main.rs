//! `mk-tui`: see `minikafka::cli`.

use std::process::ExitCode;

use clap::Parser;
use minikafka::cli::{Cli, argument_error, run};

fn main() -> ExitCode {
    // Kept: an error names the help of the command the line runs.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return argument_error(&e, &args),
    };
    let result = run(cli);
    // Every private temporary directory is gone with its session by now;
    // this removes their per-process parent (issue 17 item 9).
    minikafka::session::scratch::remove_all();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // One line whatever a library put in the message (issue 25: the
            // protocol crate's errors end in a newline); each cause is
            // made one line where it is formatted, this is the net.
            let message = error.to_string();
            let message = message
                .lines()
                .map(str::trim_end)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            eprintln!("mk-tui: {message}");
            ExitCode::from(2)
        }
    }
}
