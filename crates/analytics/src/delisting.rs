//! What a notice becomes for those who are not the site's operator (issue 40): URL lists for
//! search engines' removal tools, and an abuse report for the site's host or CDN.
//!
//! **Search engines** delist URLs from their results; they do not remove the pages. Each
//! takes the URLs in a web form (`docs/operations.md`, "Exports for search engines and
//! hosts", names the forms and the sources of what is said here about them):
//!
//! * [`Engine::Google`]: Google's copyright removal form takes the infringing URLs in one
//!   field, one URL per line.
//! * [`Engine::Bing`]: Bing's copyright content removal form (sign-in required; Bing also
//!   takes notices by e-mail and, for high-volume submitters, an API) takes a list of
//!   infringing URLs; one URL per line is what is written. How its field separates URLs could
//!   not be confirmed from any authoritative source.
//! * [`Engine::Baidu`]: Baidu's complaint forms take the infringing links of a complaint; a
//!   description of Baidu's original-content report says at most 10 per report, so the URLs
//!   are written in groups of at most [`BAIDU_GROUP`], separated by an empty line. Each line
//!   is one complete URL with its scheme and nothing else, as Baidu's own rules for URL list
//!   files (sitemap and link submission `.txt`) require. Neither the separator nor the limit
//!   of the general complaint form could be confirmed.
//!
//! Every URL of every listed copy is written, its aliases (other URLs of the same page)
//! included, each once, in the notice's order: a search engine delists URLs, not pages.
//!
//! **The abuse report** ([`render_abuse`]) asks a host or CDN to act on its customer's site: the
//! infringing URLs with their aliases, the host's IP addresses when known, and per URL the
//! SHA-256 of its evidence package's manifest and of the page text. Like a notice it is refused,
//! naming each, when an element it requires is missing ([`abuse_missing_elements`]).

use askama::Template;
use serde::Serialize;

use crate::AnalyticsError;
use crate::notice::{Claimant, NoticeItem};

/// URLs per group of a Baidu list.
pub const BAIDU_GROUP: usize = 10;

/// A search engine whose removal form a URL list is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// Google Search's copyright removal request.
    Google,
    /// Bing's content removal (copyright) request.
    Bing,
    /// Baidu's infringement complaint (投诉).
    Baidu,
}

/// Every URL of `items`: each copy's URL then its aliases, each once, in order.
pub fn notice_urls(items: &[NoticeItem]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items
        .iter()
        .flat_map(|item| std::iter::once(&item.url).chain(&item.aliases))
        .filter(|url| seen.insert(url.as_str()))
        .cloned()
        .collect()
}

/// `urls` as `engine`'s form takes them (see the module documentation), ending in a newline.
pub fn url_list(engine: Engine, urls: &[String]) -> String {
    let mut out = String::new();
    for (i, url) in urls.iter().enumerate() {
        if engine == Engine::Baidu && i > 0 && i % BAIDU_GROUP == 0 {
            out.push('\n');
        }
        out.push_str(url);
        out.push('\n');
    }
    out
}

/// Everything an abuse report is written from.
#[derive(Debug, Clone, Copy)]
pub struct AbuseInput<'a> {
    /// `zh` or `en` (anything else is English).
    pub lang: &'a str,
    /// Who complains.
    pub claimant: Claimant<'a>,
    /// The site whose host is addressed.
    pub site: &'a str,
    /// The notice it follows.
    pub notice_id: i64,
    /// When the notice was sent to the site, if it was (RFC 3339).
    pub notice_sent: Option<&'a str>,
    /// Its date, `YYYY-MM-DD`.
    pub date: &'a str,
    /// The copies.
    pub items: &'a [NoticeItem],
    /// The host's IP addresses, when known.
    pub ips: &'a [String],
}

/// What `input` lacks of what an abuse report requires: the complainant's legal name and a
/// contact (e-mail or phone), at least one infringing URL, and each URL's evidence package
/// SHA-256. Empty when it can be written.
pub fn abuse_missing_elements(input: &AbuseInput<'_>) -> Vec<String> {
    let profile = input.claimant.profile;
    let given = |field: fn(&copytrace_store::RightsHolderProfile) -> &Option<String>| {
        profile.is_some_and(|p| field(p).as_deref().is_some_and(|v| !v.trim().is_empty()))
    };
    let mut missing = Vec::new();
    if !given(|p| &p.legal_name) {
        missing.push("complainant's legal name".to_owned());
    }
    if !given(|p| &p.email) && !given(|p| &p.phone) {
        missing.push("complainant's contact (e-mail or phone)".to_owned());
    }
    if input.items.is_empty() {
        missing.push("infringing URLs".to_owned());
    }
    for item in input
        .items
        .iter()
        .filter(|i| i.manifest_sha256.as_deref().is_none_or(str::is_empty))
    {
        missing.push(format!("evidence package SHA-256 for {}", item.url));
    }
    missing
}

#[derive(Template)]
#[template(path = "notices/abuse.en.txt")]
struct AbuseEn<'a> {
    input: &'a AbuseInput<'a>,
    holder: &'a str,
    legal_name: String,
    email: String,
    phone: String,
    address: String,
    signature: String,
}

#[derive(Template)]
#[template(path = "notices/abuse.zh.txt")]
struct AbuseZh<'a> {
    input: &'a AbuseInput<'a>,
    holder: &'a str,
    legal_name: String,
    email: String,
    phone: String,
    address: String,
    signature: String,
}

/// Renders the abuse report of `input`; refused ([`AnalyticsError::MissingElements`]) when it
/// lacks an element it requires ([`abuse_missing_elements`]).
pub fn render_abuse(input: &AbuseInput<'_>) -> Result<String, AnalyticsError> {
    let missing = abuse_missing_elements(input);
    if !missing.is_empty() {
        return Err(AnalyticsError::MissingElements {
            law: "an abuse report",
            missing,
        });
    }
    let field = |f: fn(&copytrace_store::RightsHolderProfile) -> &Option<String>| {
        input
            .claimant
            .profile
            .and_then(|p| f(p).as_deref())
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    let (legal_name, email, phone, address, signature) = (
        field(|p| &p.legal_name),
        field(|p| &p.email),
        field(|p| &p.phone),
        field(|p| &p.address),
        field(|p| &p.signature),
    );
    let holder = input.claimant.holder;
    Ok(if input.lang == "zh" {
        AbuseZh {
            input,
            holder,
            legal_name,
            email,
            phone,
            address,
            signature,
        }
        .render()?
    } else {
        AbuseEn {
            input,
            holder,
            legal_name,
            email,
            phone,
            address,
            signature,
        }
        .render()?
    })
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use copytrace_store::RightsHolderProfile;

    use super::*;

    fn item(url: &str, aliases: &[&str]) -> NoticeItem {
        NoticeItem {
            url: url.to_owned(),
            aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
            work_title: "星辰旅人".to_owned(),
            work_external_id: "xingchen".to_owned(),
            chapters: String::new(),
            excerpts: vec!["落霞镇坐落在青岚山脚下".to_owned()],
            first_seen: "2026-11-01T08:00:00Z".to_owned(),
            copied_chars: 2_400,
            text_sha256: "a".repeat(64),
            manifest_sha256: Some("b".repeat(64)),
        }
    }

    fn profile() -> RightsHolderProfile {
        RightsHolderProfile {
            rights_holder_id: 1,
            legal_name: Some("上海阅文信息技术有限公司".to_owned()),
            address: Some("上海市浦东新区碧波路690号".to_owned()),
            email: Some("legal@yuewen.example".to_owned()),
            phone: None,
            agent_name: None,
            agent_role: None,
            agent_contact: None,
            signature: Some("/s/ 张三".to_owned()),
            language: "zh".to_owned(),
            updated_at: Utc::now(),
        }
    }

    #[test]
    fn every_url_and_alias_is_listed_once_in_each_engines_form() {
        let items = [
            item(
                "https://pirate.example/1.html",
                &["https://m.pirate.example/1.html?from=hot"],
            ),
            item(
                "https://pirate.example/2.html",
                &["https://pirate.example/1.html"],
            ),
        ];
        let urls = notice_urls(&items);
        assert_eq!(
            urls,
            [
                "https://pirate.example/1.html",
                "https://m.pirate.example/1.html?from=hot",
                "https://pirate.example/2.html",
            ]
        );
        let lines = "https://pirate.example/1.html\nhttps://m.pirate.example/1.html?from=hot\n\
                     https://pirate.example/2.html\n";
        assert_eq!(url_list(Engine::Google, &urls), lines);
        assert_eq!(url_list(Engine::Bing, &urls), lines);
        // Baidu: groups of ten, an empty line between them.
        let many: Vec<String> = (0..23).map(|i| format!("https://p.example/{i}")).collect();
        let baidu = url_list(Engine::Baidu, &many);
        let groups: Vec<usize> = baidu
            .split("\n\n")
            .map(|g| g.lines().filter(|l| !l.is_empty()).count())
            .collect();
        assert_eq!(groups, [10, 10, 3]);
    }

    fn input<'a>(
        lang: &'a str,
        profile: Option<&'a RightsHolderProfile>,
        items: &'a [NoticeItem],
        ips: &'a [String],
    ) -> AbuseInput<'a> {
        AbuseInput {
            lang,
            claimant: Claimant {
                holder: "Yuewen",
                profile,
            },
            site: "pirate.example",
            notice_id: 3,
            notice_sent: Some("2026-11-02T08:00:00Z"),
            date: "2026-11-20",
            items,
            ips,
        }
    }

    #[test]
    fn the_abuse_report_gives_urls_aliases_ips_and_hashes_in_both_languages() {
        let profile = profile();
        let items = [item(
            "https://pirate.example/1.html",
            &["https://m.pirate.example/1.html?from=hot"],
        )];
        let ips = vec!["203.0.113.7".to_owned()];
        for lang in ["zh", "en"] {
            let text = render_abuse(&input(lang, Some(&profile), &items, &ips)).unwrap();
            for needle in [
                "pirate.example",
                "https://pirate.example/1.html",
                "https://m.pirate.example/1.html?from=hot",
                "203.0.113.7",
                &"a".repeat(64),
                &"b".repeat(64),
                "上海阅文信息技术有限公司",
                "legal@yuewen.example",
            ] {
                assert!(text.contains(needle), "{lang} lacks {needle}:\n{text}");
            }
        }
        let zh = render_abuse(&input("zh", Some(&profile), &items, &[])).unwrap();
        assert!(zh.contains("滥用") && zh.contains("未知"), "{zh}");
        let en = render_abuse(&input("en", Some(&profile), &items, &[])).unwrap();
        assert!(en.contains("abuse") && en.contains("not known"), "{en}");
    }

    #[test]
    fn an_abuse_report_lacking_an_element_is_refused_naming_it() {
        let mut profile = profile();
        profile.email = None;
        let mut items = [item("https://pirate.example/1.html", &[])];
        items[0].manifest_sha256 = None;
        let error = render_abuse(&input("en", Some(&profile), &items, &[])).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("contact (e-mail or phone)"), "{message}");
        assert!(
            message.contains("evidence package SHA-256 for https://pirate.example/1.html"),
            "{message}"
        );
        assert!(!message.contains("legal name"), "{message}");
        let nothing = abuse_missing_elements(&input("zh", None, &[], &[]));
        assert_eq!(nothing.len(), 3, "{nothing:?}");
    }
}
