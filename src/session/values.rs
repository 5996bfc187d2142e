//! Action values read by the engine's own parsers, for input checked before
//! it becomes an action (the dashboard's prompts): the ui layer names no
//! engine type, and a prompt must accept exactly what the driver accepts.
//! When the action's fields are typed (issue 12, item 4), these give way to
//! the typed values' `FromStr`.

/// `acks` (SPEC §4: "0", "1" or "all"), or why not.
pub fn check_acks(s: &str) -> Result<(), String> {
    s.parse::<crate::engine::AckMode>().map(|_| ())
}

/// A `crash_after` cut point (SPEC §4: "prepare", "marker:N", "markers" or
/// "offsets"), or why not.
pub fn check_cut_point(s: &str) -> Result<(), String> {
    s.parse::<crate::engine::transaction::CutPoint>()
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engines_values_pass_and_others_say_why_not() {
        for ok in ["0", "1", "all"] {
            assert_eq!(check_acks(ok), Ok(()), "{ok}");
        }
        assert!(check_acks("2").unwrap_err().contains("unknown acks \"2\""));
        for ok in ["prepare", "marker:0", "marker:3", "markers", "offsets"] {
            assert_eq!(check_cut_point(ok), Ok(()), "{ok}");
        }
        for bad in ["whenever", "marker:", "marker:x", ""] {
            assert!(
                check_cut_point(bad)
                    .unwrap_err()
                    .starts_with("unknown cut point"),
                "{bad}"
            );
        }
    }
}
