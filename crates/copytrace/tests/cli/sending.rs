//! `copytrace site contacts|contact` and `notice send|follow-up|history|status` (issue 40): a
//! crawl finds the site's contact and ICP number, a notice is mailed to it through a real SMTP
//! server started here, never twice, then reminded and escalated once each as the days pass.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use copytrace::demo;
use copytrace_analytics::notice::NoticeLaw;

use crate::helpers::{TestSite, Workspace, crawl_and_match, html_page, library_text};

/// Every message the SMTP server received, as received.
type Received = Arc<Mutex<Vec<String>>>;

#[derive(Clone, Default)]
struct Mailbox {
    received: Received,
    data: Vec<u8>,
}

impl mailin_embedded::Handler for Mailbox {
    fn data_start(
        &mut self,
        _domain: &str,
        _from: &str,
        _is8bit: bool,
        _to: &[String],
    ) -> mailin_embedded::Response {
        self.data.clear();
        mailin_embedded::response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.data.extend_from_slice(buf);
        Ok(())
    }

    fn data_end(&mut self) -> mailin_embedded::Response {
        let data = String::from_utf8_lossy(&self.data).into_owned();
        self.received.lock().unwrap().push(data);
        mailin_embedded::response::OK
    }
}

/// Starts an SMTP server on a free loopback port; returns its address and what it receives.
pub(crate) fn start_smtp() -> (SocketAddr, Received) {
    let mailbox = Mailbox::default();
    let received = mailbox.received.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut server = mailin_embedded::Server::new(mailbox);
    server
        .with_name("mail.test")
        .with_ssl(mailin_embedded::SslConfig::None)
        .unwrap()
        .with_tcp_listener(listener);
    std::thread::spawn(move || {
        if let Err(error) = server.serve() {
            panic!("the SMTP server stopped: {error}");
        }
    });
    (addr, received)
}

pub(crate) fn text_of(raw: &str) -> String {
    let message = mail_parser::MessageParser::default()
        .parse(raw.as_bytes())
        .expect("a MIME message");
    message.body_text(0).expect("a text body").into_owned()
}

#[test]
fn a_notice_goes_to_the_contact_found_on_the_site_once_and_is_followed_up_once() {
    let workspace = Workspace::new();
    let mut sample = demo::sample_site();
    sample.pages.push(html_page(
        "/lianxi.html",
        "<p>版权投诉请发邮件至 <a href=\"mailto:DMCA@pirate.test\">DMCA@pirate.test</a></p>\
         <div class=\"footer\">Copyright 笔趣阁 京ICP备12345678号-1</div>",
    ));
    let site = TestSite::serve(sample);
    let host = site.addr().to_string();
    let path = workspace.write("lib/xingchen-ch1.txt", library_text("xingchen-ch1"));
    workspace.ok(&[
        "library",
        "add",
        "--rights-holder",
        "Yuewen",
        path.to_str().unwrap(),
    ]);
    crawl_and_match(&workspace, &site);

    // The crawl found the site's copyright desk and its ICP filing.
    let known: serde_json::Value =
        serde_json::from_str(&workspace.ok(&["site", "contacts", &host, "--json"]).stdout).unwrap();
    let contacts = known["contacts"].as_array().unwrap();
    assert_eq!(contacts.len(), 1, "{known:#}");
    assert_eq!(contacts[0]["email"], "dmca@pirate.test");
    assert_eq!(contacts[0]["kind"], "copyright");
    assert_eq!(contacts[0]["source"], "found");
    assert_eq!(contacts[0]["found_on"], site.url("/lianxi.html"));
    assert_eq!(known["icp"]["icp_number"], "京ICP备12345678号-1");
    let refused = workspace.run(&["site", "contact", "add", &host, "legal-at-pirate"]);
    assert!(
        refused.one_line_error().contains("not an e-mail address"),
        "{refused:#?}"
    );

    workspace.ok(&[
        "rights-holder",
        "set",
        "Yuewen",
        "--legal-name",
        "上海阅文信息技术有限公司",
        "--address",
        "上海市浦东新区碧波路690号",
        "--email",
        "legal@yuewen.example",
        "--agent-name",
        "张三",
        "--signature",
        "/s/ 张三",
    ]);
    let evidence = workspace.path("evidence");
    workspace.ok(&[
        "notice",
        "create",
        "--site",
        &host,
        "--evidence-dir",
        evidence.to_str().unwrap(),
        "--no-screenshot",
    ]);
    let list: Vec<serde_json::Value> =
        serde_json::from_str(&workspace.ok(&["notice", "list", "--json"]).stdout).unwrap();
    let id = list[0]["id"].to_string();

    let (smtp, received) = start_smtp();
    let smtp_url = format!("smtp://{smtp}");
    let sent = workspace.ok(&["notice", "send", &id, "--smtp-url", &smtp_url]);
    assert!(
        sent.stdout
            .contains(&format!("notice {id} sent to dmca@pirate.test")),
        "{sent:#?}"
    );
    let mails = received.lock().unwrap().clone();
    assert_eq!(mails.len(), 1);
    let text = text_of(&mails[0]);
    for element in NoticeLaw::Cn.elements() {
        assert!(
            text.contains(element.heading),
            "lacks {}:\n{text}",
            element.name
        );
    }
    assert!(text.contains(&site.url("/book/xingchen/1.html")), "{text}");

    // Again: nothing is sent, and it says so.
    let again = workspace.ok(&["notice", "send", &id, "--smtp-url", &smtp_url]);
    assert!(
        again.stdout.contains("was sent already") && again.stdout.contains("nothing sent"),
        "{again:#?}"
    );
    assert_eq!(received.lock().unwrap().len(), 1);
    let bulk = workspace.ok(&["notice", "send", "--all-drafts", "--smtp-url", &smtp_url]);
    assert!(bulk.stdout.contains("0 notice(s) sent"), "{bulk:#?}");

    // The days pass: one reminder, then one escalation (on record: no abuse contact).
    let list: Vec<serde_json::Value> =
        serde_json::from_str(&workspace.ok(&["notice", "list", "--json"]).stdout).unwrap();
    assert_eq!(list[0]["status"], "sent");
    let sent_at: DateTime<Utc> = list[0]["sent_at"].as_str().unwrap().parse().unwrap();
    let on =
        |days: i64| (sent_at + Duration::days(days)).to_rfc3339_opts(SecondsFormat::Secs, true);
    let follow = |days: i64| {
        workspace
            .ok(&[
                "notice",
                "follow-up",
                "--smtp-url",
                &smtp_url,
                "--now",
                &on(days),
            ])
            .stdout
    };
    assert!(follow(3).starts_with("0 reminded"), "nothing yet");
    assert!(follow(8).starts_with(&format!("1 reminded ({id})")));
    assert!(follow(9).starts_with("0 reminded"));
    let escalated = follow(15);
    assert!(
        escalated.contains(&format!(
            "1 escalated on record only, no abuse contact ({id})"
        )),
        "{escalated}"
    );
    assert!(follow(20).starts_with("0 reminded (), 0 escalated (), 0 escalated on record only"));
    assert_eq!(
        received.lock().unwrap().len(),
        2,
        "the notice and its reminder"
    );

    // The history has every step, with its time and actor.
    let history: serde_json::Value =
        serde_json::from_str(&workspace.ok(&["notice", "history", &id, "--json"]).stdout).unwrap();
    let steps: Vec<(&str, &str)> = history["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["to"].as_str().unwrap(), s["actor"].as_str().unwrap()))
        .collect();
    assert_eq!(steps.len(), 4, "{history:#}");
    assert_eq!(
        steps.iter().map(|(to, _)| *to).collect::<Vec<_>>(),
        ["sending", "sent", "sent", "escalated"]
    );
    assert!(
        steps.iter().all(|(_, actor)| actor.starts_with("cli:")),
        "{steps:?}"
    );
    assert!(
        history["history"][3]["note"]
            .as_str()
            .unwrap()
            .contains("no abuse contact is known"),
        "{history:#}"
    );
    assert_eq!(
        history["history"][3]["at"].as_str().unwrap()[..10],
        on(15)[..10]
    );

    // A person moves it on; a state only removal checks set is refused.
    workspace.ok(&[
        "notice",
        "status",
        &id,
        "acknowledged",
        "--note",
        "the host answered",
    ]);
    workspace.ok(&["notice", "status", &id, "draft"]);
    let removed = workspace.run(&["notice", "status", &id, "removed"]);
    assert_eq!(removed.code, Some(2), "{removed:#?}");
}

/// An SMTP server that takes a message and hangs up before answering it: the sender cannot
/// know whether it was delivered.
fn start_smtp_that_hangs_up() -> SocketAddr {
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
                        return;
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

#[test]
fn a_notice_stuck_in_sending_is_reported_by_list_and_sent_again_only_with_force() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let host = site.addr().to_string();
    let path = workspace.write("lib/xingchen-ch1.txt", library_text("xingchen-ch1"));
    workspace.ok(&[
        "library",
        "add",
        "--rights-holder",
        "Yuewen",
        path.to_str().unwrap(),
    ]);
    crawl_and_match(&workspace, &site);
    workspace.ok(&[
        "rights-holder",
        "set",
        "Yuewen",
        "--legal-name",
        "Yuewen Ltd.",
        "--email",
        "legal@yuewen.example",
        "--signature",
        "/s/ Zhang San",
    ]);
    workspace.ok(&["notice", "create", "--site", &host, "--law", "us"]);
    workspace.ok(&["site", "contact", "add", &host, "dmca@pirate.test"]);
    let list: Vec<serde_json::Value> =
        serde_json::from_str(&workspace.ok(&["notice", "list", "--json"]).stdout).unwrap();
    let id = list[0]["id"].to_string();

    let broken = format!("smtp://{}", start_smtp_that_hangs_up());
    let cut = workspace.run(&["notice", "send", &id, "--smtp-url", &broken]);
    assert_eq!(cut.code, Some(1), "{cut:#?}");
    assert!(
        cut.one_line_error().contains("stuck in sending"),
        "{cut:#?}"
    );
    let listed = workspace.ok(&["notice", "list"]);
    assert!(listed.stdout.contains("sending"), "{listed:#?}");
    assert!(
        listed
            .stderr
            .contains(&format!("warning: notice {id} is stuck in sending since")),
        "{listed:#?}"
    );

    let (smtp, received) = start_smtp();
    let smtp_url = format!("smtp://{smtp}");
    let retry = workspace.run(&["notice", "send", &id, "--smtp-url", &smtp_url]);
    assert!(retry.one_line_error().contains("--force"), "{retry:#?}");
    assert!(received.lock().unwrap().is_empty());
    let forced = workspace.ok(&["notice", "send", &id, "--force", "--smtp-url", &smtp_url]);
    assert!(
        forced.stdout.contains("sent to dmca@pirate.test"),
        "{forced:#?}"
    );
    assert_eq!(received.lock().unwrap().len(), 1);
    let listed = workspace.ok(&["notice", "list"]);
    assert!(!listed.stderr.contains("stuck"), "{listed:#?}");
}
