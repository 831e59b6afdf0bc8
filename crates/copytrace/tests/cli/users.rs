//! `copytrace user`: accounts bootstrapped from the command line, passwords from the
//! environment or standard input, hashed with Argon2.

use copytrace_store::Store;
use copytrace_store::sqlite::SqliteStore;

use crate::helpers::{Run, Workspace, run_command};

/// `copytrace user ARGS…` with `password` in `COPYTRACE_PASSWORD` or on standard input.
fn user(workspace: &Workspace, args: &[&str], env: Option<&str>, stdin: Option<&str>) -> Run {
    let mut command = workspace.bare();
    command
        .arg("--db")
        .arg(&workspace.db)
        .arg("user")
        .args(args);
    command.env_remove("COPYTRACE_PASSWORD");
    if let Some(password) = env {
        command.env("COPYTRACE_PASSWORD", password);
    }
    command.write_stdin(stdin.unwrap_or(""));
    run_command(&mut command)
}

/// Whether `password` logs `email` in, as the web will check it.
fn logs_in(workspace: &Workspace, email: &str, password: &str) -> bool {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = SqliteStore::connect(&workspace.db).await.unwrap();
        let store: &dyn Store = &store;
        copytrace_service::accounts::authenticate(store, email, password)
            .await
            .unwrap()
            .is_some()
    })
}

#[test]
fn accounts_are_added_listed_given_new_passwords_and_removed() {
    let workspace = Workspace::new();
    workspace.ok(&["rights-holder", "add", "Yuewen"]);

    let admin = user(
        &workspace,
        &["add", "--email", "Admin@Example.com", "--role", "admin"],
        Some("correct horse battery"),
        None,
    );
    assert_eq!(admin.code, Some(0), "{admin:#?}");
    let short = user(
        &workspace,
        &["add", "--email", "x@example.com", "--role", "analyst"],
        Some("short"),
        None,
    );
    assert_eq!(short.code, Some(1));
    assert!(
        short.stderr.contains("at least 10 characters"),
        "{short:#?}"
    );
    let unbound = user(
        &workspace,
        &[
            "add",
            "--email",
            "rh@example.com",
            "--role",
            "rights-holder",
        ],
        Some("correct horse battery"),
        None,
    );
    assert!(
        unbound.stderr.contains("--rights-holder NAME"),
        "{unbound:#?}"
    );
    // Without the variable (and no terminal), the password is standard input's first line.
    let holder = user(
        &workspace,
        &[
            "add",
            "--email",
            "rh@example.com",
            "--role",
            "rights-holder",
            "--rights-holder",
            "Yuewen",
        ],
        None,
        Some("piped password 1\nignored\n"),
    );
    assert_eq!(holder.code, Some(0), "{holder:#?}");
    let duplicate = user(
        &workspace,
        &["add", "--email", "ADMIN@example.com", "--role", "admin"],
        Some("correct horse battery"),
        None,
    );
    assert!(
        duplicate.stderr.contains("already exists"),
        "{duplicate:#?}"
    );

    let listed = workspace.ok(&["user", "list", "--json"]);
    assert!(!listed.stdout.contains("argon2"), "hashes are never listed");
    let accounts: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(accounts[0]["email"], "admin@example.com");
    assert_eq!(accounts[1]["role"], "rights_holder");
    assert_eq!(accounts[1]["rights_holder"], "Yuewen");

    assert!(logs_in(
        &workspace,
        "admin@example.com",
        "correct horse battery"
    ));
    assert!(logs_in(&workspace, "rh@example.com", "piped password 1"));
    assert!(!logs_in(&workspace, "rh@example.com", "piped password 2"));
    assert!(!logs_in(
        &workspace,
        "nobody@example.com",
        "piped password 1"
    ));

    let passwd = user(
        &workspace,
        &["passwd", "RH@example.com"],
        None,
        Some("piped password 2\n"),
    );
    assert_eq!(passwd.code, Some(0), "{passwd:#?}");
    assert!(logs_in(&workspace, "rh@example.com", "piped password 2"));
    assert!(!logs_in(&workspace, "rh@example.com", "piped password 1"));

    workspace.ok(&["user", "rm", "rh@example.com"]);
    let gone = workspace.run(&["user", "rm", "rh@example.com"]);
    assert_ne!(gone.code, Some(0));
    assert!(workspace.ok(&["user", "list"]).stdout.contains("1 user(s)"));
}

/// The user an API token acts as, as the API will check it.
fn token_user(workspace: &Workspace, token: &str) -> Option<String> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = SqliteStore::connect(&workspace.db).await.unwrap();
        let store: &dyn Store = &store;
        copytrace_service::accounts::api_user(store, token)
            .await
            .unwrap()
            .map(|u| u.email)
    })
}

#[test]
fn api_tokens_are_printed_once_listed_without_the_secret_and_revoked() {
    let workspace = Workspace::new();
    for email in ["ops@example.com", "other@example.com"] {
        let added = user(
            &workspace,
            &["add", "--email", email, "--role", "operator"],
            Some("correct horse battery"),
            None,
        );
        assert_eq!(added.code, Some(0), "{added:#?}");
    }
    let made = workspace.ok(&[
        "user",
        "token",
        "add",
        "OPS@example.com",
        "--name",
        "nightly export",
    ]);
    let token = made.stdout.trim().to_owned();
    assert!(
        token.starts_with("ct_") && token.len() == 67 && !token.contains(char::is_whitespace),
        "the token alone on standard output: {made:#?}"
    );
    assert!(made.stderr.contains("shown this once"), "{made:#?}");
    assert_eq!(
        token_user(&workspace, &token).as_deref(),
        Some("ops@example.com")
    );

    let listed = workspace.ok(&["user", "token", "list", "ops@example.com", "--json"]);
    assert!(
        !listed.stdout.contains(&token[3..]),
        "never the token again"
    );
    let tokens: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(tokens[0]["name"], "nightly export");
    assert!(!tokens[0]["last_used_at"].is_null(), "its use was recorded");
    let id = tokens[0]["id"].as_i64().unwrap().to_string();
    let text = workspace.ok(&["user", "token", "list", "ops@example.com"]);
    assert!(text.stdout.contains("nightly export"), "{text:#?}");
    assert!(text.stdout.contains("1 token(s)"), "{text:#?}");

    // Another account cannot revoke it; a name is required; an unknown account is an error.
    let foreign = workspace.run(&["user", "token", "rm", "other@example.com", &id]);
    assert_ne!(foreign.code, Some(0), "{foreign:#?}");
    assert!(token_user(&workspace, &token).is_some());
    let unnamed = workspace.run(&["user", "token", "add", "ops@example.com", "--name", " "]);
    assert_ne!(unnamed.code, Some(0), "{unnamed:#?}");
    let nobody = workspace.run(&["user", "token", "add", "x@example.com", "--name", "n"]);
    assert_ne!(nobody.code, Some(0), "{nobody:#?}");

    let revoked = workspace.ok(&["user", "token", "rm", "ops@example.com", &id]);
    assert!(revoked.stdout.contains("revoked"), "{revoked:#?}");
    assert_eq!(token_user(&workspace, &token), None);
    assert!(
        workspace
            .ok(&["user", "token", "list", "ops@example.com"])
            .stdout
            .contains("0 token(s)")
    );
}
