//! The error of everything above the engine: the session, the command
//! line, the dashboard's runner, the Kafka server and the observer. Each
//! variant names what failed and where (a file and line, a field, a flag,
//! a path, the engine, a broker's answer), so a caller can tell them apart;
//! its `Display` is the one line `mk-tui` prints, which the bad-input
//! catalogue (`tests/bad_inputs/`) holds to the byte.

use std::path::{Path, PathBuf};

use crate::engine::MiniKafkaError;
use crate::session::action::FieldError;
use crate::session::recording::RecordingError;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The engine refused or failed: its own message.
    #[error(transparent)]
    Engine(#[from] MiniKafkaError),
    /// A recording or observation file, at a line (and column).
    #[error(transparent)]
    Recording(#[from] RecordingError),
    /// A field of a header, an action or a file: `field cluster.topics[0]: …`.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// A command-line flag or argument and what is wrong with its value.
    #[error("{flag}: {problem}")]
    Flag { flag: String, problem: String },
    /// A file or directory that is not as it must be.
    #[error("{}: {problem}", path.display())]
    Path { path: PathBuf, problem: String },
    /// An I/O error on a file or directory.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// An I/O error with no one path: what was being done.
    #[error("{doing}: {source}")]
    Os {
        doing: &'static str,
        source: std::io::Error,
    },
    /// A Kafka exchange that failed: what was asked (an API, a broker's
    /// address, a frame) and why.
    #[error("{what}: {problem}")]
    Protocol { what: String, problem: String },
    /// A request the current state refuses (two flags that do not go
    /// together, a file that exists, a server that cannot start): the
    /// sentence says which.
    #[error("{0}")]
    Refused(String),
    /// Another error, with where it happened in front.
    #[error("{context}: {source}")]
    In {
        context: String,
        source: Box<SessionError>,
    },
}

/// The session's results.
pub type Result<T, E = SessionError> = std::result::Result<T, E>;

impl SessionError {
    pub fn flag(flag: impl Into<String>, problem: impl std::fmt::Display) -> Self {
        Self::Flag {
            flag: flag.into(),
            problem: problem.to_string(),
        }
    }

    pub fn path(path: impl AsRef<Path>, problem: impl std::fmt::Display) -> Self {
        Self::Path {
            path: path.as_ref().to_path_buf(),
            problem: problem.to_string(),
        }
    }

    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    pub fn os(doing: &'static str, source: std::io::Error) -> Self {
        Self::Os { doing, source }
    }

    pub fn protocol(what: impl std::fmt::Display, problem: impl std::fmt::Display) -> Self {
        Self::Protocol {
            what: what.to_string(),
            problem: problem.to_string(),
        }
    }

    pub fn refused(sentence: impl Into<String>) -> Self {
        Self::Refused(sentence.into())
    }

    /// This error with `context` in front: `context: error`.
    pub fn in_(self, context: impl std::fmt::Display) -> Self {
        Self::In {
            context: context.to_string(),
            source: Box::new(self),
        }
    }

    /// The engine's error, if that is what this is (under any context).
    pub fn engine(&self) -> Option<&MiniKafkaError> {
        match self {
            Self::Engine(e) => Some(e),
            Self::In { source, .. } => source.engine(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variant_prints_its_line() {
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let cases = [
            (
                SessionError::path("/d", "no such data directory"),
                "/d: no such data directory",
            ),
            (SessionError::flag("--rules", "unknown"), "--rules: unknown"),
            (
                SessionError::os("cannot create a temporary directory", io()),
                "cannot create a temporary directory: entity not found",
            ),
            (SessionError::io("/f", io()), "/f: entity not found"),
            (
                FieldError::new("cluster.brokers", "give one").into(),
                "field cluster.brokers: give one",
            ),
            (SessionError::refused("x").in_("--record"), "--record: x"),
            (
                SessionError::protocol("Metadata v12", "no answer"),
                "Metadata v12: no answer",
            ),
        ];
        for (error, line) in cases {
            assert_eq!(error.to_string(), line);
        }
        let engine: SessionError = MiniKafkaError::Crashed.into();
        assert_eq!(engine.to_string(), MiniKafkaError::Crashed.to_string());
        assert!(engine.in_("step 3").engine().is_some());
    }
}
