//! Following notices up over simulated days (issue 40): the reminder, the escalations to the
//! host's and the CDN's abuse desks, the search-engine delisting step, each once however often
//! follow-up runs, each a step of the notice's history; and the rights holder's signature image
//! in the notice mails. Against a real SMTP server started here and a real store.

#[path = "support/notices.rs"]
mod fixtures;
mod support;

use chrono::{DateTime, Utc};
use copytrace_analytics::notice::NoticeLaw;
use copytrace_service::sending::{self, FollowUpSettings};
use copytrace_service::{contacts, holders, notices};
use copytrace_store::{ContactKind, MailState, NoticeStatus};
use fixtures::*;
use mail_parser::MimeHeaders;
use support::start_smtp;

/// Follow-up over simulated days: reminder, escalation to the host's abuse desk and to the
/// CDN's, then the delisting lists mailed to the rights holder, each once however often it
/// runs, each a step of the history with its time and actor.
#[tokio::test]
async fn a_notice_left_online_climbs_every_step_once() {
    let (store, _holder, work) = library().await;
    let store = store.as_ref();
    let evidence = tempfile::tempdir().unwrap();
    let site = "cdn.pirate.example";
    let page = copied(store, "https://cdn.pirate.example/read/1", work, 0).await;
    alias(store, "https://m.cdn.pirate.example/read/1", page).await;
    let us = notice(store, site, NoticeLaw::Us, evidence.path()).await;
    for (email, kind) in [
        ("dmca@cdn.pirate.example", ContactKind::Copyright),
        ("abuse@host.example", ContactKind::Abuse),
        ("abuse@cdn-provider.example", ContactKind::Cdn),
    ] {
        contacts::add(store, site, email, kind, at(0))
            .await
            .unwrap();
    }
    let (smtp, received) = start_smtp();
    let mail = settings(smtp);
    sending::send(store, us.id, &request(&mail, "cli:tester", 0))
        .await
        .unwrap();

    let follow = FollowUpSettings::default();
    assert_eq!(
        (
            follow.reminder_days,
            follow.escalate_days,
            follow.delist_days
        ),
        (7, 14, 21)
    );
    let mut steps_taken = Vec::new();
    for day in [1, 7, 7, 10, 14, 14, 15, 20, 21, 21, 22, 40] {
        let report = sending::follow_up(store, &mail, &follow, "scheduler", at(day))
            .await
            .unwrap();
        assert!(report.failures.is_empty(), "{report:?}");
        assert!(report.escalated_without_contact.is_empty(), "{report:?}");
        for (step, ids) in [
            ("reminder", &report.reminded),
            ("host", &report.escalated),
            ("cdn", &report.cdn_escalated),
            ("delisting", &report.delisted),
        ] {
            steps_taken.extend(ids.iter().map(|id| (day, step, *id)));
        }
    }
    assert_eq!(
        steps_taken,
        [
            (7, "reminder", us.id),
            (14, "host", us.id),
            (14, "cdn", us.id),
            (21, "delisting", us.id)
        ]
    );
    assert_eq!(received.lock().unwrap().len(), 5, "notice and four steps");
    let cdn = mail_about(&received, "CDN abuse report");
    assert_eq!(cdn.to, ["abuse@cdn-provider.example"]);
    let cdn_text = parse(&cdn).body_text(0).unwrap().into_owned();
    assert!(
        cdn_text.contains("served through your CDN") && cdn_text.contains("read/1"),
        "{cdn_text}"
    );
    assert_eq!(
        mail_about(&received, "Abuse report").to,
        ["abuse@host.example"]
    );

    // The delisting lists go to the rights holder, one attachment per engine, each with every
    // URL of the notice, aliases included, as `notice export --format ENGINE` writes them.
    let delisting = mail_about(&received, "Search-engine delisting lists");
    assert_eq!(delisting.to, ["legal@yuewen.example"]);
    let message = parse(&delisting);
    let text = message.body_text(0).unwrap().into_owned();
    assert!(
        text.contains("reportcontent.google.com") && text.contains("2 URL(s)"),
        "{text}"
    );
    let attachments: Vec<(String, String)> = message
        .attachments()
        .map(|a| {
            (
                a.attachment_name().unwrap().to_owned(),
                String::from_utf8_lossy(a.contents()).into_owned(),
            )
        })
        .collect();
    let names: Vec<&str> = attachments.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            format!("delisting-{}-google.txt", us.id),
            format!("delisting-{}-bing.txt", us.id),
            format!("delisting-{}-baidu.txt", us.id)
        ]
    );
    for ((_, list), engine) in attachments.iter().zip([
        copytrace_analytics::delisting::Engine::Google,
        copytrace_analytics::delisting::Engine::Bing,
        copytrace_analytics::delisting::Engine::Baidu,
    ]) {
        let exported = notices::export(
            store,
            us.id,
            None,
            notices::ExportKind::Delisting(engine),
            &notices::AbuseOptions::default(),
            at(21),
        )
        .await
        .unwrap();
        assert_eq!(list.replace("\r\n", "\n"), exported);
        assert!(
            list.contains("https://m.cdn.pirate.example/read/1"),
            "{list}"
        );
    }
    assert_eq!(
        store.get_notice(us.id, None).await.unwrap().status,
        NoticeStatus::Delisting
    );

    // Each step in the history, with its time and actor.
    let (steps, mails) = notices::history(store, us.id).await.unwrap();
    let summary: Vec<(NoticeStatus, NoticeStatus, DateTime<Utc>, &str)> = steps
        .iter()
        .map(|s| (s.from, s.to, s.at, s.actor.as_str()))
        .collect();
    assert_eq!(
        summary[2..],
        [
            (NoticeStatus::Sent, NoticeStatus::Sent, at(7), "scheduler"),
            (
                NoticeStatus::Sent,
                NoticeStatus::Escalated,
                at(14),
                "scheduler"
            ),
            (
                NoticeStatus::Escalated,
                NoticeStatus::Escalated,
                at(14),
                "scheduler"
            ),
            (
                NoticeStatus::Escalated,
                NoticeStatus::Delisting,
                at(21),
                "scheduler"
            ),
        ]
    );
    assert!(
        steps[4].note.as_deref().unwrap().contains("CDN"),
        "{steps:?}"
    );
    assert!(
        steps[5]
            .note
            .as_deref()
            .unwrap()
            .contains("legal@yuewen.example"),
        "{steps:?}"
    );
    assert_eq!(mails.len(), 5);

    // A removal check still moves a notice at the last step: the copy is gone.
    gone(store, page, work, 41).await;
    assert_eq!(notices::follow_removals(store, at(41)).await.unwrap(), 1);
    assert_eq!(
        store.get_notice(us.id, None).await.unwrap().status,
        NoticeStatus::RemovalVerified
    );
}

/// Without a profile e-mail, the delisting lists are recorded as made, mailed to nobody, and
/// the notice still reaches `delisting`; a site without a CDN contact has no CDN step.
#[tokio::test]
async fn delisting_without_a_holder_address_is_recorded_once() {
    let (store, holder, work) = library().await;
    let store = store.as_ref();
    let mut profile = store.rights_holder_profile(holder).await.unwrap().unwrap();
    let evidence = tempfile::tempdir().unwrap();
    copied(store, "https://plain.pirate.example/read/1", work, 0).await;
    let cn = notice(
        store,
        "plain.pirate.example",
        NoticeLaw::Cn,
        evidence.path(),
    )
    .await;
    profile.email = None;
    store.set_rights_holder_profile(&profile).await.unwrap();
    contacts::add(
        store,
        "plain.pirate.example",
        "webmaster@plain.pirate.example",
        ContactKind::General,
        at(0),
    )
    .await
    .unwrap();
    let (smtp, received) = start_smtp();
    let mail = settings(smtp);
    sending::send(store, cn.id, &request(&mail, "cli:tester", 0))
        .await
        .unwrap();
    let follow = FollowUpSettings::default();
    let mut delisted = Vec::new();
    for day in [14, 21, 21, 30] {
        let report = sending::follow_up(store, &mail, &follow, "scheduler", at(day))
            .await
            .unwrap();
        assert!(report.failures.is_empty(), "{report:?}");
        assert!(
            report.cdn_escalated.is_empty(),
            "no CDN contact: {report:?}"
        );
        delisted.extend(report.delisted.iter().map(|id| (day, *id)));
    }
    assert_eq!(delisted, [(21, cn.id)]);
    // The notice and the reminder only: the host has no abuse contact, the holder no address.
    assert_eq!(received.lock().unwrap().len(), 2);
    let (steps, mails) = notices::history(store, cn.id).await.unwrap();
    let last = steps.last().unwrap();
    assert_eq!(
        (last.from, last.to),
        (NoticeStatus::Escalated, NoticeStatus::Delisting)
    );
    let note = last.note.as_deref().unwrap();
    assert!(
        note.contains("mailed to nobody") && note.contains("notice export"),
        "{note}"
    );
    assert!(
        mails
            .iter()
            .any(|m| m.purpose == copytrace_store::MailPurpose::Delisting
                && m.state == MailState::Skipped),
        "{mails:?}"
    );
}

/// A tiny valid PNG (1×1, grey): what a signature image test uploads.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x3a, 0x7e, 0x9b,
    0x55, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x68, 0x00, 0x00, 0x00,
    0x82, 0x00, 0x81, 0x77, 0xcd, 0x72, 0xb6, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// The holder's signature image rides inline in the notice's HTML (and in the reminder, which
/// quotes the notice); a file that is no PNG or JPEG, or too large, is refused and changes
/// nothing.
#[tokio::test]
async fn a_notice_mail_carries_the_holders_signature_image() {
    let (store, _holder, work) = library().await;
    let store = store.as_ref();
    let error = holders::set_signature_image(store, "Yuewen", Some(b"GIF89a...".to_vec()), at(0))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("neither a PNG nor a JPEG"),
        "{error}"
    );
    let mut big = PNG.to_vec();
    big.resize(holders::MAX_SIGNATURE_IMAGE_BYTES + 1, 0);
    let error = holders::set_signature_image(store, "Yuewen", Some(big), at(0))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("200 KB"), "{error}");
    assert_eq!(
        holders::profile(store, "Yuewen")
            .await
            .unwrap()
            .signature_image,
        None
    );
    let stored = holders::set_signature_image(store, "Yuewen", Some(PNG.to_vec()), at(0))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.content_type.as_str(), stored.bytes),
        ("image/png", PNG.len())
    );

    let evidence = tempfile::tempdir().unwrap();
    copied(store, "https://sig.pirate.example/read/1", work, 0).await;
    let cn = notice(store, "sig.pirate.example", NoticeLaw::Cn, evidence.path()).await;
    contacts::add(
        store,
        "sig.pirate.example",
        "dmca@sig.pirate.example",
        ContactKind::Copyright,
        at(0),
    )
    .await
    .unwrap();
    let (smtp, received) = start_smtp();
    let mail = settings(smtp);
    sending::send(store, cn.id, &request(&mail, "cli:tester", 0))
        .await
        .unwrap();
    sending::follow_up(
        store,
        &mail,
        &FollowUpSettings::default(),
        "scheduler",
        at(8),
    )
    .await
    .unwrap();
    let mails = received.lock().unwrap().clone();
    assert_eq!(mails.len(), 2, "the notice and its reminder");
    for sent in &mails {
        let message = parse(sent);
        let html = message.body_html(0).unwrap().into_owned();
        assert!(html.contains("src=\"cid:signature@copytrace\""), "{html}");
        let inline = message
            .parts
            .iter()
            .find(|part| part.content_id() == Some("signature@copytrace"))
            .expect("the signature image, inline");
        assert_eq!(inline.contents(), PNG);
        assert_eq!(
            inline.content_type().map(|t| (t.ctype(), t.subtype())),
            Some(("image", Some("png")))
        );
        // The plain text and the attached notice are still there.
        assert!(message.body_text(0).unwrap().contains("sig.pirate.example"));
        assert!(
            message
                .attachments()
                .any(|a| a.attachment_name() == Some(&format!("notice-{}.txt", cn.id))),
            "the notice attached"
        );
    }
    // Cleared: the next mail has none.
    holders::set_signature_image(store, "Yuewen", None, at(9))
        .await
        .unwrap();
    assert_eq!(store.signature_image(_holder).await.unwrap(), None);
}
