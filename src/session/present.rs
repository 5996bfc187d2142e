//! A step's `present` hint: the panes presentation mode shows, side by
//! side, from that step on (docs/recording-format.md "Step"). `"auto"`
//! hands the choice back to the dashboard, which follows what the step
//! changed (docs/dashboard.md "Presentation").
//!
//! Read when a recording is read, so `mk-tui check` refuses a bad value
//! with one line that starts with the field's name.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::session::ui_step::PaneName;

/// The most panes presentation mode shows beside each other.
pub const MAX_PANES: usize = 2;

/// The lesson's choice of panes for presentation mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Present {
    /// `"auto"`: the dashboard picks by what each step changed.
    Auto,
    /// One or two panes, left first; never the caption (presentation draws
    /// it under them).
    Panes(Vec<PaneName>),
}

impl Present {
    /// Reads a `present` value: `"auto"` or a list of one or two distinct
    /// pane names other than `caption`. The error starts with the field.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let expected = || {
            "field present: expected \"auto\" or a list of one or two pane names, e.g. [\"log\",\"consumers\"]"
                .to_string()
        };
        let list = match value {
            Value::String(s) if s == "auto" => return Ok(Present::Auto),
            Value::Array(list) if (1..=MAX_PANES).contains(&list.len()) => list,
            _ => return Err(expected()),
        };
        let mut panes = Vec::new();
        for item in list {
            let name = item.as_str().ok_or_else(expected)?;
            let pane = PaneName::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = PaneName::ALL
                    .iter()
                    .filter(|p| **p != PaneName::Caption)
                    .map(|p| p.name())
                    .collect();
                format!(
                    "field present: unknown pane {name:?}; one of {}",
                    names.join(", ")
                )
            })?;
            if pane == PaneName::Caption {
                return Err(
                    "field present: \"caption\" is drawn under the panes already; name the panes beside it"
                        .into(),
                );
            }
            if panes.contains(&pane) {
                return Err(format!("field present: {name:?} twice"));
            }
            panes.push(pane);
        }
        Ok(Present::Panes(panes))
    }

    /// The panes' names, none for `auto`.
    pub fn names(&self) -> Vec<String> {
        match self {
            Present::Auto => Vec::new(),
            Present::Panes(p) => p.iter().map(|p| p.name().to_string()).collect(),
        }
    }
}

impl Serialize for Present {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Present::Auto => s.serialize_str("auto"),
            Present::Panes(_) => self.names().serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Present::from_json(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_auto_and_one_or_two_panes_and_writes_them_back() {
        assert_eq!(Present::from_json(&json!("auto")), Ok(Present::Auto));
        let two = Present::from_json(&json!(["log", "consumers"])).unwrap();
        assert_eq!(
            two,
            Present::Panes(vec![PaneName::Log, PaneName::Consumers])
        );
        assert_eq!(
            serde_json::to_value(&two).unwrap(),
            json!(["log", "consumers"])
        );
        assert_eq!(serde_json::to_value(Present::Auto).unwrap(), json!("auto"));
        assert_eq!(
            Present::from_json(&json!(["journal"])),
            Ok(Present::Panes(vec![PaneName::Journal]))
        );
    }

    #[test]
    fn refuses_bad_values_naming_the_field() {
        for bad in [
            json!([]),
            json!(["log", "consumers", "journal"]),
            json!("log"),
            json!(3),
            json!([1]),
            json!(["jornal"]),
            json!(["caption"]),
            json!(["log", "log"]),
        ] {
            let e = Present::from_json(&bad).unwrap_err();
            assert!(e.starts_with("field present: "), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        assert!(
            Present::from_json(&json!(["jornal"]))
                .unwrap_err()
                .contains("\"jornal\"")
        );
    }
}
