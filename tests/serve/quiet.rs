//! `serve --quiet`: no line per request answered (two new users' trials:
//! thousands of lines a minute, 3.7 MB in one with five clients), while
//! the server's own lines stay.

use crate::python;
use crate::server::Server;

#[test]
fn quiet_logs_no_request_lines_and_keeps_the_servers_own() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    for quiet in [false, true] {
        let args: &[&str] = if quiet { &["--quiet"] } else { &[] };
        let mut server = Server::start(args);
        let boot = server.bootstrap();
        let out = python::run(&py, "ck_create_topic.py", &[&boot, "q", "1", "3"]);
        assert_eq!(out.trim(), "created q");
        let out = python::run(&py, "ck_produce.py", &[&boot, "q", "0", "all", "5", "v"]);
        assert_eq!(out.matches("delivered").count(), 5, "{out}");
        let log = server.stop();
        let requests = log
            .lines()
            .filter(|l| l.contains(" from client \""))
            .count();
        assert!(
            log.contains("closing"),
            "the server's own lines stay:\n{log}"
        );
        if quiet {
            assert_eq!(requests, 0, "no request lines:\n{log}");
        } else {
            assert!(requests > 5, "a line per request:\n{log}");
        }
    }
}
