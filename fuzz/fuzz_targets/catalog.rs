//! Arbitrary bytes as a catalog CSV → the parsing `catalog::import_catalog` does before it
//! touches a store or a work file.
//!
//! `import_catalog` needs a store and reads each row's work file from disk, and its row
//! checker is private; this target reads the bytes with the same CSV settings (flexible rows,
//! every field trimmed), finds the columns by header name the same way (any order, any case, a
//! byte order mark ignored), and hands each row's fields to the public parsers it calls:
//! `catalog::parse_instant` for `published_at` and `holders::licensed_host` for every host of
//! `licensed_hosts` (split at `;`, `|`, `,` and spaces). Bad rows are refused, never a panic:
//!
//! * an instant that parses reads back from its RFC 3339 form as the same instant, and a
//!   refusal names the field and the value;
//! * a licensed host is non-empty, has no brackets or colons, and reads back as itself (the
//!   form stored is already normal).
#![no_main]

use copytrace_service::catalog::{LICENSED_HOSTS_COLUMN, parse_instant};
use copytrace_service::holders::licensed_host;
use libfuzzer_sys::fuzz_target;

fn check_instant(value: &str) {
    match parse_instant("published_at", value) {
        Ok(at) => {
            let again = parse_instant("published_at", &at.to_rfc3339());
            assert_eq!(again.ok(), Some(at), "{value:?} does not read back");
        }
        Err(error) => {
            let message = error.to_string();
            assert!(message.contains("published_at"), "{message}");
        }
    }
}

fn check_host(value: &str) {
    if let Ok(host) = licensed_host(value) {
        assert!(!host.is_empty(), "empty host from {value:?}");
        assert!(!host.contains(['[', ']', ':']), "{host:?} from {value:?}");
        assert_eq!(
            licensed_host(&host).ok().as_deref(),
            Some(host.as_str()),
            "the host {host:?} read from {value:?} does not read as itself"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(data);
    let Ok(header) = reader.headers().cloned() else {
        return;
    };
    let position = |name: &str| {
        header
            .iter()
            .position(|h| h.trim_start_matches('\u{feff}').eq_ignore_ascii_case(name))
    };
    let published = position("published_at");
    let hosts = position(LICENSED_HOSTS_COLUMN);
    for record in reader.records() {
        let Ok(record) = record else { continue };
        if let Some(value) = published
            .and_then(|i| record.get(i))
            .filter(|v| !v.is_empty())
        {
            check_instant(value);
        }
        if let Some(value) = hosts.and_then(|i| record.get(i)) {
            for host in value.split([';', '|', ' ', ',']).filter(|h| !h.is_empty()) {
                check_host(host);
            }
        }
        // Every field, whatever its column: the same parsers read the web's date filters and
        // `holder license` arguments.
        for field in record.iter().take(8) {
            check_instant(field);
            check_host(field);
        }
    }
});
