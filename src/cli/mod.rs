//! The clap front end (SPEC §2 `cli`): `mk-tui` runs the demo cluster;
//! `state` and `check` are the headless interface of SPEC §5. Every error is
//! one line naming what and where, and exits with code 2.

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use crate::demo;
use crate::engine::config::Rules;
use crate::session::{Driver, Recording, State};

/// A terminal dashboard for the internals of an embedded MiniKafka cluster.
#[derive(Debug, Parser)]
#[command(name = "mk-tui", version, about)]
pub struct Cli {
    /// Keep the demo cluster's data here instead of in a temporary directory.
    /// Reopening an existing directory shows what recovery found.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Headless commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the state after step N of a recording (default: the last step)
    /// as one JSON object; or, with only --data-dir, the state of an
    /// existing data directory, opened on a private copy.
    State {
        /// The recording (JSON Lines).
        file: Option<PathBuf>,
        /// The step (0 is the fresh cluster).
        #[arg(long)]
        step: Option<usize>,
        /// Apply the recording in DIR (empty or absent) and leave the data
        /// there; without FILE, read the existing directory DIR.
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
        /// Rules for an existing data directory: minikafka or kafka.
        #[arg(long, default_value = "minikafka")]
        rules: String,
    },
    /// Check recordings: each is read and its cluster built.
    Check {
        /// Recording files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

/// Runs the command line; the error is the one line to print.
pub fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        None => run_demo(cli.data_dir),
        Some(Command::State {
            file,
            step,
            data_dir,
            rules,
        }) => {
            let state = match (file, data_dir) {
                (Some(file), dir) => state_of_recording(&file, step, dir.as_deref())?,
                (None, Some(dir)) => {
                    let rules: Rules = rules.parse().map_err(|e| format!("--rules: {e}"))?;
                    State::of(&Driver::open_copy(&dir, rules)?)
                }
                (None, None) => return Err("state: give a recording FILE or --data-dir DIR".into()),
            };
            println!("{}", state.to_json());
            Ok(())
        }
        Some(Command::Check { files }) => {
            let mut failed = Vec::new();
            for file in &files {
                match check(file) {
                    Ok(steps) => println!("{}: ok ({steps} steps)", file.display()),
                    Err(e) => failed.push(e),
                }
            }
            if failed.is_empty() {
                Ok(())
            } else {
                Err(failed.join("\nmk-tui: "))
            }
        }
    }
}

/// The state after `step` (default: the last) of the recording in `file`.
pub fn state_of_recording(
    file: &Path,
    step: Option<usize>,
    data_dir: Option<&Path>,
) -> Result<State, String> {
    let recording = Recording::load(file).map_err(|e| e.to_string())?;
    let last = recording.steps.len();
    let target = step.unwrap_or(last);
    if target > last {
        return Err(format!(
            "{}: --step {target} is past the last step, {last}",
            file.display()
        ));
    }
    let mut driver = Driver::new(&recording.header, data_dir)
        .map_err(|e| format!("{}:1: {e}", file.display()))?;
    for s in &recording.steps[..target] {
        driver.apply(&s.action);
    }
    Ok(State::of(&driver))
}

/// Checks one recording; returns its number of steps.
pub fn check(file: &Path) -> Result<usize, String> {
    let recording = Recording::load(file).map_err(|e| e.to_string())?;
    Driver::new(&recording.header, None).map_err(|e| format!("{}:1: {e}", file.display()))?;
    Ok(recording.steps.len())
}

fn run_demo(data_dir: Option<PathBuf>) -> Result<(), String> {
    let driver = match &data_dir {
        Some(dir) if dir.read_dir().is_ok_and(|mut d| d.next().is_some()) => {
            Driver::open_in_place(dir, Rules::Minikafka)?
        }
        dir => demo::driver(dir.as_deref())?,
    };
    let cluster = driver.cluster();
    let recovery = cluster.last_recovery();
    match &data_dir {
        Some(dir) => println!("MiniKafka demo cluster in {}", dir.display()),
        None => println!("MiniKafka demo cluster in a temporary directory"),
    }
    for t in &recovery.logs_truncated {
        println!(
            "recovery: cut {} bytes from {} on broker {} ({})",
            t.truncated_bytes, t.tp, t.broker, t.reason
        );
    }
    for errors in driver.errors() {
        println!("step {}: {}", errors.step, errors.message);
    }
    print!("{}", demo::describe(cluster).map_err(|e| e.to_string())?);
    Ok(())
}
