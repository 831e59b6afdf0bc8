#!/usr/bin/env python3
"""Peer comparison: gaoya's SimHash index against `copytrace-bench index`, same signatures.

gaoya (PyPI, a Rust library with Python bindings) only takes documents, not raw signatures,
so the data set is built as documents: N library documents of random words, every 20th a near
copy of an earlier one (0-2 words replaced), and Q queries, half near copies of library
documents (0-3 words replaced), half fresh. gaoya signs and indexes them; its own signatures
(`par_bulk_doc2signatures`) are written as little-endian u64 files and fed to
`copytrace-bench index --fingerprints ... --query-file ...`, so both indexes search exactly
the same 64-bit values for the same queries in the same run.

gaoya's `query` includes signing the query document; the time of signing the same queries
(`par_bulk_doc2signatures`) is measured separately and subtracted for a search-only estimate.
gaoya keeps distances strictly below its `hamming_distance`, so it gets k + 1 (and k + 2
blocks, as it requires more blocks than that distance) to answer distance <= k.
"""

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from array import array


def ensure_gaoya():
    try:
        from gaoya.gaoya import simhash  # noqa: F401
    except ImportError:
        print("gaoya missing: pip install --user gaoya", flush=True)
        result = subprocess.run([sys.executable, "-m", "pip", "install", "--user", "gaoya"])
        if result.returncode != 0:
            sys.exit("could not install gaoya with pip; no peer figures")
        import site
        import importlib

        importlib.reload(site)
        sys.path.append(site.getusersitepackages())
    from gaoya.gaoya import simhash

    return simhash


def document(rng, words):
    return rng.randbytes(5 * words).hex(" ", 5)


def near_copy(rng, doc, replace):
    words = doc.split(" ")
    for position in rng.sample(range(len(words)), replace):
        words[position] = rng.randbytes(5).hex()
    return " ".join(words)


def write_u64s(path, values):
    data = array("Q", values)
    if sys.byteorder != "little":
        data.byteswap()
    with open(path, "wb") as f:
        data.tofile(f)


def brute(signatures, query, k):
    return {i for i, s in enumerate(signatures) if (s ^ query).bit_count() <= k}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200_000)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--words", type=int, default=32, help="words per document")
    parser.add_argument("--recall-sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--gaoya-blocks",
        type=int,
        help="gaoya's num_blocks (default k + 2, the fewest it accepts for distance k + 1)",
    )
    parser.add_argument(
        "--bench",
        default=os.path.join(
            os.environ.get("CARGO_TARGET_DIR", "target"), "release", "copytrace-bench"
        ),
        help="path of the release copytrace-bench binary",
    )
    args = parser.parse_args()
    simhash = ensure_gaoya()
    rng = random.Random(args.seed)
    k = args.k

    print(f"generating {args.n} documents and {args.queries} queries ...", flush=True)
    library = []
    for i in range(args.n):
        if i % 20 == 19:
            library.append(near_copy(rng, library[rng.randrange(i)], rng.randint(0, 2)))
        else:
            library.append(document(rng, args.words))
    queries = [
        near_copy(rng, library[rng.randrange(args.n)], rng.randint(0, 3))
        if i % 2 == 0
        else document(rng, args.words)
        for i in range(args.queries)
    ]

    blocks = args.gaoya_blocks or k + 2
    index = simhash.SimHash64StringIntIndex(blocks, k + 1, "word", False, None)
    start = time.perf_counter()
    for first in range(0, args.n, 100_000):
        batch = library[first : first + 100_000]
        index.par_bulk_insert_docs(list(range(first, first + len(batch))), batch)
    gaoya_build = time.perf_counter() - start
    signatures = []
    for first in range(0, args.n, 100_000):
        signatures.extend(index.par_bulk_doc2signatures(library[first : first + 100_000]))

    start = time.perf_counter()
    results = index.par_bulk_query(queries)
    gaoya_query = time.perf_counter() - start
    start = time.perf_counter()
    query_signatures = index.par_bulk_doc2signatures(queries)
    gaoya_sign = time.perf_counter() - start
    single = queries[:20_000]
    start = time.perf_counter()
    for q in single:
        index.query(q)
    gaoya_single = time.perf_counter() - start

    found = expected = wrong = 0
    for q in range(min(args.recall_sample, len(queries))):
        truth = brute(signatures, query_signatures[q], k)
        got = set(results[q])
        expected += len(truth)
        found += len(truth & got)
        wrong += len(got - truth)
    gaoya_recall = found / expected if expected else 1.0
    del library, queries, results

    with tempfile.TemporaryDirectory() as tmp:
        lib_path = os.path.join(tmp, "library.u64")
        query_path = os.path.join(tmp, "queries.u64")
        write_u64s(lib_path, signatures)
        write_u64s(query_path, query_signatures)
        command = [
            args.bench, "index", "--k", str(k),
            "--fingerprints", lib_path, "--query-file", query_path,
            "--snapshot", os.path.join(tmp, "index.snap"),
        ]
        print("running:", " ".join(command), flush=True)
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    print(output)
    result = dict(re.findall(r"(\w+)=(\S+)", output.strip().splitlines()[-1]))

    gaoya_qps = args.queries / gaoya_query
    gaoya_search_qps = args.queries / max(gaoya_query - gaoya_sign, 1e-9)
    ours = float(result["index_qps"])
    rows = [
        ("build (s)", f"{gaoya_build:.2f}", result["build_s"]),
        ("queries/s, 2 threads", f"{gaoya_qps:.0f}", f"{ours:.0f}"),
        ("queries/s, 2 threads, search only", f"{gaoya_search_qps:.0f}", f"{ours:.0f}"),
        ("queries/s, 1 thread", f"{len(single) / gaoya_single:.0f}", result["single_qps_1t"]),
        ("recall vs brute force", f"{gaoya_recall:.6f}", result["recall"]),
        ("wrong hits", str(wrong), result["wrong_hits"]),
    ]
    print(f"{'':36} {'gaoya':>14} {'copytrace':>14}")
    for name, theirs, mine in rows:
        print(f"{name:36} {theirs:>14} {mine:>14}")
    print(
        f"RESULT n={args.n} k={k} gaoya_blocks={blocks} gaoya_qps={gaoya_qps:.0f} "
        f"gaoya_search_qps={gaoya_search_qps:.0f} copytrace_qps={ours:.0f} "
        f"ratio={ours / gaoya_qps:.2f} ratio_search_only={ours / gaoya_search_qps:.2f} "
        f"gaoya_recall={gaoya_recall:.6f} copytrace_recall={result['recall']}"
    )


if __name__ == "__main__":
    main()
