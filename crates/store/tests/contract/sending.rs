//! Sending notices and following them up (issue 40): site contacts, the mails about a notice,
//! each at most once, and the history of every step.

use std::sync::Arc;

use copytrace_store::{
    ContactKind, ContactSource, MailClaim, MailEnd, MailOutcome, MailPurpose, MailState,
    NewNoticeMail, NewSiteContact, NoticeStatus, SiteIcp, Store, StoreError, TrustedTimestamp,
};

use crate::helpers::{at, contract_tests, matches_of, not_found, stored_work};
use crate::notices::{change, check, matched, notice};

contract_tests!(
    contacts_are_kept_per_host_with_the_operators_first,
    a_found_contact_never_overrides_an_operators,
    an_icp_number_is_written_once_until_it_changes,
    a_notice_is_mailed_at_most_once,
    two_senders_at_once_claim_a_notice_once,
    a_notice_stuck_in_sending_is_sent_again_only_by_force_or_settled_by_hand,
    a_refused_notice_goes_back_to_draft,
    a_reminder_and_an_escalation_happen_once_each_and_are_steps_of_the_history,
    removal_checks_and_people_are_steps_of_the_history,
    a_mails_trusted_timestamp_is_kept_with_it,
    the_cdn_escalation_and_the_delisting_step_happen_once_each,
);

fn contact(host: &str, email: &str, kind: ContactKind, found_on: Option<&str>) -> NewSiteContact {
    NewSiteContact {
        host: host.to_owned(),
        email: email.to_owned(),
        kind,
        found_on: found_on.map(str::to_owned),
        at: at(0),
    }
}

fn mail(notice_id: i64, purpose: MailPurpose, message_id: &str, seconds: i64) -> NewNoticeMail {
    NewNoticeMail {
        notice_id,
        purpose,
        message_id: message_id.to_owned(),
        recipients: vec!["dmca@pirate.example".to_owned()],
        force: false,
        actor: "cli:tester".to_owned(),
        at: at(seconds),
        body_sha256: None,
        timestamp: None,
    }
}

fn end(mail_id: i64, outcome: MailOutcome, seconds: i64) -> MailEnd {
    MailEnd {
        mail_id,
        outcome,
        actor: "cli:tester".to_owned(),
        note: Some("mailed".to_owned()),
        at: at(seconds),
    }
}

fn claimed(claim: MailClaim) -> i64 {
    match claim {
        MailClaim::Claimed(id) => id,
        MailClaim::Exists(mail) => panic!("expected a claim, found {mail:?}"),
    }
}

/// A holder's draft notice to pirate.example listing one match; returns its id.
async fn draft(store: &dyn Store) -> i64 {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(store, holder, "novel", "text of novel").await;
    let page = matched(store, "https://pirate.example/1", &[work]).await;
    let match_id = matches_of(store, page).await[0].id;
    store
        .create_notice(&notice(holder, vec![match_id]))
        .await
        .unwrap()
}

async fn contacts_are_kept_per_host_with_the_operators_first(store: Arc<dyn Store>) {
    let added = store
        .add_site_contacts(&[
            contact(
                "Pirate.Example",
                "Webmaster@Pirate.Example",
                ContactKind::General,
                Some("https://pirate.example/contact"),
            ),
            contact(
                "pirate.example",
                "dmca@pirate.example",
                ContactKind::Copyright,
                None,
            ),
            contact(
                "other.example",
                "abuse@host.example",
                ContactKind::Abuse,
                None,
            ),
        ])
        .await
        .unwrap();
    assert_eq!(added, 3);
    let listed = store.site_contacts("pirate.example").await.unwrap();
    let emails: Vec<(&str, ContactSource)> = listed
        .iter()
        .map(|c| (c.email.as_str(), c.source))
        .collect();
    assert_eq!(
        emails,
        [
            ("dmca@pirate.example", ContactSource::Operator),
            ("webmaster@pirate.example", ContactSource::Found),
        ]
    );
    assert_eq!(
        listed[1].found_on.as_deref(),
        Some("https://pirate.example/contact")
    );
    assert_eq!(
        (listed[1].host.as_str(), listed[1].created_at),
        ("pirate.example", at(0))
    );

    assert!(matches!(
        store
            .add_site_contacts(&[contact(
                "pirate.example",
                "not an address",
                ContactKind::General,
                None
            )])
            .await,
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store
            .add_site_contacts(&[contact(" ", "a@b.example", ContactKind::General, None)])
            .await,
        Err(StoreError::Invalid(_))
    ));

    store
        .remove_site_contact("pirate.example", "WEBMASTER@pirate.example")
        .await
        .unwrap();
    not_found(
        store
            .remove_site_contact("pirate.example", "webmaster@pirate.example")
            .await,
    );
    assert_eq!(
        store.site_contacts("pirate.example").await.unwrap().len(),
        1
    );
    assert!(
        store
            .site_contacts("nobody.example")
            .await
            .unwrap()
            .is_empty()
    );
}

async fn a_found_contact_never_overrides_an_operators(store: Arc<dyn Store>) {
    let found = contact(
        "pirate.example",
        "dmca@pirate.example",
        ContactKind::General,
        Some("https://pirate.example/about"),
    );
    assert_eq!(
        store
            .add_site_contacts(std::slice::from_ref(&found))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .add_site_contacts(std::slice::from_ref(&found))
            .await
            .unwrap(),
        0,
        "found again: nothing written"
    );
    // A person takes it over with the kind they know.
    let operator = contact(
        "pirate.example",
        "dmca@pirate.example",
        ContactKind::Copyright,
        None,
    );
    assert_eq!(
        store
            .add_site_contacts(std::slice::from_ref(&operator))
            .await
            .unwrap(),
        1
    );
    assert_eq!(store.add_site_contacts(&[operator]).await.unwrap(), 0);
    assert_eq!(store.add_site_contacts(&[found]).await.unwrap(), 0);
    let listed = store.site_contacts("pirate.example").await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (
            listed[0].kind,
            listed[0].source,
            listed[0].found_on.as_deref()
        ),
        (ContactKind::Copyright, ContactSource::Operator, None)
    );
}

async fn an_icp_number_is_written_once_until_it_changes(store: Arc<dyn Store>) {
    let icp = |number: &str, seconds: i64| SiteIcp {
        host: "pirate.example".to_owned(),
        icp_number: number.to_owned(),
        found_on: format!("https://pirate.example/{seconds}"),
        found_at: at(seconds),
    };
    assert_eq!(store.site_icp("pirate.example").await.unwrap(), None);
    assert!(
        store
            .set_site_icp(&icp("京ICP备12345678号", 1))
            .await
            .unwrap()
    );
    assert!(
        !store
            .set_site_icp(&icp("京ICP备12345678号", 2))
            .await
            .unwrap()
    );
    assert_eq!(
        store.site_icp("pirate.example").await.unwrap(),
        Some(icp("京ICP备12345678号", 1))
    );
    assert!(
        store
            .set_site_icp(&icp("沪ICP备87654321号-1", 3))
            .await
            .unwrap()
    );
    assert_eq!(
        store.site_icp("pirate.example").await.unwrap(),
        Some(icp("沪ICP备87654321号-1", 3))
    );
}

async fn a_notice_is_mailed_at_most_once(store: Arc<dyn Store>) {
    let id = draft(&*store).await;
    // A reminder of a draft makes no sense.
    assert!(matches!(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Reminder, "<r@test>", 15))
            .await,
        Err(StoreError::Invalid(_))
    ));
    let mail_id = claimed(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Notice, "<n1@test>", 20))
            .await
            .unwrap(),
    );
    assert_eq!(
        store.get_notice(id, None).await.unwrap().status,
        NoticeStatus::Sending
    );
    // A second sender while the first is on its way sends nothing.
    let MailClaim::Exists(pending) = store
        .begin_notice_mail(&mail(id, MailPurpose::Notice, "<n2@test>", 21))
        .await
        .unwrap()
    else {
        panic!("claimed twice");
    };
    assert_eq!(
        (pending.id, pending.state, pending.message_id.as_str()),
        (mail_id, MailState::Sending, "<n1@test>")
    );

    store
        .finish_notice_mail(&end(mail_id, MailOutcome::Sent, 22))
        .await
        .unwrap();
    let sent = store.get_notice(id, None).await.unwrap();
    assert_eq!(
        (sent.status, sent.sent_at),
        (NoticeStatus::Sent, Some(at(22)))
    );
    let listed = store.list_matches(&Default::default()).await.unwrap();
    assert_eq!(listed[0].status, copytrace_store::MatchStatus::NoticeSent);
    assert!(matches!(
        store
            .finish_notice_mail(&end(mail_id, MailOutcome::Sent, 23))
            .await,
        Err(StoreError::Invalid(_))
    ));
    // A retry, even forced, finds it sent.
    let forced = NewNoticeMail {
        force: true,
        ..mail(id, MailPurpose::Notice, "<n3@test>", 30)
    };
    let MailClaim::Exists(done) = store.begin_notice_mail(&forced).await.unwrap() else {
        panic!("sent twice");
    };
    assert_eq!(
        (done.state, done.finished_at, done.recipients.as_slice()),
        (
            MailState::Sent,
            Some(at(22)),
            ["dmca@pirate.example".to_owned()].as_slice()
        )
    );
    let mails = store.notice_mails(id).await.unwrap();
    assert_eq!(mails.len(), 1);
    let steps: Vec<(NoticeStatus, NoticeStatus, String)> = store
        .notice_history(id)
        .await
        .unwrap()
        .into_iter()
        .map(|s| (s.from, s.to, s.actor))
        .collect();
    assert_eq!(
        steps,
        [
            (
                NoticeStatus::Draft,
                NoticeStatus::Sending,
                "cli:tester".to_owned()
            ),
            (
                NoticeStatus::Sending,
                NoticeStatus::Sent,
                "cli:tester".to_owned()
            ),
        ]
    );
    not_found(store.notice_history(id + 100).await);
}

async fn a_notice_stuck_in_sending_is_sent_again_only_by_force_or_settled_by_hand(
    store: Arc<dyn Store>,
) {
    let id = draft(&*store).await;
    let stuck = claimed(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Notice, "<n1@test>", 20))
            .await
            .unwrap(),
    );
    // The process died here. Without force: nothing; with it, a new mail.
    assert!(matches!(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Notice, "<n2@test>", 30))
            .await
            .unwrap(),
        MailClaim::Exists(_)
    ));
    let again = claimed(
        store
            .begin_notice_mail(&NewNoticeMail {
                force: true,
                ..mail(id, MailPurpose::Notice, "<n2@test>", 30)
            })
            .await
            .unwrap(),
    );
    let mails = store.notice_mails(id).await.unwrap();
    assert_eq!(
        mails.iter().map(|m| (m.id, m.state)).collect::<Vec<_>>(),
        [(stuck, MailState::Abandoned), (again, MailState::Sending)]
    );
    // Stuck again; a person who knows it arrived settles it by hand.
    store
        .set_notice_status(&change(id, NoticeStatus::Sent, None, at(40)))
        .await
        .unwrap();
    assert_eq!(
        store.notice_mails(id).await.unwrap()[1].state,
        MailState::Sent
    );
    assert_eq!(
        store.get_notice(id, None).await.unwrap().status,
        NoticeStatus::Sent
    );
    // Only `notice send` sets sending.
    assert!(matches!(
        store
            .set_notice_status(&change(id, NoticeStatus::Sending, None, at(50)))
            .await,
        Err(StoreError::Invalid(_))
    ));
}

async fn a_refused_notice_goes_back_to_draft(store: Arc<dyn Store>) {
    let id = draft(&*store).await;
    let first = claimed(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Notice, "<n1@test>", 20))
            .await
            .unwrap(),
    );
    store
        .finish_notice_mail(&end(
            first,
            MailOutcome::Refused("550 no such user".to_owned()),
            21,
        ))
        .await
        .unwrap();
    let back = store.get_notice(id, None).await.unwrap();
    assert_eq!((back.status, back.sent_at), (NoticeStatus::Draft, None));
    let history = store.notice_history(id).await.unwrap();
    assert_eq!(history.last().unwrap().to, NoticeStatus::Draft);
    assert!(
        history
            .last()
            .unwrap()
            .note
            .as_deref()
            .unwrap()
            .contains("550 no such user"),
        "{history:?}"
    );
    // Nothing was delivered: it can be sent again, without force.
    claimed(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Notice, "<n2@test>", 30))
            .await
            .unwrap(),
    );
    // A notice marked sent by hand has no mail: sending it is refused, not repeated.
    let other = {
        let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
        let match_id = store.get_notice(id, None).await.unwrap().match_ids[0];
        store
            .create_notice(&notice(holder, vec![match_id]))
            .await
            .unwrap()
    };
    store
        .set_notice_status(&change(other, NoticeStatus::Sent, None, at(40)))
        .await
        .unwrap();
    assert!(matches!(
        store
            .begin_notice_mail(&mail(other, MailPurpose::Notice, "<n3@test>", 41))
            .await,
        Err(StoreError::Invalid(_))
    ));
}

async fn a_reminder_and_an_escalation_happen_once_each_and_are_steps_of_the_history(
    store: Arc<dyn Store>,
) {
    let id = draft(&*store).await;
    let sent = claimed(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Notice, "<n@test>", 20))
            .await
            .unwrap(),
    );
    store
        .finish_notice_mail(&end(sent, MailOutcome::Sent, 21))
        .await
        .unwrap();

    // A reminder refused by the server is tried again; once sent, never again.
    let refused = claimed(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Reminder, "<r1@test>", 100))
            .await
            .unwrap(),
    );
    store
        .finish_notice_mail(&end(refused, MailOutcome::Refused("421 busy".into()), 101))
        .await
        .unwrap();
    let reminder = claimed(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Reminder, "<r2@test>", 200))
            .await
            .unwrap(),
    );
    store
        .finish_notice_mail(&end(reminder, MailOutcome::Sent, 201))
        .await
        .unwrap();
    assert!(matches!(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Reminder, "<r3@test>", 300))
            .await
            .unwrap(),
        MailClaim::Exists(_)
    ));
    assert_eq!(
        store.get_notice(id, None).await.unwrap().status,
        NoticeStatus::Sent,
        "a reminder changes no status"
    );

    // An escalation with nobody to write to is recorded as done.
    let escalation = claimed(
        store
            .begin_notice_mail(&NewNoticeMail {
                recipients: Vec::new(),
                ..mail(id, MailPurpose::Escalation, "<e1@test>", 400)
            })
            .await
            .unwrap(),
    );
    store
        .finish_notice_mail(&MailEnd {
            note: Some("no abuse contact is known for pirate.example".into()),
            actor: "scheduler".into(),
            ..end(escalation, MailOutcome::Skipped, 401)
        })
        .await
        .unwrap();
    assert!(matches!(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Escalation, "<e2@test>", 500))
            .await
            .unwrap(),
        MailClaim::Exists(_)
    ));
    assert_eq!(
        store.get_notice(id, None).await.unwrap().status,
        NoticeStatus::Escalated
    );
    let steps = store.notice_history(id).await.unwrap();
    let summary: Vec<(
        NoticeStatus,
        NoticeStatus,
        chrono::DateTime<chrono::Utc>,
        &str,
    )> = steps
        .iter()
        .map(|s| (s.from, s.to, s.at, s.actor.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            (
                NoticeStatus::Draft,
                NoticeStatus::Sending,
                at(20),
                "cli:tester"
            ),
            (
                NoticeStatus::Sending,
                NoticeStatus::Sent,
                at(21),
                "cli:tester"
            ),
            (
                NoticeStatus::Sent,
                NoticeStatus::Sent,
                at(201),
                "cli:tester"
            ),
            (
                NoticeStatus::Sent,
                NoticeStatus::Escalated,
                at(401),
                "scheduler"
            ),
        ]
    );
    assert_eq!(
        steps[3].note.as_deref(),
        Some("no abuse contact is known for pirate.example")
    );
}

async fn removal_checks_and_people_are_steps_of_the_history(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, holder, "novel", "text of novel").await;
    let first = matched(&*store, "https://pirate.example/1", &[work]).await;
    let second = matched(&*store, "https://pirate.example/2", &[work]).await;
    let ids = vec![
        matches_of(&*store, first).await[0].id,
        matches_of(&*store, second).await[0].id,
    ];
    let id = store.create_notice(&notice(holder, ids)).await.unwrap();
    // Only a sent notice is acknowledged.
    assert!(matches!(
        store
            .set_notice_status(&change(id, NoticeStatus::Acknowledged, None, at(15)))
            .await,
        Err(StoreError::Invalid(_))
    ));
    store
        .set_notice_status(&change(id, NoticeStatus::Sent, None, at(20)))
        .await
        .unwrap();
    store
        .set_notice_status(&copytrace_store::NoticeStatusChange {
            note: Some("the site answered".into()),
            ..change(id, NoticeStatus::Acknowledged, None, at(30))
        })
        .await
        .unwrap();
    store
        .record_page_check(&check(first, 100, vec![work], Vec::new()))
        .await
        .unwrap();
    assert_eq!(store.refresh_notices(at(110)).await.unwrap(), 1);
    store
        .record_page_check(&check(second, 120, vec![work], Vec::new()))
        .await
        .unwrap();
    assert_eq!(store.refresh_notices(at(130)).await.unwrap(), 1);
    assert_eq!(store.refresh_notices(at(140)).await.unwrap(), 0);
    let steps: Vec<(NoticeStatus, NoticeStatus, String, Option<String>)> = store
        .notice_history(id)
        .await
        .unwrap()
        .into_iter()
        .map(|s| (s.from, s.to, s.actor, s.note))
        .collect();
    assert_eq!(
        steps,
        [
            (
                NoticeStatus::Draft,
                NoticeStatus::Sent,
                "cli:tester".into(),
                None
            ),
            (
                NoticeStatus::Sent,
                NoticeStatus::Acknowledged,
                "cli:tester".into(),
                Some("the site answered".into())
            ),
            (
                NoticeStatus::Acknowledged,
                NoticeStatus::PartiallyRemoved,
                "removal-check".into(),
                Some("1 of 2 cop(ies) found removed".into())
            ),
            (
                NoticeStatus::PartiallyRemoved,
                NoticeStatus::RemovalVerified,
                "removal-check".into(),
                Some("2 of 2 cop(ies) found removed".into())
            ),
        ]
    );
}

async fn two_senders_at_once_claim_a_notice_once(store: Arc<dyn Store>) {
    let id = draft(&*store).await;
    let first = mail(id, MailPurpose::Notice, "<a@test>", 20);
    let second = mail(id, MailPurpose::Notice, "<b@test>", 20);
    let (a, b) = tokio::join!(
        store.begin_notice_mail(&first),
        store.begin_notice_mail(&second)
    );
    let claims = [a.unwrap(), b.unwrap()];
    let claimed = claims
        .iter()
        .filter(|c| matches!(c, MailClaim::Claimed(_)))
        .count();
    assert_eq!(claimed, 1, "{claims:?}");
    assert_eq!(store.notice_mails(id).await.unwrap().len(), 1);
}

async fn a_mails_trusted_timestamp_is_kept_with_it(store: Arc<dyn Store>) {
    let id = draft(&*store).await;
    let digest = "ab".repeat(32);
    let stamp = TrustedTimestamp {
        tsa_url: "http://tsa.example/".to_owned(),
        gen_time: at(9),
        token: vec![0x30, 0x03, 0x02, 0x01, 0x00],
    };
    // A token without the digest it stamps, or a digest in capitals, is refused.
    for bad in [
        NewNoticeMail {
            timestamp: Some(stamp.clone()),
            ..mail(id, MailPurpose::Notice, "<t0@test>", 10)
        },
        NewNoticeMail {
            body_sha256: Some(digest.to_uppercase()),
            ..mail(id, MailPurpose::Notice, "<t0@test>", 10)
        },
    ] {
        assert!(matches!(
            store.begin_notice_mail(&bad).await,
            Err(StoreError::Invalid(_))
        ));
    }
    let mail_id = claimed(
        store
            .begin_notice_mail(&NewNoticeMail {
                body_sha256: Some(digest.clone()),
                timestamp: Some(stamp.clone()),
                ..mail(id, MailPurpose::Notice, "<t1@test>", 10)
            })
            .await
            .unwrap(),
    );
    store
        .finish_notice_mail(&end(mail_id, MailOutcome::Sent, 11))
        .await
        .unwrap();
    let mails = store.notice_mails(id).await.unwrap();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].body_sha256.as_deref(), Some(digest.as_str()));
    assert_eq!(mails[0].timestamp.as_ref(), Some(&stamp));
    // A mail without a timestamp has none.
    let reminder = claimed(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Reminder, "<t2@test>", 20))
            .await
            .unwrap(),
    );
    let mails = store.notice_mails(id).await.unwrap();
    let plain = mails.iter().find(|m| m.id == reminder).unwrap();
    assert_eq!((&plain.body_sha256, &plain.timestamp), (&None, &None));
}

async fn the_cdn_escalation_and_the_delisting_step_happen_once_each(store: Arc<dyn Store>) {
    let id = draft(&*store).await;
    store
        .add_site_contacts(&[contact(
            "pirate.example",
            "abuse@cdn.example",
            ContactKind::Cdn,
            None,
        )])
        .await
        .unwrap();
    assert_eq!(
        store.site_contacts("pirate.example").await.unwrap()[0].kind,
        ContactKind::Cdn
    );
    // Neither step comes before the notice went out.
    let error = store
        .begin_notice_mail(&mail(id, MailPurpose::CdnEscalation, "<c0@test>", 10))
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Invalid(_)), "{error}");
    let sent = claimed(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Notice, "<n@test>", 20))
            .await
            .unwrap(),
    );
    store
        .finish_notice_mail(&end(sent, MailOutcome::Sent, 21))
        .await
        .unwrap();
    let cdn = claimed(
        store
            .begin_notice_mail(&mail(id, MailPurpose::CdnEscalation, "<c1@test>", 100))
            .await
            .unwrap(),
    );
    store
        .finish_notice_mail(&end(cdn, MailOutcome::Sent, 101))
        .await
        .unwrap();
    assert!(matches!(
        store
            .begin_notice_mail(&mail(id, MailPurpose::CdnEscalation, "<c2@test>", 102))
            .await
            .unwrap(),
        MailClaim::Exists(_)
    ));
    assert_eq!(
        store.get_notice(id, None).await.unwrap().status,
        NoticeStatus::Escalated
    );
    // The delisting step, with nobody to mail the lists to, is recorded as done, once.
    let delisting = claimed(
        store
            .begin_notice_mail(&NewNoticeMail {
                recipients: Vec::new(),
                ..mail(id, MailPurpose::Delisting, "<d1@test>", 200)
            })
            .await
            .unwrap(),
    );
    store
        .finish_notice_mail(&MailEnd {
            actor: "scheduler".into(),
            ..end(delisting, MailOutcome::Skipped, 201)
        })
        .await
        .unwrap();
    assert!(matches!(
        store
            .begin_notice_mail(&mail(id, MailPurpose::Delisting, "<d2@test>", 300))
            .await
            .unwrap(),
        MailClaim::Exists(_)
    ));
    assert_eq!(
        store.get_notice(id, None).await.unwrap().status,
        NoticeStatus::Delisting
    );
    let mails = store.notice_mails(id).await.unwrap();
    let purposes: Vec<(MailPurpose, MailState)> =
        mails.iter().map(|m| (m.purpose, m.state)).collect();
    assert_eq!(
        purposes,
        [
            (MailPurpose::Notice, MailState::Sent),
            (MailPurpose::CdnEscalation, MailState::Sent),
            (MailPurpose::Delisting, MailState::Skipped)
        ]
    );
    let history = store.notice_history(id).await.unwrap();
    let steps: Vec<(NoticeStatus, NoticeStatus, &str)> = history
        .iter()
        .map(|s| (s.from, s.to, s.actor.as_str()))
        .collect();
    assert_eq!(
        steps[2..],
        [
            (NoticeStatus::Sent, NoticeStatus::Escalated, "cli:tester"),
            (
                NoticeStatus::Escalated,
                NoticeStatus::Delisting,
                "scheduler"
            )
        ]
    );
    // A person may set it by hand, but on a sent notice only.
    let other = draft(&*store).await;
    let error = store
        .set_notice_status(&change(other, NoticeStatus::Delisting, None, at(400)))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("only a sent notice"), "{error}");
}
