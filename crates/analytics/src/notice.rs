//! Takedown notices that meet the law they are sent under (issue 40), rendered from the
//! editable templates in `web/templates/notices/` (compiled into the binary by askama):
//!
//! * [`NoticeLaw::Cn`], in Chinese: 《信息网络传播权保护条例》第十四条 asks for the rights
//!   holder's name, contact and address (一), the works and the network addresses to remove or
//!   unlink (二), and preliminary proof of infringement (三);
//! * [`NoticeLaw::Us`], in English: 17 U.S.C. §512(c)(3)(A) asks for (i) a physical or
//!   electronic signature of a person authorised to act, (ii) identification of the
//!   copyrighted work, (iii) identification of the infringing material and where it is, (iv)
//!   contact information of the complaining party, (v) a good-faith statement and (vi) a
//!   statement that the notice is accurate and, under penalty of perjury, that the signer is
//!   authorised.
//!
//! Each law's elements are listed once ([`NoticeLaw::elements`]), each with the heading the
//! template prints it under, so a test (or a reader) can check a notice element by element.
//! A notice that would lack one is refused before it is written ([`missing_elements`], and
//! [`render_notice`] itself), naming what is missing: an incomplete notice is not a valid
//! notice under either law, and the host may ignore it without losing its safe harbour.
//!
//! The preliminary proof of each URL is what a host can check without trusting Copytrace:
//! when the copy was first seen, the copied passages (short), and SHA-256 hashes — of the
//! evidence package's `manifest.json`, which lists the SHA-256 of every file of the package,
//! and of the page text the passages are quoted from. (Notices once gave an XXH3 hash of the
//! page text: fast, but not a cryptographic hash, so it proved nothing.)
//!
//! The templates are plain text (askama escapes nothing in `.txt` templates): a notice is sent
//! as text, and whatever shows it in HTML escapes it there.

use askama::Template;
use copytrace_store::RightsHolderProfile;
use serde::Serialize;

use crate::AnalyticsError;

/// The law a notice is written under; it fixes the template and the language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLaw {
    /// China: 《信息网络传播权保护条例》第十四条, in Chinese.
    Cn,
    /// United States: 17 U.S.C. §512(c)(3), in English.
    Us,
}

/// One thing a law requires a notice to contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Element {
    /// Its name, as an error naming a missing element says it.
    pub name: &'static str,
    /// The heading the template prints it under.
    pub heading: &'static str,
}

const CN_ELEMENTS: &[Element] = &[
    Element {
        name: "权利人的姓名（名称）、联系方式和地址 (rights holder's name, contact and address)",
        heading: "一、权利人的名称、联系方式和地址",
    },
    Element {
        name: "要求删除或者断开链接的侵权作品的名称和网络地址 (works and URLs to remove)",
        heading: "二、要求删除或者断开链接的侵权作品的名称和网络地址",
    },
    Element {
        name: "构成侵权的初步证明材料 (preliminary proof of infringement)",
        heading: "三、构成侵权的初步证明材料",
    },
];

const US_ELEMENTS: &[Element] = &[
    Element {
        name: "signature of a person authorized to act (§512(c)(3)(A)(i))",
        heading: "(i) Signature",
    },
    Element {
        name: "identification of the copyrighted work (§512(c)(3)(A)(ii))",
        heading: "(ii) Copyrighted work(s) claimed to be infringed",
    },
    Element {
        name: "identification of the infringing material and its location (§512(c)(3)(A)(iii))",
        heading: "(iii) Infringing material and its location",
    },
    Element {
        name: "contact information of the complaining party (§512(c)(3)(A)(iv))",
        heading: "(iv) Contact information of the complaining party",
    },
    Element {
        name: "good-faith statement (§512(c)(3)(A)(v))",
        heading: "(v) Statement of good faith",
    },
    Element {
        name: "statement of accuracy and authority under penalty of perjury (§512(c)(3)(A)(vi))",
        heading: "(vi) Statement of accuracy and authority",
    },
];

impl NoticeLaw {
    /// `cn` or `us`, as the command line names it.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeLaw::Cn => "cn",
            NoticeLaw::Us => "us",
        }
    }

    /// `cn` or `us` (any case).
    pub fn parse(input: &str) -> Option<Self> {
        match input.trim().to_ascii_lowercase().as_str() {
            "cn" => Some(NoticeLaw::Cn),
            "us" => Some(NoticeLaw::Us),
            _ => None,
        }
    }

    /// The language its notices are written in, `zh` or `en` (as notices are stored).
    pub fn language(self) -> &'static str {
        match self {
            NoticeLaw::Cn => "zh",
            NoticeLaw::Us => "en",
        }
    }

    /// The law whose notices are in `language` (`zh` → cn, `en` → us): how a holder's default
    /// notice language picks the template.
    pub fn for_language(language: &str) -> Option<Self> {
        match language {
            "zh" => Some(NoticeLaw::Cn),
            "en" => Some(NoticeLaw::Us),
            _ => None,
        }
    }

    /// The law's citation, as errors name it.
    pub fn citation(self) -> &'static str {
        match self {
            NoticeLaw::Cn => "《信息网络传播权保护条例》第十四条",
            NoticeLaw::Us => "17 U.S.C. §512(c)(3)",
        }
    }

    /// Every element the law requires, in the order the notice gives them.
    pub fn elements(self) -> &'static [Element] {
        match self {
            NoticeLaw::Cn => CN_ELEMENTS,
            NoticeLaw::Us => US_ELEMENTS,
        }
    }
}

/// Who sends the notice: the rights holder's name in Copytrace and its profile (`None` when it
/// has none, which no law accepts).
#[derive(Debug, Clone, Copy)]
pub struct Claimant<'a> {
    /// The holder's name in Copytrace (shown beside the legal name when they differ).
    pub holder: &'a str,
    /// Its profile.
    pub profile: Option<&'a RightsHolderProfile>,
}

/// One infringing page × work a notice lists, with its preliminary proof.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoticeItem {
    /// The infringing page.
    pub url: String,
    /// Other URLs of the same page (the same text on the same site), each listed so the host
    /// takes every copy down, not one URL of it.
    pub aliases: Vec<String>,
    /// The work's title.
    pub work_title: String,
    /// The rights holder's identifier of the work.
    pub work_external_id: String,
    /// The chapters copied, `7:第七章 (98%)`, or empty.
    pub chapters: String,
    /// The copied passages as the page has them, each cut short ([`excerpt`]).
    pub excerpts: Vec<String>,
    /// When the copy was first seen (RFC 3339, UTC).
    pub first_seen: String,
    /// Characters verified as copied.
    pub copied_chars: u32,
    /// SHA-256 of the page text the passages are quoted from (the package's `page.txt`).
    pub text_sha256: String,
    /// SHA-256 of the `manifest.json` of the match's evidence package, when one was written.
    pub manifest_sha256: Option<String>,
}

impl NoticeItem {
    /// Whether it carries the preliminary proof a notice gives per URL: a first-seen time, a
    /// copied passage and the evidence package's SHA-256.
    fn has_proof(&self) -> bool {
        !self.first_seen.is_empty()
            && self.excerpts.iter().any(|e| !e.is_empty())
            && self
                .manifest_sha256
                .as_deref()
                .is_some_and(|h| !h.is_empty())
    }
}

/// Everything a notice is written from.
#[derive(Debug, Clone, Copy)]
pub struct NoticeInput<'a> {
    /// The law, which fixes the template.
    pub law: NoticeLaw,
    /// Who sends it.
    pub claimant: Claimant<'a>,
    /// The site it is addressed to.
    pub site: &'a str,
    /// Its date, `YYYY-MM-DD`.
    pub date: &'a str,
    /// The copies it lists (at least one).
    pub items: &'a [NoticeItem],
}

/// What `input` lacks of what its law requires, each named (with the profile field or proof
/// that would supply it); empty when the notice can be written.
pub fn missing_elements(input: &NoticeInput<'_>) -> Vec<String> {
    let profile = input.claimant.profile;
    let given = |field: fn(&RightsHolderProfile) -> &Option<String>| {
        profile.is_some_and(|p| field(p).as_deref().is_some_and(|v| !v.trim().is_empty()))
    };
    let legal_name = given(|p| &p.legal_name);
    let address = given(|p| &p.address);
    let email = given(|p| &p.email);
    let phone = given(|p| &p.phone);
    let signature = given(|p| &p.signature);
    let mut missing = Vec::new();
    match input.law {
        NoticeLaw::Cn => {
            let [holder, works, proof] = [0, 1, 2].map(|i| CN_ELEMENTS[i].name);
            if !legal_name {
                missing.push(format!("{holder}: legal name (名称)"));
            }
            if !email && !phone {
                missing.push(format!("{holder}: contact (联系方式: email or phone)"));
            }
            if !address {
                missing.push(format!("{holder}: address (地址)"));
            }
            if input.items.is_empty() {
                missing.push(works.to_owned());
            }
            for item in input.items.iter().filter(|i| !i.has_proof()) {
                missing.push(format!("{proof}: for {} ({})", item.url, proof_gap(item)));
            }
        }
        NoticeLaw::Us => {
            let [signed, work, material, contact] = [0, 1, 2, 3].map(|i| US_ELEMENTS[i].name);
            if !signature {
                missing.push(format!("{signed}: signature"));
            }
            if input.items.is_empty() {
                missing.push(work.to_owned());
                missing.push(material.to_owned());
            }
            if !legal_name {
                missing.push(format!("{contact}: legal name"));
            }
            if !address && !email && !phone {
                missing.push(format!("{contact}: address, phone or email"));
            }
        }
    }
    missing
}

/// What of an item's proof is missing, in words.
fn proof_gap(item: &NoticeItem) -> String {
    let mut gaps = Vec::new();
    if item.first_seen.is_empty() {
        gaps.push("first-seen time");
    }
    if !item.excerpts.iter().any(|e| !e.is_empty()) {
        gaps.push("copied passage");
    }
    if item.manifest_sha256.as_deref().is_none_or(str::is_empty) {
        gaps.push("evidence package SHA-256");
    }
    gaps.join(", ")
}

/// A profile field for a template: the value, or empty.
fn field(
    profile: Option<&RightsHolderProfile>,
    f: fn(&RightsHolderProfile) -> &Option<String>,
) -> String {
    profile
        .and_then(|p| f(p).as_deref())
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The claimant as the templates print it.
struct Party {
    holder: String,
    legal_name: String,
    address: String,
    email: String,
    phone: String,
    agent_name: String,
    agent_role: String,
    agent_contact: String,
    signature: String,
}

impl Party {
    fn of(claimant: Claimant<'_>) -> Self {
        let p = claimant.profile;
        Party {
            holder: claimant.holder.to_owned(),
            legal_name: field(p, |p| &p.legal_name),
            address: field(p, |p| &p.address),
            email: field(p, |p| &p.email),
            phone: field(p, |p| &p.phone),
            agent_name: field(p, |p| &p.agent_name),
            agent_role: field(p, |p| &p.agent_role),
            agent_contact: field(p, |p| &p.agent_contact),
            signature: field(p, |p| &p.signature),
        }
    }

    /// Whether the display name says something the legal name does not.
    fn shows_holder(&self) -> bool {
        self.holder != self.legal_name
    }
}

/// A work a notice names, once however many URLs copy it.
struct WorkLine {
    title: String,
    external_id: String,
    urls: usize,
}

fn works_of(items: &[NoticeItem]) -> Vec<WorkLine> {
    let mut works: Vec<WorkLine> = Vec::new();
    for item in items {
        match works
            .iter_mut()
            .find(|w| w.title == item.work_title && w.external_id == item.work_external_id)
        {
            Some(work) => work.urls += 1,
            None => works.push(WorkLine {
                title: item.work_title.clone(),
                external_id: item.work_external_id.clone(),
                urls: 1,
            }),
        }
    }
    works
}

#[derive(Template)]
#[template(path = "notices/notice.cn.txt")]
struct CnNotice<'a> {
    party: &'a Party,
    site: &'a str,
    date: &'a str,
    works: &'a [WorkLine],
    items: &'a [NoticeItem],
    elements: &'a [Element],
}

#[derive(Template)]
#[template(path = "notices/notice.us.txt")]
struct UsNotice<'a> {
    party: &'a Party,
    site: &'a str,
    date: &'a str,
    works: &'a [WorkLine],
    items: &'a [NoticeItem],
    elements: &'a [Element],
    /// Whether every URL has an evidence package (the notice only then says they are kept).
    all_packaged: bool,
}

/// Renders the notice `input` describes; refused ([`AnalyticsError::MissingElements`]) when
/// it would lack an element its law requires (see [`missing_elements`]).
pub fn render_notice(input: &NoticeInput<'_>) -> Result<String, AnalyticsError> {
    let missing = missing_elements(input);
    if !missing.is_empty() {
        return Err(AnalyticsError::MissingElements {
            law: input.law.citation(),
            missing,
        });
    }
    let party = Party::of(input.claimant);
    let works = works_of(input.items);
    Ok(match input.law {
        NoticeLaw::Cn => CnNotice {
            party: &party,
            site: input.site,
            date: input.date,
            works: &works,
            items: input.items,
            elements: CN_ELEMENTS,
        }
        .render()?,
        NoticeLaw::Us => UsNotice {
            party: &party,
            site: input.site,
            date: input.date,
            works: &works,
            items: input.items,
            elements: US_ELEMENTS,
            all_packaged: input.items.iter().all(|i| i.manifest_sha256.is_some()),
        }
        .render()?,
    })
}

/// The first `chars` characters of `text`, with `…` when cut.
pub fn excerpt(text: &str, chars: usize) -> String {
    let mut cut: String = text.chars().take(chars).collect();
    if text.chars().nth(chars).is_some() {
        cut.push('…');
    }
    cut.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;

    fn item(url: &str) -> NoticeItem {
        NoticeItem {
            url: url.to_owned(),
            aliases: Vec::new(),
            work_title: "星辰旅人".to_owned(),
            work_external_id: "xingchen".to_owned(),
            chapters: "7:第七章 雨夜 (98%)".to_owned(),
            excerpts: vec![
                "落霞镇坐落在青岚山脚下".to_owned(),
                "雨夜里灯火未眠".to_owned(),
            ],
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
            phone: Some("+86 21 1234 5678".to_owned()),
            agent_name: Some("张三".to_owned()),
            agent_role: Some("法务经理".to_owned()),
            agent_contact: Some("zhangsan@yuewen.example".to_owned()),
            signature: Some("/s/ 张三".to_owned()),
            language: "zh".to_owned(),
            updated_at: Utc::now(),
        }
    }

    fn items() -> Vec<NoticeItem> {
        let mut with_alias = item("https://pirate.example/8.html");
        with_alias.aliases = vec!["https://m.pirate.example/8.html?from=hot".to_owned()];
        with_alias.manifest_sha256 = Some("c".repeat(64));
        vec![item("https://pirate.example/7.html"), with_alias]
    }

    fn render(
        law: NoticeLaw,
        profile: &RightsHolderProfile,
        items: &[NoticeItem],
    ) -> Result<String, AnalyticsError> {
        render_notice(&NoticeInput {
            law,
            claimant: Claimant {
                holder: "Yuewen",
                profile: Some(profile),
            },
            site: "pirate.example",
            date: "2026-11-27",
            items,
        })
    }

    /// The text between `heading` and the next element's heading (or the end).
    fn section<'t>(text: &'t str, law: NoticeLaw, heading: &str) -> &'t str {
        let start = text
            .find(heading)
            .unwrap_or_else(|| panic!("no {heading:?} in\n{text}"));
        let rest = &text[start + heading.len()..];
        let end = law
            .elements()
            .iter()
            .filter_map(|e| rest.find(e.heading))
            .min()
            .unwrap_or(rest.len());
        &rest[..end]
    }

    #[test]
    fn the_cn_notice_gives_every_element_of_article_14() {
        let text = render(NoticeLaw::Cn, &profile(), &items()).unwrap();
        assert!(
            text.contains("《信息网络传播权保护条例》第十四条"),
            "{text}"
        );
        let [holder, works, proof] = [0, 1, 2].map(|i| CN_ELEMENTS[i].heading);
        let holder = section(&text, NoticeLaw::Cn, holder);
        for needle in [
            "上海阅文信息技术有限公司",
            "上海市浦东新区碧波路690号",
            "legal@yuewen.example",
            "+86 21 1234 5678",
            "张三",
            "法务经理",
            "zhangsan@yuewen.example",
        ] {
            assert!(holder.contains(needle), "一 lacks {needle}:\n{holder}");
        }
        let works = section(&text, NoticeLaw::Cn, works);
        for needle in [
            "《星辰旅人》",
            "xingchen",
            "7:第七章 雨夜 (98%)",
            "https://pirate.example/7.html",
            "https://pirate.example/8.html",
            "https://m.pirate.example/8.html?from=hot",
        ] {
            assert!(works.contains(needle), "二 lacks {needle}:\n{works}");
        }
        let proof = section(&text, NoticeLaw::Cn, proof);
        for needle in [
            "https://pirate.example/7.html",
            "2026-11-01T08:00:00Z",
            "落霞镇坐落在青岚山脚下",
            "雨夜里灯火未眠",
            &"a".repeat(64),
            &"b".repeat(64),
            &"c".repeat(64),
            "SHA-256",
        ] {
            assert!(proof.contains(needle), "三 lacks {needle}:\n{proof}");
        }
        assert!(
            text.contains("/s/ 张三") && text.contains("2026-11-27"),
            "{text}"
        );
        assert!(!text.contains("XXH3"), "{text}");
    }

    #[test]
    fn the_us_notice_gives_every_element_of_section_512_c_3() {
        let mut profile = profile();
        profile.legal_name = Some("Yuewen Group Ltd.".to_owned());
        profile.agent_name = Some("Jane Doe".to_owned());
        profile.agent_role = Some("Legal Counsel".to_owned());
        profile.signature = Some("/s/ Jane Doe".to_owned());
        let text = render(NoticeLaw::Us, &profile, &items()).unwrap();
        assert!(text.contains("17 U.S.C. § 512(c)(3)"), "{text}");
        let expected: [&[&str]; 6] = [
            &[
                "/s/ Jane Doe",
                "Jane Doe",
                "Legal Counsel",
                "Yuewen Group Ltd.",
            ],
            &["\"星辰旅人\"", "xingchen"],
            &[
                "https://pirate.example/7.html",
                "https://pirate.example/8.html",
                "https://m.pirate.example/8.html?from=hot",
                "7:第七章 雨夜 (98%)",
                "2026-11-01T08:00:00Z",
                "落霞镇坐落在青岚山脚下",
                &"b".repeat(64),
                &"c".repeat(64),
            ],
            &[
                "Yuewen Group Ltd.",
                "上海市浦东新区碧波路690号",
                "+86 21 1234 5678",
                "legal@yuewen.example",
            ],
            &[
                "good faith belief",
                "not authorized by the copyright owner, its agent, or the law",
            ],
            &[
                "accurate",
                "under penalty of perjury",
                "authorized to act on behalf of the owner",
            ],
        ];
        for (element, needles) in US_ELEMENTS.iter().zip(expected) {
            let body = section(&text, NoticeLaw::Us, element.heading);
            for needle in needles {
                assert!(
                    body.contains(needle),
                    "{} lacks {needle}:\n{body}",
                    element.heading
                );
            }
        }
        assert!(!text.contains("XXH3"), "{text}");
    }

    #[test]
    fn a_cn_notice_without_an_address_or_proof_is_refused_naming_them() {
        let mut profile = profile();
        profile.address = None;
        let mut items = items();
        items[1].manifest_sha256 = None;
        let error = render(NoticeLaw::Cn, &profile, &items).unwrap_err();
        let message = error.to_string();
        assert!(matches!(error, AnalyticsError::MissingElements { .. }));
        assert!(message.contains("address (地址)"), "{message}");
        assert!(message.contains("第十四条"), "{message}");
        assert!(
            message.contains("https://pirate.example/8.html (evidence package SHA-256)"),
            "{message}"
        );
        assert!(!message.contains("pirate.example/7.html"), "{message}");
        assert!(!message.contains("legal name"), "{message}");
    }

    #[test]
    fn a_us_notice_without_a_signature_is_refused_naming_it() {
        let mut profile = profile();
        profile.signature = Some("  ".to_owned());
        let message = render(NoticeLaw::Us, &profile, &items())
            .unwrap_err()
            .to_string();
        assert!(message.contains("§512(c)(3)(A)(i)"), "{message}");
        assert!(message.contains("signature"), "{message}");
        assert!(!message.contains("contact information"), "{message}");
        // The same profile is complete under the Chinese law, which asks for no signature.
        render(NoticeLaw::Cn, &profile, &items()).unwrap();
        // §512(c)(3) asks for no proof: without packages, a signed notice gives the page
        // text's SHA-256 and does not claim packages it has not got.
        profile.signature = Some("/s/ 张三".to_owned());
        let mut unpackaged = items();
        for item in &mut unpackaged {
            item.manifest_sha256 = None;
        }
        let text = render(NoticeLaw::Us, &profile, &unpackaged).unwrap();
        assert!(
            text.contains(&format!("Page text SHA-256: {}", "a".repeat(64))),
            "{text}"
        );
        assert!(!text.contains("manifest"), "{text}");
    }

    #[test]
    fn a_holder_without_a_profile_is_told_every_missing_element() {
        for law in [NoticeLaw::Cn, NoticeLaw::Us] {
            let input = NoticeInput {
                law,
                claimant: Claimant {
                    holder: "Yuewen",
                    profile: None,
                },
                site: "pirate.example",
                date: "2026-11-27",
                items: &items(),
            };
            let missing = missing_elements(&input);
            assert_eq!(missing.len(), 3, "{law:?}: {missing:?}");
            assert!(render_notice(&input).is_err());
        }
    }

    #[test]
    fn laws_follow_the_holders_language() {
        assert_eq!(NoticeLaw::for_language("zh"), Some(NoticeLaw::Cn));
        assert_eq!(NoticeLaw::for_language("en"), Some(NoticeLaw::Us));
        assert_eq!(NoticeLaw::for_language("fr"), None);
        assert_eq!(NoticeLaw::parse(" US "), Some(NoticeLaw::Us));
        assert_eq!(NoticeLaw::Cn.language(), "zh");
    }

    #[test]
    fn excerpts_are_cut_on_characters() {
        assert_eq!(excerpt("落霞镇坐落在", 3), "落霞镇…");
        assert_eq!(excerpt("落霞镇", 3), "落霞镇");
        assert_eq!(excerpt("a\n  b", 10), "a b");
    }
}
