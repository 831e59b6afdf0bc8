//! Running the binary, temporary databases, library files and the in-process test site.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use copytrace::demo::{self, SamplePage, SampleSite, SiteServer};

/// No single command of the suite should come near this; it only turns a hang into a failure.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// The outcome of one run of the binary.
#[derive(Debug)]
pub struct Run {
    /// Exit code (`None` if killed by a signal or the timeout).
    pub code: Option<i32>,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

impl Run {
    fn from_output(output: Output) -> Run {
        Run {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Panics with the whole output unless the exit code is 0.
    #[track_caller]
    pub fn success(self) -> Run {
        assert_eq!(self.code, Some(0), "expected success, got {self:#?}");
        self
    }

    /// Panics unless the run failed with exit code 1 and exactly one line on stderr, starting
    /// with `error:`. Returns that line.
    #[track_caller]
    pub fn one_line_error(&self) -> &str {
        assert_eq!(self.code, Some(1), "expected exit code 1, got {self:#?}");
        let stderr = self.stderr.trim_end();
        assert!(
            stderr.starts_with("error:") && !stderr.contains('\n'),
            "expected a single `error:` line on stderr, got {stderr:?}"
        );
        stderr
    }
}

/// The binary under test, with a clean environment: no inherited database or Redis URL, no log
/// filter.
pub fn copytrace() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::from_std(copytrace_std());
    command.timeout(COMMAND_TIMEOUT);
    command
}

/// [`copytrace`] as a `std` command, for a test that reads the output while the binary runs.
/// It has no timeout.
pub fn copytrace_std() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_copytrace"));
    command
        .env_remove("COPYTRACE_DATABASE_URL")
        .env_remove("COPYTRACE_REDIS_URL")
        .env_remove("COPYTRACE_REDIS_PREFIX")
        .env_remove("COPYTRACE_LOG")
        .env_remove("COPYTRACE_CONFIG")
        .env("NO_COLOR", "1");
    command
}

/// Runs a prepared command to completion.
pub fn run_command(command: &mut assert_cmd::Command) -> Run {
    Run::from_output(command.output().expect("the copytrace binary runs"))
}

/// A fresh temporary directory with its own SQLite database, used as the working directory of
/// every command so nothing leaks into the repository.
pub struct Workspace {
    dir: tempfile::TempDir,
    /// `sqlite://<dir>/t.db`.
    pub db: String,
}

impl Workspace {
    /// A new, empty workspace.
    pub fn new() -> Workspace {
        let dir = tempfile::tempdir().expect("temporary directory");
        let db = format!("sqlite://{}", dir.path().join("t.db").display());
        Workspace { dir, db }
    }

    /// The workspace directory.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A path inside the workspace.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// The database file behind [`Workspace::db`].
    pub fn db_file(&self) -> PathBuf {
        self.path("t.db")
    }

    /// The binary, working in this workspace, without `--db`.
    pub fn bare(&self) -> assert_cmd::Command {
        let mut command = copytrace();
        command.current_dir(self.root());
        command
    }

    /// Runs `copytrace --db <this workspace's db> ARGS...`.
    pub fn run<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Run {
        let mut command = self.bare();
        command.arg("--db").arg(&self.db).args(args);
        run_command(&mut command)
    }

    /// Like [`Workspace::run`], but panics unless it succeeds.
    #[track_caller]
    pub fn ok<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Run {
        self.run(args).success()
    }

    /// Writes `bytes` to a file of the workspace, creating parent directories.
    pub fn write(&self, relative: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create directories");
        std::fs::write(&path, bytes).expect("write a test file");
        path
    }

    /// The works in the library, from `library list --json`.
    pub fn works(&self) -> Vec<serde_json::Value> {
        let run = self.ok(&["library", "list", "--json"]);
        serde_json::from_str(&run.stdout).expect("library list --json prints a JSON array")
    }

    /// The stored text of work `id`, read from the workspace's store (SQLite or PostgreSQL)
    /// after the binary exited: what the binary filed the work's keys from.
    pub fn work_text(&self, id: i64) -> String {
        use copytrace_store::Store;
        let db = self.db.clone();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(async move {
                let store: Box<dyn Store> = if db.starts_with("postgres") {
                    Box::new(
                        copytrace_store::postgres::PostgresStore::connect(&db)
                            .await
                            .expect("the store opens"),
                    )
                } else {
                    Box::new(
                        copytrace_store::sqlite::SqliteStore::connect(&db)
                            .await
                            .expect("the store opens"),
                    )
                };
                store.get_work(id).await.expect("the work").content
            })
    }

    /// External ids of the works in the library.
    pub fn work_ids(&self) -> BTreeSet<String> {
        self.works()
            .iter()
            .map(|w| w["external_id"].as_str().expect("external_id").to_owned())
            .collect()
    }

    /// Exports matches as CSV into a file and parses it.
    pub fn export_csv(&self) -> CsvExport {
        let out = self.path("matches.csv");
        self.ok(&[
            "export".as_ref(),
            "matches".as_ref(),
            "--format".as_ref(),
            "csv".as_ref(),
            "--out".as_ref(),
            out.as_os_str(),
        ]);
        read_csv(&out)
    }

    /// Exports matches as JSON on standard output and parses it.
    pub fn export_json(&self) -> Vec<serde_json::Value> {
        let run = self.ok(&["export", "matches", "--format", "json"]);
        serde_json::from_str(&run.stdout).expect("export --format json prints a JSON array")
    }
}

/// The four works of the bundled sample library.
pub fn library_text(id: &str) -> &'static str {
    demo::LIBRARY
        .iter()
        .find(|(key, _)| *key == id)
        .map(|(_, text)| *text)
        .unwrap_or_else(|| panic!("no sample work {id}"))
}

/// The title of a sample text: its first non-empty line.
pub fn title_of(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .expect("a title line")
}

/// `text` encoded as GBK (every character of the sample texts exists in GBK).
pub fn gbk(text: &str) -> Vec<u8> {
    let (bytes, _, unmappable) = encoding_rs::GBK.encode(text);
    assert!(!unmappable, "the text is representable in GBK");
    bytes.into_owned()
}

/// Writes the sample library under `<workspace>/library`: `xingchen-ch1` (UTF-8) and
/// `jianghu-ch1` (GBK on disk) at the top, `xingchen-ch2` in `vol2/`, `news-harbor` in
/// `news/2026/`, and a non-`.txt` file that must be ignored. Returns the directory.
pub fn write_sample_library(workspace: &Workspace) -> PathBuf {
    workspace.write("library/xingchen-ch1.txt", library_text("xingchen-ch1"));
    workspace.write("library/jianghu-ch1.txt", gbk(library_text("jianghu-ch1")));
    workspace.write(
        "library/vol2/xingchen-ch2.txt",
        library_text("xingchen-ch2"),
    );
    workspace.write(
        "library/news/2026/news-harbor.txt",
        library_text("news-harbor"),
    );
    workspace.write("library/cover.png", PNG);
    workspace.path("library")
}

/// The start of a PNG file: binary data that is no text in any encoding.
pub const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0\x1f\xf3\xffa";

/// One parsed CSV export.
pub struct CsvExport {
    /// The header row.
    pub header: Vec<String>,
    /// The data rows.
    pub rows: Vec<csv::StringRecord>,
}

impl CsvExport {
    /// Index of a column by name.
    pub fn column(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header))
    }

    /// `(page_url, work_external_id)` of every row, in file order (duplicates kept).
    pub fn pairs(&self) -> Vec<(String, String)> {
        let (url, work) = (self.column("page_url"), self.column("work_external_id"));
        self.rows
            .iter()
            .map(|r| (r[url].to_owned(), r[work].to_owned()))
            .collect()
    }
}

/// Parses a CSV export file.
pub fn read_csv(path: &Path) -> CsvExport {
    let mut reader = csv::Reader::from_path(path).expect("the export file exists");
    let header = reader
        .headers()
        .expect("a header row")
        .iter()
        .map(str::to_owned)
        .collect();
    let rows = reader
        .records()
        .collect::<Result<_, _>>()
        .expect("well-formed CSV rows");
    CsvExport { header, rows }
}

/// A site served on a loopback port by its own Tokio runtime, so tests stay synchronous while
/// the binary crawls it.
pub struct TestSite {
    /// What it serves.
    pub site: SampleSite,
    server: Option<SiteServer>,
    runtime: tokio::runtime::Runtime,
}

impl TestSite {
    /// Serves the bundled sample piracy site.
    pub fn sample() -> TestSite {
        TestSite::serve(demo::sample_site())
    }

    /// Serves `site` (plus its `/`, `/index.html` and `/robots.txt`).
    pub fn serve(site: SampleSite) -> TestSite {
        TestSite::serve_at(site, "127.0.0.1:0".parse().expect("an address"))
    }

    /// Serves `site` at `addr` (the address of a site stopped before, to bring it back
    /// changed).
    pub fn serve_at(site: SampleSite, addr: std::net::SocketAddr) -> TestSite {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a Tokio runtime");
        let server = runtime
            .block_on(demo::serve_at(site.clone(), addr))
            .expect("the test site starts");
        TestSite {
            site,
            server: Some(server),
            runtime,
        }
    }

    fn server(&self) -> &SiteServer {
        self.server.as_ref().expect("the server runs")
    }

    /// Where it listens.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.server().addr
    }

    /// `http://127.0.0.1:PORT/`.
    pub fn base_url(&self) -> String {
        self.server().base_url()
    }

    /// The absolute URL of a path (`/a/b.html`).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.server().addr)
    }

    /// Every path requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.server().requested_paths()
    }

    /// Requested paths other than `/robots.txt` and the default `/sitemap.xml` probe (the
    /// requests a page budget counts).
    pub fn page_requests(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|p| p != "/robots.txt" && p != "/sitemap.xml")
            .collect()
    }

    /// `(absolute URL, work id)` of every page the site really pirates and a crawler may fetch.
    pub fn expected_matches(&self) -> BTreeSet<(String, String)> {
        self.site
            .pages
            .iter()
            .filter(|p| !p.disallowed)
            .flat_map(|p| {
                p.copies
                    .iter()
                    .map(|w| (self.url(&p.path), (*w).to_owned()))
            })
            .collect()
    }
}

impl Drop for TestSite {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            self.runtime.block_on(server.stop());
        }
    }
}

/// A page of plain HTML for hand-built test sites.
pub fn html_page(path: &str, body: &str) -> SamplePage {
    SamplePage {
        path: path.to_owned(),
        label: "test page",
        content_type: "text/html; charset=utf-8",
        body: format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{path}</title></head>\
             <body>{body}</body></html>"
        )
        .into_bytes(),
        copies: Vec::new(),
        disallowed: false,
    }
}

/// A site whose pages `/chain/0.html` … `/chain/{len-1}.html` each link only to the next one,
/// so the n-th page is n links away from `/chain/0.html`.
pub fn chain_site(len: usize) -> SampleSite {
    let pages = (0..len)
        .map(|i| {
            let next = if i + 1 < len {
                format!("<a href=\"/chain/{}.html\">下一章</a>", i + 1)
            } else {
                String::new()
            };
            html_page(
                &format!("/chain/{i}.html"),
                &format!("<p>第{i}页，链条上的一页。</p>{next}"),
            )
        })
        .collect();
    SampleSite { pages }
}

/// A loopback port nothing listens on (bound, then released).
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

/// Whether this process can read a file whose permissions forbid it (true for root).
pub fn permissions_are_bypassed(path: &Path) -> bool {
    std::fs::read(path).is_ok()
}

/// What the whole pipeline printed.
pub struct PipelineRuns {
    /// `library add`.
    pub add: Run,
    /// `crawl`.
    pub crawl: Run,
    /// `match`.
    pub matched: Run,
}

/// Runs the contract end to end: `library add <sample library dir>`, `crawl <site>
/// --allow-private-addresses`, `match`. Every step must succeed.
pub fn add_crawl_match(workspace: &Workspace, site: &TestSite) -> PipelineRuns {
    let library = write_sample_library(workspace);
    let add = workspace.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    let (crawl, matched) = crawl_and_match(workspace, site);
    PipelineRuns {
        add,
        crawl,
        matched,
    }
}

/// `crawl <site> --allow-private-addresses` then `match`, both required to succeed.
pub fn crawl_and_match(workspace: &Workspace, site: &TestSite) -> (Run, Run) {
    let crawl = workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    let matched = workspace.ok(&["match"]);
    (crawl, matched)
}
