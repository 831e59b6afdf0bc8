//! The site `copytrace-bench crawl` crawls: a novel site of static HTML files, generated
//! deterministically (the same bytes on every machine and every run).
//!
//! Layout, every link an absolute path:
//!
//! * `/` (`index.html`): the home page, a short intro and the list of every book;
//! * `/book/B/` (`book/B/index.html`): book B's table of contents: author, blurb, and a link to
//!   every chapter (`第十二章 …`), as the index pages of real novel sites;
//! * `/book/B/C.html`: chapter C of book B, a few KB of Chinese prose (4,000 to 10,000 bytes of
//!   text in `<p>` paragraphs drawn from the demo texts) inside the furniture such sites have: a
//!   breadcrumb header, navigation, previous/next-chapter links above and below the text, a
//!   "recommended" list linking five chapters of other books, a footer disclaimer, a `<style>`
//!   block;
//! * `/robots.txt`: allows everything.
//!
//! Every page is reachable from `/` by links (home → table of contents → chapter), and every
//! chapter also links its table of contents, its neighbours and other books, so a crawler sees
//! each URL many times and its seen-set does real work.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result, bail};
use copytrace_fingerprint::minhash::splitmix64 as splitmix;

use crate::corpus;

/// The site's name, in titles and the header.
const SITE_NAME: &str = "书海阁";
const TITLE_HEADS: [&str; 10] = [
    "星辰", "剑道", "苍穹", "九天", "玄门", "长生", "山河", "逆天", "大荒", "青云",
];
const TITLE_TAILS: [&str; 10] = ["变", "诀", "志", "传", "录", "记", "劫", "纪", "图", "歌"];
const AUTHORS: [&str; 8] = [
    "墨白",
    "青衫客",
    "南山居士",
    "孤舟",
    "夜雨声",
    "北冥有鱼",
    "风间",
    "林下客",
];
const CHAPTER_HEADS: [&str; 12] = [
    "初入", "夜探", "血战", "重逢", "突破", "离别", "迷途", "归来", "决战", "奇遇", "暗流", "风起",
];
const CHAPTER_TAILS: [&str; 12] = [
    "江湖", "古城", "雪山", "秘境", "宗门", "大漠", "海岛", "皇城", "深渊", "竹林", "故人", "神兵",
];
/// "Recommended" links per chapter page.
const RECOMMENDED: usize = 5;

/// One page of the site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// `/`.
    Home,
    /// `/book/B/`, the table of contents of book `B` (0-based).
    Toc(usize),
    /// A chapter, by its 0-based index over the whole site.
    Chapter(usize),
}

/// The site's shape; pages are rendered on demand.
pub struct Site {
    chapters: usize,
    per_book: usize,
    paragraphs: Vec<&'static str>,
}

impl Site {
    /// A site of `chapters` chapter pages in books of `per_book` chapters (the last book may be
    /// shorter), plus the home page and one table of contents per book.
    pub fn new(chapters: usize, per_book: usize) -> Result<Site> {
        if chapters == 0 || per_book == 0 {
            bail!("the site needs at least one chapter and one chapter per book");
        }
        Ok(Site {
            chapters,
            per_book,
            paragraphs: corpus::paragraphs(),
        })
    }

    /// Number of books (tables of contents).
    pub fn books(&self) -> usize {
        self.chapters.div_ceil(self.per_book)
    }

    /// Every HTML page: the home page, the tables of contents, the chapters.
    pub fn pages(&self) -> Vec<Page> {
        let mut pages = vec![Page::Home];
        pages.extend((0..self.books()).map(Page::Toc));
        pages.extend((0..self.chapters).map(Page::Chapter));
        pages
    }

    /// The URL path of a page.
    pub fn path(&self, page: Page) -> String {
        match page {
            Page::Home => "/".to_owned(),
            Page::Toc(book) => format!("/book/{}/", book + 1),
            Page::Chapter(g) => {
                format!(
                    "/book/{}/{}.html",
                    g / self.per_book + 1,
                    g % self.per_book + 1
                )
            }
        }
    }

    /// The file serving a page, relative to the site root.
    pub fn file(&self, page: Page) -> String {
        let path = self.path(page);
        let relative = path.trim_start_matches('/');
        if path.ends_with('/') {
            format!("{relative}index.html")
        } else {
            relative.to_owned()
        }
    }

    /// The paragraphs of a chapter's text, as they appear on its page (without indentation).
    pub fn chapter_paragraphs(&self, chapter: usize) -> Vec<&'static str> {
        let mut state = 0xC4A9_7E11_0000_0000 ^ chapter as u64;
        let target = 4_000 + (splitmix(&mut state) % 6_001) as usize;
        let mut bytes = 0;
        let mut out = Vec::new();
        while bytes < target {
            let paragraph = self.paragraphs[splitmix(&mut state) as usize % self.paragraphs.len()];
            bytes += paragraph.len();
            out.push(paragraph);
        }
        out
    }

    /// Renders one page.
    pub fn render(&self, page: Page) -> String {
        match page {
            Page::Home => self.render_home(),
            Page::Toc(book) => self.render_toc(book),
            Page::Chapter(g) => self.render_chapter(g),
        }
    }

    /// Writes every page and `robots.txt` under `root`; returns the bytes of HTML written.
    pub fn write(&self, root: &Path) -> Result<u64> {
        let mut total = 0u64;
        for book in 0..self.books() {
            let dir = root.join(self.file(Page::Toc(book)));
            let dir = dir
                .parent()
                .context("a table of contents has a directory")?;
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {dir:?}"))?;
        }
        for page in self.pages() {
            let html = self.render(page);
            total += html.len() as u64;
            let file = root.join(self.file(page));
            std::fs::write(&file, html).with_context(|| format!("cannot write {file:?}"))?;
        }
        std::fs::write(root.join("robots.txt"), "User-agent: *\nAllow: /\n")
            .context("cannot write robots.txt")?;
        Ok(total)
    }

    fn book_title(&self, book: usize) -> String {
        let title = format!(
            "{}{}",
            TITLE_HEADS[book % TITLE_HEADS.len()],
            TITLE_TAILS[book / TITLE_HEADS.len() % TITLE_TAILS.len()]
        );
        match book / (TITLE_HEADS.len() * TITLE_TAILS.len()) {
            0 => title,
            part => format!("{title}·第{}部", chinese_number(part + 1)),
        }
    }

    fn author(&self, book: usize) -> &'static str {
        AUTHORS[book * 7 % AUTHORS.len()]
    }

    fn chapters_of(&self, book: usize) -> std::ops::Range<usize> {
        book * self.per_book..((book + 1) * self.per_book).min(self.chapters)
    }

    /// `第十二章 夜探古城`.
    fn chapter_heading(&self, g: usize) -> String {
        let mut state = 0x7177_1E00_0000_0000 ^ g as u64;
        let head = CHAPTER_HEADS[splitmix(&mut state) as usize % CHAPTER_HEADS.len()];
        let tail = CHAPTER_TAILS[splitmix(&mut state) as usize % CHAPTER_TAILS.len()];
        format!("第{}章 {head}{tail}", chinese_number(g % self.per_book + 1))
    }

    fn render_home(&self) -> String {
        let mut body = String::new();
        body.push_str("<div id=\"intro\">\n");
        let mut state = 0x4F4D_E000_0000_0000;
        for _ in 0..2 {
            let p = self.paragraphs[splitmix(&mut state) as usize % self.paragraphs.len()];
            let _ = writeln!(body, "<p>{}</p>", escape(p));
        }
        body.push_str("</div>\n<div class=\"novellist\"><h2>全部小说</h2><ul>\n");
        for book in 0..self.books() {
            let _ = writeln!(
                body,
                "<li><a href=\"{}\">{}</a> / {}</li>",
                self.path(Page::Toc(book)),
                self.book_title(book),
                self.author(book)
            );
        }
        body.push_str("</ul></div>\n");
        page_html(&format!("{SITE_NAME} - 免费小说阅读网"), "", &body)
    }

    fn render_toc(&self, book: usize) -> String {
        let title = self.book_title(book);
        let toc = self.path(Page::Toc(book));
        let mut body = String::new();
        let _ = writeln!(
            body,
            "<div id=\"info\"><h1>{title}</h1><p>作者：{}</p><p>最新章节：<a href=\"{}\">{}</a></p></div>",
            self.author(book),
            self.path(Page::Chapter(self.chapters_of(book).end - 1)),
            self.chapter_heading(self.chapters_of(book).end - 1)
        );
        body.push_str("<div id=\"intro\">\n");
        let mut state = 0xB1A0_B000_0000_0000 ^ book as u64;
        for _ in 0..2 {
            let p = self.paragraphs[splitmix(&mut state) as usize % self.paragraphs.len()];
            let _ = writeln!(body, "<p>　　{}</p>", escape(p));
        }
        let _ = writeln!(
            body,
            "</div>\n<div id=\"list\"><dl><dt>《{title}》正文</dt>"
        );
        for g in self.chapters_of(book) {
            let _ = writeln!(
                body,
                "<dd><a href=\"{}\">{}</a></dd>",
                self.path(Page::Chapter(g)),
                self.chapter_heading(g)
            );
        }
        body.push_str("</dl></div>\n");
        let crumbs = format!(" &gt; <a href=\"{toc}\">{title}</a>");
        page_html(&format!("{title}最新章节列表_{SITE_NAME}"), &crumbs, &body)
    }

    fn render_chapter(&self, g: usize) -> String {
        let book = g / self.per_book;
        let title = self.book_title(book);
        let heading = self.chapter_heading(g);
        let toc = self.path(Page::Toc(book));
        let range = self.chapters_of(book);
        let prev = if g > range.start {
            self.path(Page::Chapter(g - 1))
        } else {
            toc.clone()
        };
        let next = if g + 1 < range.end {
            self.path(Page::Chapter(g + 1))
        } else {
            toc.clone()
        };
        let pager = format!(
            "<a href=\"{prev}\">上一章</a> ← <a href=\"{toc}\">章节目录</a> → <a href=\"{next}\">下一章</a>"
        );
        let mut body = String::with_capacity(12 * 1024);
        let _ = writeln!(
            body,
            "<div class=\"bookname\">\n<h1>{heading}</h1>\n<div class=\"bottem1\">{pager}</div>\n</div>"
        );
        body.push_str("<div id=\"content\">\n");
        for p in self.chapter_paragraphs(g) {
            let _ = writeln!(body, "<p>　　{}</p>", escape(p));
        }
        let _ = writeln!(
            body,
            "</div>\n<div class=\"bottem2\">{pager}</div>\n<div class=\"tuijian\"><h3>推荐阅读</h3><ul>"
        );
        let mut state = 0x5EC0_0000_0000_0000 ^ g as u64;
        for _ in 0..RECOMMENDED {
            let other = splitmix(&mut state) as usize % self.chapters;
            let _ = writeln!(
                body,
                "<li><a href=\"{}\">{} {}</a></li>",
                self.path(Page::Chapter(other)),
                self.book_title(other / self.per_book),
                self.chapter_heading(other)
            );
        }
        body.push_str("</ul></div>\n");
        let crumbs = format!(" &gt; <a href=\"{toc}\">{title}</a> &gt; {heading}");
        page_html(&format!("{heading}_{title}_{SITE_NAME}"), &crumbs, &body)
    }
}

/// The frame every page shares: head with a small stylesheet, header with breadcrumbs,
/// navigation, footer.
fn page_html(title: &str, crumbs: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"zh-CN\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n\
         <style>body{{font-family:sans-serif;margin:0 auto;max-width:60em}}\
         #content{{line-height:1.8;font-size:1.1em}}.ad{{display:none}}</style>\n\
         </head>\n<body>\n\
         <div class=\"header\"><a href=\"/\">{SITE_NAME}</a>{crumbs}</div>\n\
         <div class=\"nav\"><ul><li><a href=\"/\">首页</a></li><li>玄幻</li><li>武侠</li>\
         <li>都市</li><li>历史</li></ul></div>\n\
         {body}\
         <div class=\"footer\"><p>本站所有小说均来自网友上传，版权归原作者所有，如有侵权请联系删除。</p></div>\n\
         </body>\n</html>\n"
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `n` in Chinese numerals as chapter headings write it: 1 一, 10 十, 12 十二, 101 一百零一.
/// Falls back to Arabic digits past 99,999.
pub fn chinese_number(n: usize) -> String {
    const DIGITS: [char; 10] = ['零', '一', '二', '三', '四', '五', '六', '七', '八', '九'];
    const UNITS: [&str; 5] = ["", "十", "百", "千", "万"];
    if n == 0 {
        return "零".to_owned();
    }
    let digits: Vec<usize> = n.to_string().bytes().map(|b| (b - b'0') as usize).collect();
    if digits.len() > UNITS.len() {
        return n.to_string();
    }
    let mut out = String::new();
    let mut zero = false;
    for (i, &d) in digits.iter().enumerate() {
        let unit = UNITS[digits.len() - 1 - i];
        if d == 0 {
            zero = true;
            continue;
        }
        if zero {
            out.push('零');
            zero = false;
        }
        if !(d == 1 && unit == "十" && out.is_empty()) {
            out.push(DIGITS[d]);
        }
        out.push_str(unit);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet, VecDeque};

    use super::*;

    fn hrefs(html: &str) -> Vec<String> {
        html.split("href=\"")
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].to_owned())
            .collect()
    }

    #[test]
    fn chapter_numbers_read_as_chinese_headings_write_them() {
        let cases = [
            (1, "一"),
            (10, "十"),
            (12, "十二"),
            (20, "二十"),
            (101, "一百零一"),
            (110, "一百一十"),
            (200, "二百"),
            (1005, "一千零五"),
            (20000, "二万"),
        ];
        for (n, want) in cases {
            assert_eq!(chinese_number(n), want, "{n}");
        }
    }

    #[test]
    fn every_page_is_reachable_from_the_home_page_and_links_its_table_of_contents() {
        let site = Site::new(57, 10).unwrap();
        let pages = site.pages();
        assert_eq!(pages.len(), 1 + 6 + 57);
        let by_path: HashMap<String, Page> = pages.iter().map(|&p| (site.path(p), p)).collect();
        assert_eq!(by_path.len(), pages.len(), "paths are distinct");

        let mut seen = HashSet::from(["/".to_owned()]);
        let mut queue = VecDeque::from(["/".to_owned()]);
        while let Some(path) = queue.pop_front() {
            let page = by_path[&path];
            let links = hrefs(&site.render(page));
            for link in &links {
                assert!(
                    by_path.contains_key(link),
                    "{path} links a missing page {link}"
                );
                if seen.insert(link.clone()) {
                    queue.push_back(link.clone());
                }
            }
            if let Page::Chapter(g) = page {
                let toc = site.path(Page::Toc(g / 10));
                assert!(links.contains(&toc), "{path} does not link {toc}");
                assert!(links.len() >= 3 + RECOMMENDED, "{path}: {links:?}");
            }
        }
        assert_eq!(seen.len(), pages.len(), "reached {seen:?}");
    }

    #[test]
    fn chapters_are_a_few_kilobytes_of_text_that_the_crawler_extracts() {
        let site = Site::new(40, 20).unwrap();
        let base = url::Url::parse("http://127.0.0.1/").unwrap();
        for g in [0, 19, 20, 39] {
            let html = site.render(Page::Chapter(g));
            assert!((5_000..16_000).contains(&html.len()), "{}", html.len());
            let url = base.join(&site.path(Page::Chapter(g))).unwrap();
            let extracted = copytrace_crawler::extract::extract(&html, &url);
            for paragraph in site.chapter_paragraphs(g) {
                assert!(
                    extracted.text.contains(paragraph),
                    "chapter {g} lost {paragraph}"
                );
            }
            assert!(!extracted.text.contains("推荐阅读"), "{}", extracted.text);
        }
        for page in [Page::Home, Page::Toc(1)] {
            let html = site.render(page);
            let extracted = copytrace_crawler::extract::extract(&html, &base);
            assert!(!extracted.text.is_empty(), "{page:?} has no main text");
        }
        // The same site every time.
        let again = Site::new(40, 20).unwrap();
        assert_eq!(
            site.render(Page::Chapter(7)),
            again.render(Page::Chapter(7))
        );
    }

    #[test]
    fn the_written_site_has_one_file_per_page() {
        let dir = tempfile::tempdir().unwrap();
        let site = Site::new(25, 10).unwrap();
        let bytes = site.write(dir.path()).unwrap();
        let mut files = 0;
        let mut on_disk = 0;
        for page in site.pages() {
            let meta = std::fs::metadata(dir.path().join(site.file(page))).unwrap();
            files += 1;
            on_disk += meta.len();
        }
        assert_eq!(files, 1 + 3 + 25);
        assert_eq!(on_disk, bytes);
        assert!(dir.path().join("robots.txt").is_file());
        assert_eq!(site.file(Page::Toc(0)), "book/1/index.html");
        assert_eq!(site.file(Page::Chapter(24)), "book/3/5.html");
    }
}
