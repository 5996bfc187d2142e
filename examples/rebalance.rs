//! The book's rebalance lab (`labs/rebalance.py`, E15), through the
//! engine: two members of group `workers` share topic `orders`; each join
//! or leave is one eager rebalance with a new generation, and a member's
//! local assignment stays stale until it refreshes (no revoke barrier).
//! Prints the book's lines exactly (`tests/rebalance_lab.rs` compares them
//! with the book's own run, byte for byte).
//!
//! Run: `cargo run --example rebalance`

use std::collections::BTreeSet;
use std::io::Write;

use minikafka::engine::consumer::Consumer;
use minikafka::engine::{BrokerCluster, ManualClock, MiniKafkaConfig, TopicPartition};

fn format(partitions: &[TopicPartition]) -> String {
    partitions
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Python's `bool` as the lab prints it.
fn python_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(&mut std::io::stdout().lock())
}

/// The lab, its lines written to `out` (the test reads them from here).
pub fn run(out: &mut impl Write) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::Builder::new()
        .prefix("minikafka-rebalance-")
        .tempdir()?;
    // The book's `MiniKafkaConfig(data_dir=...)`: one broker.
    let config = MiniKafkaConfig::new(dir.path()).with_brokers([1]);
    let cluster = BrokerCluster::open(config, ManualClock::new())?;
    cluster.create_topic("orders", 4, 1)?;
    // `cluster.consumer(group_id="workers")` numbers its members from 1.
    let mut first = Consumer::new("workers", "member-1");
    let mut second = Consumer::new("workers", "member-2");
    let orders = BTreeSet::from(["orders".to_string()]);

    writeln!(
        out,
        "1. First member joins and initially owns every partition."
    )?;
    first.subscribe(&cluster, &orders)?;
    writeln!(out, "   member 1: {}", format(first.assignment()))?;

    writeln!(out, "2. Second member joins, triggering a new generation.")?;
    second.subscribe(&cluster, &orders)?;
    writeln!(out, "   member 2: {}", format(second.assignment()))?;
    writeln!(
        out,
        "   member 1 local view before refresh: {}",
        format(first.assignment())
    )?;
    writeln!(
        out,
        "   MiniKafka deliberately has no revoke barrier: the old local assignment remains until refresh_assignment()."
    )?;

    first.refresh_assignment(&cluster)?;
    writeln!(
        out,
        "3. Member 1 refreshes and observes the stable assignment."
    )?;
    writeln!(out, "   member 1: {}", format(first.assignment()))?;
    writeln!(out, "   member 2: {}", format(second.assignment()))?;
    let overlap = first
        .assignment()
        .iter()
        .any(|tp| second.assignment().contains(tp));
    writeln!(out, "   overlap after refresh: {}", python_bool(overlap))?;

    writeln!(
        out,
        "4. Member 2 leaves; the remaining member owns all partitions."
    )?;
    second.close(&cluster)?;
    first.refresh_assignment(&cluster)?;
    writeln!(out, "   member 1: {}", format(first.assignment()))?;
    writeln!(
        out,
        "   Real Kafka coordinates JoinGroup/SyncGroup and revocation; this mini coordinator completes rebalance synchronously."
    )?;
    cluster.close()?;
    Ok(())
}
