//! The static server every client of `copytrace-bench crawl` talks to: nginx, in its own
//! processes, serving the generated files from disk (the page cache, after the first pass).
//!
//! Why nginx: it is the reference static server (event loop per worker, `sendfile`), so the
//! server costs every client the same few microseconds per request and the figures compare the
//! clients, not the server. Its open-file cache stays off: it holds one descriptor per page,
//! and 20,101 pages exceed the 20,000 descriptors a process may have on the benchmark machine
//! (a cache smaller than the site only thrashes, since wrk cycles through every page). Running it as separate processes also lets the
//! bench read its CPU time from `/proc` for each client's run. Settings that would make the
//! clients' work differ are off: no access log, no gzip (every client receives the same bytes),
//! keep-alive connections never closed by the server (`keepalive_requests` high), `reuseport` so
//! the kernel spreads connections over the workers.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::cpu;

/// A running nginx; stopped on drop.
pub struct Nginx {
    child: Child,
    error_log: PathBuf,
    /// The address it listens on.
    pub addr: SocketAddr,
}

impl Nginx {
    /// Starts `nginx` with `workers` worker processes serving `root`, its configuration and
    /// logs in `dir`, on a free loopback port; returns once it answers `GET /` with 200.
    pub fn start(nginx: &str, root: &Path, dir: &Path, workers: usize) -> Result<Nginx> {
        // A free port: bind port 0, read the port, let go (nginx binds it a moment later).
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .context("cannot find a free loopback port")?
            .port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, config(root, dir, addr, workers, is_root()))
            .context("cannot write nginx.conf")?;
        let error_log = dir.join("nginx-error.log");
        let child = Command::new(nginx)
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(&conf)
            .arg("-e")
            .arg(&error_log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| {
                format!("cannot run {nginx} (apt-get install nginx-light, or pass --nginx PATH)")
            })?;
        let mut server = Nginx {
            child,
            addr,
            error_log: error_log.clone(),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = server.child.try_wait()? {
                let mut stderr = String::new();
                if let Some(mut pipe) = server.child.stderr.take() {
                    let _ = pipe.read_to_string(&mut stderr);
                }
                let log = std::fs::read_to_string(&error_log).unwrap_or_default();
                bail!("nginx exited ({status}) at start: {stderr}{log}");
            }
            if get_status(addr, "/").ok() == Some(200) {
                return Ok(server);
            }
            if Instant::now() > deadline {
                bail!("nginx did not answer on {addr} within 10 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The last lines of nginx's error log, to explain failed requests.
    pub fn error_log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.error_log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(5)..].join("\n")
    }

    /// CPU seconds used so far by the master and worker processes.
    pub fn cpu_seconds(&self) -> f64 {
        let master = self.child.id();
        let mut total = cpu::process_seconds(master).unwrap_or(0.0);
        for pid in cpu::children_of(master) {
            total += cpu::process_seconds(pid).unwrap_or(0.0);
        }
        total
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM makes the master stop its workers; SIGKILL would orphan them.
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_root() -> bool {
    // The effective uid is field 2 of the `Uid:` line.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|id| id == "0"))
        })
        .unwrap_or(false)
}

/// The configuration file. As root, nginx's workers run as `nobody`, so the site must be
/// world-readable (the caller sees to that).
pub fn config(
    root: &Path,
    dir: &Path,
    addr: SocketAddr,
    workers: usize,
    root_user: bool,
) -> String {
    let user = if root_user {
        "user nobody nogroup;\n"
    } else {
        ""
    };
    let temp = |name: &str| -> PathBuf { dir.join(name) };
    format!(
        "# Written by copytrace-bench crawl.\n\
         {user}worker_processes {workers};\n\
         daemon off;\n\
         master_process on;\n\
         pid {pid};\n\
         events {{ worker_connections 4096; }}\n\
         http {{\n\
         \x20   types {{ text/html html; text/plain txt; }}\n\
         \x20   default_type application/octet-stream;\n\
         \x20   charset utf-8;\n\
         \x20   access_log off;\n\
         \x20   sendfile on;\n\
         \x20   tcp_nopush on;\n\
         \x20   tcp_nodelay on;\n\
         \x20   gzip off;\n\
         \x20   keepalive_timeout 120s;\n\
         \x20   keepalive_requests 100000000;\n\
         \x20   client_body_temp_path {body};\n\
         \x20   server {{\n\
         \x20       listen {addr} reuseport;\n\
         \x20       root {root};\n\
         \x20       index index.html;\n\
         \x20   }}\n\
         }}\n",
        pid = dir.join("nginx.pid").display(),
        body = temp("client_body").display(),
        root = root.display(),
    )
}

/// One `GET path` over a fresh connection; the response's status code.
pub fn get_status(addr: SocketAddr, path: &str) -> Result<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut head = [0u8; 64];
    let n = stream.read(&mut head)?;
    let line = String::from_utf8_lossy(&head[..n]);
    line.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("not an HTTP response: {line:?}"))
}
