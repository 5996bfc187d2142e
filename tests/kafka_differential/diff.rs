//! Where two scenario documents differ: the paths at which Apache Kafka's
//! and `mk-tui serve`'s observables part, each with both values, and the
//! known-difference patterns that must match them.

use serde_json::Value;

/// One place where the two documents differ: a dotted path (array
/// indices as segments) and the value on each side (`None`: absent).
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub path: String,
    pub kafka: Option<Value>,
    pub serve: Option<Value>,
}

/// Walks both documents together. Objects are compared key by key and
/// arrays index by index; where a subtree exists on one side only, or the
/// two sides are of different kinds, the whole subtree is one difference,
/// so a refused record is one line, not one per field.
pub fn differences(kafka: &Value, serve: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    walk(String::new(), Some(kafka), Some(serve), &mut out);
    out
}

fn join(path: &str, seg: &str) -> String {
    if path.is_empty() {
        seg.to_string()
    } else {
        format!("{path}.{seg}")
    }
}

fn walk(path: String, k: Option<&Value>, s: Option<&Value>, out: &mut Vec<Difference>) {
    match (k, s) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                walk(join(&path, key), a.get(key), b.get(key), out);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            for i in 0..a.len().max(b.len()) {
                walk(join(&path, &i.to_string()), a.get(i), b.get(i), out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(Difference {
            path,
            kafka: a.cloned(),
            serve: b.cloned(),
        }),
    }
}

/// `pattern` matches `path` segment by segment: `*` matches any one
/// segment (an array index, an isolation level), `**` any run of one or
/// more segments, so `**.timestamp` is every record's timestamp.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let p: Vec<&str> = pattern.split('.').collect();
    let q: Vec<&str> = path.split('.').collect();
    segments_match(&p, &q)
}

fn segments_match(p: &[&str], q: &[&str]) -> bool {
    match (p.first(), q.first()) {
        (None, None) => true,
        (Some(&"**"), Some(_)) => (1..=q.len()).any(|n| segments_match(&p[1..], &q[n..])),
        (Some(a), Some(b)) if *a == "*" || a == b => segments_match(&p[1..], &q[1..]),
        _ => false,
    }
}

/// A scenario name or a prefix of names ending in `*`.
pub fn scenario_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// A table value: JSON text, or `absent` for a side that lacks the path.
pub fn parse_side(text: &str) -> Option<Value> {
    if text == "absent" {
        return None;
    }
    Some(
        serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("known difference value {text:?}: {e}")),
    )
}

pub fn show(v: &Option<Value>) -> String {
    v.as_ref().map_or("absent".into(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_subtree_on_one_side_is_one_difference_and_equal_leaves_none() {
        let k = json!({"offsets": [0], "read": [{"offset": 0, "value": "x"}], "hw": 1});
        let s = json!({"offsets": [{"error": "INVALID_RECORD"}], "read": [], "hw": 1});
        let d = differences(&k, &s);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].path, "offsets.0");
        assert_eq!(d[0].serve, Some(json!({"error": "INVALID_RECORD"})));
        assert_eq!(d[1].path, "read.0");
        assert_eq!(d[1].serve, None);
    }

    #[test]
    fn a_star_matches_one_segment() {
        assert!(path_matches(
            "read.*.0.timestamp",
            "read.read_committed.0.timestamp"
        ));
        assert!(!path_matches(
            "read.*.timestamp",
            "read.read_committed.0.timestamp"
        ));
        assert!(!path_matches("read.*", "ends.hw"));
    }

    #[test]
    fn a_double_star_matches_one_or_more_segments() {
        assert!(path_matches(
            "**.timestamp",
            "read.read_committed.0.timestamp"
        ));
        assert!(path_matches("**.timestamp", "read.timestamp"));
        assert!(!path_matches("**.timestamp", "timestamp"));
        assert!(!path_matches("**.timestamp", "read.0.value"));
        assert!(scenario_matches("compression_*", "compression_lz4"));
        assert!(!scenario_matches("compression_*", "headers"));
        assert!(scenario_matches("headers", "headers"));
    }
}
