//! Layouts (SPEC §6): a JSON file names a tree of splits and panes.
//!
//! ```json
//! {"layout": 1, "name": "transactions", "min_size": {"cols": 80, "rows": 24},
//!  "root": {"split": "vertical", "children": [
//!     {"pane": "journal", "size": {"fill": 1}},
//!     {"pane": "caption", "size": {"length": 4}}]}}
//! ```
//!
//! A node is either a pane (`{"pane": NAME, "size": SIZE}`) or a split
//! (`{"split": "horizontal"|"vertical", "size": SIZE, "children": [NODE, …]}`).
//! "horizontal" puts children side by side, "vertical" stacks them. SIZE is
//! one of `{"percent": P}`, `{"length": N}`, `{"min": N}`, `{"fill": W}`
//! (default `{"fill": 1}`). Unknown keys are ignored; everything else that is
//! wrong is an error naming the file and the JSON path of the bad value
//! (see `docs/layouts.md`).
//!
//! The built-in layouts are embedded in the binary, so `--layout crash`
//! works from any directory; a file `layouts/NAME.json` in the current
//! directory takes precedence over a built-in of the same name.

use std::fmt;
use std::path::{Path, PathBuf};

use ratatui::layout::{Constraint, Layout as RatatuiLayout, Rect};
use serde_json::{Map, Value};

use crate::ui::panes::PaneId;

/// The layout file format version this build reads.
pub const LAYOUT_VERSION: u64 = 1;

/// The names of the built-in layouts.
pub const BUILTIN_NAMES: [&str; 6] = [
    "default",
    "transactions",
    "replication",
    "crash",
    "clients",
    "groups",
];

const BUILTIN_FILES: [(&str, &str); 6] = [
    ("default", include_str!("../../layouts/default.json")),
    (
        "transactions",
        include_str!("../../layouts/transactions.json"),
    ),
    (
        "replication",
        include_str!("../../layouts/replication.json"),
    ),
    ("crash", include_str!("../../layouts/crash.json")),
    ("clients", include_str!("../../layouts/clients.json")),
    ("groups", include_str!("../../layouts/groups.json")),
];

/// Minimum size used when a file gives no `min_size`.
const DEFAULT_MIN_COLS: u16 = 80;
const DEFAULT_MIN_ROWS: u16 = 24;

/// A parsed layout: a tree of splits whose leaves are panes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub name: String,
    /// The smallest area (columns) the layout is meant for.
    pub min_cols: u16,
    /// The smallest area (rows) the layout is meant for.
    pub min_rows: u16,
    root: Node,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Pane {
        id: PaneId,
        size: Size,
    },
    Split {
        direction: SplitDirection,
        size: Size,
        children: Vec<Node>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SplitDirection {
    /// Children side by side (columns).
    Horizontal,
    /// Children stacked (rows).
    Vertical,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Size {
    Percent(u16),
    Length(u16),
    Min(u16),
    Fill(u16),
}

impl Size {
    fn constraint(self) -> Constraint {
        match self {
            Size::Percent(p) => Constraint::Percentage(p),
            Size::Length(n) => Constraint::Length(n),
            Size::Min(n) => Constraint::Min(n),
            Size::Fill(w) => Constraint::Fill(w),
        }
    }
}

impl Node {
    fn size(&self) -> Size {
        match self {
            Node::Pane { size, .. } | Node::Split { size, .. } => *size,
        }
    }

    fn collect_panes(&self, out: &mut Vec<PaneId>) {
        match self {
            Node::Pane { id, .. } => out.push(*id),
            Node::Split { children, .. } => {
                for child in children {
                    child.collect_panes(out);
                }
            }
        }
    }

    fn collect_areas(&self, area: Rect, out: &mut Vec<(PaneId, Rect)>) {
        match self {
            Node::Pane { id, .. } => out.push((*id, area)),
            Node::Split {
                direction,
                children,
                ..
            } => {
                let constraints = children.iter().map(|c| c.size().constraint());
                let split = match direction {
                    SplitDirection::Horizontal => RatatuiLayout::horizontal(constraints),
                    SplitDirection::Vertical => RatatuiLayout::vertical(constraints),
                };
                let rects = split.split(area);
                for (child, rect) in children.iter().zip(rects.iter()) {
                    child.collect_areas(*rect, out);
                }
            }
        }
    }
}

impl Layout {
    /// Each pane of the layout with its rectangle inside `area`, in focus
    /// (tree) order. A rectangle may be empty when `area` is very small.
    pub fn areas(&self, area: Rect) -> Vec<(PaneId, Rect)> {
        let mut out = Vec::new();
        self.root.collect_areas(area, &mut out);
        out
    }

    /// The panes of the layout in focus order (tree order, depth first).
    pub fn panes(&self) -> Vec<PaneId> {
        let mut out = Vec::new();
        self.root.collect_panes(&mut out);
        out
    }

    /// Whether `area` is at least the layout's minimum size.
    pub fn fits(&self, area: Rect) -> bool {
        area.width >= self.min_cols && area.height >= self.min_rows
    }
}

/// Why a layout could not be loaded. Displays as one line naming the file
/// and the line/column or JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
    /// The file could not be read.
    Io { file: String, message: String },
    /// The file is not valid JSON.
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// The JSON is valid but does not describe a layout; `path` is the JSON
    /// path of the offending value, e.g. `$.root.children[1].pane`.
    Invalid {
        file: String,
        path: String,
        message: String,
    },
    /// A layout NAME with neither a file nor a built-in layout.
    UnknownLayout { name: String },
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::Io { file, message } => {
                write!(f, "{file}: cannot read layout file: {message}")
            }
            LayoutError::Syntax {
                file,
                line,
                column,
                message,
            } => write!(f, "{file}:{line}:{column}: {message}"),
            LayoutError::Invalid {
                file,
                path,
                message,
            } => write!(f, "{file}: at {path}: {message}"),
            LayoutError::UnknownLayout { name } => write!(
                f,
                "unknown layout {name:?}: no file layouts/{}.json and no built-in layout \
                 of that name (built in: {})",
                name.escape_debug(),
                BUILTIN_NAMES.join(", ")
            ),
        }
    }
}

impl std::error::Error for LayoutError {}

impl From<LayoutError> for crate::session::SessionError {
    fn from(e: LayoutError) -> Self {
        Self::Layout(Box::new(e))
    }
}

/// The built-in default layout (the embedded `layouts/default.json`).
pub fn builtin_default() -> Layout {
    builtin("default").expect("the built-in default layout is valid")
}

/// The built-in layout called `name`, if there is one.
pub fn builtin(name: &str) -> Option<Layout> {
    BUILTIN_FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| {
            parse(&format!("layouts/{n}.json"), text)
                .unwrap_or_else(|e| panic!("built-in layout is invalid: {e}"))
        })
}

/// Loads a layout from `spec`: a PATH (it contains a `/` or ends with
/// `.json`) or a NAME, looked up as `layouts/NAME.json` in the current
/// directory and then among the built-in layouts.
pub fn load(spec: &str) -> Result<Layout, LayoutError> {
    load_in(Path::new("."), spec)
}

/// [`load`] with NAMEs looked up under `base` instead of the current directory.
fn load_in(base: &Path, spec: &str) -> Result<Layout, LayoutError> {
    if is_path(spec) {
        return parse_file(Path::new(spec), spec);
    }
    let relative = format!("layouts/{spec}.json");
    let file = if base == Path::new(".") {
        PathBuf::from(&relative)
    } else {
        base.join(&relative)
    };
    if !spec.is_empty() && file.is_file() {
        return parse_file(&file, &file.display().to_string());
    }
    if let Some(layout) = builtin(spec) {
        return Ok(layout);
    }
    Err(LayoutError::UnknownLayout {
        name: spec.to_string(),
    })
}

fn is_path(spec: &str) -> bool {
    spec.contains('/') || spec.contains(std::path::MAIN_SEPARATOR) || spec.ends_with(".json")
}

fn parse_file(path: &Path, display: &str) -> Result<Layout, LayoutError> {
    let text = std::fs::read_to_string(path).map_err(|e| LayoutError::Io {
        file: display.to_string(),
        message: e.to_string(),
    })?;
    parse(display, &text)
}

/// Parses the text of a layout file; `file` names it in error messages.
pub fn parse(file: &str, text: &str) -> Result<Layout, LayoutError> {
    let value: Value = serde_json::from_str(text).map_err(|e| syntax_error(file, &e))?;
    Parser {
        file,
        seen: Vec::new(),
    }
    .layout(&value)
}

fn syntax_error(file: &str, e: &serde_json::Error) -> LayoutError {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
    LayoutError::Syntax {
        file: file.to_string(),
        line: e.line(),
        column: e.column(),
        message,
    }
}

/// What kind of JSON value `v` is, for "expected X, found Y" messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

const SIZE_KEYS: [&str; 4] = ["percent", "length", "min", "fill"];

/// Walks a [`Value`], keeping the JSON path of each value for errors.
struct Parser<'a> {
    file: &'a str,
    /// Panes seen so far, with the path where each was named.
    seen: Vec<(PaneId, String)>,
}

impl Parser<'_> {
    fn err(&self, path: &str, message: impl Into<String>) -> LayoutError {
        LayoutError::Invalid {
            file: self.file.to_string(),
            path: path.to_string(),
            message: message.into(),
        }
    }

    fn object<'v>(&self, v: &'v Value, path: &str) -> Result<&'v Map<String, Value>, LayoutError> {
        v.as_object()
            .ok_or_else(|| self.err(path, format!("expected an object, found {}", kind(v))))
    }

    fn uint(&self, v: &Value, path: &str) -> Result<u16, LayoutError> {
        v.as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .ok_or_else(|| {
                let found = match v {
                    Value::Number(n) => n.to_string(),
                    other => kind(other).to_string(),
                };
                self.err(
                    path,
                    format!("expected a whole number from 0 to 65535, found {found}"),
                )
            })
    }

    fn layout(&mut self, v: &Value) -> Result<Layout, LayoutError> {
        let top = self.object(v, "$")?;

        match top.get("layout") {
            None => {
                return Err(self.err(
                    "$.layout",
                    format!("missing layout version (add \"layout\": {LAYOUT_VERSION})"),
                ));
            }
            Some(Value::Number(n)) if n.as_u64() == Some(LAYOUT_VERSION) => {}
            Some(Value::Number(n)) => {
                return Err(self.err(
                    "$.layout",
                    format!(
                        "unsupported layout version {n} (this mk-tui reads version \
                         {LAYOUT_VERSION})"
                    ),
                ));
            }
            Some(other) => {
                return Err(self.err(
                    "$.layout",
                    format!(
                        "expected the version number {LAYOUT_VERSION}, found {}",
                        kind(other)
                    ),
                ));
            }
        }

        let name = match top.get("name") {
            None => stem(self.file),
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) => return Err(self.err("$.name", "the name is empty")),
            Some(other) => {
                return Err(self.err(
                    "$.name",
                    format!("expected a string, found {}", kind(other)),
                ));
            }
        };

        let (mut min_cols, mut min_rows) = (DEFAULT_MIN_COLS, DEFAULT_MIN_ROWS);
        if let Some(ms) = top.get("min_size") {
            let ms = self.object(ms, "$.min_size")?;
            if let Some(c) = ms.get("cols") {
                min_cols = self.uint(c, "$.min_size.cols")?;
            }
            if let Some(r) = ms.get("rows") {
                min_rows = self.uint(r, "$.min_size.rows")?;
            }
        }

        let root = match top.get("root") {
            Some(r) => self.node(r, "$.root")?,
            None => {
                return Err(self.err(
                    "$.root",
                    "missing the root node (add \"root\": {\"pane\": …} or {\"split\": …})",
                ));
            }
        };

        Ok(Layout {
            name,
            min_cols,
            min_rows,
            root,
        })
    }

    fn node(&mut self, v: &Value, path: &str) -> Result<Node, LayoutError> {
        let obj = self.object(v, path)?;
        let size = match obj.get("size") {
            None => Size::Fill(1),
            Some(s) => self.size(s, &format!("{path}.size"))?,
        };
        match (obj.get("pane"), obj.get("split")) {
            (Some(_), Some(_)) => {
                Err(self.err(path, "a node has either \"pane\" or \"split\", not both"))
            }
            (None, None) => Err(self.err(
                path,
                "expected a node: {\"pane\": NAME} or {\"split\": \"horizontal\"|\"vertical\", \
                 \"children\": [...]}",
            )),
            (Some(pane), None) => {
                if obj.contains_key("children") {
                    return Err(self.err(
                        &format!("{path}.children"),
                        "a pane cannot have children (use a split)",
                    ));
                }
                let id = self.pane(pane, &format!("{path}.pane"))?;
                Ok(Node::Pane { id, size })
            }
            (None, Some(split)) => {
                let direction = self.direction(split, &format!("{path}.split"))?;
                let children_path = format!("{path}.children");
                let children = match obj.get("children") {
                    None => {
                        return Err(self.err(&children_path, "a split needs a \"children\" list"));
                    }
                    Some(Value::Array(items)) => items,
                    Some(other) => {
                        return Err(self.err(
                            &children_path,
                            format!("expected an array of nodes, found {}", kind(other)),
                        ));
                    }
                };
                if children.is_empty() {
                    return Err(self.err(&children_path, "a split needs at least one child"));
                }
                let children = children
                    .iter()
                    .enumerate()
                    .map(|(i, c)| self.node(c, &format!("{children_path}[{i}]")))
                    .collect::<Result<Vec<_>, _>>()?;
                let percent: u32 = children
                    .iter()
                    .map(|c| match c.size() {
                        Size::Percent(p) => u32::from(p),
                        _ => 0,
                    })
                    .sum();
                if percent > 100 {
                    return Err(self.err(
                        &children_path,
                        format!("the children's percentages add up to {percent} (at most 100)"),
                    ));
                }
                Ok(Node::Split {
                    direction,
                    size,
                    children,
                })
            }
        }
    }

    fn pane(&mut self, v: &Value, path: &str) -> Result<PaneId, LayoutError> {
        let name = v.as_str().ok_or_else(|| {
            self.err(
                path,
                format!("expected a pane name (a string), found {}", kind(v)),
            )
        })?;
        let id = PaneId::from_name(name).ok_or_else(|| {
            let valid: Vec<&str> = PaneId::ALL.iter().map(|p| p.name()).collect();
            self.err(
                path,
                format!("unknown pane {name:?}; valid panes: {}", valid.join(", ")),
            )
        })?;
        if let Some((_, first)) = self.seen.iter().find(|(p, _)| *p == id) {
            return Err(self.err(
                path,
                format!(
                    "duplicate pane {name:?} (already placed at {first}); a pane may appear \
                     only once"
                ),
            ));
        }
        self.seen.push((id, path.to_string()));
        Ok(id)
    }

    fn direction(&self, v: &Value, path: &str) -> Result<SplitDirection, LayoutError> {
        match v.as_str() {
            Some("horizontal") => Ok(SplitDirection::Horizontal),
            Some("vertical") => Ok(SplitDirection::Vertical),
            Some(other) => Err(self.err(
                path,
                format!(
                    "unknown split direction {other:?}; expected \"horizontal\" (side by side) \
                     or \"vertical\" (stacked)"
                ),
            )),
            None => Err(self.err(
                path,
                format!("expected \"horizontal\" or \"vertical\", found {}", kind(v)),
            )),
        }
    }

    fn size(&self, v: &Value, path: &str) -> Result<Size, LayoutError> {
        let obj = self.object(v, path)?;
        let present: Vec<&str> = SIZE_KEYS
            .iter()
            .copied()
            .filter(|k| obj.contains_key(*k))
            .collect();
        let key = match present.as_slice() {
            [key] => *key,
            [] => {
                return Err(self.err(
                    path,
                    "expected one of {\"percent\": P}, {\"length\": N}, {\"min\": N}, \
                     {\"fill\": W}",
                ));
            }
            several => {
                return Err(self.err(
                    path,
                    format!(
                        "give only one of percent, length, min, fill (found {})",
                        several.join(" and ")
                    ),
                ));
            }
        };
        let value_path = format!("{path}.{key}");
        let n = self.uint(&obj[key], &value_path)?;
        Ok(match key {
            "percent" if n > 100 => {
                return Err(self.err(
                    &value_path,
                    format!("a percentage must be from 0 to 100, found {n}"),
                ));
            }
            "percent" => Size::Percent(n),
            "length" => Size::Length(n),
            "min" => Size::Min(n),
            _ => Size::Fill(n),
        })
    }
}

/// The file name without directories or the `.json` extension.
fn stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(file)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_builtins() -> Vec<Layout> {
        BUILTIN_NAMES
            .iter()
            .map(|n| builtin(n).expect("built-in exists"))
            .collect()
    }

    fn error(text: &str) -> String {
        parse("bad.json", text)
            .expect_err("the layout should be rejected")
            .to_string()
    }

    /// A minimal valid layout with `root` as its root node.
    fn with_root(root: &str) -> String {
        format!(r#"{{"layout": 1, "name": "t", "root": {root}}}"#)
    }

    #[test]
    fn every_builtin_parses_and_is_named_after_its_file() {
        for name in BUILTIN_NAMES {
            let layout = builtin(name).expect("built-in exists");
            assert_eq!(layout.name, name);
            assert_eq!((layout.min_cols, layout.min_rows), (80, 24));
            assert!(!layout.panes().is_empty());
        }
    }

    #[test]
    fn builtin_areas_do_not_overlap_and_stay_inside() {
        for layout in all_builtins() {
            for (w, h) in [(80, 24), (200, 60)] {
                let area = Rect::new(0, 0, w, h);
                let areas = layout.areas(area);
                assert_eq!(areas.len(), layout.panes().len(), "{}", layout.name);
                let visible: Vec<_> = areas.iter().filter(|(_, r)| !r.is_empty()).collect();
                for (pane, rect) in &visible {
                    assert_eq!(
                        area.intersection(*rect),
                        *rect,
                        "{} {pane:?} {rect:?} outside {area:?}",
                        layout.name
                    );
                }
                for (i, (a, ra)) in visible.iter().enumerate() {
                    for (b, rb) in &visible[i + 1..] {
                        assert!(
                            !ra.intersects(*rb),
                            "{} at {w}x{h}: {a:?} {ra:?} overlaps {b:?} {rb:?}",
                            layout.name
                        );
                    }
                }
                let covered: u32 = visible.iter().map(|(_, r)| r.area()).sum();
                assert_eq!(
                    covered,
                    area.area(),
                    "{} leaves gaps at {w}x{h}",
                    layout.name
                );
            }
        }
    }

    #[test]
    fn builtin_panes_are_readable_at_minimum_size() {
        for layout in all_builtins() {
            let area = Rect::new(0, 0, layout.min_cols, layout.min_rows);
            assert!(layout.fits(area));
            // The dashboard gives the layout the terminal minus a title row
            // and a key bar.
            let body = Rect::new(0, 1, area.width, area.height - 2);
            for (pane, rect) in layout.areas(body) {
                assert!(
                    rect.width >= 20 && rect.height >= 3,
                    "{}: {pane:?} gets only {}x{}",
                    layout.name,
                    rect.width,
                    rect.height
                );
            }
        }
    }

    #[test]
    fn builtin_caption_is_a_short_bottom_strip() {
        for layout in all_builtins() {
            let area = Rect::new(0, 0, 200, 60);
            let areas = layout.areas(area);
            let (pane, rect) = areas.last().copied().expect("panes");
            assert_eq!(pane, PaneId::Caption, "{}", layout.name);
            assert_eq!(
                rect,
                Rect::new(0, 56, 200, 4),
                "two lines of caption: {}",
                layout.name
            );
        }
    }

    #[test]
    fn builtin_layouts_show_their_panes() {
        use PaneId::*;
        let expect: [(&str, &[PaneId]); 6] = [
            (
                "default",
                &[
                    Partitions, Replicas, Journal, Log, Offsets, Consumers, Pending, Events,
                    Caption,
                ],
            ),
            (
                "transactions",
                &[
                    Partitions, Journal, Log, Consumers, Offsets, Pending, Caption,
                ],
            ),
            (
                "replication",
                &[Log, Replicas, Partitions, Pending, Events, Caption],
            ),
            (
                "crash",
                &[Journal, Partitions, Log, Pending, Events, Caption],
            ),
            (
                "clients",
                &[Log, Clients, Partitions, Pending, Events, Caption],
            ),
            ("groups", &[Groups, Log, Partitions, Events, Caption]),
        ];
        for (name, panes) in expect {
            let mut got = builtin(name).expect("built-in").panes();
            let mut want = panes.to_vec();
            got.sort();
            want.sort();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn default_contains_every_pane_but_the_watermarks_in_focus_order() {
        // The log pane's scale shows log start, LSO, HW and each LEO on
        // the cells themselves: the watermarks ruler gives way to it. The
        // clients pane is the `clients` layout's (`--listen`).
        let layout = builtin_default();
        assert_eq!(layout.name, "default");
        let mut all = PaneId::ALL.to_vec();
        all.retain(|p| !matches!(p, PaneId::Watermarks | PaneId::Clients | PaneId::Groups));
        assert_eq!(layout.panes(), all);
    }

    #[test]
    fn the_log_pane_is_in_every_builtin_layout() {
        // Every built-in layout teaches a chapter: each shows the log, with
        // HW against LSO under its cells (issue 13, item 1).
        for layout in all_builtins() {
            assert!(layout.panes().contains(&PaneId::Log), "{}", layout.name);
        }
    }

    #[test]
    fn default_file_on_disk_equals_builtin() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("layouts/default.json");
        let text = std::fs::read_to_string(path).expect("layouts/default.json");
        assert_eq!(
            parse("layouts/default.json", &text).expect("valid"),
            builtin_default()
        );
    }

    #[test]
    fn areas_follow_the_split_directions_and_sizes() {
        let layout = parse(
            "t.json",
            &with_root(
                r#"{"split": "horizontal", "children": [
                    {"pane": "journal", "size": {"length": 10}},
                    {"split": "vertical", "children": [
                        {"pane": "events", "size": {"percent": 50}},
                        {"pane": "pending", "size": {"min": 2}}]}]}"#,
            ),
        )
        .expect("valid");
        let areas = layout.areas(Rect::new(0, 0, 40, 20));
        assert_eq!(
            areas,
            vec![
                (PaneId::Journal, Rect::new(0, 0, 10, 20)),
                (PaneId::Events, Rect::new(10, 0, 30, 10)),
                (PaneId::Pending, Rect::new(10, 10, 30, 10)),
            ]
        );
        assert_eq!(
            layout.panes(),
            vec![PaneId::Journal, PaneId::Events, PaneId::Pending]
        );
    }

    #[test]
    fn single_pane_root_and_defaults() {
        let layout =
            parse("solo.json", r#"{"layout": 1, "root": {"pane": "events"}}"#).expect("valid");
        assert_eq!(layout.name, "solo");
        assert_eq!((layout.min_cols, layout.min_rows), (80, 24));
        let area = Rect::new(0, 0, 50, 10);
        assert_eq!(layout.areas(area), vec![(PaneId::Events, area)]);
    }

    #[test]
    fn unknown_keys_are_ignored() {
        let text = r#"{"layout": 1, "comment": "hi", "root": {"pane": "events", "note": 3,
                      "size": {"fill": 2, "why": "x"}}}"#;
        assert!(parse("x.json", text).is_ok());
    }

    #[test]
    fn fits_compares_with_min_size() {
        let layout = builtin_default();
        assert!(!layout.fits(Rect::new(0, 0, 40, 10)));
        assert!(!layout.fits(Rect::new(0, 0, 79, 60)));
        assert!(!layout.fits(Rect::new(0, 0, 200, 23)));
        assert!(layout.fits(Rect::new(0, 0, 80, 24)));
        assert!(layout.fits(Rect::new(0, 0, 200, 60)));
    }

    #[test]
    fn tiny_area_does_not_panic() {
        for layout in all_builtins() {
            for (w, h) in [(0, 0), (1, 1), (3, 2), (40, 10)] {
                let areas = layout.areas(Rect::new(5, 5, w, h));
                assert_eq!(areas.len(), layout.panes().len());
            }
        }
    }

    #[test]
    fn error_bad_json_names_line_and_column() {
        let msg = error("{\"layout\": 1,\n  \"root\": {\"pane\": \"events\",}\n}");
        assert_eq!(msg, "bad.json:2:29: trailing comma");
        let msg = error("{\"layout\": 1,\n\n   \"root\" ");
        assert!(msg.starts_with("bad.json:3:"), "{msg}");
        assert!(!msg.contains('\n'));
    }

    #[test]
    fn error_unknown_pane_names_json_path_and_valid_panes() {
        let msg = error(&with_root(
            r#"{"split": "vertical", "children": [{"pane": "events"}, {"pane": "jurnal"}]}"#,
        ));
        assert_eq!(
            msg,
            "bad.json: at $.root.children[1].pane: unknown pane \"jurnal\"; valid panes: \
             partitions, replicas, watermarks, journal, log, offsets, consumers, groups, \
             pending, events, caption, clients"
        );
    }

    #[test]
    fn error_duplicate_pane() {
        let msg = error(&with_root(
            r#"{"split": "vertical", "children": [
                {"pane": "journal"},
                {"split": "horizontal", "children": [{"pane": "events"}, {"pane": "journal"}]}]}"#,
        ));
        assert_eq!(
            msg,
            "bad.json: at $.root.children[1].children[1].pane: duplicate pane \"journal\" \
             (already placed at $.root.children[0].pane); a pane may appear only once"
        );
    }

    #[test]
    fn error_wrong_or_missing_version() {
        let msg = error(r#"{"layout": 2, "root": {"pane": "events"}}"#);
        assert_eq!(
            msg,
            "bad.json: at $.layout: unsupported layout version 2 (this mk-tui reads version 1)"
        );
        let msg = error(r#"{"root": {"pane": "events"}}"#);
        assert!(
            msg.starts_with("bad.json: at $.layout: missing layout version"),
            "{msg}"
        );
        let msg = error(r#"{"layout": "1", "root": {"pane": "events"}}"#);
        assert!(msg.contains("found a string"), "{msg}");
    }

    #[test]
    fn error_bad_split_direction() {
        let msg = error(&with_root(
            r#"{"split": "diagonal", "children": [{"pane": "events"}]}"#,
        ));
        assert_eq!(
            msg,
            "bad.json: at $.root.split: unknown split direction \"diagonal\"; expected \
             \"horizontal\" (side by side) or \"vertical\" (stacked)"
        );
    }

    #[test]
    fn error_empty_or_missing_children() {
        let msg = error(&with_root(r#"{"split": "vertical", "children": []}"#));
        assert_eq!(
            msg,
            "bad.json: at $.root.children: a split needs at least one child"
        );
        let msg = error(&with_root(r#"{"split": "vertical"}"#));
        assert!(msg.starts_with("bad.json: at $.root.children: "), "{msg}");
        let msg = error(&with_root(r#"{"split": "vertical", "children": {}}"#));
        assert!(
            msg.contains("expected an array of nodes, found an object"),
            "{msg}"
        );
    }

    #[test]
    fn error_bad_sizes() {
        let msg = error(&with_root(
            r#"{"split": "vertical", "children": [{"pane": "events", "size": {"percent": 140}}]}"#,
        ));
        assert_eq!(
            msg,
            "bad.json: at $.root.children[0].size.percent: a percentage must be from 0 to 100, \
             found 140"
        );
        let msg = error(&with_root(
            r#"{"split": "vertical", "children": [
                {"pane": "events", "size": {"percent": 60}},
                {"pane": "journal", "size": {"percent": 60}}]}"#,
        ));
        assert!(msg.contains("$.root.children: the children's percentages add up to 120"));
        let msg = error(&with_root(r#"{"pane": "events", "size": {"length": -1}}"#));
        assert!(msg.starts_with("bad.json: at $.root.size.length: expected a whole number"));
        let msg = error(&with_root(
            r#"{"pane": "events", "size": {"length": 1, "min": 1}}"#,
        ));
        assert!(msg.contains("found length and min"), "{msg}");
        let msg = error(&with_root(r#"{"pane": "events", "size": {"percnt": 10}}"#));
        assert!(
            msg.starts_with("bad.json: at $.root.size: expected one of"),
            "{msg}"
        );
    }

    #[test]
    fn error_bad_nodes() {
        let msg = error(&with_root(r#"{"pane": "events", "split": "vertical"}"#));
        assert!(msg.starts_with("bad.json: at $.root: "), "{msg}");
        let msg = error(&with_root(r#"{"size": {"fill": 1}}"#));
        assert!(
            msg.starts_with("bad.json: at $.root: expected a node"),
            "{msg}"
        );
        let msg = error(&with_root(r#"{"pane": 3}"#));
        assert!(msg.contains("$.root.pane: expected a pane name"), "{msg}");
        let msg = error(&with_root(r#"{"pane": "events", "children": []}"#));
        assert!(
            msg.contains("$.root.children: a pane cannot have children"),
            "{msg}"
        );
        let msg = error(r#"{"layout": 1}"#);
        assert!(msg.starts_with("bad.json: at $.root: missing"), "{msg}");
        let msg = error("[1, 2]");
        assert_eq!(msg, "bad.json: at $: expected an object, found an array");
        let msg = error(r#"{"layout": 1, "min_size": {"cols": 80.5}, "root": {"pane": "events"}}"#);
        assert!(
            msg.contains("$.min_size.cols: expected a whole number"),
            "{msg}"
        );
    }

    #[test]
    fn load_path_of_a_temp_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mine.json");
        std::fs::write(
            &path,
            r#"{"layout": 1, "name": "mine", "min_size": {"cols": 60, "rows": 20},
               "root": {"split": "horizontal", "children": [{"pane": "journal"}, {"pane": "events"}]}}"#,
        )
        .expect("write");
        let layout = load(path.to_str().expect("utf-8 path")).expect("loads");
        assert_eq!(layout.name, "mine");
        assert_eq!((layout.min_cols, layout.min_rows), (60, 20));
        assert_eq!(layout.panes(), vec![PaneId::Journal, PaneId::Events]);
    }

    #[test]
    fn load_path_errors_name_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("broken.json");
        std::fs::write(&path, r#"{"layout": 1, "root": {"pane": "jurnal"}}"#).expect("write");
        let spec = path.to_str().expect("utf-8 path");
        let msg = load(spec).expect_err("invalid").to_string();
        assert!(
            msg.starts_with(&format!("{spec}: at $.root.pane: unknown pane")),
            "{msg}"
        );

        let missing = dir.path().join("missing.json");
        let spec = missing.to_str().expect("utf-8 path");
        let msg = load(spec).expect_err("missing").to_string();
        assert!(
            msg.starts_with(&format!("{spec}: cannot read layout file: ")),
            "{msg}"
        );
    }

    #[test]
    fn load_builtin_names_without_files_on_disk() {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in BUILTIN_NAMES {
            let layout = load_in(dir.path(), name).expect("built-in");
            assert_eq!(layout, builtin(name).expect("built-in"));
        }
    }

    #[test]
    fn load_name_prefers_file_in_layouts_dir() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("layouts")).expect("mkdir");
        std::fs::write(
            dir.path().join("layouts/crash.json"),
            r#"{"layout": 1, "name": "my-crash", "root": {"pane": "journal"}}"#,
        )
        .expect("write");
        std::fs::write(
            dir.path().join("layouts/extra.json"),
            r#"{"layout": 1, "root": {"pane": "events"}}"#,
        )
        .expect("write");
        assert_eq!(load_in(dir.path(), "crash").expect("file").name, "my-crash");
        assert_eq!(load_in(dir.path(), "extra").expect("file").name, "extra");
    }

    #[test]
    fn load_unknown_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let msg = load_in(dir.path(), "x").expect_err("unknown").to_string();
        assert_eq!(
            msg,
            "unknown layout \"x\": no file layouts/x.json and no built-in layout of that name \
             (built in: default, transactions, replication, crash, clients, groups)"
        );
        assert!(load("").is_err());
    }

    #[test]
    fn load_builtin_name_from_crate_dir() {
        // Tests run in the crate root, where layouts/*.json exist.
        for name in BUILTIN_NAMES {
            assert_eq!(load(name).expect("loads").name, name);
        }
    }
}
