//! The generated news site of `copytrace-bench crawl-ads`, apart from its serving, so that the
//! crawler's criterion bench (`cargo bench -p copytrace-crawler --bench extract`) times the
//! rendering decision on the very pages the crawl benchmark serves.
//!
//! Every page loads jQuery by address and carries inline ad and analytics scripts, a varying
//! few of: an `innerHTML` banner, a `document.write` of an ad server's script, a CNZZ counter
//! written with `document.write(unescape(…))`, Baidu Tongji, AdSense, a tracking pixel written
//! with `document.write`, and a jQuery `.html(…)` of an app advert.

use std::collections::HashMap;
use std::fmt::Write as _;

use copytrace_fingerprint::minhash::splitmix64 as splitmix;

use crate::corpus;

const LIST_SIZE: usize = 40;
const ARTICLES_PER_TAG: usize = 8;
const SECTIONS: usize = 12;

/// The site: path → HTML.
pub struct AdSite {
    pub pages: HashMap<String, String>,
}

impl AdSite {
    pub fn new(articles: usize, common_script: bool) -> AdSite {
        let page_html =
            |title: &str, body: &str, n: usize| page_html(title, body, n, common_script);
        let paragraphs = corpus::paragraphs();
        let tags = articles.div_ceil(ARTICLES_PER_TAG).max(1);
        let lists = articles.div_ceil(LIST_SIZE).max(1);
        let article_path = |n: usize| format!("/news/{}/{}.html", n % SECTIONS + 1, n + 1);
        let mut pages = HashMap::new();
        let mut tagged: Vec<Vec<usize>> = vec![Vec::new(); tags];
        for n in 0..articles {
            let mut state = 0xAD51_7E00_0000_0000 ^ n as u64;
            let mut body = String::with_capacity(8 * 1024);
            let holder = if (n % SECTIONS).is_multiple_of(2) {
                "class=\"article-content\""
            } else {
                "id=\"content\""
            };
            let _ = write!(body, "<div {holder}>");
            let target = 1_000 + (splitmix(&mut state) % 2_001) as usize;
            let mut bytes = 0;
            while bytes < target {
                let p = paragraphs[splitmix(&mut state) as usize % paragraphs.len()];
                bytes += p.len();
                let _ = write!(body, "<p>{}</p>", escape(p));
            }
            body.push_str("</div><div class=\"tags\">标签：");
            for _ in 0..2 {
                let tag = splitmix(&mut state) as usize % tags;
                tagged[tag].push(n);
                let _ = write!(
                    body,
                    "<a href=\"/tag/{}.html\">话题{}</a> ",
                    tag + 1,
                    tag + 1
                );
            }
            body.push_str("</div><div class=\"related\"><h3>相关新闻</h3><ul>");
            for _ in 0..5 {
                let other = splitmix(&mut state) as usize % articles;
                let _ = write!(
                    body,
                    "<li><a href=\"{}\">新闻{}</a></li>",
                    article_path(other),
                    other + 1
                );
            }
            body.push_str("</ul></div>");
            pages.insert(
                article_path(n),
                page_html(&format!("新闻{} - 新闻网", n + 1), &body, n),
            );
        }
        for (t, members) in tagged.iter().enumerate() {
            let mut body = format!("<div class=\"box\"><h2>话题{}</h2><ul>", t + 1);
            for &n in members.iter().take(12) {
                let _ = write!(
                    body,
                    "<li><a href=\"{}\">新闻{}</a></li>",
                    article_path(n),
                    n + 1
                );
            }
            body.push_str("</ul></div>");
            pages.insert(
                format!("/tag/{}.html", t + 1),
                page_html(&format!("话题{} - 新闻网", t + 1), &body, articles + t),
            );
        }
        for l in 0..lists {
            let mut body = String::from("<div id=\"content\"><ul class=\"news\">");
            for n in l * LIST_SIZE..((l + 1) * LIST_SIZE).min(articles) {
                let _ = write!(
                    body,
                    "<li><a href=\"{}\">新闻{}</a></li>",
                    article_path(n),
                    n + 1
                );
            }
            body.push_str("</ul></div><div class=\"pager\">");
            if l > 0 {
                let _ = write!(body, "<a href=\"/list/{}.html\">上一页</a> ", l);
            }
            if l + 1 < lists {
                let _ = write!(body, "<a href=\"/list/{}.html\">下一页</a>", l + 2);
            }
            body.push_str("</div>");
            pages.insert(
                format!("/list/{}.html", l + 1),
                page_html(&format!("最新新闻 第{}页", l + 1), &body, 7 * l + 3),
            );
        }
        let mut home = String::from("<div class=\"box\"><h2>全部新闻</h2>");
        for l in 0..lists {
            let _ = write!(home, "<a href=\"/list/{}.html\">第{}页</a> ", l + 1, l + 1);
        }
        home.push_str("</div>");
        pages.insert("/".to_owned(), page_html("新闻网", &home, 1));
        AdSite { pages }
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The inline ad and analytics scripts of page `n`: four to seven of the kinds real news and
/// novel sites carry, with the page's own ids and numbers.
fn ad_scripts(n: usize) -> String {
    let k = n * 7919 % 100_000;
    let kinds = [
        format!(
            "<div id=\"ad_top_{n}\"></div><script>document.getElementById('ad_top_{n}').innerHTML = \
             '<a href=\"/go/{k}\" target=\"_blank\"><img src=\"/ad/{k}.gif\" width=\"960\" height=\"90\"></a>';</script>"
        ),
        format!(
            "<script>document.write('<script src=\"/ad/show.js?pos={k}\"></scr' + 'ipt>');</script>"
        ),
        format!(
            "<script>var cnzz_protocol = ((\"https:\" == document.location.protocol) ? \"https://\" : \"http://\");\
             document.write(unescape(\"%3Cspan id='cnzz_stat_icon_{k}'%3E%3C/span%3E%3Cscript src='/ad/z_stat.js%3Fid%3D{k}' type='text/javascript'%3E%3C/script%3E\"));</script>"
        ),
        format!(
            "<script>var _hmt = _hmt || [];(function() {{ var hm = document.createElement(\"script\");\
             hm.src = \"/ad/hm.js?{k:x}\"; var s = document.getElementsByTagName(\"script\")[0];\
             s.parentNode.insertBefore(hm, s); }})();</script>"
        ),
        format!(
            "<ins class=\"adsbygoogle\" style=\"display:block\" data-ad-client=\"ca-pub-{k}\" \
             data-ad-slot=\"{n}\"></ins><script>(adsbygoogle = window.adsbygoogle || []).push({{}});</script>"
        ),
        format!(
            "<script>document.write('<img src=\"/ad/pv.gif?id={n}&r=' + escape(document.referrer) + \
             '&t=' + Math.random() + '\" width=\"1\" height=\"1\">');</script>"
        ),
        "<div class=\"gg_b\"></div><script>$('.gg_b').html('<a href=\"/app/\">下载新闻网APP，\
         免费看全站新闻，无广告无弹窗</a>');</script>"
            .to_owned(),
    ];
    let mut out = String::new();
    let mut state = 0xAD5C_0000_0000_0000 ^ n as u64;
    let count = 4 + (splitmix(&mut state) % 4) as usize;
    let first = splitmix(&mut state) as usize % kinds.len();
    for i in 0..count {
        out.push_str(&kinds[(first + i) % kinds.len()]);
    }
    out
}

fn page_html(title: &str, body: &str, n: usize, common_script: bool) -> String {
    let common = if common_script {
        "<script src=\"/static/js/common.js\"></script>"
    } else {
        ""
    };
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title}</title>\
         <script src=\"/static/js/jquery.min.js\"></script>{common}</head><body>\
         <div class=\"nav\"><a href=\"/\">首页</a> <a href=\"/list/1.html\">国内</a> \
         <a href=\"/list/2.html\">国际</a> <a href=\"/tag/1.html\">话题</a></div>\
         <h1>{title}</h1>{body}{ads}\
         <div class=\"footer\">新闻网版权所有 © 2026 未经授权禁止转载</div></body></html>",
        ads = ad_scripts(n)
    )
}
