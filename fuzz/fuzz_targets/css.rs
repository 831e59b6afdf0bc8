//! The CSS visibility rules of extraction: a fuzzed `<style>` block and a fuzzed inline style
//! in a fixed chapter page, through `extract` (the rules are private to it).
//!
//! The page hides two poison strings the way pirate sites do: one with a class hidden by a
//! rule of a `<style>` block of its own, one with the fuzzed inline style (without quotes and
//! ampersands) followed by `;display:none` (the last declaration wins). Whatever the fuzzed stylesheet says (it cannot
//! leave its `<style>` element: `<` is removed), and whatever else it hides:
//!
//! * neither poison string is ever in the text (a hidden element is shown only when it holds
//!   half of the page's text, and these hold a few characters of several hundred);
//! * every paragraph of the text is part of the page's visible prose: hiding never invents text.
#![no_main]

use copytrace_crawler::extract::extract;
use libfuzzer_sys::fuzz_target;
use url::Url;

const FIRST: &str = "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中，手里提着一盏昏黄的灯笼。";
const SECOND: &str = "他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院。远处传来几声犬吠，村子里的灯火一盏接一盏地熄灭了。";
const THIRD: &str = "陌生人摘下斗笠，露出一张布满风霜的脸，他说自己从北方来，要找一个叫林默的人。少年愣住了，那正是他父亲的名字。";
const POISON_CLASS: &str = "QXZVPOISONCLASS";
const POISON_INLINE: &str = "QXZVPOISONINLINE";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (stylesheet, inline) = text.split_once('\u{1}').unwrap_or((&text, ""));
    let stylesheet = stylesheet.replace('<', "");
    // Neither a quote (the attribute would end) nor an ampersand (`&or;` would take the `;`
    // before `display:none` into a character reference).
    let inline = inline.replace(['"', '&'], "");
    let html = format!(
        "<html><head><title>第一章 雨夜来客</title><style>{stylesheet}</style>\
         <style>.zq-mark{{display:none}}</style></head><body>\
         <div class=\"header nav\"><a href=\"/\">首页</a></div>\
         <div id=\"content\" class=\"chapter\"><h1 class=\"title\">第一章 雨夜来客</h1>\
         <p class=\"para\">{FIRST}</p>\
         <p class=\"para\" id=\"p2\">{SECOND}<span class=\"zq-mark\">{POISON_CLASS}</span></p>\
         <p class=\"para last\">{THIRD}<span style=\"{inline};display:none\">{POISON_INLINE}</span></p>\
         </div><div class=\"footer\">本站所有小说为转载作品</div></body></html>"
    );
    let page = Url::parse("http://novel.example.cn/book/1/1.html").expect("valid URL");
    let extracted = extract(&html, &page);
    for poison in [POISON_CLASS, POISON_INLINE] {
        assert!(
            !extracted.text.contains(poison),
            "hidden {poison} extracted from {html}"
        );
    }
    let prose =
        format!("第一章 雨夜来客\n{FIRST}\n{SECOND}\n{THIRD}\n首页\n本站所有小说为转载作品");
    for paragraph in extracted.text.split('\n').filter(|p| !p.is_empty()) {
        assert!(
            prose.contains(paragraph),
            "{paragraph:?} is not on the page"
        );
    }
});
