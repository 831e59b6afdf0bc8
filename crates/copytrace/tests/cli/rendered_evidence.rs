//! `copytrace evidence` for a copy found on a page whose text a script writes: the package holds
//! what the browser showed (the rendered DOM with the copied text, the responses the scripts
//! used, a screenshot with the text on it, a manifest saying how the page was rendered) beside
//! the bytes served, and `evidence verify` catches an alteration of any of it. Needs Chromium,
//! as `evidence.rs` does.

use std::io::Read;
use std::path::Path;

use copytrace::demo::{SamplePage, SampleSite};
use copytrace_browser::{Browser, BrowserConfig, Document, Network};
use copytrace_store::sha256_hex;

use crate::helpers::{TestSite, Workspace, library_text};

/// `s` as a JavaScript string literal of `\uXXXX` escapes: nothing of the text is in the HTML.
fn escaped(s: &str) -> String {
    s.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
}

/// The paragraphs of a sample work, without its title line.
fn paragraphs_of(work: &str) -> Vec<&'static str> {
    library_text(work)
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

/// The paragraphs of `xingchen-ch1`, which the XHR chapter copies.
fn paragraphs() -> Vec<&'static str> {
    paragraphs_of("xingchen-ch1")
}

/// A chapter page with an empty content element, a heading and a short static line, whose text
/// `script` writes.
fn chapter_page(path: &str, script: &str, work: &'static str) -> SamplePage {
    SamplePage {
        path: path.to_owned(),
        label: "written by a script",
        content_type: "text/html; charset=utf-8",
        body: format!(
            "<!DOCTYPE html><html><head><meta charset=utf-8><title>第一章 雨夜来客</title></head>\
             <body style=\"margin:0;background:#fff;color:#000\"><h1 style=\"margin:8px;\
             font-size:16px\">第一章</h1><div id=\"content\" style=\"font-size:20px;\
             line-height:1.6;margin:8px\"></div>{script}</body></html>"
        )
        .into_bytes(),
        copies: vec![work],
        disallowed: false,
    }
}

/// The JSON answer the XHR chapter reads its text from (`\u` escapes: the passage is not in
/// the bytes literally, only in the DOM the script writes from them).
fn chapter_json() -> Vec<u8> {
    let items: Vec<String> = paragraphs()
        .iter()
        .map(|p| format!("\"{}\"", escaped(p)))
        .collect();
    format!("{{\"chapter\":1,\"paragraphs\":[{}]}}", items.join(",")).into_bytes()
}

/// The site: `/book/xhr.html` (an external script asks `/api/chapter/1.json` by XHR and writes
/// its paragraphs; it copies `xingchen-ch1`) and `/book/write.html` (an inline
/// `document.write`; it copies `xingchen-ch2`, so it is no alias of the first).
fn scripted_site() -> SampleSite {
    let loader = "var x = new XMLHttpRequest(); x.open('GET', '/api/chapter/1.json');\n\
                  x.onload = function () { var d = JSON.parse(x.responseText);\n\
                  document.getElementById('content').innerHTML = d.paragraphs.map(function (p) \
                  { return '<p>' + p + '</p>'; }).join(''); };\nx.send();\n";
    let written: String = paragraphs_of("xingchen-ch2")
        .iter()
        .map(|p| format!("<p>{}</p>", escaped(p)))
        .collect();
    let resource = |path: &str, content_type, body: Vec<u8>| SamplePage {
        path: path.to_owned(),
        label: "a script's resource",
        content_type,
        body,
        copies: Vec::new(),
        disallowed: false,
    };
    SampleSite {
        pages: vec![
            chapter_page(
                "/book/xhr.html",
                "<script src=\"/static/chapter.js\"></script>",
                "xingchen-ch1",
            ),
            chapter_page(
                "/book/write.html",
                &format!(
                    "<script>document.getElementById('content').innerHTML = ''; \
                     document.write(\"<div style='font-size:20px;margin:8px'>{written}</div>\");\
                     </script>"
                ),
                "xingchen-ch2",
            ),
            resource(
                "/static/chapter.js",
                "application/javascript",
                loader.as_bytes().to_vec(),
            ),
            resource("/api/chapter/1.json", "application/json", chapter_json()),
        ],
    }
}

/// Width, height and 8-bit RGB(A) pixels of a non-interlaced PNG as Chromium writes it
/// (colour type 2 or 6): enough of a decoder to look at a screenshot.
fn decode_png(png: &[u8]) -> (usize, usize, usize, Vec<u8>) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let (mut width, mut height, mut channels) = (0usize, 0usize, 0usize);
    let mut data = Vec::new();
    let mut at = 8;
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        let body = &png[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into().unwrap()) as usize;
                height = u32::from_be_bytes(body[4..8].try_into().unwrap()) as usize;
                assert_eq!(body[8], 8, "8-bit samples");
                channels = match body[9] {
                    2 => 3,
                    6 => 4,
                    other => panic!("colour type {other}"),
                };
                assert_eq!(body[12], 0, "not interlaced");
            }
            b"IDAT" => data.extend_from_slice(body),
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&data[..])
        .read_to_end(&mut raw)
        .unwrap();
    let stride = width * channels;
    let mut pixels = vec![0u8; stride * height];
    for y in 0..height {
        let filter = raw[y * (stride + 1)];
        let line = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
        for x in 0..stride {
            let a = if x >= channels {
                pixels[y * stride + x - channels]
            } else {
                0
            };
            let b = if y > 0 {
                pixels[(y - 1) * stride + x]
            } else {
                0
            };
            let c = if x >= channels && y > 0 {
                pixels[(y - 1) * stride + x - channels]
            } else {
                0
            };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                other => panic!("PNG filter {other}"),
            };
            pixels[y * stride + x] = line[x].wrapping_add(predicted);
        }
    }
    (width, height, channels, pixels)
}

/// Dark (text) pixels of a screenshot below the page's heading: where the chapter text is.
fn dark_pixels_in_content(png: &[u8]) -> usize {
    let (width, height, channels, pixels) = decode_png(png);
    let mut dark = 0;
    for y in 40.min(height)..height {
        for x in 0..width {
            let p = &pixels[(y * width + x) * channels..];
            let luma =
                (u32::from(p[0]) * 299 + u32::from(p[1]) * 587 + u32::from(p[2]) * 114) / 1000;
            dark += usize::from(luma < 128);
        }
    }
    dark
}

/// The screenshot of the static bytes of `page`, as a package of an unrendered page would take
/// it: the baseline the rendered page's screenshot is compared with.
fn static_screenshot(page: &SamplePage) -> Vec<u8> {
    let executable = copytrace_browser::find_chromium(None, std::env::var_os("PATH").as_deref())
        .expect("headless Chromium must be installed (./scripts/test installs it)");
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let browser = Browser::launch(BrowserConfig::new(executable, Network::Offline))
            .await
            .unwrap();
        let url = url::Url::parse("http://evidence.copytrace.invalid/static").unwrap();
        let document = Document {
            content_type: page.content_type.to_owned(),
            body: page.body.clone(),
        };
        let shot = browser.screenshot_document(&url, document).await.unwrap();
        browser.close().await;
        shot.png
    })
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// `evidence verify` on a copy of `dir` changed by `change`: its one error line.
fn verify_altered(
    workspace: &Workspace,
    dir: &Path,
    label: &str,
    change: impl Fn(&Path),
) -> String {
    let altered = workspace.path(&format!("altered-{label}"));
    copy_dir(dir, &altered);
    change(&altered);
    let run = workspace.run(&["evidence".as_ref(), "verify".as_ref(), altered.as_os_str()]);
    run.one_line_error().to_owned()
}

fn flip_last_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn the_evidence_of_a_script_written_chapter_shows_what_the_browser_showed() {
    let workspace = Workspace::new();
    for work in ["xingchen-ch1", "xingchen-ch2"] {
        let file = workspace.write(&format!("library/{work}.txt"), library_text(work));
        workspace.ok(&["library".as_ref(), "add".as_ref(), file.as_os_str()]);
    }
    let site = TestSite::serve(scripted_site());
    for path in ["/book/xhr.html", "/book/write.html"] {
        let run = workspace.ok(&[
            "crawl",
            &site.url(path),
            "--depth",
            "0",
            "--allow-private-addresses",
        ]);
        assert!(
            run.stdout.contains("1 page(s) read in headless Chromium"),
            "{path}: {}\n{}",
            run.stdout,
            run.stderr
        );
    }
    workspace.ok(&["match"]);
    let matches = workspace.export_json();
    let match_of = |path: &str| {
        matches
            .iter()
            .find(|m| m["page_url"] == site.url(path).as_str())
            .unwrap_or_else(|| panic!("no match on {path}: {matches:?}"))["id"]
            .as_i64()
            .unwrap()
    };
    let baseline = dark_pixels_in_content(&static_screenshot(&site.site.pages[0]));

    for (path, label, work) in [
        ("/book/xhr.html", "xhr", "xingchen-ch1"),
        ("/book/write.html", "write", "xingchen-ch2"),
    ] {
        let passage = paragraphs_of(work)[1];
        let dir = workspace.path(&format!("package-{label}"));
        workspace.ok(&[
            "evidence".as_ref(),
            match_of(path).to_string().as_ref(),
            "--out".as_ref(),
            dir.as_os_str(),
        ]);
        let manifest = manifest(&dir);

        // The bytes served are kept unchanged (no text in them); the rendered DOM has it.
        let served = &site
            .site
            .pages
            .iter()
            .find(|p| p.path == path)
            .unwrap()
            .body;
        assert_eq!(&std::fs::read(dir.join("page.html")).unwrap(), served);
        assert!(!String::from_utf8_lossy(served).contains(passage));
        let dom = std::fs::read_to_string(dir.join("rendered.html")).unwrap();
        assert!(dom.contains(passage), "{label}: {dom}");
        assert!(dom.starts_with("<!DOCTYPE html>"), "{label}: {dom}");

        // The manifest says the page was rendered, by which browser, how long it settled.
        let rendering = &manifest["rendering"];
        assert_eq!(rendering["rendered"], true, "{manifest}");
        assert!(
            rendering["browser"].as_str().unwrap().contains("Chrome"),
            "{rendering}"
        );
        assert_eq!(rendering["settle_quiet_ms"], 500);
        assert!(rendering["settled_after_ms"].as_u64().unwrap() >= 500);
        assert!(rendering["rendered_at"].is_string());
        assert_eq!(rendering["dom_sha256"], sha256_hex(dom.as_bytes()).as_str());
        assert!(manifest["rendering_note"].is_null());

        // The screenshot is of the written text: far more dark pixels below the heading than
        // the static page's screenshot has.
        let png = std::fs::read(dir.join("screenshot.png")).unwrap();
        let dark = dark_pixels_in_content(&png);
        assert!(
            dark > 5_000 && dark > 20 * baseline.max(1),
            "{label}: {dark} dark pixels in the content area, {baseline} on the static page"
        );
        assert!(
            manifest["screenshot"]["source"]
                .as_str()
                .unwrap()
                .contains("rendered.html"),
            "{manifest}"
        );

        let run = workspace.ok(&["evidence".as_ref(), "verify".as_ref(), dir.as_os_str()]);
        assert!(
            run.stdout.contains("recorded in the database"),
            "{}",
            run.stdout
        );

        if label != "xhr" {
            continue;
        }
        // The script and the XHR answer are kept, each with URL, status, headers and SHA-256.
        let responses = rendering["subresponses"].as_array().unwrap();
        let find = |suffix: &str| {
            responses
                .iter()
                .find(|r| r["url"].as_str().unwrap().ends_with(suffix))
                .unwrap_or_else(|| panic!("no {suffix} in {rendering}"))
        };
        let xhr = find("/api/chapter/1.json");
        assert_eq!(xhr["resource_type"], "XHR");
        assert_eq!(xhr["http_status"], 200);
        assert!(
            xhr["headers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|h| h[0] == "content-type" && h[1] == "application/json"),
            "{xhr}"
        );
        let json = chapter_json();
        assert_eq!(xhr["body_sha256"], sha256_hex(&json).as_str());
        let file = xhr["body_file"].as_str().unwrap();
        assert!(file.starts_with("subresources/"), "{file}");
        assert_eq!(std::fs::read(dir.join(file)).unwrap(), json);
        let script = find("/static/chapter.js");
        assert_eq!(script["resource_type"], "Script");
        let script_file = script["body_file"].as_str().unwrap().to_owned();
        let listed: Vec<&str> = manifest["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert!(
            listed.contains(&file) && listed.contains(&script_file.as_str()),
            "{listed:?}"
        );

        // Any part altered, removed or added fails verification, naming it.
        let error = verify_altered(&workspace, &dir, "dom", |d| {
            flip_last_byte(&d.join("rendered.html"));
        });
        assert!(error.contains("altered: rendered.html"), "{error}");
        let error = verify_altered(&workspace, &dir, "xhr", |d| flip_last_byte(&d.join(file)));
        assert!(error.contains(&format!("altered: {file}")), "{error}");
        let error = verify_altered(&workspace, &dir, "script", |d| {
            std::fs::remove_file(d.join(&script_file)).unwrap();
        });
        assert!(
            error.contains(&format!("missing: {script_file}")),
            "{error}"
        );
        let error = verify_altered(&workspace, &dir, "shot", |d| {
            flip_last_byte(&d.join("screenshot.png"));
        });
        assert!(error.contains("altered: screenshot.png"), "{error}");
        let error = verify_altered(&workspace, &dir, "planted", |d| {
            std::fs::write(d.join("subresources/999"), "planted").unwrap();
        });
        assert!(error.contains("extra: subresources/999"), "{error}");
        let error = verify_altered(&workspace, &dir, "manifest", |d| {
            let mut rewritten = manifest.clone();
            rewritten["rendering"]["browser"] = "HeadlessChrome/1.0".into();
            std::fs::write(
                d.join("manifest.json"),
                serde_json::to_vec_pretty(&rewritten).unwrap(),
            )
            .unwrap();
        });
        assert!(
            error.contains("manifest.json") && error.contains("not recorded"),
            "{error}"
        );
        // A rendered DOM swapped for another, with the manifest's file list rewritten to fit,
        // no longer has the SHA-256 stored at crawl time.
        let forged = "<html><body>nothing copied here</body></html>";
        let error = verify_altered(&workspace, &dir, "forged-dom", |d| {
            std::fs::write(d.join("rendered.html"), forged).unwrap();
            let mut rewritten = manifest.clone();
            for entry in rewritten["files"].as_array_mut().unwrap() {
                if entry["name"] == "rendered.html" {
                    entry["sha256"] = sha256_hex(forged.as_bytes()).into();
                    entry["size"] = forged.len().into();
                }
            }
            std::fs::write(
                d.join("manifest.json"),
                serde_json::to_vec_pretty(&rewritten).unwrap(),
            )
            .unwrap();
        });
        assert!(
            error.contains("rendered.html") && error.contains("stored with the rendered DOM"),
            "{error}"
        );
    }
}

#[test]
fn a_page_read_without_the_browser_gets_a_package_that_says_it_was_not_rendered() {
    let workspace = Workspace::new();
    let library = workspace.write("library/xingchen-ch1.txt", library_text("xingchen-ch1"));
    workspace.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    let text: String = paragraphs().iter().map(|p| format!("<p>{p}</p>")).collect();
    let site = TestSite::serve(SampleSite {
        pages: vec![SamplePage {
            path: "/book/1.html".into(),
            label: "static copy",
            content_type: "text/html; charset=utf-8",
            body: format!("<html><body><div id=content>{text}</div></body></html>").into_bytes(),
            copies: vec!["xingchen-ch1"],
            disallowed: false,
        }],
    });
    workspace.ok(&[
        "crawl",
        &site.url("/book/1.html"),
        "--depth",
        "0",
        "--allow-private-addresses",
    ]);
    workspace.ok(&["match"]);
    let id = workspace.export_json()[0]["id"].as_i64().unwrap();
    let dir = workspace.path("package");
    workspace.ok(&[
        "evidence".as_ref(),
        id.to_string().as_ref(),
        "--out".as_ref(),
        dir.as_os_str(),
    ]);
    let manifest = manifest(&dir);
    assert!(manifest["rendering"].is_null(), "{manifest}");
    assert!(
        manifest["rendering_note"]
            .as_str()
            .unwrap()
            .starts_with("not rendered"),
        "{manifest}"
    );
    assert!(!dir.join("rendered.html").exists());
    assert!(!dir.join("subresources").exists());
    assert!(
        manifest["screenshot"]["source"]
            .as_str()
            .unwrap()
            .contains("page.html")
    );
    workspace.ok(&["evidence".as_ref(), "verify".as_ref(), dir.as_os_str()]);
}
