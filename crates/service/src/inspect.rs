//! `copytrace fingerprint` and `copytrace compare`: look at what the algorithms see.
//!
//! Operators use these to understand a verdict ("why did this page match?") and analysts to
//! compare algorithms on a pair of texts before trusting a threshold.

use copytrace_fingerprint::{
    Algorithm, Comparison, Fingerprint, WindowConfig, default_algorithms, normalize, windows,
};
use copytrace_matcher::{MatchConfig, Matcher};
use serde::Serialize;

/// The fingerprints of one text under one algorithm.
#[derive(Debug, Serialize)]
pub struct AlgorithmFingerprints {
    /// Algorithm name.
    pub algorithm: &'static str,
    /// Algorithm version stored with its fingerprints.
    pub version: u32,
    /// Fingerprint of the whole text.
    pub document: Fingerprint,
    /// Fingerprint of each window of the text.
    pub windows: Vec<WindowFingerprints>,
}

/// One window and its fingerprint.
#[derive(Debug, Serialize)]
pub struct WindowFingerprints {
    /// Byte offset of the window's first character in the original text.
    pub byte_start: u32,
    /// Byte offset just past its last character.
    pub byte_end: u32,
    /// Fingerprint of the window.
    pub fingerprint: Fingerprint,
}

/// The selected algorithms (`all` or one name).
pub fn select_algorithms(name: &str) -> Vec<Box<dyn Algorithm>> {
    default_algorithms()
        .into_iter()
        .filter(|a| name == "all" || a.name() == name)
        .collect()
}

/// Document- and window-level fingerprints of `text` under each algorithm.
pub fn fingerprints(text: &str, algorithms: &[Box<dyn Algorithm>]) -> Vec<AlgorithmFingerprints> {
    let normalized = normalize(text);
    let cuts = windows(&normalized.chars, &WindowConfig::default());
    algorithms
        .iter()
        .map(|algorithm| AlgorithmFingerprints {
            algorithm: algorithm.name(),
            version: algorithm.version(),
            document: algorithm.fingerprint_text(text),
            windows: cuts
                .iter()
                .map(|window| {
                    let (byte_start, byte_end) = normalized.byte_range(window.start, window.end);
                    WindowFingerprints {
                        byte_start,
                        byte_end,
                        fingerprint: algorithm
                            .fingerprint_text(&text[byte_start as usize..byte_end as usize]),
                    }
                })
                .collect(),
        })
        .collect()
}

/// A short human rendering of a fingerprint (long ones are abbreviated).
pub fn describe(fingerprint: &Fingerprint) -> String {
    fn list<T: std::fmt::Display + std::fmt::LowerHex>(values: &[T], hex: bool) -> String {
        let shown: Vec<String> = values
            .iter()
            .take(4)
            .map(|v| if hex { format!("{v:x}") } else { v.to_string() })
            .collect();
        let more = if values.len() > 4 {
            format!(", … ({} in all)", values.len())
        } else {
            String::new()
        };
        format!("[{}{more}]", shown.join(", "))
    }
    match fingerprint {
        Fingerprint::SimHash(value) => format!("{value:016x}"),
        Fingerprint::MinHash(values) => format!("minhash {}", list(values, false)),
        Fingerprint::Shingles(values) => format!("shingles {}", list(values, true)),
        Fingerprint::Dna(values) => format!("dna {}", list(values, false)),
        Fingerprint::Sentences(values) => format!("sentences {}", list(values, true)),
    }
}

/// How one algorithm compares two texts.
#[derive(Debug, Serialize)]
pub struct AlgorithmComparison {
    /// Algorithm name.
    pub algorithm: &'static str,
    /// Its verdict.
    #[serde(flatten)]
    pub comparison: Comparison,
}

/// What the full matcher (window index + alignment) says about B copying from A.
#[derive(Debug, Serialize)]
pub struct MatcherVerdict {
    /// Whether B would be reported as infringing A.
    pub is_match: bool,
    /// Share of A found in B.
    pub coverage: f64,
    /// Share of B taken from A.
    pub containment: f64,
    /// Canonical characters of B aligned with A.
    pub copied_chars: usize,
    /// Evidence passages.
    pub passages: usize,
}

/// Every algorithm's comparison of `a` and `b`, plus the matcher's verdict on `b` as a page
/// copying from `a` as a work.
pub fn compare(a: &str, b: &str) -> (Vec<AlgorithmComparison>, MatcherVerdict) {
    let comparisons = default_algorithms()
        .iter()
        .filter_map(|algorithm| {
            let comparison = algorithm.compare(
                &algorithm.fingerprint_text(a),
                &algorithm.fingerprint_text(b),
            );
            comparison.ok().map(|comparison| AlgorithmComparison {
                algorithm: algorithm.name(),
                comparison,
            })
        })
        .collect();
    // The in-memory index cannot fail, so its `Result`s carry no error worth reporting.
    let mut matcher = Matcher::new(MatchConfig::default());
    matcher
        .add_work(1, a)
        .expect("the in-memory index does not fail");
    let found = matcher
        .match_text(b)
        .expect("the in-memory index does not fail");
    let verdict = match found.into_iter().next() {
        Some(m) => MatcherVerdict {
            is_match: true,
            coverage: m.coverage,
            containment: m.containment,
            copied_chars: m.copied_chars,
            passages: m.evidence.len(),
        },
        None => MatcherVerdict {
            is_match: false,
            coverage: 0.0,
            containment: 0.0,
            copied_chars: 0,
            passages: 0,
        },
    };
    (comparisons, verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中，\
        手里提着一盏昏黄的灯笼。他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院。\
        远处传来几声犬吠，村子里的灯火一盏接一盏地熄灭了，只剩下这一盏灯笼还在雨中摇晃。";

    #[test]
    fn every_algorithm_and_the_matcher_call_a_text_and_its_traditional_copy_a_match() {
        let traditional = zhconv::zhconv(TEXT, zhconv::Variant::ZhTW);
        let (comparisons, verdict) = compare(TEXT, &traditional);
        assert_eq!(comparisons.len(), default_algorithms().len());
        for c in &comparisons {
            assert!(c.comparison.is_match, "{} does not match", c.algorithm);
        }
        assert!(verdict.is_match && verdict.coverage > 0.9, "{verdict:?}");
    }

    #[test]
    fn unrelated_texts_are_no_match_for_the_matcher() {
        let other = "牛腩切块冷水下锅焯水，撇去浮沫后捞出。番茄去皮切丁，锅中放少许油，炒出番茄的汁水，\
                     再放入牛腩翻炒均匀，加入热水没过食材，小火慢炖一个半小时，出锅前撒上葱花。";
        let (_, verdict) = compare(TEXT, other);
        assert!(!verdict.is_match);
    }

    #[test]
    fn window_fingerprints_slice_the_original_text() {
        let found = fingerprints(TEXT, &select_algorithms("simhash"));
        assert_eq!(found.len(), 1);
        assert!(found[0].windows.len() > 1);
        for w in &found[0].windows {
            assert!(TEXT.is_char_boundary(w.byte_start as usize));
            assert!(TEXT.is_char_boundary(w.byte_end as usize));
        }
        assert!(select_algorithms("nope").is_empty());
        assert_eq!(select_algorithms("all").len(), default_algorithms().len());
    }
}
