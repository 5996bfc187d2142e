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
pub const GLYPHS: [char; 8] = ['✓', '✗', '…', '◐', '‖', '↑', '?', '◆'];

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
