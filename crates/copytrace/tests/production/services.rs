//! Real servers for the production tests: a database on the shared PostgreSQL test server, or a
//! private PostgreSQL cluster (for tests that restart it), and a private redis-server (for tests
//! that flush it). Nothing here skips: a missing server is a failure with the reason.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sqlx::migrate::MigrateDatabase;

fn required_env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "{name} is not set: run ./scripts/test (or scripts/with-services cargo test …), which \
             starts the PostgreSQL and Redis servers these tests need"
        )
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime")
}

/// A free loopback port (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A free loopback port below the kernel's ephemeral range, for a server restarted on the same
/// port: a port from [`free_port`] is an ephemeral one, which any outgoing connection may take
/// as its source port while the server is down (a restart then fails with "Address already in
/// use"), as a production port such as 8080 never is.
pub fn free_fixed_port() -> u16 {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    let floor = 10_000.min(low / 2);
    for _ in 0..1_000 {
        let port = fastrand::u16(floor..low);
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port between {floor} and {low}");
}

/// Waits until `ready` holds, or panics with `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A fresh database on the shared test server, dropped at the end.
pub struct Database {
    pub url: String,
}

impl Database {
    pub fn on_shared_server() -> Database {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let mut url = url::Url::parse(&required_env("COPYTRACE_TEST_POSTGRES_URL"))
            .expect("COPYTRACE_TEST_POSTGRES_URL is a URL");
        url.set_path(&format!(
            "/copytrace_prod_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let url = url.to_string();
        runtime().block_on(async {
            let _ = sqlx::Postgres::force_drop_database(&url).await;
            sqlx::Postgres::create_database(&url)
                .await
                .unwrap_or_else(|error| panic!("cannot create the test database: {error}"));
        });
        Database { url }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = runtime().block_on(sqlx::Postgres::force_drop_database(&self.url));
    }
}

/// A PostgreSQL cluster of this test alone, so the test may stop and restart it. Uses the
/// server binaries `./scripts/test` found (`COPYTRACE_TEST_PG_BIN`), run as the user it chose
/// (`COPYTRACE_TEST_PG_USER`, set when the tests run as root).
pub struct PrivatePostgres {
    bin: PathBuf,
    user: Option<String>,
    _dir: tempfile::TempDir,
    data: PathBuf,
    log: PathBuf,
    pub port: u16,
    /// Commits are on disk before they are acknowledged (`synchronous_commit`): a crashed
    /// server keeps every transaction it confirmed, as a production one does.
    durable: bool,
}

impl PrivatePostgres {
    pub fn start() -> PrivatePostgres {
        PrivatePostgres::start_with(None, false)
    }

    /// A cluster that keeps every commit it acknowledged through a crash
    /// ([`PrivatePostgres::crash_and_restart`]); the others trade that for speed.
    pub fn start_durable() -> PrivatePostgres {
        PrivatePostgres::start_with(None, true)
    }

    /// A cluster whose only user, `copytrace`, logs in with `password` (SCRAM-SHA-256), as a
    /// production server asks: for the tests of a wrong password.
    pub fn start_with_password(password: &str) -> PrivatePostgres {
        PrivatePostgres::start_with(Some(password), false)
    }

    fn start_with(password: Option<&str>, durable: bool) -> PrivatePostgres {
        let bin = PathBuf::from(required_env("COPYTRACE_TEST_PG_BIN"));
        let user = std::env::var("COPYTRACE_TEST_PG_USER")
            .ok()
            .filter(|u| !u.is_empty());
        let dir = tempfile::tempdir().expect("a temporary directory");
        if let Some(user) = &user {
            let status = Command::new("chown")
                .arg(user)
                .arg(dir.path())
                .status()
                .expect("chown runs");
            assert!(
                status.success(),
                "cannot hand the cluster directory to {user}"
            );
        }
        let data = dir.path().join("data");
        let log = dir.path().join("postgres.log");
        let cluster = PrivatePostgres {
            bin,
            user,
            data,
            log,
            // Restarted on the same port by the fault tests: an ephemeral port could be taken
            // as an outgoing connection's source port meanwhile (seen: "Address already in
            // use" at start, under load).
            port: free_fixed_port(),
            durable,
            _dir: dir,
        };
        let auth = match password {
            None => "--auth=trust".to_owned(),
            Some(password) => {
                let file = cluster._dir.path().join("pwfile");
                std::fs::write(&file, password).expect("write the password file");
                format!("--auth=scram-sha-256 --pwfile={}", file.display())
            }
        };
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "-D".as_ref(),
            cluster.data.as_os_str(),
            "-U".as_ref(),
            "copytrace".as_ref(),
            "--encoding=UTF8".as_ref(),
            "--locale=C.UTF-8".as_ref(),
            "--no-sync".as_ref(),
        ];
        args.extend(auth.split(' ').map(std::ffi::OsStr::new));
        cluster.run("initdb", &args);
        cluster.pg_ctl("start");
        cluster
    }

    /// Runs one of the server programs as the cluster's user; panics with its output on failure.
    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) {
        let path = self.bin.join(program);
        let mut command = match &self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&path);
                c
            }
            None => Command::new(&path),
        };
        let output = command
            .args(args)
            .current_dir("/")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", path.display()));
        assert!(
            output.status.success(),
            "{program} failed: {}{}\nserver log: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
    }

    fn pg_ctl(&self, action: &str) {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -c unix_socket_directories={} -c fsync=off \
             -c synchronous_commit={} -c max_connections=100",
            self.port,
            self.data.parent().unwrap_or(Path::new("/tmp")).display(),
            if self.durable { "on" } else { "off" }
        );
        let mut args: Vec<&std::ffi::OsStr> = vec![
            action.as_ref(),
            "-D".as_ref(),
            self.data.as_os_str(),
            "-w".as_ref(),
            "-t".as_ref(),
            "60".as_ref(),
            "-l".as_ref(),
            self.log.as_os_str(),
        ];
        if action != "stop" {
            args.extend([std::ffi::OsStr::new("-o"), std::ffi::OsStr::new(&options)]);
        }
        if action != "start" {
            args.extend([std::ffi::OsStr::new("-m"), std::ffi::OsStr::new("fast")]);
        }
        self.run("pg_ctl", &args);
    }

    /// Stops the server (ending every session) and starts it again on the same port.
    pub fn restart(&self) {
        self.pg_ctl("restart");
    }

    /// Stops the server (`-m fast`), until [`PrivatePostgres::start_again`].
    pub fn stop(&self) {
        self.pg_ctl("stop");
    }

    /// Starts a stopped server again on the same port.
    pub fn start_again(&self) {
        self.pg_ctl("start");
    }

    /// Crashes the server (`pg_ctl stop -m immediate`: no checkpoint, every session cut, as
    /// a power loss or an OOM kill of the postmaster) and starts it again on the same port: it
    /// recovers from its write-ahead log.
    pub fn crash_and_restart(&self) {
        self.run(
            "pg_ctl",
            &[
                "stop".as_ref(),
                "-D".as_ref(),
                self.data.as_os_str(),
                "-m".as_ref(),
                "immediate".as_ref(),
                "-w".as_ref(),
            ],
        );
        self.pg_ctl("start");
    }

    /// A new database on this cluster.
    pub fn database(&self, name: &str) -> String {
        let url = format!("postgres://copytrace@127.0.0.1:{}/{name}", self.port);
        runtime().block_on(async {
            sqlx::Postgres::create_database(&url)
                .await
                .unwrap_or_else(|error| panic!("cannot create {name}: {error}"));
        });
        url
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let path = self.bin.join("pg_ctl");
        let mut command = match &self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&path);
                c
            }
            None => Command::new(&path),
        };
        let _ = command
            .arg("stop")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-s"])
            .current_dir("/")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A redis-server of this test alone, without persistence.
pub struct PrivateRedis {
    child: Child,
    pub url: String,
    port: u16,
    password: Option<String>,
    _dir: tempfile::TempDir,
}

impl PrivateRedis {
    pub fn start() -> PrivateRedis {
        PrivateRedis::start_with(None)
    }

    /// A redis-server that answers only clients that authenticate with `password`
    /// (`requirepass`); its `url` carries the password.
    pub fn start_with_password(password: &str) -> PrivateRedis {
        PrivateRedis::start_with(Some(password))
    }

    fn start_with(password: Option<&str>) -> PrivateRedis {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let port = free_port();
        let child = redis_server(port, password, dir.path());
        let url = match password {
            None => format!("redis://127.0.0.1:{port}/0"),
            Some(password) => format!("redis://:{password}@127.0.0.1:{port}/0"),
        };
        let redis = PrivateRedis {
            child,
            url,
            port,
            password: password.map(str::to_owned),
            _dir: dir,
        };
        redis.wait_until_it_answers();
        redis
    }

    fn wait_until_it_answers(&self) {
        wait_for("redis-server to answer", Duration::from_secs(20), || {
            redis::Client::open(self.url.as_str())
                .and_then(|c| c.get_connection())
                .is_ok()
        });
    }

    /// `kill -9` of the server, and a new one on the same port: without persistence it comes
    /// back empty, as a crashed production Redis without an append-only file does.
    pub fn kill_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = redis_server(self.port, self.password.as_deref(), self._dir.path());
        self.wait_until_it_answers();
    }

    /// Deletes every key: what a Redis restart without persistence or an operator's mistake does.
    pub fn flush_all(&self) {
        let mut connection = redis::Client::open(self.url.as_str())
            .and_then(|c| c.get_connection())
            .expect("connect to redis");
        redis::cmd("FLUSHALL")
            .exec(&mut connection)
            .expect("FLUSHALL");
    }
}

/// Starts redis-server on `port`, without persistence.
fn redis_server(port: u16, password: Option<&str>, dir: &Path) -> Child {
    let mut command = Command::new("redis-server");
    command
        .args([
            "--bind",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--save",
            "",
        ])
        .args(["--appendonly", "no"])
        .arg("--dir")
        .arg(dir);
    if let Some(password) = password {
        command.args(["--requirepass", password]);
    }
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server is installed (./scripts/test installs it)")
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A small filesystem of this test alone: a tmpfs of `size` bytes, mounted in a mount namespace
/// of its own (`unshare -m`, so nothing of the machine's is touched) and reached from outside
/// through `/proc/PID/root`. Writes past its size fail with ENOSPC, as on a full disk; it can be
/// grown to let the next run through. Needs root (CI and `./scripts/test` run as root); fails,
/// never skips, without it.
pub struct SmallDisk {
    holder: Child,
    mountpoint: PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallDisk {
    pub fn mount(size: u64) -> SmallDisk {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mountpoint = dir.path().join("disk");
        std::fs::create_dir(&mountpoint).expect("the mount point");
        let script = format!(
            "mount -t tmpfs -o size={size} copytrace-small-disk '{}' && echo mounted && exec sleep 100000",
            mountpoint.display()
        );
        let mut holder = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("unshare (util-linux) runs");
        let mut first = String::new();
        let stdout = holder.stdout.as_mut().expect("stdout");
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut first)
            .expect("read unshare's output");
        if first.trim() != "mounted" {
            let _ = holder.kill();
            let output = holder.wait_with_output().expect("unshare output");
            panic!(
                "cannot mount a small tmpfs in a mount namespace of its own (this test needs \
                 root): {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        SmallDisk {
            holder,
            mountpoint,
            _dir: dir,
        }
    }

    /// The small filesystem's root, as seen inside its namespace (by commands run under
    /// [`SmallDisk::wrapper`]).
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// `nsenter` into the disk's mount namespace: a program run under it sees the small disk
    /// at [`SmallDisk::mountpoint`]. (A path through `/proc/PID/root` is no good for programs
    /// that canonicalize paths: that resolves it to the machine's own directory.)
    pub fn wrapper(&self) -> Vec<String> {
        ["nsenter", "-t", &self.holder.id().to_string(), "-m", "--"]
            .map(str::to_owned)
            .to_vec()
    }

    /// The small filesystem's root, as seen from this process.
    pub fn path(&self) -> PathBuf {
        let inside = self.mountpoint.strip_prefix("/").expect("an absolute path");
        PathBuf::from(format!("/proc/{}/root", self.holder.id())).join(inside)
    }

    /// Makes it `size` bytes large (an operator freeing space).
    pub fn grow(&self, size: u64) {
        let status = Command::new("nsenter")
            .args(["-t", &self.holder.id().to_string(), "-m", "mount", "-o"])
            .arg(format!("remount,size={size}"))
            .arg(&self.mountpoint)
            .status()
            .expect("nsenter (util-linux) runs");
        assert!(status.success(), "cannot grow the small disk");
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// The three-master Redis Cluster `./scripts/test` starts (append-only files, so a node comes
/// back with its data): its URL and nodes, for the tests that kill a node. No other test of
/// this binary uses it.
pub struct SharedCluster {
    pub url: String,
    /// `(port, directory of its redis.conf and redis.pid)`.
    nodes: Vec<(u16, PathBuf)>,
}

impl SharedCluster {
    pub fn get() -> SharedCluster {
        let nodes = required_env("COPYTRACE_TEST_REDIS_CLUSTER_NODES")
            .split(',')
            .map(|node| {
                let (port, dir) = node.split_once(':').expect("port:directory");
                (port.parse().expect("a port"), PathBuf::from(dir))
            })
            .collect();
        SharedCluster {
            url: required_env("COPYTRACE_TEST_REDIS_CLUSTER_URL"),
            nodes,
        }
    }

    /// `kill -9` of node `n`, `down_for` without it, then the node started again from its
    /// configuration and append-only file; returns once the cluster reports itself healthy.
    pub fn kill_and_restart(&self, n: usize, down_for: Duration) {
        let (_, dir) = &self.nodes[n % self.nodes.len()];
        let pid = std::fs::read_to_string(dir.join("redis.pid")).expect("the node's pid file");
        let status = Command::new("kill")
            .args(["-KILL", pid.trim()])
            .status()
            .expect("kill runs");
        assert!(
            status.success(),
            "cannot kill the cluster node {}",
            pid.trim()
        );
        std::thread::sleep(down_for);
        let started = Command::new("redis-server")
            .arg(dir.join("redis.conf"))
            .stdout(Stdio::null())
            .status()
            .expect("redis-server runs");
        assert!(started.success(), "the cluster node does not start again");
        wait_for("the cluster to recover", Duration::from_secs(60), || {
            self.healthy()
        });
    }

    fn healthy(&self) -> bool {
        self.nodes.iter().all(|(port, _)| {
            redis::Client::open(format!("redis://127.0.0.1:{port}"))
                .and_then(|client| client.get_connection())
                .and_then(|mut c| redis::cmd("CLUSTER").arg("INFO").query::<String>(&mut c))
                .is_ok_and(|info| info.contains("cluster_state:ok"))
        })
    }
}
