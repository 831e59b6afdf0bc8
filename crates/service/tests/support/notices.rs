//! What the notice tests share: a store with a rights holder, its profile and a work, copies
//! of it on pirate pages, notices with evidence, and reading the mails a test SMTP server
//! received. Included by `notice_sending.rs` and `follow_up.rs` (each also has `mod support`).

#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use copytrace_analytics::notice::NoticeLaw;
use copytrace_service::alerts::AlertSettings;
use copytrace_service::evidence::ScreenshotSettings;
use copytrace_service::notices::{self, EvidenceOutput, NoticeRequest};
use copytrace_service::sending::SendRequest;
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{
    Availability, EvidencePassage, NewMatch, NewPage, NewWork, Notice, PageCheck,
    RightsHolderProfile, Store,
};
use mail_parser::{Message, MessageParser, MimeHeaders};
use sha2::{Digest, Sha256};

use crate::support::Mail;

pub const TEXT: &str =
    "星辰旅人第一章，雨夜来客。少年推开客栈的门，风雪随之涌入，掌柜抬头看了他一眼。";

pub fn at(days: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap() + chrono::Duration::days(days)
}

/// A store whose holder Yuewen has a full profile and a work; returns it with the holder and
/// work ids.
pub async fn library() -> (Arc<dyn Store>, i64, i64) {
    let store = SqliteStore::connect("sqlite::memory:").await.unwrap();
    store.migrate().await.unwrap();
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    store
        .set_rights_holder_profile(&RightsHolderProfile {
            rights_holder_id: holder,
            legal_name: Some("上海阅文信息技术有限公司".into()),
            address: Some("上海市浦东新区碧波路690号".into()),
            email: Some("legal@yuewen.example".into()),
            phone: Some("+86 21 0000 0000".into()),
            agent_name: Some("张三".into()),
            agent_role: Some("法务经理".into()),
            agent_contact: Some("zhangsan@yuewen.example".into()),
            signature: Some("/s/ 张三".into()),
            language: "zh".into(),
            updated_at: at(-30),
        })
        .await
        .unwrap();
    let text = TEXT.repeat(8);
    let (work, _) = store
        .upsert_work(&NewWork {
            rights_holder_id: holder,
            external_id: "xingchen".into(),
            title: "星辰旅人".into(),
            content_hash: copytrace_store::sha256_hex(text.as_bytes()),
            content: text,
            fingerprint_version: 1,
            segments: Vec::new(),
            fingerprints: Vec::new(),
            author: None,
            published_at: None,
            chapters: Vec::new(),
            licensed_hosts: None,
        })
        .await
        .unwrap();
    (Arc::new(store), holder, work)
}

/// A page at `url` copying the work, first seen `days` from the start; returns its id.
pub async fn copied(store: &dyn Store, url: &str, work: i64, days: i64) -> i64 {
    let text = format!("{url}\n{}", TEXT.repeat(8));
    let hash = copytrace_store::sha256_hex(text.as_bytes());
    let start = url.len() + 1;
    let page = store
        .upsert_page(&NewPage {
            url: url.into(),
            title: Some("第一章 雨夜来客".into()),
            text,
            content_hash: hash.clone(),
            http_status: 200,
            fetched_at: at(days),
            etag: None,
            last_modified: None,
            capture: None,
        })
        .await
        .unwrap()
        .id;
    let found = NewMatch {
        work_id: work,
        score: 0.97,
        coverage: 0.9,
        containment: 0.97,
        copied_chars: 240,
        method: "simhash+align".into(),
        auto_confirm: true,
        evidence: vec![EvidencePassage {
            page_start: start as u32,
            page_end: (start + 3 * 12) as u32,
            work_start: 0,
            work_end: 36,
        }],
    };
    store
        .record_page_matches(page, &hash, &[found], at(days))
        .await
        .unwrap();
    page
}

/// A page at `alias` with the same text as page `of`, filed as its alias.
pub async fn alias(store: &dyn Store, alias: &str, of: i64) {
    let original = store.get_page(of).await.unwrap();
    let id = store
        .upsert_page(&NewPage {
            url: alias.into(),
            title: original.title.clone(),
            text: original.text.clone(),
            content_hash: original.content_hash.clone(),
            http_status: 200,
            fetched_at: at(0),
            etag: None,
            last_modified: None,
            capture: None,
        })
        .await
        .unwrap()
        .id;
    store.set_page_alias(id, Some(of)).await.unwrap();
}

/// The removal check of a page, as a re-crawl records it: gone (404) at `days`.
pub async fn gone(store: &dyn Store, page: i64, work: i64, days: i64) {
    store
        .record_page_check(&PageCheck {
            page_id: page,
            run_id: None,
            checked_at: at(days),
            availability: Availability::Gone,
            http_status: Some(404),
            detail: "HTTP 404".into(),
            still_present: Vec::new(),
            removed: vec![work],
        })
        .await
        .unwrap();
}

/// Writes the notice of Yuewen to `site` under `law`, with fresh evidence packages in `dir`.
pub async fn notice(store: &dyn Store, site: &str, law: NoticeLaw, dir: &Path) -> Notice {
    notices::create(
        store,
        &NoticeRequest {
            holder: Some("Yuewen"),
            site,
            law: Some(law),
            evidence: Some(&EvidenceOutput {
                dir: dir.to_owned(),
                screenshot: ScreenshotSettings::Skip("not in this test".into()),
                timestamps: None,
            }),
            at: at(0),
        },
    )
    .await
    .unwrap()
}

pub fn sha256_of(path: &Path) -> String {
    hex_of(&Sha256::digest(std::fs::read(path).unwrap()))
}

pub fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every manifest SHA-256 of the packages under `dir`.
pub fn manifest_hashes(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| sha256_of(&entry.unwrap().path().join("manifest.json")))
        .collect()
}

pub fn parse(mail: &Mail) -> Message<'_> {
    MessageParser::default()
        .parse(mail.data.as_bytes())
        .expect("a MIME message")
}

/// The one received mail whose subject contains `needle`.
pub fn mail_about(received: &Arc<Mutex<Vec<Mail>>>, needle: &str) -> Mail {
    let mails = received.lock().unwrap();
    let found: Vec<&Mail> = mails
        .iter()
        .filter(|m| parse(m).subject().is_some_and(|s| s.contains(needle)))
        .collect();
    assert_eq!(found.len(), 1, "mails about {needle:?}: {mails:#?}");
    found[0].clone()
}

pub fn settings(smtp: std::net::SocketAddr) -> AlertSettings {
    AlertSettings {
        smtp_url: Some(format!("smtp://{smtp}")),
        mail_from: "Yuewen Legal <notices@yuewen.example>".into(),
        timeout: Duration::from_secs(5),
        ..AlertSettings::default()
    }
}

pub fn request<'a>(mail: &'a AlertSettings, actor: &'static str, days: i64) -> SendRequest<'a> {
    SendRequest {
        mail,
        actor,
        force: false,
        now: at(days),
    }
}

/// Checks a received notice: its recipients, every element of `law` by name, the URLs (with
/// aliases), first-seen times and hashes in the text, the HTML and the attachment.
pub fn check_notice_mail(
    mail: &Mail,
    notice_id: i64,
    law: NoticeLaw,
    to: &[&str],
    needles: &[String],
) {
    assert_eq!(mail.to, to, "recipients, operator's first");
    let message = parse(mail);
    let text = message.body_text(0).expect("a text body").into_owned();
    for element in law.elements() {
        assert!(
            text.contains(element.heading),
            "the {} notice lacks {}:\n{text}",
            law.as_str(),
            element.name
        );
    }
    for needle in needles {
        assert!(text.contains(needle.as_str()), "lacks {needle}:\n{text}");
    }
    let html = message.body_html(0).expect("an HTML body").into_owned();
    for needle in needles {
        assert!(
            html.contains(needle.as_str()),
            "the HTML lacks {needle}:\n{html}"
        );
    }
    let attachment = message.attachment(0).expect("the notice attached");
    assert_eq!(
        attachment.attachment_name(),
        Some(format!("notice-{notice_id}.txt").as_str())
    );
    let attached = String::from_utf8_lossy(attachment.contents()).into_owned();
    assert!(
        attached.contains(law.elements()[0].heading),
        "the attachment is the notice: {attached}"
    );
}
