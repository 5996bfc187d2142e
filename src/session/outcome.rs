//! How an action ended (SPEC §4): ok, pending, crashed-and-recovered, or an
//! error that keeps the engine's typed error, so callers match on what went
//! wrong instead of searching the text, and the status line takes its
//! colour from [`Outcome::kind`].

use std::sync::Arc;

use crate::engine::MiniKafkaError;
use crate::session::action::FieldError;

/// How an action ended when the driver went quiet after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done.
    Ok,
    /// Started, waiting (for acks, or behind an earlier action on the same
    /// transaction); it ends at a later step.
    Pending,
    /// The step crashed the cluster on purpose (a `crash`, a `tear`, a
    /// commit or abort reaching its `crash_after` cut point) and recovery
    /// ran: the sentence says what crashed and what recovery did, as the
    /// events pane shows it.
    Recovered(String),
    /// Refused or failed; the cluster is as the error leaves it.
    Error(ActionError),
}

/// The kind of an [`Outcome`], without its details: what the status line
/// colours by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OutcomeKind {
    Ok,
    Pending,
    Recovered,
    Error,
}

impl OutcomeKind {
    /// "ok", "pending", "recovered" or "error".
    pub fn name(self) -> &'static str {
        match self {
            OutcomeKind::Ok => "ok",
            OutcomeKind::Pending => "pending",
            OutcomeKind::Recovered => "recovered",
            OutcomeKind::Error => "error",
        }
    }
}

impl Outcome {
    /// The outcome's kind.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            Outcome::Ok => OutcomeKind::Ok,
            Outcome::Pending => OutcomeKind::Pending,
            Outcome::Recovered(_) => OutcomeKind::Recovered,
            Outcome::Error(_) => OutcomeKind::Error,
        }
    }

    /// "ok", "pending", "recovered" or "error".
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// The error, if the action failed.
    pub fn error(&self) -> Option<&ActionError> {
        match self {
            Outcome::Error(e) => Some(e),
            _ => None,
        }
    }
}

/// Why an action failed.
#[derive(Debug, Clone)]
pub enum ActionError {
    /// The engine refused or failed it (shared: the engine's error holds
    /// I/O errors, which cannot be cloned, and outcomes are kept per step).
    Engine(Arc<MiniKafkaError>),
    /// The action itself is not valid (fields that do not go together, a
    /// value past a limit of docs/recording-format.md): the engine was not
    /// asked, and nothing changed.
    Invalid(FieldError),
}

impl ActionError {
    /// A stable code for the kind of failure: the engine error's name
    /// (`NotEnoughReplicas`, `UnknownTransaction`, …) or `InvalidAction`.
    pub fn code(&self) -> &'static str {
        match self {
            ActionError::Engine(e) => e.code(),
            ActionError::Invalid(_) => "InvalidAction",
        }
    }

    /// The engine's error, if the engine failed the action.
    pub fn engine(&self) -> Option<&MiniKafkaError> {
        match self {
            ActionError::Engine(e) => Some(e),
            ActionError::Invalid(_) => None,
        }
    }
}

impl From<MiniKafkaError> for ActionError {
    fn from(e: MiniKafkaError) -> Self {
        ActionError::Engine(Arc::new(e))
    }
}

impl From<FieldError> for ActionError {
    fn from(e: FieldError) -> Self {
        ActionError::Invalid(e)
    }
}

impl std::fmt::Display for ActionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActionError::Engine(e) => e.fmt(f),
            ActionError::Invalid(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ActionError {}

/// Two errors are equal when they are of one kind and say the same (the
/// engine's errors have no equality of their own: they hold I/O errors).
impl PartialEq for ActionError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ActionError::Invalid(a), ActionError::Invalid(b)) => a == b,
            (ActionError::Engine(a), ActionError::Engine(b)) => {
                a.code() == b.code() && a.to_string() == b.to_string()
            }
            _ => false,
        }
    }
}

impl Eq for ActionError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_codes_and_equality() {
        let e = Outcome::Error(MiniKafkaError::UnknownTransaction("t".into()).into());
        assert_eq!(e.kind(), OutcomeKind::Error);
        assert_eq!(e.name(), "error");
        let err = e.error().unwrap();
        assert_eq!(err.code(), "UnknownTransaction");
        assert!(matches!(
            err.engine(),
            Some(MiniKafkaError::UnknownTransaction(id)) if id == "t"
        ));
        assert_eq!(err.to_string(), "unknown transaction \"t\"");
        assert_eq!(
            e,
            Outcome::Error(MiniKafkaError::UnknownTransaction("t".into()).into())
        );
        assert_ne!(
            e,
            Outcome::Error(MiniKafkaError::UnknownTransaction("u".into()).into())
        );
        let invalid: ActionError = FieldError::new("action.tear", "give one").into();
        assert_eq!(invalid.code(), "InvalidAction");
        assert_eq!(invalid.to_string(), "field action.tear: give one");
        assert!(invalid.engine().is_none());
        assert_eq!(Outcome::Recovered("x".into()).name(), "recovered");
        assert_eq!(Outcome::Pending.kind(), OutcomeKind::Pending);
        assert_eq!(Outcome::Ok.name(), "ok");
    }
}
