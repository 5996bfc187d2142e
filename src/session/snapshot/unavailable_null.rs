//! An observed snapshot's JSON (`observe --state`, `mk-tui state` of an
//! observation recording): every field `unavailable` names by its path (`clock_ms`, `partitions[].log_end_offset`,
//! `partitions[].replicas[].lag`, …) written as `null`, so a reader of the
//! JSON cannot take the default the snapshot holds there (a log end
//! offset of 0 of a partition with a HW of 667) for a value the cluster
//! gave (docs/observe.md, "Each field, and what fills it"). Entries that
//! name one instance or a reason (`transactions[ID].first_offsets`,
//! `committed_offsets of groups coordinated by broker 2 (unreachable)`)
//! are not paths: their fields keep what was learnt, empty where nothing
//! was.

use serde_json::Value;

use super::Snapshot;

/// The snapshot as one JSON object, its unavailable fields `null`.
pub(super) fn to_json(snapshot: &Snapshot) -> String {
    if snapshot.unavailable.is_empty() {
        return serde_json::to_string(snapshot).expect("a snapshot serialises");
    }
    let mut value = serde_json::to_value(snapshot).expect("a snapshot serialises");
    let paths: Vec<String> = value["unavailable"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    for path in paths.iter().filter(|p| is_field_path(p)) {
        let steps: Vec<&str> = path.split('.').collect();
        null_at(&mut value, &steps);
    }
    serde_json::to_string(&value).expect("a JSON value serialises")
}

/// A path of field names, each but the last possibly marked `[]` (every
/// element of that array): `a`, `a[].b`, `a[].b[].c`.
fn is_field_path(path: &str) -> bool {
    let steps: Vec<&str> = path.split('.').collect();
    steps.iter().enumerate().all(|(i, step)| {
        let name = step.strip_suffix("[]").unwrap_or(step);
        let marked = name.len() != step.len();
        !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            && (i + 1 < steps.len() || !marked)
    })
}

/// Writes `null` at `steps` under `value`, through every element of an
/// array step. The last field is written `null` also where the JSON leaves
/// it out (an empty `explanation_zh`, a topic's `config` with no setting):
/// a field listed unavailable is `null` wherever its object is.
fn null_at(value: &mut Value, steps: &[&str]) {
    let Some((first, rest)) = steps.split_first() else {
        return;
    };
    let (name, each) = match first.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (*first, false),
    };
    let Some(object) = value.as_object_mut() else {
        return;
    };
    if !each && rest.is_empty() {
        object.insert(name.to_string(), Value::Null);
        return;
    }
    let Some(field) = object.get_mut(name) else {
        return;
    };
    if each {
        for element in field.as_array_mut().into_iter().flatten() {
            null_at(element, rest);
        }
    } else {
        null_at(field, rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nulled(mut value: Value, path: &str) -> Value {
        assert!(is_field_path(path), "{path}");
        null_at(&mut value, &path.split('.').collect::<Vec<_>>());
        value
    }

    #[test]
    fn paths_reach_every_element_and_leave_the_rest() {
        let v = json!({"clock_ms": 5, "partitions": [
            {"log_end_offset": 3, "hw": 3, "replicas": [{"lag": 1, "b": 1}, {"lag": 2, "b": 2}]},
            {"log_end_offset": 4, "hw": 4, "replicas": []}]});
        assert_eq!(nulled(v.clone(), "clock_ms")["clock_ms"], Value::Null);
        let p = nulled(v.clone(), "partitions[].log_end_offset");
        assert_eq!(p["partitions"][0]["log_end_offset"], Value::Null);
        assert_eq!(p["partitions"][1]["log_end_offset"], Value::Null);
        assert_eq!(p["partitions"][1]["hw"], 4);
        let r = nulled(v, "partitions[].replicas[].lag");
        assert_eq!(
            r["partitions"][0]["replicas"][1],
            json!({"lag": null, "b": 2})
        );
        assert_eq!(r["partitions"][0]["log_end_offset"], 3);
    }

    #[test]
    fn an_absent_field_is_null_where_its_object_is() {
        let v = nulled(json!({"a": [{"b": 1}, {"b": 2, "c": 3}]}), "a[].c");
        assert_eq!(v, json!({"a": [{"b": 1, "c": null}, {"b": 2, "c": null}]}));
        // No object on the way: nothing is made up.
        let v = nulled(json!({"a": [{"b": 1}]}), "x[].c");
        assert_eq!(v, json!({"a": [{"b": 1}]}));
        let v = nulled(json!({"a": [{"b": 1}]}), "a[].d[].c");
        assert_eq!(v, json!({"a": [{"b": 1}]}));
    }

    #[test]
    fn named_instances_and_reasons_are_not_paths() {
        for entry in [
            "transactions[t1].first_offsets",
            "committed_offsets of groups coordinated by broker 2 (unreachable)",
            "consumers[t-0]",
            "partitions[].replicas[].offset_lag of broker 3 (unreachable)",
            "a[]",
            "",
        ] {
            assert!(!is_field_path(entry), "{entry}");
        }
        for entry in ["journal", "partitions[].batches[].explanation_zh"] {
            assert!(is_field_path(entry), "{entry}");
        }
    }
}
