#!/usr/bin/env python3
"""Peers on Copytrace's quality benchmark pages: datasketch, gaoya and PyPI simhash.

Usage: quality.py DIR [--out FILE.json] [--jobs 2] [--jieba]

DIR is a directory written by `copytrace-bench quality` (or by `make_sample.py`):
`works.jsonl` ({"id", "text"}: the registered works) and `pages.jsonl` ({"id", "disguise",
"expected", "text"}: pages as served, `expected` = ids of the works the page copies). Every
peer indexes the works and is asked, for every page, which works it copies. Each runs with its
documented settings (cited at its function); a small sweep of its main parameter on the same
pages shows the best F1 it could reach, an upper bound tuned on the test data.

Fairness:
- All peers get the normalization Copytrace documents (docs/algorithms.md, steps 1-3): NFKC,
  lower case, drop everything that is not a letter or digit, decimal digits of every script as
  ASCII. No disguise-specific help: no Traditional->Simplified step, no pinyin.
- Chinese has no spaces, so word analyzers are useless on it: MinHash peers get character
  n-gram shingles (3-grams; gaoya its own char 3-4-gram analyzer as in its own example), simhash
  the width-3 character features of its documentation, and a jieba-words variant.
- The script uses both cores where the peer allows it: gaoya's native threads, and two worker
  processes for datasketch's and simhash's pure-Python signing (reported seconds include it).

Scoring (the Rust harness uses the same): units are (page, work) pairs. For each page,
TP = |predicted & expected|, FP = |predicted - expected|, FN = |expected - predicted|, summed
over the pages (overall, or the pages of one disguise). precision = TP / (TP + FP) and
recall = TP / (TP + FN), with 0/0 = 1.0 for both (nothing claimed / nothing to find); F1 is
their harmonic mean (0 when both are 0). Counts are always reported beside the ratios.

The script sets itself up: it creates the venv `bench/cache/peers-venv` (ignored by git) and
pip-installs the pinned versions below when they are missing, then re-runs itself inside it.
"""

import argparse
import json
import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pinned_venv import reexec_in_venv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
VENV = os.path.join(REPO, "bench", "cache", "peers-venv")
PINS = {
    "datasketch": "2.0.0",
    "numpy": "2.4.6",
    "scipy": "1.17.1",
    "gaoya": "0.2.2",
    "simhash": "2.1.2",
    "jieba": "0.42.1",
}
LABEL_TUNED = "tuned on the test data (upper bound)"


# ---------------------------------------------------------------------------------------------
# Bootstrap: run inside bench/cache/peers-venv with the pinned versions.


def bootstrap():
    """Re-runs this script inside its venv with the pinned versions."""
    reexec_in_venv(VENV, PINS, __file__)


# ---------------------------------------------------------------------------------------------
# Normalization and features (run in worker processes, so module-level functions).

_DIGITS = None
_NON_ALNUM = None


def _tables():
    global _DIGITS, _NON_ALNUM
    if _DIGITS is None:
        import re
        import unicodedata

        _DIGITS = {
            c: str(unicodedata.decimal(chr(c)))
            for c in range(0x80, 0x110000)
            if unicodedata.decimal(chr(c), None) is not None
        }
        # \w in Python's Unicode regexes is exactly str.isalnum() plus "_".
        _NON_ALNUM = re.compile(r"[\W_]+")
    return _DIGITS, _NON_ALNUM


def normalize(text):
    """Copytrace's documented steps 1-3 (docs/algorithms.md), without Traditional->Simplified."""
    import unicodedata

    digits, non_alnum = _tables()
    return non_alnum.sub("", unicodedata.normalize("NFKC", text).lower().translate(digits))


def char_ngrams(text, n=3):
    """Overlapping character n-grams; a text shorter than n is one feature (as simhash's docs)."""
    return [text[i : i + n] for i in range(max(len(text) - n + 1, 1))] if text else []


def minhash_signature(text):
    from datasketch import MinHash

    shingles = set(char_ngrams(text))
    m = MinHash(num_perm=128)
    m.update_batch([s.encode("utf-8") for s in shingles])
    return m.hashvalues, len(shingles)


def simhash_chars(text):
    from simhash import Simhash

    return Simhash(char_ngrams(text), f=64).value


def simhash_words(text):
    import jieba
    from simhash import Simhash

    return Simhash([w for w in jieba.lcut(text, HMM=False) if w.strip()], f=64).value


def pool_map(jobs, func, items, initializer=None):
    if jobs <= 1:
        if initializer:
            initializer()
        return [func(x) for x in items]
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(jobs, initializer=initializer) as pool:
        return pool.map(func, items, chunksize=max(1, len(items) // (jobs * 8)))


_DATASKETCH = None  # (work ids, work MinHashes, work sizes, [(page MinHash, size)])


def run_lsh(threshold):
    """MinHashLSH at `threshold` over _DATASKETCH's signatures: predictions, index s, query s."""
    from datasketch import MinHashLSH

    work_ids, work_hashes, _, page_hashes = _DATASKETCH
    t0 = time.perf_counter()
    lsh = MinHashLSH(threshold=threshold, num_perm=128)
    with lsh.insertion_session() as session:
        for key, m in zip(work_ids, work_hashes):
            session.insert(key, m)
    t1 = time.perf_counter()
    predictions = [set(lsh.query(m)) for m, _ in page_hashes]
    return predictions, t1 - t0, time.perf_counter() - t1


def run_ensemble(threshold):
    """MinHashLSHEnsemble at `threshold` (num_part=32): predictions, index s, query s."""
    from datasketch import MinHashLSHEnsemble

    work_ids, work_hashes, work_sizes, page_hashes = _DATASKETCH
    t0 = time.perf_counter()
    ensemble = MinHashLSHEnsemble(threshold=threshold, num_perm=128, num_part=32)
    ensemble.index(
        [(key, m, size) for key, m, size in zip(work_ids, work_hashes, work_sizes) if size]
    )
    t1 = time.perf_counter()
    predictions = [set(ensemble.query(m, size)) if size else set() for m, size in page_hashes]
    return predictions, t1 - t0, time.perf_counter() - t1


# ---------------------------------------------------------------------------------------------
# Scoring.


def ratio(a, b):
    return a / b if b else 1.0


def metrics(tp, fp, fn):
    p, r = ratio(tp, tp + fp), ratio(tp, tp + fn)
    return {
        "tp": tp, "fp": fp, "fn": fn,
        "precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
    }


def is_negative(disguise):
    return disguise.startswith("negative")


def score(pages, predictions):
    """Overall, per disguise and per negative class (pages, FP pairs, pages with any FP)."""
    total = [0, 0, 0]
    per = {}
    negatives = {}
    for page, predicted in zip(pages, predictions):
        expected = set(page["expected"])
        predicted = set(predicted)
        counts = (
            len(predicted & expected), len(predicted - expected), len(expected - predicted)
        )
        sums = per.setdefault(page["disguise"], [0, 0, 0])
        for i in range(3):
            total[i] += counts[i]
            sums[i] += counts[i]
        if is_negative(page["disguise"]):
            neg = negatives.setdefault(page["disguise"], {"pages": 0, "fp": 0, "pages_with_fp": 0})
            neg["pages"] += 1
            neg["fp"] += counts[1]
            neg["pages_with_fp"] += 1 if counts[1] else 0
    return {
        "overall": metrics(*total),
        "per_disguise": {d: metrics(*per[d]) for d in sorted(per)},
        "negatives": {d: negatives[d] for d in sorted(negatives)},
    }


def sweep_result(pages, parameter, candidates, note):
    """candidates: [(value, predictions)]. Returns every row and the best-F1 one, labelled."""
    rows = []
    best = None
    for value, predictions in candidates:
        scored = score(pages, predictions)
        rows.append({parameter: value, **scored["overall"]})
        if best is None or scored["overall"]["f1"] > best["overall"]["f1"]:
            best = {"label": LABEL_TUNED, "parameter": parameter, "value": value, **scored}
    best["note"] = note
    return rows, best


# ---------------------------------------------------------------------------------------------
# Peers. Each returns {"settings", "tokenization", "predictions", "timing", "sweep", "best"}.


def datasketch_peers(works, pages, norm_works, norm_pages, jobs):
    """datasketch 2.0.0: MinHashLSH and MinHashLSHEnsemble over the same MinHash signatures.

    Settings: `MinHash(num_perm=128)` (default, scheme "affine32") and
    `MinHashLSH(threshold=0.5, num_perm=128)` as in the MinHash LSH documentation example
    (docs/lsh.rst, https://ekzhu.github.io/datasketch/lsh.html; the constructor's own default
    is threshold=0.9, stricter still). Pages usually carry only part of a work plus site text,
    which Jaccard penalises, so datasketch's containment index is run too:
    `MinHashLSHEnsemble(threshold=0.8, num_perm=128, num_part=32)` as in its documentation
    example (docs/lshensemble.rst, https://ekzhu.github.io/datasketch/lshensemble.html),
    indexing works and querying pages: containment = |page & work| / |page|.
    """
    from datasketch import MinHash

    start = time.perf_counter()
    signed = pool_map(jobs, minhash_signature, norm_works + norm_pages)
    hashes = [MinHash(num_perm=128, hashvalues=h, scheme="affine32") for h, _ in signed]
    sizes = [size for _, size in signed]
    sign = time.perf_counter() - start
    work_ids = [w["id"] for w in works]
    nw = len(works)
    page_hashes = list(zip(hashes[nw:], sizes[nw:]))

    global _DATASKETCH
    _DATASKETCH = (work_ids, hashes[:nw], sizes[:nw], page_hashes)
    tokenization = (
        "normalized text (NFKC, lower case, letters and digits only); set of character "
        "3-gram shingles, UTF-8 bytes, datasketch's default SHA-1 hash"
    )
    results = {}
    for name, run, recommended, sweep, settings in [
        ("datasketch-lsh", run_lsh, 0.5, [0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9],
         "MinHash(num_perm=128); MinHashLSH(threshold=0.5, "
         "num_perm=128) [documented example, docs/lsh.rst]"),
        # Building an ensemble costs seconds (it optimises its bands for 10 size ratios), so its
        # sweep is coarser and runs in worker processes.
        ("datasketch-ensemble", run_ensemble, 0.8, [0.1, 0.3, 0.5, 0.7, 0.9],
         "MinHash(num_perm=128); "
         "MinHashLSHEnsemble(threshold=0.8, num_perm=128, num_part=32) [documented example, "
         "docs/lshensemble.rst]; query = page, containment of the page in a work"),
    ]:
        predictions, index_s, query_s = run(recommended)
        sweep_start = time.perf_counter()
        swept = pool_map(jobs, run, sweep)
        candidates = sorted(
            [(recommended, predictions)] + [(t, r[0]) for t, r in zip(sweep, swept)],
            key=lambda c: c[0],
        )
        rows, best = sweep_result(
            pages, "threshold", candidates,
            f"{name} rebuilt at each threshold of {sorted(set(sweep) | {recommended})} over "
            "the same signatures",
        )
        results[name] = {
            "settings": settings,
            "tokenization": tokenization,
            "predictions": predictions,
            "timing": {"sign works and pages (shared by both datasketch entries)": sign,
                       "index": index_s, "query": query_s},
            "sweep": rows,
            "best": best,
            "sweep_seconds": time.perf_counter() - sweep_start,
        }
    return results


def gaoya_peer(works, pages, norm_works, norm_pages, jobs):
    """gaoya 0.2.2 MinHashStringIndex with the settings of its own text deduplication example.

    py-gaoya/examples/deduplication_scholarly_articles_gaoya.ipynb (linked from its PyPI page as
    "Document Deduplication with Gaoya") uses `MinHashStringIndex(hash_size=32,
    jaccard_threshold=0.5, num_bands=50, band_size=4, num_hashes=None, analyzer='char',
    lowercase=False, ngram_range=(3, 4))` on pre-processed text; the README's toy example
    (word unigrams, 42 bands of 3) cannot work on unsegmented Chinese. gaoya signs and queries
    in native threads (`par_bulk_insert_docs`, `par_bulk_query`).

    gaoya keeps a band candidate only if its estimated Jaccard similarity is >= the threshold,
    so an index built with jaccard_threshold=0 and queried with `return_similarity=True`
    gives, filtered at t, exactly what the same bands at threshold t return: the sweep uses
    that for the documented bands (50 x 4) and for 200 bands of 1 (every shared minimum is a
    candidate, the most permissive banding of the same 200 hashes). The script checks the
    equivalence at the documented setting.
    """
    from gaoya.minhash import MinHashStringIndex

    def build(threshold, bands, rows):
        index = MinHashStringIndex(
            hash_size=32, jaccard_threshold=threshold, num_bands=bands, band_size=rows,
            num_hashes=None, analyzer="char", lowercase=False, ngram_range=(3, 4),
        )
        index.par_bulk_insert_docs(list(range(len(works))), norm_works)
        return index

    work_ids = [w["id"] for w in works]
    t0 = time.perf_counter()
    index = build(0.5, 50, 4)
    t1 = time.perf_counter()
    predictions = [{work_ids[i] for i in found} for found in index.par_bulk_query(norm_pages)]
    t2 = time.perf_counter()

    sweep_start = time.perf_counter()
    candidates = []
    for bands, rows in [(50, 4), (200, 1)]:
        found = build(0.0, bands, rows).par_bulk_query(norm_pages, return_similarity=True)
        for t in [0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]:
            candidates.append((
                f"{bands}x{rows}@{t}",
                [{work_ids[i] for i, s in hits if s >= t} for hits in found],
            ))
            if (bands, rows, t) == (50, 4, 0.5) and candidates[-1][1] != predictions:
                sys.exit("gaoya: filtering at 0.5 disagrees with jaccard_threshold=0.5")
    rows_, best = sweep_result(
        pages, "bands x rows @ jaccard_threshold", candidates,
        "bands 50x4 (documented) and 200x1, thresholds 0.05-0.9",
    )
    return {"gaoya": {
        "settings": "MinHashStringIndex(hash_size=32, jaccard_threshold=0.5, num_bands=50, "
                    "band_size=4, analyzer='char', lowercase=False, ngram_range=(3, 4)) "
                    "[gaoya's deduplication example notebook]",
        "tokenization": "normalized text (NFKC, lower case, letters and digits only); gaoya's "
                        "built-in character 3- and 4-grams",
        "predictions": predictions,
        "timing": {"sign and index works": t1 - t0, "sign and query pages": t2 - t1},
        "sweep": rows_,
        "best": best,
        "sweep_seconds": time.perf_counter() - sweep_start,
    }}


def simhash_peers(works, pages, norm_works, norm_pages, jobs, with_jieba):
    """PyPI simhash 2.1.2 (leonsim/simhash): `SimhashIndex(objs, f=64, k=3)`, `get_near_dups`.

    Its documentation (README and https://leons.im/posts/a-python-implementation-of-simhash-
    algorithm/) builds the index with k=3 and features from `get_features`: lower case, drop
    `[^\\w]+`, slide a window of width 3. Here that window runs over the normalized text (which
    already is lower case letters and digits). The word variant uses jieba 0.42.1 words
    (`jieba.lcut(text, HMM=False)`, count-weighted like the library's own text mode).

    `SimhashIndex` is exact (k + 1 pigeonhole blocks, every candidate's distance checked), so
    the sweep over k computes the Hamming distances directly; the script checks that at the
    documented k = 3 this gives exactly the index's answers.
    """
    from simhash import Simhash, SimhashIndex

    # SimhashIndex logs a warning per query that meets a bucket of more than 200 entries.
    logging.getLogger("simhash").setLevel(logging.ERROR)
    work_ids = [w["id"] for w in works]
    variants = [("simhash", simhash_chars, None,
                 "normalized text; character 3-grams (the docs' get_features, width=3)")]
    if with_jieba:
        import jieba

        def init():
            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()

        variants.append(("simhash-jieba", simhash_words, init,
                         "normalized text; jieba.lcut(HMM=False) words, count-weighted"))
    results = {}
    for name, func, init, tokenization in variants:
        t0 = time.perf_counter()
        if init:
            init()  # load jieba's dictionary before forking, counted in this peer's time
        values = pool_map(jobs, func, norm_works + norm_pages, initializer=init)
        sign = time.perf_counter() - t0
        nw = len(works)
        t1 = time.perf_counter()
        index = SimhashIndex([(key, Simhash(v, f=64)) for key, v in zip(work_ids, values[:nw])],
                             f=64, k=3)
        t2 = time.perf_counter()
        predictions = [set(index.get_near_dups(Simhash(v, f=64))) for v in values[nw:]]
        t3 = time.perf_counter()

        sweep_start = time.perf_counter()
        top = 24
        near = [
            [(d, work_ids[i]) for i, w in enumerate(values[:nw])
             if (d := (q ^ w).bit_count()) <= top]
            for q in values[nw:]
        ]
        if [{w for d, w in row if d <= 3} for row in near] != predictions:
            sys.exit(f"{name}: Hamming scan at k=3 disagrees with SimhashIndex(k=3)")
        candidates = [
            (k, [{w for d, w in row if d <= k} for row in near]) for k in range(0, top + 1)
        ]
        rows, best = sweep_result(
            pages, "k", candidates,
            "k 0-24 by Hamming distance (equal to SimhashIndex(k); checked at k=3)",
        )
        results[name] = {
            "settings": "Simhash(features, f=64); SimhashIndex(objs, f=64, k=3) "
                        "[documented example]",
            "tokenization": tokenization,
            "predictions": predictions,
            "timing": {"sign works and pages": sign, "index": t2 - t1, "query": t3 - t2},
            "sweep": rows,
            "best": best,
            "sweep_seconds": time.perf_counter() - sweep_start,
        }
    return results


# ---------------------------------------------------------------------------------------------
# Report.


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def print_table(title, head, rows, names):
    print(f"\n{title}\n{head:22} {'pages':>5}" + "".join(f" {n[:19]:>19}" for n in names))
    for label, pages, cells in rows:
        print(f"{label:22} {pages:5d}" + "".join(f" {c:>19}" for c in cells))


def print_report(report, pages):
    names = list(report)
    width = max(20, max(len(n) for n in names) + 2)
    print()
    print(f"{'peer':{width}} {'P':>7} {'R':>7} {'F1':>7} {'TP':>6} {'FP':>6} {'FN':>6} "
          f"{'s':>7}  best F1 ({LABEL_TUNED})")
    for name in names:
        r = report[name]
        o = r["overall"]
        b = r["best_sweep"]
        bo = b["overall"]
        print(f"{name:{width}} {o['precision']:7.4f} {o['recall']:7.4f} {o['f1']:7.4f} "
              f"{o['tp']:6d} {o['fp']:6d} {o['fn']:6d} {r['seconds']:7.1f}  "
              f"{bo['f1']:.4f} at {b['parameter']}={b['value']} "
              f"(P {bo['precision']:.4f} R {bo['recall']:.4f})")

    disguises = sorted({p["disguise"] for p in pages})
    counts = {d: sum(1 for p in pages if p["disguise"] == d) for d in disguises}
    positives = [d for d in disguises if not is_negative(d)]
    negatives = [d for d in disguises if is_negative(d)]

    def cell(m):
        return f"{m['recall']:.3f} / {m['precision']:.3f}"

    print_table(
        "recall / precision per disguise, recommended settings", "disguise",
        [(d, counts[d], [cell(report[n]["per_disguise"][d]) for n in names]) for d in positives],
        names,
    )
    if negatives:
        print_table(
            "false positives on negatives: FP pairs / pages with any FP", "class",
            [(d, counts[d], [f"{report[n]['negatives'][d]['fp']} / "
                             f"{report[n]['negatives'][d]['pages_with_fp']}" for n in names])
             for d in negatives],
            names,
        )
    print_table(
        f"recall / precision per disguise, best sweep setting ({LABEL_TUNED})", "disguise",
        [(d, counts[d], [cell(report[n]["best_sweep"]["per_disguise"][d]) for n in names])
         for d in positives],
        names,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="directory with works.jsonl and pages.jsonl")
    parser.add_argument("--out", help="write the JSON report here")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for signing")
    parser.add_argument(
        "--jieba", action="store_true",
        help="also run simhash over jieba words (about 2 minutes more on 2 cores)",
    )
    args = parser.parse_args()
    bootstrap()

    import importlib.metadata

    works = read_jsonl(os.path.join(args.dir, "works.jsonl"))
    pages = read_jsonl(os.path.join(args.dir, "pages.jsonl"))
    known = {w["id"] for w in works}
    for page in pages:
        missing = set(page["expected"]) - known
        if missing:
            sys.exit(f"page {page['id']} expects unknown works {sorted(missing)}")
    print(f"{len(works)} works, {len(pages)} pages; jobs={args.jobs}", flush=True)

    begin = time.perf_counter()
    t0 = time.perf_counter()
    _tables()  # build once before the workers fork
    texts = [w["text"] for w in works] + [p["text"] for p in pages]
    normalized = pool_map(args.jobs, normalize, texts)
    norm_seconds = time.perf_counter() - t0
    norm_works, norm_pages = normalized[: len(works)], normalized[len(works) :]
    print(f"normalized in {norm_seconds:.1f}s", flush=True)

    found = {}
    for label, run in [
        ("datasketch", lambda: datasketch_peers(works, pages, norm_works, norm_pages, args.jobs)),
        ("gaoya", lambda: gaoya_peer(works, pages, norm_works, norm_pages, args.jobs)),
        ("simhash", lambda: simhash_peers(works, pages, norm_works, norm_pages, args.jobs,
                                          args.jieba)),
    ]:
        t = time.perf_counter()
        found.update(run())
        print(f"{label}: {time.perf_counter() - t:.1f}s with sweeps", flush=True)

    versions = {name: importlib.metadata.version(name) for name in PINS}
    report = {}
    for name, r in found.items():
        timing = {"normalize (shared by all peers)": norm_seconds, **r["timing"]}
        scored = score(pages, r["predictions"])
        report[name] = {
            "settings": r["settings"],
            "tokenization": r["tokenization"],
            "seconds": sum(timing.values()),
            "seconds_breakdown": timing,
            **scored,
            "best_sweep": r["best"],
            "sweep": r["sweep"],
            "sweep_seconds": r["sweep_seconds"],
            "versions": versions,
            "works": len(works),
            "pages": len(pages),
        }
    print_report(report, pages)
    print(f"\ntotal wall time {time.perf_counter() - begin:.1f}s (with sweeps)")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, ensure_ascii=False)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
