//! Verification and scoring, end to end through the public `Matcher`: exact evidence, shared
//! text that proves nothing, homophone copies, and what `score`, `coverage` and `containment`
//! mean on compilations and split works.

use std::collections::HashMap;

use copytrace_fingerprint::normalize;
use copytrace_fingerprint::pinyin::syllable_ids;
use copytrace_matcher::{AlignConfig, MatchConfig, Matcher, WorkId, WorkMatch};

const NOTICE: &str = include_str!("data/notice.txt");
const RAIN: &str = include_str!("data/novel_rain.txt");
const HARBOR: &str = include_str!("data/novel_harbor.txt");
const MOUNTAIN: &str = include_str!("data/novel_mountain.txt");
const NEWS: &str = include_str!("data/news_port.txt");
const PAGE_DATELINE: &str = include_str!("data/page_dateline.txt");
const PAGE_SNIPPETS: &str = include_str!("data/page_snippets.txt");
const PAGE_BOILERPLATE: &str = include_str!("data/page_boilerplate.txt");

const RAIN_ID: WorkId = 1;
const HARBOR_ID: WorkId = 2;
const MOUNTAIN_ID: WorkId = 3;
const NEWS_ID: WorkId = 4;

/// The three novels as their publisher registers them: each chapter followed by the notice.
fn with_notice(chapter: &str) -> String {
    format!("{chapter}{NOTICE}")
}

fn library(config: MatchConfig) -> Matcher {
    let mut m = Matcher::new(config);
    m.add_work(RAIN_ID, &with_notice(RAIN)).unwrap();
    m.add_work(HARBOR_ID, &with_notice(HARBOR)).unwrap();
    m.add_work(MOUNTAIN_ID, &with_notice(MOUNTAIN)).unwrap();
    m.add_work(NEWS_ID, NEWS).unwrap();
    m
}

fn work_text(id: WorkId) -> String {
    match id {
        RAIN_ID => with_notice(RAIN),
        HARBOR_ID => with_notice(HARBOR),
        MOUNTAIN_ID => with_notice(MOUNTAIN),
        NEWS_ID => NEWS.to_owned(),
        _ => unreachable!(),
    }
}

fn canonical(text: &str) -> String {
    normalize(text).text()
}

fn page_slice(page: &str, m: &WorkMatch, i: usize) -> String {
    let e = m.evidence[i];
    page[e.page_start as usize..e.page_end as usize].to_owned()
}

fn work_slice(work: &str, m: &WorkMatch, i: usize) -> String {
    let e = m.evidence[i];
    work[e.work_start as usize..e.work_end as usize].to_owned()
}

/// Two passages of the rain chapter, each starting and ending on a Han character.
const FIRST: &str = "对面裁缝铺的老周探出头来，冲她喊：“晚舟，你爹那批货到了没有？”她摇摇头，\
                     说码头那边来信，船在下游搁浅了，怕是还要等上七八天";
const SECOND: &str = "傍晚时分，邮差披着油布跑进铺子，从怀里掏出一封信。信封已经发黄，\
                      邮戳上的日期是十二年前。林晚舟愣了很久，才认出上面的字迹是母亲的";
/// The same passages in Traditional Chinese with full-width and corner-bracket punctuation.
const FIRST_TRADITIONAL: &str = "對面裁縫鋪的老周探出頭來，衝她喊：「晚舟，你爹那批貨到了沒有？」\
                                 她搖搖頭，說碼頭那邊來信；船在下游擱淺了，怕是還要等上七八天";
const SECOND_TRADITIONAL: &str = "傍晚時分，郵差披著油布跑進鋪子，從懷裡掏出一封信！信封已經發黃，\
                                  郵戳上的日期是十二年前——林晚舟愣了很久，才認出上面的字跡是母親的";
const BETWEEN: &str = "。\n廣告：本站小說每日更新，歡迎收藏。今晚的球賽你看了沒有？聽說主隊換了新教練，\
                       開場十分鐘就丟了兩個球，球迷們氣得直跺腳。\n";

fn assert_two_passages_slice_exactly(page: &str, first: &str, second: &str) {
    // Through the whole matcher: the candidate indexes must propose the work, verification
    // must find both passages.
    let found = library(MatchConfig::default()).match_text(page).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let m = &found[0];
    assert_eq!(m.work_id, RAIN_ID);
    assert_eq!(m.evidence.len(), 2, "{m:?}");
    let work = work_text(RAIN_ID);
    for (i, (copied, original)) in [(first, FIRST), (second, SECOND)].into_iter().enumerate() {
        assert_eq!(page_slice(page, m, i), copied, "page evidence {i}");
        assert_eq!(work_slice(&work, m, i), original, "work evidence {i}");
        assert_eq!(
            canonical(&page_slice(page, m, i)),
            canonical(&work_slice(&work, m, i))
        );
        let start = page.find(copied).unwrap();
        assert_eq!(m.evidence[i].page_start as usize, start);
        assert_eq!(m.evidence[i].page_end as usize, start + copied.len());
        let start = work.find(original).unwrap();
        assert_eq!(m.evidence[i].work_start as usize, start);
        assert_eq!(m.evidence[i].work_end as usize, start + original.len());
    }
    let copied = canonical(first).chars().count() + canonical(second).chars().count();
    assert_eq!(m.copied_chars, copied);
}

#[test]
fn two_copied_passages_with_unrelated_text_between_give_two_exact_evidence_passages() {
    assert!(RAIN.contains(FIRST) && RAIN.contains(SECOND));
    let page =
        format!("首页 > 言情小说 > 灯下旧信\n{FIRST}{BETWEEN}{SECOND}。\n上一章 | 目录 | 下一章");
    assert_two_passages_slice_exactly(&page, FIRST, SECOND);
}

#[test]
fn traditional_chinese_evidence_slices_exactly_the_copied_passages_of_both_originals() {
    assert_eq!(canonical(FIRST_TRADITIONAL), canonical(FIRST));
    assert_eq!(canonical(SECOND_TRADITIONAL), canonical(SECOND));
    let page = format!(
        "首頁 > 言情小說 > 燈下舊信\n{FIRST_TRADITIONAL}{BETWEEN}{SECOND_TRADITIONAL}。\n上一章 | 下一章"
    );
    assert_two_passages_slice_exactly(&page, FIRST_TRADITIONAL, SECOND_TRADITIONAL);
}

/// Neither the whole pipeline nor direct verification against any work reports the page.
fn assert_not_reported(matcher: &Matcher, page: &str) {
    let found = matcher.match_text(page).unwrap();
    assert!(found.is_empty(), "{found:?}");
    for id in [RAIN_ID, HARBOR_ID, MOUNTAIN_ID, NEWS_ID] {
        let verdict = matcher.verify_work(page, id);
        assert!(verdict.is_none(), "work {id}: {verdict:?}");
    }
}

#[test]
fn a_news_page_sharing_only_dateline_reporter_and_closing_is_not_reported() {
    assert!(NEWS.contains("新华社北京11月22日电（记者王海燕）记者从"));
    assert!(PAGE_DATELINE.contains("新华社北京11月22日电（记者王海燕）记者从"));
    assert!(NEWS.contains("（完）（责任编辑：李明）"));
    assert!(PAGE_DATELINE.contains("（完）（责任编辑：李明）"));
    assert_not_reported(&library(MatchConfig::default()), PAGE_DATELINE);
}

#[test]
fn a_chapter_sharing_only_a_poem_an_idiom_run_and_a_closing_is_not_reported() {
    for shared in [
        "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
        "做人要一心一意，做事要全心全意，待人要诚心诚意",
        "（本章完）",
    ] {
        assert!(
            RAIN.contains(shared) && PAGE_SNIPPETS.contains(shared),
            "{shared}"
        );
    }
    assert_not_reported(&library(MatchConfig::default()), PAGE_SNIPPETS);
}

#[test]
fn a_chapter_sharing_only_the_publishers_notice_and_closing_is_not_reported() {
    assert!(PAGE_BOILERPLATE.contains(NOTICE.trim()));
    assert!(HARBOR.contains("未完待续，请看下一章。"));
    assert_not_reported(&library(MatchConfig::default()), PAGE_BOILERPLATE);
}

#[test]
fn without_the_library_frequency_rule_the_notice_alone_would_accuse() {
    // The notice is long enough to pass every length threshold: only knowing that three
    // works carry it keeps the page above from being reported.
    let config = MatchConfig {
        align: AlignConfig {
            common_seed_min_works: 0,
            ..AlignConfig::default()
        },
        ..MatchConfig::default()
    };
    let verdict = library(config).verify_work(PAGE_BOILERPLATE, RAIN_ID);
    let verdict = verdict.expect("the notice is copied text when nothing says it is common");
    assert!(verdict.copied_chars >= canonical(NOTICE).chars().count());
}

#[test]
fn removing_works_updates_what_counts_as_boilerplate() {
    let mut m = library(MatchConfig::default());
    assert!(m.verify_work(PAGE_BOILERPLATE, RAIN_ID).is_none());
    m.remove_work(MOUNTAIN_ID).unwrap();
    // Two works left carry the notice: below the limit of three, it is their own text again.
    assert!(m.verify_work(PAGE_BOILERPLATE, RAIN_ID).is_some());
    m.add_work(MOUNTAIN_ID, &with_notice(MOUNTAIN)).unwrap();
    assert!(m.verify_work(PAGE_BOILERPLATE, RAIN_ID).is_none());
}

#[test]
fn a_pirated_chapter_with_the_notice_is_reported_without_counting_the_notice() {
    let page = format!(
        "笔趣阁 www.example.com 最新章节\n{}\n手机阅读请访问",
        with_notice(HARBOR)
    );
    let found = library(MatchConfig::default()).match_text(&page).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let m = &found[0];
    assert_eq!(m.work_id, HARBOR_ID);
    let chapter = canonical(HARBOR).chars().count();
    assert!(m.copied_chars <= chapter, "{} > {chapter}", m.copied_chars);
    assert!(
        m.copied_chars as f64 >= 0.95 * chapter as f64,
        "{}",
        m.copied_chars
    );
    assert!(m.coverage > 0.95, "coverage {}", m.coverage);
    assert!(m.method.starts_with("simhash+"), "{}", m.method);
    assert!(
        m.method.ends_with("+align"),
        "a verbatim copy needs no pinyin projection: {}",
        m.method
    );
}

/// Homophones by syllable id among CJK characters that normalization leaves unchanged.
fn homophone_table() -> HashMap<u32, Vec<char>> {
    let all: String = ('\u{4e00}'..='\u{9fa5}').collect();
    let normalized = normalize(&all);
    let mut table: HashMap<u32, Vec<char>> = HashMap::new();
    for (c, span) in normalized.chars.iter().zip(&normalized.spans) {
        if all[span.0 as usize..span.1 as usize].starts_with(*c) {
            table.entry(syllable_ids(&[*c])[0]).or_default().push(*c);
        }
    }
    table
}

/// `text` with `share` of its canonical characters replaced by a same-pinyin character, at
/// positions drawn by a fixed xorshift generator; returns the text and the number replaced.
fn substitute_homophones(text: &str, share: f64, seed: u64) -> (String, usize) {
    let table = homophone_table();
    let mut chars: Vec<char> = text.chars().collect();
    let canonical_count = canonical(text).chars().count();
    let mut replaceable: Vec<usize> = (0..chars.len())
        .filter(|&i| {
            let c = chars[i];
            table
                .get(&syllable_ids(&[c])[0])
                .is_some_and(|list| list.iter().any(|&h| h != c))
        })
        .collect();
    let mut state = seed;
    for i in (1..replaceable.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        replaceable.swap(i, (state % (i as u64 + 1)) as usize);
    }
    let wanted = (share * canonical_count as f64).round() as usize;
    assert!(
        replaceable.len() >= wanted,
        "not enough characters with homophones"
    );
    for &i in &replaceable[..wanted] {
        let c = chars[i];
        let list = &table[&syllable_ids(&[c])[0]];
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let others: Vec<char> = list.iter().copied().filter(|&h| h != c).collect();
        chars[i] = others[(state % others.len() as u64) as usize];
    }
    (chars.into_iter().collect(), wanted)
}

/// A work of a little over 1,000 canonical characters: three chapters of one serial.
fn long_work() -> String {
    format!("{RAIN}{HARBOR}{MOUNTAIN}")
}

fn homophone_library() -> Matcher {
    let mut m = Matcher::new(MatchConfig::default());
    m.add_work(1, &long_work()).unwrap();
    m.add_work(2, NEWS).unwrap();
    m
}

fn assert_homophone_copy_found(share: f64) {
    let work = long_work();
    assert!(canonical(&work).chars().count() >= 1000);
    let (page, replaced) = substitute_homophones(&work, share, 0x5eed_0001);
    let differing = canonical(&page)
        .chars()
        .zip(canonical(&work).chars())
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        differing >= replaced * 9 / 10,
        "{differing} of {replaced} differ"
    );
    let m = homophone_library();
    // The whole matcher finds it (the DNA index survives homophones) ...
    let found = m.match_text(&page).unwrap();
    assert_eq!(
        found.iter().map(|f| f.work_id).collect::<Vec<_>>(),
        [1],
        "{found:?}"
    );
    assert!(found[0].method.contains("dna"), "{}", found[0].method);
    // ... with the same verdict as verifying the work directly.
    let verdict = m
        .verify_work(&page, 1)
        .expect("the homophone copy is verified");
    assert_eq!(found[0].evidence, verdict.evidence);
    assert!(verdict.coverage > 0.9, "coverage {}", verdict.coverage);
    assert!(
        verdict.containment > 0.9,
        "containment {}",
        verdict.containment
    );
    assert!(verdict.method.ends_with("+pinyin"), "{}", verdict.method);
    assert!(m.verify_work(&page, 2).is_none());
    let without_pinyin = Matcher::new(MatchConfig {
        align: AlignConfig {
            pinyin: false,
            ..AlignConfig::default()
        },
        ..MatchConfig::default()
    });
    let mut without_pinyin = without_pinyin;
    without_pinyin.add_work(1, &work).unwrap();
    let characters_only = without_pinyin
        .verify_work(&page, 1)
        .map_or(0.0, |v| v.coverage);
    assert!(
        characters_only < verdict.coverage - 0.2,
        "characters alone already cover {characters_only}"
    );
}

#[test]
fn a_copy_with_fifteen_percent_homophones_is_verified_with_nearly_full_coverage() {
    assert_homophone_copy_found(0.15);
}

#[test]
fn a_copy_with_twenty_five_percent_homophones_is_verified_with_nearly_full_coverage() {
    assert_homophone_copy_found(0.25);
}

#[test]
fn a_partial_homophone_copy_reports_the_copied_share_as_coverage() {
    let work = long_work();
    let chapter = with_notice(RAIN);
    let (copied, _) = substitute_homophones(RAIN, 0.2, 0x5eed_0002);
    let page = format!("{PAGE_DATELINE}\n{copied}\n{}", &chapter[RAIN.len()..]);
    let share = canonical(RAIN).chars().count() as f64 / canonical(&work).chars().count() as f64;
    let verdict = homophone_library().verify_work(&page, 1).expect("verified");
    assert!(
        (verdict.coverage - share).abs() < 0.05,
        "coverage {} vs copied share {share}",
        verdict.coverage
    );
    assert!(verdict.method.contains("pinyin"));
}

#[test]
fn a_different_text_that_sounds_the_same_is_not_reported() {
    // Every character that has a homophone is swapped: the syllables are the work's, the
    // text is not.
    let work = long_work();
    let (page, _) = substitute_homophones(&work, 0.8, 0x5eed_0003);
    assert_eq!(
        syllable_ids(&normalize(&page).chars),
        syllable_ids(&normalize(&work).chars)
    );
    let m = homophone_library();
    assert!(m.verify_work(&page, 1).is_none());
    assert!(m.match_text(&page).unwrap().is_empty());
}

#[test]
fn a_compilation_page_reports_both_works_each_with_its_own_evidence() {
    let page = format!("合集：本周热门\n{HARBOR}\n—— 分隔 ——\n{NEWS}\n更多精彩内容请关注本站");
    let found = library(MatchConfig::default()).match_text(&page).unwrap();
    let ids: Vec<WorkId> = found.iter().map(|m| m.work_id).collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        ids.contains(&HARBOR_ID) && ids.contains(&NEWS_ID),
        "{ids:?}"
    );
    let harbor_start = page.find(HARBOR).unwrap();
    let news_start = page.find(NEWS).unwrap();
    for m in &found {
        let (start, end) = if m.work_id == HARBOR_ID {
            (harbor_start, harbor_start + HARBOR.len())
        } else {
            (news_start, news_start + NEWS.len())
        };
        let work = work_text(m.work_id);
        assert!(!m.evidence.is_empty());
        for (i, e) in m.evidence.iter().enumerate() {
            assert!(
                e.page_start as usize >= start && e.page_end as usize <= end,
                "{e:?}"
            );
            assert_eq!(
                canonical(&page_slice(&page, m, i)),
                canonical(&work_slice(&work, m, i))
            );
        }
        assert!(m.coverage > 0.95, "{m:?}");
        assert!(m.containment > 0.3 && m.containment < 0.7, "{m:?}");
        assert!((m.score - m.coverage).abs() < 1e-9);
    }
}

#[test]
fn a_work_split_across_three_pages_is_found_on_each_with_a_third_of_its_coverage() {
    let work = long_work();
    let mut m = library(MatchConfig::default());
    m.add_work(10, &work).unwrap();
    for chapter in [RAIN, HARBOR, MOUNTAIN] {
        let page = format!("上一页 | 目录 | 下一页\n{chapter}\n本站域名 www.example.com");
        let found = m.match_text(&page).unwrap();
        let verdict = found.iter().find(|v| v.work_id == 10).expect("found");
        let share =
            canonical(chapter).chars().count() as f64 / canonical(&work).chars().count() as f64;
        assert!(
            (verdict.coverage - share).abs() < 0.03,
            "{verdict:?} vs {share}"
        );
        assert!(verdict.coverage > 0.25 && verdict.coverage < 0.42);
        assert!(verdict.containment > 0.9, "{verdict:?}");
        assert!((verdict.score - verdict.containment).abs() < 1e-9);
    }
}

#[test]
fn coverage_follows_the_library_as_works_sharing_text_are_added_and_removed() {
    // RAIN alone: its notice is its own text, so a copy of the chapter alone (without the
    // notice) covers less than all of it. Once two more works carry the notice, it is library
    // boilerplate, the work's informative text shrinks to the chapter, and the same copy covers
    // more of it; removing one of them makes the notice the work's own text again.
    let mut m = Matcher::new(MatchConfig::default());
    m.add_work(RAIN_ID, &with_notice(RAIN)).unwrap();
    let coverage = |m: &Matcher| m.verify_work(RAIN, RAIN_ID).expect("a copy").coverage;
    let alone = coverage(&m);
    m.add_work(HARBOR_ID, &with_notice(HARBOR)).unwrap();
    m.add_work(MOUNTAIN_ID, &with_notice(MOUNTAIN)).unwrap();
    let shared = coverage(&m);
    assert!(
        shared > alone,
        "boilerplate leaves the denominator: {alone} -> {shared}"
    );
    m.remove_work(MOUNTAIN_ID).unwrap();
    assert_eq!(coverage(&m), alone, "the cached count follows the removal");
}
