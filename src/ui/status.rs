//! The status line's message: how the last thing done ended, which sets
//! its colour ([`StatusKind`]), and its words.

use crate::session::Outcome;
use crate::session::client_steps::Told;
use crate::session::said::Said;
use crate::ui::i18n::Lang;

/// How the last thing done ended, which sets the status line's colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusKind {
    Ok,
    Pending,
    /// The step crashed the cluster on purpose (crash, tear, a cut point)
    /// and recovery ran.
    Recovered,
    Error,
}

/// The status line's message and its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub kind: StatusKind,
    pub text: String,
}

impl Status {
    /// An error message.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            kind: StatusKind::Error,
            text: text.into(),
        }
    }

    /// A sentence of the session that went well, in `lang`.
    pub fn ok(said: &Said, lang: Lang) -> Self {
        Self {
            kind: StatusKind::Ok,
            text: said.get(lang.zh()).to_string(),
        }
    }

    /// A sentence of the session saying why something was not done, in
    /// `lang`.
    pub fn refused(said: &Said, lang: Lang) -> Self {
        Self::error(said.get(lang.zh()))
    }

    /// The status of the last step a Kafka client (`--listen`) applied:
    /// the step's, saying who did it; a server's `note` step says its
    /// caption.
    pub fn of_told(told: &Told, lang: Lang) -> Self {
        match told {
            Told::Applied {
                step,
                outcome,
                said,
            } => {
                let mut status = Self::of_step(*step, outcome, said, lang);
                status.text.push_str(if lang == Lang::Zh {
                    "（Kafka 客户端）"
                } else {
                    " (Kafka client)"
                });
                status
            }
            Told::Noted { step, caption } => Self {
                kind: StatusKind::Ok,
                text: lang.pick(
                    format!("step {step}: {}", caption.text("en")),
                    format!("步骤 {step}：{}", caption.text("zh")),
                ),
            },
            Told::NotRecorded(e) => Self::error(e.clone()),
        }
    }

    /// The status of step `step`, action `name`, ended with `outcome`: the
    /// one place an [`Outcome`] becomes a status kind and text.
    pub fn of_outcome(step: usize, name: &str, outcome: &Outcome) -> Self {
        let (kind, text) = match outcome {
            Outcome::Ok => (StatusKind::Ok, format!("{name}: ok")),
            Outcome::Pending => (StatusKind::Pending, format!("{name}: pending")),
            // The sentence names the action and what recovery did.
            Outcome::Recovered(sentence) => (StatusKind::Recovered, sentence.clone()),
            Outcome::Error(e) => (StatusKind::Error, format!("{name}: error: {e}")),
        };
        Self {
            kind,
            text: format!("step {step}: {text}"),
        }
    }

    /// [`Self::of_outcome`] in `lang`: the driver's words for the step
    /// (`Driver::last_said`), whose English half is the same sentence.
    pub fn of_step(step: usize, outcome: &Outcome, said: &Said, lang: Lang) -> Self {
        Self {
            kind: Self::of_outcome(step, "", outcome).kind,
            text: lang.pick(
                format!("step {step}: {}", said.en),
                format!("步骤 {step}：{}", said.zh),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_sets_the_status_kind() {
        assert_eq!(
            Status::of_outcome(3, "commit", &Outcome::Ok),
            Status {
                kind: StatusKind::Ok,
                text: "step 3: commit: ok".into()
            }
        );
        assert_eq!(
            Status::of_outcome(4, "send", &Outcome::Pending).kind,
            StatusKind::Pending
        );
        let invalid = crate::session::action::FieldError::new("action.tear", "give one");
        let e = Status::of_outcome(5, "tear", &Outcome::Error(invalid.into()));
        assert_eq!(
            (e.kind, e.text.as_str()),
            (
                StatusKind::Error,
                "step 5: tear: error: field action.tear: give one"
            )
        );
        let sentence = "crash: recovery found nothing to repair";
        let r = Status::of_outcome(6, "crash", &Outcome::Recovered(sentence.into()));
        assert_eq!(
            (r.kind, r.text.as_str()),
            (
                StatusKind::Recovered,
                "step 6: crash: recovery found nothing to repair"
            )
        );
    }
}
