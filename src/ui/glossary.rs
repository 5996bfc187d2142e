//! The glossary: the names a caption may use for what is on screen, in
//! English and Chinese. The panes draw their titles and their glyph labels
//! (`✗ aborted`, `‖ held back`, `… staged`) from here, and
//! `tests/caption_words.rs` checks every lesson's captions against the
//! same words: a caption that names a pane or a label the frame does not
//! show fails, so the words a lecturer reads are the ones on the screen.

use crate::session::snapshot::fate::Fate;
use crate::ui::i18n::Lang;
use crate::ui::panes::PaneId;
use crate::ui::theme::Theme;

/// The glyphs a label starts with (the fates', and the journal's marker).
pub const GLYPHS: [char; 8] = ['✓', '✗', '…', '◐', '‖', '▵', '?', '◆'];

/// A pane's title (its border's first word).
pub fn pane_title(pane: PaneId, lang: Lang) -> &'static str {
    lang.t(pane.name())
}

/// Every pane's title.
pub fn pane_titles(lang: Lang) -> Vec<&'static str> {
    PaneId::ALL.iter().map(|&p| pane_title(p, lang)).collect()
}

/// A fate's label, as the Log pane's legend draws it: `✗ aborted`.
pub fn fate_label(fate: Fate, lang: Lang) -> String {
    format!("{} {}", Theme::fate_glyph(fate), lang.t(fate.name()))
}

/// The Consumer offsets pane's staged map: `… staged`.
pub fn staged_label(lang: Lang) -> String {
    format!("… {}", lang.t("staged"))
}

/// The Pending pane's armed crash of a commit or abort (`X`): `✝ crash at
/// prepare`, `✝ 崩溃于切点 prepare` (the cut point as a prompt takes it).
pub fn crash_armed_label(cut: &str, lang: Lang) -> String {
    format!("✝ {} {cut}", lang.t("crash_armed"))
}

/// The Consumer offsets pane's committed offsets: `✓ committed`.
pub fn committed_offsets_label(lang: Lang) -> String {
    format!("✓ {}", lang.t("committed"))
}

/// A marker the journal's recovery wrote: `◆ COMMIT`.
pub fn marker_label(control: &str) -> String {
    format!("◆ {control}")
}

/// Every glyph label a pane draws, longest first (so `✓ committed` is
/// matched before a shorter label with the same start).
pub fn labels(lang: Lang) -> Vec<String> {
    let mut all: Vec<String> = Fate::ALL.iter().map(|&f| fate_label(f, lang)).collect();
    all.push(staged_label(lang));
    all.push(committed_offsets_label(lang));
    all.extend(["COMMIT", "ABORT"].map(marker_label));
    all.sort_by_key(|l| std::cmp::Reverse(l.chars().count()));
    all.dedup();
    all
}

/// The English a Chinese frame keeps (`--lang zh`, docs/dashboard.md
/// "Chinese"): Kafka's own terms, as the book's Chinese chapter keeps them,
/// and what is typed or pressed as it is. Everything else the dashboard
/// says is Chinese, but the data it shows (names, values, ids, error
/// codes), which `tests/zh_words.rs` takes from the state and the actions.
pub const KEPT_IN_CHINESE: &[&str] = &[
    // Kafka's terms (a leader's replicas are its followers).
    "leader",
    "follower",
    "ISR",
    "HW",
    "LSO",
    "LEO",
    "offset",
    "epoch",
    "broker",
    "topic",
    // Kafka's own names: its requests, its assignor, its exceptions, its
    // improvement proposals (KIP-890).
    "Produce",
    "Fetch",
    "InitProducerId",
    "JoinGroup",
    "SyncGroup",
    "RangeAssignor",
    "KafkaStorageException",
    "KIP",
    // Kafka's control records and isolation levels.
    "COMMIT",
    "ABORT",
    "read_committed",
    "read_uncommitted",
    // The state names: the book's transaction states (its journal's
    // words), Kafka's group states.
    "ONGOING",
    "PREPARE_COMMIT",
    "PREPARE_ABORT",
    "COMPLETE_COMMIT",
    "COMPLETE_ABORT",
    "Empty",
    "Stable",
    "PreparingRebalance",
    "CompletingRebalance",
    "Dead",
    // Settings, by the names a prompt or a recording takes them.
    "acks",
    "all",
    "min",
    "insync",
    "replicas",
    "linger_ms",
    "batch_size",
    "max_buffer_bytes",
    "retention_ms",
    "retention_bytes",
    "delete_retention_ms",
    "transaction_timeout_ms",
    // Command-line flags, as typed (`--listen`, `--rules`).
    "listen",
    "rules",
    // The keyboard's keys, as printed on them.
    "Tab",
    "Esc",
    "Enter",
    "Home",
    "End",
    "Ctrl",
    "Del",
    "Bksp",
    // Names: the program, the system, ids.
    "mk",
    "tui",
    "MiniKafka",
    "Kafka",
    "ID",
    "CRC",
    // Units.
    "ms",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_label_starts_with_a_glyph_and_has_both_languages() {
        for lang in [Lang::En, Lang::Zh] {
            for l in labels(lang) {
                let first = l.chars().next().unwrap();
                assert!(GLYPHS.contains(&first), "{l}");
            }
        }
        assert_eq!(fate_label(Fate::HeldBack, Lang::En), "‖ held back");
        assert_eq!(fate_label(Fate::Aborted, Lang::Zh), "✗ 已中止");
        assert_eq!(pane_title(PaneId::Journal, Lang::En), "Transaction journal");
        assert_ne!(pane_titles(Lang::Zh), pane_titles(Lang::En));
    }
}
