//! `copytrace export matches` in every format: the XLSX workbook read back by a standard
//! reader (Python's openpyxl, which `./scripts/test` installs), CSV with a BOM, NDJSON.

use std::process::Command;

use crate::helpers::{
    TestSite, Workspace, crawl_and_match, library_text, read_csv, title_of, write_sample_library,
};

/// A title a pirate site could give a work, which a spreadsheet would run as a formula.
const FORMULA_TITLE: &str = "=HYPERLINK(\"http://evil.example\",\"点击\")";

/// The sample pipeline with `xingchen-ch1` titled [`FORMULA_TITLE`] (a work's title is its
/// first line).
fn matched_workspace() -> Workspace {
    let workspace = Workspace::new();
    let library = write_sample_library(&workspace);
    let text = library_text("xingchen-ch1");
    workspace.write(
        "library/xingchen-ch1.txt",
        text.replacen(title_of(text), FORMULA_TITLE, 1),
    );
    workspace.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    let site = TestSite::sample();
    crawl_and_match(&workspace, &site);
    workspace
}

/// Exports matches in `format` (with `extra` flags) to `file` in the workspace; returns the
/// bytes written.
fn export(workspace: &Workspace, format: &str, file: &str, extra: &[&str]) -> Vec<u8> {
    export_table(workspace, "matches", format, file, extra)
}

/// `copytrace export TABLE --format FORMAT --out FILE EXTRA…`; returns the bytes written.
fn export_table(
    workspace: &Workspace,
    table: &str,
    format: &str,
    file: &str,
    extra: &[&str],
) -> Vec<u8> {
    let out = workspace.path(file);
    let mut args = vec!["export", table, "--format", format, "--out"];
    let out_str = out.to_str().expect("UTF-8 path");
    args.push(out_str);
    args.extend_from_slice(extra);
    let run = workspace.ok(&args);
    let noun = if table == "matches" {
        "match(es)"
    } else {
        "row(s)"
    };
    assert!(
        run.stderr.contains(&format!("{noun} to {out_str}")),
        "{run:#?}"
    );
    std::fs::read(out).expect("the export file")
}

/// `copytrace stats ARGS… --json`, parsed.
fn stats_json(workspace: &Workspace, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["stats"];
    all.extend_from_slice(args);
    all.push("--json");
    serde_json::from_str(&workspace.ok(&all).stdout).expect("stats print JSON")
}

/// Reads an XLSX file with openpyxl and describes what a reader sees, as JSON.
const READ_XLSX: &str = r#"
import json, sys, openpyxl
book = openpyxl.load_workbook(sys.argv[1])
sheet = book.worksheets[0]
def kind(value):
    return type(value).__name__
rows = [[{"type": kind(c.value), "value": None if c.value is None else str(c.value),
          "data_type": c.data_type, "quote_prefix": bool(c.quotePrefix)} for c in row]
        for row in sheet.iter_rows(min_row=2)]
print(json.dumps({
    "sheets": book.sheetnames,
    "header": [c.value for c in sheet[1]],
    "header_bold": all(c.font.b for c in sheet[1]),
    "freeze_panes": sheet.freeze_panes,
    "auto_filter": sheet.auto_filter.ref,
    "url_width": sheet.column_dimensions["A"].width,
    "rows": rows,
}))
"#;

/// Opens `path` with openpyxl, in the Python `./scripts/test` found it in
/// (`COPYTRACE_TEST_PYTHON`), else the first `python3` on `PATH`.
fn read_with_openpyxl(path: &std::path::Path) -> serde_json::Value {
    let python = std::env::var("COPYTRACE_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let output = Command::new(&python)
        .arg("-c")
        .arg(READ_XLSX)
        .arg(path)
        .output()
        .unwrap_or_else(|error| panic!("cannot run {python}: {error}"));
    assert!(
        output.status.success(),
        "{python} with openpyxl could not read {}: {} (./scripts/test installs \
         python3-openpyxl and sets COPYTRACE_TEST_PYTHON)",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the reader prints JSON")
}

#[test]
fn an_xlsx_export_opens_in_a_standard_reader_with_typed_cells() {
    let workspace = matched_workspace();
    let xlsx = export(&workspace, "xlsx", "matches.xlsx", &[]);
    assert_eq!(&xlsx[..4], b"PK\x03\x04", "a zip archive");
    export(&workspace, "csv", "matches.csv", &[]);
    let csv = read_csv(&workspace.path("matches.csv"));
    assert!(csv.rows.len() >= 2, "{} rows", csv.rows.len());

    let book = read_with_openpyxl(&workspace.path("matches.xlsx"));
    assert_eq!(book["sheets"], serde_json::json!(["matches"]));
    assert_eq!(
        book["header"],
        serde_json::json!(csv.header),
        "the CSV columns, in order"
    );
    assert_eq!(book["header_bold"], true);
    assert_eq!(book["freeze_panes"], "A2", "the header row is frozen");
    let rows = book["rows"].as_array().expect("rows");
    assert_eq!(
        rows.len(),
        csv.rows.len(),
        "one row per match, as in the CSV"
    );
    assert_eq!(
        book["auto_filter"],
        format!("A1:P{}", rows.len() + 1),
        "the autofilter covers header and rows"
    );
    assert!(book["url_width"].as_f64().expect("a width") > 40.0);

    let column = |name: &str| csv.column(name);
    let mut formula_titles = 0;
    for (row, expected) in rows.iter().zip(&csv.rows) {
        let cell = |name: &str| &row[column(name)];
        // Same match, same order as the CSV export.
        assert_eq!(cell("page_url")["value"], expected[column("page_url")]);
        assert_eq!(cell("page_url")["type"], "str");
        for name in ["score", "coverage", "containment"] {
            // openpyxl reads a whole number (a score of 1) as an int.
            assert!(
                ["float", "int"].contains(&cell(name)["type"].as_str().unwrap()),
                "{name} is a number: {row:?}"
            );
            let value: f64 = cell(name)["value"].as_str().unwrap().parse().unwrap();
            assert_eq!(value, expected[column(name)].parse::<f64>().unwrap());
        }
        for name in ["copied_chars", "evidence_passages"] {
            assert_eq!(cell(name)["type"], "int", "{name} is a number: {row:?}");
            assert_eq!(cell(name)["value"], expected[column(name)]);
        }
        for name in ["first_seen", "last_seen"] {
            assert_eq!(cell(name)["type"], "datetime", "{name} is a date: {row:?}");
            // 2026-11-01T08:00:00Z in the CSV is 2026-11-01 08:00:00 in the workbook.
            let csv_time = expected[column(name)].replace('T', " ").replace('Z', "");
            assert_eq!(cell(name)["value"], csv_time.as_str());
        }
        assert_eq!(cell("removed_at")["type"], "NoneType", "online: no date");
        let title = cell("work_title");
        assert_eq!(title["type"], "str");
        assert_eq!(title["data_type"], "s", "a string cell, never a formula");
        if title["value"] == FORMULA_TITLE {
            formula_titles += 1;
            assert_eq!(title["quote_prefix"], true, "{title}");
            assert_eq!(
                expected[column("work_title")],
                format!("'{FORMULA_TITLE}"),
                "the CSV neutralises it its own way"
            );
        } else {
            assert_eq!(title["value"], expected[column("work_title")]);
            assert_eq!(title["quote_prefix"], false);
        }
    }
    assert!(
        formula_titles > 0,
        "the formula-like title came through unchanged, as text"
    );
}

#[test]
fn csv_with_a_bom_ndjson_and_json_hold_the_same_matches() {
    let workspace = matched_workspace();
    let plain = export(&workspace, "csv", "plain.csv", &[]);
    let with_bom = export(&workspace, "csv", "bom.csv", &["--bom"]);
    assert_eq!(&with_bom[..3], "\u{feff}".as_bytes());
    assert_eq!(&with_bom[3..], &plain[..], "the same CSV after the BOM");
    assert!(plain.starts_with(b"page_url,"));

    let json: Vec<serde_json::Value> =
        serde_json::from_slice(&export(&workspace, "json", "m.json", &[])).expect("JSON");
    let ndjson = String::from_utf8(export(&workspace, "ndjson", "m.ndjson", &[])).unwrap();
    let lines: Vec<serde_json::Value> = ndjson
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect();
    assert!(!lines.is_empty());
    assert_eq!(lines, json, "the same objects in the same order");
    assert!(
        lines
            .iter()
            .all(|m| m["id"].is_i64() && m["evidence"].is_array())
    );
    assert_eq!(
        workspace
            .ok(&["export", "matches", "--format", "ndjson"])
            .stdout,
        ndjson,
        "standard output gets the same"
    );
}

#[test]
fn an_xlsx_export_goes_to_a_pipe_but_not_to_a_terminal() {
    let workspace = matched_workspace();
    let piped = workspace.ok(&["export", "matches", "--format", "xlsx"]);
    assert!(
        piped.stdout.starts_with("PK"),
        "the workbook on standard output"
    );

    // `script` runs the command on a pseudo-terminal, as a person at a terminal would.
    let command = format!(
        "{} --db {} export matches --format xlsx",
        env!("CARGO_BIN_EXE_copytrace"),
        workspace.db
    );
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(workspace.root())
        .env("NO_COLOR", "1")
        .output()
        .expect("script(1) from util-linux runs");
    let shown = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("error: an XLSX export is binary: write it to a file with --out FILE"),
        "{shown}"
    );
    assert!(!shown.contains("PK"), "nothing binary reached the terminal");
}

#[test]
fn statistics_export_as_the_stats_command_counts_them_in_every_format() {
    let workspace = matched_workspace();

    // Per work: the JSON export is what `stats works --json` prints, row for row.
    let works = stats_json(&workspace, &["works"]);
    let exported: serde_json::Value = serde_json::from_slice(&export_table(
        &workspace,
        "works",
        "json",
        "works.json",
        &[],
    ))
    .expect("a JSON array");
    assert_eq!(exported, works);
    let works = works.as_array().expect("rows");
    assert!(works.len() >= 3, "the sample site copies several works");

    // The workbook has typed cells: counts are integers, times are dates.
    export_table(&workspace, "works", "xlsx", "works.xlsx", &[]);
    let book = read_with_openpyxl(&workspace.path("works.xlsx"));
    assert_eq!(book["sheets"], serde_json::json!(["works"]));
    let header: Vec<&str> = book["header"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows = book["rows"].as_array().unwrap();
    assert_eq!(rows.len(), works.len());
    for (row, expected) in rows.iter().zip(works) {
        assert_eq!(row[column("pages")]["type"], "int");
        assert_eq!(row[column("pages")]["value"], expected["pages"].to_string());
        assert_eq!(row[column("first_seen")]["type"], "datetime");
        assert_eq!(
            row[column("work_external_id")]["value"],
            expected["external_id"]
        );
    }

    // Per registered domain, as NDJSON; a filter narrows it as it narrows the statistics.
    let sites = stats_json(&workspace, &["sites", "--by-domain"]);
    let ndjson = export_table(
        &workspace,
        "sites",
        "ndjson",
        "sites.ndjson",
        &["--by-domain"],
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(ndjson)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(serde_json::Value::Array(lines), sites);

    // Per day, as CSV: one line per day, counts as the statistics have them.
    let daily = stats_json(&workspace, &["daily"]);
    export_table(&workspace, "daily", "csv", "daily.csv", &[]);
    let csv = read_csv(&workspace.path("daily.csv"));
    assert_eq!(
        csv.header,
        ["day", "new_matches", "removals", "pages_crawled"]
    );
    let daily = daily.as_array().unwrap();
    assert_eq!(csv.rows.len(), daily.len());
    for (row, expected) in csv.rows.iter().zip(daily) {
        assert_eq!(row[0], expected["day"].as_str().unwrap().to_owned());
        assert_eq!(row[1], expected["new_matches"].to_string());
    }

    // Time to piracy: the chart-ready series, one row per work and site.
    let ttp = stats_json(&workspace, &["time-to-piracy"]);
    let exported: serde_json::Value = serde_json::from_slice(&export_table(
        &workspace,
        "time-to-piracy",
        "json",
        "ttp.json",
        &[],
    ))
    .unwrap();
    assert_eq!(exported, ttp["copies"]);
}

#[test]
fn a_match_export_takes_the_statistics_filters() {
    let workspace = matched_workspace();
    export(&workspace, "csv", "all.csv", &[]);
    let all = read_csv(&workspace.path("all.csv"));
    let score = all.column("score");
    let strong = all
        .rows
        .iter()
        .filter(|row| row[score].parse::<f64>().unwrap() >= 0.9)
        .count();
    assert!(
        strong > 0 && strong < all.rows.len(),
        "the sample has weak and strong copies"
    );
    export(&workspace, "csv", "strong.csv", &["--min-score", "0.9"]);
    assert_eq!(read_csv(&workspace.path("strong.csv")).rows.len(), strong);
    export(
        &workspace,
        "csv",
        "elsewhere.csv",
        &["--site", "elsewhere.example"],
    );
    assert!(read_csv(&workspace.path("elsewhere.csv")).rows.is_empty());
}
