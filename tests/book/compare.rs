//! The comparable part of a state (issue 16), mk-tui's side of it, the
//! differences between two such views, and the files both write.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};

/// mk-tui's `mk-tui state` JSON reduced to what `drive_book.py` prints.
pub fn mk_view(state: &Value) -> Value {
    let mut partitions = Map::new();
    let mut divergent = Map::new();
    for p in state["partitions"].as_array().unwrap() {
        let name = format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]);
        let brokers: Vec<Value> = p["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| {
                r["log"]
                    .as_array()
                    .is_some_and(|l| l.iter().any(|b| b["divergent"] == true))
            })
            .map(|r| r["broker"].clone())
            .collect();
        divergent.insert(name.clone(), Value::from(brokers));
        let replicas: Map<String, Value> = p["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["broker"].to_string(), r["log_end_offset"].clone()))
            .collect();
        let batches: Vec<Value> = p["batches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                json!({
                    "base_offset": b["base_offset"],
                    "last_offset": b["last_offset"],
                    "kind": b["kind"],
                    "control": b["control"],
                    "transactional_id": b["transactional_id"],
                    "producer_id": b["producer_id"],
                    "values": b["records"].as_array().unwrap().iter()
                        .map(|r| r["value"].clone()).collect::<Vec<_>>(),
                    "records": b["records"].as_array().unwrap().iter()
                        .map(|r| json!([r["offset"], r["key"], r["value"]])).collect::<Vec<_>>(),
                })
            })
            .collect();
        let consumers = &state["consumers"];
        partitions.insert(
            name.clone(),
            json!({
                "leader": p["leader"],
                "leader_epoch": p["leader_epoch"],
                "isr": p["isr"],
                "log_start_offset": p["log_start_offset"],
                "high_watermark": p["high_watermark"],
                "last_stable_offset": p["last_stable_offset"],
                "replicas": replicas,
                "batches": batches,
                "read_uncommitted": consumers["read_uncommitted"][&name],
                "read_committed": consumers["read_committed"][&name],
            }),
        );
    }
    let transactions: Map<String, Value> = state["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                json!({
                    "state": t["state"],
                    "partitions": t["partitions"],
                    "first_offsets": t["first_offsets"],
                    "staged_offsets": t["staged_offsets"],
                }),
            )
        })
        .collect();
    let groups: Map<String, Value> = state["groups"]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .map(|g| {
                    let members: Map<String, Value> = g["members"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|m| {
                            let polled: Vec<Value> = m["last_poll"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|p| json!([p["offset"], p["value"]]))
                                .collect();
                            (
                                m["member"].as_str().unwrap().to_string(),
                                json!({
                                    "assignment": m["assignment"],
                                    "deadline_ms": m["deadline_ms"],
                                    "positions": m["positions"],
                                    "last_poll": polled,
                                }),
                            )
                        })
                        .collect();
                    (
                        g["group"].as_str().unwrap().to_string(),
                        json!({"state": g["state"], "generation": g["generation"], "members": members}),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "partitions": partitions,
        "divergent": divergent,
        "groups": groups,
        "transactions": transactions,
        "committed_offsets": state["committed_offsets"],
        "pending": state["pending"].as_array().unwrap().len(),
        "pending_ops": state["pending"].as_array().unwrap().iter()
            .map(|p| json!([p["kind"], p["txn"]])).collect::<Vec<_>>(),
        "errors": state["errors"].as_array().unwrap().len(),
        "error_messages": state["errors"].as_array().unwrap().iter()
            .map(|e| e["message"].clone()).collect::<Vec<_>>(),
    })
}

/// Keys that are reported, not compared.
const NOT_COMPARED: [&str; 6] = [
    "error_messages",
    "step",
    "clock_ms",
    "down",
    "divergent",
    "pending_ops",
];

/// Every leaf where `mk` and `book` differ, as `path: mk … book …`.
pub fn differences(mk: &Value, book: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk("", mk, book, &mut out);
    out
}

fn walk(path: &str, mk: &Value, book: &Value, out: &mut Vec<String>) {
    match (mk, book) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                if path.is_empty() && NOT_COMPARED.contains(&k.as_str()) {
                    continue;
                }
                let null = Value::Null;
                walk(
                    &format!("{path}/{k}"),
                    a.get(k).unwrap_or(&null),
                    b.get(k).unwrap_or(&null),
                    out,
                );
            }
        }
        _ if mk == book => {}
        _ => out.push(format!("{path}: mk-tui {mk} | book {book}")),
    }
}

/// The files both implementations write, by path under the data directory:
/// the journal, `offsets.json`, `metadata.json` and every segment `.log`.
pub fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for name in ["transactions.journal", "offsets.json", "metadata.json"] {
        // D8: mk-tui opens an empty journal at once, the book creates it
        // with its first frame; an empty file and none read the same.
        if let Ok(bytes) = std::fs::read(dir.join(name)).map(|b| (!b.is_empty()).then_some(b)) {
            out.extend(bytes.map(|b| (name.to_string(), b)));
        }
    }
    let Ok(brokers) = std::fs::read_dir(dir) else {
        return out;
    };
    for broker in brokers.flatten() {
        let broker_name = broker.file_name().to_string_lossy().into_owned();
        if !broker_name.starts_with("broker-") {
            continue;
        }
        for part in std::fs::read_dir(broker.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            for seg in std::fs::read_dir(part.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let seg_name = seg.file_name().to_string_lossy().into_owned();
                if seg_name.ends_with(".log") {
                    let key = format!(
                        "{broker_name}/{}/{seg_name}",
                        part.file_name().to_string_lossy()
                    );
                    out.insert(key, std::fs::read(seg.path()).unwrap_or_default());
                }
            }
        }
    }
    out
}

/// The files whose bytes differ, or that only one side has.
pub fn file_differences(
    mk: &BTreeMap<String, Vec<u8>>,
    book: &BTreeMap<String, Vec<u8>>,
) -> Vec<String> {
    let mut names: Vec<&String> = mk.keys().chain(book.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| match (mk.get(name), book.get(name)) {
            (Some(a), Some(b)) if a == b => None,
            (Some(a), Some(b)) => Some(format!(
                "{name}: bytes differ (mk-tui {} B, book {} B){}",
                a.len(),
                b.len(),
                text_diff(a, b)
            )),
            (Some(_), None) => Some(format!("{name}: only mk-tui wrote it")),
            (None, _) => Some(format!("{name}: only the book wrote it")),
        })
        .collect()
}

/// The first differing line of two text files, if they are text.
fn text_diff(a: &[u8], b: &[u8]) -> String {
    let (Ok(a), Ok(b)) = (std::str::from_utf8(a), std::str::from_utf8(b)) else {
        return String::new();
    };
    a.lines()
        .zip(b.lines())
        .find(|(x, y)| x != y)
        .map(|(x, y)| format!("\n      mk-tui: {x}\n      book:   {y}"))
        .unwrap_or_default()
}
