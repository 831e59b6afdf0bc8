//! Scoring: precision, recall and F1 over (page, work) pairs, overall and per disguise, and the
//! sweep of the report threshold.
//!
//! A page that copies two works counts two positives; a reported work the page does not copy
//! is a false positive, on a negative page or a positive one alike. Pages the crawler never
//! stored cannot be reported, so their works count as misses: crawling is part of the pipeline.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::disguise::Page;

/// A reported (page, work) match: the work's id and the copied characters the matcher verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    /// Work id.
    pub work: String,
    /// Verified copied characters (the thresholded quantity).
    pub copied_chars: u32,
}

/// Reported matches of each page, by site path.
pub type Predictions = HashMap<String, Vec<Reported>>;

/// True and false positives and misses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Copied works reported.
    pub tp: usize,
    /// Works reported that the page does not copy.
    pub fp: usize,
    /// Copied works not reported.
    pub missed: usize,
}

impl Counts {
    /// Share of the reports that are right; 1.0 when nothing was reported.
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }

    /// Share of the copies found; 1.0 when there was nothing to find.
    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.missed)
    }

    /// Harmonic mean of precision and recall.
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }

    fn add(&mut self, other: Counts) {
        self.tp += other.tp;
        self.fp += other.fp;
        self.missed += other.missed;
    }
}

fn ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    }
}

/// The scores of one configuration at one threshold.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// All pages.
    pub overall: Counts,
    /// By disguise name.
    pub by_disguise: BTreeMap<&'static str, Counts>,
    /// By encoding on the wire.
    pub by_encoding: BTreeMap<&'static str, Counts>,
    /// Pages of each disguise.
    pub pages: BTreeMap<&'static str, usize>,
}

/// Scores the reports with at least `threshold` copied characters.
pub fn score(pages: &[Page], predictions: &Predictions, threshold: u32) -> Table {
    let mut table = Table::default();
    for page in pages {
        let expected: BTreeSet<&str> = page.expected.iter().map(String::as_str).collect();
        let reported: BTreeSet<&str> = predictions
            .get(&page.path)
            .into_iter()
            .flatten()
            .filter(|r| r.copied_chars >= threshold)
            .map(|r| r.work.as_str())
            .collect();
        let counts = Counts {
            tp: expected.intersection(&reported).count(),
            fp: reported.difference(&expected).count(),
            missed: expected.difference(&reported).count(),
        };
        table.overall.add(counts);
        *table.pages.entry(page.disguise).or_default() += 1;
        table
            .by_disguise
            .entry(page.disguise)
            .or_default()
            .add(counts);
        table
            .by_encoding
            .entry(page.encoding.name())
            .or_default()
            .add(counts);
    }
    table
}

/// One point of the threshold sweep.
#[derive(Debug, Clone, Copy)]
pub struct SweepPoint {
    /// Minimum copied characters.
    pub threshold: u32,
    /// Overall counts at that threshold.
    pub overall: Counts,
    /// False positives on the hard negatives that share only a dateline, quote or phrase.
    pub hard_negative_fp: usize,
    /// Lowest recall of any positive disguise.
    pub worst_disguise_recall: f64,
}

/// Hard negatives the acceptance criteria forbid any report on.
pub const STRICT_NEGATIVES: [&str; 7] = [
    "negative-dateline",
    "negative-quote",
    "negative-phrase",
    "negative-sentence",
    "negative-commentary",
    "negative-same-event",
    "negative-obfuscated",
];

impl Table {
    /// False positives on the [`STRICT_NEGATIVES`].
    pub fn hard_negative_fp(&self) -> usize {
        STRICT_NEGATIVES
            .iter()
            .filter_map(|n| self.by_disguise.get(n))
            .map(|c| c.fp)
            .sum()
    }

    /// The disguise with the lowest recall, and its recall (`("none", 1.0)` without any).
    pub fn worst_disguise(&self) -> (&'static str, f64) {
        self.by_disguise
            .iter()
            .filter(|(name, _)| !name.starts_with("negative"))
            .map(|(name, c)| (*name, c.recall()))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or(("none", 1.0))
    }
}

/// Scores every threshold.
pub fn sweep(pages: &[Page], predictions: &Predictions, thresholds: &[u32]) -> Vec<SweepPoint> {
    thresholds
        .iter()
        .map(|&threshold| {
            let table = score(pages, predictions, threshold);
            SweepPoint {
                threshold,
                overall: table.overall,
                hard_negative_fp: table.hard_negative_fp(),
                worst_disguise_recall: table.worst_disguise().1,
            }
        })
        .collect()
}

/// The threshold the benchmark recommends, among those with precision at least
/// `min_precision` and no report on a strict hard negative: the one with the highest F1, and
/// when several share it (a plateau), the middle one (the lower of the two middles), which
/// keeps the widest margin both from the false positives below and from the misses above, so
/// the choice holds on texts the benchmark has not seen. `None` when no threshold qualifies.
pub fn choose(points: &[SweepPoint], min_precision: f64) -> Option<SweepPoint> {
    let qualifying: Vec<SweepPoint> = points
        .iter()
        .filter(|p| p.overall.precision() >= min_precision && p.hard_negative_fp == 0)
        .copied()
        .collect();
    let best = qualifying
        .iter()
        .map(|p| p.overall.f1())
        .max_by(f64::total_cmp)?;
    let plateau: Vec<SweepPoint> = qualifying
        .into_iter()
        .filter(|p| p.overall.f1() == best)
        .collect();
    Some(plateau[(plateau.len() - 1) / 2])
}

/// An SVG chart of precision and recall against the threshold, one pair of lines per
/// configuration, with the chosen threshold marked.
pub fn plot_svg(series: &[(String, Vec<SweepPoint>)], chosen: Option<u32>) -> String {
    const W: f64 = 720.0;
    const H: f64 = 420.0;
    const LEFT: f64 = 60.0;
    const RIGHT: f64 = 200.0;
    const TOP: f64 = 30.0;
    const BOTTOM: f64 = 50.0;
    const Y_MIN: f64 = 0.5;
    let colors = [
        "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
    ];
    // Thresholds are evenly spaced (a categorical axis): the interesting ones are the small
    // ones, which a linear axis would crowd together.
    let thresholds: Vec<u32> = series
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.threshold))
        .collect::<BTreeSet<u32>>()
        .into_iter()
        .collect();
    let steps = thresholds.len().saturating_sub(1).max(1) as f64;
    let x = |t: u32| {
        let i = thresholds.partition_point(|&known| known < t) as f64;
        LEFT + 10.0 + (W - LEFT - RIGHT - 20.0) * i / steps
    };
    let y = |v: f64| TOP + (H - TOP - BOTTOM) * (1.0 - (v.max(Y_MIN) - Y_MIN) / (1.0 - Y_MIN));
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{LEFT}\" y=\"18\" font-size=\"14\">Precision (solid) and recall (dashed) against \
         the minimum copied characters</text>\n"
    );
    for tick in 0..=5 {
        let v = Y_MIN + (1.0 - Y_MIN) * f64::from(tick) / 5.0;
        svg.push_str(&format!(
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y0:.1}\" y2=\"{y0:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{v:.1}</text>\n",
            W - RIGHT,
            LEFT - 6.0,
            y(v) + 4.0,
            y0 = y(v)
        ));
    }
    for t in &thresholds {
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{t}</text>\n",
            x(*t),
            H - BOTTOM + 16.0
        ));
    }
    svg.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">minimum verified copied characters</text>\n",
        LEFT + (W - LEFT - RIGHT) / 2.0,
        H - 12.0
    ));
    if let Some(t) = chosen {
        svg.push_str(&format!(
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{TOP}\" y2=\"{1}\" stroke=\"#888\" \
             stroke-dasharray=\"2,3\"/><text x=\"{0:.1}\" y=\"{2}\" text-anchor=\"middle\">chosen</text>\n",
            x(t),
            H - BOTTOM,
            TOP - 2.0
        ));
    }
    for (i, (name, points)) in series.iter().enumerate() {
        let color = colors[i % colors.len()];
        let line = |value: &dyn Fn(&SweepPoint) -> f64| -> String {
            points
                .iter()
                .map(|p| format!("{:.1},{:.1}", x(p.threshold), y(value(p))))
                .collect::<Vec<_>>()
                .join(" ")
        };
        svg.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n",
            line(&|p| p.overall.precision())
        ));
        svg.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" stroke-dasharray=\"6,4\" \
             points=\"{}\"/>\n",
            line(&|p| p.overall.recall())
        ));
        let ly = TOP + 20.0 + 20.0 * i as f64;
        svg.push_str(&format!(
            "<line x1=\"{0}\" x2=\"{1}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"2\"/>\
             <text x=\"{2}\" y=\"{3}\">{4}</text>\n",
            W - RIGHT + 15.0,
            W - RIGHT + 40.0,
            W - RIGHT + 46.0,
            ly + 4.0,
            name
        ));
    }
    svg.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" fill=\"#555\">y axis starts at {Y_MIN}</text>\n</svg>\n",
        W - RIGHT + 15.0,
        H - BOTTOM
    ));
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quality::disguise::PageEncoding;

    fn page(path: &str, disguise: &'static str, expected: &[&str]) -> Page {
        Page {
            path: path.to_owned(),
            disguise,
            expected: expected.iter().map(|s| (*s).to_owned()).collect(),
            title: String::new(),
            paragraphs: Vec::new(),
            encoding: PageEncoding::Utf8,
            prev: None,
            next: None,
        }
    }

    fn reported(work: &str, copied_chars: u32) -> Reported {
        Reported {
            work: work.to_owned(),
            copied_chars,
        }
    }

    #[test]
    fn pairs_are_scored_per_page_and_threshold() {
        let pages = [
            page("/a", "verbatim", &["w1"]),
            page("/b", "interleaved", &["w1", "w2"]),
            page("/c", "negative-quote", &[]),
            page("/d", "verbatim", &["w3"]),
        ];
        let predictions: Predictions = [
            (
                "/a".to_owned(),
                vec![reported("w1", 500), reported("w9", 70)],
            ),
            ("/b".to_owned(), vec![reported("w2", 300)]),
            ("/c".to_owned(), vec![reported("w4", 40)]),
        ]
        .into_iter()
        .collect();
        let at_60 = score(&pages, &predictions, 60);
        assert_eq!(
            at_60.overall,
            Counts {
                tp: 2,
                fp: 1,
                missed: 2
            }
        );
        assert_eq!(at_60.by_disguise["negative-quote"].fp, 0);
        let at_20 = score(&pages, &predictions, 20);
        assert_eq!(at_20.by_disguise["negative-quote"].fp, 1);
        let points = sweep(&pages, &predictions, &[20, 60, 100]);
        assert_eq!(points[0].hard_negative_fp, 1);
        let best = choose(&points, 0.5).unwrap();
        assert_eq!(best.threshold, 100, "w9 (70) is dropped, no hit lost");
        let plateau = sweep(&pages, &predictions, &[80, 90, 100, 110, 120]);
        assert_eq!(
            choose(&plateau, 0.5).unwrap().threshold,
            100,
            "the middle of a plateau"
        );
        assert!(choose(&points, 1.01).is_none());
    }

    #[test]
    fn the_plot_is_an_svg_with_one_line_pair_per_series() {
        let points = vec![
            SweepPoint {
                threshold: 20,
                overall: Counts {
                    tp: 9,
                    fp: 1,
                    missed: 0,
                },
                hard_negative_fp: 1,
                worst_disguise_recall: 1.0,
            },
            SweepPoint {
                threshold: 60,
                overall: Counts {
                    tp: 8,
                    fp: 0,
                    missed: 1,
                },
                hard_negative_fp: 0,
                worst_disguise_recall: 0.8,
            },
        ];
        let svg = plot_svg(
            &[
                ("all".to_owned(), points.clone()),
                ("dna".to_owned(), points),
            ],
            Some(60),
        );
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert!(svg.contains("chosen"));
    }
}

/// The 95 % Wilson score interval of a proportion of `successes` in `trials` (`(0, 1)` when
/// there are none): how far the true precision may be from the measured one, given how many
/// reports it was measured on. A precision of 1.000 over 1,000 reports only says it is above
/// 0.996; the 1 in 500 needs a few thousand.
pub fn wilson_interval(successes: usize, trials: usize) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    const Z: f64 = 1.959_963_984_540_054;
    let n = trials as f64;
    let p = successes as f64 / n;
    let centre = p + Z * Z / (2.0 * n);
    let margin = Z * (p * (1.0 - p) / n + Z * Z / (4.0 * n * n)).sqrt();
    let scale = 1.0 + Z * Z / n;
    (
        ((centre - margin) / scale).max(0.0),
        ((centre + margin) / scale).min(1.0),
    )
}

#[cfg(test)]
mod wilson_tests {
    use super::wilson_interval;

    #[test]
    fn the_wilson_interval_matches_known_values() {
        // 0 failures in 1,000: the lower bound is n / (n + z²).
        let (low, high) = wilson_interval(1_000, 1_000);
        assert!(
            (low - 1_000.0 / (1_000.0 + 1.959_964_f64.powi(2))).abs() < 1e-6,
            "{low}"
        );
        assert!((high - 1.0).abs() < 1e-12);
        // 8 of 10: (0.490, 0.943) in every textbook.
        let (low, high) = wilson_interval(8, 10);
        assert!(
            (low - 0.4902).abs() < 1e-3 && (high - 0.9433).abs() < 1e-3,
            "{low} {high}"
        );
        assert_eq!(wilson_interval(0, 0), (0.0, 1.0));
    }
}
