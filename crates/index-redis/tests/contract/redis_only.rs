//! Behaviour specific to the Redis index: key layout, namespaces, parameters, errors.

use copytrace_index_redis::RedisIndex;
use copytrace_matcher::{Index, IndexError, SegmentRef};

use crate::helpers::{TestRedisIndex, keys_under, redis_url, unique_prefix};

#[test]
fn reinserting_identical_windows_stores_them_once() {
    let mut test = TestRedisIndex::new(3);
    let windows = [(0, 0xAAAA), (1, 0xBBBB)];
    test.insert_work(1, &windows).unwrap();
    test.insert_work(1, &windows).unwrap();
    assert_eq!(test.len().unwrap(), 2);
    let mut hits = Vec::new();
    test.query(&0xAAAA, &mut hits).unwrap();
    assert_eq!(hits.len(), 1);
}

#[test]
fn keys_follow_the_documented_layout_with_one_hash_tag_per_bucket() {
    let mut test = TestRedisIndex::new(3);
    let fingerprint = 0x1111_2222_3333_4444u64;
    test.insert_work(9, &[(0, fingerprint)]).unwrap();
    let prefix = test.index.prefix().to_owned();
    let expected = vec![
        format!("{prefix}:b:{{b0:4444}}"),
        format!("{prefix}:b:{{b1:3333}}"),
        format!("{prefix}:b:{{b2:2222}}"),
        format!("{prefix}:b:{{b3:1111}}"),
        format!("{prefix}:meta"),
        format!("{prefix}:w:{{w9}}"),
        format!("{prefix}:works"),
    ];
    assert_eq!(keys_under(&prefix), expected);
    assert_eq!(test.index.probes_per_query(), 4);
}

#[test]
fn clearing_an_index_leaves_other_prefixes_alone() {
    let mut a = TestRedisIndex::new(3);
    let mut b = TestRedisIndex::new(3);
    a.insert_work(1, &[(0, 77)]).unwrap();
    b.insert_work(1, &[(0, 77)]).unwrap();
    a.index.clear().unwrap();
    assert_eq!(a.len().unwrap(), 0);
    assert_eq!(b.len().unwrap(), 1);
    let mut hits = Vec::new();
    a.query(&77, &mut hits).unwrap();
    assert!(hits.is_empty());
    b.query(&77, &mut hits).unwrap();
    assert_eq!(hits.len(), 1);
    // Only the metadata survives a clear, so the index stays usable.
    assert_eq!(
        keys_under(a.index.prefix()),
        vec![format!("{}:meta", a.index.prefix())]
    );
}

#[test]
fn an_index_written_for_another_distance_is_refused_until_cleared() {
    let mut test = TestRedisIndex::new(3);
    test.insert(
        &5,
        SegmentRef {
            work_id: 1,
            ordinal: 0,
        },
    )
    .unwrap();
    let error = RedisIndex::connect(&redis_url(), test.index.prefix(), 4).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("max_distance 3, this process needs 4") && message.contains("rebuild"),
        "{message}"
    );
    // The same distance opens the same data.
    let again = RedisIndex::connect(&redis_url(), test.index.prefix(), 3).unwrap();
    assert_eq!(again.len().unwrap(), 1);
}

#[test]
fn an_unreachable_server_is_a_backend_error_that_hides_the_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://:s3cr3t-pw@127.0.0.1:{port}/0");
    let error = RedisIndex::connect(&url, &unique_prefix(), 3).unwrap_err();
    let IndexError::Backend(message) = &error else {
        panic!("expected a backend error, got {error:?}");
    };
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
    assert!(message.contains("***"), "{message}");
    assert!(!message.contains("s3cr3t-pw"), "{message}");
}

#[test]
fn a_bad_prefix_is_refused_before_connecting() {
    let error = RedisIndex::connect(&redis_url(), "a:*", 3).unwrap_err();
    assert!(
        error.to_string().contains("invalid Redis key prefix"),
        "{error}"
    );
}

#[test]
fn a_corrupt_bucket_entry_is_reported_not_misread() {
    let test = TestRedisIndex::new(3);
    let client = redis::Client::open(redis_url()).unwrap();
    let mut connection = client.get_connection().unwrap();
    redis::cmd("SET")
        .arg(test.index.bucket_key(0, 0))
        .arg(&b"short"[..])
        .exec(&mut connection)
        .unwrap();
    let mut hits = Vec::new();
    let error = test.query(&0, &mut hits).unwrap_err();
    assert!(matches!(error, IndexError::Corrupt(_)), "{error:?}");
}

/// What `copytrace index rebuild` does with an index another version wrote: connecting refuses
/// it and says to rebuild, so the rebuild opens it without that check and clears it. (Before,
/// the rebuild connected like every other process and was refused too.)
#[test]
fn an_index_of_another_layout_is_refused_and_can_be_replaced() {
    let mut test = TestRedisIndex::new(3);
    test.insert_work(1, &[(0, 77)]).unwrap();
    let prefix = test.index.prefix().to_owned();
    let client = redis::Client::open(redis_url()).expect("a valid test URL");
    let mut connection = client
        .get_connection()
        .expect("the test Redis server answers");
    let () = redis::cmd("HSET")
        .arg(format!("{prefix}:meta"))
        .arg("layout")
        .arg(3)
        .query(&mut connection)
        .expect("HSET answers");

    let message = RedisIndex::connect(&redis_url(), &prefix, 3)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("layout 3, this process needs") && message.contains("index rebuild"),
        "{message}"
    );
    let mut replaced = RedisIndex::connect_to_replace(&redis_url(), &prefix, 3).unwrap();
    replaced.clear().unwrap();
    let reopened = RedisIndex::connect(&redis_url(), &prefix, 3).unwrap();
    assert_eq!(reopened.len().unwrap(), 0);

    // A newer layout is not replaced by this version.
    let () = redis::cmd("HSET")
        .arg(format!("{prefix}:meta"))
        .arg("layout")
        .arg(copytrace_index_redis::LAYOUT_VERSION + 1)
        .query(&mut connection)
        .expect("HSET answers");
    let Err(refused) = RedisIndex::connect_to_replace(&redis_url(), &prefix, 3) else {
        panic!("an index of a newer layout was opened to be replaced");
    };
    assert!(refused.to_string().contains("newer version"), "{refused}");
}
