//! The book's rebalance lab (`labs/rebalance.py`, E15) against
//! `examples/rebalance.rs`: the book's own run, with `MK_BOOK_PYTHON` and
//! `PYTHONPATH` at the book's code, and the example's lines must be equal
//! byte for byte. Without the book or its Python the comparison prints why
//! and passes (except under `CI=true`, `tests/book/mod.rs`); the example's
//! own lines are checked either way.

mod book;

#[allow(dead_code)]
#[path = "../examples/rebalance.rs"]
mod rebalance_example;

fn example_output() -> String {
    let mut out = Vec::new();
    rebalance_example::run(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_example_prints_the_books_rebalance_lab_byte_for_byte() {
    let ours = example_output();
    // Checked without the book too: the assignments the lab is about.
    assert!(ours.contains("   member 2: orders-1, orders-3\n"), "{ours}");
    assert!(ours.contains("   member 1: orders-0, orders-2\n"), "{ours}");
    assert!(ours.contains("   overlap after refresh: False\n"), "{ours}");
    if let Some(why) = book::unavailable() {
        eprintln!("the book's lab not compared: {why}");
        return;
    }
    let python = book::python().unwrap();
    let run = std::process::Command::new(python)
        .args(["-m", "minikafka.labs.rebalance"])
        .env("PYTHONPATH", book::book_src())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let theirs = String::from_utf8(run.stdout).unwrap();
    assert_eq!(ours, theirs);
}
