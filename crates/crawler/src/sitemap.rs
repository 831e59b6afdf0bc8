//! Sitemaps (sitemaps.org): `<urlset>` files listing pages and `<sitemapindex>` files listing
//! other sitemaps, optionally gzip-compressed.
//!
//! Parsing is streaming (`quick-xml`) and forgiving: namespaces are ignored (only local names
//! count), a truncated or malformed file yields the `<loc>` entries read before the error, and
//! entries that are not absolute `http`/`https` URLs are skipped. The crawler reads sitemaps
//! only when [`CrawlConfig::sitemaps`](crate::CrawlConfig) is on, only for the seeds' origins,
//! through the same guarded, robots-checked, paced fetcher as pages, and bounds the work with
//! [`MAX_SITEMAP_FILES`] files and [`MAX_SITEMAP_URLS`] URLs per file.

use std::io::Read;

use quick_xml::Reader;
use quick_xml::events::Event;
use url::Url;

/// Sitemap files read per origin (the robots.txt ones or `/sitemap.xml`, plus the files an
/// index lists).
pub const MAX_SITEMAP_FILES: usize = 16;

/// `<loc>` entries taken from one file (the protocol's own limit).
pub const MAX_SITEMAP_URLS: usize = 50_000;

/// What one sitemap file lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sitemap {
    /// Page URLs (`<urlset><url><loc>`).
    pub pages: Vec<Url>,
    /// Further sitemap files (`<sitemapindex><sitemap><loc>`).
    pub sitemaps: Vec<Url>,
}

/// Parses a sitemap file. Gzip data (by its magic bytes) is decompressed first, reading at most
/// `max_bytes` of decompressed data. Never fails: whatever could be read is returned.
pub fn parse(bytes: &[u8], max_bytes: usize) -> Sitemap {
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let decoder = flate2::read::MultiGzDecoder::new(bytes);
        // A truncated or corrupt stream still yields what was decompressed before the error.
        let _ = decoder.take(max_bytes as u64).read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    } else {
        String::from_utf8_lossy(&bytes[..bytes.len().min(max_bytes)]).into_owned()
    };
    parse_str(&text)
}

fn parse_str(text: &str) -> Sitemap {
    let mut reader = Reader::from_str(text);
    let mut sitemap = Sitemap::default();
    // The enclosing entry (`url` or `sitemap`) and whether we are inside its `<loc>`.
    let mut entry: Option<bool> = None; // Some(true) = <sitemap>, Some(false) = <url>
    let mut in_loc = false;
    let mut loc = String::new();
    loop {
        let event = match reader.read_event() {
            Ok(Event::Eof) | Err(_) => break,
            Ok(event) => event,
        };
        match event {
            Event::Start(start) => match start.local_name().as_ref() {
                "url" => entry = Some(false),
                "sitemap" => entry = Some(true),
                "loc" if entry.is_some() => {
                    in_loc = true;
                    loc.clear();
                }
                _ => {}
            },
            Event::Text(text) if in_loc => loc.push_str(&text),
            Event::CData(data) if in_loc => loc.push_str(&data),
            Event::GeneralRef(reference) if in_loc => {
                if let Ok(Some(c)) = reference.resolve_char_ref() {
                    loc.push(c);
                } else if let Some(s) = quick_xml::escape::resolve_predefined_entity(&reference) {
                    loc.push_str(s);
                }
            }
            Event::End(end) => match end.local_name().as_ref() {
                "loc" if in_loc => {
                    in_loc = false;
                    let Ok(mut url) = Url::parse(loc.trim()) else {
                        continue;
                    };
                    if !matches!(url.scheme(), "http" | "https") {
                        continue;
                    }
                    url.set_fragment(None);
                    let list = if entry == Some(true) {
                        &mut sitemap.sitemaps
                    } else {
                        &mut sitemap.pages
                    };
                    if list.len() < MAX_SITEMAP_URLS {
                        list.push(url);
                    }
                }
                "url" | "sitemap" => entry = None,
                _ => {}
            },
            _ => {}
        }
    }
    sitemap
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://x.cn/book/1.html</loc><lastmod>2024-01-01</lastmod></url>
  <url><loc>
     http://x.cn/read?a=1&amp;b=2
  </loc></url>
  <url><loc><![CDATA[http://x.cn/c.html]]></loc></url>
  <url><loc>ftp://x.cn/file</loc></url>
  <url><loc>not a url</loc></url>
</urlset>"#;

    fn strings(urls: &[Url]) -> Vec<&str> {
        urls.iter().map(Url::as_str).collect()
    }

    #[test]
    fn a_urlset_lists_pages() {
        let sitemap = parse(URLSET.as_bytes(), 1 << 20);
        assert_eq!(
            strings(&sitemap.pages),
            [
                "http://x.cn/book/1.html",
                "http://x.cn/read?a=1&b=2",
                "http://x.cn/c.html"
            ]
        );
        assert!(sitemap.sitemaps.is_empty());
    }

    #[test]
    fn an_index_lists_sitemaps_and_namespaces_prefixes_are_ignored() {
        let xml = r#"<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">
            <sm:sitemap><sm:loc>http://x.cn/s1.xml</sm:loc></sm:sitemap>
            <sm:sitemap><sm:loc>http://x.cn/s2.xml.gz</sm:loc></sm:sitemap></sm:sitemapindex>"#;
        let sitemap = parse(xml.as_bytes(), 1 << 20);
        assert_eq!(
            strings(&sitemap.sitemaps),
            ["http://x.cn/s1.xml", "http://x.cn/s2.xml.gz"]
        );
        assert!(sitemap.pages.is_empty());
    }

    #[test]
    fn gzip_files_are_decompressed_within_the_cap() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(URLSET.as_bytes()).unwrap();
        let bytes = gz.finish().unwrap();
        assert_eq!(parse(&bytes, 1 << 20).pages.len(), 3);
        // Cut after the first entry: what was read survives.
        let cut = URLSET.find("</url>").unwrap() + "</url>".len();
        assert_eq!(parse(&bytes, cut).pages.len(), 1);
    }

    #[test]
    fn garbage_yields_nothing_and_never_panics() {
        for bytes in [
            &b""[..],
            b"\x1f\x8b\x08garbage",
            b"<urlset><url><loc>http://x.cn/a",
            b"\xff\xfe<<<>>>&&;",
            b"<url><loc>http://x.cn/ok</loc></url><unclosed",
        ] {
            let sitemap = parse(bytes, 1 << 20);
            assert!(sitemap.pages.len() <= 1, "{sitemap:?}");
        }
    }
}
