use std::io::Read;

use chrono::TimeZone;
use copytrace_store::{MatchRecord, MatchStatus};

use super::to_xlsx::XlsxSink;
use super::*;

fn record(title: &str) -> MatchRecord {
    crate::fixtures::match_record(title)
}

/// `records` written as the match export in `format`.
fn export(format: ExportFormat, records: &[MatchRecord], options: &ExportOptions) -> Vec<u8> {
    let table = match_table();
    let mut out = Vec::new();
    let mut writer = TableWriter::new(format, &table, &mut out, options).unwrap();
    for record in records {
        writer.write(record).unwrap();
    }
    assert_eq!(writer.finish().unwrap(), records.len() as u64);
    out
}

fn csv_text(records: &[MatchRecord]) -> String {
    String::from_utf8(export(
        ExportFormat::Csv,
        records,
        &ExportOptions::default(),
    ))
    .unwrap()
}

#[test]
fn the_match_table_is_the_csv_contract() {
    assert!(match_table().header().eq(CSV_HEADER));
}

#[test]
fn csv_has_the_contract_header_and_one_row_per_match() {
    let mut with_aliases = record("星辰旅人");
    with_aliases.aliases = vec![
        "http://m.pirate.example/1.html".to_owned(),
        "http://pirate.example/1.html?from=hot".to_owned(),
    ];
    let text = csv_text(&[with_aliases]);
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), CSV_HEADER.join(","));
    assert_eq!(
        lines.next().unwrap(),
        "http://pirate.example/1.html,xingchen-ch1,星辰旅人,0.9877,0.5,simhash+align,\
         2026-11-01T08:00:00Z,0.9877,2026-11-01T08:00:00Z,open,1,420,,7:第七章 雨夜 (98%),\
         confirmed,http://m.pirate.example/1.html http://pirate.example/1.html?from=hot"
    );
    assert!(lines.next().is_none());
    // A copy found gone carries when.
    let mut removed = record("星辰旅人");
    removed.status = MatchStatus::Removed;
    removed.removed_at = Some(removed.last_seen);
    let text = csv_text(&[removed]);
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .ends_with(",removed,1,420,2026-11-01T08:00:00Z,7:第七章 雨夜 (98%),confirmed,"),
        "{text}"
    );
}

#[test]
fn formula_like_cells_are_neutralised_in_csv() {
    let text = csv_text(&[record("=HYPERLINK(\"http://evil\")")]);
    assert!(
        text.contains(",\"'=HYPERLINK(\"\"http://evil\"\")\","),
        "{text}"
    );
    for (title, safe) in [("+1", "'+1"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)")] {
        let text = csv_text(&[record(title)]);
        assert!(text.contains(&format!(",{safe},")), "{text}");
    }
    assert_eq!(spreadsheet_safe("星辰 = 旅人"), "星辰 = 旅人");
}

#[test]
fn csv_starts_with_a_bom_only_when_asked() {
    let with = export(
        ExportFormat::Csv,
        &[record("星辰旅人")],
        &ExportOptions {
            bom: true,
            ..ExportOptions::default()
        },
    );
    assert_eq!(&with[..3], b"\xEF\xBB\xBF");
    assert_eq!(&with[3..], csv_text(&[record("星辰旅人")]).as_bytes());
    assert!(csv_text(&[]).starts_with("page_url,"));
}

#[test]
fn the_streamed_json_array_is_what_serde_json_prints_for_the_whole_slice() {
    let mut second = record("第二");
    second.id = 2;
    second.evidence.clear();
    second.chapters.clear();
    for records in [vec![], vec![record("星辰旅人")], vec![record("一"), second]] {
        let streamed = export(ExportFormat::Json, &records, &ExportOptions::default());
        let mut whole = serde_json::to_vec_pretty(&records).unwrap();
        whole.push(b'\n');
        assert_eq!(
            String::from_utf8(streamed.clone()).unwrap(),
            String::from_utf8(whole).unwrap()
        );
        let parsed: Vec<MatchRecord> = serde_json::from_slice(&streamed).unwrap();
        assert_eq!(parsed, records);
    }
}

#[test]
fn ndjson_has_one_whole_record_per_line() {
    let mut second = record("第二\n行");
    second.id = 2;
    let records = [record("星辰旅人"), second];
    let text = String::from_utf8(export(
        ExportFormat::Ndjson,
        &records,
        &ExportOptions::default(),
    ))
    .unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for (line, record) in lines.iter().zip(&records) {
        let parsed: MatchRecord = serde_json::from_str(line).unwrap();
        assert_eq!(&parsed, record);
    }
    let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(first["id"], 1);
    assert_eq!(first["evidence"][0]["page_end"], 3);
}

#[test]
fn rows_that_do_not_fit_their_table_are_refused() {
    #[derive(serde::Serialize)]
    struct Bad(i64);
    impl TableRow for Bad {
        fn cells(&self) -> Vec<Cell<'_>> {
            vec![Cell::Integer(self.0)]
        }
    }
    let table = Table::new("t", vec![Column::text("name")]);
    let mut out = Vec::new();
    let mut writer = TableWriter::new(
        ExportFormat::Csv,
        &table,
        &mut out,
        &ExportOptions::default(),
    )
    .unwrap();
    let error = writer.write(&Bad(1)).unwrap_err().to_string();
    assert!(
        error.contains("column name of t holds Text values"),
        "{error}"
    );
    let wide = Table::new("t", vec![Column::integer("a"), Column::integer("b")]);
    let mut writer = TableWriter::new(
        ExportFormat::Xlsx,
        &wide,
        Vec::new(),
        &ExportOptions::default(),
    )
    .unwrap();
    let error = writer.write(&Bad(1)).unwrap_err().to_string();
    assert!(error.contains("1 cells for 2 columns"), "{error}");
}

/// The parts of an XLSX file, by name.
fn unzip(xlsx: &[u8]) -> std::collections::BTreeMap<String, String> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(xlsx)).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index(i).unwrap();
            let mut text = String::new();
            file.read_to_string(&mut text).unwrap();
            (file.name().unwrap().to_string(), text)
        })
        .collect()
}

/// The XML of cell `reference` (`"D2"`) in `sheet`.
fn cell<'x>(sheet: &'x str, reference: &str) -> &'x str {
    let start = sheet
        .find(&format!("<c r=\"{reference}\""))
        .unwrap_or_else(|| panic!("no cell {reference} in {sheet}"));
    let end = sheet[start..]
        .find("</c>")
        .map_or(sheet.len(), |e| start + e + 4);
    &sheet[start..end]
}

/// The value of the first attribute `name="…"` in `xml`, a number.
fn number_attribute(xml: &str, name: &str) -> usize {
    let value = xml
        .split(&format!(" {name}=\""))
        .nth(1)
        .unwrap_or_else(|| panic!("no {name} in {xml}"));
    value[..value.find('"').unwrap()].parse().unwrap()
}

#[test]
fn xlsx_cells_are_typed_and_the_sheet_is_ready_to_filter() {
    let mut removed = record("=HYPERLINK(\"http://evil\")");
    removed.removed_at = Some(Utc.with_ymd_and_hms(2026, 11, 2, 9, 30, 15).unwrap());
    let xlsx = export(
        ExportFormat::Xlsx,
        &[record("星辰旅人"), removed],
        &ExportOptions::default(),
    );
    let parts = unzip(&xlsx);
    let sheet = &parts["xl/worksheets/sheet1.xml"];
    assert!(parts["xl/workbook.xml"].contains("<sheet name=\"matches\""));

    // Header: bold strings, top row frozen, autofilter over header and both rows.
    assert!(cell(sheet, "A1").contains("<t>page_url</t>"), "{sheet}");
    assert!(cell(sheet, "O1").contains("<t>review</t>"));
    let header_style = number_attribute(cell(sheet, "A1"), "s");
    let styles = &parts["xl/styles.xml"];
    let xfs = &styles[styles.find("<cellXfs").unwrap()..];
    let xf = xfs.split("<xf ").nth(header_style + 1).unwrap();
    let font = number_attribute(xf, "fontId");
    let fonts = &styles[styles.find("<fonts").unwrap()..];
    assert!(
        fonts
            .split("<font>")
            .nth(font + 1)
            .unwrap()
            .starts_with("<b/>"),
        "{styles}"
    );
    assert!(
        sheet.contains("<pane ySplit=\"1\" topLeftCell=\"A2\""),
        "{sheet}"
    );
    assert!(sheet.contains("<autoFilter ref=\"A1:P3\"/>"), "{sheet}");
    assert!(
        sheet.contains("<col min=\"1\" max=\"1\" width=\"48.7"),
        "{sheet}"
    );

    // Numbers are numbers, dates are date serials with a date format, text is text.
    assert_eq!(cell(sheet, "D2"), "<c r=\"D2\"><v>0.9877</v></c>");
    assert_eq!(cell(sheet, "L2"), "<c r=\"L2\"><v>420</v></c>");
    let first_seen = cell(sheet, "G2");
    assert!(first_seen.contains("<v>46327.333333333"), "{first_seen}");
    assert!(
        first_seen.contains(" s=\""),
        "a date-time has a format: {first_seen}"
    );
    assert!(
        styles.contains("formatCode=\"yyyy-mm-dd hh:mm:ss\""),
        "{styles}"
    );
    assert!(cell(sheet, "C2").contains("t=\"inlineStr\"><is><t>星辰旅人</t>"));
    assert!(!sheet.contains("<c r=\"M2\""), "no removal date, no cell");
    assert!(cell(sheet, "M3").contains("<v>46328.396006944"), "{sheet}");

    // The formula-like title is a string cell, kept as it is, with the quote prefix; no
    // cell of the sheet is a formula.
    let title = cell(sheet, "C3");
    assert!(title.contains("t=\"inlineStr\""), "{title}");
    assert!(
        title.contains("<t>=HYPERLINK(\"http://evil\")</t>"),
        "{title}"
    );
    assert!(!sheet.contains("<f>"), "{sheet}");
    let style = number_attribute(title, "s");
    assert!(
        xfs.split("<xf ")
            .nth(style + 1)
            .unwrap()
            .contains("quotePrefix=\"1\""),
        "{styles}"
    );
}

#[test]
fn an_xlsx_export_too_long_for_one_sheet_continues_on_the_next() {
    let table = Table::new("daily", vec![Column::integer("n"), Column::date("day")]);
    #[derive(serde::Serialize)]
    struct Row(i64);
    impl TableRow for Row {
        fn cells(&self) -> Vec<Cell<'_>> {
            let day =
                NaiveDate::from_ymd_opt(2026, 1, 1).unwrap() + chrono::Days::new(self.0 as u64);
            vec![Cell::Integer(self.0), Cell::Date(day)]
        }
    }
    let mut out = Vec::new();
    let mut sink =
        XlsxSink::with_rows_per_sheet(&mut out, &table, &ExportOptions::default(), 2).unwrap();
    for n in 0..5 {
        sink.write(&Row(n).cells()).unwrap();
    }
    sink.finish().unwrap();
    let parts = unzip(&out);
    let workbook = &parts["xl/workbook.xml"];
    for name in ["daily", "daily (2)", "daily (3)"] {
        assert!(
            workbook.contains(&format!("<sheet name=\"{name}\"")),
            "{workbook}"
        );
    }
    let third = &parts["xl/worksheets/sheet3.xml"];
    assert!(
        cell(third, "A1").contains("<t>n</t>"),
        "each sheet has the header"
    );
    assert!(cell(third, "A2").contains("<v>4</v>"), "{third}");
    assert!(
        cell(third, "B2").contains("<v>46027</v>"),
        "2026-01-05: {third}"
    );
    assert!(third.contains("<autoFilter ref=\"A1:B2\"/>"), "{third}");
    assert!(parts["xl/worksheets/sheet1.xml"].contains("<autoFilter ref=\"A1:B3\"/>"));
}

#[test]
fn text_longer_than_an_excel_cell_is_cut_with_an_ellipsis() {
    let long = "章".repeat(40_000);
    let mut long_title = record(&long);
    long_title.chapters.clear();
    let xlsx = export(ExportFormat::Xlsx, &[long_title], &ExportOptions::default());
    let sheet = &unzip(&xlsx)["xl/worksheets/sheet1.xml"];
    let title = cell(sheet, "C2");
    let text = &title[title.find("<t>").unwrap() + 3..title.find("</t>").unwrap()];
    assert_eq!(text.encode_utf16().count(), 32_767);
    assert!(text.ends_with("章…"));
    // CSV has no such limit.
    assert!(csv_text(&[record(&long)]).contains(&long));
}

mod round_trips {
    //! Any record, whatever its text holds (quotes, separators, line breaks, control
    //! characters, formula-like starts, any Unicode), reads back from every export format as
    //! what was written (CSV cells as `spreadsheet_safe` makes them).
    use proptest::prelude::*;

    use super::*;

    fn records(texts: Vec<(String, String, f64)>) -> Vec<MatchRecord> {
        texts
            .into_iter()
            .enumerate()
            .map(|(i, (title, url, score))| {
                let mut record = record(&title);
                record.id = i as i64 + 1;
                record.page_url = url.clone();
                record.page_title = Some(url);
                record.score = score;
                record
            })
            .collect()
    }

    /// The records with scores rounded to 12 decimals.
    fn exact(mut records: Vec<MatchRecord>) -> Vec<MatchRecord> {
        for record in &mut records {
            record.score = (record.score * 1e12).round() / 1e12;
        }
        records
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn every_export_reads_back_as_the_records_it_was_written_from(
            texts in proptest::collection::vec((any::<String>(), any::<String>(), 0.0f64..=1.0), 0..6)
        ) {
            let records = records(texts);
            let options = ExportOptions::default();

            // CSV, read by the csv crate.
            let csv = export(ExportFormat::Csv, &records, &options);
            let mut reader = csv::Reader::from_reader(&csv[..]);
            let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
            prop_assert_eq!(&header, &CSV_HEADER.iter().map(|h| h.to_string()).collect::<Vec<_>>());
            let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
            prop_assert_eq!(rows.len(), records.len());
            let column = |name: &str| CSV_HEADER.iter().position(|h| *h == name).unwrap();
            for (row, record) in rows.iter().zip(&records) {
                prop_assert_eq!(&row[column("page_url")], &*spreadsheet_safe(&record.page_url));
                prop_assert_eq!(&row[column("work_title")], &*spreadsheet_safe(&record.work_title));
                let score: f64 = row[column("score")].parse().unwrap();
                prop_assert!((score - record.score).abs() <= 0.00005, "{} vs {}", score, record.score);
            }

            // JSON and NDJSON, read by serde_json.
            // (serde_json's default parser may miss a float by one unit in the last place:
            // scores are compared within 1e-12, everything else exactly.)
            let json = export(ExportFormat::Json, &records, &options);
            let parsed: Vec<MatchRecord> = serde_json::from_slice(&json).unwrap();
            prop_assert_eq!(&exact(parsed), &exact(records.clone()));
            let ndjson = String::from_utf8(export(ExportFormat::Ndjson, &records, &options)).unwrap();
            let lines: Vec<MatchRecord> =
                ndjson.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
            prop_assert_eq!(&exact(lines), &exact(records.clone()));

            // XLSX: one row per record under the header, and XML without raw control characters.
            let xlsx = export(ExportFormat::Xlsx, &records, &options);
            let parts = unzip(&xlsx);
            let sheet = &parts["xl/worksheets/sheet1.xml"];
            prop_assert_eq!(sheet.matches("<row ").count(), records.len() + 1);
            prop_assert!(
                !sheet.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')),
                "a raw control character in the sheet"
            );
        }
    }
}
