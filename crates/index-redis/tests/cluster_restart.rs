//! A Redis Cluster node stopping and restarting under the indexes: reads fail while a node is
//! down (never an empty answer, which the matcher would take for "no copy"), and answer as
//! before once it is back. Its own test binary, so no other test uses the cluster meanwhile.

#[path = "contract/helpers.rs"]
#[allow(dead_code)]
mod helpers;

use std::time::{Duration, Instant};

use copytrace_matcher::{Index, LshConfig};

use helpers::{TestRedisIndex, splitmix};

/// The nodes of the test Redis Cluster: `(port, directory of its redis.conf)`.
pub fn cluster_nodes() -> Vec<(u16, std::path::PathBuf)> {
    let nodes = std::env::var("COPYTRACE_TEST_REDIS_CLUSTER_NODES")
        .expect("COPYTRACE_TEST_REDIS_CLUSTER_NODES is set by ./scripts/test with the cluster");
    nodes
        .split(',')
        .map(|node| {
            let (port, dir) = node.split_once(':').expect("port:directory");
            (port.parse().expect("a port"), dir.into())
        })
        .collect()
}

/// A connection to one node of the test cluster (not cluster-aware).
pub fn node_connection(port: u16) -> redis::Connection {
    redis::Client::open(format!("redis://127.0.0.1:{port}"))
        .and_then(|client| client.get_connection())
        .expect("the cluster node answers")
}

/// Restarts a stopped node from its configuration and waits until the cluster serves again.
fn restart(port: u16, dir: &std::path::Path) {
    let status = std::process::Command::new("redis-server")
        .arg(dir.join("redis.conf"))
        .status()
        .expect("redis-server runs");
    assert!(status.success(), "redis-server {port} did not restart");
}

/// Polls `attempt` until it succeeds, for at most 30 s.
fn eventually<T>(what: &str, mut attempt: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(value) = attempt() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not happen within 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_stopped_node_fails_reads_instead_of_answering_nothing_and_its_restart_restores_them() {
    let mut test = TestRedisIndex::on_cluster(3);
    let mut state = 3;
    let windows: Vec<(u32, u64)> = (0..400).map(|o| (o, splitmix(&mut state))).collect();
    test.index.insert_work(1, &windows).unwrap();
    let mut minhash = test.index.minhash(&LshConfig::default()).unwrap();
    let signatures: Vec<(u32, Vec<u32>)> = (0..50)
        .map(|o| (o, (0..64).map(|_| splitmix(&mut state) as u32).collect()))
        .collect();
    minhash.insert_work(1, &signatures).unwrap();
    let queries: Vec<u64> = windows.iter().map(|(_, s)| *s).collect();
    let signature_queries: Vec<Vec<u32>> = signatures.iter().map(|(_, s)| s.clone()).collect();
    let answers = |index: &dyn Index, minhash: &dyn Index<Vec<u32>>| {
        let mut hits = Vec::new();
        index.query_many(&queries, &mut hits)?;
        let found = hits.iter().filter(|h| !h.is_empty()).count();
        minhash.query_many(&signature_queries, &mut hits)?;
        Ok::<_, copytrace_matcher::IndexError>((
            found,
            hits.iter().filter(|h| !h.is_empty()).count(),
        ))
    };
    assert_eq!(answers(&test.index, &minhash).unwrap(), (400, 50));

    // Every node holds some of the index: the hash tags spread it.
    let nodes = cluster_nodes();
    for (port, _) in &nodes {
        let keys: usize = redis::cmd("DBSIZE")
            .query(&mut node_connection(*port))
            .unwrap();
        assert!(keys > 0, "node {port} holds none of the index");
    }

    let (port, dir) = nodes[1].clone();
    let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN").query(&mut node_connection(port));
    eventually("the node stopping", || {
        redis::Client::open(format!("redis://127.0.0.1:{port}"))
            .and_then(|c| c.get_connection())
            .is_err()
            .then_some(())
    });
    // While it is down, a page's reads fail as a whole: no partial or empty answer.
    for _ in 0..3 {
        let error = answers(&test.index, &minhash).expect_err("reads fail while a node is down");
        assert!(
            matches!(error, copytrace_matcher::IndexError::Backend(_)),
            "{error}"
        );
    }
    restart(port, &dir);
    let back = eventually("the cluster answering again", || {
        answers(&test.index, &minhash).ok()
    });
    assert_eq!(
        back,
        (400, 50),
        "the restarted node kept its part of the index"
    );
}
