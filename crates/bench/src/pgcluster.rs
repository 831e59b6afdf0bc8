//! A throwaway PostgreSQL cluster for benchmarks run without `--url`: `initdb` into a temporary
//! directory, `pg_ctl start` on a free loopback port, `pg_ctl stop` and the directory deleted
//! when the [`Cluster`] is dropped.
//!
//! It follows `start_postgres` of `scripts/test` (same binaries, same user, same trust
//! authentication for the user `copytrace`) with one difference: the server keeps PostgreSQL's
//! default durability (`fsync`, `synchronous_commit`, `full_page_writes` on), because a
//! benchmark of writes should pay what a production server pays for each commit.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{Context, Result, bail};

/// A running throwaway cluster; dropping it stops the server and deletes its files.
pub struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    run_as: Option<String>,
    port: u16,
    // Deleted after the server stopped (fields drop after `Drop::drop` ran).
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// Creates and starts a cluster. The server's own durability defaults are kept.
    pub fn start() -> Result<Cluster> {
        let bin = find_bin()?;
        let run_as = if is_root()? {
            // PostgreSQL refuses to run as root.
            Some("postgres".to_owned())
        } else {
            None
        };
        let dir = tempfile::Builder::new()
            .prefix("copytrace-bench-pg.")
            .tempdir()
            .context("cannot create a temporary directory for PostgreSQL")?;
        let root = dir.path().join("postgres");
        std::fs::create_dir(&root)?;
        if let Some(user) = &run_as {
            // The server's user must be able to enter the temporary directory and own its own.
            run(Command::new("chmod").arg("755").arg(dir.path()))?;
            run(Command::new("chown").arg(user).arg(&root))
                .with_context(|| format!("is there a system user {user:?}?"))?;
        }
        let data = root.join("data");
        let initdb = command(&run_as, &bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", "copytrace", "--auth=trust", "--encoding=UTF8"])
            .args(["--locale=C.UTF-8", "--no-sync"])
            .output()?;
        check(&initdb, "initdb")?;

        let mut last_error = None;
        for _ in 0..5 {
            let port = free_port()?;
            let options = format!(
                "-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={}",
                root.display()
            );
            let started = command(&run_as, &bin.join("pg_ctl"))
                .arg("start")
                .arg("-D")
                .arg(&data)
                .args(["-w", "-t", "60", "-l"])
                .arg(root.join("postgres.log"))
                .arg("-o")
                .arg(options)
                .output()?;
            if started.status.success() {
                return Ok(Cluster {
                    bin,
                    data,
                    run_as,
                    port,
                    _dir: dir,
                });
            }
            // Most likely the port was taken meanwhile: the server exits, try another.
            last_error = Some(String::from_utf8_lossy(&started.stderr).into_owned());
        }
        let log = std::fs::read_to_string(root.join("postgres.log")).unwrap_or_default();
        bail!(
            "PostgreSQL did not start: {}\n{log}",
            last_error.unwrap_or_default()
        )
    }

    /// The URL of the cluster's `postgres` database, as the superuser `copytrace`.
    pub fn url(&self) -> String {
        format!("postgres://copytrace@127.0.0.1:{}/postgres", self.port)
    }

    /// The directory of the server's binaries, where the matching `psql` also lives.
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// The server's version line (`postgres (PostgreSQL) 15.14 ...`).
    pub fn version(&self) -> Result<String> {
        let output = Command::new(self.bin.join("postgres"))
            .arg("--version")
            .output()?;
        check(&output, "postgres --version")?;
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = command(&self.run_as, &self.bin.join("pg_ctl"))
            .arg("stop")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "fast", "-s"])
            .output();
    }
}

/// `program` run as `user` (through `runuser`) when given, from `/` so the server does not
/// complain about an inaccessible working directory.
fn command(user: &Option<String>, program: &Path) -> Command {
    match user {
        Some(user) => {
            let mut command = Command::new("runuser");
            command
                .args(["-u", user, "--"])
                .arg(program)
                .current_dir("/");
            command
        }
        None => Command::new(program),
    }
}

fn run(command: &mut Command) -> Result<()> {
    let output = command.output()?;
    check(&output, &format!("{command:?}"))
}

fn check(output: &Output, what: &str) -> Result<()> {
    if !output.status.success() {
        bail!(
            "{what} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

fn is_root() -> Result<bool> {
    let output = Command::new("id").arg("-u").output()?;
    check(&output, "id -u")?;
    Ok(String::from_utf8_lossy(&output.stdout).trim() == "0")
}

/// A loopback port nobody listened on a moment ago (the caller retries if it was taken since).
fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The directory holding `initdb`, `pg_ctl`, `postgres` and `psql`: where `initdb` on `PATH`
/// lives, else the newest `/usr/lib/postgresql/*/bin` (Debian's layout).
fn find_bin() -> Result<PathBuf> {
    let complete = |dir: &Path| {
        ["initdb", "pg_ctl", "postgres", "psql"]
            .iter()
            .all(|name| dir.join(name).is_file())
    };
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.join("initdb").is_file() {
                let dir = std::fs::canonicalize(dir.join("initdb"))?
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or(dir);
                if complete(&dir) {
                    return Ok(dir);
                }
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, dir)| complete(dir))
        .collect();
    versions.sort();
    versions.pop().map(|(_, dir)| dir).context(
        "no PostgreSQL server binaries (initdb, pg_ctl, postgres, psql) found: \
         apt-get install postgresql, or pass --url",
    )
}

/// The server a benchmark measures: `url` when given, else a throwaway cluster it starts (kept
/// alive, and stopped, by the returned handle).
pub fn server(url: Option<&str>) -> Result<(Option<Cluster>, String)> {
    Ok(match url {
        Some(url) => (None, url.to_owned()),
        None => {
            let cluster = Cluster::start()?;
            let url = cluster.url();
            (Some(cluster), url)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::Cluster;

    #[test]
    fn a_throwaway_cluster_serves_queries_and_is_removed_when_dropped() {
        let cluster = Cluster::start().expect("PostgreSQL's server binaries are installed");
        let output = std::process::Command::new(cluster.bin().join("psql"))
            .args(["-X", "-At", "-d", &cluster.url(), "-c", "SELECT 6 * 7"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "42");
        let dir = cluster.data.clone();
        assert!(dir.exists());
        drop(cluster);
        assert!(!dir.exists(), "{} is left behind", dir.display());
    }
}
