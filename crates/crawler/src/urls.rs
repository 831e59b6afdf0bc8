//! URL normalization: one spelling per page, so the seen-set does not fetch a page twice.
//!
//! The `url` crate already lower-cases the scheme and host, drops default ports, resolves
//! `.`/`..` segments and canonicalises odd IPv4 spellings. [`normalize`] adds what a crawler
//! needs on top, following the spirit of Scrapy's `canonicalize_url` and w3lib's
//! `url_query_cleaner`:
//!
//! * the fragment is dropped (it never reaches the server);
//! * a trailing dot of the host is dropped (`example.cn.` is `example.cn`);
//! * known tracking and session parameters are removed from the query ([`is_tracking_param`]);
//! * the remaining query pairs are sorted (by their raw, still-encoded text), and empty pairs and
//!   an empty query (`page.html?`) are dropped;
//! * `;jsessionid=…` path parameters are removed.
//!
//! Sorting and dropping parameters changes the URL the crawler requests, not only its key in
//! the seen-set. That is deliberate: the stored page URL is then the clean one too, and servers
//! practically never depend on parameter order. Percent-encoding is left as the `url` crate
//! produced it (decoding and re-encoding would turn `%20` into `+` and break signed URLs).

use url::Url;

/// Query parameters that only identify a campaign, click or session, never the page. Matched
/// case-insensitively; `utm_` and `hmsr`-style prefixes are handled in [`is_tracking_param`].
const TRACKING_PARAMS: &[&str] = &[
    // Ads and analytics
    "fbclid",
    "gclid",
    "gclsrc",
    "dclid",
    "gbraid",
    "wbraid",
    "msclkid",
    "yclid",
    "twclid",
    "ttclid",
    "igshid",
    "mc_cid",
    "mc_eid",
    "_ga",
    "_gl",
    "_hsenc",
    "_hsmi",
    "mkt_tok",
    // Alibaba/Taobao/Youku position codes, Bilibili and WeChat share markers
    "spm",
    "scm",
    "spm_id_from",
    "vd_source",
    "share_source",
    "share_medium",
    "share_plat",
    "share_tag",
    "from_spmid",
    "hmsr",
    "hmpl",
    "hmcu",
    "hmkw",
    "hmci",
    // Session identifiers (each visit would otherwise look like a new page)
    "phpsessid",
    "jsessionid",
    "sessionid",
];

/// Whether a query parameter name is a known tracking or session parameter (`utm_*`, `fbclid`,
/// `gclid`, `spm`, `PHPSESSID`, ...).
pub fn is_tracking_param(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("utm_")
        || lower.starts_with("aspsessionid")
        || TRACKING_PARAMS.contains(&lower.as_str())
}

/// The normalized form of `url` (see the module docs). Idempotent.
pub fn normalize(url: &Url) -> Url {
    let mut url = url.clone();
    url.set_fragment(None);
    if let Some(url::Host::Domain(domain)) = url.host()
        && domain.ends_with('.')
        && domain.len() > 1
    {
        let trimmed = domain.trim_end_matches('.').to_owned();
        // Cannot fail: the host was a valid domain a moment ago.
        let _ = url.set_host(Some(&trimmed));
    }
    if url.path().to_ascii_lowercase().contains(";jsessionid=") {
        let path = url.path().to_owned();
        let cleaned: Vec<String> = path
            .split('/')
            .map(
                |segment| match segment.to_ascii_lowercase().find(";jsessionid=") {
                    Some(at) => segment[..at].to_owned(),
                    None => segment.to_owned(),
                },
            )
            .collect();
        url.set_path(&cleaned.join("/"));
    }
    if let Some(query) = url.query() {
        let mut pairs: Vec<&str> = query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .filter(|pair| {
                let name = pair.split('=').next().unwrap_or_default();
                !is_tracking_param(&percent_decode_lossy(name))
            })
            .collect();
        pairs.sort_unstable();
        let cleaned = pairs.join("&");
        url.set_query((!cleaned.is_empty()).then_some(cleaned.as_str()));
    }
    url
}

/// Enough percent-decoding to recognise a parameter name such as `utm%5Fsource`.
fn percent_decode_lossy(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// The politeness key of a URL: host and port (`example.cn:443`). Requests are paced and
/// counted per key; two ports of one host are treated as two servers.
pub(crate) fn host_key(url: &Url) -> String {
    format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or(0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        normalize(&Url::parse(s).unwrap()).to_string()
    }

    #[test]
    fn case_default_ports_and_fragments_are_normalized() {
        assert_eq!(
            norm("HTTP://WWW.Example.CN:80/Book/1.html#top"),
            "http://www.example.cn/Book/1.html"
        );
        assert_eq!(norm("https://example.cn:443/"), "https://example.cn/");
        assert_eq!(norm("http://example.cn:8080/a"), "http://example.cn:8080/a");
        assert_eq!(norm("http://example.cn./a/../b"), "http://example.cn/b");
    }

    #[test]
    fn the_query_is_sorted_and_cleaned_of_tracking_parameters() {
        assert_eq!(
            norm("http://x.cn/read?page=2&book=7&utm_source=wx&UTM_Medium=a&fbclid=1&spm=a.b"),
            "http://x.cn/read?book=7&page=2"
        );
        assert_eq!(
            norm("http://x.cn/a?gclid=1&utm%5Fcampaign=z"),
            "http://x.cn/a"
        );
        assert_eq!(norm("http://x.cn/a?"), "http://x.cn/a");
        assert_eq!(norm("http://x.cn/a?&&b=1&"), "http://x.cn/a?b=1");
        assert_eq!(
            norm("http://x.cn/a?q=%E5%B0%8F%E8%AF%B4&a=1"),
            "http://x.cn/a?a=1&q=%E5%B0%8F%E8%AF%B4"
        );
        // Parameters that merely contain a tracking name are kept.
        assert_eq!(
            norm("http://x.cn/a?spmx=1&my_spm=2"),
            "http://x.cn/a?my_spm=2&spmx=1"
        );
    }

    #[test]
    fn session_identifiers_are_removed() {
        assert_eq!(
            norm("http://x.cn/book/1.html;jsessionid=ABC123?PHPSESSID=9&id=3"),
            "http://x.cn/book/1.html?id=3"
        );
    }

    #[test]
    fn normalization_is_idempotent() {
        for s in [
            "http://x.cn/a?z=1&a=2&utm_x=3#f",
            "https://[::1]:8443/p;jsessionid=1?b&a",
            "http://x.cn/%7Euser/?q=a+b",
        ] {
            let once = normalize(&Url::parse(s).unwrap());
            assert_eq!(normalize(&once), once, "{s}");
        }
    }

    #[test]
    fn host_keys_include_the_port() {
        let key = |s: &str| host_key(&Url::parse(s).unwrap());
        assert_eq!(key("http://x.cn/a"), "x.cn:80");
        assert_eq!(key("https://x.cn/a"), "x.cn:443");
        assert_eq!(key("http://127.0.0.1:8080/"), "127.0.0.1:8080");
    }
}
