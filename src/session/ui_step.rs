//! The typed fields of the `ui` action (SPEC §4: "`ui` | focus / select /
//! toggle (UI-only steps, so a replay shows the same screen)").
//!
//! `{"ui":{"focus":"journal"}}`, `{"ui":{"select":3}}`, `{"ui":{"select":null}}`
//! and `{"ui":{"toggle":"isolation"}}` are read into [`UiStep`] when a
//! recording is read, so `mk-tui check` refuses a bad value with one line
//! naming the file, the line and the field (the field's name starts the
//! message: `field focus: unknown pane "jornal"; …`).
//!
//! The session layer must not import the dashboard, so the pane names live
//! here as a plain [`PaneName`] enum; the dashboard maps it to its own
//! `PaneId` by name, and a test there checks that the two lists are the same
//! (see docs/dashboard.md, "Decisions").

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::session::snapshot::Isolation;

/// A dashboard pane, by the name layouts and recordings use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PaneName {
    Partitions,
    Replicas,
    Watermarks,
    Journal,
    Log,
    Offsets,
    Consumers,
    Groups,
    Pending,
    Events,
    Caption,
    Clients,
}

impl PaneName {
    /// Every pane, in the dashboard's focus order.
    pub const ALL: [PaneName; 12] = [
        PaneName::Partitions,
        PaneName::Replicas,
        PaneName::Watermarks,
        PaneName::Journal,
        PaneName::Log,
        PaneName::Offsets,
        PaneName::Consumers,
        PaneName::Groups,
        PaneName::Pending,
        PaneName::Events,
        PaneName::Caption,
        PaneName::Clients,
    ];

    /// The name in recordings and layout files.
    pub fn name(self) -> &'static str {
        match self {
            PaneName::Partitions => "partitions",
            PaneName::Replicas => "replicas",
            PaneName::Watermarks => "watermarks",
            PaneName::Log => "log",
            PaneName::Journal => "journal",
            PaneName::Offsets => "offsets",
            PaneName::Consumers => "consumers",
            PaneName::Groups => "groups",
            PaneName::Pending => "pending",
            PaneName::Events => "events",
            PaneName::Caption => "caption",
            PaneName::Clients => "clients",
        }
    }

    /// The pane called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The names, comma-separated (for error messages).
    fn names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }
}

/// `select`: a batch of the partitions pane, or `null` for none.
///
/// Written as the batch itself, `{"partition":"out-0","offset":50}` (its
/// partition's key and base offset), so the selection stays on that batch
/// whatever a client appends elsewhere. Recordings made before read a bare
/// row index (`{"select":23}`): it keeps its old meaning, the 23rd
/// selectable row (all partitions' windows counted together) of the
/// screen shown, and the dashboard turns it into a batch the first time
/// `J`/`K` move from it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Selection {
    /// `null`: nothing selected.
    #[default]
    Clear,
    /// The old form: the index of a selectable batch row, counted as
    /// `J`/`K` count them.
    Row(usize),
    /// A batch, by partition and base offset: what `J`/`K` select.
    Batch(BatchRef),
}

/// A batch by where it is: the partition's key (`out-0`) and its base
/// offset, which no later append changes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BatchRef {
    pub partition: String,
    pub offset: i64,
}

impl Selection {
    /// Whether something is selected.
    pub fn is_some(&self) -> bool {
        *self != Selection::Clear
    }
}

/// `toggle`: a screen switch that flips each time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toggle {
    /// The partitions pane's isolation view (read_committed /
    /// read_uncommitted), the `i` key.
    Isolation,
    /// The help overlay, the `?` key.
    Help,
}

impl Toggle {
    /// Every toggle.
    pub const ALL: [Toggle; 2] = [Toggle::Isolation, Toggle::Help];

    /// The name in recordings.
    pub fn name(self) -> &'static str {
        match self {
            Toggle::Isolation => "isolation",
            Toggle::Help => "help",
        }
    }
}

/// The fields of one `ui` step; an absent field changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UiStep {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<PaneName>,
    /// Absent: the selection stays; `null`: cleared; a batch
    /// (`{"partition":"out-0","offset":50}`) or, in old recordings, a row
    /// number: that one.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_selection"
    )]
    pub select: Option<Selection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toggle: Option<Toggle>,
}

/// The screen a sequence of `ui` steps leaves: what replay shows at a step
/// is the fold of the `ui` steps before it from [`UiScreen::default`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UiScreen {
    /// The focused pane; `None` is the layout's first pane.
    pub focus: Option<PaneName>,
    pub selected: Selection,
    /// The partitions pane's isolation view.
    pub isolation: Isolation,
    pub help: bool,
}

impl UiScreen {
    /// The screen after `step`.
    pub fn apply(mut self, step: &UiStep) -> Self {
        if let Some(focus) = step.focus {
            self.focus = Some(focus);
        }
        if let Some(select) = &step.select {
            self.selected = select.clone();
        }
        match step.toggle {
            Some(Toggle::Isolation) => self.isolation = self.isolation.toggled(),
            Some(Toggle::Help) => self.help = !self.help,
            None => {}
        }
        self
    }
}

/// The message names the value and what was expected; the field's path
/// (`action.ui.focus`) is added by the recording reader
/// (`Action::from_json`'s typed fields).
fn invalid<E: serde::de::Error>(_field: &str, expected: &str, got: &Value) -> E {
    E::custom(format!("{got} is not {expected}"))
}

impl Serialize for PaneName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for PaneName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        v.as_str().and_then(PaneName::from_name).ok_or_else(|| {
            invalid(
                "focus",
                &format!("a pane name (one of {})", PaneName::names()),
                &v,
            )
        })
    }
}

impl Serialize for Toggle {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Toggle {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Toggle::ALL
            .into_iter()
            .find(|t| v.as_str() == Some(t.name()))
            .ok_or_else(|| invalid("toggle", "\"isolation\" or \"help\"", &v))
    }
}

impl Serialize for Selection {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Selection::Clear => s.serialize_none(),
            Selection::Row(r) => s.serialize_u64(*r as u64),
            Selection::Batch(b) => b.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Selection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let expected = "a batch ({\"partition\":\"out-0\",\"offset\":50}), a batch row index (a non-negative integer) or null";
        match &v {
            Value::Null => Ok(Selection::Clear),
            Value::Object(o) => {
                let partition = o.get("partition").and_then(Value::as_str);
                let offset = o.get("offset").and_then(Value::as_i64);
                match (partition, offset) {
                    (Some(p), Some(offset)) if offset >= 0 => Ok(Selection::Batch(BatchRef {
                        partition: p.to_string(),
                        offset,
                    })),
                    _ => Err(invalid("select", expected, &v)),
                }
            }
            other => other
                .as_u64()
                .and_then(|r| usize::try_from(r).ok())
                .map(Selection::Row)
                .ok_or_else(|| invalid("select", expected, other)),
        }
    }
}

/// `select` when present: `null` is [`Selection::Clear`], not an absent
/// field (serde's `Option` would read `null` as `None`).
fn present_selection<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Selection>, D::Error> {
    Selection::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<UiStep, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn fields_read_and_write_as_in_the_spec() {
        for (text, step) in [
            (
                r#"{"focus":"journal"}"#,
                UiStep {
                    focus: Some(PaneName::Journal),
                    ..UiStep::default()
                },
            ),
            (
                r#"{"select":3}"#,
                UiStep {
                    select: Some(Selection::Row(3)),
                    ..UiStep::default()
                },
            ),
            (
                r#"{"select":{"partition":"out-0","offset":50}}"#,
                UiStep {
                    select: Some(Selection::Batch(BatchRef {
                        partition: "out-0".into(),
                        offset: 50,
                    })),
                    ..UiStep::default()
                },
            ),
            (
                r#"{"select":null}"#,
                UiStep {
                    select: Some(Selection::Clear),
                    ..UiStep::default()
                },
            ),
            (
                r#"{"toggle":"isolation"}"#,
                UiStep {
                    toggle: Some(Toggle::Isolation),
                    ..UiStep::default()
                },
            ),
            (
                r#"{"toggle":"help"}"#,
                UiStep {
                    toggle: Some(Toggle::Help),
                    ..UiStep::default()
                },
            ),
            ("{}", UiStep::default()),
        ] {
            assert_eq!(parse(text).unwrap(), step, "{text}");
            assert_eq!(serde_json::to_string(&step).unwrap(), text);
        }
        assert_eq!(
            parse(r#"{"focus":"events","extra":1}"#).unwrap().focus,
            Some(PaneName::Events),
            "unknown fields are ignored (SPEC §4)"
        );
    }

    #[test]
    fn bad_values_name_the_value_and_the_valid_ones() {
        let e = parse(r#"{"focus":"jornal"}"#).unwrap_err().to_string();
        assert!(
            e.starts_with("\"jornal\" is not a pane name") && e.contains("journal"),
            "{e}"
        );
        let e = parse(r#"{"focus":3}"#).unwrap_err().to_string();
        assert!(e.starts_with("3 is not"), "{e}");
        for bad in [
            "-1",
            "1.5",
            "\"2\"",
            "true",
            r#"{"partition":"out-0"}"#,
            r#"{"partition":"out-0","offset":-1}"#,
            r#"{"partition":3,"offset":1}"#,
        ] {
            let e = parse(&format!(r#"{{"select":{bad}}}"#))
                .unwrap_err()
                .to_string();
            // The value as serde_json prints it (an object's keys sorted).
            let got = serde_json::from_str::<Value>(bad).unwrap().to_string();
            assert!(e.starts_with(&format!("{got} is not a batch (")), "{e}");
            assert!(e.contains("a batch row index"), "{e}");
        }
        let e = parse(r#"{"toggle":"colour"}"#).unwrap_err().to_string();
        assert!(
            e.starts_with("\"colour\" is not \"isolation\" or \"help\""),
            "{e}"
        );
    }

    #[test]
    fn the_screen_is_the_fold_of_the_steps() {
        let steps: Vec<UiStep> = [
            r#"{"focus":"journal"}"#,
            r#"{"select":2,"toggle":"isolation"}"#,
            r#"{"toggle":"help"}"#,
            r#"{"select":null,"toggle":"isolation"}"#,
        ]
        .iter()
        .map(|t| parse(t).unwrap())
        .collect();
        let screens: Vec<UiScreen> = steps
            .iter()
            .scan(UiScreen::default(), |s, step| {
                *s = s.clone().apply(step);
                Some(s.clone())
            })
            .collect();
        assert_eq!(screens[0].focus, Some(PaneName::Journal));
        assert_eq!(
            (&screens[1].selected, screens[1].isolation),
            (&Selection::Row(2), Isolation::ReadUncommitted)
        );
        assert!(screens[2].help && screens[2].selected == Selection::Row(2));
        assert_eq!(
            screens[3],
            UiScreen {
                focus: Some(PaneName::Journal),
                selected: Selection::Clear,
                isolation: Isolation::ReadCommitted,
                help: true,
            }
        );
    }
}
