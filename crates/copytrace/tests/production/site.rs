//! A generated piracy site on a loopback port: `/` links to list pages, each list page to 100
//! chapter pages. Every chapter has text of its own; every 50th (from the 3rd) also copies one
//! work of the bundled sample library, so the expected matches are known. Requests are logged
//! per path, and each response can be delayed to keep a crawl in flight long enough to
//! interrupt it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::response::Html;
use axum::routing::get;
use copytrace::demo::LIBRARY;

/// Chapters per list page.
const PER_LIST: usize = 100;

#[derive(Clone)]
struct SiteState {
    chapters: usize,
    delay: Duration,
    /// Chapters whose text a script writes, a moment after the page has loaded.
    scripted: bool,
    requests: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl SiteState {
    fn log(&self, path: String) {
        *self.requests.lock().unwrap().entry(path).or_default() += 1;
    }
}

/// The running site; stops with its runtime when dropped.
pub struct GeneratedSite {
    pub base: String,
    pub chapters: usize,
    requests: Arc<Mutex<BTreeMap<String, usize>>>,
    _runtime: tokio::runtime::Runtime,
}

impl GeneratedSite {
    pub fn serve(chapters: usize, delay: Duration) -> GeneratedSite {
        GeneratedSite::serve_with(chapters, delay, false)
    }

    /// The same site, but each chapter's text is written by a script 150 ms after the page
    /// loads: only a browser reads it, and a render is in flight long enough to be cut.
    pub fn serve_scripted(chapters: usize) -> GeneratedSite {
        GeneratedSite::serve_with(chapters, Duration::ZERO, true)
    }

    fn serve_with(chapters: usize, delay: Duration, scripted: bool) -> GeneratedSite {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a Tokio runtime");
        let requests = Arc::new(Mutex::new(BTreeMap::new()));
        let state = SiteState {
            chapters,
            delay,
            scripted,
            requests: requests.clone(),
        };
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind the site");
        let address = listener.local_addr().expect("site address");
        let app = Router::new()
            .route("/", get(home))
            .route("/robots.txt", get(|| async { "User-agent: *\nAllow: /\n" }))
            .route("/list/{n}", get(list))
            .route("/p/{n}", get(chapter))
            .with_state(state);
        runtime.spawn(async move {
            axum::serve(listener, app).await.expect("the site serves");
        });
        GeneratedSite {
            base: format!("http://{address}/"),
            chapters,
            requests,
            _runtime: runtime,
        }
    }

    /// Pages a full crawl stores: home, list pages and chapters.
    pub fn page_count(&self) -> usize {
        1 + self.chapters.div_ceil(PER_LIST) + self.chapters
    }

    /// How many times each path was requested.
    pub fn requests(&self) -> BTreeMap<String, usize> {
        self.requests.lock().unwrap().clone()
    }

    /// `(page URL, work id)` of every chapter that copies a library work.
    pub fn expected_matches(&self) -> BTreeSet<(String, String)> {
        (0..self.chapters)
            .filter_map(|n| {
                copied_work(n).map(|work| (format!("{}p/{n}", self.base), work.to_owned()))
            })
            .collect()
    }
}

/// The library work chapter `n` copies, if any.
fn copied_work(n: usize) -> Option<&'static str> {
    (n % 50 == 3).then(|| LIBRARY[(n / 50) % LIBRARY.len()].0)
}

fn page(title: &str, body: &str) -> Html<String> {
    Html(format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><div id=\"nav\"><a href=\"/\">首页</a></div><div id=\"content\">{body}</div></body></html>"
    ))
}

async fn home(State(state): State<SiteState>) -> Html<String> {
    state.log("/".into());
    let links: String = (0..state.chapters.div_ceil(PER_LIST))
        .map(|l| format!("<li><a href=\"/list/{l}\">第{}卷</a></li>", l + 1))
        .collect();
    page("书库", &format!("<ul>{links}</ul>"))
}

async fn list(State(state): State<SiteState>, Path(n): Path<usize>) -> Html<String> {
    state.log(format!("/list/{n}"));
    tokio::time::sleep(state.delay).await;
    let first = n * PER_LIST;
    let links: String = (first..(first + PER_LIST).min(state.chapters))
        .map(|c| format!("<li><a href=\"/p/{c}\">第{}章</a></li>", c + 1))
        .collect();
    page(&format!("第{}卷目录", n + 1), &format!("<ul>{links}</ul>"))
}

async fn chapter(State(state): State<SiteState>, Path(n): Path<usize>) -> Html<String> {
    state.log(format!("/p/{n}"));
    tokio::time::sleep(state.delay).await;
    let mut paragraphs = filler(n);
    if let Some(work) = copied_work(n) {
        let text = LIBRARY
            .iter()
            .find(|(id, _)| *id == work)
            .map(|(_, t)| *t)
            .unwrap_or("");
        paragraphs.extend(
            text.lines()
                .skip(1)
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned),
        );
    }
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>")).collect();
    if state.scripted {
        // Nothing of the text is in the HTML: it is a string of `\uXXXX` escapes.
        let escaped: String = body.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
        let script = format!(
            "<script>setTimeout(function () {{ document.getElementById('content').innerHTML = \
             \"{escaped}\"; }}, 150);</script>"
        );
        return page(&format!("第{}章", n + 1), &script);
    }
    page(&format!("第{}章", n + 1), &body)
}

/// Three paragraphs of text unique to chapter `n`: common characters in a seeded order, so no
/// two chapters (and no library work) share a sentence.
fn filler(n: usize) -> Vec<String> {
    const CHARS: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严";
    let chars: Vec<char> = CHARS.chars().collect();
    let mut state = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        chars[(state % chars.len() as u64) as usize]
    };
    (0..3)
        .map(|_| {
            let mut p: String = (0..60).map(|_| next()).collect();
            p.push('。');
            p
        })
        .collect()
}
