//! `index rebuild` and `match` with `--redis-url`, against the real test Redis server.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use copytrace_index_redis::RedisIndex;
use copytrace_matcher::{Index, PostingIndex};

use crate::helpers::{TestSite, Workspace, closed_port, library_text, write_sample_library};

/// The test server's URL; unset means the suite was not started by `./scripts/test`, which is a
/// failure, never a reason to skip.
fn redis_url() -> String {
    std::env::var("COPYTRACE_TEST_REDIS_URL").unwrap_or_else(|_| {
        panic!(
            "COPYTRACE_TEST_REDIS_URL is not set: run ./scripts/test, which starts a real \
             redis-server for these tests"
        )
    })
}

/// The seed URLs of the test Redis Cluster (three masters started by `./scripts/test`).
fn cluster_url() -> String {
    std::env::var("COPYTRACE_TEST_REDIS_CLUSTER_URL").unwrap_or_else(|_| {
        panic!(
            "COPYTRACE_TEST_REDIS_CLUSTER_URL is not set: run ./scripts/test, which starts a \
             real three-master Redis Cluster for these tests"
        )
    })
}

/// A key prefix of its own for one test, deleted when the test ends.
struct Namespace {
    prefix: String,
    url: String,
}

impl Namespace {
    fn new() -> Namespace {
        Namespace::on(redis_url())
    }

    fn on(url: String) -> Namespace {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let prefix = format!(
            "cli-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        Namespace { prefix, url }
    }

    /// The index as the binary writes it (max distance 3, the matcher's default).
    fn index(&self) -> RedisIndex {
        RedisIndex::connect(&self.url, &self.prefix, 3).expect("the test Redis answers")
    }

    /// `--redis-url URL --redis-prefix PREFIX` followed by `args`.
    fn args<'a>(&'a self, url: &'a str, args: &[&'a str]) -> Vec<&'a str> {
        let mut all = vec!["--redis-url", url, "--redis-prefix", &self.prefix];
        all.extend_from_slice(args);
        all
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        if let Ok(index) = RedisIndex::connect(&self.url, &self.prefix, 3) {
            let _ = index.delete_namespace();
        }
    }
}

/// Runs `match` over the namespace's Redis index and checks it found every copy of the site.
fn matches_every_copy_through_redis(
    workspace: &Workspace,
    namespace: &Namespace,
    url: &str,
    site: &TestSite,
) {
    let matched = workspace.ok(&namespace.args(url, &["match"]));
    assert!(
        matched.stdout.contains("(Redis index)"),
        "{}",
        matched.stdout
    );
    let found: BTreeSet<(String, String)> = workspace.export_csv().pairs().into_iter().collect();
    assert_eq!(found, site.expected_matches());
}

/// The k-gram postings the index holds (the default candidate source's records).
fn postings(namespace: &Namespace) -> usize {
    let config = copytrace_matcher::MatchConfig::default();
    namespace
        .index()
        .postings(&config.candidates.postings)
        .expect("the postings open")
        .len()
        .expect("the postings count")
}

/// Asserts that the namespace's index holds what `index rebuild` builds from the library as
/// it is now (the postings filed change by change are those of a build from scratch), leaving
/// the rebuilt index.
fn same_as_rebuilt(workspace: &Workspace, namespace: &Namespace, url: &str) {
    let kept = postings(namespace);
    assert!(kept > 0, "the index holds postings");
    workspace.ok(&namespace.args(url, &["index", "rebuild"]));
    assert_eq!(kept, postings(namespace), "kept in step = rebuilt");
}

fn work_id(workspace: &Workspace, external_id: &str) -> i64 {
    workspace
        .works()
        .iter()
        .find(|w| w["external_id"] == external_id)
        .and_then(|w| w["id"].as_i64())
        .unwrap_or_else(|| panic!("no work {external_id}"))
}

#[test]
fn matching_through_a_rebuilt_redis_index_finds_every_pirated_page() {
    let url = redis_url();
    let namespace = Namespace::new();
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let library = write_sample_library(&workspace);
    workspace.ok(&["library", "add", library.to_str().expect("UTF-8 path")]);

    let rebuilt = workspace.ok(&namespace.args(&url, &["index", "rebuild"]));
    assert!(
        rebuilt.stdout.contains("indexed 4 work(s)"),
        "{}",
        rebuilt.stdout
    );
    // The postings are really in Redis, under the test's prefix: about a quarter of one per
    // character of the sample library (two projections, one hash kept per window of 16).
    let filed = postings(&namespace);
    assert!(filed > 400, "the sample library has {filed} postings");
    assert!(
        rebuilt
            .stdout
            .contains(&format!("index holds {filed} k-gram posting(s)")),
        "{}",
        rebuilt.stdout
    );

    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    matches_every_copy_through_redis(&workspace, &namespace, &url, &site);
}

#[test]
fn candidates_come_from_redis_not_from_the_database() {
    let url = redis_url();
    let namespace = Namespace::new();
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let library = write_sample_library(&workspace);
    workspace.ok(&["library", "add", library.to_str().expect("UTF-8 path")]);
    workspace.ok(&namespace.args(&url, &["index", "rebuild"]));

    // Take one work out of the Redis postings behind the binary's back, while the database
    // still holds its text and fingerprints: the k-gram source may not propose it any more (it
    // reads Redis), so only the sense index (laundered copies) could.
    let removed = work_id(&workspace, "xingchen-ch1");
    let config = copytrace_matcher::MatchConfig::default();
    let mut postings = namespace
        .index()
        .postings(&config.candidates.postings)
        .expect("the postings open");
    let before = postings.len().expect("len");
    let keys = copytrace_matcher::Matcher::new(config).posting_keys(&workspace.work_text(removed));
    PostingIndex::remove_work(&mut postings, removed, &keys).expect("remove_work");
    assert!(postings.len().expect("len") < before, "its postings left");
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    workspace.ok(&namespace.args(&url, &["match"]));
    let export = workspace.export_csv();
    let (work_column, method_column) = (export.column("work_external_id"), export.column("method"));
    let methods = |work: &str| -> Vec<String> {
        export
            .rows
            .iter()
            .filter(|row| &row[work_column] == work)
            .map(|row| row[method_column].to_owned())
            .collect()
    };
    for method in methods("xingchen-ch1") {
        assert!(
            !method.contains("kgram"),
            "kgram candidates came from somewhere other than Redis: {method}"
        );
    }
    assert!(!methods("jianghu-ch1").is_empty());
    for method in methods("jianghu-ch1") {
        assert!(method.contains("kgram"), "{method}");
    }
    let expected: BTreeSet<(String, String)> = site
        .expected_matches()
        .into_iter()
        .filter(|(_, work)| work != "xingchen-ch1")
        .collect();
    let found: BTreeSet<(String, String)> = export
        .pairs()
        .into_iter()
        .filter(|(_, work)| work != "xingchen-ch1")
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn the_redis_indexes_give_the_verdicts_the_in_memory_indexes_give() {
    let url = redis_url();
    let namespace = Namespace::new();
    let site = TestSite::sample();
    let verdicts = |workspace: &Workspace| -> Vec<Vec<String>> {
        let export = workspace.export_csv();
        let kept: Vec<usize> = [
            "page_url",
            "work_external_id",
            "score",
            "coverage",
            "method",
        ]
        .iter()
        .map(|name| export.column(name))
        .collect();
        let mut rows: Vec<Vec<String>> = export
            .rows
            .iter()
            .map(|row| kept.iter().map(|&c| row[c].to_owned()).collect())
            .collect();
        rows.sort();
        rows
    };
    let mut runs = Vec::new();
    for redis in [false, true] {
        let workspace = Workspace::new();
        let library = write_sample_library(&workspace);
        let add = ["library", "add", library.to_str().expect("UTF-8 path")];
        let args = if redis {
            namespace.args(&url, &add)
        } else {
            add.to_vec()
        };
        workspace.ok(&args);
        workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
        let matched = if redis {
            workspace.ok(&namespace.args(&url, &["match"]))
        } else {
            workspace.ok(&["match"])
        };
        assert_eq!(
            matched.stdout.contains("(Redis index)"),
            redis,
            "{}",
            matched.stdout
        );
        runs.push(verdicts(&workspace));
    }
    assert!(
        runs[0].len() >= site.expected_matches().len(),
        "{:?}",
        runs[0]
    );
    assert_eq!(runs[1], runs[0]);
}

#[test]
fn a_fresh_build_that_did_not_finish_is_built_again_by_the_next_match() {
    let url = redis_url();
    let namespace = Namespace::new();
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let library = write_sample_library(&workspace);
    workspace.ok(&["library", "add", library.to_str().expect("UTF-8 path")]);
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    // What a match worker killed half-way through building a fresh index leaves (or one whose
    // database restarted under it): the build's mark, a blank generation, part of the windows (here
    // one that is not even the work's), and no claim once its claim has lapsed.
    let index = namespace.index();
    index.mark_fresh_build().expect("mark");
    index
        .set_library_generation(None)
        .expect("blank the generation");
    let config = copytrace_matcher::MatchConfig::default();
    let mut stray = index
        .postings(&config.candidates.postings)
        .expect("the postings open");
    let key = copytrace_matcher::postings::Key {
        hash: 0x0123_4567_89ab_cdef,
        position: 0,
        projection: copytrace_fingerprint::winnow::Projection::Chars,
    };
    PostingIndex::insert_work(&mut stray, work_id(&workspace, "xingchen-ch1"), &[key])
        .expect("a stray posting");

    // The next match builds it again from scratch, instead of refusing it until `index rebuild`.
    matches_every_copy_through_redis(&workspace, &namespace, &url, &site);
    let index = namespace.index();
    assert!(!index.fresh_build_unfinished().expect("read the mark"));
    let built = postings(&namespace);
    let mut found = Vec::new();
    PostingIndex::lookup(&stray, &[key.hash], 64, &mut found).expect("lookup");
    assert!(found[0].is_empty(), "the stray posting is gone: {found:?}");

    // An `index rebuild` that did not finish has no such mark: it is still refused, since only
    // a rebuild can tell which works it is missing.
    index
        .set_library_generation(None)
        .expect("blank the generation");
    let refused = workspace.run(&namespace.args(&url, &["match", "--all"]));
    assert_ne!(refused.code, Some(0), "{refused:#?}");
    assert!(
        refused.stderr.contains("run `copytrace index rebuild`"),
        "{refused:#?}"
    );
    workspace.ok(&namespace.args(&url, &["index", "rebuild"]));
    assert_eq!(postings(&namespace), built, "the fresh build = a rebuild");
}

/// A work added without `--redis-url` has its pages marked for matching at once; the next
/// match finds the index behind the library in a way it cannot skip and files the work itself
/// (as it builds a fresh index), instead of matching those pages against an index that lacks
/// it or refusing until `index rebuild`.
#[test]
fn a_redis_index_behind_the_library_is_brought_in_step_by_the_next_match() {
    let url = redis_url();
    let namespace = Namespace::new();
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let first = workspace.write("lib/xingchen-ch1.txt", library_text("xingchen-ch1"));
    workspace.ok(&["library", "add", first.to_str().expect("UTF-8 path")]);
    // A fresh Redis is built by the first match that needs it: no separate step.
    let first_match = workspace.ok(&namespace.args(&url, &["match"]));
    assert!(
        first_match.stdout.contains("(Redis index)"),
        "{first_match:#?}"
    );
    let filed = postings(&namespace);
    assert!(filed > 0, "the first match filed the work");
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);

    let library = write_sample_library(&workspace);
    workspace.ok(&["library", "add", library.to_str().expect("UTF-8 path")]);
    assert_eq!(
        postings(&namespace),
        filed,
        "nothing was filed without --redis-url"
    );
    workspace.ok(&namespace.args(&url, &["match"]));
    assert!(
        postings(&namespace) > filed,
        "the match filed the new works"
    );
    let found: BTreeSet<(String, String)> = workspace.export_csv().pairs().into_iter().collect();
    assert_eq!(found, site.expected_matches());
    same_as_rebuilt(&workspace, &namespace, &url);
}

#[test]
fn library_add_with_a_redis_url_keeps_a_built_index_in_step() {
    let url = redis_url();
    let namespace = Namespace::new();
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let first = workspace.write("lib/xingchen-ch1.txt", library_text("xingchen-ch1"));
    let added = workspace.ok(&namespace.args(&url, &["library", "add", first.to_str().unwrap()]));
    assert!(
        added.stdout.contains("built from the library (1 work(s))"),
        "the first add builds a fresh index: {added:#?}"
    );
    same_as_rebuilt(&workspace, &namespace, &url);
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);

    // The rest of the library arrives after the crawl; the index follows without a rebuild
    // (the new works' postings appended), holding what a rebuild would.
    let library = write_sample_library(&workspace);
    let added = workspace.ok(&namespace.args(&url, &["library", "add", library.to_str().unwrap()]));
    assert!(added.stdout.contains("Redis index under"), "{added:#?}");
    let grown = postings(&namespace);
    workspace.ok(&namespace.args(&url, &["match"]));
    let found: BTreeSet<(String, String)> = workspace.export_csv().pairs().into_iter().collect();
    assert_eq!(found, site.expected_matches());
    same_as_rebuilt(&workspace, &namespace, &url);
    assert_eq!(postings(&namespace), grown);

    // A changed work replaces its postings instead of adding to them: filing it again with
    // one sentence more leaves the other works' postings and adds about that sentence's.
    let changed = format!(
        "{}\n新增的一段文字，作者修订了本章。\n",
        library_text("xingchen-ch1")
    );
    let revised = workspace.write("lib2/xingchen-ch1.txt", changed);
    workspace.ok(&namespace.args(&url, &["library", "add", revised.to_str().unwrap()]));
    let revised_postings = postings(&namespace);
    assert!(
        revised_postings >= grown && revised_postings <= grown + 10,
        "{grown} postings before, {revised_postings} after"
    );
    workspace.ok(&namespace.args(&url, &["match"]));
    let found: BTreeSet<(String, String)> = workspace.export_csv().pairs().into_iter().collect();
    assert_eq!(found, site.expected_matches());
}

#[test]
fn index_rebuild_without_a_redis_url_is_refused() {
    let workspace = Workspace::new();
    let run = workspace.run(&["index", "rebuild"]);
    assert!(run.one_line_error().contains("--redis-url"), "{run:#?}");
}

/// An index written by an older version is refused with the advice to rebuild it, and the
/// rebuild then works (it was refused too before).
#[test]
fn an_index_of_an_older_layout_is_refused_until_index_rebuild_replaces_it() {
    refused_after_changing_meta(&["HSET", "layout", "3"], "layout 3");
}

/// Builds the sample library's index, runs `command` (`[name, field, value…]`) on its meta
/// hash behind the binary's back, then checks `match` is refused naming `reason` until `index
/// rebuild` replaces the index.
fn refused_after_changing_meta(command: &[&str], reason: &str) {
    let url = redis_url();
    let namespace = Namespace::new();
    let workspace = Workspace::new();
    let library = write_sample_library(&workspace);
    workspace.ok(&["library", "add", library.to_str().expect("UTF-8 path")]);
    workspace.ok(&namespace.args(&url, &["index", "rebuild"]));
    let client = redis::Client::open(url.as_str()).expect("a valid test URL");
    let mut connection = client.get_connection().expect("the test Redis answers");
    let mut cmd = redis::cmd(command[0]);
    cmd.arg(format!("{}:meta", namespace.prefix));
    for arg in &command[1..] {
        cmd.arg(*arg);
    }
    let _: redis::Value = cmd.query(&mut connection).expect("Redis answers");

    refused_until_rebuilt(&workspace, &namespace, &url, reason);
}

/// An index filed before the k-gram postings existed (its metadata names no sources: the four
/// older ones were filed) would answer every page "no candidates": it is refused with the
/// advice to rebuild it, and the rebuild files the postings.
#[test]
fn an_index_filed_without_the_kgram_source_is_refused_until_index_rebuild() {
    refused_after_changing_meta(
        &["HDEL", "sources"],
        "filed for the candidate sources simhash+minhash+dna+sense",
    );
}

/// `match` refuses the index with one error line naming `reason` and the way out, `copytrace
/// index rebuild`; after that rebuild it matches.
fn refused_until_rebuilt(workspace: &Workspace, namespace: &Namespace, url: &str, reason: &str) {
    let refused = workspace.run(&namespace.args(url, &["match"]));
    let message = refused.one_line_error();
    assert!(
        message.contains(reason) && message.contains("index rebuild"),
        "{message}"
    );
    workspace.ok(&namespace.args(url, &["index", "rebuild"]));
    workspace.ok(&namespace.args(url, &["match"]));
}

#[test]
fn an_unreachable_redis_is_one_error_line_without_the_password() {
    let workspace = Workspace::new();
    workspace.ok(&["migrate"]);
    let url = format!("redis://:pa55word@127.0.0.1:{}/0", closed_port());
    let run = workspace.run(&["--redis-url", &url, "index", "rebuild"]);
    let message = run.one_line_error();
    assert!(message.contains("cannot open the Redis index"), "{message}");
    assert!(!message.contains("pa55word"), "{message}");
}

#[test]
fn library_rm_takes_a_work_out_of_matching_on_postgres_and_redis_at_once() {
    let url = redis_url();
    let namespace = Namespace::new();
    let database = crate::postgres_store::Database::new();
    let mut workspace = Workspace::new();
    workspace.db = database.url.clone();
    let site = TestSite::sample();
    let library = write_sample_library(&workspace);
    workspace.ok(&["library", "add", library.to_str().expect("UTF-8 path")]);
    workspace.ok(&namespace.args(&url, &["index", "rebuild"]));
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    workspace.ok(&namespace.args(&url, &["match"]));
    let before: BTreeSet<(String, String)> = workspace.export_csv().pairs().into_iter().collect();
    assert_eq!(before, site.expected_matches());

    let removed = work_id(&workspace, "xingchen-ch1");
    let config = copytrace_matcher::MatchConfig::default();
    let removed_postings = copytrace_matcher::Matcher::new(config)
        .posting_keys(&workspace.work_text(removed))
        .len();
    let postings_before = postings(&namespace);
    let rm = workspace.ok(&namespace.args(&url, &["library", "rm", &removed.to_string()]));
    assert!(rm.stdout.contains("Redis index under"), "{rm:#?}");
    assert_eq!(
        postings(&namespace),
        postings_before - removed_postings,
        "its postings left Redis at once"
    );

    // Matching everything again through Redis, with no rebuild, never finds the withdrawn work
    // and keeps its matches as withdrawn.
    workspace.ok(&namespace.args(&url, &["match", "--all"]));
    let export = workspace.export_csv();
    let (work, status) = (export.column("work_external_id"), export.column("status"));
    let mut statuses: Vec<(String, String)> = export
        .rows
        .iter()
        .map(|row| (row[work].to_owned(), row[status].to_owned()))
        .collect();
    statuses.sort();
    statuses.dedup();
    assert!(
        statuses
            .iter()
            .filter(|(w, _)| w == "xingchen-ch1")
            .all(|(_, s)| s == "withdrawn"),
        "{statuses:?}"
    );
    let after: BTreeSet<(String, String)> = export.pairs().into_iter().collect();
    assert_eq!(after, before, "no match was deleted");
}

#[test]
fn an_index_whose_rebuild_did_not_finish_is_refused_not_rebuilt_behind_its_back() {
    let url = redis_url();
    let namespace = Namespace::new();
    let workspace = Workspace::new();
    let first = workspace.write("lib/xingchen-ch1.txt", library_text("xingchen-ch1"));
    workspace.ok(&["library", "add", first.to_str().expect("UTF-8 path")]);
    // Works written, generation never recorded: what a rebuild stopped half-way leaves.
    let mut index = namespace.index();
    index
        .insert_work(1, &[(0, 0x0123_4567_89ab_cdef)])
        .expect("insert");
    let refused = workspace.run(&namespace.args(&url, &["match"]));
    let message = refused.one_line_error();
    assert!(
        message.contains("has not been built") && message.contains("index rebuild"),
        "{refused:#?}"
    );
    let added = workspace.run(&namespace.args(
        &url,
        &["library", "add", first.to_str().expect("UTF-8 path")],
    ));
    assert!(added.stderr.contains("index rebuild"), "{added:#?}");
}

#[test]
fn crawl_with_match_stores_every_page_even_when_matching_is_refused() {
    let url = redis_url();
    let namespace = Namespace::new();
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let library = write_sample_library(&workspace);
    workspace.ok(&namespace.args(&url, &["library", "add", library.to_str().unwrap()]));
    // The index now says it reflects a library far ahead of this one (another database's):
    // matching refuses it.
    let index = namespace.index();
    index
        .set_library_generation(Some(1_000_000))
        .expect("record a generation");

    let base = site.base_url();
    let run = workspace.run(&namespace.args(
        &url,
        &["crawl", &base, "--allow-private-addresses", "--match"],
    ));
    assert_ne!(run.code, Some(0), "{run:#?}");
    assert!(
        run.stdout.contains("crawled "),
        "the crawl finished: {run:#?}"
    );
    assert!(
        run.one_line_error()
            .contains("another state of the library"),
        "{run:#?}"
    );
    // Nothing was lost: the stored pages are matched once the index is rebuilt.
    workspace.ok(&namespace.args(&url, &["index", "rebuild"]));
    workspace.ok(&namespace.args(&url, &["match"]));
    let found: BTreeSet<(String, String)> = workspace.export_csv().pairs().into_iter().collect();
    assert_eq!(found, site.expected_matches());
}

/// The test cluster's nodes: `(port, directory of its redis.conf)`.
fn cluster_nodes() -> Vec<(u16, std::path::PathBuf)> {
    std::env::var("COPYTRACE_TEST_REDIS_CLUSTER_NODES")
        .expect("COPYTRACE_TEST_REDIS_CLUSTER_NODES is set by ./scripts/test with the cluster")
        .split(',')
        .map(|node| {
            let (port, dir) = node.split_once(':').expect("port:directory");
            (port.parse().expect("a port"), dir.into())
        })
        .collect()
}

/// Whether every node of the test cluster reports `cluster_state:ok`.
fn cluster_healthy() -> bool {
    cluster_nodes().iter().all(|(port, _)| {
        redis::Client::open(format!("redis://127.0.0.1:{port}"))
            .and_then(|client| client.get_connection())
            .and_then(|mut c| redis::cmd("CLUSTER").arg("INFO").query::<String>(&mut c))
            .is_ok_and(|info| info.contains("cluster_state:ok"))
    })
}

#[test]
fn on_a_redis_cluster_a_stopped_node_fails_matching_and_its_restart_lets_it_finish() {
    let url = cluster_url();
    let namespace = Namespace::on(url.clone());
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let library = write_sample_library(&workspace);
    let added = workspace.ok(&namespace.args(
        &url,
        &["library", "add", library.to_str().expect("UTF-8 path")],
    ));
    assert!(
        added.stdout.contains("built from the library"),
        "{}",
        added.stdout
    );
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);

    let (port, dir) = cluster_nodes()[2].clone();
    let mut node = redis::Client::open(format!("redis://127.0.0.1:{port}"))
        .and_then(|client| client.get_connection())
        .expect("the node answers");
    let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN").query(&mut node);
    let stopped = workspace.run(&namespace.args(&url, &["match"]));
    let error = stopped.one_line_error();
    assert!(error.contains("Redis"), "{error}");
    // Nothing was recorded: no page was taken for clean.
    assert!(workspace.export_csv().rows.is_empty());

    let restarted = std::process::Command::new("redis-server")
        .arg(dir.join("redis.conf"))
        .status()
        .expect("redis-server runs");
    assert!(restarted.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !cluster_healthy() {
        assert!(
            std::time::Instant::now() < deadline,
            "the cluster did not recover"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Every page is still due, and matching through the recovered cluster finds every copy.
    matches_every_copy_through_redis(&workspace, &namespace, &url, &site);
}
