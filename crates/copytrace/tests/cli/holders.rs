//! `copytrace rights-holder` and `library add --rights-holder`: the owners of works, and the
//! commands that must tell one holder's works from another's (`notice create` without
//! `--rights-holder`).

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

#[test]
fn a_notice_without_a_rights_holder_is_for_the_one_whose_copies_are_on_the_site() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    // Every work belongs to one holder, and it is not `default`.
    add_for(&workspace, "Yuewen", "xingchen-ch1");
    crawl_and_match(&workspace, &site);
    let host = site.addr().to_string();

    let created = workspace.ok(&["notice", "create", "--site", &host, "--lang", "en"]);
    assert!(created.stdout.contains("by Yuewen"), "{created:#?}");
    assert!(
        created.stdout.contains(&site.url("/book/xingchen/1.html")),
        "{created:#?}"
    );
    assert!(created.stderr.contains("lists 1 cop"), "{created:#?}");

    // Another holder's work is copied on the same site: a notice speaks for one holder, so it
    // must be named.
    add_for(&workspace, "Other House", "jianghu-ch1");
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
        "--lang",
        "en",
    ]);
    assert!(other.stdout.contains("by Other House"), "{other:#?}");
    assert!(
        other.stdout.contains(&site.url("/book/jianghu/1.html")),
        "{other:#?}"
    );
}
