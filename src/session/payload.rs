//! A record's key, value or header value as an action carries it: any
//! bytes, as Kafka keeps any (a Long key, an Avro or Protobuf value with
//! its schema id in front).
//!
//! A recording spells bytes that are UTF-8 as text, as it always has, and
//! other bytes as `{"base64": "..."}`, so that a recording of a client's
//! binary records replays byte for byte (SPEC §4: state is a function of
//! the action list) and a recording of text records reads as before.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bytes of a record field. Two payloads are equal when their bytes are:
/// `"abc"` and `{"base64": "YWJj"}` are the same payload, spelled `"abc"`.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Payload(Bytes);

impl Payload {
    pub fn new(bytes: impl Into<Bytes>) -> Self {
        Self(bytes.into())
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The bytes as text, when they are UTF-8.
    pub fn as_text(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The bytes as owned text, when they are UTF-8; else the payload back.
    pub fn into_text(self) -> Result<String, Payload> {
        match self.as_text() {
            Some(text) => Ok(text.to_string()),
            None => Err(self),
        }
    }

    pub fn is_text(&self) -> bool {
        self.as_text().is_some()
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_text() {
            Some(text) => fmt::Debug::fmt(text, f),
            None => write!(f, "b\"{}\"", self.0.escape_ascii()),
        }
    }
}

impl From<&str> for Payload {
    fn from(text: &str) -> Self {
        Self(Bytes::copy_from_slice(text.as_bytes()))
    }
}

impl From<String> for Payload {
    fn from(text: String) -> Self {
        Self(Bytes::from(text))
    }
}

impl From<Vec<u8>> for Payload {
    fn from(bytes: Vec<u8>) -> Self {
        Self(Bytes::from(bytes))
    }
}

impl From<&[u8]> for Payload {
    fn from(bytes: &[u8]) -> Self {
        Self(Bytes::copy_from_slice(bytes))
    }
}

impl From<Bytes> for Payload {
    fn from(bytes: Bytes) -> Self {
        Self(bytes)
    }
}

impl PartialEq<str> for Payload {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Payload {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

const BASE64_FIELD: &str = "base64";

impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.as_text() {
            Some(text) => serializer.serialize_str(text),
            None => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(BASE64_FIELD, &BASE64.encode(&self.0))?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(PayloadVisitor)
    }
}

struct PayloadVisitor;

impl<'de> Visitor<'de> for PayloadVisitor {
    type Value = Payload;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("text, or {\"base64\": \"...\"} for bytes that are not UTF-8")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Payload, E> {
        Ok(Payload::from(text))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Payload, E> {
        Ok(Payload::from(text))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Payload, A::Error> {
        let mut encoded: Option<String> = None;
        while let Some(field) = map.next_key::<String>()? {
            if field != BASE64_FIELD {
                return Err(de::Error::unknown_field(&field, &[BASE64_FIELD]));
            }
            if encoded.is_some() {
                return Err(de::Error::duplicate_field(BASE64_FIELD));
            }
            encoded = Some(map.next_value()?);
        }
        let encoded = encoded.ok_or_else(|| de::Error::missing_field(BASE64_FIELD))?;
        BASE64
            .decode(encoded.as_bytes())
            .map(Payload::from)
            .map_err(|e| de::Error::custom(format!("`base64` is not standard base64: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(p: &Payload) -> String {
        serde_json::to_string(p).unwrap()
    }

    fn parse(s: &str) -> Result<Payload, String> {
        serde_json::from_str(s).map_err(|e| e.to_string())
    }

    #[test]
    fn utf8_bytes_are_spelled_as_text_and_other_bytes_as_base64() {
        assert_eq!(json(&Payload::from("v1 é")), "\"v1 é\"");
        assert_eq!(json(&Payload::from("")), "\"\"");
        let binary = Payload::from(vec![0u8, 0, 0, 0, 1, 0xff, 0xfe]);
        assert_eq!(json(&binary), r#"{"base64":"AAAAAAH//g=="}"#);
    }

    #[test]
    fn both_spellings_read_back_the_same_bytes() {
        for bytes in [
            b"plain".to_vec(),
            vec![0xff],
            vec![0, 0, 0, 0, 0, 0, 0, 42],
            (0..=255u8).collect(),
            Vec::new(),
        ] {
            let p = Payload::from(bytes.clone());
            assert_eq!(parse(&json(&p)).unwrap().as_bytes(), &bytes[..]);
            let spelled = format!(r#"{{"base64":"{}"}}"#, BASE64.encode(&bytes));
            assert_eq!(parse(&spelled).unwrap(), p, "{spelled}");
        }
        assert_eq!(parse(r#"{"base64":"YWJj"}"#).unwrap(), "abc");
    }

    #[test]
    fn a_bad_spelling_is_refused_with_what_is_wrong() {
        let err = parse(r#"{"base64":"not base64!"}"#).unwrap_err();
        assert!(err.contains("`base64` is not standard base64"), "{err}");
        let err = parse(r#"{"hex":"00"}"#).unwrap_err();
        assert!(err.contains("unknown field `hex`"), "{err}");
        let err = parse(r#"{}"#).unwrap_err();
        assert!(err.contains("missing field `base64`"), "{err}");
        let err = parse("42").unwrap_err();
        assert!(err.contains("expected text, or {\"base64\""), "{err}");
    }

    /// The panes show a payload's bytes as the engine's records are shown
    /// (`snapshot::text`), and its Debug form says bytes.
    #[test]
    fn shown_escapes_what_is_not_utf8() {
        let shown = |p: Payload| crate::session::snapshot::text(p.as_bytes());
        assert_eq!(shown(Payload::from("é")), "é");
        assert_eq!(shown(Payload::from(vec![b'a', 0xff])), "a\\xff");
        assert_eq!(
            format!("{:?}", Payload::from(vec![b'a', 0xff])),
            "b\"a\\xff\""
        );
    }
}
