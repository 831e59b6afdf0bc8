//! Takedown notices: a Chinese 侵权通知 and an English DMCA-style notice, rendered from the
//! editable templates in `web/templates/notices/` (compiled into the binary by askama).
//!
//! The templates are plain text (askama escapes nothing in `.txt` templates): a notice is sent
//! as text, and whatever shows it in HTML escapes it there.

use askama::Template;
use serde::Serialize;

use crate::AnalyticsError;

/// The language of a notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLanguage {
    /// 侵权通知, citing the Copyright Law of the PRC and the Regulations on the Protection of
    /// the Right to Network Dissemination of Information (art. 14).
    Zh,
    /// A DMCA-style notice.
    En,
}

impl NoticeLanguage {
    /// `zh` or `en`, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeLanguage::Zh => "zh",
            NoticeLanguage::En => "en",
        }
    }
}

/// One infringing page × work a notice lists.
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
    /// The start of the first copied passage, as the page has it.
    pub excerpt: String,
    /// When the copy was first seen (RFC 3339, UTC).
    pub first_seen: String,
    /// Characters verified as copied.
    pub copied_chars: u32,
    /// Content hash of the page text the evidence points into.
    pub evidence_hash: String,
}

#[derive(Template)]
#[template(path = "notices/notice.zh.txt")]
struct ZhNotice<'a> {
    holder: &'a str,
    site: &'a str,
    date: &'a str,
    items: &'a [NoticeItem],
}

#[derive(Template)]
#[template(path = "notices/notice.en.txt")]
struct EnNotice<'a> {
    holder: &'a str,
    site: &'a str,
    date: &'a str,
    items: &'a [NoticeItem],
}

/// Renders the notice of `holder` to the operator of `site`, dated `date`, listing `items`.
pub fn render_notice(
    language: NoticeLanguage,
    holder: &str,
    site: &str,
    date: &str,
    items: &[NoticeItem],
) -> Result<String, AnalyticsError> {
    Ok(match language {
        NoticeLanguage::Zh => ZhNotice {
            holder,
            site,
            date,
            items,
        }
        .render()?,
        NoticeLanguage::En => EnNotice {
            holder,
            site,
            date,
            items,
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
    use super::*;

    fn item(url: &str) -> NoticeItem {
        NoticeItem {
            url: url.to_owned(),
            aliases: Vec::new(),
            work_title: "星辰旅人".to_owned(),
            work_external_id: "xingchen".to_owned(),
            chapters: "7:第七章 雨夜 (98%)".to_owned(),
            excerpt: "落霞镇坐落在青岚山脚下".to_owned(),
            first_seen: "2026-11-01T08:00:00Z".to_owned(),
            copied_chars: 2_400,
            evidence_hash: "0123abcd".to_owned(),
        }
    }

    #[test]
    fn both_notices_list_every_item_with_its_evidence() {
        let mut with_alias = item("https://pirate.example/8.html");
        with_alias.aliases = vec!["https://m.pirate.example/8.html?from=hot".to_owned()];
        let items = [item("https://pirate.example/7.html"), with_alias];
        for language in [NoticeLanguage::Zh, NoticeLanguage::En] {
            let text =
                render_notice(language, "Yuewen", "pirate.example", "2026-11-27", &items).unwrap();
            for needle in [
                "https://pirate.example/7.html",
                "https://pirate.example/8.html",
                "https://m.pirate.example/8.html?from=hot",
                "星辰旅人",
                "7:第七章 雨夜 (98%)",
                "落霞镇坐落在青岚山脚下",
                "2026-11-01T08:00:00Z",
                "0123abcd",
                "Yuewen",
                "pirate.example",
            ] {
                assert!(
                    text.contains(needle),
                    "{language:?} lacks {needle}:\n{text}"
                );
            }
        }
        let zh = render_notice(NoticeLanguage::Zh, "Y", "s", "d", &items).unwrap();
        assert!(zh.starts_with("侵权通知") && zh.contains("共 2 项"), "{zh}");
        let en = render_notice(NoticeLanguage::En, "Y", "s", "d", &items).unwrap();
        assert!(
            en.contains("2 item(s)") && en.contains("good faith"),
            "{en}"
        );
    }

    #[test]
    fn excerpts_are_cut_on_characters() {
        assert_eq!(excerpt("落霞镇坐落在", 3), "落霞镇…");
        assert_eq!(excerpt("落霞镇", 3), "落霞镇");
        assert_eq!(excerpt("a\n  b", 10), "a b");
    }
}
