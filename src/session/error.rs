//! The error of everything above the engine: the session, the command
//! line, the dashboard's runner, the Kafka server and the observer. Each
//! variant names what failed and where (a file and line, a field, a flag,
//! a path, the engine, a broker's answer), so a caller can tell them apart;
//! its `Display` is the one line `mk-tui` prints, which the bad-input
//! catalogue (`tests/bad_inputs/`) holds to the byte.

use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// A rule set's name the engine does not know: its sentence.
    #[error("{0}")]
    Rules(String),
    /// An error met on a private copy of a data directory, told of the
    /// original (the copy's path replaced by `original`'s).
    #[error("{told}")]
    InCopy { original: PathBuf, told: String },
    /// An error met once and met again by every later call (a time-travel
    /// timeline a failed restore left unusable).
    #[error(transparent)]
    Again(Arc<SessionError>),
    /// Several failures (`mk-tui check` of several files), one a line.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\nmk-tui: "))]
    Several(Vec<SessionError>),
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
    /// A directory tree that could not be copied: the error names the
    /// entry.
    #[error("{0}")]
    Copy(std::io::Error),
    /// An I/O error with no one path: what was being done.
    #[error("{doing}: {source}")]
    Os {
        doing: String,
        source: std::io::Error,
    },
    /// A layout file or name that is not one (`ui::layout::LayoutError`,
    /// boxed: the session builds without the dashboard).
    #[error(transparent)]
    Layout(Box<dyn std::error::Error + Send + Sync>),
    /// Drawing or writing frames (a terminal, a cast) failed.
    #[error("{0}")]
    Write(std::io::Error),
    /// The terminal would not let the mouse be captured.
    #[error("cannot capture the mouse: {0} (try --no-mouse)")]
    Mouse(std::io::Error),
    /// An observation whose last refresh failed: the line it recorded.
    #[error("{0}")]
    RefreshFailed(String),
    /// JSON that could not be read or made: what it was.
    #[error("{what}: {source}")]
    Json {
        what: String,
        source: serde_json::Error,
    },
    /// A Kafka exchange that failed: what was asked (an API, a broker's
    /// address, a frame) and why.
    #[error("{what}: {problem}")]
    Protocol { what: String, problem: String },
    /// A Kafka frame that cannot be read or written: what is wrong with
    /// it (the protocol crate's message made one line).
    #[error("{0}")]
    Frame(String),
    /// No bootstrap broker of an observation answered: why each did not.
    #[error("no bootstrap broker answered: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    NoBootstrap(Vec<SessionError>),
    /// A partition leader Metadata names did not answer.
    #[error("{source} (broker {broker}, which Metadata names the leader of {partitions})")]
    Leader {
        source: Box<SessionError>,
        broker: u32,
        partitions: String,
    },
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

/// The one line, for the places that keep or show it as text (the
/// dashboard's status line).
impl From<SessionError> for String {
    fn from(e: SessionError) -> String {
        e.to_string()
    }
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

    pub fn os(doing: impl Into<String>, source: std::io::Error) -> Self {
        Self::Os {
            doing: doing.into(),
            source,
        }
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

    /// `self` met on the private copy `copy` of `original`, told of the
    /// original.
    pub fn of_copy(self, copy: &Path, original: &Path) -> Self {
        Self::InCopy {
            original: original.to_path_buf(),
            told: self
                .to_string()
                .replace(&copy.display().to_string(), &original.display().to_string()),
        }
    }

    /// The engine's error, if that is what this is (under any context).
    pub fn engine(&self) -> Option<&MiniKafkaError> {
        match self {
            Self::Engine(e) => Some(e),
            Self::In { source, .. } => source.engine(),
            Self::Again(e) => e.engine(),
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
