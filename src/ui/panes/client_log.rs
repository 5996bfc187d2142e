//! The clients pane's request log, folded (docs/dashboard.md "The clients
//! pane"). A consumer polls all the time: each poll that finds nothing is
//! one `Fetch … 0 bytes` line, and a few seconds of them push the lines
//! the lesson is about (a Produce, an EndTxn) out of the pane. So a
//! connection's empty fetches fold into one line with their count
//! (`Fetch v11 ×37, empty (read_committed)`), kept where the newest of them
//! is: a connection's run of polls is one line, below the requests it
//! polled after. Any other line of the connection (a fetch that returned
//! data, a commit) ends its run; the next empty fetch starts a new one.
//!
//! The lines are the server's, as `mk-tui serve` prints them
//! (docs/kafka-protocol.md): `broker B PEER: API vN from client "ID":
//! OUTCOME`; an empty fetch is a Fetch whose whole outcome is
//! `read_committed, 0 bytes` (or `read_uncommitted`). A line in any other
//! shape is kept as it is.

/// One line of the folded log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A line of the server's log, as it is.
    Line(String),
    /// `count` empty fetches in a row from one connection (`connection` is
    /// `broker B PEER`, `request` is `Fetch vN`).
    EmptyFetches {
        connection: String,
        request: String,
        isolation: String,
        count: usize,
        /// The first of them, shown as it is while it is alone.
        first: String,
    },
}

/// An empty fetch's connection, request and isolation level, if `line` is
/// one.
fn empty_fetch(line: &str) -> Option<(&str, &str, &str)> {
    let (head, outcome) = line.rsplit_once(": ")?;
    let (connection, request) = head.split_once(": ")?;
    let isolation = outcome.strip_suffix(", 0 bytes")?;
    if !matches!(isolation, "read_committed" | "read_uncommitted") {
        return None;
    }
    let request = request.split(" from client ").next()?;
    request
        .starts_with("Fetch v")
        .then_some((connection, request, isolation))
}

/// The connection a line is about (`broker B PEER`), if it names one.
fn connection_of(line: &str) -> Option<&str> {
    let (connection, _) = line.split_once(": ")?;
    connection.starts_with("broker ").then_some(connection)
}

/// Folds `lines` (oldest first): see the module comment.
pub fn fold(lines: &[String]) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for line in lines {
        let Some((connection, request, isolation)) = empty_fetch(line) else {
            out.push(Entry::Line(line.clone()));
            continue;
        };
        // The connection's open run: after its last other line.
        let last_other = out.iter().rposition(|e| match e {
            Entry::Line(l) => connection_of(l) == Some(connection),
            Entry::EmptyFetches { .. } => false,
        });
        let run = out.iter().rposition(|e| {
            matches!(e, Entry::EmptyFetches { connection: c, request: r, isolation: i, .. }
                if c == connection && r == request && i == isolation)
        });
        match run {
            Some(at) if last_other.is_none_or(|other| at > other) => {
                let mut entry = out.remove(at);
                if let Entry::EmptyFetches { count, .. } = &mut entry {
                    *count += 1;
                }
                out.push(entry);
            }
            _ => out.push(Entry::EmptyFetches {
                connection: connection.to_string(),
                request: request.to_string(),
                isolation: isolation.to_string(),
                count: 1,
                first: line.clone(),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetch(peer: &str) -> String {
        format!("broker 1 {peer}: Fetch v11 from client \"rdkafka\": read_committed, 0 bytes")
    }

    fn produce(peer: &str) -> String {
        format!("broker 1 {peer}: Produce v9 from client \"rdkafka\": acks=1 out-0 offset 3")
    }

    const A: &str = "127.0.0.1:50001";
    const B: &str = "127.0.0.1:50002";

    #[test]
    fn a_connections_empty_fetches_fold_into_one_line_below_the_produce() {
        let mut lines = vec![fetch(A); 5];
        lines.push(produce(B));
        lines.extend(vec![fetch(A); 32]);
        let folded = fold(&lines);
        assert_eq!(folded.len(), 2, "{folded:?}");
        assert_eq!(folded[0], Entry::Line(produce(B)));
        assert!(
            matches!(&folded[1], Entry::EmptyFetches { count: 37, connection, request, isolation, .. }
                if connection == &format!("broker 1 {A}") && request == "Fetch v11" && isolation == "read_committed"),
            "{folded:?}"
        );
    }

    #[test]
    fn another_line_of_the_same_connection_ends_its_run() {
        let data =
            format!("broker 1 {A}: Fetch v11 from client \"rdkafka\": read_committed, 70 bytes");
        let lines = vec![fetch(A), fetch(A), data.clone(), fetch(A), fetch(B)];
        let folded = fold(&lines);
        let counts: Vec<usize> = folded
            .iter()
            .map(|e| match e {
                Entry::Line(_) => 0,
                Entry::EmptyFetches { count, .. } => *count,
            })
            .collect();
        assert_eq!(counts, [2, 0, 1, 1], "{folded:?}");
        assert_eq!(folded[1], Entry::Line(data));
    }

    #[test]
    fn lines_of_other_shapes_are_kept_as_they_are() {
        let odd = [
            "broker 3: stopped: listener on 127.0.0.1:9094 closed".to_string(),
            format!("broker 1 {A}: Fetch v11 from client \"x\": read_committed, 0 bytes; fenced"),
            "no colon at all".to_string(),
        ];
        assert_eq!(
            fold(&odd),
            odd.iter().cloned().map(Entry::Line).collect::<Vec<_>>()
        );
    }
}
