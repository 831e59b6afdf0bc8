//! The deployment files checked against the binary they deploy, without Docker or systemd.
//!
//! `docker-compose.yml`, everything under `deploy/` (Dockerfile, `copytrace.toml`, systemd units
//! and environment files) and `docs/operations.md` name variables, subcommands, flags and values
//! that the binary must accept; nothing else would notice when one of them drifts, because no
//! container or unit is started by the test suite. So:
//!
//! * every `COPYTRACE_*` variable they name is one the binary documents (the `[env: …]` names of
//!   every `--help`, found by walking the command tree, and the settings `copytrace config`
//!   lists), and the operations guide names every variable the binary documents;
//! * every `copytrace` invocation they contain (compose `command:`s and `docker compose run --rm
//!   cli …` lines, the Dockerfile's `CMD`, systemd `ExecStart=`s, the guide's shell blocks) is a
//!   complete subcommand whose `--help` succeeds, and every `--flag` passed is in that help;
//! * every value they give a variable gets past the real argument parser of a process that
//!   reads it;
//! * `copytrace --config deploy/copytrace.toml config` loads the example, shows its values and
//!   hides passwords, and the systemd environment files win over it;
//! * the image's final stage runs as a non-root user, and stop timeouts exceed the job grace.
//!
//! The files are scanned as text (no YAML or unit-file parser): the patterns are the ones these
//! files use, and every scan asserts that it found what it must find, so a scan that silently
//! stops matching fails instead of passing vacuously.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::helpers::{Run, run_command};

/// The repository root (this crate is `crates/copytrace`).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

fn read(relative: &str) -> String {
    let path = repo().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Every deployment file: `(path relative to the repository, text)`.
fn deployment_files() -> Vec<(String, String)> {
    let mut files = vec![
        "docker-compose.yml".to_owned(),
        "docs/operations.md".to_owned(),
    ];
    let mut dirs = vec![repo().join("deploy")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("deploy/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let relative = path.strip_prefix(repo()).expect("inside the repository");
                files.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    let files: Vec<(String, String)> = files.into_iter().map(|f| (f.clone(), read(&f))).collect();
    for required in [
        "deploy/Dockerfile",
        "deploy/copytrace.toml",
        "deploy/systemd/copytrace-serve.service",
        "deploy/systemd/copytrace-worker@.service",
    ] {
        assert!(
            files.iter().any(|(name, _)| name == required),
            "{required} is missing"
        );
    }
    files
}

/// The binary with an empty environment (no inherited `COPYTRACE_*` setting), working in a
/// temporary directory so that nothing it might create lands in the repository.
fn bare(dir: &Path) -> assert_cmd::Command {
    let mut command = assert_cmd::Command::new(env!("CARGO_BIN_EXE_copytrace"));
    command
        .env_clear()
        .env("NO_COLOR", "1")
        .current_dir(dir)
        .timeout(Duration::from_secs(60));
    command
}

/// The `COPYTRACE_*` names in a text (a bare `COPYTRACE_` prefix, as in `COPYTRACE_*`, is not
/// a name).
fn variable_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("COPYTRACE_") {
        let preceded = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        let name = &tail[..end];
        if !preceded && name.len() > "COPYTRACE_".len() {
            names.insert(name.to_owned());
        }
        rest = &tail[end.max(1)..];
    }
    names
}

/// The `--help` of every subcommand, found by walking the command tree from the top.
struct Help {
    /// Help text per command path (`[]` is the top level).
    pages: BTreeMap<Vec<String>, String>,
}

impl Help {
    fn collect() -> Help {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut pages = BTreeMap::new();
        let mut pending = vec![Vec::<String>::new()];
        while let Some(path) = pending.pop() {
            let run = run_command(bare(dir.path()).args(&path).arg("--help")).success();
            for child in subcommands(&run.stdout) {
                let mut next = path.clone();
                next.push(child);
                pending.push(next);
            }
            pages.insert(path, run.stdout);
        }
        for expected in [
            &["serve"][..],
            &["worker", "crawl"],
            &["worker", "match"],
            &["migrate"],
            &["index", "rebuild"],
            &["jobs", "retry"],
        ] {
            let expected: Vec<String> = expected.iter().map(|s| (*s).to_owned()).collect();
            assert!(
                pages.contains_key(&expected),
                "`copytrace {}` not found in the help tree: {:?}",
                expected.join(" "),
                pages.keys().collect::<Vec<_>>()
            );
        }
        Help { pages }
    }

    fn page(&self, path: &[String]) -> &str {
        self.pages
            .get(path)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("no help for `copytrace {}`", path.join(" ")))
    }

    fn children(&self, path: &[String]) -> Vec<String> {
        subcommands(self.page(path))
    }

    /// Variable → the command paths whose help documents it as `[env: NAME]`.
    fn env_variables(&self) -> BTreeMap<String, Vec<Vec<String>>> {
        let mut found: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
        for (path, page) in &self.pages {
            for name in env_names(page) {
                found.entry(name).or_default().push(path.clone());
            }
        }
        found
    }

    /// Whether `flag` (`--name`) takes a value in `path`'s help (`--name <VALUE>`).
    fn takes_value(&self, path: &[String], flag: &str) -> bool {
        self.page(path)
            .lines()
            .any(|line| line.contains(&format!("{flag} <")))
    }

    /// Resolves the arguments of one `copytrace` invocation to its subcommand path, checking
    /// that the path is complete and that every `--flag` passed appears in its help.
    fn resolve(&self, args: &[String]) -> Result<Vec<String>, String> {
        let mut i = 0;
        // Global options before the subcommand.
        while i < args.len() && args[i].starts_with('-') {
            let flag = args[i].split('=').next().unwrap_or_default();
            i += if !args[i].contains('=') && self.takes_value(&[], flag) {
                2
            } else {
                1
            };
        }
        let mut path = Vec::new();
        while i < args.len() && self.children(&path).contains(&args[i]) {
            path.push(args[i].clone());
            i += 1;
        }
        if path.is_empty() {
            return if args.iter().any(|a| a == "--help" || a == "--version") {
                Ok(path)
            } else {
                Err("no subcommand".to_owned())
            };
        }
        let children = self.children(&path);
        if !children.is_empty() && !runs_without_subcommand(self.page(&path)) {
            return Err(format!(
                "`{}` needs one of the subcommands {children:?}",
                path.join(" ")
            ));
        }
        let page = self.page(&path);
        let known = flags(page);
        for arg in &args[i..] {
            if let Some(flag) = arg
                .strip_prefix("--")
                .map(|f| f.split('=').next().unwrap_or(f))
                && !known.contains(&format!("--{flag}"))
            {
                return Err(format!(
                    "`copytrace {}` has no flag --{flag}",
                    path.join(" ")
                ));
            }
        }
        Ok(path)
    }
}

/// Whether a command with subcommands also runs on its own (`copytrace evidence MATCH_ID` beside
/// `copytrace evidence verify`): one of its usage lines takes no `<COMMAND>`.
fn runs_without_subcommand(page: &str) -> bool {
    page.lines()
        .skip_while(|line| !line.starts_with("Usage:"))
        .take_while(|line| !line.trim().is_empty())
        .any(|line| !line.contains("<COMMAND>"))
}

/// The subcommands listed in a help page's `Commands:` section, without `help`.
fn subcommands(page: &str) -> Vec<String> {
    page.lines()
        .skip_while(|line| line.trim() != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The names in `[env: NAME]` (or `[env: NAME=value]`) annotations; clap may wrap the line
/// between `[env:` and the name.
fn env_names(page: &str) -> BTreeSet<String> {
    page.split("[env:")
        .skip(1)
        .filter_map(|after| {
            let after = after.trim_start();
            let end = after
                .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                .unwrap_or(after.len());
            (end > 0).then(|| after[..end].to_owned())
        })
        .collect()
}

/// The `--long` flags a help page lists.
fn flags(page: &str) -> BTreeSet<String> {
    page.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == '(')
        .filter(|word| word.starts_with("--") && word.len() > 2)
        .map(|word| {
            let end = word[2..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(word.len(), |e| e + 2);
            word[..end].to_owned()
        })
        .collect()
}

/// The variables `copytrace config` lists (the settings of the configuration file).
fn config_variables() -> BTreeSet<String> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let run = run_command(bare(dir.path()).arg("config")).success();
    let names = variable_names(&run.stdout);
    assert!(
        names.contains("COPYTRACE_LOG") && names.len() >= 5,
        "`copytrace config` no longer lists the settings: {}",
        run.stdout
    );
    names
}

/// Every variable the binary documents: `[env: …]` in some `--help`, or listed by `config`.
fn documented_variables(help: &Help) -> BTreeSet<String> {
    let mut all: BTreeSet<String> = help.env_variables().into_keys().collect();
    all.extend(config_variables());
    all
}

#[test]
fn every_variable_named_in_the_deployment_files_is_one_the_binary_documents() {
    let help = Help::collect();
    let documented = documented_variables(&help);
    let mut unknown = Vec::new();
    let mut named = BTreeSet::new();
    for (file, text) in deployment_files() {
        for name in variable_names(&text) {
            if !documented.contains(&name) {
                unknown.push(format!("{file}: {name}"));
            }
            named.insert(name);
        }
    }
    assert!(
        unknown.is_empty(),
        "variables the binary does not know (documented: {documented:?}):\n{}",
        unknown.join("\n")
    );
    for essential in [
        "COPYTRACE_DATABASE_URL",
        "COPYTRACE_REDIS_URL",
        "COPYTRACE_WORKER_LISTEN",
    ] {
        assert!(
            named.contains(essential),
            "the scan found no {essential}: {named:?}"
        );
    }
}

#[test]
fn the_operations_guide_names_every_variable_the_binary_documents() {
    let help = Help::collect();
    let guide = variable_names(&read("docs/operations.md"));
    let missing: Vec<String> = documented_variables(&help)
        .into_iter()
        .filter(|name| !guide.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/operations.md does not mention {missing:?}"
    );
}

/// One `copytrace` invocation found in a file.
#[derive(Debug)]
struct Invocation {
    file: String,
    line: usize,
    args: Vec<String>,
}

/// The words of a command line up to a comment or the end of a code span.
fn words(text: &str) -> Vec<String> {
    let end = text.find(['`', '#']).unwrap_or(text.len());
    text[..end]
        .split_whitespace()
        .filter(|w| !matches!(*w, "\\" | "…" | "..."))
        .map(|w| w.trim_matches('"').to_owned())
        .collect()
}

/// The strings of a JSON-style exec list: `["worker", "crawl"]`.
fn exec_list(text: &str) -> Vec<String> {
    let inner = text
        .trim()
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or_else(|| panic!("not an exec list: {text}"));
    inner
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Every `copytrace` invocation in the deployment files.
fn invocations() -> Vec<Invocation> {
    let mut found = Vec::new();
    let mut add = |file: &str, line: usize, args: Vec<String>| {
        // `run --rm cli …` in prose stands for any command.
        if args.is_empty() {
            return;
        }
        found.push(Invocation {
            file: file.to_owned(),
            line: line + 1,
            args,
        });
    };
    for (file, text) in deployment_files() {
        let mut in_code = false;
        let mut continued = false;
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            // A line continuing the previous one (`HEALTHCHECK … \` then `CMD [...]`) is no
            // instruction of its own.
            let continuation = std::mem::replace(&mut continued, trimmed.ends_with('\\'));
            // `docker compose run --rm cli ARGS` and `docker run --rm copytrace ARGS`, anywhere.
            for marker in ["run --rm cli ", "run --rm copytrace "] {
                if let Some(at) = line.find(marker) {
                    add(&file, n, words(&line[at + marker.len()..]));
                }
            }
            if file == "docker-compose.yml"
                && let Some(list) = trimmed.strip_prefix("command:")
            {
                add(&file, n, exec_list(list));
            }
            if file.ends_with("Dockerfile")
                && !continuation
                && let Some(list) = trimmed.strip_prefix("CMD ")
            {
                add(&file, n, exec_list(list));
            }
            if file.ends_with(".service")
                && let Some(command) = trimmed.strip_prefix("ExecStart=")
            {
                let args = words(command);
                assert!(
                    args.first().is_some_and(|a| a.ends_with("/copytrace")),
                    "{file}:{}: ExecStart does not run copytrace: {command}",
                    n + 1
                );
                let args = args[1..].to_vec();
                if args.iter().any(|a| a.contains("%i")) {
                    // The template's instances are the worker kinds.
                    for instance in ["crawl", "match"] {
                        add(
                            &file,
                            n,
                            args.iter().map(|a| a.replace("%i", instance)).collect(),
                        );
                    }
                } else {
                    add(&file, n, args);
                }
            }
            if file.ends_with(".md") {
                if trimmed.starts_with("```") {
                    in_code = !in_code;
                } else if in_code && let Some(rest) = trimmed.strip_prefix("copytrace ") {
                    add(&file, n, words(rest));
                }
            }
        }
    }
    found
}

#[test]
fn every_command_the_deployment_files_run_exists_with_the_flags_they_pass() {
    let help = Help::collect();
    let found = invocations();
    let mut problems = Vec::new();
    let mut resolved: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for invocation in &found {
        match help.resolve(&invocation.args) {
            Ok(path) => {
                resolved
                    .entry(invocation.file.clone())
                    .or_default()
                    .insert(path.join(" "));
            }
            Err(why) => problems.push(format!(
                "{}:{}: `copytrace {}`: {why}",
                invocation.file,
                invocation.line,
                invocation.args.join(" ")
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The scans found the processes each file must run.
    let expect = |file: &str, commands: &[&str]| {
        let got = resolved.get(file).cloned().unwrap_or_default();
        for command in commands {
            assert!(
                got.contains(*command),
                "{file} should run `copytrace {command}`; found {got:?}"
            );
        }
    };
    expect(
        "docker-compose.yml",
        &[
            "migrate",
            "serve",
            "worker crawl",
            "worker match",
            "library add",
            "index rebuild",
        ],
    );
    expect("deploy/Dockerfile", &["serve"]);
    expect("deploy/systemd/copytrace-serve.service", &["serve"]);
    expect(
        "deploy/systemd/copytrace-worker@.service",
        &["worker crawl", "worker match"],
    );
    expect(
        "docs/operations.md",
        &[
            "migrate",
            "library add",
            "index rebuild",
            "jobs retry",
            "config",
        ],
    );
}

/// `${NAME:-default}`, `${NAME-default}`, `${NAME:?message}` and `${NAME}` as Compose
/// interpolates them, with every variable unset except required ones, which get `required`.
fn interpolate(text: &str, required: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .unwrap_or_else(|| panic!("unclosed ${{ in {text}"))
            + start;
        let expr = &rest[start + 2..end];
        let name_end = expr
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(expr.len());
        let operator = &expr[name_end..];
        if let Some(default) = operator
            .strip_prefix(":-")
            .or_else(|| operator.strip_prefix('-'))
        {
            out.push_str(default);
        } else if operator.starts_with(":?") || operator.starts_with('?') {
            out.push_str(required);
        } else {
            assert!(operator.is_empty(), "unsupported interpolation ${{{expr}}}");
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `KEY=VALUE` lines of an environment file (comments and blank lines skipped).
fn env_file(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// Every `(file, variable, value)` a deployment file sets.
fn settings() -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for (file, text) in deployment_files() {
        if file == "docker-compose.yml" {
            for line in interpolate(&text, "a-password").lines() {
                let line = line.trim();
                if let Some((key, value)) = line.split_once(':')
                    && key.starts_with("COPYTRACE_")
                {
                    let value = value.trim().trim_matches('"').to_owned();
                    found.push((file.clone(), key.to_owned(), value));
                }
            }
        } else if file.ends_with(".env") || file.ends_with(".env.example") {
            for (key, value) in env_file(&text) {
                if key.starts_with("COPYTRACE_") {
                    found.push((file.clone(), key, value));
                }
            }
        } else if file.ends_with("Dockerfile") {
            for word in text.split_whitespace() {
                if let Some((key, value)) = word.split_once('=')
                    && key.starts_with("COPYTRACE_")
                {
                    found.push((file.clone(), key.to_owned(), value.to_owned()));
                }
            }
        } else if file.ends_with(".toml") {
            let config = copytrace::config::ConfigFile::read(&repo().join(&file))
                .unwrap_or_else(|e| panic!("{file} does not load: {e:#}"));
            for (key, value) in config.to_env() {
                found.push((file.clone(), key.to_owned(), value));
            }
        }
    }
    found
}

#[test]
fn every_value_the_deployment_files_set_is_accepted_by_the_process_that_reads_it() {
    let help = Help::collect();
    let readers = help.env_variables();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let found = settings();
    for file in [
        "docker-compose.yml",
        "deploy/Dockerfile",
        "deploy/copytrace.toml",
        "deploy/systemd/worker-match.env",
    ] {
        assert!(
            found.iter().any(|(f, _, _)| f == file),
            "no settings found in {file}"
        );
    }
    let mut checked = 0;
    for (file, key, value) in &found {
        // The database URL is what the check below replaces: it must name a backend the
        // binary has. (COPYTRACE_LOG, read by no argument parser, has no reader below.)
        if key == "COPYTRACE_DATABASE_URL" {
            let scheme = value.split(':').next().unwrap_or_default();
            assert!(
                matches!(scheme, "postgres" | "postgresql" | "sqlite"),
                "{file}: {key}={value:?} names no database backend"
            );
            continue;
        }
        let Some(paths) = readers.get(key) else {
            continue;
        };
        let process = [&["serve"][..], &["worker", "match"], &["worker", "crawl"]]
            .into_iter()
            .map(|p| p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
            .find(|p| paths.contains(p));
        let Some(process) = process else {
            continue;
        };
        // A database URL with an unknown scheme: the process gets past argument parsing (which
        // exits 2 on a bad value) and stops at opening the database (exit 1), before any I/O.
        let run: Run = run_command(
            bare(dir.path())
                .args(&process)
                .env(key, value)
                .env("COPYTRACE_DATABASE_URL", "unchecked:"),
        );
        assert!(
            run.code == Some(1) && run.stderr.contains("invalid database URL"),
            "{file}: {key}={value:?} is refused by `copytrace {}`: {run:#?}",
            process.join(" ")
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} settings were checked");
}

#[test]
fn the_example_configuration_loads_and_config_shows_its_values_with_secrets_hidden() {
    let example = repo().join("deploy/copytrace.toml");
    let text = read("deploy/copytrace.toml");
    let settings = copytrace::config::ConfigFile::read(&example)
        .expect("deploy/copytrace.toml loads")
        .to_env();

    // The example documents every setting of the file.
    let mut every = config_variables();
    every.extend(
        [
            "COPYTRACE_DATABASE_URL",
            "COPYTRACE_REDIS_URL",
            "COPYTRACE_REDIS_PREFIX",
        ]
        .map(str::to_owned),
    );
    let named = variable_names(&text);
    let undocumented: Vec<&String> = every.iter().filter(|v| !named.contains(*v)).collect();
    assert!(
        undocumented.is_empty(),
        "deploy/copytrace.toml does not mention {undocumented:?}"
    );

    // Passwords do not belong in the file.
    for key in ["COPYTRACE_DATABASE_URL", "COPYTRACE_REDIS_URL"] {
        let url = url::Url::parse(&settings[key]).expect("a URL");
        assert_eq!(url.password(), None, "the example puts a password in {key}");
    }

    let dir = tempfile::tempdir().expect("a temporary directory");
    let run = run_command(bare(dir.path()).arg("--config").arg(&example).arg("config")).success();
    let out = &run.stdout;
    assert!(
        out.contains(&format!("# configuration file: {}", example.display())),
        "{out}"
    );
    for (key, value) in &settings {
        let line = match key.as_str() {
            "COPYTRACE_DATABASE_URL" => format!("database_url = {value:?}"),
            "COPYTRACE_REDIS_URL" => format!("redis_url = {value:?}"),
            "COPYTRACE_REDIS_PREFIX" => format!("redis_prefix = {value:?}"),
            _ => format!("# {key} = {value:?}"),
        };
        assert!(
            out.lines().any(|l| l == line),
            "`config` does not show {line}:\n{out}"
        );
    }

    // The same file with passwords in both URLs: `config` shows neither.
    let secret = "pw-4f2a9c-never-shown";
    let mut with_passwords = text.clone();
    for key in ["COPYTRACE_DATABASE_URL", "COPYTRACE_REDIS_URL"] {
        let plain = &settings[key];
        let mut url = url::Url::parse(plain).expect("a URL");
        url.set_password(Some(secret))
            .expect("the URL takes a password");
        with_passwords = with_passwords.replace(&format!("\"{plain}\""), &format!("\"{url}\""));
    }
    assert_eq!(
        with_passwords.matches(secret).count(),
        2,
        "both URLs should carry the password"
    );
    let secret_file = dir.path().join("secret.toml");
    std::fs::write(&secret_file, &with_passwords).expect("write the test configuration");
    let run = run_command(
        bare(dir.path())
            .arg("--config")
            .arg(&secret_file)
            .arg("config"),
    )
    .success();
    assert!(
        !run.stdout.contains(secret) && !run.stderr.contains(secret),
        "a password is shown: {run:#?}"
    );
    assert_eq!(run.stdout.matches("***").count(), 2, "{}", run.stdout);
}

#[test]
fn the_systemd_environment_files_win_over_the_example_configuration() {
    let example = repo().join("deploy/copytrace.toml");
    let common = env_file(&read("deploy/systemd/copytrace.env.example"));
    let secrets: Vec<String> = common
        .iter()
        .filter_map(|(_, v)| url::Url::parse(v).ok()?.password().map(str::to_owned))
        .collect();
    assert!(
        !secrets.is_empty(),
        "the secrets file holds no password-bearing URL"
    );
    for kind in ["crawl", "match"] {
        let mut env = common.clone();
        env.extend(env_file(&read(&format!(
            "deploy/systemd/worker-{kind}.env"
        ))));
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut command = bare(dir.path());
        command.envs(env.iter().map(|(k, v)| (k, v)));
        let run = run_command(command.arg("--config").arg(&example).arg("config")).success();
        for (key, value) in &env {
            if key == "COPYTRACE_DATABASE_URL" {
                assert!(
                    run.stdout
                        .contains("database_url = \"postgres://copytrace:***@"),
                    "{}",
                    run.stdout
                );
            } else {
                let line = format!("# {key} = {value:?}");
                assert!(
                    run.stdout.lines().any(|l| l == line),
                    "no {line}:\n{}",
                    run.stdout
                );
            }
        }
        for secret in &secrets {
            assert!(!run.stdout.contains(secret.as_str()), "{}", run.stdout);
        }
    }
    // Each worker kind has its own endpoint port.
    let port = |kind: &str| {
        env_file(&read(&format!("deploy/systemd/worker-{kind}.env")))
            .into_iter()
            .find(|(k, _)| k == "COPYTRACE_WORKER_LISTEN")
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("worker-{kind}.env sets no COPYTRACE_WORKER_LISTEN"))
    };
    assert_ne!(port("crawl"), port("match"));
}

#[test]
fn the_image_runs_as_an_unprivileged_user() {
    let dockerfile = read("deploy/Dockerfile");
    let lines: Vec<&str> = dockerfile.lines().map(str::trim).collect();
    let last_from = lines
        .iter()
        .rposition(|l| l.to_ascii_uppercase().starts_with("FROM "))
        .expect("a FROM line");
    let user = lines[last_from..]
        .iter()
        .filter_map(|l| {
            let (instruction, rest) = l.split_once(char::is_whitespace)?;
            instruction
                .eq_ignore_ascii_case("USER")
                .then(|| rest.trim())
        })
        .next_back()
        .expect("the final stage sets USER");
    let name = user.split(':').next().unwrap_or(user);
    assert!(
        !matches!(name, "root" | "0" | ""),
        "the final stage runs as {user:?}"
    );
    assert!(
        lines[last_from..].contains(&"STOPSIGNAL SIGTERM"),
        "the final stage should stop with SIGTERM"
    );
}

/// Seconds in a duration as Compose (`30s`, `1m30s`) or systemd (`35s`, `1min`) writes it.
fn seconds(text: &str) -> u64 {
    let text = text.trim().trim_matches('"');
    let mut total = 0;
    let mut number = String::new();
    let mut unit = String::new();
    let mut flush = |number: &mut String, unit: &mut String| {
        if number.is_empty() {
            return;
        }
        let n: u64 = number.parse().expect("a number");
        total += match unit.as_str() {
            "" | "s" | "sec" => n,
            "m" | "min" => n * 60,
            "h" => n * 3600,
            other => panic!("unknown unit {other:?} in {text:?}"),
        };
        number.clear();
        unit.clear();
    };
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !unit.is_empty() {
                flush(&mut number, &mut unit);
            }
            number.push(c);
        } else {
            unit.push(c);
        }
    }
    flush(&mut number, &mut unit);
    total
}

#[test]
fn processes_get_more_time_to_stop_than_the_grace_of_the_job_in_hand() {
    let grace = copytrace_scheduler::WorkerConfig::default()
        .shutdown_grace
        .as_secs();
    let compose = read("docker-compose.yml");
    let compose_stops: Vec<u64> = compose
        .lines()
        .filter_map(|l| l.trim().strip_prefix("stop_grace_period:"))
        .map(seconds)
        .collect();
    assert!(
        !compose_stops.is_empty(),
        "no stop_grace_period in docker-compose.yml"
    );
    for unit in [
        "deploy/systemd/copytrace-serve.service",
        "deploy/systemd/copytrace-worker@.service",
    ] {
        let text = read(unit);
        let stop = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("TimeoutStopSec="))
            .map(seconds)
            .unwrap_or_else(|| panic!("{unit} sets no TimeoutStopSec"));
        assert!(
            stop > grace,
            "{unit}: TimeoutStopSec {stop}s ≤ job grace {grace}s"
        );
        assert!(text.contains("KillSignal=SIGTERM"), "{unit}");
    }
    for stop in compose_stops {
        assert!(
            stop > grace,
            "docker-compose.yml: stop_grace_period {stop}s ≤ {grace}s"
        );
    }
}
