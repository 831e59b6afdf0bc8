//! `copytrace rights-holder set|show` and `notice create --law cn|us` (issue 40): a notice is
//! written under a law, gives every element that law lists, filled from the holder's profile
//! and the copies' proof, and is refused, naming what is missing, when it cannot.

use copytrace_analytics::notice::NoticeLaw;
use sha2::{Digest, Sha256};

use crate::helpers::{TestSite, Workspace, crawl_and_match, library_text};

/// A workspace whose holder "Yuewen" has a confirmed copy on the sample site; returns it with
/// the site's host.
fn copied() -> (Workspace, TestSite, String) {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let path = workspace.write("lib/xingchen-ch1.txt", library_text("xingchen-ch1"));
    workspace.ok(&[
        "library",
        "add",
        "--rights-holder",
        "Yuewen",
        path.to_str().unwrap(),
    ]);
    crawl_and_match(&workspace, &site);
    let host = site.addr().to_string();
    (workspace, site, host)
}

fn sha256_of(path: &std::path::Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_profile_is_set_field_by_field_and_bad_values_are_refused_with_their_name() {
    let workspace = Workspace::new();
    workspace.ok(&["rights-holder", "add", "Yuewen"]);
    let empty = workspace.ok(&["rights-holder", "show", "Yuewen"]);
    assert!(empty.stdout.contains("no profile yet"), "{empty:#?}");

    let bad_email = workspace.run(&["rights-holder", "set", "Yuewen", "--email", "legal-at-yw"]);
    let error = bad_email.one_line_error();
    assert!(
        error.contains("email \"legal-at-yw\" is not an e-mail address"),
        "{error}"
    );
    let bad_language = workspace.run(&["rights-holder", "set", "Yuewen", "--language", "fr"]);
    assert!(
        bad_language.one_line_error().contains("language \"fr\""),
        "{bad_language:#?}"
    );
    let unknown = workspace.run(&["rights-holder", "set", "Nobody", "--email", "a@b.example"]);
    assert!(
        unknown.one_line_error().contains("\"Nobody\""),
        "{unknown:#?}"
    );

    workspace.ok(&[
        "rights-holder",
        "set",
        "Yuewen",
        "--legal-name",
        "上海阅文信息技术有限公司",
        "--email",
        "legal@yuewen.example",
        "--language",
        "en",
    ]);
    // A second `set` changes only the fields it names.
    workspace.ok(&[
        "rights-holder",
        "set",
        "Yuewen",
        "--phone",
        "+86 21 1234 5678",
    ]);
    let shown: serde_json::Value = serde_json::from_str(
        &workspace
            .ok(&["rights-holder", "show", "Yuewen", "--json"])
            .stdout,
    )
    .unwrap();
    let profile = &shown["profile"];
    assert_eq!(profile["legal_name"], "上海阅文信息技术有限公司");
    assert_eq!(profile["email"], "legal@yuewen.example");
    assert_eq!(profile["phone"], "+86 21 1234 5678");
    assert_eq!(profile["language"], "en");
    assert_eq!(profile["address"], serde_json::Value::Null);
    let text = workspace.ok(&["rights-holder", "show", "Yuewen"]).stdout;
    assert!(
        text.contains("address        (not given)") && text.contains("上海阅文信息技术有限公司"),
        "{text}"
    );
}

#[test]
fn notices_under_each_law_give_every_element_or_are_refused_naming_the_missing_one() {
    let (workspace, site, host) = copied();
    let url = site.url("/book/xingchen/1.html");
    workspace.ok(&[
        "rights-holder",
        "set",
        "Yuewen",
        "--legal-name",
        "上海阅文信息技术有限公司",
        "--email",
        "legal@yuewen.example",
        "--agent-name",
        "张三",
        "--agent-role",
        "法务经理",
        "--agent-contact",
        "zhangsan@yuewen.example",
    ]);
    let evidence = workspace.path("evidence");
    let evidence_arg = evidence.to_str().unwrap();

    // China: no address. Refused, naming it, and nothing is written (no package either).
    let refused = workspace.run(&[
        "notice",
        "create",
        "--site",
        &host,
        "--evidence-dir",
        evidence_arg,
        "--no-screenshot",
    ]);
    let error = refused.one_line_error();
    assert!(
        error.contains("第十四条") && error.contains("address (地址)"),
        "{error}"
    );
    assert!(!error.contains("legal name"), "{error}");
    assert!(!evidence.exists(), "a refused notice wrote evidence");
    // US: no signature.
    let refused = workspace.run(&["notice", "create", "--site", &host, "--law", "us"]);
    let error = refused.one_line_error();
    assert!(
        error.contains("§512(c)(3)") && error.contains("signature"),
        "{error}"
    );
    // China without evidence packages: the proof is missing, named with its URL.
    workspace.ok(&[
        "rights-holder",
        "set",
        "Yuewen",
        "--address",
        "上海市浦东新区碧波路690号",
    ]);
    let refused = workspace.run(&["notice", "create", "--site", &host, "--law", "cn"]);
    let error = refused.one_line_error();
    assert!(
        error.contains("构成侵权的初步证明材料")
            && error.contains(&url)
            && error.contains("evidence package SHA-256"),
        "{error}"
    );
    let listed = workspace.ok(&["notice", "list", "--json"]).stdout;
    assert_eq!(listed.trim(), "[]", "nothing stored for a refusal");

    // China, complete: the holder's language (zh, the default) picks the law.
    let cn = workspace.ok(&[
        "notice",
        "create",
        "--site",
        &host,
        "--evidence-dir",
        evidence_arg,
        "--no-screenshot",
    ]);
    let text = &cn.stdout;
    for element in NoticeLaw::Cn.elements() {
        assert!(
            text.contains(element.heading),
            "lacks {}:\n{text}",
            element.name
        );
    }
    let package = std::fs::read_dir(&evidence)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .next()
        .expect("one evidence package");
    let manifest_sha256 = sha256_of(&package.join("manifest.json"));
    let page_text_sha256 = sha256_of(&package.join("page.txt"));
    let exported = workspace.export_json();
    let first_seen = exported[0]["first_seen"].as_str().unwrap();
    for needle in [
        "上海阅文信息技术有限公司",
        "上海市浦东新区碧波路690号",
        "legal@yuewen.example",
        "张三",
        "《",
        &url,
        &first_seen[..16],
        "复制段落摘录：“",
        &manifest_sha256,
        &page_text_sha256,
    ] {
        assert!(text.contains(needle), "lacks {needle}:\n{text}");
    }
    assert!(!text.contains("XXH3"), "{text}");

    // US, once signed: the package just written is the proof cited.
    workspace.ok(&["rights-holder", "set", "Yuewen", "--signature", "/s/ 张三"]);
    let us = workspace.ok(&["notice", "create", "--site", &host, "--law", "us"]);
    let text = &us.stdout;
    for element in NoticeLaw::Us.elements() {
        assert!(
            text.contains(element.heading),
            "lacks {}:\n{text}",
            element.name
        );
    }
    for needle in [
        "/s/ 张三",
        "good faith belief",
        "under penalty of perjury",
        &url,
        &manifest_sha256,
        "legal@yuewen.example",
    ] {
        assert!(text.contains(needle), "lacks {needle}:\n{text}");
    }
    let notices: Vec<serde_json::Value> =
        serde_json::from_str(&workspace.ok(&["notice", "list", "--json"]).stdout).unwrap();
    let mut languages: Vec<&str> = notices
        .iter()
        .map(|n| n["lang"].as_str().unwrap())
        .collect();
    languages.sort();
    assert_eq!(languages, ["en", "zh"]);
}
