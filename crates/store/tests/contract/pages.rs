//! The page library: sites and crawled pages, and which of them are due for matching.

use std::sync::Arc;

use chrono::{Duration, TimeZone, Utc};
use copytrace_store::{Store, WriteOutcome};

use crate::helpers::{at, contract_tests, hash_of, invalid, not_found, page, stored_page};

contract_tests!(
    a_new_page_is_stored_with_its_fetch_times_and_is_due,
    same_page_text_only_moves_last_seen_status_and_title,
    changed_page_text_is_due_for_matching_again,
    last_seen_never_moves_backwards,
    sites_are_derived_from_lower_cased_hosts_with_explicit_ports,
    spellings_of_one_url_are_one_page,
    a_url_without_a_host_is_refused,
    pages_to_match_lists_due_pages_by_id_and_honours_the_limit,
    a_page_matched_on_an_older_text_stays_due,
    marking_all_pages_unmatched_makes_every_page_due,
    timestamps_keep_microseconds_and_drop_nanoseconds,
    unknown_page_is_not_found,
    a_url_longer_than_an_index_entry_is_one_page,
    concurrent_stores_of_one_url_make_one_page,
    pages_with_the_same_text_on_a_host_and_its_subdomains_are_alias_candidates,
    an_alias_is_listed_beside_its_page_and_freed_when_the_page_changes,
);

async fn a_new_page_is_stored_with_its_fetch_times_and_is_due(store: Arc<dyn Store>) {
    let new = page("https://pirate.example/book/1", "chapter one", at(5));
    let write = store.upsert_page(&new).await.unwrap();
    assert_eq!(write.outcome, WriteOutcome::Created);

    let stored = store.get_page(write.id).await.unwrap();
    assert_eq!(stored.url, new.url);
    assert_eq!(stored.title, new.title);
    assert_eq!(stored.text, "chapter one");
    assert_eq!(stored.content_hash, hash_of("chapter one"));
    assert_eq!(stored.http_status, 200);
    assert_eq!((stored.first_seen, stored.last_seen), (at(5), at(5)));
    assert_eq!(stored.matched_hash, None);
    assert_eq!(store.count_pages().await.unwrap(), 1);
    assert_eq!(store.pages_to_match(10).await.unwrap(), [stored]);
}

async fn same_page_text_only_moves_last_seen_status_and_title(store: Arc<dyn Store>) {
    let url = "https://pirate.example/book/1";
    let id = store
        .upsert_page(&page(url, "text", at(0)))
        .await
        .unwrap()
        .id;
    let hash = hash_of("text");
    store
        .record_page_matches(id, &hash, &[], at(1))
        .await
        .unwrap();

    let mut refetch = page(url, "text", at(60));
    refetch.http_status = 203;
    refetch.title = None;
    let write = store.upsert_page(&refetch).await.unwrap();
    assert_eq!((write.id, write.outcome), (id, WriteOutcome::Unchanged));

    let stored = store.get_page(id).await.unwrap();
    assert_eq!((stored.first_seen, stored.last_seen), (at(0), at(60)));
    assert_eq!(stored.http_status, 203);
    assert_eq!(stored.title, None);
    assert_eq!(
        stored.matched_hash,
        Some(hash),
        "still matched: nothing new to match"
    );
    assert!(store.pages_to_match(10).await.unwrap().is_empty());
    assert_eq!(store.count_pages().await.unwrap(), 1);
}

async fn changed_page_text_is_due_for_matching_again(store: Arc<dyn Store>) {
    let url = "https://pirate.example/book/1";
    let id = stored_page(&*store, url, "old text").await;
    store
        .record_page_matches(id, &hash_of("old text"), &[], at(1))
        .await
        .unwrap();
    assert!(store.pages_to_match(10).await.unwrap().is_empty());

    let write = store
        .upsert_page(&page(url, "new text", at(2)))
        .await
        .unwrap();
    assert_eq!((write.id, write.outcome), (id, WriteOutcome::Updated));

    let stored = store.get_page(id).await.unwrap();
    assert_eq!(stored.text, "new text");
    assert_eq!(stored.content_hash, hash_of("new text"));
    assert_eq!(stored.matched_hash, None);
    assert_eq!((stored.first_seen, stored.last_seen), (at(0), at(2)));
    assert_eq!(store.pages_to_match(10).await.unwrap(), [stored]);
}

async fn last_seen_never_moves_backwards(store: Arc<dyn Store>) {
    let url = "https://pirate.example/book/1";
    let id = store
        .upsert_page(&page(url, "text", at(100)))
        .await
        .unwrap()
        .id;
    store.upsert_page(&page(url, "text", at(50))).await.unwrap();
    assert_eq!(store.get_page(id).await.unwrap().last_seen, at(100));
}

async fn sites_are_derived_from_lower_cased_hosts_with_explicit_ports(store: Arc<dyn Store>) {
    let a = stored_page(&*store, "https://Pirate.Example/a", "a").await;
    let b = stored_page(&*store, "https://pirate.example/b", "b").await;
    let c = stored_page(&*store, "http://PIRATE.example:8080/c", "c").await;
    let d = stored_page(&*store, "http://pirate.example:80/d", "d").await;
    let e = stored_page(&*store, "https://mirror.example/e", "e").await;

    let sites = store.list_sites().await.unwrap();
    let hosts: Vec<&str> = sites.iter().map(|site| site.host.as_str()).collect();
    assert_eq!(
        hosts,
        ["mirror.example", "pirate.example", "pirate.example:8080"]
    );

    let site_of = |host: &str| sites.iter().find(|site| site.host == host).unwrap().id;
    for (page, host) in [
        (a, "pirate.example"),
        (b, "pirate.example"),
        (c, "pirate.example:8080"),
        (d, "pirate.example"),
        (e, "mirror.example"),
    ] {
        assert_eq!(
            store.get_page(page).await.unwrap().site_id,
            site_of(host),
            "{host}"
        );
    }
}

async fn spellings_of_one_url_are_one_page(store: Arc<dyn Store>) {
    let first = store
        .upsert_page(&page("HTTP://Pirate.Example/book?id=1#top", "text", at(0)))
        .await
        .unwrap();
    let second = store
        .upsert_page(&page("http://pirate.example/book?id=1", "text", at(1)))
        .await
        .unwrap();
    assert_eq!(second.id, first.id);
    assert_eq!(second.outcome, WriteOutcome::Unchanged);
    assert_eq!(store.count_pages().await.unwrap(), 1);
    assert_eq!(
        store.get_page(first.id).await.unwrap().url,
        "http://pirate.example/book?id=1"
    );
}

async fn a_url_without_a_host_is_refused(store: Arc<dyn Store>) {
    for url in [
        "not a url",
        "file:///etc/passwd",
        "mailto:someone@example.com",
    ] {
        let why = invalid(store.upsert_page(&page(url, "text", at(0))).await);
        assert!(why.contains(url), "{why}");
    }
    assert_eq!(store.count_pages().await.unwrap(), 0);
    assert!(store.list_sites().await.unwrap().is_empty());
}

async fn pages_to_match_lists_due_pages_by_id_and_honours_the_limit(store: Arc<dyn Store>) {
    let first = stored_page(&*store, "https://z.example/1", "one").await;
    let matched = stored_page(&*store, "https://a.example/2", "two").await;
    let third = stored_page(&*store, "https://m.example/3", "three").await;
    store
        .record_page_matches(matched, &hash_of("two"), &[], at(1))
        .await
        .unwrap();

    let due =
        |pages: Vec<copytrace_store::Page>| pages.into_iter().map(|p| p.id).collect::<Vec<_>>();
    assert_eq!(due(store.pages_to_match(10).await.unwrap()), [first, third]);
    assert_eq!(due(store.pages_to_match(1).await.unwrap()), [first]);
    assert!(store.pages_to_match(0).await.unwrap().is_empty());

    // The same pages by id and hash only, walked in steps.
    assert_eq!(
        store.due_page_ids(0, 10).await.unwrap(),
        [(first, hash_of("one")), (third, hash_of("three"))]
    );
    assert_eq!(
        store.due_page_ids(0, 1).await.unwrap(),
        [(first, hash_of("one"))]
    );
    assert_eq!(
        store.due_page_ids(first, 1).await.unwrap(),
        [(third, hash_of("three"))]
    );
    assert!(store.due_page_ids(third, 10).await.unwrap().is_empty());
}

async fn a_page_matched_on_an_older_text_stays_due(store: Arc<dyn Store>) {
    let url = "https://pirate.example/1";
    let id = stored_page(&*store, url, "old").await;
    // The page changes while a matcher works on the old text...
    store.upsert_page(&page(url, "new", at(5))).await.unwrap();
    // ...whose verdict is then not recorded: its evidence would point into a text the store
    // no longer has.
    assert_eq!(
        store
            .record_page_matches(id, &hash_of("old"), &[], at(6))
            .await
            .unwrap(),
        copytrace_store::VerdictOutcome::default()
    );

    let due = store.pages_to_match(10).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].matched_hash, None);
    assert_eq!(due[0].content_hash, hash_of("new"));
}

async fn marking_all_pages_unmatched_makes_every_page_due(store: Arc<dyn Store>) {
    for (n, text) in ["one", "two", "three"].into_iter().enumerate() {
        let id = stored_page(&*store, &format!("https://p.example/{n}"), text).await;
        if n < 2 {
            store
                .record_page_matches(id, &hash_of(text), &[], at(1))
                .await
                .unwrap();
        }
    }
    assert_eq!(store.pages_to_match(10).await.unwrap().len(), 1);

    assert_eq!(store.mark_all_pages_unmatched().await.unwrap(), 2);
    assert_eq!(store.pages_to_match(10).await.unwrap().len(), 3);
    assert_eq!(store.mark_all_pages_unmatched().await.unwrap(), 0);
}

async fn timestamps_keep_microseconds_and_drop_nanoseconds(store: Arc<dyn Store>) {
    let fetched = Utc.timestamp_opt(1_780_000_000, 123_456_789).unwrap();
    let id = store
        .upsert_page(&page("https://p.example/", "text", fetched))
        .await
        .unwrap()
        .id;
    let stored = store.get_page(id).await.unwrap();
    assert_eq!(stored.first_seen, fetched - Duration::nanoseconds(789));
}

async fn unknown_page_is_not_found(store: Arc<dyn Store>) {
    assert_eq!(not_found(store.get_page(77).await), "page 77");
}

/// Tracking parameters can make URLs many kilobytes long; a B-tree index entry holds about 2.7 kB,
/// so a backend must not make the whole URL its unique index key. The letters are pseudo-random
/// so that compression cannot shrink the key below that size either.
async fn a_url_longer_than_an_index_entry_is_one_page(store: Arc<dyn Store>) {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let query: String = (0..12_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(b'a' + (state % 26) as u8)
        })
        .collect();
    let url = format!("https://pirate.example/read?session={query}");
    let first = store.upsert_page(&page(&url, "text", at(0))).await.unwrap();
    let second = store.upsert_page(&page(&url, "text", at(1))).await.unwrap();
    assert_eq!(first.outcome, WriteOutcome::Created);
    assert_eq!(
        (second.id, second.outcome),
        (first.id, WriteOutcome::Unchanged)
    );
    let other = store
        .upsert_page(&page(&format!("{url}x"), "text", at(2)))
        .await
        .unwrap();
    assert_ne!(
        other.id, first.id,
        "a URL differing only at the end is another page"
    );
    assert_eq!(store.get_page(first.id).await.unwrap().url, url);
    assert_eq!(store.count_pages().await.unwrap(), 2);
}

/// Several crawlers fetching one URL at once: one creates the page, the others find it.
async fn concurrent_stores_of_one_url_make_one_page(store: Arc<dyn Store>) {
    let tasks: Vec<_> = (0..8)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move {
                let url = "https://Pirate.Example/book/1";
                store.upsert_page(&page(url, "text", at(n))).await.unwrap()
            })
        })
        .collect();
    let mut writes = Vec::new();
    for task in tasks {
        writes.push(task.await.unwrap());
    }
    let created = writes
        .iter()
        .filter(|w| w.outcome == WriteOutcome::Created)
        .count();
    assert_eq!(created, 1, "{writes:?}");
    assert!(writes.iter().all(|w| w.id == writes[0].id), "{writes:?}");
    assert_eq!(store.count_pages().await.unwrap(), 1);
    assert_eq!(store.list_sites().await.unwrap().len(), 1);
    assert_eq!(store.get_page(writes[0].id).await.unwrap().last_seen, at(7));
}

async fn pages_with_the_same_text_on_a_host_and_its_subdomains_are_alias_candidates(
    store: Arc<dyn Store>,
) {
    let first = stored_page(
        &*store,
        "https://www.pirate.example/7.html",
        "chapter seven",
    )
    .await;
    let other_site = stored_page(&*store, "https://mirror.example/7.html", "chapter seven").await;
    let other_text = stored_page(&*store, "https://pirate.example/8.html", "chapter eight").await;
    let mobile = stored_page(&*store, "https://m.pirate.example/7.html", "chapter seven").await;
    let variant = stored_page(
        &*store,
        "https://pirate.example/7.html?from=hot",
        "chapter seven",
    )
    .await;
    let hash = hash_of("chapter seven");
    let ids = |pages: Vec<(copytrace_store::Id, String)>| {
        pages.into_iter().map(|p| p.0).collect::<Vec<_>>()
    };
    // Earlier pages only, on the host or below it, with the same text, oldest first.
    assert_eq!(
        ids(store
            .earlier_pages_with_text(&hash, "pirate.example", variant, 10)
            .await
            .unwrap()),
        [first, mobile]
    );
    assert_eq!(
        ids(store
            .earlier_pages_with_text(&hash, "pirate.example", variant, 1)
            .await
            .unwrap()),
        [first]
    );
    assert!(
        store
            .earlier_pages_with_text(&hash, "pirate.example", first, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        ids(store
            .earlier_pages_with_text(&hash, "mirror.example", variant, 10)
            .await
            .unwrap()),
        [other_site]
    );
    // A page a removal check found gone is no page to be an alias of.
    store
        .record_page_check(&copytrace_store::PageCheck {
            page_id: first,
            run_id: None,
            checked_at: at(2),
            availability: copytrace_store::Availability::Gone,
            http_status: Some(404),
            detail: "HTTP 404".to_owned(),
            still_present: Vec::new(),
            removed: Vec::new(),
        })
        .await
        .unwrap();
    assert_eq!(
        ids(store
            .earlier_pages_with_text(&hash, "pirate.example", variant, 10)
            .await
            .unwrap()),
        [mobile]
    );
    assert!(
        store
            .earlier_pages_with_text(&hash_of("chapter eight"), "pirate.example", other_text, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn an_alias_is_listed_beside_its_page_and_freed_when_the_page_changes(store: Arc<dyn Store>) {
    let page_id = stored_page(&*store, "https://pirate.example/7.html", "chapter seven").await;
    let alias = stored_page(
        &*store,
        "https://pirate.example/7.html?from=hot",
        "chapter seven",
    )
    .await;
    let hash = hash_of("chapter seven");
    store
        .record_page_matches(alias, &hash, &[], at(1))
        .await
        .unwrap();
    store.set_page_alias(alias, Some(page_id)).await.unwrap();
    assert_eq!(
        store.page_aliases(page_id).await.unwrap(),
        ["https://pirate.example/7.html?from=hot"]
    );
    assert!(store.page_aliases(alias).await.unwrap().is_empty());
    // Setting it again changes nothing; a page is never its own alias; a missing page is
    // not found.
    store.set_page_alias(alias, Some(page_id)).await.unwrap();
    assert_eq!(store.page_aliases(page_id).await.unwrap().len(), 1);
    invalid(store.set_page_alias(alias, Some(alias)).await);
    not_found(store.set_page_alias(9_999, None).await);

    // The page still shows the text: nothing is freed.
    assert_eq!(store.release_aliases(page_id, &hash).await.unwrap(), 0);
    assert_eq!(store.page_aliases(page_id).await.unwrap().len(), 1);
    // The page changed: its alias is freed and due for matching on its own.
    assert_eq!(
        store
            .release_aliases(page_id, &hash_of("chapter seven, revised"))
            .await
            .unwrap(),
        1
    );
    assert!(store.page_aliases(page_id).await.unwrap().is_empty());
    assert_eq!(store.get_page(alias).await.unwrap().matched_hash, None);

    // An alias set back to no page is listed nowhere.
    store.set_page_alias(alias, Some(page_id)).await.unwrap();
    store.set_page_alias(alias, None).await.unwrap();
    assert!(store.page_aliases(page_id).await.unwrap().is_empty());

    // A re-crawl that stores another text for the page frees its aliases in the same write,
    // and an alias whose own text changes is no longer one.
    store.set_page_alias(alias, Some(page_id)).await.unwrap();
    store
        .record_page_matches(alias, &hash, &[], at(3))
        .await
        .unwrap();
    store
        .upsert_page(&page(
            "https://pirate.example/7.html",
            "chapter seven, revised",
            at(4),
        ))
        .await
        .unwrap();
    assert!(store.page_aliases(page_id).await.unwrap().is_empty());
    assert_eq!(store.get_page(alias).await.unwrap().matched_hash, None);
    store.set_page_alias(alias, Some(page_id)).await.unwrap();
    store
        .upsert_page(&page(
            "https://pirate.example/7.html?from=hot",
            "chapter seven, revised again",
            at(5),
        ))
        .await
        .unwrap();
    assert!(store.page_aliases(page_id).await.unwrap().is_empty());
}
