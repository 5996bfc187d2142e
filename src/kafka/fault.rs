//! The fault for the lesson on idempotence: "drop the response of the next
//! produce; the client retries, and the dashboard shows the sequence check
//! answering the retry with the original offsets".
//!
//! Armed by `mk-tui serve --fault drop-produce-response` (at the start) or
//! the dashboard's `D` key (`mk-tui --listen`). The next Produce that
//! expects a response (acks 1 or all) is handled as any other (its records
//! are appended, an `acks=all` one still waits for the followers), and its
//! answer is then taken on the driver's side: the network side gets no
//! body, so nothing is written back, and closes the connection, as when
//! the connection breaks after the broker appended and before its response
//! got out (on a live TCP connection nothing is lost; a lost response is a
//! broken connection). The client cannot tell whether the batch was
//! written and sends it again on a new connection, and the sequence check of
//! [`crate::kafka::producers`] answers an idempotent retry with the offset
//! the batch was appended at, appending nothing.
//!
//! Faults are data: arming and dropping are `note` steps of the session
//! (SPEC §4 `note`: "a step that only shows its caption"), each with a
//! caption that says what happened, so a served or a dashboard recording
//! shows where the fault was armed and which response it dropped, and a
//! replay (which needs no client) reaches the same state. What is armed is
//! the server's, beside the driver: a replay arms nothing.

use kafka_protocol::messages::RequestKind;
use tokio::sync::oneshot;

use crate::kafka::broker::Answer;
use crate::session::recording::Caption;

/// A fault the server can be asked to inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Drop the response of the next Produce that expects one.
    DropProduceResponse,
}

impl Fault {
    /// Every fault, by name (`--fault NAME`).
    pub const ALL: [Fault; 1] = [Fault::DropProduceResponse];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Fault::DropProduceResponse => "drop-produce-response",
        }
    }

    /// The fault called `name`.
    pub fn from_name(name: &str) -> Result<Self, crate::session::SessionError> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|f| f.name()).collect();
                crate::session::SessionError::flag(
                    "--fault",
                    format!("unknown fault {name:?}; valid faults: {}", names.join(", ")),
                )
            })
    }

    /// The caption of the `note` step that arms it.
    pub fn armed_caption(self) -> Caption {
        match self {
            Fault::DropProduceResponse => Caption::Bilingual {
                en: "fault armed: the response to the next Produce will be dropped".into(),
                zh: "故障已就绪：下一个 Produce 的响应将被丢弃".into(),
            },
        }
    }
}

/// A Produce whose answer the fault takes: the handlers answer `inner`,
/// and the worker passes the answer on to `reply` without its body.
#[derive(Debug)]
pub struct Dropping {
    pub inner: oneshot::Receiver<Answer>,
    pub reply: oneshot::Sender<Answer>,
    /// `Produce v9 from "rdkafka"`, for the note.
    pub what: String,
}

/// What is armed, and the answers being taken.
#[derive(Debug, Default)]
pub struct Faults {
    armed: Option<Fault>,
    pub dropping: Vec<Dropping>,
}

impl Faults {
    /// Arms `fault` (once: arming it again while armed changes nothing).
    pub fn arm(&mut self, fault: Fault) {
        self.armed = Some(fault);
    }

    /// The fault armed, if any.
    pub fn armed(&self) -> Option<Fault> {
        self.armed
    }

    /// Whether a request is the one the armed fault takes: a Produce that
    /// expects a response (acks=0 gets none anyway, so it does not count).
    /// Disarms the fault when it is.
    pub fn takes(&mut self, body: &RequestKind) -> bool {
        let hit = matches!(
            (self.armed, body),
            (Some(Fault::DropProduceResponse), RequestKind::Produce(p)) if p.acks != 0
        );
        if hit {
            self.armed = None;
        }
        hit
    }
}

/// The answer the client never gets: no body (the network side writes
/// nothing back, and logs the line), then the connection is closed, as a
/// response lost on the way is on TCP (the connection breaks; TCP itself
/// loses nothing on a live one). The client learns nothing of the
/// request's fate, and retries it on a new connection.
pub fn drop_answer(mut answer: Answer) -> Answer {
    answer.body = None;
    answer.close = true;
    answer.outcome = format!(
        "{}; response dropped (fault): the client is not told, and will retry",
        answer.outcome
    );
    answer
}

/// The caption of the `note` step of a dropped response.
pub fn dropped_caption(what: &str, outcome: &str) -> Caption {
    Caption::Bilingual {
        en: format!(
            "fault: response to {what} dropped and its connection closed; the client was not told: {outcome}"
        ),
        zh: format!("故障：{what} 的响应被丢弃，连接已关闭；客户端未得知：{outcome}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{MetadataRequest, ProduceRequest};

    #[test]
    fn only_a_produce_that_expects_a_response_takes_the_armed_fault() {
        let mut f = Faults::default();
        let acks_1 = RequestKind::Produce(ProduceRequest::default().with_acks(1));
        assert!(!f.takes(&acks_1), "nothing armed");
        f.arm(Fault::DropProduceResponse);
        assert!(!f.takes(&RequestKind::Metadata(MetadataRequest::default())));
        let acks_0 = RequestKind::Produce(ProduceRequest::default().with_acks(0));
        assert!(!f.takes(&acks_0), "acks=0 gets no response anyway");
        assert_eq!(f.armed(), Some(Fault::DropProduceResponse));
        assert!(f.takes(&acks_1));
        assert_eq!(f.armed(), None, "once");
        assert!(!f.takes(&acks_1));
    }

    #[test]
    fn faults_by_name() {
        assert_eq!(
            Fault::from_name("drop-produce-response").ok(),
            Some(Fault::DropProduceResponse)
        );
        let err = Fault::from_name("drop").unwrap_err().to_string();
        assert!(err.contains("valid faults: drop-produce-response"), "{err}");
    }
}
