//! `library import`, `library rm` and licensed hosts, through the binary.

use copytrace::demo::SampleSite;

use crate::helpers::{
    TestSite, Workspace, add_crawl_match, crawl_and_match, html_page, write_sample_library,
};

/// A distinct text of about 300 characters for work `n`: sentences drawn from a fixed pool by
/// a pseudo-random walk seeded with `n`, so no two works share more than a sentence or two.
fn generated_text(n: usize) -> String {
    const POOL: [&str; 24] = [
        "山门外的老槐树又开了花",
        "少年背着竹篓走过石桥",
        "掌柜把算盘拨得噼啪作响",
        "远处的钟声压过了雨声",
        "她把信纸折成一只小船",
        "驿站的马嘶鸣着不肯进门",
        "城墙上的旗帜被风撕开一角",
        "老人讲起三十年前的旧事",
        "灯笼在屋檐下轻轻摇晃",
        "河面上漂来一盏莲花灯",
        "书生在墙上题了半首诗",
        "铁匠铺里火星四溅",
        "孩子们追着纸鸢跑过田埂",
        "客栈的门板吱呀一声开了",
        "月光照在青石板路上",
        "船夫唱起不知名的渔歌",
        "药铺里弥漫着苦涩的香气",
        "剑客在雪地里站了一夜",
        "集市上叫卖声此起彼伏",
        "她在窗前绣着一对鸳鸯",
        "山洪冲垮了村口的木桥",
        "县令的轿子停在衙门前",
        "庙里的香火忽明忽暗",
        "信鸽落在了将军的肩头",
    ];
    let mut state = (n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut text = format!("第{n}号作品\n");
    for _ in 0..24 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.push_str(POOL[(state % POOL.len() as u64) as usize]);
        text.push_str(if state.is_multiple_of(3) {
            "。\n"
        } else {
            "，"
        });
    }
    text.push('。');
    text
}

/// Writes a 50-row catalog whose rows 3 (a missing file), 5 (a bad date) and 8 (no title) are
/// bad; returns its path.
fn write_catalog(workspace: &Workspace) -> std::path::PathBuf {
    let mut csv =
        String::from("external_id,title,author,rights_holder,path,published_at,licensed_hosts\n");
    for n in 1..=50 {
        let path = format!("works/book-{n:02}.txt");
        if n != 3 {
            workspace.write(&format!("catalog/{path}"), generated_text(n));
        }
        let title = if n == 8 {
            String::new()
        } else {
            format!("书名{n}")
        };
        let date = if n == 5 { "2024-02-30" } else { "2024-03-01" };
        let holder = if n.is_multiple_of(2) {
            "Yuewen"
        } else {
            "Acme Books"
        };
        let hosts = if n == 1 {
            "partner.example;*.licensed.example"
        } else {
            ""
        };
        csv.push_str(&format!(
            "book-{n:02},{title},作者{n},{holder},{path},{date},{hosts}\n"
        ));
    }
    workspace.write("catalog/catalog.csv", csv)
}

#[test]
fn a_catalog_imports_its_good_rows_reports_bad_ones_by_line_and_imports_once() {
    let workspace = Workspace::new();
    let catalog = write_catalog(&workspace);
    let catalog = catalog.to_str().expect("UTF-8 path");

    let first = workspace.run(&["library", "import", catalog]);
    assert_eq!(first.code, Some(3), "bad rows exit 3: {first:#?}");
    // Row n is on line n + 1 (the header is line 1).
    for (line, why) in [(4, "book-03.txt"), (6, "2024-02-30"), (9, "title is empty")] {
        let reported = first
            .stderr
            .lines()
            .find(|l| l.contains(&format!("catalog.csv:{line}:")))
            .unwrap_or_else(|| panic!("line {line} is reported: {first:#?}"));
        assert!(reported.contains(why), "{reported}");
    }
    assert!(
        first
            .stdout
            .contains("47 row(s) imported: 47 added, 0 updated, 0 unchanged; 3 rejected"),
        "{first:#?}"
    );
    let works = workspace.works();
    assert_eq!(works.len(), 47);
    let book = works
        .iter()
        .find(|w| w["external_id"] == "book-01")
        .expect("book-01 imported");
    assert_eq!(book["title"], "书名1");
    assert_eq!(book["author"], "作者1");
    assert_eq!(book["published_at"], "2024-03-01T00:00:00Z");
    let shown = workspace.ok(&["library", "show", &book["id"].to_string(), "--json"]);
    let shown: serde_json::Value = serde_json::from_str(&shown.stdout).expect("JSON");
    assert_eq!(
        shown["licensed_hosts"],
        serde_json::json!(["licensed.example", "partner.example"])
    );

    let again = workspace.run(&["library", "import", catalog]);
    assert_eq!(again.code, Some(3), "{again:#?}");
    assert!(
        again
            .stdout
            .contains("47 row(s) imported: 0 added, 0 updated, 47 unchanged; 3 rejected"),
        "a second run changes nothing: {again:#?}"
    );
    assert_eq!(
        workspace.works(),
        works,
        "nothing moved, not even updated_at"
    );
}

#[test]
fn a_catalog_without_its_columns_is_refused_whole() {
    let workspace = Workspace::new();
    let catalog = workspace.write("catalog.csv", "id,name\n1,x\n");
    let refused = workspace.run(&["library", "import", catalog.to_str().expect("UTF-8")]);
    assert_eq!(refused.code, Some(1), "{refused:#?}");
    assert!(
        refused
            .one_line_error()
            .contains("lacks the column(s) external_id, title, author, rights_holder, path"),
        "{refused:#?}"
    );
    assert!(workspace.works().is_empty());
}

/// `(work external id, status)` of every exported match, from JSON.
fn exported(workspace: &Workspace, extra: &[&str]) -> Vec<(String, String)> {
    let mut args = vec!["export", "matches", "--format", "json"];
    args.extend_from_slice(extra);
    let run = workspace.ok(&args);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).expect("JSON");
    let mut pairs: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["work_external_id"].as_str().expect("id").to_owned(),
                r["status"].as_str().expect("status").to_owned(),
            )
        })
        .collect();
    pairs.sort();
    pairs.dedup();
    pairs
}

#[test]
fn matches_on_a_licensed_host_are_left_out_of_exports_and_reports() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    add_crawl_match(&workspace, &site);
    let before = exported(&workspace, &[]);
    assert!(!before.is_empty());
    assert!(before.iter().all(|(_, status)| status == "open"));

    // The test site is served on 127.0.0.1: license it (on any port) for every work.
    workspace.ok(&["rights-holder", "license", "add", "default", "127.0.0.1"]);
    assert!(
        exported(&workspace, &[]).is_empty(),
        "licensed matches are not exported by default"
    );
    let with_licensed = exported(&workspace, &["--include-licensed"]);
    assert_eq!(with_licensed.len(), before.len());
    assert!(with_licensed.iter().all(|(_, status)| status == "licensed"));
    let report = workspace.ok(&["report"]);
    assert!(
        report.stdout.contains("No infringing pages found."),
        "{report:#?}"
    );
    let csv = workspace.export_csv();
    assert!(csv.rows.is_empty(), "the CSV export leaves them out too");

    workspace.ok(&["rights-holder", "license", "rm", "default", "127.0.0.1"]);
    assert_eq!(exported(&workspace, &[]), before);
}

#[test]
fn a_removed_work_is_no_longer_matched_and_its_matches_stay_withdrawn() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    add_crawl_match(&workspace, &site);
    let before = exported(&workspace, &[]);
    let removed = &before[0].0;
    let id = workspace
        .works()
        .iter()
        .find(|w| w["external_id"] == removed.as_str())
        .expect("the work")["id"]
        .to_string();

    let rm = workspace.ok(&["library", "rm", &id]);
    assert!(rm.stdout.contains("withdrew work"), "{rm:#?}");
    let after = exported(&workspace, &[]);
    assert!(
        after.contains(&(removed.clone(), "withdrawn".to_owned())),
        "{after:?}"
    );

    // Matching everything again never finds the withdrawn work, and keeps its matches.
    workspace.ok(&["match", "--all"]);
    let rematched = exported(&workspace, &[]);
    assert_eq!(rematched, after);
    let shown = workspace.ok(&["library", "show", &id]);
    assert!(
        shown.stdout.contains("status:        withdrawn"),
        "{shown:#?}"
    );
    let again = workspace.ok(&["library", "rm", &id]);
    assert!(again.stdout.contains("already withdrawn"), "{again:#?}");
    let unknown = workspace.run(&["library", "rm", "9999"]);
    assert_eq!(unknown.code, Some(1), "{unknown:#?}");
    assert!(
        unknown.one_line_error().contains("work 9999 not found"),
        "{unknown:#?}"
    );
}

#[test]
fn adding_a_work_matches_only_the_stored_pages_that_may_copy_it() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let library = write_sample_library(&workspace);
    // Everything but news-harbor first; crawl and match the whole site.
    let later = workspace.path("later/news-harbor.txt");
    std::fs::create_dir_all(later.parent().expect("a parent")).expect("mkdir");
    std::fs::rename(library.join("news/2026/news-harbor.txt"), &later).expect("move");
    workspace.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    let (crawl, _) = crawl_and_match(&workspace, &site);
    assert!(crawl.stdout.contains("crawled 10 page(s)"), "{crawl:#?}");
    let pages = workspace.ok(&["match"]);
    assert!(
        pages.stdout.contains("matched 0 page(s)"),
        "nothing left: {pages:#?}"
    );

    let copies = site
        .expected_matches()
        .iter()
        .filter(|(_, work)| work == "news-harbor")
        .count();
    assert!(copies > 0, "the sample site copies news-harbor");
    let added = workspace.ok(&["library".as_ref(), "add".as_ref(), later.as_os_str()]);
    let due: usize = added
        .stdout
        .lines()
        .find_map(|l| {
            l.split(" stored page(s) may copy them")
                .next()
                .filter(|_| l.contains("may copy"))
        })
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("library add says which pages are due: {added:#?}"));
    assert!(due >= copies, "every copy is a candidate: {added:#?}");
    assert!(due < 10, "not every page of the site is: {added:#?}");

    let rematch = workspace.ok(&["match"]);
    assert!(
        rematch.stdout.contains(&format!("matched {due} page(s)")),
        "{rematch:#?}"
    );
    let found: std::collections::BTreeSet<(String, String)> =
        workspace.export_csv().pairs().into_iter().collect();
    assert_eq!(found, site.expected_matches());
}

/// A novel of `chapters` chapters of about 300 characters each, headed `第N章 …`, every
/// chapter a different text (characters drawn by a pseudo-random walk over common CJK).
fn novel(chapters: usize) -> String {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut text = String::from("长河落日\n\n");
    for n in 1..=chapters {
        text.push_str(&format!("第{n}章 风起之{n}\n"));
        for i in 0..300 {
            let c = char::from_u32(0x4E00 + (next() % 0x1400) as u32).expect("a CJK character");
            text.push(c);
            if i % 20 == 19 {
                text.push_str(if i % 60 == 59 { "。\n" } else { "，" });
            }
        }
        text.push('\n');
    }
    text
}

/// The text of chapter `n` of [`novel`], without its heading.
fn chapter_of(novel: &str, n: usize) -> &str {
    let start = novel
        .find(&format!("第{n}章 风起之{n}\n"))
        .expect("the chapter");
    let body = start + novel[start..].find('\n').expect("a heading line") + 1;
    let end = novel[body..]
        .find(&format!("第{}章", n + 1))
        .map_or(novel.len(), |e| body + e);
    &novel[body..end]
}

#[test]
fn a_page_copying_chapter_7_of_a_300_chapter_novel_names_the_novel_and_chapter_7() {
    let workspace = Workspace::new();
    let text = novel(300);
    let path = workspace.write("library/changhe.txt", &text);
    workspace.ok(&["library", "add", path.to_str().expect("UTF-8")]);
    let work = &workspace.works()[0];
    assert_eq!(work["chapter_count"], 300, "{work}");

    let copied = chapter_of(&text, 7);
    assert!(
        copied.chars().count() * 100 < text.chars().count(),
        "under 1% of the novel"
    );
    let body = format!(
        "<nav>首页 | 排行榜 | 书架</nav><h1>第七章</h1><p>{}</p><footer>上一章 下一章</footer>",
        copied.replace('\n', "</p><p>")
    );
    let site = TestSite::serve(SampleSite {
        pages: vec![html_page("/read/7.html", &body)],
    });
    crawl_and_match(&workspace, &site);

    let matches = workspace.export_json();
    assert_eq!(matches.len(), 1, "{matches:#?}");
    let found = &matches[0];
    assert_eq!(found["work_external_id"], "changhe");
    let chapters = found["chapters"].as_array().expect("chapters");
    assert_eq!(chapters.len(), 1, "{chapters:#?}");
    assert_eq!(chapters[0]["ordinal"], 6);
    assert_eq!(chapters[0]["title"], "第7章 风起之7");
    assert!(
        chapters[0]["coverage"].as_f64().expect("coverage") > 0.9,
        "{chapters:#?}"
    );
    assert!(found["coverage"].as_f64().expect("coverage") < 0.01);
    assert!(
        found["score"].as_f64().expect("score") > 0.9,
        "a strong match although a tiny share of the novel: {found:#}"
    );
    let csv = workspace.export_csv();
    assert!(
        csv.rows[0][csv.column("chapters")].starts_with("7:第7章 风起之7 ("),
        "{:?}",
        csv.rows[0]
    );
}
