//! One page under many URLs.
//!
//! Pirate sites serve the same chapter under tracking parameters (`?from=hot`), as
//! `index.html` and `/`, on mobile and desktop hosts (`m.` and `www.`), and behind
//! `rel=canonical` links. A rights holder wants one infringing page with its aliases listed,
//! not one report row per URL variant.
//!
//! The test of sameness is the evidence itself: a page whose stored text is *identical* (same
//! content hash) to that of an earlier page of the same site is an alias of that page. The
//! site is the host with a leading `www.`, `m.`, `wap.` (and similar) label taken off, so
//! `m.example.com` and `www.example.com` are one site while `a.example.com` and
//! `b.example.com` stay two. Nothing is guessed from the shape of a URL: `?page=2` shows other
//! text and stays its own page, while `?from=hot` shows the same text and becomes an alias,
//! whichever parameter names a site invents. A `rel=canonical` link is not trusted on its
//! own, because a mirror may point it at the rights holder's own page; a canonical URL that
//! shows the same text is an alias by the rule above anyway.
//!
//! The earliest stored page of a group is its page; the others record no matches of their
//! own and are listed beside it (the `aliases` column of the match export, the match page).
//! When that page's text changes, its aliases are freed and matched on their own again, except
//! those whose text is the evidence of a copy the group is known for: matched from their
//! stored text, they would report that known copy as new.
//!
//! **Aliases are re-checked, never assumed.** When a removal check (or a crawl) finds a page
//! gone or without the copy, its aliases are fetched again in the same run before any of them
//! could be matched on its own ([`crate::alias_checks`]): an alias that is gone is removed with
//! the page; one that still shows the copy takes the group's matches over under its own URL,
//! with the group's first-seen time, and the group keeps it as its page from then on. No
//! export row, alert or statistic calls such a copy new.

use copytrace_store::{Id, Page, Store, StoreError};

use crate::error::Result;

/// Host labels that name a variant of a site rather than another site: the web, mobile and
/// WAP front ends that pirate sites run side by side.
const VARIANT_LABELS: &[&str] = &[
    "www", "m", "wap", "mobile", "mob", "3g", "touch", "h5", "amp",
];

/// How many earlier pages with the same text are looked at. The earliest on the same site is
/// wanted; mirrors of the same text on other sites are filtered out by host in the query, so
/// the list holds only this site's pages and their subdomains.
const CANDIDATES: u32 = 32;

/// The site a stored host (`name` or `name:port`) belongs to for aliasing: the host without a
/// leading variant label (`m.example.com:8080` → `example.com:8080`). An IP address and a
/// two-label name are their own site.
pub fn site_of_host(host: &str) -> String {
    let host = host.to_ascii_lowercase();
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) && !name.contains(':') => {
            (name, Some(port))
        }
        _ => (host.as_str(), None),
    };
    let is_ip = name.parse::<std::net::IpAddr>().is_ok()
        || name.starts_with('[')
        || name.chars().all(|c| c.is_ascii_digit() || c == '.');
    let site = match name.split_once('.') {
        Some((first, rest)) if !is_ip && rest.contains('.') && VARIANT_LABELS.contains(&first) => {
            rest
        }
        _ => name,
    };
    match port {
        Some(port) => format!("{site}:{port}"),
        None => site.to_owned(),
    }
}

/// The site of a page URL (see [`site_of_host`]); `None` for a URL without a host.
pub fn site_of_url(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    let host = url.host_str().filter(|h| !h.is_empty())?;
    Some(site_of_host(&match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }))
}

/// The page `page` is an alias of: the page of the group it is already in (a group whose
/// matches an alias took over keeps that alias as its page, see [`crate::alias_checks`]); else
/// the page of the group of the earliest
/// stored page of the same site whose current text is the same as `page`'s. `None` when `page`
/// is the first with its text on its site (or the page of that group), or has no text at all
/// (empty pages are not the same page, only equally empty).
pub async fn primary_of(store: &dyn Store, page: &Page) -> Result<Option<Id>> {
    if page.text.trim().is_empty() {
        return Ok(None);
    }
    let Some(site) = site_of_url(&page.url) else {
        return Ok(None);
    };
    // An alias stays in its group: the store frees it where its text, or its page's text, is
    // no longer the same, except when its text is the evidence of a copy the group is known
    // for (matched on its own it would report that copy as new), and a removal check hands
    // the group to an alias that still shows the copy.
    if let Some(head) = page.alias_of {
        match store.get_page(head).await {
            Ok(found) => {
                let head = found.alias_of.unwrap_or(found.id);
                if head != page.id {
                    return Ok(Some(head));
                }
            }
            Err(StoreError::NotFound(_)) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let earlier = store
        .earlier_pages_with_text(&page.content_hash, &site, page.id, CANDIDATES)
        .await?;
    let Some((first, _)) = earlier
        .into_iter()
        .find(|(_, url)| site_of_url(url).as_deref() == Some(site.as_str()))
    else {
        return Ok(None);
    };
    // An earlier alias stands for its group: the page is an alias of the group's page, unless
    // it is that page itself.
    let head = match store.get_page(first).await {
        Ok(found) => found.alias_of.unwrap_or(first),
        Err(StoreError::NotFound(_)) => first,
        Err(error) => return Err(error.into()),
    };
    Ok((head != page.id).then_some(head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mobile_and_desktop_hosts_are_one_site_and_subdomains_are_not() {
        assert_eq!(site_of_host("www.example.com"), "example.com");
        assert_eq!(site_of_host("m.example.com"), "example.com");
        assert_eq!(site_of_host("WAP.Example.com:8080"), "example.com:8080");
        assert_eq!(site_of_host("example.com"), "example.com");
        assert_eq!(site_of_host("a.example.com"), "a.example.com");
        assert_ne!(site_of_host("a.example.com"), site_of_host("b.example.com"));
        // Two labels: `m.cn` is a site of its own, not the mobile front of `cn`.
        assert_eq!(site_of_host("m.cn"), "m.cn");
        assert_eq!(site_of_host("127.0.0.1:3000"), "127.0.0.1:3000");
        assert_eq!(site_of_host("[::1]:3000"), "[::1]:3000");
    }

    #[test]
    fn the_site_of_a_url_keeps_its_port() {
        assert_eq!(
            site_of_url("http://m.novel.example:8080/book/1.html?from=hot").as_deref(),
            Some("novel.example:8080")
        );
        assert_eq!(site_of_url("not a url"), None);
    }
}
