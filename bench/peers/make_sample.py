#!/usr/bin/env python3
"""Make a small labelled works/pages directory in the format of `copytrace-bench quality`.

The real benchmark corpus (downloaded package texts, the full disguise generator) belongs to
the Rust harness; this generator only exists so that `quality.py` can be run end to end
before that harness is there, and to time it at the benchmark's scale. It writes
`works.jsonl` ({"id", "text"}) and `pages.jsonl` ({"id", "disguise", "expected", "text"}).

Works are the four demo library texts (real prose written for the project) plus, when more
works are asked for, synthetic texts from a character-bigram chain trained on all demo texts
(`syn-NNNN`). Synthetic works share the demo vocabulary with each other, so they are more
alike than real works: the figures on them say something about speed, little about quality.

Pages wrap a body in site boilerplate (lines of `demo/site/boilerplate.txt`). Disguises made
here are the ones that need no external data: verbatim, ads, noise, excerpt-10/30/50,
shuffled, split, interleaved and the negatives negative-unrelated, negative-dateline,
negative-quote and negative-boilerplate (Traditional, homophone and romanized copies need
conversion tables that only the Rust harness has).
"""

import argparse
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO = os.path.join(HERE, "..", "..", "crates", "copytrace", "demo")
DISGUISES = [
    "verbatim", "ads", "noise", "excerpt-10", "excerpt-30", "excerpt-50",
    "shuffled", "split", "interleaved",
    "negative-unrelated", "negative-dateline", "negative-quote", "negative-boilerplate",
]
NOISE = ["\u200b", "\u200c", "，", "·", " ", "*", "☆", "ｘ"]


def read_dir(name):
    folder = os.path.join(DEMO, name)
    return {
        os.path.splitext(f)[0]: open(os.path.join(folder, f), encoding="utf-8").read().strip()
        for f in sorted(os.listdir(folder))
        if f.endswith(".txt")
    }


def paragraphs(text):
    return [p.strip() for p in text.split("\n") if p.strip()]


class Chain:
    """Character bigram chain: plausible-looking Chinese with the demo texts' statistics."""

    def __init__(self, texts):
        self.next = {}
        for text in texts:
            for para in paragraphs(text):
                for a, b in zip(para, para[1:]):
                    self.next.setdefault(a, []).append(b)
        self.starts = [c for c in self.next if "\u4e00" <= c <= "\u9fff"]

    def sentence(self, rng, length):
        c = rng.choice(self.starts)
        out = [c]
        while len(out) < length:
            c = rng.choice(self.next.get(c) or self.starts)
            if c in "。！？\n":
                c = rng.choice(self.starts)
            out.append(c)
        return "".join(out) + "。"

    def text(self, rng, chars):
        paras, total = [], 0
        while total < chars:
            sentences = rng.randint(3, 7)
            para = "".join(self.sentence(rng, rng.randint(12, 40)) for _ in range(sentences))
            paras.append(para)
            total += len(para)
        return "\n\n".join(paras)


def wrap(rng, boilerplate, body):
    head = rng.sample(boilerplate, rng.randint(3, 6))
    tail = rng.sample(boilerplate, rng.randint(3, 6))
    return "\n".join(head) + "\n\n" + body + "\n\n" + "\n".join(tail)


def noisy(rng, text):
    out = []
    for c in text:
        r = rng.random()
        if r < 0.04:
            out.append(c + rng.choice(NOISE))
        elif r < 0.06:
            out.append(rng.choice(text))
        else:
            out.append(c)
    return "".join(out)


def excerpt(rng, text, fraction):
    n = max(1, int(len(text) * fraction))
    start = rng.randrange(0, max(1, len(text) - n))
    return text[start : start + n]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="output directory")
    parser.add_argument("--works", type=int, default=12, help="works in the library (>= 4)")
    parser.add_argument("--pages", type=int, default=52)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    library = read_dir("library")
    unrelated = read_dir("unrelated")
    with open(os.path.join(DEMO, "site", "boilerplate.txt"), encoding="utf-8") as f:
        boilerplate = paragraphs(f.read())
    chain = Chain(list(library.values()) + list(unrelated.values()))

    works = dict(library)
    while len(works) < args.works:
        works[f"syn-{len(works):04d}"] = chain.text(rng, rng.randint(1000, 10000))
    ids = sorted(works)

    pages = []
    for n in range(args.pages):
        disguise = DISGUISES[n % len(DISGUISES)]
        work = rng.choice(ids)
        text = works[work]
        expected = [work]
        if disguise == "verbatim":
            body = text
        elif disguise == "ads":
            paras = paragraphs(text)
            ads = [l for l in boilerplate if "广告" in l] or boilerplate
            body = "\n".join(
                p + ("\n" + rng.choice(ads) if i % 2 == 1 else "") for i, p in enumerate(paras)
            )
        elif disguise == "noise":
            body = noisy(rng, text)
        elif disguise.startswith("excerpt-"):
            body = excerpt(rng, text, int(disguise.split("-")[1]) / 100)
        elif disguise == "shuffled":
            paras = paragraphs(text)
            rng.shuffle(paras)
            body = "\n\n".join(paras)
        elif disguise == "split":
            paras = paragraphs(text)
            parts = 3 if len(paras) >= 3 else 1
            part = rng.randrange(parts)
            first, last = part * len(paras) // parts, (part + 1) * len(paras) // parts
            body = "\n\n".join(paras[first:last])
        elif disguise == "interleaved":
            other = rng.choice([i for i in ids if i != work])
            a, b = paragraphs(text), paragraphs(works[other])
            mixed = [p for pair in zip(a, b) for p in pair] + a[len(b) :] + b[len(a) :]
            body = "\n\n".join(mixed)
            expected = [work, other]
        elif disguise == "negative-unrelated":
            name = rng.choice(["another-novel", "cooking", "fresh"])
            if name in unrelated:
                body = unrelated[name]
            else:
                body = chain.text(rng, rng.randint(1000, 5000))
            expected = []
        elif disguise == "negative-dateline":
            # tech-news shares only the agency dateline and closing with news-harbor.
            body = unrelated["tech-news"]
            expected = []
        elif disguise == "negative-quote":
            sentence = max(text.split("。")[:6], key=len)[:30] + "。"
            fresh = paragraphs(chain.text(rng, rng.randint(1500, 4000)))
            fresh.insert(len(fresh) // 2, sentence)
            body = "\n\n".join(fresh)
            expected = []
        elif disguise == "negative-boilerplate":
            body = "\n".join(rng.sample(boilerplate, min(8, len(boilerplate))))
            expected = []
        else:
            raise AssertionError(disguise)
        pages.append(
            {"id": f"p{n:04d}", "disguise": disguise, "expected": expected,
             "text": wrap(rng, boilerplate, body)}
        )

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "works.jsonl"), "w", encoding="utf-8") as f:
        for work in ids:
            f.write(json.dumps({"id": work, "text": works[work]}, ensure_ascii=False) + "\n")
    with open(os.path.join(args.out, "pages.jsonl"), "w", encoding="utf-8") as f:
        for page in pages:
            f.write(json.dumps(page, ensure_ascii=False) + "\n")
    chars = sum(len(w) for w in works.values()) + sum(len(p["text"]) for p in pages)
    print(f"wrote {len(ids)} works and {len(pages)} pages ({chars} characters) to {args.out}")


if __name__ == "__main__":
    main()
