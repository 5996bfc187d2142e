//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) and any saved
//! regression inputs (`fuzz/artifacts/<target>/`) through the fuzz targets'
//! bodies in `minikafka::fuzzing`, on the stable toolchain, so CI checks what
//! the nightly fuzzer found without running it (see docs/reliability.md).

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files: Vec<PathBuf> = ["corpus", "artifacts"]
        .iter()
        .filter_map(|kind| std::fs::read_dir(root.join(kind).join(target)).ok())
        .flatten()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

fn replay(target: &str, body: fn(&[u8])) -> usize {
    let files = inputs(target);
    assert!(
        files.len() >= 4,
        "{target}: the seed corpus has a handful of files"
    );
    for file in &files {
        // A fuzzer running in this checkout may drop an input it minimised.
        let Ok(data) = std::fs::read(file) else {
            continue;
        };
        let outcome = std::panic::catch_unwind(|| body(&data));
        assert!(outcome.is_ok(), "{target} failed on {}", file.display());
    }
    files.len()
}

#[test]
fn mkb1_decode_corpus() {
    replay("mkb1_decode", minikafka::fuzzing::mkb1_decode);
}

#[test]
fn journal_recovery_corpus() {
    replay("journal_recovery", minikafka::fuzzing::journal_recovery);
}

#[test]
fn recording_parse_corpus() {
    replay("recording_parse", minikafka::fuzzing::recording_parse);
}

#[test]
fn layout_parse_corpus() {
    replay("layout_parse", minikafka::fuzzing::layout_parse);
}

#[test]
fn kafka_request_corpus() {
    replay("kafka_request", minikafka::fuzzing::kafka_request);
}

/// The seeds reach the accepting paths, where the round-trip and re-recovery
/// properties are checked, not only the error paths.
#[test]
fn seeds_are_valid_inputs() {
    use minikafka::engine::core::codec;
    for file in inputs("mkb1_decode").iter().filter(|f| seed(f)) {
        let bytes = std::fs::read(file).unwrap();
        if file.to_string_lossy().ends_with(".bin") {
            // A bare payload: the body seals it in a frame with its CRC.
            codec::decode_payload(&bytes).unwrap();
            continue;
        }
        let mut pos = 0;
        while pos < bytes.len() {
            let (_, len) = codec::decode(&bytes[pos..])
                .unwrap_or_else(|e| panic!("{}: byte {pos}: {e}", file.display()));
            pos += len;
        }
    }
    for file in inputs("recording_parse").iter().filter(|f| seed(f)) {
        minikafka::session::Recording::load(file).unwrap();
    }
    for file in inputs("layout_parse").iter().filter(|f| seed(f)) {
        let text = std::fs::read_to_string(file).unwrap();
        minikafka::ui::layout::parse("seed", &text).unwrap();
    }
    // Frames captured from the real clients (docs/reliability.md): each
    // decodes whole at its version, header and body, with nothing left.
    let mut apis = std::collections::BTreeSet::new();
    for file in inputs("kafka_request").iter().filter(|f| seed(f)) {
        use kafka_protocol::messages::{ApiKey, RequestKind};
        let frame = bytes::Bytes::from(std::fs::read(file).unwrap());
        let prefix = minikafka::kafka::codec::peek_header(&frame).unwrap();
        let api = ApiKey::try_from(prefix.api_key).unwrap();
        let (_, mut body) =
            minikafka::kafka::codec::split_header(api, prefix.api_version, &frame).unwrap();
        RequestKind::decode(api, &mut body, prefix.api_version)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(body.is_empty(), "{}: bytes after the body", file.display());
        apis.insert(prefix.api_key);
    }
    assert!(
        apis.len() >= 8,
        "the seeds cover the APIs clients use: {apis:?}"
    );
    let torn = inputs("journal_recovery")
        .into_iter()
        .filter(|f| seed(f))
        .filter(|f| {
            let bytes = std::fs::read(f).unwrap();
            !bytes.is_empty() && !bytes.ends_with(b"\n")
        })
        .count();
    assert!(torn >= 1, "a journal seed has a torn tail");
}

/// The OffsetDelete (API 47, v0) seeds, captured from kafka-python's
/// `delete_group_offsets` and Kafka's `kafka-consumer-groups
/// --delete-offsets` against `mk-tui serve`, are the requests those runs
/// made: the group and the partitions each named (the two-topic one names
/// a topic that does not exist and a partition past u's one).
#[test]
fn offset_delete_seeds_are_the_requests_captured() {
    use kafka_protocol::messages::{ApiKey, RequestKind};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/kafka_request");
    let cases = [
        (
            "seed-offset-delete-v0-kafka-python",
            "g",
            vec![("t", vec![0, 1])],
        ),
        (
            "seed-offset-delete-v0-kafka-python-two-topics",
            "g",
            vec![("nope", vec![0]), ("u", vec![5])],
        ),
        (
            "seed-offset-delete-v0-kafka-consumer-groups",
            "g",
            vec![("u", vec![0])],
        ),
    ];
    for (name, group, topics) in cases {
        let frame = bytes::Bytes::from(std::fs::read(dir.join(name)).unwrap());
        let prefix = minikafka::kafka::codec::peek_header(&frame).unwrap();
        assert_eq!((prefix.api_key, prefix.api_version), (47, 0), "{name}");
        let (_, mut body) =
            minikafka::kafka::codec::split_header(ApiKey::OffsetDelete, 0, &frame).unwrap();
        let RequestKind::OffsetDelete(request) =
            RequestKind::decode(ApiKey::OffsetDelete, &mut body, 0).unwrap()
        else {
            panic!("{name}: not an OffsetDelete request");
        };
        assert_eq!(request.group_id.as_str(), group, "{name}");
        let named: Vec<(&str, Vec<i32>)> = request
            .topics
            .iter()
            .map(|t| {
                let partitions = t.partitions.iter().map(|p| p.partition_index).collect();
                (t.name.as_str(), partitions)
            })
            .collect();
        assert_eq!(named, topics, "{name}");
    }
}

fn seed(path: &Path) -> bool {
    path.file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("seed-")
}
