//! `mk-tui`: until the dashboard lands, it opens the built-in demo cluster on
//! a temporary data directory (or `--data-dir DIR`), prints its state, and
//! exits.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use minikafka::demo;
use minikafka::engine::ManualClock;

/// A terminal dashboard for the internals of an embedded MiniKafka cluster.
#[derive(Debug, Parser)]
#[command(name = "mk-tui", version, about)]
struct Cli {
    /// Keep the cluster's data here instead of in a temporary directory.
    /// Reopening an existing directory shows what recovery found.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("mk-tui: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    let temp;
    let dir = match cli.data_dir {
        Some(dir) => dir,
        None => {
            temp = tempfile::tempdir()
                .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
            temp.path().to_path_buf()
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let cluster = runtime
        .block_on(demo::open_demo(&dir, ManualClock::new()))
        .map_err(|e| e.to_string())?;
    let recovery = cluster.last_recovery();
    println!("MiniKafka demo cluster in {}", dir.display());
    for t in &recovery.logs_truncated {
        println!(
            "recovery: cut {} bytes from {} on broker {} ({})",
            t.truncated_bytes, t.tp, t.broker, t.reason
        );
    }
    print!("{}", demo::describe(&cluster).map_err(|e| e.to_string())?);
    Ok(())
}
