//! What a command line clap refused gets: `--help` and `--version` print
//! as clap prints them (exit 0); an error is one line, `mk-tui: …` naming
//! the argument and the value, with `(see mk-tui --help)`, or the
//! command's own help (`(see mk-tui export --help)`) when the error is
//! inside a command, where the options and arguments it names are listed.
//! Exit 2 (issue 17 item 10: clap's own message is 3-5 lines).

use std::ffi::OsString;

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};

use super::Cli;

/// Prints `e` as above; `args` is the command line clap parsed (the
/// program's name first), which names the command whose help to point at.
pub fn argument_error(e: &clap::Error, args: &[OsString]) -> std::process::ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                std::process::ExitCode::from(2)
            } else {
                std::process::ExitCode::SUCCESS
            };
        }
        _ => {}
    }
    let context = |k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => Some(v.join(", ")),
        _ => None,
    };
    let line = match e.kind() {
        ErrorKind::UnknownArgument => format!(
            "unknown argument {}",
            context(ContextKind::InvalidArg).unwrap_or_default()
        ),
        ErrorKind::InvalidSubcommand => format!(
            "unknown command {}",
            context(ContextKind::InvalidSubcommand).unwrap_or_default()
        ),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let arg = context(ContextKind::InvalidArg).unwrap_or_default();
            match context(ContextKind::InvalidValue).filter(|v| !v.is_empty()) {
                Some(value) => format!("{arg}: invalid value {value:?}"),
                None => format!("{arg}: a value is required"),
            }
        }
        ErrorKind::MissingRequiredArgument => format!(
            "missing {}",
            missing(&context(ContextKind::InvalidArg).unwrap_or_default())
        ),
        // Any other: clap's first line, without its `error: `.
        _ => e
            .render()
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("error: ")
            .to_string(),
    };
    let help = match command_in(args) {
        // An unknown command is the top level's error, whatever it names.
        Some(name) if e.kind() != ErrorKind::InvalidSubcommand => format!("mk-tui {name} --help"),
        _ => "mk-tui --help".to_string(),
    };
    eprintln!("mk-tui: {line} (see {help})");
    std::process::ExitCode::from(2)
}

/// What is missing, in words: a required group (`export`'s `--cast` or
/// `--html`) comes from clap as `<--cast <OUT>|--html <DIR>>`; it reads
/// `--cast <OUT> or --html <DIR>`. A single argument is as clap names it.
fn missing(arg: &str) -> String {
    match arg.strip_prefix('<').and_then(|a| a.strip_suffix('>')) {
        // clap writes a positional in a group bare (`FILE`); alone it is
        // `<FILE>`, as here.
        Some(inner) if inner.contains('|') => inner
            .split('|')
            .map(|a| {
                if a.starts_with(['-', '<']) {
                    a.to_string()
                } else {
                    format!("<{a}>")
                }
            })
            .collect::<Vec<_>>()
            .join(" or "),
        _ => arg.to_string(),
    }
}

/// The command `args` runs, if any: the first word that is not an option
/// or an option's value (`--layout crash lab` runs `lab`). Only a known
/// command counts; the options before it are the top level's, so whether
/// one takes a value is read from [`Cli`] itself.
fn command_in(args: &[OsString]) -> Option<String> {
    let cli = Cli::command();
    let takes_value = |long: &str| {
        cli.get_arguments()
            .any(|a| a.get_long() == Some(long) && a.get_action().takes_values())
    };
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        if word == "--" {
            return None;
        }
        if let Some(long) = word.strip_prefix("--") {
            if !long.contains('=') && takes_value(long) {
                words.next();
            }
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        return cli
            .get_subcommands()
            .find(|c| c.get_name() == word)
            .map(|c| c.get_name().to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn the_command_is_found_past_the_top_level_options_and_their_values() {
        let cases = [
            ("mk-tui lab", Some("lab")),
            ("mk-tui --layout lab export x", Some("export")),
            ("mk-tui --layout=crash render", Some("render")),
            ("mk-tui --no-mouse --theme light lab", Some("lab")),
            ("mk-tui --bogus", None),
            ("mk-tui nosuch lab", None),
            ("mk-tui -- lab", None),
            ("mk-tui", None),
        ];
        for (line, want) in cases {
            assert_eq!(command_in(&words(line)).as_deref(), want, "{line}");
        }
    }

    #[test]
    fn a_missing_group_reads_as_its_arguments_joined_by_or() {
        assert_eq!(
            missing("<--cast <OUT>|--html <DIR>>"),
            "--cast <OUT> or --html <DIR>"
        );
        assert_eq!(
            missing("<FILE|--state <FILE.json>>"),
            "<FILE> or --state <FILE.json>"
        );
        assert_eq!(missing("<NAME>"), "<NAME>");
        assert_eq!(
            missing("--bootstrap <HOST:PORT,…>"),
            "--bootstrap <HOST:PORT,…>"
        );
    }
}
