//! README.md's "With a real Kafka client" lines, run as pasted (issue 14:
//! "two commands, then the confluent-kafka or kcat lines to paste"): the
//! Python block through confluent-kafka and the kcat lines, against a real
//! `mk-tui serve` (the server the first command starts, here on ports the
//! system picks: the README's `127.0.0.1:9092` is replaced by its
//! address). If the README changes, this runs the new lines.

use std::process::Command;

use crate::python;
use crate::server::Server;

/// The README's section on real clients.
fn section() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let start = readme
        .find("## With a real Kafka client")
        .expect("the section");
    let rest = &readme[start + 3..];
    let end = rest.find("\n## ").map_or(rest.len(), |e| e);
    rest[..end].to_string()
}

/// The fenced blocks of `lang` in `text`, in order.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&fence) {
        let body = &rest[i + fence.len()..];
        let end = body.find("```").expect("a closed block");
        out.push(body[..end].to_string());
        rest = &body[end..];
    }
    out
}

#[test]
fn the_readmes_python_and_kcat_lines_work_against_a_real_server() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let text = section();
    let python_blocks = blocks(&text, "python");
    assert_eq!(python_blocks.len(), 1, "one block to paste");
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    let temp = tempfile::tempdir().unwrap();
    let script = temp.path().join("pasted.py");
    std::fs::write(&script, python_blocks[0].replace("127.0.0.1:9092", &boot)).unwrap();
    let out = python::run(&py, script.to_str().unwrap(), &[]);
    println!("the README's Python lines printed:\n{out}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["acked 0", "b'hello'", "None", "b'pending'"],
        "{out}"
    );
    if Command::new("kcat").arg("-V").output().is_err() {
        println!("skipped: kcat is not installed, so the README's kcat lines were not run");
        server.stop();
        return;
    }
    let kcat: Vec<String> = blocks(&text, "sh")
        .iter()
        .flat_map(|b| b.lines().map(String::from).collect::<Vec<_>>())
        .filter(|l| l.starts_with("kcat "))
        .collect();
    assert_eq!(kcat.len(), 2, "{kcat:?}");
    let run = |line: &str| -> String {
        let line = line.replace("127.0.0.1:9092", &boot);
        let out = Command::new("timeout")
            .args(["20", "sh", "-c", &line])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{line}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        println!("$ {line}\n{text}");
        text
    };
    let listed = run(&kcat[0]);
    assert!(listed.contains("3 brokers:"), "{listed}");
    assert!(
        listed.contains("partition 0, leader 1, replicas: 1,2,3, isrs: 1,2,3"),
        "{listed}"
    );
    let read = run(&kcat[1]);
    assert_eq!(
        read.lines().collect::<Vec<_>>(),
        ["hello", "pending"],
        "read_committed: both committed records, no marker"
    );
    server.stop();
}
