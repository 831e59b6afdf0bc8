//! `copytrace evidence`: a crawled copy's evidence package holds the bytes the site really
//! served (their SHA-256 is the one stored at fetch time), a screenshot taken by a real headless
//! Chromium (installed by `./scripts/test`; the test fails without it), and verification
//! names every file that was altered, removed or added.

use std::path::Path;

use copytrace::demo::{SamplePage, SampleSite};
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{Store, sha256_hex};
use sqlx::Connection;

use crate::helpers::{Run, TestSite, Workspace, gbk, library_text};

/// A GBK chapter page copying the sample work `xingchen-ch1`, with text that looks like markup
/// (and must be escaped wherever the package shows it) inside a copied sentence.
pub(crate) fn copied_page() -> (SamplePage, Vec<u8>) {
    let work = library_text("xingchen-ch1");
    let paragraphs: String = work
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("<p>{l}</p>\n"))
        .collect::<String>()
        // Markup as text inside a copied sentence: shown in passages.html, escaped.
        .replacen("，镇子不大", "，&lt;i&gt;镇子不大", 1);
    let html = format!(
        "<!DOCTYPE html><html><head><meta charset=\"gbk\"><title>第一章</title></head><body>\
         <div id=\"content\">{paragraphs}</div></body></html>"
    );
    let body = gbk(&html);
    let page = SamplePage {
        path: "/book/1.html".into(),
        label: "GBK copy",
        content_type: "text/html; charset=gbk",
        body: body.clone(),
        copies: vec!["xingchen-ch1"],
        disallowed: false,
    };
    (page, body)
}

/// Adds the sample work (of `holder`), crawls the copy and matches it; returns the match id as
/// the JSON export lists it.
pub(crate) fn crawled_copy(workspace: &Workspace, site: &TestSite, holder: &str) -> i64 {
    let library = workspace.write("library/xingchen-ch1.txt", library_text("xingchen-ch1"));
    workspace.ok(&[
        "library".as_ref(),
        "add".as_ref(),
        "--rights-holder".as_ref(),
        holder.as_ref(),
        library.as_os_str(),
    ]);
    let url = site.url("/book/1.html");
    workspace.ok(&["crawl", &url, "--depth", "0", "--allow-private-addresses"]);
    workspace.ok(&["match"]);
    let matches = workspace.export_json();
    assert_eq!(matches.len(), 1, "{matches:?}");
    matches[0]["id"]
        .as_i64()
        .expect("the JSON export names each match's id")
}

fn manifest(dir: &Path) -> serde_json::Value {
    let text = std::fs::read(dir.join("manifest.json")).expect("a manifest");
    serde_json::from_slice(&text).expect("the manifest is JSON")
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// `evidence MATCH_ID --out DIR [EXTRA...]`.
fn write_package(workspace: &Workspace, match_id: i64, dir: &Path, extra: &[&str]) -> Run {
    let mut args: Vec<std::ffi::OsString> = vec!["evidence".into(), match_id.to_string().into()];
    args.extend(extra.iter().map(Into::into));
    args.extend(["--out".into(), dir.as_os_str().to_owned()]);
    workspace.run(&args)
}

/// `evidence verify` on `dir`: the error line when it fails.
fn verify_error(workspace: &Workspace, dir: &Path) -> String {
    let run = workspace.run(&["evidence".as_ref(), "verify".as_ref(), dir.as_os_str()]);
    run.one_line_error().to_owned()
}

#[test]
fn an_evidence_package_holds_the_served_bytes_and_catches_every_alteration() {
    let workspace = Workspace::new();
    let (page, served) = copied_page();
    let site = TestSite::serve(SampleSite { pages: vec![page] });
    let match_id = crawled_copy(&workspace, &site, "Yuewen");
    let dir = workspace.path("package");
    write_package(&workspace, match_id, &dir, &[]).success();

    // The raw bytes are what the site served, and hash to the SHA-256 stored at fetch time.
    let raw = std::fs::read(dir.join("page.html")).unwrap();
    assert_eq!(raw, served);
    let manifest = manifest(&dir);
    let capture = &manifest["capture"];
    assert_eq!(capture["raw_sha256"], sha256_hex(&raw).as_str());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let stored = runtime.block_on(async {
        let store = SqliteStore::connect(&workspace.db).await.unwrap();
        let page_id = manifest["match"]["page_id"].as_i64().unwrap();
        let hash = manifest["match"]["evidence_hash"].as_str().unwrap();
        store.page_capture(page_id, hash).await.unwrap().unwrap()
    });
    assert_eq!(stored.body_sha256, sha256_hex(&raw));
    assert_eq!(capture["http_status"], 200);
    assert_eq!(capture["encoding"], "GBK");
    assert_eq!(capture["final_url"], site.url("/book/1.html").as_str());
    assert!(
        capture["headers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h[0] == "content-type" && h[1] == "text/html; charset=gbk"),
        "{capture}"
    );
    assert_eq!(manifest["match"]["id"], match_id);

    // The extracted text, and the passages side by side with the page's markup escaped.
    let text = std::fs::read_to_string(dir.join("page.txt")).unwrap();
    assert!(text.contains("青岚山脚下，<i>镇子不大"), "{text}");
    let passages = std::fs::read_to_string(dir.join("passages.html")).unwrap();
    assert!(
        passages.contains("青岚山脚下，&lt;i&gt;镇子不大"),
        "{passages}"
    );
    assert!(!passages.contains("<i>"), "{passages}");
    let sentence = library_text("xingchen-ch1").lines().nth(2).unwrap().trim();
    let start: String = sentence.chars().take(8).collect();
    assert!(
        passages.matches(&start).count() >= 2,
        "{start} on both sides: {passages}"
    );

    // A picture of the page by headless Chromium.
    let png = std::fs::read(dir.join("screenshot.png"))
        .expect("screenshot.png: headless Chromium must be installed (./scripts/test does it)");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let (width, height) = copytrace_browser::png_size(&png).unwrap();
    assert_eq!(width, 1280);
    assert!((800..=16_384).contains(&height), "{width}x{height}");
    assert_eq!(manifest["screenshot"]["width"], width);
    assert!(
        manifest["screenshot"]["browser"]
            .as_str()
            .unwrap()
            .contains("Chrome")
    );

    // Intact, it verifies (and its manifest is the one recorded).
    let run = workspace.ok(&["evidence".as_ref(), "verify".as_ref(), dir.as_os_str()]);
    assert!(
        run.stdout.contains("recorded in the database"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("verified: 4 file(s) intact"),
        "{}",
        run.stdout
    );

    // Any file changed by one byte fails, naming the file.
    for name in ["page.html", "page.txt", "passages.html", "screenshot.png"] {
        let altered = workspace.path(&format!("altered-{name}"));
        copy_dir(&dir, &altered);
        let mut bytes = std::fs::read(altered.join(name)).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x01;
        std::fs::write(altered.join(name), bytes).unwrap();
        let error = verify_error(&workspace, &altered);
        assert!(error.contains(&format!("altered: {name}")), "{error}");
    }
    let missing = workspace.path("missing");
    copy_dir(&dir, &missing);
    std::fs::remove_file(missing.join("screenshot.png")).unwrap();
    assert!(verify_error(&workspace, &missing).contains("missing: screenshot.png"));
    let extra = workspace.path("extra");
    copy_dir(&dir, &extra);
    std::fs::write(extra.join("notes.txt"), "added later").unwrap();
    assert!(verify_error(&workspace, &extra).contains("extra: notes.txt"));

    // A manifest naming a file outside the package (climbing with `..`, or an absolute path)
    // is refused, even when that file's hash is the one listed.
    let climbing = workspace.path("climbing");
    copy_dir(&dir, &climbing);
    let outside = workspace.path("outside.txt");
    std::fs::write(&outside, "planted").unwrap();
    for name in ["../outside.txt".to_owned(), outside.display().to_string()] {
        let mut rewritten = manifest.clone();
        rewritten["files"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"name": name, "sha256": sha256_hex(b"planted"), "size": 7}));
        std::fs::write(
            climbing.join("manifest.json"),
            serde_json::to_vec_pretty(&rewritten).unwrap(),
        )
        .unwrap();
        let run = workspace.run(&[
            "evidence".as_ref(),
            "verify".as_ref(),
            "--no-database".as_ref(),
            climbing.as_os_str(),
        ]);
        let error = run.one_line_error();
        assert!(
            error.contains("outside the package") && error.contains(&name),
            "{name}: {error}"
        );
    }

    // A manifest rewritten to fit an altered file passes the files' check alone, but not the
    // database's record of the manifest written.
    let forged = workspace.path("forged");
    copy_dir(&dir, &forged);
    std::fs::write(forged.join("page.txt"), "something else").unwrap();
    let mut rewritten = manifest.clone();
    for file in rewritten["files"].as_array_mut().unwrap() {
        if file["name"] == "page.txt" {
            file["sha256"] = sha256_hex(b"something else").into();
            file["size"] = 14.into();
        }
    }
    std::fs::write(
        forged.join("manifest.json"),
        serde_json::to_vec_pretty(&rewritten).unwrap(),
    )
    .unwrap();
    let error = verify_error(&workspace, &forged);
    assert!(
        error.contains("manifest.json") && error.contains("not recorded"),
        "{error}"
    );
    workspace.ok(&[
        "evidence".as_ref(),
        "verify".as_ref(),
        "--no-database".as_ref(),
        forged.as_os_str(),
    ]);
}

#[test]
fn another_rights_holders_match_is_not_found() {
    let workspace = Workspace::new();
    let (page, _) = copied_page();
    let site = TestSite::serve(SampleSite { pages: vec![page] });
    let match_id = crawled_copy(&workspace, &site, "Yuewen");
    workspace.ok(&["rights-holder", "add", "Zongheng"]);
    let dir = workspace.path("package");
    let run = write_package(&workspace, match_id, &dir, &["--rights-holder", "Zongheng"]);
    let error = run.one_line_error();
    assert!(
        error.contains(&format!("match {match_id} not found")),
        "{error}"
    );
    assert!(!dir.exists());
}

#[test]
fn a_page_stored_before_captures_were_kept_gets_a_package_that_says_so() {
    let workspace = Workspace::new();
    let (page, _) = copied_page();
    let site = TestSite::serve(SampleSite { pages: vec![page] });
    let match_id = crawled_copy(&workspace, &site, "Yuewen");
    // As a database from before migration 0013 has it: the page, no capture.
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let url = format!("{}?mode=rw", workspace.db);
        let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
        let deleted = sqlx::query("DELETE FROM page_captures")
            .execute(&mut db)
            .await
            .unwrap();
        assert_eq!(deleted.rows_affected(), 1);
    });
    let dir = workspace.path("package");
    let run = write_package(&workspace, match_id, &dir, &[]).success();
    assert!(run.stderr.contains("no raw bytes"), "{}", run.stderr);
    assert!(!dir.join("page.html").exists());
    assert!(!dir.join("screenshot.png").exists());
    let manifest = manifest(&dir);
    assert!(manifest["capture"].is_null());
    assert!(
        manifest["capture_note"]
            .as_str()
            .unwrap()
            .contains("before Copytrace kept raw captures")
    );
    workspace.ok(&["evidence".as_ref(), "verify".as_ref(), dir.as_os_str()]);
}
