//! What the admin web and the API hand out as files and figures (issue 40): evidence packages
//! with the trusted timestamp `copytrace evidence` gives them (against a real RFC 3161 TSA,
//! OpenSSL's, started here), the weekly report's page and workbook, and the search-engine and
//! abuse exports of a notice, each the caller's own only (another holder's is a 404).

mod harness;
#[path = "../../service/tests/support/tsa.rs"]
mod tsa;

use std::io::Read;

use copytrace_service::alerts::AlertSettings;
use copytrace_service::evidence;
use copytrace_service::timestamp::{Trust, TsaSettings, read_trusted};
use harness::{OTHER_RIGHTS_HOLDER, PASSWORD, RIGHTS_HOLDER, Site};
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, COOKIE, SET_COOKIE};

/// A logged-in browser session: its cookie and CSRF token.
struct Session {
    cookie: String,
    csrf: String,
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn cookie_pair(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(|v| v.split(';').next().unwrap().to_owned())
}

fn csrf_of(html: &str) -> String {
    let start = html.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    html[start..start + html[start..].find('"').unwrap()].to_owned()
}

/// Logs `email` in, with the interface in `lang`.
async fn login(site: &Site, email: &str, lang: &str) -> Session {
    let http = http();
    let form = http.get(site.url("/login")).send().await.unwrap();
    let login_cookie = cookie_pair(&form, "copytrace_csrf").unwrap();
    let csrf = csrf_of(&form.text().await.unwrap());
    let response = http
        .post(site.url("/login"))
        .header(COOKIE, &login_cookie)
        .form(&[
            ("csrf", csrf.as_str()),
            ("email", email),
            ("password", PASSWORD),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "{email} logs in");
    let cookie = format!(
        "{}; copytrace_lang={lang}",
        cookie_pair(&response, "copytrace_session").unwrap()
    );
    let home = get(site, "/", &cookie).await.text().await.unwrap();
    Session {
        csrf: csrf_of(&home),
        cookie,
    }
}

async fn get(site: &Site, path: &str, cookie: &str) -> reqwest::Response {
    http()
        .get(site.url(path))
        .header(COOKIE, cookie)
        .send()
        .await
        .unwrap()
}

/// Posts a form with the session's CSRF token.
async fn post(site: &Site, path: &str, session: &Session) -> reqwest::Response {
    http()
        .post(site.url(path))
        .header(COOKIE, &session.cookie)
        .form(&[("csrf", session.csrf.as_str())])
        .send()
        .await
        .unwrap()
}

/// Unpacks a ZIP archive into a new temporary directory; returns it and the names inside.
fn unzip(bytes: &[u8]) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut names = Vec::new();
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).unwrap();
        let name = file.name().unwrap().into_owned();
        let path = dir.path().join(&name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut content = Vec::new();
        file.read_to_end(&mut content).unwrap();
        std::fs::write(&path, content).unwrap();
        names.push(name);
    }
    (dir, names)
}

/// Checks an evidence ZIP of match `id`: it holds `manifest.tsr`, and the unpacked package
/// verifies, token included, against the TSA's CA and the store (as `copytrace evidence
/// verify --tsa-cert CA DIR` does).
async fn assert_stamped_package(site: &Site, bytes: &[u8], id: i64, ca: &std::path::Path) {
    let (dir, names) = unzip(bytes);
    assert!(
        names.contains(&format!("evidence-{id}/manifest.tsr")),
        "the archive has the timestamp token: {names:?}"
    );
    let package = dir.path().join(format!("evidence-{id}"));
    let trusted = read_trusted(ca).unwrap();
    let check = evidence::verify_package(&package, Some(site.store.as_ref()), Some(&trusted))
        .await
        .unwrap();
    assert!(check.ok(), "the package verifies: {:?}", check.problems);
    let stamp = check.timestamp.expect("the token was checked");
    assert!(
        matches!(&stamp.trust, Trust::Chained(anchor) if anchor.contains("Web Test Root CA")),
        "{:?}",
        stamp.trust
    );
    // A changed file is caught, the token still naming the manifest it stamped.
    std::fs::write(package.join("page.txt"), "altered").unwrap();
    let check = evidence::verify_package(&package, Some(site.store.as_ref()), Some(&trusted))
        .await
        .unwrap();
    assert!(!check.ok(), "an altered file fails verification");
}

#[tokio::test]
async fn evidence_zips_from_the_web_and_the_api_carry_the_trusted_timestamp() {
    let authority = tsa::TestTsa::start("Web");
    let site = Site::start_with_mail(AlertSettings {
        timestamps: Some(TsaSettings::parse(&authority.url).unwrap()),
        ..AlertSettings::default()
    })
    .await;
    let id = site.seeded.night_rain_match;

    // The web: the holder's own match.
    let session = login(&site, RIGHTS_HOLDER, "en").await;
    let response = post(&site, &format!("/matches/{id}/package"), &session).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[CONTENT_TYPE], "application/zip");
    let bytes = response.bytes().await.unwrap();
    assert_stamped_package(&site, &bytes, id, &authority.ca_cert).await;
    assert_eq!(authority.answered(), 1);

    // The API.
    let (token, _) =
        copytrace_service::accounts::create_api_token(site.store.as_ref(), RIGHTS_HOLDER, "zip")
            .await
            .unwrap();
    let response = http()
        .post(site.url(&format!("/api/v1/matches/{id}/evidence")))
        .header(AUTHORIZATION, format!("Bearer {token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = response.bytes().await.unwrap();
    assert_stamped_package(&site, &bytes, id, &authority.ca_cert).await;
    assert_eq!(authority.answered(), 2);
    // Both packages and their tokens are recorded with the match.
    let recorded = site.store.evidence_packages(id).await.unwrap();
    assert_eq!(recorded.len(), 2);
    assert!(
        recorded.iter().all(|p| p.timestamp.is_some()),
        "{recorded:?}"
    );

    // Another holder's match is a 404, and nothing is stamped for it.
    let other = login(&site, OTHER_RIGHTS_HOLDER, "en").await;
    let response = post(&site, &format!("/matches/{id}/package"), &other).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(authority.answered(), 2);
}

/// A tiny valid PNG (1×1, grey).
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x3a, 0x7e, 0x9b,
    0x55, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x68, 0x00, 0x00, 0x00,
    0x82, 0x00, 0x81, 0x77, 0xcd, 0x72, 0xb6, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// Uploads `bytes` as the signature image of holder `id` from the profile page's form.
async fn upload_signature(
    site: &Site,
    session: &Session,
    id: i64,
    csrf: &str,
    bytes: &[u8],
) -> reqwest::Response {
    let form = reqwest::multipart::Form::new()
        .text("csrf", csrf.to_owned())
        .part(
            "image",
            reqwest::multipart::Part::bytes(bytes.to_vec()).file_name("signature.png"),
        );
    http()
        .post(site.url(&format!("/holders/{id}/signature-image")))
        .header(COOKIE, &session.cookie)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_signature_image_is_uploaded_checked_and_shown_to_its_holder_only() {
    let site = Site::start().await;
    let store = site.store.as_ref();
    let a = copytrace_service::holders::find(store, harness::HOLDER_A)
        .await
        .unwrap()
        .id;
    let b = copytrace_service::holders::find(store, harness::HOLDER_B)
        .await
        .unwrap()
        .id;
    let session = login(&site, RIGHTS_HOLDER, "zh").await;

    // Without the form's CSRF token: refused, nothing stored.
    let response = upload_signature(&site, &session, a, "forged", PNG).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    // Not a PNG or JPEG, whatever its name: refused with why, in the form.
    let response = upload_signature(&site, &session, a, &session.csrf, b"GIF89a not a png").await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(
        response
            .text()
            .await
            .unwrap()
            .contains("neither a PNG nor a JPEG"),
        "the reason is shown"
    );
    assert_eq!(store.signature_image(a).await.unwrap(), None);

    let response = upload_signature(&site, &session, a, &session.csrf, PNG).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let image = get(
        &site,
        &format!("/holders/{a}/signature-image"),
        &session.cookie,
    )
    .await;
    assert_eq!(image.status(), StatusCode::OK);
    assert_eq!(image.headers()[CONTENT_TYPE], "image/png");
    assert_eq!(image.bytes().await.unwrap().as_ref(), PNG);
    let profile = get(&site, &format!("/holders/{a}/profile"), &session.cookie)
        .await
        .text()
        .await
        .unwrap();
    assert!(
        profile.contains(&format!("src=\"/holders/{a}/signature-image\"")),
        "the profile page shows it"
    );

    // A notice of the holder shows it under its text.
    let notice = notice_of_a(&site).await;
    let page = get(&site, &format!("/notices/{}", notice.id), &session.cookie)
        .await
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(&format!("<img src=\"/holders/{a}/signature-image\"")),
        "{page}"
    );

    // Another holder's image, and uploading to another holder: 404.
    let other = login(&site, OTHER_RIGHTS_HOLDER, "en").await;
    let response = get(
        &site,
        &format!("/holders/{a}/signature-image"),
        &other.cookie,
    )
    .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = upload_signature(&site, &other, a, &other.csrf, PNG).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(store.signature_image(b).await.unwrap(), None);

    // The API: the same check, the same tenancy.
    let (token, _) = copytrace_service::accounts::create_api_token(store, RIGHTS_HOLDER, "sig")
        .await
        .unwrap();
    let put = |id: i64, bytes: &'static [u8]| {
        http()
            .put(site.url(&format!("/api/v1/holders/{id}/signature-image")))
            .header(AUTHORIZATION, format!("Bearer {token}"))
            .body(bytes)
            .send()
    };
    let refused = put(a, b"not an image").await.unwrap();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let stored = put(a, PNG).await.unwrap();
    assert_eq!(stored.status(), StatusCode::OK);
    let body: serde_json::Value = serde_json::from_str(&stored.text().await.unwrap()).unwrap();
    assert_eq!(body["signature_image"], "image/png");
    assert_eq!(put(b, PNG).await.unwrap().status(), StatusCode::NOT_FOUND);
    let removed = http()
        .delete(site.url(&format!("/api/v1/holders/{a}/signature-image")))
        .header(AUTHORIZATION, format!("Bearer {token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), StatusCode::OK);
    assert_eq!(store.signature_image(a).await.unwrap(), None);
}

/// Gives holder A a profile and writes its notice to daoban.example (with evidence packages).
async fn notice_of_a(site: &Site) -> copytrace_store::Notice {
    let store = site.store.as_ref();
    copytrace_service::holders::set_profile(
        store,
        harness::HOLDER_A,
        &copytrace_service::holders::ProfileUpdate {
            legal_name: Some("星河文学有限公司".into()),
            address: Some("北京市海淀区".into()),
            email: Some("legal@xinghe.example".into()),
            ..Default::default()
        },
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    let evidence = tempfile::tempdir().unwrap();
    copytrace_service::notices::create(
        store,
        &copytrace_service::notices::NoticeRequest {
            holder: Some(harness::HOLDER_A),
            site: "daoban.example",
            law: None,
            evidence: Some(&copytrace_service::notices::EvidenceOutput {
                dir: evidence.path().to_owned(),
                screenshot: evidence::ScreenshotSettings::Skip("not in this test".into()),
                timestamps: None,
            }),
            at: chrono::Utc::now(),
        },
    )
    .await
    .unwrap()
}

/// The text of `response`, asserting its status.
async fn text_of(response: reqwest::Response, status: StatusCode) -> String {
    assert_eq!(response.status(), status, "{}", response.url());
    response.text().await.unwrap()
}

#[tokio::test]
async fn the_weekly_report_page_shows_the_reports_figures_to_their_holder_only() {
    use copytrace_service::reports::{self, Period};
    use copytrace_store::ReportAudience;
    let site = Site::start().await;
    let store = site.store.as_ref();
    let holder = |name: &'static str| async move {
        copytrace_service::holders::find(store, name)
            .await
            .unwrap()
            .id
    };
    let (a, b) = (
        holder(harness::HOLDER_A).await,
        holder(harness::HOLDER_B).await,
    );
    // The week of the seeded copies of the last days; any day of it names it.
    let today = chrono::Utc::now().date_naive();
    let period = Period::previous_week(today + chrono::Duration::days(7));
    let week = today.to_string();

    for (lang, title) in [("en", "Weekly report"), ("zh", "周报")] {
        let session = login(&site, RIGHTS_HOLDER, lang).await;
        let html = text_of(
            get(
                &site,
                &format!("/reports/weekly?week={week}"),
                &session.cookie,
            )
            .await,
            StatusCode::OK,
        )
        .await;
        assert!(html.contains(title), "{lang}: {html}");
        let report = reports::weekly(
            store,
            ReportAudience::Holder(a),
            period,
            lang,
            chrono::Utc::now(),
        )
        .await
        .unwrap();
        assert!(report.new_copies > 0, "the seeded copies are in the week");
        for (label, value) in report.headline() {
            let row = format!(
                "<th style=\"text-align: left\">{label}</th><td class=\"num\">{value}</td>"
            );
            assert!(html.contains(&row), "{lang}: lacks {row}");
        }
        assert!(html.contains(harness::HOLDER_A) && !html.contains(harness::HOLDER_B));
    }

    // Its own report only: naming another holder is 404, as a holder that does not exist.
    let session = login(&site, RIGHTS_HOLDER, "en").await;
    for path in [
        format!("/reports/weekly?holder={b}"),
        format!("/reports/weekly.xlsx?week={week}&holder={b}"),
        "/reports/weekly?holder=999999".to_owned(),
    ] {
        let response = get(&site, &path, &session.cookie).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
    }

    // The workbook is the mail's: its summary sheet has the headline figures.
    let xlsx = get(
        &site,
        &format!("/reports/weekly.xlsx?week={week}"),
        &session.cookie,
    )
    .await;
    assert_eq!(xlsx.status(), StatusCode::OK);
    assert_eq!(
        xlsx.headers()[CONTENT_TYPE],
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    );
    let bytes = xlsx.bytes().await.unwrap();
    let (dir, names) = unzip(&bytes);
    assert!(
        names.iter().any(|n| n == "xl/worksheets/sheet1.xml"),
        "{names:?}"
    );
    let text: String = names
        .iter()
        .filter(|n| n.ends_with(".xml"))
        .map(|n| std::fs::read_to_string(dir.path().join(n)).unwrap())
        .collect();
    assert!(text.contains("new_copies"), "the summary sheet");

    // Staff: the staff report, or any one holder's.
    let admin = login(&site, harness::ADMIN, "en").await;
    let staff = text_of(
        get(
            &site,
            &format!("/reports/weekly?week={week}"),
            &admin.cookie,
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert!(
        staff.contains("<h2>all rights holders (staff) · "),
        "the staff report: {staff}"
    );
    let of_b = text_of(
        get(
            &site,
            &format!("/reports/weekly?week={week}&holder={b}"),
            &admin.cookie,
        )
        .await,
        StatusCode::OK,
    )
    .await;
    let report = reports::weekly(
        store,
        ReportAudience::Holder(b),
        period,
        "en",
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    assert!(
        of_b.contains(&format!("<h2>{} · ", harness::HOLDER_B)),
        "{of_b}"
    );
    let (label, value) = &report.headline()[0];
    assert!(
        of_b.contains(&format!("{label}</th><td class=\"num\">{value}<")),
        "{of_b}"
    );
    // An operator has no statistics.
    let operator = login(&site, harness::OPERATOR, "en").await;
    assert_eq!(
        get(&site, "/reports/weekly", &operator.cookie)
            .await
            .status(),
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn a_notices_search_engine_and_abuse_exports_download_for_its_holder_only() {
    use copytrace_analytics::delisting::Engine;
    use copytrace_service::notices::{self, AbuseOptions, ExportKind};
    let site = Site::start().await;
    let notice = notice_of_a(&site).await;
    let session = login(&site, RIGHTS_HOLDER, "zh").await;
    let page = text_of(
        get(&site, &format!("/notices/{}", notice.id), &session.cookie).await,
        StatusCode::OK,
    )
    .await;
    for format in ["google", "bing", "baidu", "abuse"] {
        let link = format!("href=\"/notices/{}/export/{format}\"", notice.id);
        assert!(page.contains(&link), "the notice page links {format}");
    }
    for (format, engine) in [
        ("google", Engine::Google),
        ("bing", Engine::Bing),
        ("baidu", Engine::Baidu),
    ] {
        let response = get(
            &site,
            &format!("/notices/{}/export/{format}", notice.id),
            &session.cookie,
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            response.headers()["content-disposition"]
                .to_str()
                .unwrap()
                .contains(&format!("notice-{}-{format}.txt", notice.id))
        );
        let expected = notices::export(
            site.store.as_ref(),
            notice.id,
            None,
            ExportKind::Delisting(engine),
            &AbuseOptions::default(),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
        let text = response.text().await.unwrap();
        assert_eq!(text, expected, "{format}");
        assert!(
            text.contains("https://daoban.example/night-rain/1.html"),
            "{text}"
        );
    }
    let abuse = text_of(
        get(
            &site,
            &format!("/notices/{}/export/abuse", notice.id),
            &session.cookie,
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert!(abuse.contains("daoban.example"), "{abuse}");
    assert_eq!(
        get(
            &site,
            &format!("/notices/{}/export/pdf", notice.id),
            &session.cookie
        )
        .await
        .status(),
        StatusCode::NOT_FOUND
    );
    // Another holder's notice: 404, nothing written.
    let other = login(&site, OTHER_RIGHTS_HOLDER, "en").await;
    for format in ["google", "abuse"] {
        let response = get(
            &site,
            &format!("/notices/{}/export/{format}", notice.id),
            &other.cookie,
        )
        .await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{format}");
    }
}
