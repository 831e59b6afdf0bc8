//! Contacts a site publishes about itself: where a takedown notice to it can go.
//!
//! Read from the site's own pages as they are crawled, with no request of their own:
//!
//! * `mailto:` links on any page (a site's footer often has one), and on pages that are about
//!   contacting the site — their URL or title says 联系, 举报, 投诉, 版权, 侵权, contact, dmca,
//!   copyright, abuse, report, … ([`is_contact_page`]) — also addresses written as text, in the
//!   disguises Chinese sites use against harvesters (`name#qq.com`, `name[at]site.com`,
//!   full-width `＠`);
//! * the ICP filing (备案) number every site hosted in mainland China must show in its footer
//!   (`京ICP备12345678号-1`): whom a complaint to the regulator names. It is read from the
//!   whole page, footers included, since main-text extraction drops footers.
//!
//! An address's kind says which desk it is: `abuse@…` is an abuse desk, `dmca@`, `legal@`,
//! `copyright@`, `banquan@`, `jubao@`, `tousu@` or any address on a copyright or report page
//! is for copyright complaints, the rest general. Pure functions: no I/O.

use std::sync::LazyLock;

use regex::Regex;
use scraper::{Html, Selector};
use url::Url;

/// Which desk an address is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContactKind {
    /// An abuse desk.
    Abuse,
    /// Copyright complaints (a DMCA agent, 版权投诉).
    Copyright,
    /// Anything else (webmaster, 联系我们).
    General,
}

/// An e-mail address found on a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundEmail {
    /// The address, lower-case.
    pub address: String,
    /// Which desk it is.
    pub kind: ContactKind,
}

/// What a page says about whom to contact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageContacts {
    /// Addresses, each once, in page order.
    pub emails: Vec<FoundEmail>,
    /// The ICP filing number shown, without spaces (`京ICP备12345678号-1`).
    pub icp_number: Option<String>,
}

/// Words in a URL path (lower-case) of a page about contacting the site.
const CONTACT_PATH_WORDS: &[&str] = &[
    "contact",
    "lianxi",
    "about",
    "dmca",
    "copyright",
    "banquan",
    "jubao",
    "tousu",
    "report",
    "abuse",
    "legal",
    "shengming",
    "disclaimer",
];

/// Words in a title of a page about contacting the site.
const CONTACT_TITLE_WORDS: &[&str] = &[
    "联系",
    "举报",
    "投诉",
    "版权",
    "侵权",
    "关于我们",
    "免责",
    "声明",
    "contact",
    "dmca",
    "copyright",
    "abuse",
    "report",
    "legal",
];

/// Words of a page, or a local part, about copyright complaints.
const COPYRIGHT_WORDS: &[&str] = &[
    "dmca",
    "copyright",
    "legal",
    "banquan",
    "jubao",
    "tousu",
    "infring",
    "版权",
    "侵权",
    "举报",
    "投诉",
];

/// Whether the page at `url` titled `title` is about contacting its site, so that addresses
/// written in its text are contacts (elsewhere they may be anyone's).
pub fn is_contact_page(url: &Url, title: Option<&str>) -> bool {
    let path = url.path().to_ascii_lowercase();
    let title = title.unwrap_or("").to_lowercase();
    CONTACT_PATH_WORDS.iter().any(|w| path.contains(w))
        || CONTACT_TITLE_WORDS.iter().any(|w| title.contains(w))
}

/// Whether `body` (raw bytes, any ASCII-compatible encoding) may hold a contact: a `mailto:`
/// link or an ICP number. Lets a crawl skip decoding a page twice when it holds neither.
pub fn may_hold_contacts(body: &[u8]) -> bool {
    let has = |needle: &[u8]| {
        body.windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
    };
    has(b"mailto:") || has(b"ICP")
}

static ICP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"([京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼])\s*ICP\s*([备证])\s*(\d{5,12})\s*号(?:\s*-\s*(\d{1,3}))?",
    )
    .expect("valid ICP pattern")
});

static TEXT_EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)([a-z0-9][a-z0-9._%+-]{0,63})\s*(?:@|＠|\[at\]|\(at\)|#)\s*([a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,24})\b",
    )
    .expect("valid address pattern")
});

static LINKS: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("a[href]").expect("valid selector"));

/// The target of a `mailto:` link in raw HTML (quoted or not).
static MAILTO_HREF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)href\s*=\s*["']?\s*mailto:([^"'\s>]+)"#).expect("valid mailto pattern")
});

/// The few character references an address in an attribute may use (`&#64;` for `@`).
fn decode_entities(text: &str) -> String {
    text.replace("&#64;", "@")
        .replace("&#x40;", "@")
        .replace("&commat;", "@")
        .replace("&amp;", "&")
}

/// File extensions that make `logo@2x.png` look like an address.
const NOT_DOMAINS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "svg", "css", "js", "ico",
];

/// An address as found (`mailto:` target or text), cleaned and checked; `None` when it is not
/// one.
fn clean_address(local: &str, domain: &str) -> Option<String> {
    let local = local.trim().trim_matches('.').to_ascii_lowercase();
    let domain = domain.trim().trim_matches('.').to_ascii_lowercase();
    let tld = domain.rsplit('.').next()?;
    if local.is_empty()
        || domain.is_empty()
        || !domain.contains('.')
        || NOT_DOMAINS.contains(&tld)
        || !tld.chars().all(|c| c.is_ascii_alphabetic())
    {
        return None;
    }
    Some(format!("{local}@{domain}"))
}

/// The address of a `mailto:` link, without its query.
fn mailto_address(href: &str) -> Option<String> {
    let rest = href.trim();
    let rest = rest
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("mailto:"))
        .map(|_| &rest[7..])?;
    let first = rest.split(['?', ',']).next()?.trim();
    let decoded = percent_decode(first);
    let (local, domain) = decoded.rsplit_once('@')?;
    if local.contains(char::is_whitespace) || domain.contains(char::is_whitespace) {
        return None;
    }
    clean_address(local, domain)
}

/// `%40` and friends in a `mailto:` target, decoded (invalid sequences kept as written).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = text
                .get(i + 1..i + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Which desk `address` is, found on a page that is (`copyright_page`) or is not about
/// copyright complaints.
fn kind_of(address: &str, copyright_page: bool) -> ContactKind {
    let local = address.split('@').next().unwrap_or("");
    if local.contains("abuse") {
        ContactKind::Abuse
    } else if copyright_page || COPYRIGHT_WORDS.iter().any(|w| local.contains(w)) {
        ContactKind::Copyright
    } else {
        ContactKind::General
    }
}

/// The ICP filing number in `html`, if any, without spaces.
pub fn find_icp_number(html: &str) -> Option<String> {
    let found = ICP.captures(html)?;
    let mut number = format!("{}ICP{}{}号", &found[1], &found[2], &found[3]);
    if let Some(suffix) = found.get(4) {
        number.push('-');
        number.push_str(suffix.as_str());
    }
    Some(number)
}

/// The contacts the page at `url`, titled `title`, publishes in `html` (see the module
/// documentation for what counts).
pub fn find_contacts(url: &Url, title: Option<&str>, html: &str) -> PageContacts {
    let contact_page = is_contact_page(url, title);
    let about_copyright = {
        let words = format!(
            "{} {}",
            url.path().to_ascii_lowercase(),
            title.unwrap_or("").to_lowercase()
        );
        COPYRIGHT_WORDS.iter().any(|w| words.contains(w))
    };
    let mut addresses: Vec<String> = Vec::new();
    let mut add = |address: String| {
        if !addresses.contains(&address) {
            addresses.push(address);
        }
    };
    if contact_page {
        // A contact page is rare: parse it, for its links and the text a reader sees.
        let document = Html::parse_document(html);
        for link in document.select(&LINKS) {
            if let Some(address) = link.value().attr("href").and_then(mailto_address) {
                add(address);
            }
        }
        let text: String = document.root_element().text().collect::<Vec<_>>().join(" ");
        for found in TEXT_EMAIL.captures_iter(&text) {
            if let Some(address) = clean_address(&found[1], &found[2]) {
                add(address);
            }
        }
    } else {
        // Any other page (a footer link on every chapter): a pattern over the HTML, so that a
        // crawl does not parse each page a second time.
        for found in MAILTO_HREF.captures_iter(html) {
            let target = format!("mailto:{}", decode_entities(&found[1]));
            if let Some(address) = mailto_address(&target) {
                add(address);
            }
        }
    }
    PageContacts {
        emails: addresses
            .into_iter()
            .map(|address| FoundEmail {
                kind: kind_of(&address, about_copyright),
                address,
            })
            .collect(),
        icp_number: find_icp_number(html),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(path: &str) -> Url {
        Url::parse(&format!("https://pirate.example{path}")).unwrap()
    }

    fn addresses(found: &PageContacts) -> Vec<(&str, ContactKind)> {
        found
            .emails
            .iter()
            .map(|e| (e.address.as_str(), e.kind))
            .collect()
    }

    #[test]
    fn a_contact_page_gives_its_mailto_links_and_its_disguised_addresses() {
        let html = r#"<html><head><title>联系我们 - 笔趣阁</title></head><body>
            <p>版权问题请联系 <a href="mailto:DMCA%40Pirate.Example?subject=takedown">邮件</a></p>
            <p>商务合作：bd#pirate.example（请将#换成@）</p>
            <p>举报：abuse ＠ host.example</p>
            <p>webmaster[at]pirate.example</p>
            <img src="logo@2x.png">
            <div class="footer">Copyright © 笔趣阁 京ICP备 12345678号-2</div>
            </body></html>"#;
        let found = find_contacts(&url("/about.html"), Some("联系我们 - 笔趣阁"), html);
        assert_eq!(
            addresses(&found),
            [
                ("dmca@pirate.example", ContactKind::Copyright),
                ("bd@pirate.example", ContactKind::General),
                ("abuse@host.example", ContactKind::Abuse),
                ("webmaster@pirate.example", ContactKind::General),
            ]
        );
        assert_eq!(found.icp_number.as_deref(), Some("京ICP备12345678号-2"));
    }

    #[test]
    fn a_copyright_page_makes_its_addresses_copyright_desks() {
        let html = "<title>DMCA</title><p>Send notices to agent@pirate.example</p>";
        let found = find_contacts(&url("/dmca"), Some("DMCA"), html);
        assert_eq!(
            addresses(&found),
            [("agent@pirate.example", ContactKind::Copyright)]
        );
    }

    #[test]
    fn a_chapter_gives_only_its_mailto_links_and_its_footers_icp_number() {
        let html = r#"<title>第一章 雨夜来客</title><p>读者 reader@qq.com 说：好看</p>
            <footer><a href="mailto:service@pirate.example">联系</a> 粤ICP证030173号</footer>"#;
        let found = find_contacts(&url("/book/1/1.html"), Some("第一章 雨夜来客"), html);
        assert_eq!(
            addresses(&found),
            [("service@pirate.example", ContactKind::General)]
        );
        assert_eq!(found.icp_number.as_deref(), Some("粤ICP证030173号"));
        let entity = "<footer><a href='mailto:Help&#64;Pirate.Example?subject=hi'>x</a></footer>";
        assert_eq!(
            addresses(&find_contacts(&url("/book/2.html"), None, entity)),
            [("help@pirate.example", ContactKind::General)]
        );
        assert!(is_contact_page(&url("/lianxi/"), None));
        assert!(!is_contact_page(&url("/book/1.html"), Some("第一章")));
    }

    #[test]
    fn pages_without_contacts_give_nothing() {
        let html = "<title>首页</title><p>ICP is a protocol; mail me maybe</p>";
        assert_eq!(
            find_contacts(&url("/"), Some("首页"), html),
            PageContacts::default()
        );
        assert!(may_hold_contacts(b"<a href=\"MAILTO:x@y.z\">"));
        assert!(may_hold_contacts("京ICP备1号".as_bytes()));
        assert!(!may_hold_contacts(b"<p>nothing</p>"));
    }
}
