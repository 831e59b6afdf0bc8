#!/usr/bin/env python3
"""Tests of quality.py's scoring and normalization (standard library only, no venv needed).

Run: python3 -m unittest bench/peers/test_quality.py
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality  # noqa: E402


def page(disguise, expected):
    return {"id": "p", "disguise": disguise, "expected": expected, "text": ""}


class Scoring(unittest.TestCase):
    def test_pairs_are_counted_per_page_and_summed(self):
        pages = [
            page("verbatim", ["a"]),
            page("interleaved", ["a", "b"]),
            page("negative-quote", []),
            page("excerpt-10", ["c"]),
        ]
        predictions = [{"a", "x"}, {"b"}, {"a"}, set()]
        scored = quality.score(pages, predictions)
        overall = scored["overall"]
        self.assertEqual((overall["tp"], overall["fp"], overall["fn"]), (2, 2, 2))
        self.assertAlmostEqual(overall["precision"], 0.5)
        self.assertAlmostEqual(overall["recall"], 0.5)
        self.assertAlmostEqual(overall["f1"], 0.5)
        inter = scored["per_disguise"]["interleaved"]
        self.assertEqual((inter["tp"], inter["fp"], inter["fn"]), (1, 0, 1))
        self.assertEqual(inter["precision"], 1.0)
        self.assertEqual(inter["recall"], 0.5)
        self.assertEqual(
            scored["negatives"], {"negative-quote": {"pages": 1, "fp": 1, "pages_with_fp": 1}}
        )

    def test_nothing_claimed_and_nothing_to_find_are_one(self):
        pages = [page("negative-boilerplate", []), page("excerpt-10", ["a"])]
        scored = quality.score(pages, [set(), set()])
        neg = scored["per_disguise"]["negative-boilerplate"]
        self.assertEqual((neg["precision"], neg["recall"], neg["f1"]), (1.0, 1.0, 1.0))
        missed = scored["per_disguise"]["excerpt-10"]
        self.assertEqual((missed["precision"], missed["recall"]), (1.0, 0.0))
        self.assertAlmostEqual(missed["f1"], 0.0)

    def test_any_negative_prefix_is_a_negative_class(self):
        pages = [page("negative-new-kind", []), page("split", ["a"])]
        scored = quality.score(pages, [{"a"}, {"a"}])
        self.assertEqual(list(scored["negatives"]), ["negative-new-kind"])

    def test_sweep_picks_the_best_f1_and_labels_it(self):
        pages = [page("verbatim", ["a"]), page("negative-unrelated", [])]
        rows, best = quality.sweep_result(
            pages, "k", [(1, [set(), set()]), (2, [{"a"}, set()]), (3, [{"a"}, {"a"}])], "note"
        )
        self.assertEqual([r["k"] for r in rows], [1, 2, 3])
        self.assertEqual(best["value"], 2)
        self.assertEqual(best["label"], quality.LABEL_TUNED)


class Normalization(unittest.TestCase):
    def test_documented_steps_without_traditional_folding(self):
        self.assertEqual(quality.normalize("ＡＢｃ，１２３！\u200b"), "abc123")
        self.assertEqual(quality.normalize("第٣章 Hello_World"), "第3章helloworld")
        # No disguise-specific help: Traditional characters stay as they are.
        self.assertEqual(quality.normalize("這是「繁體」。"), "這是繁體")

    def test_char_ngrams(self):
        self.assertEqual(quality.char_ngrams("abcd"), ["abc", "bcd"])
        self.assertEqual(quality.char_ngrams("ab"), ["ab"])
        self.assertEqual(quality.char_ngrams(""), [])


if __name__ == "__main__":
    unittest.main()
