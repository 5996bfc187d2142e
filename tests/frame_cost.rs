//! A dashboard frame costs what it draws, not what the log holds (issue 7's
//! P1, SPEC §2): the frame after a step reads from the segments only the
//! batches it draws that no frame drew before (and the consumers' lists
//! their first values), and folds into the readers' counts only the batches
//! the step added, whether the log holds 10 or 100 screens of batches. Counting work is robust where timing is not
//! (docs/performance.md, "P1"); `examples/frame_cost.rs` times it.

use minikafka::engine::BrokerCluster;
use minikafka::perf::{self, DashboardWorkload};
use minikafka::session::snapshot::fate::sentences_made;
use minikafka::ui::app::Msg;
use minikafka::ui::headless::buffer_text;
use minikafka::ui::keys::KeyCommand;

/// Frames the replicas' logs read back from their segments, and summaries
/// the readers' counts folded past their cache, so far.
fn work(cluster: &BrokerCluster) -> (u64, u64) {
    cluster.with_state(|s| {
        let frames = s
            .partitions()
            .values()
            .flat_map(|set| {
                set.assignment()
                    .iter()
                    .map(|&b| set.replica(b).unwrap().log.frames_read())
            })
            .sum();
        (frames, s.reader_cache().folded())
    })
}

/// What a 200x60 frame costs over 4 partitions of `records` records each
/// (batches of 100): the first frame, the frame after a step that adds a
/// batch to every partition, and that frame drawn again.
fn frames_over(records: usize) -> [(u64, u64); 3] {
    let workload = DashboardWorkload::new(4, records);
    let cluster = workload.app.driver().expect("a live app").cluster();
    let mut costs = [(0, 0); 3];
    let mut frame = |i: usize| {
        let before = work(cluster);
        workload.frame(200, 60);
        let after = work(cluster);
        costs[i] = (after.0 - before.0, after.1 - before.1);
    };
    frame(0);
    perf::fill(cluster, 1, 100, 100);
    frame(1);
    frame(2);
    costs
}

#[test]
fn a_frame_after_a_step_costs_the_same_over_a_log_ten_times_longer() {
    // 64 and 640 batches per partition: both more than a frame shows.
    let short = frames_over(6_400);
    let long = frames_over(64_000);
    let [_, short_step, short_again] = short;
    let [first, long_step, long_again] = long;
    // The first frame reads the batches on screen and folds every batch
    // once (as an open reads every summary once); from then on the folds
    // are kept.
    assert!(first.0 > 0 && first.1 >= 4 * 640, "first frame: {first:?}");
    // After the step: the new batch of each partition is read (it is on
    // screen) and folded, and nothing else, however long the log.
    assert!(
        short_step.0 > 0 && short_step.1 > 0,
        "the step's frame: {short_step:?}"
    );
    assert_eq!(
        long_step, short_step,
        "a frame after a step over 10x the log did other work"
    );
    assert!(
        short_step.1 <= 4,
        "folded more than the step added: {short_step:?}"
    );
    // The same state drawn again reads no batch it drew before and folds
    // nothing: only the consumers' lists read again, each from its
    // partition's start until it holds its 64 values (here the first batch
    // of 100 records, at each of the two isolation levels).
    assert_eq!(long_again, short_again);
    assert_eq!(short_again, (4 * 2, 0));
}

/// Sentences (why a batch has its fate) a 200x60 frame over 4 partitions of
/// `records` records makes, with nothing selected and then with the newest
/// batch of the first partition selected, and whether that frame shows the
/// selected batch's sentence.
fn sentences_over(records: usize) -> (u64, u64, bool) {
    let mut workload = DashboardWorkload::new(4, records);
    let before = sentences_made();
    workload.frame(200, 60);
    let unselected = sentences_made() - before;
    workload
        .app
        .update(Msg::Command(KeyCommand::SelectNext))
        .unwrap();
    let before = sentences_made();
    let text = buffer_text(&workload.frame(200, 60));
    let selected = sentences_made() - before;
    (unselected, selected, text.contains("plain data at offset"))
}

#[test]
fn a_frame_explains_only_the_batch_it_shows_explained() {
    // 64 and 640 batches per partition: a window of 64 batches each, 256
    // fates decided per frame; one sentence made, the selected batch's.
    for records in [6_400, 64_000] {
        assert_eq!(
            sentences_over(records),
            (0, 1, true),
            "{records} records per partition"
        );
    }
}

/// A frame draws the values it reads beside the app's snapshot, which it
/// neither copies nor changes (docs/performance.md "P1", fifth pass): the
/// frame is the one drawn from the snapshot with those values written in
/// (`App::snapshot_for`, what a frame drew before), and the snapshot
/// still carries no record after it.
#[test]
fn a_frame_draws_the_values_beside_its_snapshot_as_written_into_it() {
    use minikafka::ui::frame::{self, FrameInput};
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    // One cell per batch (64 batches of 100) and one per record (a batch
    // of 10 records per partition).
    for (records, per_batch) in [(6_400, 100), (40, 10)] {
        let workload = DashboardWorkload::with_batches(4, records, per_batch);
        let app = &workload.app;
        let area = Rect::new(0, 0, 200, 60);
        let beside = workload.frame(200, 60);
        let written = app.snapshot_for(area);
        let mut from_written = Buffer::empty(area);
        frame::draw(
            &FrameInput {
                view: &written,
                values: None,
                ..app.frame_input()
            },
            &mut from_written,
        );
        assert_eq!(beside, from_written, "{records} records of {per_batch}");
        assert!(
            buffer_text(&beside).contains("value-"),
            "the frame draws values"
        );
        let carried = |s: &minikafka::session::snapshot::Snapshot| {
            s.partitions
                .iter()
                .flat_map(|p| &p.batches)
                .filter(|b| !b.records.is_empty())
                .count()
        };
        assert!(carried(&written) > 0, "values were read");
        assert_eq!(carried(app.view()), 0, "the app's snapshot changed");
    }
}
