"""Side-by-side character precision and recall of Copytrace's extractor and two peers,
trafilatura and readability-lxml, on the extraction fixtures.

Optional, not run by the test suite (it needs Python packages). Same metric as the Rust test
(`metric.rs`): the longest common subsequence of the non-whitespace characters.

    python3 -m venv /tmp/peers && /tmp/peers/bin/pip install trafilatura readability-lxml
    COPYTRACE_EXTRACT_DUMP=/tmp/ours cargo test -p copytrace-crawler --test extract
    /tmp/peers/bin/python crates/crawler/tests/extract/peers.py /tmp/ours

trafilatura runs with include_comments=False (its default keeps comments, which the expected
texts leave out) and include_tables=True; readability-lxml's summary is reduced to its text.
"""
import os
import sys

import lxml.html
import trafilatura
from readability import Document

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'extract')
DUMP = sys.argv[1]  # the directory COPYTRACE_EXTRACT_DUMP pointed at

def sig(s):
    return [c for c in s if not c.isspace()]

def lcs(a, b):
    # Hyyrö's bit-parallel LCS with Python ints as bit vectors over a.
    if not a or not b:
        return 0
    masks = {}
    for i, c in enumerate(a):
        masks[c] = masks.get(c, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for c in b:
        m = masks.get(c)
        if m is None:
            continue
        u = v & m
        v = ((v + u) | (v & ~m)) & full
    return len(a) - bin(v).count('1')

def decode(raw):
    head = raw[:4096].decode('latin1').lower()
    enc = 'gbk' if ('gbk' in head or 'gb2312' in head) else ('big5' if 'big5' in head else 'utf-8')
    return raw.decode(enc, errors='replace')

def ours(name):
    text = open(os.path.join(DUMP, name + '.extracted.txt'), encoding='utf-8').read()
    return text.split('\n\n', 1)[1] if '\n\n' in text else ''

def traf(html):
    return trafilatura.extract(html, include_comments=False, include_tables=True) or ''

def readab(html):
    summary = Document(html).summary(html_partial=True)
    return lxml.html.fromstring(summary).text_content()

rows = []
tot = {k: [0, 0, 0] for k in ('ours', 'trafilatura', 'readability')}
pp = {k: [0.0, 0.0] for k in tot}
names = sorted(f[:-len('.expected.txt')] for f in os.listdir(FIX) if f.endswith('.expected.txt'))
for name in names:
    gold = open(os.path.join(FIX, name + '.expected.txt'), encoding='utf-8').read().split('\n\n', 1)[1]
    html = decode(open(os.path.join(FIX, name + '.html'), 'rb').read())
    g = sig(gold)
    line = [name]
    for k, f in (('ours', lambda: ours(name)), ('trafilatura', lambda: traf(html)), ('readability', lambda: readab(html))):
        try:
            e = sig(f())
        except Exception:
            e = []
        l = lcs(g, e)
        p = l / len(e) if e else 0.0
        r = l / len(g)
        tot[k][0] += l; tot[k][1] += len(e); tot[k][2] += len(g)
        pp[k][0] += p; pp[k][1] += r
        line.append(f'{p:.3f} {r:.3f}')
    rows.append(line)
print(f"{'page':26} {'ours P   R':>13} {'trafilatura':>13} {'readability':>13}")
for r in rows:
    print(f'{r[0]:26} {r[1]:>13} {r[2]:>13} {r[3]:>13}')
n = len(names)
print(f"{'per character':26} " + ' '.join(f'{tot[k][0]/tot[k][1]:.3f} {tot[k][0]/tot[k][2]:.3f}'.rjust(13) for k in tot))
print(f"{'per page':26} " + ' '.join(f'{pp[k][0]/n:.3f} {pp[k][1]/n:.3f}'.rjust(13) for k in tot))
