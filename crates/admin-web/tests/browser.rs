//! The admin web in a real headless Chromium, driven over the DevTools protocol: the forms are
//! filled and submitted, links and buttons clicked, and what the browser shows is read from
//! its DOM. These tests fail, never skip, without Chromium (`COPYTRACE_CHROMIUM` names it;
//! `./scripts/test` installs it).
//!
//! With `COPYTRACE_SCREENSHOTS=DIR` they also save screenshots of the main pages in `DIR`
//! (`docs/screenshots` holds the ones the README shows).

mod harness;

use chromiumoxide::cdp::browser_protocol::network::CookieParam;
use harness::{
    ADMIN, ANALYST, HOLDER_A, HOLDER_B, NIGHT_RAIN, NIGHT_RAIN_PASSAGES, OPERATOR,
    OTHER_RIGHTS_HOLDER, PASSWORD, Prefers, REPLACED, RIGHTS_HOLDER, RIVER_TOWN, SECRET,
    SUBSTITUTED, Site, Tab, launch,
};

/// Titles in the dashboard's "most pirated works" table.
const DASHBOARD_WORKS: &str = ".grid .card:first-child td:first-child";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rights_holder_logs_in_through_the_form_and_sees_only_their_own_works() {
    let site = Site::start().await;
    let browser = launch().await;
    let tab = Tab::open(&browser, &site, Prefers::Chinese).await;

    tab.goto("/").await;
    assert_eq!(
        tab.path().await,
        "/login",
        "a visitor is sent to the login form"
    );
    assert_eq!(tab.text("h1").await, "登录");
    tab.screenshot("login").await;

    tab.login(RIGHTS_HOLDER, "not the password").await;
    assert_eq!(tab.path().await, "/login");
    assert_eq!(tab.text("[role=alert]").await, "邮箱或密码不正确。");
    assert_eq!(
        tab.eval::<String>("document.querySelector('#email').value")
            .await,
        RIGHTS_HOLDER,
        "the form keeps the e-mail address"
    );

    tab.login(RIGHTS_HOLDER, PASSWORD).await;
    assert_eq!(tab.path().await, "/", "logged in, on the dashboard");
    assert_eq!(tab.text("h1").await, format!("概览 · {HOLDER_A}"));
    let account = tab.text("header .right span").await;
    assert!(
        account.contains(RIGHTS_HOLDER) && account.contains("权利人"),
        "{account}"
    );
    let mut works = tab.texts(DASHBOARD_WORKS).await;
    works.sort();
    let mut own = vec![NIGHT_RAIN.to_owned(), RIVER_TOWN.to_owned()];
    own.sort();
    assert_eq!(works, own, "their own copied works");
    let body: String = tab.eval("document.body.innerText").await;
    assert!(
        !body.contains(SECRET) && !body.contains(HOLDER_B),
        "nothing of the other holder: {body}"
    );
    assert_eq!(
        tab.texts(".figure b").await,
        ["2", "3", "2", "0"],
        "works copied, infringing pages, sites, removed"
    );
    // Copies found today, 3 and 9 days ago: three bars (the other holder's copy is not one).
    assert_eq!(tab.count("svg rect:not([height='0'])").await, 3);
    tab.screenshot("dashboard-zh").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_page_reached_by_clicking_marks_the_substituted_characters_on_both_sides() {
    let site = Site::start().await;
    let seeded = site.seeded;
    let browser = launch().await;
    let tab = Tab::open(&browser, &site, Prefers::Chinese).await;
    tab.login(RIGHTS_HOLDER, PASSWORD).await;

    tab.click_and_wait("header a[href='/works']").await;
    assert_eq!(tab.path().await, "/works");
    let mut titles = tab.texts("table a[href^='/works/']").await;
    titles.sort();
    let mut own = vec![NIGHT_RAIN.to_owned(), RIVER_TOWN.to_owned()];
    own.sort();
    assert_eq!(titles, own);
    tab.screenshot("works").await;

    tab.click_and_wait(&format!("a[href='/works/{}']", seeded.night_rain))
        .await;
    assert_eq!(tab.path().await, format!("/works/{}", seeded.night_rain));
    assert_eq!(tab.text("h1").await, NIGHT_RAIN);
    assert_eq!(tab.count("a[href^='/matches/']").await, 2, "its two copies");
    tab.screenshot("work").await;

    let link = format!("a[href='/matches/{}']", seeded.night_rain_match);
    tab.click_and_wait(&link).await;
    assert_eq!(
        tab.path().await,
        format!("/matches/{}", seeded.night_rain_match)
    );
    assert_eq!(tab.count(".pair").await, NIGHT_RAIN_PASSAGES.len());
    assert_eq!(
        tab.texts(".pair > div:nth-child(2) mark").await,
        SUBSTITUTED,
        "the page's side marks what it substituted"
    );
    assert_eq!(
        tab.texts(".pair > div:nth-child(1) del").await,
        REPLACED,
        "the original's side strikes out what was replaced"
    );
    assert_eq!(tab.count("mark").await, SUBSTITUTED.len(), "no other marks");
    assert_eq!(tab.count("del").await, REPLACED.len(), "no other deletions");
    // Each side, markup aside, is the passage itself: nothing dropped or doubled.
    let sides: Vec<(String, String)> = tab
        .eval(
            "Array.from(document.querySelectorAll('.pair'), pair => {
                const text = div => { const c = div.cloneNode(true); c.querySelector('h3').remove();
                                      return c.textContent; };
                return [text(pair.children[0]), text(pair.children[1])];
            })",
        )
        .await;
    let expected: Vec<(String, String)> = NIGHT_RAIN_PASSAGES
        .iter()
        .map(|(original, copy)| ((*original).to_owned(), (*copy).to_owned()))
        .collect();
    assert_eq!(sides, expected);
    tab.screenshot("match").await;

    // A word-for-word copy marks nothing.
    tab.goto(&format!("/matches/{}", seeded.river_town_match))
        .await;
    assert_eq!(tab.count(".pair").await, 1);
    assert_eq!(tab.count("mark, del").await, 0);

    // The other holder's match is not shown, not even its title.
    match tab
        .try_goto(&format!("/matches/{}", seeded.secret_match))
        .await
    {
        Ok(status) => assert_eq!(status, 404),
        // A 404 without a body: Chromium shows its own error page.
        Err(error) => assert!(error.contains("ERR_HTTP_RESPONSE_CODE_FAILURE"), "{error}"),
    }
    let body: String = tab.eval("document.body.innerText").await;
    assert!(!body.contains(SECRET), "{body}");
    assert_eq!(tab.count(".pair").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_header_link_switches_the_language_and_the_choice_survives_a_reload() {
    let site = Site::start().await;
    let browser = launch().await;
    let tab = Tab::open(&browser, &site, Prefers::Chinese).await;
    tab.login(RIGHTS_HOLDER, PASSWORD).await;
    assert_eq!(tab.html_lang().await, "zh-CN");
    assert_eq!(tab.text("form[action='/logout'] button").await, "退出");

    tab.click_and_wait("header a[hreflang='en']").await;
    assert_eq!(tab.path().await, "/", "back on the page it was chosen on");
    assert_eq!(tab.html_lang().await, "en");
    assert_eq!(tab.text("h1").await, format!("Dashboard · {HOLDER_A}"));
    assert_eq!(tab.text("form[action='/logout'] button").await, "Log out");
    assert_eq!(tab.text("header a[hreflang='zh']").await, "中文");
    assert!(
        tab.cookie_names()
            .await
            .contains(&"copytrace_lang".to_owned())
    );

    tab.reload().await;
    assert_eq!(tab.html_lang().await, "en", "the cookie outlives a reload");
    assert_eq!(tab.text("h1").await, format!("Dashboard · {HOLDER_A}"));
    tab.screenshot("dashboard-en").await;

    tab.click_and_wait("header a[href='/works']").await;
    assert_eq!(tab.text("h1").await, "Works", "and holds on every page");

    tab.click_and_wait("header a[hreflang='zh']").await;
    assert_eq!(tab.path().await, "/works");
    assert_eq!(tab.html_lang().await, "zh-CN");
    assert_eq!(tab.text("h1").await, "作品");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_choice_the_browsers_preferred_language_is_used() {
    let site = Site::start().await;
    let browser = launch().await;

    let chinese = Tab::open(&browser, &site, Prefers::Chinese).await;
    chinese.goto("/login").await;
    assert_eq!(chinese.html_lang().await, "zh-CN");
    assert_eq!(chinese.text("h1").await, "登录");
    assert_eq!(chinese.text("label[for=email]").await, "邮箱");
    assert_eq!(chinese.text("label[for=password]").await, "密码");

    let english = Tab::open(&browser, &site, Prefers::English).await;
    english.goto("/login").await;
    assert_eq!(english.html_lang().await, "en");
    assert_eq!(english.text("h1").await, "Log in");
    assert_eq!(english.text("label[for=email]").await, "E-mail");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logging_out_with_the_button_ends_the_session() {
    let site = Site::start().await;
    let browser = launch().await;
    let tab = Tab::open(&browser, &site, Prefers::English).await;
    tab.login(RIGHTS_HOLDER, PASSWORD).await;
    assert_eq!(tab.path().await, "/");
    let session = tab
        .page
        .get_cookies()
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.name == "copytrace_session")
        .expect("a session cookie after logging in");

    tab.logout().await;
    assert_eq!(tab.path().await, "/login");
    assert!(
        !tab.cookie_names()
            .await
            .contains(&"copytrace_session".to_owned())
    );
    tab.goto("/").await;
    assert_eq!(
        tab.path().await,
        "/login",
        "the dashboard needs a login again"
    );
    tab.goto(&format!("/works/{}", site.seeded.night_rain))
        .await;
    assert_eq!(tab.path().await, "/login");

    // The old token, put back by hand, is dead on the server too.
    let cookie = CookieParam::builder()
        .name(session.name)
        .value(session.value)
        .url(site.url("/"))
        .build()
        .unwrap();
    tab.page.set_cookie(cookie).await.unwrap();
    tab.goto("/").await;
    assert_eq!(
        tab.path().await,
        "/login",
        "a logged-out session stays ended"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn staff_of_every_role_see_every_holders_works_and_holder_b_only_its_own() {
    let site = Site::start().await;
    let browser = launch().await;
    let tab = Tab::open(&browser, &site, Prefers::English).await;
    let mut everything = vec![
        NIGHT_RAIN.to_owned(),
        RIVER_TOWN.to_owned(),
        SECRET.to_owned(),
    ];
    everything.sort();
    for (email, role) in [
        (ADMIN, "admin"),
        (OPERATOR, "operator"),
        (ANALYST, "analyst"),
    ] {
        tab.login(email, PASSWORD).await;
        assert_eq!(
            tab.text("h1").await,
            "Dashboard",
            "{email}: no holder named"
        );
        assert_eq!(
            tab.text("header .right span").await,
            format!("{email} · {role}")
        );
        let mut works = tab.texts(DASHBOARD_WORKS).await;
        works.sort();
        assert_eq!(works, everything, "{email}");
        tab.logout().await;
    }
    tab.login(OTHER_RIGHTS_HOLDER, PASSWORD).await;
    assert_eq!(tab.text("h1").await, format!("Dashboard · {HOLDER_B}"));
    assert_eq!(tab.texts(DASHBOARD_WORKS).await, [SECRET]);
}

/// Sets the value of the form field `name` the way a user's typing would end, for fields that
/// already hold a default.
async fn set_field(tab: &Tab, name: &str, value: &str) {
    let script = format!(
        "document.querySelector('[name={name}]').value = {}, true",
        serde_json::to_string(value).unwrap()
    );
    assert!(tab.eval::<bool>(&script).await, "setting {name}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_sees_a_bad_cron_refused_and_a_good_one_previewed_and_created() {
    let site = Site::start().await;
    let browser = launch().await;
    let tab = Tab::open(&browser, &site, Prefers::English).await;
    tab.login(OPERATOR, PASSWORD).await;
    tab.click_and_wait("header nav a[href='/schedules']").await;
    assert_eq!(tab.text("h1").await, "Schedules");

    tab.fill("#new-schedule [name=name]", "nightly-daoban")
        .await;
    set_field(&tab, "cron", "61 * * * *").await;
    set_field(&tab, "timezone", "Asia/Shanghai").await;
    tab.fill("#seeds", "https://daoban.example/").await;
    tab.click_and_wait("#new-schedule button.primary").await;
    assert_eq!(tab.status().await, 400, "a bad cron is refused");
    let error = tab.text("#schedule-error").await;
    assert!(!error.is_empty(), "the error is shown");
    assert_eq!(
        tab.eval::<String>("document.querySelector('[name=name]').value")
            .await,
        "nightly-daoban",
        "what was typed is kept"
    );
    assert_eq!(tab.count("#next-runs li").await, 0);
    assert!(
        copytrace_service::schedules::list(site.store.as_ref())
            .await
            .unwrap()
            .is_empty(),
        "nothing was created"
    );
    tab.screenshot("schedule-error").await;

    // The preview shows the next five runs in the schedule's zone: 02:30 in Shanghai.
    set_field(&tab, "cron", "30 2 * * *").await;
    tab.click_and_wait("#new-schedule button[formmethod=get]")
        .await;
    let next = tab.texts("#next-runs li").await;
    assert_eq!(next.len(), 5, "{next:?}");
    assert!(
        next.iter()
            .all(|at| at.contains("02:30") && at.contains("CST")),
        "{next:?}"
    );
    tab.screenshot("schedule-preview").await;

    tab.click_and_wait("#new-schedule button.primary").await;
    assert_eq!(tab.path().await, "/schedules/nightly-daoban");
    assert_eq!(tab.count("#next-runs li").await, 5);
    let stored = copytrace_service::schedules::list(site.store.as_ref())
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].cron, "30 2 * * *");
    assert_eq!(stored[0].timezone, "Asia/Shanghai");
    assert_eq!(stored[0].seeds, ["https://daoban.example/"]);

    // Paused, it has no next runs; run now queues a run.
    tab.click_and_wait("form[action$='/pause'] button").await;
    assert_eq!(tab.count("#next-runs li").await, 0);
    tab.click_and_wait("form[action$='/run'] button").await;
    assert_eq!(tab.count("table tr").await, 2, "one run listed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_analyst_filters_the_statistics_by_site() {
    let site = Site::start().await;
    let browser = launch().await;
    let tab = Tab::open(&browser, &site, Prefers::Chinese).await;
    tab.login(ANALYST, PASSWORD).await;
    tab.click_and_wait("header nav a[href='/stats']").await;
    assert_eq!(tab.text("h1").await, "统计");
    let mut all = tab.texts("#stats-table td:first-child").await;
    all.sort();
    let mut every_work = vec![
        NIGHT_RAIN.to_owned(),
        RIVER_TOWN.to_owned(),
        SECRET.to_owned(),
    ];
    every_work.sort();
    assert_eq!(all, every_work, "an analyst sees every holder's works");

    tab.fill("#filters [name=site]", "mirror.example").await;
    tab.click_and_wait("#filters button").await;
    assert!(tab.path().await.starts_with("/stats"));
    assert_eq!(
        tab.texts("#stats-table td:first-child").await,
        [NIGHT_RAIN],
        "only the work copied on mirror.example"
    );
    tab.screenshot("statistics").await;

    tab.click_and_wait("nav.tabs a[href^='/stats?table=sites']")
        .await;
    assert_eq!(
        tab.texts("#stats-table td:first-child").await,
        ["mirror.example"],
        "the filter is kept across tables"
    );
    // A filter that is not a date is named, not run.
    set_field(&tab, "since", "").await;
    let bad = format!("{}&since=yesterday", tab.path().await);
    tab.goto(&bad).await;
    assert!(tab.text(".error").await.contains("yesterday"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rights_holder_downloads_an_xlsx_export_of_their_own_copies() {
    use chromiumoxide::cdp::browser_protocol::browser::{
        SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
    };
    let site = Site::start().await;
    let browser = launch().await;
    let tab = Tab::open(&browser, &site, Prefers::Chinese).await;
    let downloads = tempfile::tempdir().unwrap();
    let mut allow = SetDownloadBehaviorParams::new(SetDownloadBehaviorBehavior::Allow);
    allow.download_path = Some(downloads.path().display().to_string());
    tab.page.execute(allow).await.expect("allowing downloads");
    tab.login(RIGHTS_HOLDER, PASSWORD).await;
    tab.goto("/stats").await;
    tab.page
        .find_element("#exports a[href^='/exports/matches']")
        .await
        .expect("the export link")
        .click()
        .await
        .expect("clicking the export link");
    let started = std::time::Instant::now();
    let file = loop {
        let done: Vec<_> = std::fs::read_dir(downloads.path())
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "xlsx"))
            .collect();
        if let Some(file) = done.first() {
            break file.clone();
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "no XLSX file downloaded"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("copytrace-matches-"), "{name}");
    // The workbook is read back with openpyxl, in the Python ./scripts/test found it in.
    let python = std::env::var("COPYTRACE_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let read = std::process::Command::new(&python)
        .arg("-c")
        .arg(
            "import sys, openpyxl\n\
             sheet = openpyxl.load_workbook(sys.argv[1], read_only=True).active\n\
             for row in sheet.iter_rows(values_only=True):\n\
             \x20   print('\\t'.join('' if v is None else str(v) for v in row))",
        )
        .arg(&file)
        .output()
        .unwrap_or_else(|error| panic!("cannot run {python}: {error}"));
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let sheet = String::from_utf8(read.stdout).unwrap();
    let rows: Vec<&str> = sheet.lines().collect();
    assert_eq!(
        rows.len(),
        1 + 3,
        "a header and holder A's three copies:\n{sheet}"
    );
    assert!(sheet.contains(NIGHT_RAIN) && sheet.contains(RIVER_TOWN));
    assert!(!sheet.contains(SECRET), "nothing of holder B's");
}

/// A work of holder A whose title is markup, copied by a crawled page whose title and text are
/// markup too; returns the work's and the match's ids. Each piece sets `window.__xss` if run.
async fn hostile_copy(site: &Site) -> (i64, i64) {
    use copytrace_store::{EvidencePassage, MatchFilter, NewMatch, NewPage, NewWork};
    let store = site.store.as_ref();
    let holder = store.ensure_rights_holder(HOLDER_A).await.unwrap();
    let text = "雨夜里少年推开木门，灯下的老人抬起头来。".repeat(10);
    let (work, _) = store
        .upsert_work(&NewWork {
            rights_holder_id: holder,
            external_id: "a-hostile".into(),
            title: "<script>window.__xss=1</script>毒".into(),
            content_hash: copytrace_store::sha256_hex(text.as_bytes()),
            content: text.clone(),
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
    let markup = "<img src=x onerror=\"window.__xss=2\"><svg onload=\"window.__xss=3\"></svg>";
    let page_text = format!("{markup}{text}");
    let hash = copytrace_store::sha256_hex(page_text.as_bytes());
    let page = store
        .upsert_page(&NewPage {
            url: "https://pirate.example/hostile.html".into(),
            title: Some("\"><img src=x onerror=\"window.__xss=4\">".into()),
            text: page_text.clone(),
            content_hash: hash.clone(),
            http_status: 200,
            fetched_at: chrono::Utc::now(),
            etag: None,
            last_modified: None,
            capture: None,
        })
        .await
        .unwrap()
        .id;
    let copied = u32::try_from(markup.len() + "雨夜里少年推开木门，".len()).unwrap();
    let found = NewMatch {
        work_id: work,
        score: 0.95,
        coverage: 0.9,
        containment: 0.9,
        copied_chars: 200,
        method: "simhash+align".into(),
        auto_confirm: true,
        evidence: vec![EvidencePassage {
            page_start: 0,
            page_end: copied,
            work_start: 0,
            work_end: u32::try_from("雨夜里少年推开木门，".len()).unwrap(),
        }],
    };
    store
        .record_page_matches(page, &hash, &[found], chrono::Utc::now())
        .await
        .unwrap();
    let matched = store
        .list_matches(&MatchFilter {
            work_id: Some(work),
            ..MatchFilter::default()
        })
        .await
        .unwrap()[0]
        .id;
    (work, matched)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_from_crawled_pages_and_titles_runs_nothing_in_the_browser() {
    let site = Site::start().await;
    let (work, matched) = hostile_copy(&site).await;
    let browser = launch().await;
    let tab = Tab::open(&browser, &site, Prefers::English).await;
    tab.login(RIGHTS_HOLDER, PASSWORD).await;
    for path in [
        "/".to_owned(),
        "/works".to_owned(),
        format!("/works/{work}"),
        "/matches".to_owned(),
        "/review?review=all".to_owned(),
        format!("/matches/{matched}"),
        "/stats".to_owned(),
        "/sites/pirate.example".to_owned(),
    ] {
        tab.goto(&path).await;
        assert!(
            tab.eval::<bool>("window.__xss === undefined").await,
            "{path}: a script ran"
        );
        assert_eq!(
            tab.count("script, img, iframe, [onerror], [onload]").await,
            0,
            "{path}: markup from the data became elements"
        );
    }
    // The markup is shown, as text.
    tab.goto(&format!("/matches/{matched}")).await;
    let body: String = tab.eval("document.body.innerText").await;
    assert!(
        body.contains("<script>window.__xss=1</script>毒"),
        "the title as text: {body}"
    );
    assert!(
        body.contains("<img src=x onerror=\"window.__xss=2\">"),
        "the copied passage as text: {body}"
    );
}

#[path = "../../service/tests/support/mod.rs"]
mod smtp;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_edits_its_profile_licenses_a_host_and_mails_a_notice_to_a_contact_an_operator_added()
 {
    let (smtp, mailbox) = smtp::start_smtp();
    let site = Site::start_with_mail(copytrace_service::alerts::AlertSettings {
        smtp_url: Some(format!("smtp://{smtp}")),
        mail_from: "Copytrace <notices@copytrace.test>".into(),
        ..Default::default()
    })
    .await;
    let browser = launch().await;
    let tab = Tab::open(&browser, &site, Prefers::Chinese).await;

    // An operator adds the address the site's notices go to.
    tab.login(OPERATOR, PASSWORD).await;
    tab.click_and_wait("header nav a[href='/sites']").await;
    tab.click_and_wait("#site-list a[href='/sites/daoban.example']")
        .await;
    assert_eq!(tab.text("#site-contacts h2").await, "联系人");
    tab.fill("#add-contact input[name=email]", "not-an-address")
        .await;
    tab.click_and_wait("#add-contact button[type=submit]").await;
    assert!(
        tab.text("#contact-problem")
            .await
            .contains("is not an e-mail address")
    );
    tab.set("#add-contact input[name=email]", "").await;
    tab.fill("#add-contact input[name=email]", "dmca@daoban.example")
        .await;
    tab.set("#add-contact select", "copyright").await;
    tab.click_and_wait("#add-contact button[type=submit]").await;
    assert_eq!(tab.text("#contact-saved").await, "已保存。");
    assert_eq!(
        tab.texts("#site-contacts .contact-email").await,
        ["dmca@daoban.example"]
    );
    assert!(tab.text("#site-contacts").await.contains("运维添加"));
    tab.screenshot("site-contacts").await;
    tab.logout().await;

    // The rights holder fills its profile: a US notice needs a signature, a name, a contact.
    tab.login(RIGHTS_HOLDER, PASSWORD).await;
    tab.click_and_wait("header nav a[href='/holders']").await;
    assert!(tab.path().await.ends_with("/profile"), "its own profile");
    tab.set("input[name=legal_name]", "星河文学有限公司").await;
    tab.set("textarea[name=address]", "北京市海淀区中关村大街1号")
        .await;
    tab.fill("input[name=email]", "legal@xinghe.example").await;
    tab.fill("input[name=phone]", "+86 10 1234 5678").await;
    tab.set("input[name=agent_name]", "王律师").await;
    tab.set("input[name=signature]", "/s/ 王律师").await;
    tab.set("select[name=language]", "en").await;
    tab.click_and_wait("#holder-profile button[type=submit]")
        .await;
    assert_eq!(tab.text("#profile-saved").await, "已保存。");
    assert_eq!(
        tab.eval::<String>("document.querySelector('input[name=legal_name]').value")
            .await,
        "星河文学有限公司"
    );
    tab.screenshot("holder-profile").await;

    // A licensed host, for every work.
    tab.click_and_wait("#holder-tabs a[href$='/licences']")
        .await;
    tab.fill(
        "#add-licence input[name=host]",
        "https://Partner.example/books",
    )
    .await;
    tab.click_and_wait("#add-licence button[type=submit]").await;
    assert_eq!(tab.text("#licence-saved").await, "已保存。");
    assert_eq!(tab.texts(".licensed-host").await, ["partner.example"]);
    tab.screenshot("licensed-hosts").await;

    // A notice to the site, mailed from its page; a second click sends nothing.
    tab.click_and_wait("header nav a[href='/notices']").await;
    tab.fill("#new-notice input[name=site]", "daoban.example")
        .await;
    tab.set("#new-notice select[name=lang]", "en").await;
    tab.click_and_wait("#new-notice button[type=submit]").await;
    assert_eq!(tab.text("#notice-status").await, "草稿");
    tab.click_and_wait("#send-notice button[type=submit]").await;
    assert_eq!(tab.text("#notice-status").await, "已发送");
    assert_eq!(
        tab.text("#send-outcome").await,
        "通知已通过邮件发送，详见下方的处理记录。"
    );
    assert_eq!(
        tab.texts("#notice-mails .recipients").await,
        ["dmca@daoban.example"]
    );
    tab.screenshot("notice-sent").await;
    let mails = mailbox.lock().unwrap().clone();
    assert_eq!(mails.len(), 1, "mailed once");
    assert_eq!(mails[0].to, ["dmca@daoban.example"]);
    assert!(mails[0].data.contains("17 U.S.C."), "the US notice");
    // The send button is gone once sent; posting the form again (a stale tab) sends nothing.
    assert_eq!(tab.count("#send-notice").await, 0);
    let path = tab.path().await;
    let id = path
        .trim_start_matches("/notices/")
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    tab.eval::<bool>(&format!(
        "(() => {{ const f = document.createElement('form'); f.method = 'post'; \
         f.action = '/notices/{id}/send'; const c = document.createElement('input'); \
         c.name = 'csrf'; c.value = document.querySelector('input[name=csrf]').value; \
         f.appendChild(c); document.body.appendChild(f); f.submit(); return true; }})()"
    ))
    .await;
    tab.wait_for("#send-outcome").await;
    tab.wait_until(
        "document.querySelector('#send-outcome').textContent.includes('没有重复发送')",
        "the second send's answer",
    )
    .await;
    assert_eq!(mailbox.lock().unwrap().len(), 1, "nothing sent twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_weekly_report_page_shows_a_weeks_figures_in_both_languages() {
    let site = Site::start().await;
    let browser = launch().await;
    let week = chrono::Utc::now().date_naive().to_string();

    // A rights holder, in Chinese: its own report, reached from the header.
    let tab = Tab::open(&browser, &site, Prefers::Chinese).await;
    tab.login(RIGHTS_HOLDER, PASSWORD).await;
    tab.click_and_wait("header nav a[href='/reports/weekly']")
        .await;
    assert_eq!(tab.text("h1").await, "周报");
    tab.goto(&format!("/reports/weekly?week={week}")).await;
    let figures = tab.texts("#weekly-summary th").await;
    assert!(figures.len() >= 4, "{figures:?}");
    assert!(tab.text("#weekly-summary h2").await.contains(HOLDER_A));
    assert_eq!(
        tab.count("#weekly-form select").await,
        0,
        "no holder to pick"
    );
    assert!(
        !tab.texts("#weekly-sites td:first-child").await.is_empty(),
        "the sites of its copies"
    );
    tab.screenshot("weekly-report-zh").await;

    // An admin, in English (a browser of its own: the first one holds the holder's session):
    // the staff report, then one holder's picked from the form.
    let browser = launch().await;
    let tab = Tab::open(&browser, &site, Prefers::English).await;
    tab.login(ADMIN, PASSWORD).await;
    tab.goto(&format!("/reports/weekly?week={week}")).await;
    assert_eq!(tab.text("h1").await, "Weekly report");
    assert!(
        tab.text("#weekly-summary h2")
            .await
            .contains("all rights holders (staff)")
    );
    tab.screenshot("weekly-report-en").await;
    let b = copytrace_service::holders::find(site.store.as_ref(), HOLDER_B)
        .await
        .unwrap()
        .id;
    tab.eval::<serde_json::Value>(&format!(
        "document.querySelector('#weekly-form select').value = '{b}'"
    ))
    .await;
    tab.click_and_wait("#weekly-form button").await;
    assert!(tab.text("#weekly-summary h2").await.contains(HOLDER_B));
    assert!(
        tab.eval::<String>("document.querySelector('#weekly-xlsx').getAttribute('href')")
            .await
            .ends_with(&format!("holder={b}"))
    );
}
