//! Sending takedown notices and following them up (issue 40), against a real SMTP server
//! started here and a real store: notices for two sites under both laws are mailed once each
//! with every element of their law, removal checks move them, and one left online is reminded
//! once and escalated once, each step in its history (the further steps are `follow_up.rs`'s).

mod support;
#[path = "support/tsa.rs"]
mod tsa;

use chrono::{DateTime, SecondsFormat, Utc};
use copytrace_analytics::notice::NoticeLaw;
use copytrace_service::alerts::AlertSettings;
use copytrace_service::evidence::ScreenshotSettings;
use copytrace_service::notices::{self, EvidenceOutput, NoticeRequest};
use copytrace_service::sending::{self, FollowUpSettings, SendOutcome, SendRequest};
use copytrace_service::{contacts, error::ErrorKind};
use copytrace_store::{ContactKind, MailState, NoticeStatus};
use sha2::{Digest, Sha256};
use support::start_smtp;

#[path = "support/notices.rs"]
mod fixtures;

use fixtures::*;

#[tokio::test]
async fn notices_are_mailed_once_under_each_law_followed_up_once_and_kept_in_history() {
    let (store, _holder, work) = library().await;
    let store = store.as_ref();
    let evidence = tempfile::tempdir().unwrap();
    let (smtp, received) = start_smtp();
    let mail = settings(smtp);

    // China: one chapter with a mirror of it; the US: two chapters.
    let cn_page = copied(store, "https://cn.pirate.example/book/1.html", work, 0).await;
    alias(store, "https://cn.pirate.example/mirror/1.html", cn_page).await;
    let us_first = copied(store, "https://us.pirate.example/read/1", work, 1).await;
    let us_second = copied(store, "https://us.pirate.example/read/2", work, 1).await;
    let cn_dir = evidence.path().join("cn");
    let us_dir = evidence.path().join("us");
    let cn = notice(store, "cn.pirate.example", NoticeLaw::Cn, &cn_dir).await;
    let us = notice(store, "us.pirate.example", NoticeLaw::Us, &us_dir).await;

    // Without a contact a notice is refused, naming the host and what to do.
    let refused = sending::send(store, cn.id, &request(&mail, "cli:tester", 0))
        .await
        .unwrap_err();
    let message = refused.to_string();
    assert_eq!(refused.kind(), ErrorKind::Invalid);
    assert!(
        message.contains("cn.pirate.example") && message.contains("site contact add"),
        "{message}"
    );
    assert_eq!(
        store.get_notice(cn.id, None).await.unwrap().status,
        NoticeStatus::Draft
    );

    // The Chinese site's contact page names its desks (found), and an operator adds one.
    let contact_page = url::Url::parse("https://cn.pirate.example/lianxi.html").unwrap();
    let found = copytrace_crawler::contacts::find_contacts(
        &contact_page,
        Some("联系我们"),
        "<p>站长邮箱：webmaster#cn.pirate.example</p><footer>京ICP备12345678号</footer>",
    );
    contacts::record_found(store, &contact_page, &found, at(0))
        .await
        .unwrap();
    contacts::add(
        store,
        "cn.pirate.example",
        "Banquan@CN.pirate.example",
        ContactKind::Copyright,
        at(0),
    )
    .await
    .unwrap();
    contacts::add(
        store,
        "us.pirate.example",
        "dmca-agent@us.pirate.example",
        ContactKind::Copyright,
        at(0),
    )
    .await
    .unwrap();
    contacts::add(
        store,
        "us.pirate.example",
        "abuse@host.example",
        ContactKind::Abuse,
        at(0),
    )
    .await
    .unwrap();
    assert!(
        contacts::add(
            store,
            "us.pirate.example",
            "not-an-address",
            ContactKind::General,
            at(0)
        )
        .await
        .is_err()
    );
    let listed = contacts::list(store, "cn.pirate.example").await.unwrap();
    assert_eq!(
        listed.icp.map(|icp| icp.icp_number).as_deref(),
        Some("京ICP备12345678号")
    );

    // Bulk: both drafts are mailed.
    let bulk = sending::send_drafts(store, Some("Yuewen"), &request(&mail, "cli:tester", 0))
        .await
        .unwrap();
    assert_eq!((bulk.sent.len(), bulk.failed.len()), (2, 0), "{bulk:?}");
    assert_eq!(received.lock().unwrap().len(), 2);

    // Each mail carries its law's every element, the URLs with aliases, first-seen times and
    // the SHA-256 of the evidence.
    let first_seen = |days: i64| at(days).to_rfc3339_opts(SecondsFormat::Secs, true);
    let cn_page_text = store.get_page(cn_page).await.unwrap().text;
    let mut cn_needles = vec![
        "https://cn.pirate.example/book/1.html".to_owned(),
        "https://cn.pirate.example/mirror/1.html".to_owned(),
        first_seen(0)[..16].to_owned(),
        hex_of(&Sha256::digest(cn_page_text.as_bytes())),
        "上海阅文信息技术有限公司".to_owned(),
    ];
    cn_needles.extend(manifest_hashes(&cn_dir));
    check_notice_mail(
        &mail_about(&received, "侵权通知"),
        cn.id,
        NoticeLaw::Cn,
        &["banquan@cn.pirate.example", "webmaster@cn.pirate.example"],
        &cn_needles,
    );
    let mut us_needles = vec![
        "https://us.pirate.example/read/1".to_owned(),
        "https://us.pirate.example/read/2".to_owned(),
        first_seen(1)[..16].to_owned(),
        "/s/ 张三".to_owned(),
        "under penalty of perjury".to_owned(),
    ];
    us_needles.extend(manifest_hashes(&us_dir));
    assert_eq!(us_needles.len(), 7, "two packages");
    check_notice_mail(
        &mail_about(&received, "Notice of copyright infringement"),
        us.id,
        NoticeLaw::Us,
        &["dmca-agent@us.pirate.example"],
        &us_needles,
    );

    // A second send of the same notice sends nothing and says so; so does bulk.
    let again = sending::send(store, cn.id, &request(&mail, "cli:tester", 1))
        .await
        .unwrap();
    let SendOutcome::AlreadySent { mail: earlier, .. } = again else {
        panic!("sent twice: {again:?}");
    };
    assert_eq!(
        (earlier.state, earlier.finished_at),
        (MailState::Sent, Some(at(0)))
    );
    let bulk = sending::send_drafts(store, None, &request(&mail, "cli:tester", 1))
        .await
        .unwrap();
    assert!(bulk.sent.is_empty() && bulk.failed.is_empty(), "{bulk:?}");
    assert_eq!(received.lock().unwrap().len(), 2, "nothing more was sent");

    // Removal checks: the Chinese copy is gone, one of the two American ones.
    gone(store, cn_page, work, 3).await;
    gone(store, us_first, work, 3).await;
    assert_eq!(notices::follow_removals(store, at(3)).await.unwrap(), 2);
    assert_eq!(
        store.get_notice(cn.id, None).await.unwrap().status,
        NoticeStatus::RemovalVerified
    );
    assert_eq!(
        store.get_notice(us.id, None).await.unwrap().status,
        NoticeStatus::PartiallyRemoved
    );
    let _ = us_second;

    // Follow-up, run again and again: one reminder after 7 days, one escalation after 14, for
    // the notice whose copies are not all gone; nothing for the removed one. (The delisting
    // step, later, is `a_notice_left_online_climbs_every_step_once`'s.)
    let follow = FollowUpSettings {
        delist_days: 90,
        ..FollowUpSettings::default()
    };
    let mut reminded = Vec::new();
    let mut escalated = Vec::new();
    for day in [2, 6, 8, 8, 9, 13, 15, 15, 16, 30] {
        let report = sending::follow_up(store, &mail, &follow, "scheduler", at(day))
            .await
            .unwrap();
        assert!(report.failures.is_empty(), "{report:?}");
        reminded.extend(report.reminded.iter().map(|id| (day, *id)));
        escalated.extend(report.escalated.iter().map(|id| (day, *id)));
    }
    assert_eq!(reminded, [(8, us.id)]);
    assert_eq!(escalated, [(15, us.id)]);
    assert_eq!(received.lock().unwrap().len(), 4);
    let reminder = mail_about(&received, "Reminder");
    assert_eq!(reminder.to, ["dmca-agent@us.pirate.example"]);
    let reminder_text = parse(&reminder).body_text(0).unwrap().into_owned();
    assert!(
        reminder_text.contains("1 are still online") && reminder_text.contains("read/2"),
        "{reminder_text}"
    );
    let escalation = mail_about(&received, "Abuse report");
    assert_eq!(escalation.to, ["abuse@host.example"]);
    assert_eq!(
        store.get_notice(us.id, None).await.unwrap().status,
        NoticeStatus::Escalated
    );

    // The history lists each step with its time and actor.
    let (steps, mails) = notices::history(store, us.id).await.unwrap();
    let summary: Vec<(NoticeStatus, NoticeStatus, DateTime<Utc>, &str)> = steps
        .iter()
        .map(|s| (s.from, s.to, s.at, s.actor.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            (
                NoticeStatus::Draft,
                NoticeStatus::Sending,
                at(0),
                "cli:tester"
            ),
            (
                NoticeStatus::Sending,
                NoticeStatus::Sent,
                at(0),
                "cli:tester"
            ),
            (
                NoticeStatus::Sent,
                NoticeStatus::PartiallyRemoved,
                at(3),
                "removal-check"
            ),
            (
                NoticeStatus::PartiallyRemoved,
                NoticeStatus::PartiallyRemoved,
                at(8),
                "scheduler"
            ),
            (
                NoticeStatus::PartiallyRemoved,
                NoticeStatus::Escalated,
                at(15),
                "scheduler"
            ),
        ]
    );
    assert!(
        steps[3].note.as_deref().unwrap().contains("reminder"),
        "{steps:?}"
    );
    assert!(
        steps[4]
            .note
            .as_deref()
            .unwrap()
            .contains("abuse@host.example"),
        "{steps:?}"
    );
    assert_eq!(mails.len(), 3);
    let (cn_steps, _) = notices::history(store, cn.id).await.unwrap();
    assert_eq!(
        cn_steps.last().map(|s| (s.to, s.actor.as_str())),
        Some((NoticeStatus::RemovalVerified, "removal-check"))
    );
}

#[tokio::test]
async fn a_notice_the_server_cannot_take_stays_a_draft_and_is_sent_later() {
    let (store, _holder, work) = library().await;
    let store = store.as_ref();
    let evidence = tempfile::tempdir().unwrap();
    copied(store, "https://cn.pirate.example/book/1.html", work, 0).await;
    let cn = notice(store, "cn.pirate.example", NoticeLaw::Cn, evidence.path()).await;
    contacts::add(
        store,
        "cn.pirate.example",
        "dmca@cn.pirate.example",
        ContactKind::Copyright,
        at(0),
    )
    .await
    .unwrap();

    // No SMTP server configured: refused before anything is recorded.
    let unconfigured = AlertSettings::default();
    let error = sending::send(store, cn.id, &request(&unconfigured, "cli:tester", 0))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("--smtp-url"), "{error}");
    // A server that is down: nothing was delivered, so the notice is a draft again.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = settings(closed.local_addr().unwrap());
    drop(closed);
    let error = sending::send(store, cn.id, &request(&down, "cli:tester", 0))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("draft again"), "{error}");
    assert_eq!(
        store.get_notice(cn.id, None).await.unwrap().status,
        NoticeStatus::Draft
    );
    // Once it is up, the notice goes out.
    let (smtp, received) = start_smtp();
    let sent = sending::send(store, cn.id, &request(&settings(smtp), "cli:tester", 1))
        .await
        .unwrap();
    assert!(matches!(sent, SendOutcome::Sent { .. }), "{sent:?}");
    assert_eq!(received.lock().unwrap().len(), 1);
    let (steps, mails) = notices::history(store, cn.id).await.unwrap();
    let moves: Vec<(NoticeStatus, NoticeStatus)> = steps.iter().map(|s| (s.from, s.to)).collect();
    assert_eq!(
        moves,
        [
            (NoticeStatus::Draft, NoticeStatus::Sending),
            (NoticeStatus::Sending, NoticeStatus::Draft),
            (NoticeStatus::Draft, NoticeStatus::Sending),
            (NoticeStatus::Sending, NoticeStatus::Sent),
        ]
    );
    assert_eq!(
        mails.iter().map(|m| m.state).collect::<Vec<_>>(),
        [MailState::Refused, MailState::Sent]
    );
}

/// An SMTP server that takes a message and hangs up before answering it, as a server that
/// crashes (or a network that fails) at the worst moment: the client cannot know whether the
/// message was delivered.
fn start_smtp_that_hangs_up() -> std::net::SocketAddr {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut out) = stream else { break };
            std::thread::spawn(move || {
                let mut lines = BufReader::new(out.try_clone().unwrap()).lines();
                out.write_all(b"220 hangup.test ESMTP\r\n").unwrap();
                while let Some(Ok(line)) = lines.next() {
                    let command = line.to_ascii_uppercase();
                    let answer: &[u8] = if command.starts_with("EHLO") {
                        b"250-hangup.test\r\n250 8BITMIME\r\n"
                    } else if command.starts_with("DATA") {
                        out.write_all(b"354 go ahead\r\n").unwrap();
                        for line in lines.by_ref() {
                            if line.map_or(true, |l| l == ".") {
                                break;
                            }
                        }
                        return; // the message is in; hang up before "250".
                    } else if command.starts_with("QUIT") {
                        let _ = out.write_all(b"221 bye\r\n");
                        return;
                    } else {
                        b"250 OK\r\n"
                    };
                    if out.write_all(answer).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

#[tokio::test]
async fn a_notice_whose_mail_broke_off_is_never_sent_again_unless_forced() {
    let (store, _holder, work) = library().await;
    let store = store.as_ref();
    let evidence = tempfile::tempdir().unwrap();
    copied(store, "https://cn.pirate.example/book/1.html", work, 0).await;
    let cn = notice(store, "cn.pirate.example", NoticeLaw::Cn, evidence.path()).await;
    contacts::add(
        store,
        "cn.pirate.example",
        "dmca@cn.pirate.example",
        ContactKind::Copyright,
        at(0),
    )
    .await
    .unwrap();

    // The server took the message and hung up: its fate is unknown, so the notice stays
    // `sending`, and the error says what to do.
    let broken = settings(start_smtp_that_hangs_up());
    let error = sending::send(store, cn.id, &request(&broken, "cli:tester", 0))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("stuck in sending") && error.contains("--force"),
        "{error}"
    );
    assert_eq!(
        store.get_notice(cn.id, None).await.unwrap().status,
        NoticeStatus::Sending
    );

    // Neither a retry nor follow-up sends it again.
    let (smtp, received) = start_smtp();
    let mail = settings(smtp);
    let retry = sending::send(store, cn.id, &request(&mail, "cli:tester", 1))
        .await
        .unwrap_err()
        .to_string();
    assert!(retry.contains("stuck in sending"), "{retry}");
    let bulk = sending::send_drafts(store, None, &request(&mail, "cli:tester", 1))
        .await
        .unwrap();
    assert!(bulk.sent.is_empty() && bulk.failed.is_empty(), "{bulk:?}");
    let follow = sending::follow_up(
        store,
        &mail,
        &FollowUpSettings::default(),
        "scheduler",
        at(30),
    )
    .await
    .unwrap();
    assert_eq!(follow, Default::default());
    assert!(received.lock().unwrap().is_empty());

    // A person who checked sends it again on purpose.
    let forced = sending::send(
        store,
        cn.id,
        &SendRequest {
            force: true,
            ..request(&mail, "cli:tester", 2)
        },
    )
    .await
    .unwrap();
    assert!(matches!(forced, SendOutcome::Sent { .. }), "{forced:?}");
    assert_eq!(received.lock().unwrap().len(), 1);
    let (steps, mails) = notices::history(store, cn.id).await.unwrap();
    let moves: Vec<(NoticeStatus, NoticeStatus)> = steps.iter().map(|s| (s.from, s.to)).collect();
    assert_eq!(
        moves,
        [
            (NoticeStatus::Draft, NoticeStatus::Sending),
            (NoticeStatus::Sending, NoticeStatus::Sending),
            (NoticeStatus::Sending, NoticeStatus::Sent),
        ]
    );
    assert!(
        steps[1].note.as_deref().unwrap().contains("--force"),
        "{steps:?}"
    );
    assert_eq!(
        mails.iter().map(|m| m.state).collect::<Vec<_>>(),
        [MailState::Abandoned, MailState::Sent]
    );
}

#[tokio::test]
async fn the_scheduled_alerts_job_follows_notices_up_as_the_scheduler() {
    use copytrace_scheduler::JobHandler;
    use copytrace_service::alerts::{self, AlertJobs, Alerter};

    let (store, _holder, work) = library().await;
    let evidence = tempfile::tempdir().unwrap();
    copied(&*store, "https://us.pirate.example/read/1", work, 0).await;
    let us = notice(&*store, "us.pirate.example", NoticeLaw::Us, evidence.path()).await;
    contacts::add(
        &*store,
        "us.pirate.example",
        "dmca@us.pirate.example",
        ContactKind::Copyright,
        at(0),
    )
    .await
    .unwrap();
    let (smtp, received) = start_smtp();
    let mail = AlertSettings {
        // Sent "now": due at once only with zero days, as configured here.
        follow_up: FollowUpSettings {
            reminder_days: 0,
            escalate_days: 0,
            delist_days: 0,
        },
        ..settings(smtp)
    };
    let now = Utc::now();
    sending::send(
        &*store,
        us.id,
        &SendRequest {
            now,
            ..request(&mail, "cli:tester", 0)
        },
    )
    .await
    .unwrap();

    let jobs = AlertJobs::new(Alerter::new(store.clone(), mail.clone()).unwrap());
    let run_job = || async {
        alerts::enqueue(&*store).await.unwrap();
        let job = store
            .claim_job(&[alerts::ALERTS], Utc::now(), chrono::Duration::minutes(1))
            .await
            .unwrap()
            .expect("the alerts job");
        let summary = jobs.run(&job).await.unwrap();
        store
            .complete_job(copytrace_store::JobLease {
                job_id: job.id,
                attempt: job.attempts,
            })
            .await
            .unwrap();
        summary
    };
    let first = run_job().await;
    assert!(
        first.contains(
            "notices: 1 reminded, 1 escalated (1 without an abuse contact), 0 to a CDN, \
             1 delisting"
        ),
        "{first}"
    );
    let second = run_job().await;
    assert!(
        second.contains("notices: 0 reminded, 0 escalated"),
        "{second}"
    );
    assert_eq!(
        received.lock().unwrap().len(),
        3,
        "the notice, one reminder and the delisting lists to the holder"
    );
    let (steps, _) = notices::history(&*store, us.id).await.unwrap();
    let actors: Vec<&str> = steps.iter().map(|s| s.actor.as_str()).collect();
    assert_eq!(
        actors,
        [
            "cli:tester",
            "cli:tester",
            "scheduler",
            "scheduler",
            "scheduler"
        ]
    );
    assert_eq!(steps[3].to, NoticeStatus::Escalated);
    assert_eq!(steps[4].to, NoticeStatus::Delisting);
}

#[tokio::test]
async fn a_sent_notice_and_its_evidence_carry_trusted_timestamps_of_what_they_say() {
    let (store, _holder, work) = library().await;
    let store = store.as_ref();
    let authority = tsa::TestTsa::start("Notices");
    let tsa = copytrace_service::timestamp::TsaSettings::parse(&authority.url).unwrap();
    let trusted = copytrace_service::timestamp::read_trusted(&authority.ca_cert).unwrap();
    let evidence = tempfile::tempdir().unwrap();
    copied(store, "https://cn.pirate.example/book/1.html", work, 0).await;
    let cn = notices::create(
        store,
        &NoticeRequest {
            holder: Some("Yuewen"),
            site: "cn.pirate.example",
            law: Some(NoticeLaw::Cn),
            evidence: Some(&EvidenceOutput {
                dir: evidence.path().to_owned(),
                screenshot: ScreenshotSettings::Skip("not in this test".into()),
                timestamps: Some(tsa.clone()),
            }),
            at: at(0),
        },
    )
    .await
    .unwrap();
    // The notice's evidence package was stamped: its token verifies against its manifest.
    let package = evidence.path().join(format!("match-{}", cn.match_ids[0]));
    let check = copytrace_service::evidence::verify_package(&package, Some(store), Some(&trusted))
        .await
        .unwrap();
    assert!(check.ok(), "{:?}", check.problems);
    assert!(check.timestamp.is_some(), "no timestamp verified");
    contacts::add(
        store,
        "cn.pirate.example",
        "dmca@cn.pirate.example",
        ContactKind::Copyright,
        at(0),
    )
    .await
    .unwrap();

    // A TSA that is down: the notice is not sent (a mail without its proof of time would be
    // sent otherwise), and stays a draft with nothing recorded.
    let (smtp, received) = start_smtp();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = AlertSettings {
        timestamps: Some(
            copytrace_service::timestamp::TsaSettings::parse(&format!(
                "http://{}/tsr",
                closed.local_addr().unwrap()
            ))
            .unwrap(),
        ),
        ..settings(smtp)
    };
    drop(closed);
    let error = sending::send(store, cn.id, &request(&down, "cli:tester", 0))
        .await
        .unwrap_err();
    let said = copytrace_service::error::one_line(&error);
    assert!(
        said.contains("not sent") && said.contains("timestamp"),
        "{said}"
    );
    assert!(received.lock().unwrap().is_empty());
    assert!(store.notice_mails(cn.id).await.unwrap().is_empty());
    assert_eq!(
        store.get_notice(cn.id, None).await.unwrap().status,
        NoticeStatus::Draft
    );

    // With the TSA up, the mail goes out with the token of its text kept.
    let mail = AlertSettings {
        timestamps: Some(tsa),
        ..settings(smtp)
    };
    let before = authority.answered();
    let sent = sending::send(store, cn.id, &request(&mail, "cli:tester", 1))
        .await
        .unwrap();
    assert!(matches!(sent, SendOutcome::Sent { .. }), "{sent:?}");
    assert_eq!(authority.answered(), before + 1);
    let (_, mails) = notices::history(store, cn.id).await.unwrap();
    assert_eq!(mails.len(), 1);
    let stamp = mails[0].timestamp.as_ref().expect("the mail's timestamp");
    assert_eq!(stamp.tsa_url, authority.url);
    let digest = mails[0].body_sha256.as_deref().expect("the text's SHA-256");
    // The digest is that of the text received (the plain-text part, as mailed).
    let received_mail = received.lock().unwrap()[0].clone();
    let text = parse(&received_mail)
        .body_text(0)
        .expect("a text body")
        .into_owned();
    assert_eq!(
        digest,
        hex_of(&Sha256::digest(text.replace("\r\n", "\n").as_bytes()))
    );
    let info = copytrace_service::timestamp::verify(
        &stamp.token,
        &Sha256::digest(text.replace("\r\n", "\n").as_bytes()),
        Some(&trusted),
    )
    .unwrap();
    assert_eq!(info.gen_time, stamp.gen_time);
    assert!(matches!(
        info.trust,
        copytrace_service::timestamp::Trust::Chained(_)
    ));
}
