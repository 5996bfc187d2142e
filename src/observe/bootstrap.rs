//! `--bootstrap HOST:PORT[,HOST:PORT…]` (docs/observe.md): the brokers to ask
//! first. A `PLAINTEXT://` prefix is accepted, as Kafka clients write
//! listeners; `SSL://` and `SASL_*://` are refused with one line, because
//! authentication and TLS are out of scope and speaking plaintext to such a
//! listener would only fail later and less clearly.

use crate::session::SessionError;

/// The bootstrap addresses, `HOST:PORT` each, in the order given.
pub fn parse(list: &str) -> Result<Vec<String>, SessionError> {
    let mut out = Vec::new();
    for entry in list.split(',') {
        let entry = entry.trim();
        if entry.is_empty() {
            return Err(SessionError::flag(
                format!("--bootstrap {list:?}"),
                "an empty address (expected HOST:PORT[,HOST:PORT…])",
            ));
        }
        let address = match entry.split_once("://") {
            None => entry,
            Some((scheme, rest)) => match scheme.to_ascii_uppercase().as_str() {
                "PLAINTEXT" => rest,
                s if s == "SSL" || s.starts_with("SASL_") => {
                    return Err(SessionError::flag(
                        format!("--bootstrap {entry}"),
                        format!(
                            "{scheme}:// is not supported: authentication and TLS are out of scope (plaintext brokers only, see docs/observe.md)"
                        ),
                    ));
                }
                _ => {
                    return Err(SessionError::flag(
                        format!("--bootstrap {entry}"),
                        format!(
                            "unknown scheme {scheme}:// (expected HOST:PORT or PLAINTEXT://HOST:PORT)"
                        ),
                    ));
                }
            },
        };
        let port_ok = address
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if !port_ok {
            return Err(SessionError::flag(
                format!("--bootstrap {entry}"),
                "expected HOST:PORT, like 127.0.0.1:9092",
            ));
        }
        out.push(address.to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn plain_addresses_and_plaintext_urls_are_kept_in_order() {
        assert_eq!(
            parse("127.0.0.1:9092, PLAINTEXT://localhost:9093").unwrap(),
            vec!["127.0.0.1:9092", "localhost:9093"]
        );
    }

    #[test]
    fn tls_and_sasl_are_refused_by_name() {
        for url in [
            "SSL://h:9093",
            "SASL_SSL://h:9094",
            "sasl_plaintext://h:9095",
        ] {
            let e = parse(url).unwrap_err().to_string();
            assert!(e.contains("out of scope"), "{e}");
            assert!(e.contains(url), "{e}");
        }
    }

    #[test]
    fn a_missing_port_or_empty_entry_is_refused() {
        for bad in [
            "localhost",
            "h:",
            ":9092",
            "h:99999",
            "a:1,,b:2",
            "http://h:1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
