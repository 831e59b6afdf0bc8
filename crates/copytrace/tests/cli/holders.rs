//! `copytrace rights-holder` and `library add --rights-holder`: the owners of works, and the
//! commands that must tell one holder's works from another's (`library rm|show --external-id`,
//! `notice create` without `--rights-holder`).

use crate::helpers::{TestSite, Workspace, crawl_and_match, library_text};

fn holders(workspace: &Workspace) -> Vec<(String, u64)> {
    let listed = workspace.ok(&["rights-holder", "list", "--json"]);
    let value: serde_json::Value = serde_json::from_str(&listed.stdout).expect("JSON list");
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|h| {
            (
                h["name"].as_str().expect("a name").to_owned(),
                h["works"].as_u64().expect("a work count"),
            )
        })
        .collect()
}

/// Adds the sample work `id` for the rights holder `holder`; returns its path.
fn add_for(workspace: &Workspace, holder: &str, id: &str) -> std::path::PathBuf {
    let path = workspace.write(&format!("lib/{id}.txt"), library_text(id));
    workspace.ok(&[
        "library",
        "add",
        "--rights-holder",
        holder,
        path.to_str().expect("UTF-8 path"),
    ]);
    path
}

#[test]
fn works_belong_to_the_named_rights_holder_or_to_the_default_one() {
    let workspace = Workspace::new();
    let second = workspace.write("lib/news-harbor.txt", library_text("news-harbor"));
    workspace.ok(&["rights-holder", "add", "Acme Books"]);
    workspace.ok(&["rights-holder", "add", "Acme Books"]);
    add_for(&workspace, "Yuewen", "xingchen-ch1");
    workspace.ok(&["library", "add", second.to_str().expect("UTF-8 path")]);
    assert_eq!(
        holders(&workspace),
        [
            ("Acme Books".to_owned(), 0),
            ("Yuewen".to_owned(), 1),
            ("default".to_owned(), 1)
        ]
    );
}

#[test]
fn a_rights_holder_that_owns_works_is_not_removed() {
    let workspace = Workspace::new();
    add_for(&workspace, "Yuewen", "xingchen-ch1");
    workspace.ok(&["rights-holder", "add", "Acme Books"]);

    let refused = workspace.run(&["rights-holder", "rm", "Yuewen"]);
    assert_eq!(refused.code, Some(1), "{refused:#?}");
    assert!(
        refused.one_line_error().contains("still owns 1 work(s)"),
        "{refused:#?}"
    );
    assert_eq!(workspace.works().len(), 1, "the work is still there");

    workspace.ok(&["rights-holder", "rm", "Acme Books"]);
    let unknown = workspace.run(&["rights-holder", "rm", "Acme Books"]);
    assert_eq!(unknown.code, Some(1), "{unknown:#?}");
    assert!(
        unknown
            .one_line_error()
            .contains("rights holder \"Acme Books\" not found"),
        "{unknown:#?}"
    );
    assert_eq!(holders(&workspace), [("Yuewen".to_owned(), 1)]);
}

#[test]
fn library_show_names_the_owner_and_an_unknown_id_is_not_found() {
    let workspace = Workspace::new();
    add_for(&workspace, "Yuewen", "xingchen-ch1");
    let id = workspace.works()[0]["id"].as_i64().expect("an id");
    let shown = workspace.ok(&["library", "show", &id.to_string(), "--json"]);
    let value: serde_json::Value = serde_json::from_str(&shown.stdout).expect("JSON");
    assert_eq!(value["external_id"], "xingchen-ch1");
    assert_eq!(value["rights_holder"], "Yuewen");
    assert!(
        value["fingerprints"]
            .as_array()
            .is_some_and(|f| !f.is_empty()),
        "{value}"
    );
    let text = workspace.ok(&["library", "show", &id.to_string()]);
    assert!(
        text.stdout.contains("rights holder: Yuewen"),
        "{}",
        text.stdout
    );

    let missing = workspace.run(&["library", "show", "999"]);
    assert!(
        missing.one_line_error().contains("work 999 not found"),
        "{missing:#?}"
    );
}

/// `(external id, rights holder id, status)` of every work, as `library list` orders them (by
/// external id, then holder).
fn statuses(workspace: &Workspace) -> Vec<(String, i64, String)> {
    workspace
        .works()
        .iter()
        .map(|w| {
            (
                w["external_id"]
                    .as_str()
                    .expect("an external id")
                    .to_owned(),
                w["rights_holder_id"].as_i64().expect("a holder id"),
                w["status"].as_str().expect("a status").to_owned(),
            )
        })
        .collect()
}

#[test]
fn library_show_and_rm_take_the_catalog_id_with_external_id() {
    let workspace = Workspace::new();
    add_for(&workspace, "Yuewen", "xingchen-ch1");
    add_for(&workspace, "Yuewen", "news-harbor");
    let harbor = workspace
        .works()
        .iter()
        .find(|w| w["external_id"] == "news-harbor")
        .expect("the work")["id"]
        .as_i64()
        .expect("an id");
    // A catalog id that is a number, and the internal id of another work.
    let numeric = workspace.write(&format!("lib/{harbor}.txt"), library_text("jianghu-ch1"));
    workspace.ok(&[
        "library",
        "add",
        "--rights-holder",
        "Yuewen",
        numeric.to_str().expect("UTF-8 path"),
    ]);
    let shown = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["library", "show"];
        all.extend_from_slice(args);
        all.push("--json");
        serde_json::from_str(&workspace.ok(&all).stdout).expect("JSON")
    };

    let by_catalog = shown(&["--external-id", "xingchen-ch1"]);
    assert_eq!(by_catalog["external_id"], "xingchen-ch1");
    assert_eq!(by_catalog["rights_holder"], "Yuewen");
    // A bare number is the internal id, never a catalog id, even when a catalog id is spelt so.
    let number = harbor.to_string();
    assert_eq!(shown(&[number.as_str()])["external_id"], "news-harbor");
    assert_eq!(
        shown(&["--external-id", &number])["external_id"],
        number.as_str()
    );
    let text = workspace.ok(&["library", "show", "--external-id", "news-harbor"]);
    assert!(
        text.stdout.contains("external id:   news-harbor"),
        "{}",
        text.stdout
    );

    let bare = workspace.run(&["library", "show", "xingchen-ch1"]);
    assert!(
        bare.one_line_error().contains(
            "is not a work id (the number in the first column of `library list`); to \
                 name a work by its catalog id, use --external-id \"xingchen-ch1\""
        ),
        "{bare:#?}"
    );
    let unknown = workspace.run(&["library", "rm", "--external-id", "no-such-book"]);
    assert!(
        unknown
            .one_line_error()
            .contains("work with external id \"no-such-book\" not found"),
        "{unknown:#?}"
    );

    let rm = workspace.ok(&["library", "rm", "--external-id", "xingchen-ch1"]);
    assert!(
        rm.stdout.contains("withdrew work") && rm.stdout.contains("xingchen-ch1"),
        "{rm:#?}"
    );
    let yuewen = by_catalog["rights_holder_id"]
        .as_i64()
        .expect("a holder id");
    assert_eq!(
        statuses(&workspace),
        [
            (number.clone(), yuewen, "active".to_owned()),
            ("news-harbor".to_owned(), yuewen, "active".to_owned()),
            ("xingchen-ch1".to_owned(), yuewen, "withdrawn".to_owned()),
        ]
    );

    // Another holder's work with the same catalog id: which one is meant cannot be told, so
    // nothing is withdrawn until the holder is named.
    add_for(&workspace, "Other House", "news-harbor");
    let ambiguous = workspace.run(&["library", "rm", "--external-id", "news-harbor"]);
    let error = ambiguous.one_line_error();
    assert!(
        error.contains("external id \"news-harbor\" names 2 works")
            && error.contains("of \"Yuewen\"")
            && error.contains("of \"Other House\"")
            && error.contains("--rights-holder"),
        "{error}"
    );
    let before = statuses(&workspace);
    assert!(
        before
            .iter()
            .all(|(id, _, status)| id != "news-harbor" || status == "active"),
        "{before:?}"
    );
    let other = before[2].1;
    assert_ne!(other, yuewen, "{before:?}");
    workspace.ok(&[
        "library",
        "rm",
        "--external-id",
        "news-harbor",
        "--rights-holder",
        "Other House",
    ]);
    assert_eq!(
        statuses(&workspace),
        [
            (number, yuewen, "active".to_owned()),
            ("news-harbor".to_owned(), yuewen, "active".to_owned()),
            ("news-harbor".to_owned(), other, "withdrawn".to_owned()),
            ("xingchen-ch1".to_owned(), yuewen, "withdrawn".to_owned()),
        ]
    );
    let shown_other = shown(&[
        "--external-id",
        "news-harbor",
        "--rights-holder",
        "Other House",
    ]);
    assert_eq!(shown_other["rights_holder"], "Other House");
}

#[test]
fn a_notice_without_a_rights_holder_is_for_the_one_whose_copies_are_on_the_site() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    // Every work belongs to one holder, and it is not `default`.
    add_for(&workspace, "Yuewen", "xingchen-ch1");
    crawl_and_match(&workspace, &site);
    let host = site.addr().to_string();

    // A US notice (the holder's language is en) needs a name, a contact and a signature.
    let profile = |holder: &str| {
        workspace.ok(&[
            "rights-holder",
            "set",
            holder,
            "--legal-name",
            &format!("{holder} Ltd."),
            "--email",
            "legal@holder.example",
            "--signature",
            &format!("/s/ {holder}"),
            "--language",
            "en",
        ]);
    };
    profile("Yuewen");
    let created = workspace.ok(&["notice", "create", "--site", &host]);
    assert!(
        created.stdout.contains("Yuewen Ltd. (\"Yuewen\")"),
        "{created:#?}"
    );
    assert!(
        created.stdout.contains(&site.url("/book/xingchen/1.html")),
        "{created:#?}"
    );
    assert!(created.stderr.contains("lists 1 cop"), "{created:#?}");

    // Another holder's work is copied on the same site: a notice speaks for one holder, so it
    // must be named.
    add_for(&workspace, "Other House", "jianghu-ch1");
    profile("Other House");
    workspace.ok(&["match"]);
    let refused = workspace.run(&["notice", "create", "--site", &host]);
    let error = refused.one_line_error();
    assert!(
        error.contains(&format!(
            "the confirmed copies online on {host} are works of 2 rights holders: \
             \"Other House\" (1 copy), \"Yuewen\" (1 copy)"
        )) && error.contains("--rights-holder NAME"),
        "{error}"
    );
    let notices: Vec<serde_json::Value> =
        serde_json::from_str(&workspace.ok(&["notice", "list", "--json"]).stdout).unwrap();
    assert_eq!(notices.len(), 1, "nothing stored for the refusal");
    let other = workspace.ok(&[
        "notice",
        "create",
        "--site",
        &host,
        "--rights-holder",
        "Other House",
        "--law",
        "us",
    ]);
    assert!(
        other.stdout.contains("Other House Ltd. (\"Other House\")"),
        "{other:#?}"
    );
    assert!(
        other.stdout.contains(&site.url("/book/jianghu/1.html")),
        "{other:#?}"
    );
}

/// `rights-holder set --signature-image FILE`: a PNG or JPEG (by its first bytes) is kept and
/// shown; anything else is refused, naming why, and changes nothing; `--no-signature-image`
/// removes it.
#[test]
fn a_signature_image_is_set_checked_and_removed_from_the_command_line() {
    let workspace = Workspace::new();
    workspace.ok(&["rights-holder", "add", "Yuewen"]);
    let png = workspace.write("sig.png", b"\x89PNG\r\n\x1a\n a signature");
    let fake = workspace.write("fake.png", b"GIF89a not a png");
    let refused = workspace.run(&[
        "rights-holder",
        "set",
        "Yuewen",
        "--signature-image",
        fake.to_str().unwrap(),
    ]);
    assert_eq!(refused.code, Some(1), "{refused:#?}");
    assert!(
        refused
            .one_line_error()
            .contains("neither a PNG nor a JPEG"),
        "{refused:#?}"
    );
    let shown = workspace.ok(&["rights-holder", "show", "Yuewen", "--json"]);
    assert!(
        shown.stdout.contains("\"signature_image\": null"),
        "{shown:#?}"
    );

    let set = workspace.ok(&[
        "rights-holder",
        "set",
        "Yuewen",
        "--signature-image",
        png.to_str().unwrap(),
    ]);
    assert!(set.stdout.contains("image/png, 20 bytes"), "{set:#?}");
    let cleared = workspace.ok(&["rights-holder", "set", "Yuewen", "--no-signature-image"]);
    assert!(
        cleared
            .stdout
            .lines()
            .any(|l| l.starts_with("signature img") && l.ends_with("(none)")),
        "{cleared:#?}"
    );
}
