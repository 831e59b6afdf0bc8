//! One connection to Redis, to a single server or to a Redis Cluster, shared by the indexes of
//! one prefix.
//!
//! Every command the indexes send names at most one key, or several keys read together
//! (`MGET`), so the same commands work on both: on a single server a batch is one pipeline; on a
//! cluster the client routes each command to the node owning its key's slot and sends every
//! node its share of the batch as one pipeline, so a batch costs one round trip per node that
//! holds any of its keys. Nothing relies on a transaction spanning keys, which a cluster cannot
//! offer when the keys live on different nodes (see the crate documentation, "Consistency").

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use copytrace_matcher::IndexError;
use redis::cluster::{ClusterClient, ClusterConnection};
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
use redis::{Cmd, Connection, FromRedisValue, RedisResult, Value};

use crate::redact_url;

/// How long to wait for a server to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one command or pipeline may take; a whole page of probes is one pipeline.
const IO_TIMEOUT: Duration = Duration::from_secs(60);

/// Keys read by one `MGET` on a single server: large enough that a page is a few commands,
/// small enough that one reply stays a few hundred kilobytes.
const KEYS_PER_MGET: usize = 1024;

/// Keys deleted per batch when a namespace is cleared.
const CLEAR_BATCH: usize = 1000;

/// Requests sent to Redis by this process (a pipeline counts once; on a cluster, a batch counts
/// once although the client sends one pipeline per node).
static REQUESTS: AtomicU64 = AtomicU64::new(0);

/// Commands sent to Redis by this process: a pipeline of `n` commands counts `n`, an `MGET` of
/// any number of keys one.
static COMMANDS: AtomicU64 = AtomicU64::new(0);

/// Requests this process has sent to Redis so far, for benchmarks counting round trips per page.
pub fn requests() -> u64 {
    REQUESTS.load(Ordering::Relaxed)
}

/// Commands this process has sent to Redis so far (every command of a pipeline counts), for
/// benchmarks counting commands per page.
pub fn commands() -> u64 {
    COMMANDS.load(Ordering::Relaxed)
}

/// `replies`, checked to be one per request sent.
fn one_reply_each(replies: Vec<Value>, sent: usize) -> Result<Vec<Value>, IndexError> {
    if replies.len() == sent {
        Ok(replies)
    } else {
        Err(IndexError::Corrupt(format!(
            "{} replies to {sent} requests",
            replies.len()
        )))
    }
}

enum Target {
    Single(redis::Client),
    Cluster(ClusterClient),
}

enum Conn {
    Single(Connection),
    Cluster(Box<ClusterConnection>),
}

/// A lazily opened connection, reopened after an I/O error.
pub(crate) struct Link {
    target: Target,
    /// Idle connections. A call takes one (or opens one) and gives it back when it succeeds,
    /// so threads matching pages at once talk to Redis at once instead of queueing on one
    /// stream; a connection that failed is dropped, and the next call opens a fresh one.
    idle: Mutex<Vec<Conn>>,
    shown_url: String,
}

impl Link {
    /// A link to `url`: `redis://[:password@]host[:port][/db]` for one server, or several
    /// such URLs separated by commas for the seed nodes of a Redis Cluster. Connects on first
    /// use.
    pub(crate) fn open(url: &str) -> Result<Link, IndexError> {
        let nodes: Vec<&str> = url
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        let shown_url = nodes
            .iter()
            .map(|n| redact_url(n))
            .collect::<Vec<_>>()
            .join(",");
        let invalid = |e: redis::RedisError| {
            IndexError::Backend(format!("invalid Redis URL {shown_url}: {e}"))
        };
        let target = match nodes.as_slice() {
            [] => {
                return Err(IndexError::Backend("empty Redis URL".into()));
            }
            [single] => Target::Single(redis::Client::open(*single).map_err(invalid)?),
            several => Target::Cluster(
                ClusterClient::builder(several.iter().copied())
                    .connection_timeout(CONNECT_TIMEOUT)
                    .response_timeout(IO_TIMEOUT)
                    .build()
                    .map_err(invalid)?,
            ),
        };
        Ok(Link {
            target,
            idle: Mutex::new(Vec::new()),
            shown_url,
        })
    }

    /// The URL (or seed URLs) with passwords replaced, for messages.
    pub(crate) fn shown_url(&self) -> &str {
        &self.shown_url
    }

    /// Runs one command.
    pub(crate) fn query<T: FromRedisValue>(&self, doing: &str, cmd: &Cmd) -> Result<T, IndexError> {
        self.with_connection(doing, 1, |connection| match connection {
            Conn::Single(c) => cmd.query(c),
            Conn::Cluster(c) => cmd.query(c),
        })
    }

    /// Runs commands of one key each (or of keys sharing a hash tag) as one batch: one
    /// pipeline on a single server, one pipeline per node on a cluster. Replies in order.
    pub(crate) fn batch<T: FromRedisValue>(
        &self,
        doing: &str,
        cmds: &[Cmd],
    ) -> Result<Vec<T>, IndexError> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        self.with_connection(doing, cmds.len(), |connection| match connection {
            Conn::Single(c) => {
                let mut pipe = redis::pipe();
                for cmd in cmds {
                    pipe.add_command(cmd.clone());
                }
                pipe.query(c)
            }
            Conn::Cluster(c) => {
                let mut pipe = redis::cluster::cluster_pipe();
                for cmd in cmds {
                    pipe.add_command(cmd.clone());
                }
                pipe.query(c)
            }
        })
    }

    /// Reads string keys, one reply per key in order (`Nil` for a missing key): pipelined
    /// `MGET`s on a single server, `GET`s grouped per node on a cluster.
    pub(crate) fn get_many(&self, doing: &str, keys: &[String]) -> Result<Vec<Value>, IndexError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let n = match self.target {
            Target::Single(_) => keys.len().div_ceil(KEYS_PER_MGET),
            Target::Cluster(_) => keys.len(),
        };
        let replies: Vec<Value> =
            self.with_connection(doing, n, |connection| match connection {
                Conn::Single(c) => {
                    let mut pipe = redis::pipe();
                    for chunk in keys.chunks(KEYS_PER_MGET) {
                        pipe.cmd("MGET").arg(chunk);
                    }
                    let chunks: Vec<Vec<Value>> = pipe.query(c)?;
                    Ok(chunks.into_iter().flatten().collect())
                }
                Conn::Cluster(c) => {
                    let mut pipe = redis::cluster::cluster_pipe();
                    for key in keys {
                        pipe.cmd("GET").arg(key);
                    }
                    pipe.query(c)
                }
            })?;
        one_reply_each(replies, keys.len())
    }

    /// Reads one field of each of several hashes, one reply per `(key, field)` in order (`Nil`
    /// for a missing one), as pipelined `HGET`s: one pipeline on a single server, one per node on
    /// a cluster. (A server-side script looping over the probes was measured slower: it cost
    /// Redis a third more CPU per page; docs/benchmarks.md.)
    pub(crate) fn hget_many(
        &self,
        doing: &str,
        probes: &[(String, [u8; 8])],
    ) -> Result<Vec<Value>, IndexError> {
        if probes.is_empty() {
            return Ok(Vec::new());
        }
        let n = probes.len();
        let replies: Vec<Value> =
            self.with_connection(doing, n, |connection| match connection {
                Conn::Single(c) => {
                    let mut pipe = redis::Pipeline::with_capacity(probes.len());
                    for (key, field) in probes {
                        pipe.cmd("HGET").arg(key).arg(&field[..]);
                    }
                    pipe.query(c)
                }
                Conn::Cluster(c) => {
                    let mut pipe = redis::cluster::ClusterPipeline::with_capacity(probes.len());
                    for (key, field) in probes {
                        pipe.cmd("HGET").arg(key).arg(&field[..]);
                    }
                    pipe.query(c)
                }
            })?;
        one_reply_each(replies, probes.len())
    }

    /// Deletes every key matching `pattern` (a `SCAN MATCH` pattern), on every primary of a
    /// cluster. Keys are deleted one command each, since a cluster refuses commands whose keys
    /// span slots.
    pub(crate) fn delete_matching(&self, pattern: &str) -> Result<(), IndexError> {
        self.delete_matching_except(pattern, &[])
    }

    /// [`Link::delete_matching`], keeping the keys named in `keep`.
    pub(crate) fn delete_matching_except(
        &self,
        pattern: &str,
        keep: &[&str],
    ) -> Result<(), IndexError> {
        let nodes = self.primaries()?;
        for node in nodes {
            let mut cursor: u64 = 0;
            loop {
                let mut scan = redis::cmd("SCAN");
                scan.arg(cursor)
                    .arg("MATCH")
                    .arg(pattern)
                    .arg("COUNT")
                    .arg(CLEAR_BATCH);
                let (next, keys): (u64, Vec<Vec<u8>>) =
                    self.on_node(&node, "clear the index", &scan)?;
                let deletes: Vec<Cmd> = keys
                    .iter()
                    .filter(|key| !keep.iter().any(|kept| kept.as_bytes() == key.as_slice()))
                    .map(|key| {
                        let mut unlink = redis::cmd("UNLINK");
                        unlink.arg(key);
                        unlink
                    })
                    .collect();
                for chunk in deletes.chunks(CLEAR_BATCH) {
                    self.batch::<Value>("clear the index", chunk)?;
                }
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        Ok(())
    }

    /// `None` for a single server; the `host:port` of every primary of a cluster.
    fn primaries(&self) -> Result<Vec<Option<(String, u16)>>, IndexError> {
        if matches!(self.target, Target::Single(_)) {
            return Ok(vec![None]);
        }
        let nodes: String = self.query(
            "list the cluster's nodes",
            redis::cmd("CLUSTER").arg("NODES"),
        )?;
        let mut primaries = Vec::new();
        for line in nodes.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(address), Some(flags)) = (fields.get(1), fields.get(2)) else {
                continue;
            };
            if !flags.split(',').any(|f| f == "master") || flags.contains("fail") {
                continue;
            }
            // `host:port@cluster-bus-port[,hostname]`
            let address = address.split(['@', ',']).next().unwrap_or_default();
            if let Some((host, port)) = address.rsplit_once(':')
                && let Ok(port) = port.parse()
            {
                primaries.push(Some((host.to_owned(), port)));
            }
        }
        if primaries.is_empty() {
            return Err(IndexError::Backend(format!(
                "the Redis Cluster at {} lists no healthy primary",
                self.shown_url
            )));
        }
        Ok(primaries)
    }

    /// Runs `cmd` on one node of a cluster (`None`: the single server).
    fn on_node<T: FromRedisValue>(
        &self,
        node: &Option<(String, u16)>,
        doing: &str,
        cmd: &Cmd,
    ) -> Result<T, IndexError> {
        self.with_connection(doing, 1, |connection| match (connection, node) {
            (Conn::Single(c), _) => cmd.query(c),
            (Conn::Cluster(c), Some((host, port))) => {
                let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                    host: host.clone(),
                    port: *port,
                });
                let value = c.route_command(cmd, routing)?;
                Ok(T::from_redis_value(value)?)
            }
            (Conn::Cluster(c), None) => cmd.query(c),
        })
    }

    /// Runs `operation`, one request of `commands` commands, on an idle connection or a new one.
    /// Errors become [`IndexError::Backend`] naming the server (password redacted) and what was
    /// being done; a connection that failed is not reused.
    fn with_connection<T>(
        &self,
        doing: &str,
        commands: usize,
        mut operation: impl FnMut(&mut Conn) -> RedisResult<T>,
    ) -> Result<T, IndexError> {
        let idle = self.idle_connections()?.pop();
        let mut connection = match idle {
            Some(connection) => connection,
            None => self.connect()?,
        };
        REQUESTS.fetch_add(1, Ordering::Relaxed);
        COMMANDS.fetch_add(commands as u64, Ordering::Relaxed);
        match operation(&mut connection) {
            Ok(value) => {
                self.idle_connections()?.push(connection);
                Ok(value)
            }
            // A command error (a wrong type, a script error) leaves the stream usable, but a
            // failed connection is indistinguishable from one that answers late: drop both.
            Err(error) => Err(IndexError::Backend(format!(
                "Redis at {} failed to {doing}: {error}",
                self.shown_url
            ))),
        }
    }

    fn idle_connections(&self) -> Result<MutexGuard<'_, Vec<Conn>>, IndexError> {
        self.idle
            .lock()
            .map_err(|_| IndexError::Backend("the Redis connection lock is poisoned".into()))
    }

    fn connect(&self) -> Result<Conn, IndexError> {
        let failed = |e: redis::RedisError| {
            IndexError::Backend(format!(
                "cannot connect to Redis at {}: {e}",
                self.shown_url
            ))
        };
        match &self.target {
            Target::Single(client) => {
                let connection = client
                    .get_connection_with_timeout(CONNECT_TIMEOUT)
                    .map_err(failed)?;
                connection
                    .set_read_timeout(Some(IO_TIMEOUT))
                    .and_then(|()| connection.set_write_timeout(Some(IO_TIMEOUT)))
                    .map_err(failed)?;
                Ok(Conn::Single(connection))
            }
            Target::Cluster(client) => Ok(Conn::Cluster(Box::new(
                client.get_connection().map_err(failed)?,
            ))),
        }
    }
}
