//! Trusted timestamps (RFC 3161, issue 40): with `--tsa-url`, an evidence package's manifest
//! is timestamped by a real time-stamping authority (OpenSSL's `ts -reply` behind an HTTP
//! server started here, its CA and TSA certificates made at test time), `evidence verify`
//! accepts the token and refuses a changed file, a token of another package, a token whose
//! signature was altered, and a TSA certificate that does not chain to `--tsa-cert`; a sent
//! notice keeps the token of its text, shown by `notice history`.

use std::path::Path;

use copytrace::demo::SampleSite;
use copytrace_store::Store;
use copytrace_store::sqlite::SqliteStore;

use crate::evidence::{copied_page, copy_dir, crawled_copy};
use crate::helpers::{Run, TestSite, Workspace, closed_port, crawl_and_match, html_page};
use crate::tsa::TestTsa;

/// `evidence MATCH_ID --out DIR --no-screenshot ARGS…`.
fn package(workspace: &Workspace, match_id: i64, dir: &Path, args: &[&str]) -> Run {
    let mut all: Vec<std::ffi::OsString> = vec!["evidence".into(), match_id.to_string().into()];
    all.extend([
        "--out".into(),
        dir.as_os_str().to_owned(),
        "--no-screenshot".into(),
    ]);
    all.extend(args.iter().map(Into::into));
    workspace.run(&all)
}

/// `evidence verify DIR ARGS…`.
fn verify(workspace: &Workspace, dir: &Path, args: &[&str]) -> Run {
    let mut all: Vec<std::ffi::OsString> = vec!["evidence".into(), "verify".into()];
    all.push(dir.as_os_str().to_owned());
    all.extend(args.iter().map(Into::into));
    workspace.run(&all)
}

fn packages_in_db(workspace: &Workspace, match_id: i64) -> Vec<copytrace_store::EvidencePackage> {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = SqliteStore::connect(&workspace.db).await.unwrap();
        store.evidence_packages(match_id).await.unwrap()
    })
}

#[test]
fn a_timestamped_package_verifies_and_every_forgery_of_it_is_refused() {
    let workspace = Workspace::new();
    let (page, _) = copied_page();
    let site = TestSite::serve(SampleSite { pages: vec![page] });
    let match_id = crawled_copy(&workspace, &site, "Yuewen");
    let authority = TestTsa::start("Copytrace");
    let ca = authority.ca_cert.to_str().unwrap();

    // Written with a timestamp: the token beside the manifest, genTime kept in the database.
    let first = workspace.path("first");
    let run = package(&workspace, match_id, &first, &["--tsa-url", &authority.url]).success();
    assert!(
        run.stdout
            .contains(&format!("timestamped by {}", authority.url))
            && run.stdout.contains("manifest.tsr"),
        "{run:#?}"
    );
    assert!(first.join("manifest.tsr").is_file());
    assert_eq!(authority.answered(), 1);
    let recorded = packages_in_db(&workspace, match_id);
    let stamp = recorded[0].timestamp.as_ref().expect("the timestamp kept");
    assert_eq!(stamp.tsa_url, authority.url);
    assert_eq!(
        stamp.token,
        std::fs::read(first.join("manifest.tsr")).unwrap()
    );

    // Verified without a trusted certificate: accepted, saying trust was not established.
    let run = verify(&workspace, &first, &[]).success();
    assert!(run.stdout.contains("ok       manifest.tsr"), "{run:#?}");
    assert!(
        run.stdout.contains("NOT established") && run.stdout.contains("embedded in the token"),
        "{run:#?}"
    );
    assert!(
        run.stdout.contains(&stamp.gen_time.to_rfc3339()),
        "genTime reported: {run:#?}"
    );
    // With the TSA's CA: accepted, chained.
    let run = verify(&workspace, &first, &["--tsa-cert", ca]).success();
    assert!(
        run.stdout.contains("chains to the trusted certificate")
            && run.stdout.contains("Copytrace Test Root CA"),
        "{run:#?}"
    );
    // The same from the configuration file.
    let config = workspace.write("copytrace.toml", format!("tsa_cert = {ca:?}\n"));
    let run = verify(
        &workspace,
        &first,
        &["--config", config.to_str().unwrap(), "--no-database"],
    )
    .success();
    assert!(
        run.stdout.contains("chains to the trusted certificate"),
        "{run:#?}"
    );

    // A changed file.
    let changed = workspace.path("changed");
    copy_dir(&first, &changed);
    std::fs::write(changed.join("page.txt"), "另一段文字").unwrap();
    let error = verify(&workspace, &changed, &["--tsa-cert", ca])
        .one_line_error()
        .to_owned();
    assert!(error.contains("altered: page.txt"), "{error}");

    // A manifest rewritten with the changed file's hash: without the database only the
    // timestamp can tell, and it does.
    let rewritten = workspace.path("rewritten");
    copy_dir(&changed, &rewritten);
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(rewritten.join("manifest.json")).unwrap()).unwrap();
    let text = std::fs::read(rewritten.join("page.txt")).unwrap();
    for file in manifest["files"].as_array_mut().unwrap() {
        if file["name"] == "page.txt" {
            file["sha256"] = copytrace_store::sha256_hex(&text).into();
            file["size"] = text.len().into();
        }
    }
    std::fs::write(
        rewritten.join("manifest.json"),
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
    let error = verify(&workspace, &rewritten, &["--no-database", "--tsa-cert", ca])
        .one_line_error()
        .to_owned();
    assert!(
        error.contains("manifest.tsr: the token is for another hash"),
        "{error}"
    );

    // The token of another package (another manifest, another hash).
    let second = workspace.path("second");
    package(
        &workspace,
        match_id,
        &second,
        &["--tsa-url", &authority.url],
    )
    .success();
    let swapped = workspace.path("swapped");
    copy_dir(&first, &swapped);
    std::fs::copy(second.join("manifest.tsr"), swapped.join("manifest.tsr")).unwrap();
    let error = verify(&workspace, &swapped, &["--tsa-cert", ca])
        .one_line_error()
        .to_owned();
    assert!(error.contains("token is for another hash"), "{error}");

    // A signature altered (its last byte is the token's last).
    let forged = workspace.path("forged");
    copy_dir(&first, &forged);
    let mut token = std::fs::read(forged.join("manifest.tsr")).unwrap();
    *token.last_mut().unwrap() ^= 0x01;
    std::fs::write(forged.join("manifest.tsr"), token).unwrap();
    let error = verify(&workspace, &forged, &[]).one_line_error().to_owned();
    assert!(error.contains("bad signature"), "{error}");

    // Another authority's CA: the signature is sound, the trust is not.
    let other = TestTsa::start("Elsewhere");
    let error = verify(
        &workspace,
        &first,
        &["--tsa-cert", other.ca_cert.to_str().unwrap()],
    )
    .one_line_error()
    .to_owned();
    assert!(
        error.contains("does not chain") && error.contains("Elsewhere Test Root CA"),
        "{error}"
    );

    // A token the database records cannot be dropped unnoticed.
    let dropped = workspace.path("dropped");
    copy_dir(&first, &dropped);
    std::fs::remove_file(dropped.join("manifest.tsr")).unwrap();
    let error = verify(&workspace, &dropped, &[])
        .one_line_error()
        .to_owned();
    assert!(
        error.contains("manifest.tsr: missing") && error.contains(&authority.url),
        "{error}"
    );
}

#[test]
fn a_package_whose_authority_failed_is_written_and_timestamped_later() {
    let workspace = Workspace::new();
    let (page, _) = copied_page();
    let site = TestSite::serve(SampleSite { pages: vec![page] });
    let match_id = crawled_copy(&workspace, &site, "Yuewen");
    let down = format!("http://127.0.0.1:{}/tsr", closed_port());

    let dir = workspace.path("package");
    let run = package(&workspace, match_id, &dir, &["--tsa-url", &down]);
    assert_eq!(run.code, Some(3), "{run:#?}");
    assert!(
        run.stderr.contains("no trusted timestamp")
            && run.stderr.contains("cannot be reached")
            && run.stderr.contains("evidence timestamp"),
        "{run:#?}"
    );
    assert!(!dir.join("manifest.tsr").exists());
    let run = verify(&workspace, &dir, &[]).success();
    assert!(run.stdout.contains("no trusted timestamp"), "{run:#?}");

    // Later, from the configuration file's authority.
    let authority = TestTsa::start("Later");
    let config = workspace.write("copytrace.toml", format!("tsa_url = {:?}\n", authority.url));
    let config = config.to_str().unwrap();
    let stamp = |dir: &Path| {
        workspace.run(&[
            "--config",
            config,
            "evidence",
            "timestamp",
            dir.to_str().unwrap(),
        ])
    };
    let run = stamp(&dir).success();
    assert!(run.stdout.contains("timestamped by"), "{run:#?}");
    verify(
        &workspace,
        &dir,
        &["--tsa-cert", authority.ca_cert.to_str().unwrap()],
    )
    .success();
    assert!(packages_in_db(&workspace, match_id)[0].timestamp.is_some());
    // Not twice; and not a package the database does not know.
    let again = stamp(&dir);
    assert!(
        again.one_line_error().contains("timestamped already"),
        "{again:#?}"
    );
    let stranger = workspace.path("stranger");
    copy_dir(&dir, &stranger);
    std::fs::remove_file(stranger.join("manifest.tsr")).unwrap();
    let mut manifest = std::fs::read_to_string(stranger.join("manifest.json")).unwrap();
    manifest.push('\n');
    std::fs::write(stranger.join("manifest.json"), manifest).unwrap();
    let refused = stamp(&stranger);
    assert!(
        refused.one_line_error().contains("not recorded"),
        "{refused:#?}"
    );
    assert_eq!(authority.answered(), 1);
    // A URL that is not one is a bad command line.
    let bad = workspace.run(&[
        "--tsa-url",
        "ftp://tsa.example/",
        "evidence",
        "timestamp",
        "x",
    ]);
    assert_eq!(bad.code, Some(2), "{bad:#?}");
}

#[test]
fn a_sent_notice_shows_the_timestamp_of_its_text_in_its_history() {
    let workspace = Workspace::new();
    let mut sample = copytrace::demo::sample_site();
    sample.pages.push(html_page(
        "/lianxi.html",
        "<p>版权投诉请发邮件至 <a href=\"mailto:dmca@pirate.test\">dmca@pirate.test</a></p>",
    ));
    let site = TestSite::serve(sample);
    let host = site.addr().to_string();
    let path = workspace.write(
        "lib/xingchen-ch1.txt",
        crate::helpers::library_text("xingchen-ch1"),
    );
    workspace.ok(&[
        "library",
        "add",
        "--rights-holder",
        "Yuewen",
        path.to_str().unwrap(),
    ]);
    crawl_and_match(&workspace, &site);
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
        "--agent-name",
        "张三",
        "--signature",
        "/s/ 张三",
    ]);
    let authority = TestTsa::start("Notices");
    let evidence = workspace.path("evidence");
    workspace.ok(&[
        "--tsa-url",
        &authority.url,
        "notice",
        "create",
        "--site",
        &host,
        "--evidence-dir",
        evidence.to_str().unwrap(),
        "--no-screenshot",
    ]);
    // Each of the notice's packages was stamped.
    let packages: Vec<_> = std::fs::read_dir(&evidence)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!packages.is_empty());
    for dir in &packages {
        assert!(dir.join("manifest.tsr").is_file(), "{}", dir.display());
    }
    let stamped = authority.answered();
    let list: Vec<serde_json::Value> =
        serde_json::from_str(&workspace.ok(&["notice", "list", "--json"]).stdout).unwrap();
    let id = list[0]["id"].to_string();
    let (smtp, received) = crate::sending::start_smtp();
    workspace.ok(&[
        "notice",
        "send",
        &id,
        "--smtp-url",
        &format!("smtp://{smtp}"),
        "--tsa-url",
        &authority.url,
    ]);
    assert_eq!(authority.answered(), stamped + 1);
    let text = crate::sending::text_of(&received.lock().unwrap()[0]);
    let digest = copytrace_store::sha256_hex(text.replace("\r\n", "\n").as_bytes());

    let history = workspace.ok(&["notice", "history", &id]);
    let line = history
        .stdout
        .lines()
        .find(|l| l.contains("timestamped"))
        .unwrap_or_else(|| panic!("no timestamp in the history: {history:#?}"));
    assert!(
        line.contains(&format!("by {}", authority.url)) && line.contains(&digest),
        "{line}"
    );
    // The time shown is the token's genTime.
    let mails = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = SqliteStore::connect(&workspace.db).await.unwrap();
        store.notice_mails(id.parse().unwrap()).await.unwrap()
    });
    let stamp = mails[0].timestamp.as_ref().unwrap();
    assert!(
        line.contains(
            &stamp
                .gen_time
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
        "{line}"
    );
}
