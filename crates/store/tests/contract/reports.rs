//! Weekly report mails (issue 40): one report per audience and period is sending or sent;
//! a refused one may be sent again, a stuck one only when given up with `force`; concurrent
//! claimers send it once.

use std::sync::Arc;

use chrono::NaiveDate;
use copytrace_store::{NewReportMail, ReportAudience, ReportClaim, ReportMailState, Store};

use crate::helpers::{at, contract_tests, invalid, not_found};

contract_tests!(
    a_report_is_claimed_once_per_audience_and_period,
    a_refused_report_may_be_sent_again_and_a_stuck_one_only_by_force,
    concurrent_claims_of_one_report_send_it_once,
    bad_report_mails_are_refused,
);

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
}

fn mail(audience: ReportAudience, from: u32, id: &str) -> NewReportMail {
    NewReportMail {
        audience,
        period_from: day(from),
        period_to: day(from + 7),
        message_id: format!("<weekly-{id}@copytrace>"),
        recipients: vec!["legal@yuewen.example".into(), "ops@yuewen.example".into()],
        force: false,
        at: at(0),
    }
}

fn claimed(claim: ReportClaim) -> i64 {
    match claim {
        ReportClaim::Claimed(id) => id,
        ReportClaim::Exists(mail) => panic!("expected a claim, found {mail:?}"),
    }
}

async fn a_report_is_claimed_once_per_audience_and_period(store: Arc<dyn Store>) {
    let holder = ReportAudience::Holder(7);
    let id = claimed(
        store
            .begin_report_mail(&mail(holder, 2, "a"))
            .await
            .unwrap(),
    );
    // The same audience and period again: the first mail, nothing new.
    match store
        .begin_report_mail(&mail(holder, 2, "b"))
        .await
        .unwrap()
    {
        ReportClaim::Exists(existing) => {
            assert_eq!(existing.id, id);
            assert_eq!(existing.state, ReportMailState::Sending);
            assert_eq!(existing.message_id, "<weekly-a@copytrace>");
        }
        other => panic!("{other:?}"),
    }
    // Another period, another audience: their own.
    claimed(
        store
            .begin_report_mail(&mail(holder, 9, "c"))
            .await
            .unwrap(),
    );
    claimed(
        store
            .begin_report_mail(&mail(ReportAudience::Staff, 2, "d"))
            .await
            .unwrap(),
    );
    claimed(
        store
            .begin_report_mail(&mail(ReportAudience::Holder(8), 2, "e"))
            .await
            .unwrap(),
    );

    store.finish_report_mail(id, None, at(5)).await.unwrap();
    let again = invalid(store.finish_report_mail(id, None, at(6)).await);
    assert!(again.contains("already sent"), "{again}");
    assert!(not_found(store.finish_report_mail(404, None, at(6)).await).contains("404"));
    match store
        .begin_report_mail(&mail(holder, 2, "f"))
        .await
        .unwrap()
    {
        ReportClaim::Exists(sent) => {
            assert_eq!(sent.state, ReportMailState::Sent);
            assert_eq!(sent.finished_at, Some(at(5)));
            assert_eq!(
                sent.recipients,
                ["legal@yuewen.example", "ops@yuewen.example"]
            );
        }
        other => panic!("{other:?}"),
    }
    // Even with force: a sent report is never sent again.
    let forced = NewReportMail {
        force: true,
        ..mail(holder, 2, "g")
    };
    assert!(matches!(
        store.begin_report_mail(&forced).await.unwrap(),
        ReportClaim::Exists(_)
    ));

    let of_period = store.report_mails(Some(day(2))).await.unwrap();
    assert_eq!(of_period.len(), 3, "{of_period:?}");
    assert_eq!(of_period[0].audience, holder);
    assert_eq!(
        (of_period[0].period_from, of_period[0].period_to),
        (day(2), day(9))
    );
    assert_eq!(store.report_mails(None).await.unwrap().len(), 4);
}

async fn a_refused_report_may_be_sent_again_and_a_stuck_one_only_by_force(store: Arc<dyn Store>) {
    let staff = ReportAudience::Staff;
    let first = claimed(store.begin_report_mail(&mail(staff, 2, "a")).await.unwrap());
    store
        .finish_report_mail(first, Some("the SMTP server refused it: 550"), at(1))
        .await
        .unwrap();
    // Refused: nothing was delivered, so the next attempt claims it anew.
    let second = claimed(store.begin_report_mail(&mail(staff, 2, "b")).await.unwrap());
    assert_ne!(first, second);
    // Stuck in sending (a crash mid-exchange): never sent again by itself …
    assert!(matches!(
        store.begin_report_mail(&mail(staff, 2, "c")).await.unwrap(),
        ReportClaim::Exists(_)
    ));
    // … only when a person gives it up.
    let forced = NewReportMail {
        force: true,
        ..mail(staff, 2, "d")
    };
    let third = claimed(store.begin_report_mail(&forced).await.unwrap());
    let states: Vec<_> = store
        .report_mails(Some(day(2)))
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.id, m.state, m.error.is_some()))
        .collect();
    assert_eq!(
        states,
        [
            (first, ReportMailState::Refused, true),
            (second, ReportMailState::Abandoned, true),
            (third, ReportMailState::Sending, false),
        ]
    );
}

async fn concurrent_claims_of_one_report_send_it_once(store: Arc<dyn Store>) {
    let claims: Vec<_> = (0..8)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .begin_report_mail(&mail(ReportAudience::Holder(3), 2, &i.to_string()))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut won = 0;
    for claim in claims {
        if let ReportClaim::Claimed(_) = claim.await.unwrap() {
            won += 1;
        }
    }
    assert_eq!(won, 1);
    assert_eq!(store.report_mails(None).await.unwrap().len(), 1);
}

async fn bad_report_mails_are_refused(store: Arc<dyn Store>) {
    let empty = NewReportMail {
        period_to: day(2),
        ..mail(ReportAudience::Staff, 2, "a")
    };
    assert!(invalid(store.begin_report_mail(&empty).await).contains("empty"));
    let nobody = NewReportMail {
        recipients: vec![" ".into()],
        ..mail(ReportAudience::Staff, 2, "b")
    };
    assert!(invalid(store.begin_report_mail(&nobody).await).contains("recipient"));
    let anonymous = NewReportMail {
        message_id: String::new(),
        ..mail(ReportAudience::Staff, 2, "c")
    };
    assert!(invalid(store.begin_report_mail(&anonymous).await).contains("Message-ID"));
    assert!(store.report_mails(None).await.unwrap().is_empty());
}
