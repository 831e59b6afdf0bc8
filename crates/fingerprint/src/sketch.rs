//! Page sketches: a small, fixed sample of a text's character 3-grams, so that works added to
//! the library later can find the stored pages that may copy them without reading any page
//! text again (incremental matching).
//!
//! The sample is *value-based*: a 3-gram of the canonical text is kept when its hash falls in a
//! fixed eighth of the hash space, whatever text it comes from. A page and a work that share a
//! passage therefore keep the same 3-grams of it, and the number of kept 3-grams they share
//! estimates the length of the shared passage (about one in eight of its 3-grams) with no
//! alignment. Canonical text is the one matching reads (Traditional folded to Simplified,
//! punctuation and junk dropped), so those disguises do not hide a copy from the sketch;
//! characters replaced by homophones remove the 3-grams they touch, which on a copy of any
//! length still leaves many.
//!
//! A sketch costs about 4 bytes per 8 characters of text: 1.5 kB for a 3,000-character chapter.

use crate::normalize::normalize;
use crate::simhash::ngram_hashes;

/// Version of the sketch: a stored sketch of another version is not comparable and is made
/// again.
pub const SKETCH_VERSION: u32 = 1;

/// Length of the sampled character n-grams.
pub const SKETCH_NGRAM: usize = 3;

/// One in `2^SAMPLE_BITS` n-gram hashes is kept.
const SAMPLE_BITS: u32 = 3;

/// The kept n-gram hashes of `text`, sorted and without repeats.
pub fn sketch(text: &str) -> Vec<u32> {
    let chars = normalize(text).chars;
    let mut kept: Vec<u32> = ngram_hashes(&chars, SKETCH_NGRAM)
        .into_iter()
        .filter(|h| h >> (64 - SAMPLE_BITS) == 0)
        // The top bits are zero for every kept hash: the low half tells them apart.
        .map(|h| h as u32)
        .collect();
    kept.sort_unstable();
    kept.dedup();
    kept
}

/// How many sampled n-grams two sketches share (both sorted, as [`sketch`] returns them).
pub fn shared(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut count) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                count += 1;
                i += 1;
                j += 1;
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAPTER: &str = "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中，\
        手里提着一盏昏黄的灯笼。他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院。“你就是沈青川？”\
        陌生人开口问道，声音低沉得像远处滚过的闷雷。少年点了点头，握紧了门框。远处传来几声犬吠，\
        村子里的灯火一盏接一盏地熄灭了，只剩下这一盏灯笼还在雨中摇晃。他把少年带到山脚下，\
        指着云雾里若隐若现的石阶说，从今往后，你每天要走完这九百九十九级台阶，再挑两担水回来。";
    const NEWS: &str = "滨海港口三季度吞吐量创新高。记者从滨海港务集团获悉，今年第三季度滨海港货物吞吐量\
        达到一亿二千万吨，同比增长百分之八点六，创下历史同期最高纪录。集装箱吞吐量同步增长，\
        新开通的三条国际航线为增长贡献了重要力量。港务集团负责人表示，下一步将继续推进智慧码头建设。";

    #[test]
    fn a_sketch_is_a_sorted_eighth_of_the_trigrams() {
        let s = sketch(CHAPTER);
        assert!(s.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        let trigrams = normalize(CHAPTER).chars.len() - 2;
        assert!(
            s.len() * 16 > trigrams && s.len() * 4 < trigrams,
            "{} of {trigrams}",
            s.len()
        );
        assert!(sketch("").is_empty());
    }

    #[test]
    fn a_copy_in_boilerplate_shares_most_of_the_sketch_and_other_text_almost_none() {
        let work = sketch(CHAPTER);
        let page = sketch(&format!(
            "首页 | 玄幻小说 | 排行榜\n{CHAPTER}\n上一章 下一章 加入书签"
        ));
        assert!(
            shared(&work, &page) == work.len(),
            "every kept trigram of the work is there"
        );
        assert!(shared(&work, &sketch(NEWS)) <= 1);
    }

    #[test]
    fn traditional_characters_and_junk_do_not_hide_a_copy() {
        let traditional = "夜色漸深，雨水順著屋簷滴落下來。少年推開木門，看見一個披著蓑衣的陌生人站在院中，\
            手裡提著一盞昏黃的燈籠。他的眼睛像是藏著整片星空，沉默地望著這座破舊的小院。";
        let junked: String = CHAPTER
            .chars()
            .enumerate()
            .flat_map(|(i, c)| if i % 7 == 6 { vec![c, '※'] } else { vec![c] })
            .collect();
        let work = sketch(CHAPTER);
        assert!(shared(&work, &sketch(traditional)) >= 3);
        assert!(shared(&work, &sketch(&junked)) * 10 >= work.len() * 9);
    }
}
