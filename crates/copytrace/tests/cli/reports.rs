//! `copytrace report weekly` (issue 40): two rights holders' weekly reports and the staff
//! report arrive at a real SMTP server started here; every figure of each, read back from the
//! XLSX attachment with calamine, equals what `copytrace stats … --json` prints for the same
//! period and holder; a holder's report holds none of another holder's works; sending the
//! same period again sends nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Cursor;

use calamine::{Data, DataType, Reader, Xlsx};
use chrono::{Duration, SecondsFormat, Utc};
use copytrace::demo;

use crate::helpers::{TestSite, Workspace, library_text};
use mail_parser::MimeHeaders;

use crate::smtp_support::{Mail, start_smtp};

/// The works of the two holders: Yuewen's are published in the period (xingchen-ch1) or have
/// no publication time and enter the library in it (xingchen-ch2); Zongheng's are published
/// long before (jianghu-ch1) or in the period (news-harbor).
fn write_catalog(workspace: &Workspace) -> std::path::PathBuf {
    let yesterday = (Utc::now() - Duration::days(1)).to_rfc3339_opts(SecondsFormat::Secs, true);
    let mut csv = String::from("external_id,title,author,rights_holder,path,published_at\n");
    for (id, holder, published) in [
        ("xingchen-ch1", "Yuewen", yesterday.as_str()),
        ("xingchen-ch2", "Yuewen", ""),
        ("jianghu-ch1", "Zongheng", "2020-01-01T00:00:00Z"),
        ("news-harbor", "Zongheng", yesterday.as_str()),
    ] {
        workspace.write(&format!("catalog/works/{id}.txt"), library_text(id));
        csv.push_str(&format!(
            "{id},{id},作者,{holder},works/{id}.txt,{published}\n"
        ));
    }
    workspace.write("catalog/catalog.csv", csv)
}

/// The figures of the workbook's summary sheet, and each other sheet's rows by header.
struct Workbook {
    summary: BTreeMap<String, Option<f64>>,
    sheets: BTreeMap<String, Vec<BTreeMap<String, Data>>>,
}

fn read_workbook(bytes: &[u8]) -> Workbook {
    let mut xlsx: Xlsx<_> = Xlsx::new(Cursor::new(bytes.to_vec())).expect("an XLSX workbook");
    let mut sheets = BTreeMap::new();
    for name in xlsx.sheet_names() {
        let range = xlsx.worksheet_range(&name).expect("a worksheet");
        let mut rows = range.rows();
        let header: Vec<String> = rows
            .next()
            .expect("a header row")
            .iter()
            .map(|c| c.to_string())
            .collect();
        let rows: Vec<BTreeMap<String, Data>> = rows
            .map(|row| header.iter().cloned().zip(row.iter().cloned()).collect())
            .collect();
        sheets.insert(name, rows);
    }
    let summary = sheets["summary"]
        .iter()
        .map(|row: &BTreeMap<String, Data>| {
            (
                row["figure"].to_string(),
                row.get("value").and_then(|v| v.as_f64()),
            )
        })
        .collect();
    Workbook { summary, sheets }
}

/// A received report: its recipients, subject, HTML and text bodies, and workbook.
struct Received {
    to: Vec<String>,
    subject: String,
    html: String,
    text: String,
    workbook: Workbook,
}

fn parse(mail: &Mail) -> Received {
    let message = mail_parser::MessageParser::default()
        .parse(mail.data.as_bytes())
        .expect("a MIME message");
    let attachment = message.attachment(0).expect("the workbook is attached");
    assert!(
        attachment
            .attachment_name()
            .is_some_and(|n| n.starts_with("copytrace-weekly-") && n.ends_with(".xlsx")),
        "{:?}",
        attachment.attachment_name()
    );
    Received {
        to: mail.to.clone(),
        subject: message.subject().unwrap_or_default().to_owned(),
        html: message.body_html(0).expect("an HTML body").into_owned(),
        text: message.body_text(0).expect("a text body").into_owned(),
        workbook: read_workbook(attachment.contents()),
    }
}

/// Whether two figures are the same, to the 15 significant digits a spreadsheet keeps.
fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-12 * b.abs().max(1.0),
        (a, b) => a == b,
    }
}

#[test]
fn weekly_reports_arrive_once_with_the_figures_of_stats() {
    let workspace = Workspace::new();
    let catalog = write_catalog(&workspace);
    workspace.ok(&["library", "import", catalog.to_str().unwrap()]);
    workspace.ok(&[
        "rights-holder",
        "set",
        "Yuewen",
        "--legal-name",
        "上海阅文信息技术有限公司",
        "--address",
        "上海市浦东新区碧波路690号",
        "--email",
        "legal@yuewen.example",
        "--signature",
        "/s/ 张三",
        "--language",
        "zh",
    ]);
    workspace.ok(&[
        "rights-holder",
        "set",
        "Zongheng",
        "--email",
        "reports@zongheng.example",
        "--language",
        "en",
    ]);

    // Day one: the copies are found; then two pages disappear and the removal check records
    // it (a removal of each holder's).
    let site = TestSite::sample();
    let addr = site.addr();
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    workspace.ok(&["match"]);
    drop(site);
    let mut changed = demo::sample_site();
    changed
        .pages
        .retain(|p| p.path != "/book/xingchen/2.html" && p.path != "/news/2026/harbor.html");
    let _site = TestSite::serve_at(changed, addr);
    workspace.ok(&[
        "dedup",
        "--recheck-allow-private-addresses",
        "--recheck-delay",
        "0",
    ]);
    // A sent notice of Yuewen's whose copy is still online: it awaits follow-up.
    let evidence = workspace.path("evidence");
    workspace.ok(&[
        "notice",
        "create",
        "--site",
        &addr.to_string(),
        "--rights-holder",
        "Yuewen",
        "--evidence-dir",
        evidence.to_str().unwrap(),
        "--no-screenshot",
    ]);
    let notices: Vec<serde_json::Value> =
        serde_json::from_str(&workspace.ok(&["notice", "list", "--json"]).stdout).unwrap();
    workspace.ok(&["notice", "sent", &notices[0]["id"].to_string()]);

    let today = Utc::now().date_naive();
    let (from, to) = (
        (today - Duration::days(3)).to_string(),
        (today + Duration::days(1)).to_string(),
    );
    let (smtp, mailbox) = start_smtp();
    let smtp_url = format!("smtp://{smtp}");
    let send = || {
        workspace.run(&[
            "report",
            "weekly",
            "--from",
            &from,
            "--to",
            &to,
            "--send",
            "--smtp-url",
            &smtp_url,
            "--report-staff-email",
            "staff@copytrace.example",
        ])
    };
    let sent = send();
    assert_eq!(sent.code, Some(0), "{sent:#?}");
    assert!(
        sent.stdout.contains("3 sent, 0 sent before"),
        "Yuewen, Zongheng and staff: {sent:#?}"
    );
    let received: Vec<Received> = mailbox.lock().unwrap().iter().map(parse).collect();
    assert_eq!(received.len(), 3);

    let stats = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["stats"];
        all.extend_from_slice(args);
        all.push("--json");
        serde_json::from_str(&workspace.ok(&all).stdout).expect("stats --json")
    };
    let sum = |rows: &serde_json::Value, field: &str| -> f64 {
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| r[field].as_f64().unwrap())
            .sum()
    };
    let works_of: BTreeMap<&str, BTreeSet<&str>> = [
        ("Yuewen", BTreeSet::from(["xingchen-ch1", "xingchen-ch2"])),
        ("Zongheng", BTreeSet::from(["jianghu-ch1", "news-harbor"])),
    ]
    .into();
    let mut seen = BTreeSet::new();
    for (holder, address) in [
        (Some("Yuewen"), "legal@yuewen.example"),
        (Some("Zongheng"), "reports@zongheng.example"),
        (None, "staff@copytrace.example"),
    ] {
        let report = received
            .iter()
            .find(|r| r.to == [address])
            .unwrap_or_else(|| panic!("no report to {address}"));
        let scope: Vec<&str> = holder.map_or(Vec::new(), |h| vec!["--rights-holder", h]);
        let with = |args: &[&str]| -> serde_json::Value {
            let mut all = args.to_vec();
            all.extend_from_slice(&scope);
            stats(&all)
        };
        let period = ["--since", from.as_str(), "--until", to.as_str()];
        let holders = with(&[&["holders"][..], &period].concat());
        let daily = with(&[&["daily"][..], &period].concat());
        let to_date = with(&["holders", "--until", &to]);
        let notices = with(&["notices"]);
        let sites = with(&["sites", "--by-domain", "--until", &to]);
        let ttp = with(&[
            "time-to-piracy",
            "--until",
            &to,
            "--published-since",
            &from,
            "--published-until",
            &to,
        ]);
        let figures = &report.workbook.summary;
        let expected: BTreeMap<String, Option<f64>> = [
            ("new_copies", Some(sum(&holders, "copies"))),
            ("removals", Some(sum(&daily, "removals"))),
            ("pending_reviews", Some(sum(&to_date, "pending"))),
            (
                "notices_awaiting_follow_up",
                Some(sum(&notices, "awaiting_follow_up")),
            ),
            ("sites", Some(sites.as_array().unwrap().len() as f64)),
            (
                "works_published_copied",
                Some(ttp["works"].as_array().unwrap().len() as f64),
            ),
            (
                "publication_time_unknown",
                Some(ttp["publication_unknown"].as_array().unwrap().len() as f64),
            ),
            (
                "median_hours_to_first_copy",
                ttp["overall"]["median"].as_f64(),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        // A spreadsheet keeps 15 significant digits: hours may differ in the last one.
        assert_eq!(
            figures.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "{address}"
        );
        for (figure, value) in figures {
            assert!(
                same(*value, expected[figure]),
                "{address}: {figure} is {value:?} in the report, {:?} by stats",
                expected[figure]
            );
        }

        // The sites sheet is `stats sites` row for row.
        let sheet: Vec<(String, f64, f64, f64)> = report.workbook.sheets["sites"]
            .iter()
            .map(|r| {
                (
                    r["site"].to_string(),
                    r["copies"].as_f64().unwrap(),
                    r["removed"].as_f64().unwrap(),
                    r["removal_rate"].as_f64().unwrap(),
                )
            })
            .collect();
        let json: Vec<(String, f64, f64, f64)> = sites
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["site"].as_str().unwrap().to_owned(),
                    r["copies"].as_f64().unwrap(),
                    r["removed"].as_f64().unwrap(),
                    r["removal_rate"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(sheet.len(), json.len(), "{address}");
        for (row, stat) in sheet.iter().zip(&json) {
            assert!(
                row.0 == stat.0
                    && same(Some(row.1), Some(stat.1))
                    && same(Some(row.2), Some(stat.2))
                    && same(Some(row.3), Some(stat.3)),
                "{address}: {row:?} in the report, {stat:?} by stats"
            );
        }

        // The body shows the same figures, in the holder's language.
        let new_copies = expected["new_copies"].unwrap() as u64;
        assert!(
            report.subject.contains(&new_copies.to_string()),
            "{}",
            report.subject
        );
        match holder {
            Some("Yuewen") => {
                assert!(report.html.contains("各站点删除率"), "{}", report.html);
                // xingchen-ch2 has no publication time: said so, never 0.0 hours.
                assert!(
                    report.text.contains("xingchen-ch2: 发布时间未知"),
                    "{}",
                    report.text
                );
            }
            _ => assert!(
                report.html.contains("Removal rate by site"),
                "{}",
                report.html
            ),
        }

        // A holder's report is about its own works only.
        if let Some(holder) = holder {
            let own = &works_of[holder];
            let names: Vec<String> = report.workbook.sheets["holders"]
                .iter()
                .map(|r| r["name"].to_string())
                .collect();
            assert_eq!(names, [holder]);
            for row in &report.workbook.sheets["time_to_piracy"] {
                let work = row["work_external_id"].to_string();
                assert!(
                    own.contains(work.as_str()),
                    "{holder}'s report lists {work}"
                );
            }
            for other in works_of.values().flatten().filter(|w| !own.contains(*w)) {
                assert!(
                    !report.text.contains(other),
                    "{holder}: {other}\n{}",
                    report.text
                );
                assert!(!report.html.contains(other), "{holder}: {other}");
            }
        }
        seen.insert(address);
        // Not every figure is zero: the comparison could fail.
        assert!(new_copies > 0, "{address}: {expected:?}");
    }
    assert_eq!(seen.len(), 3);
    let total = |figure: &str| -> f64 {
        received
            .iter()
            .filter(|r| r.to != ["staff@copytrace.example"])
            .map(|r| r.workbook.summary[figure].unwrap())
            .sum()
    };
    let staff = received
        .iter()
        .find(|r| r.to == ["staff@copytrace.example"])
        .unwrap();
    for figure in [
        "new_copies",
        "removals",
        "pending_reviews",
        "notices_awaiting_follow_up",
    ] {
        assert_eq!(
            staff.workbook.summary[figure].unwrap(),
            total(figure),
            "the staff report's {figure} is every holder's"
        );
    }
    assert!(total("removals") >= 2.0 && total("pending_reviews") >= 1.0);
    assert_eq!(total("notices_awaiting_follow_up"), 1.0);

    // The same period again: nothing is sent.
    let again = send();
    assert_eq!(again.code, Some(0), "{again:#?}");
    assert!(again.stdout.contains("0 sent, 3 sent before"), "{again:#?}");
    assert_eq!(mailbox.lock().unwrap().len(), 3);
}

#[test]
fn without_send_a_weekly_report_is_printed_and_written_not_mailed() {
    let workspace = Workspace::new();
    let catalog = write_catalog(&workspace);
    workspace.ok(&["library", "import", catalog.to_str().unwrap()]);
    let out = workspace.path("yuewen.xlsx");
    let printed = workspace.ok(&[
        "report",
        "weekly",
        "--holder",
        "Yuewen",
        "--out",
        out.to_str().unwrap(),
    ]);
    // No profile e-mail: said so, with how to add one.
    assert!(
        printed.stdout.contains("not sent") && printed.stdout.contains("--email"),
        "{printed:#?}"
    );
    let workbook = read_workbook(&std::fs::read(&out).unwrap());
    assert_eq!(workbook.summary["new_copies"], Some(0.0));
    assert_eq!(
        workbook.sheets.keys().collect::<Vec<_>>(),
        [
            "daily",
            "holders",
            "notices",
            "sites",
            "summary",
            "time_to_piracy"
        ]
    );
    let refused = workspace.run(&["report", "weekly", "--out", out.to_str().unwrap()]);
    assert_eq!(refused.code, Some(1));
    assert!(refused.one_line_error().contains("--out"), "{refused:#?}");
    let empty = workspace.run(&[
        "report",
        "weekly",
        "--from",
        "2026-11-09",
        "--to",
        "2026-11-02",
    ]);
    assert!(empty.one_line_error().contains("empty"), "{empty:#?}");
    // The plain report is unchanged.
    workspace.ok(&["report", "--rights-holder", "Yuewen"]);
}

#[test]
fn a_notice_exports_as_url_lists_per_engine_and_as_an_abuse_report() {
    let workspace = Workspace::new();
    let catalog = write_catalog(&workspace);
    workspace.ok(&["library", "import", catalog.to_str().unwrap()]);
    workspace.ok(&[
        "rights-holder",
        "set",
        "Yuewen",
        "--legal-name",
        "上海阅文信息技术有限公司",
        "--address",
        "上海市浦东新区碧波路690号",
        "--language",
        "zh",
    ]);
    let site = TestSite::sample();
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    workspace.ok(&["match"]);
    // Without a contact in the profile the cn notice is refused; with a phone it is written.
    workspace.ok(&[
        "rights-holder",
        "set",
        "Yuewen",
        "--phone",
        "+86 21 0000 0000",
    ]);
    let evidence = workspace.path("evidence");
    let host = site.addr().to_string();
    workspace.ok(&[
        "notice",
        "create",
        "--site",
        &host,
        "--rights-holder",
        "Yuewen",
        "--evidence-dir",
        evidence.to_str().unwrap(),
        "--no-screenshot",
    ]);
    let notices: Vec<serde_json::Value> =
        serde_json::from_str(&workspace.ok(&["notice", "list", "--json"]).stdout).unwrap();
    let id = notices[0]["id"].to_string();
    let urls: BTreeSet<String> = [
        site.url("/book/xingchen/1.html"),
        site.url("/book/xingchen/2.html"),
    ]
    .into();

    for engine in ["google", "bing", "baidu"] {
        let list = workspace
            .ok(&["notice", "export", &id, "--format", engine])
            .stdout;
        let listed: BTreeSet<String> = list.lines().map(str::to_owned).collect();
        assert_eq!(listed, urls, "{engine}:\n{list}");
    }

    let abuse = workspace
        .ok(&[
            "notice",
            "export",
            &id,
            "--format",
            "abuse",
            "--ip",
            "203.0.113.7",
        ])
        .stdout;
    assert!(
        abuse.contains("滥用投诉") && abuse.contains("203.0.113.7"),
        "{abuse}"
    );
    for url in &urls {
        assert!(abuse.contains(url.as_str()), "{abuse}");
    }
    let english = workspace
        .ok(&["notice", "export", &id, "--format", "abuse", "--lang", "en"])
        .stdout;
    assert!(
        english.contains("Host IP addresses: not known"),
        "{english}"
    );
    assert_eq!(
        english
            .matches("Evidence package manifest SHA-256: ")
            .count(),
        2,
        "{english}"
    );

    // Without a contact (the phone cleared), the abuse report is refused naming it.
    workspace.ok(&["rights-holder", "set", "Yuewen", "--phone", ""]);
    let refused = workspace.run(&["notice", "export", &id, "--format", "abuse"]);
    assert_eq!(refused.code, Some(1), "{refused:#?}");
    assert!(
        refused
            .one_line_error()
            .contains("complainant's contact (e-mail or phone)"),
        "{refused:#?}"
    );
}

/// The summary figures `copytrace stats … --json` gives for `holder` (`None`: every holder)
/// over `[from, to)`, by the rule the workbook's summary sheet names for each.
fn summary_by_stats(
    workspace: &Workspace,
    holder: Option<&str>,
    from: &str,
    to: &str,
) -> BTreeMap<String, Option<f64>> {
    let stats = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["stats"];
        all.extend_from_slice(args);
        if let Some(holder) = holder {
            all.extend_from_slice(&["--rights-holder", holder]);
        }
        all.push("--json");
        serde_json::from_str(&workspace.ok(&all).stdout).expect("stats --json")
    };
    let sum = |rows: &serde_json::Value, field: &str| -> f64 {
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| r[field].as_f64().unwrap())
            .sum()
    };
    let ttp = stats(&[
        "time-to-piracy",
        "--until",
        to,
        "--published-since",
        from,
        "--published-until",
        to,
    ]);
    [
        (
            "new_copies",
            Some(sum(
                &stats(&["holders", "--since", from, "--until", to]),
                "copies",
            )),
        ),
        (
            "removals",
            Some(sum(
                &stats(&["daily", "--since", from, "--until", to]),
                "removals",
            )),
        ),
        (
            "pending_reviews",
            Some(sum(&stats(&["holders", "--until", to]), "pending")),
        ),
        (
            "notices_awaiting_follow_up",
            Some(sum(&stats(&["notices"]), "awaiting_follow_up")),
        ),
        (
            "sites",
            Some(
                stats(&["sites", "--by-domain", "--until", to])
                    .as_array()
                    .unwrap()
                    .len() as f64,
            ),
        ),
        (
            "works_published_copied",
            Some(ttp["works"].as_array().unwrap().len() as f64),
        ),
        (
            "publication_time_unknown",
            Some(ttp["publication_unknown"].as_array().unwrap().len() as f64),
        ),
        (
            "median_hours_to_first_copy",
            ttp["overall"]["median"].as_f64(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// A `copytrace serve` process of the test's, killed (by its own pid) when dropped.
struct Serving(std::process::Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// How many weekly-reports jobs are done, read from the workspace's database.
fn reports_jobs_done(workspace: &Workspace) -> i64 {
    use sqlx::Connection;
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let mut db = sqlx::SqliteConnection::connect(&workspace.db)
            .await
            .unwrap();
        let (done,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM jobs WHERE kind = 'weekly-reports' AND state = 'done'",
        )
        .fetch_one(&mut db)
        .await
        .unwrap();
        done
    })
}

/// `copytrace serve` with a weekly-report schedule that fires every two seconds (six fields:
/// seconds first) mails the last seven days' reports through a real SMTP server, with the
/// figures of `stats … --json` for that period; a restart in the same week runs the job again
/// and sends nothing twice.
#[test]
fn serve_mails_the_weekly_reports_on_schedule_once_even_across_a_restart() {
    let workspace = Workspace::new();
    let catalog = write_catalog(&workspace);
    workspace.ok(&["library", "import", catalog.to_str().unwrap()]);
    for (holder, email) in [
        ("Yuewen", "legal@yuewen.example"),
        ("Zongheng", "reports@zongheng.example"),
    ] {
        workspace.ok(&[
            "rights-holder",
            "set",
            holder,
            "--email",
            email,
            "--language",
            "en",
        ]);
    }
    let site = TestSite::sample();
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    workspace.ok(&["match"]);
    // The period a report sent today covers ends before today: the copies found now are moved
    // two days back (pages and matches alike), as if found then, so that it counts them.
    {
        use sqlx::Connection;
        tokio::runtime::Runtime::new().unwrap().block_on(async {
            let mut db = sqlx::SqliteConnection::connect(&workspace.db)
                .await
                .unwrap();
            let two_days = Duration::days(2).num_microseconds().unwrap();
            for table in ["pages", "matches"] {
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "UPDATE {table} SET first_seen = first_seen - $1, last_seen = last_seen - $1"
                )))
                .bind(two_days)
                .execute(&mut db)
                .await
                .unwrap();
            }
        });
    }
    let today = Utc::now().date_naive();
    let (from, to) = ((today - Duration::days(7)).to_string(), today.to_string());

    let (smtp, mailbox) = start_smtp();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let serve = || {
        Serving(
            crate::helpers::copytrace_std()
                .current_dir(workspace.root())
                .args([
                    "--db",
                    &workspace.db,
                    "--smtp-url",
                    &format!("smtp://{smtp}"),
                    "--report-staff-email",
                    "staff@copytrace.example",
                    "serve",
                    "--listen",
                    &format!("127.0.0.1:{port}"),
                    "--sweep-secs",
                    "1",
                    "--weekly-report-cron",
                    "*/2 * * * * *",
                ])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("copytrace serve starts"),
        )
    };
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let start = std::time::Instant::now();
        while !done() {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(90),
                "waited 90 s for {what}"
            );
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
    };

    let first = serve();
    wait_for("the three reports", &|| mailbox.lock().unwrap().len() >= 3);
    wait_for("the job to finish", &|| reports_jobs_done(&workspace) == 1);
    drop(first);
    let received: Vec<Received> = mailbox.lock().unwrap().iter().map(parse).collect();
    assert_eq!(received.len(), 3);
    for (holder, address) in [
        (Some("Yuewen"), "legal@yuewen.example"),
        (Some("Zongheng"), "reports@zongheng.example"),
        (None, "staff@copytrace.example"),
    ] {
        let report = received
            .iter()
            .find(|r| r.to == [address])
            .unwrap_or_else(|| panic!("no report to {address}"));
        let last = (today - Duration::days(1)).to_string();
        assert!(
            report.subject.contains(&format!("({from} to {last})")),
            "the last seven days: {}",
            report.subject
        );
        let expected = summary_by_stats(&workspace, holder, &from, &to);
        let figures = &report.workbook.summary;
        assert_eq!(
            figures.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>()
        );
        for (figure, value) in figures {
            assert!(
                same(*value, expected[figure]),
                "{address}: {figure} is {value:?} in the report, {:?} by stats",
                expected[figure]
            );
        }
        assert!(
            figures["new_copies"].unwrap() > 0.0,
            "{address}: the copies of the period are counted"
        );
    }

    // A restart in the same week: the schedule fires again, a new job runs, nothing is sent.
    let second = serve();
    wait_for("the restarted process's job", &|| {
        reports_jobs_done(&workspace) == 2
    });
    std::thread::sleep(std::time::Duration::from_secs(3));
    drop(second);
    assert_eq!(mailbox.lock().unwrap().len(), 3, "no report is sent twice");
    drop(site);
}
