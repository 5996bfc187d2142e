//! Wrapping text by display width: a wide (CJK) character counts two
//! columns, a line breaks at the last space that fits, and a word (or a run
//! of CJK text, which has no spaces) longer than the line breaks between
//! characters. The help overlay and the presentation caption wrap with it,
//! so what they count is what they draw.

use ratatui::text::Span;

/// The display width of `c` (ratatui's, so it matches what is drawn).
fn char_width(c: char) -> usize {
    let mut bytes = [0; 4];
    Span::raw(&*c.encode_utf8(&mut bytes)).width()
}

/// The display width of `s`.
pub fn width(s: &str) -> usize {
    Span::raw(s).width()
}

/// `text` wrapped into lines of at most `max` columns (at least one
/// character per line, so a zero width still ends). Newlines in `text`
/// start new lines; spaces at a break are dropped.
pub fn wrap(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut out = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        let mut line_w = 0;
        for word in paragraph.split(' ') {
            let word_w = width(word);
            let gap = usize::from(!line.is_empty());
            if line_w + gap + word_w <= max {
                if gap == 1 {
                    line.push(' ');
                }
                line.push_str(word);
                line_w += gap + word_w;
                continue;
            }
            // It does not fit after what the line holds: break before it,
            // then cut it if it is longer than a whole line.
            if !line.is_empty() {
                out.push(std::mem::take(&mut line));
                line_w = 0;
            }
            for c in word.chars() {
                let w = char_width(c);
                if line_w + w > max && !line.is_empty() {
                    out.push(std::mem::take(&mut line));
                    line_w = 0;
                }
                line.push(c);
                line_w += w;
            }
        }
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breaks_at_spaces_that_fit() {
        assert_eq!(wrap("the LSO stops here", 8), ["the LSO", "stops", "here"]);
        assert_eq!(wrap("short", 80), ["short"]);
        assert_eq!(wrap("a\nb c", 80), ["a", "b c"]);
    }

    #[test]
    fn long_words_and_cjk_break_by_width() {
        assert_eq!(wrap("read_uncommitted", 6), ["read_u", "ncommi", "tted"]);
        // Six CJK characters are twelve columns.
        let zh = wrap("消费者读取到了", 6);
        assert_eq!(zh, ["消费者", "读取到", "了"]);
        assert!(zh.iter().all(|l| width(l) <= 6));
        assert_eq!(wrap("ab", 0), ["a", "b"], "zero width still ends");
    }

    #[test]
    fn no_line_is_wider_than_asked() {
        let text = "Before the marker, read_committed sees nothing: 在 marker 之前，read_committed 什么都看不到。";
        for max in 1..40 {
            for line in wrap(text, max) {
                assert!(width(&line) <= max.max(2), "{max}: {line:?}");
            }
        }
    }
}
