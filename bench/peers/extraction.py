"""trafilatura's side of `copytrace-bench extraction`: extracts every page of trafilatura's
evaluation set (`tests/evaldata.json` of a checkout of adbar/trafilatura) with trafilatura's
canonical evaluation settings (include_comments=False, include_tables=True,
include_formatting=False; the `fallback` runner of its tests/eval_common.py) and writes
{url: text or null} as JSON. The benchmark scores both sides with the same code.

    python extraction.py TESTS_DIR OUT.json
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pinned_venv import reexec_in_venv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
VENV = os.path.join(REPO, "bench", "cache", "extraction-venv")
# The version the issue measured; lxml_html_clean is what its dependency jusText needs with
# lxml 6 (its other dependencies float within what 2.3.1 allows).
PINS = {"trafilatura": "2.3.1", "lxml_html_clean": "0.4.6"}

reexec_in_venv(VENV, PINS, __file__)

import trafilatura  # noqa: E402

tests, out = sys.argv[1], sys.argv[2]
with open(os.path.join(tests, "evaldata.json"), encoding="utf-8") as f:
    evaldata = json.load(f)


def resolve(name):
    for sub in ("cache", "eval"):
        path = os.path.join(tests, sub, name)
        if os.path.isfile(path):
            return path
    return None


texts = {}
started = time.perf_counter()
for url, item in sorted(evaldata.items()):
    path = resolve(item["file"])
    if path is None:
        texts[url] = None
        continue
    with open(path, "rb") as f:
        html = f.read()
    try:
        texts[url] = trafilatura.extract(
            html, fast=False, include_comments=False, include_tables=True, include_formatting=False
        )
    except Exception:  # a crash is a full miss, as in trafilatura's own evaluation
        texts[url] = None
seconds = time.perf_counter() - started
with open(out, "w", encoding="utf-8") as f:
    json.dump({"version": trafilatura.__version__, "seconds": seconds, "texts": texts}, f)
