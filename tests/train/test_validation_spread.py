#!/usr/bin/python3
"""Validation during training estimates the whole split (Note [Spread
evaluation] in train/evaluate.h).

Run by CTest as: test_validation_spread.py PATH/TO/tapegpt

The corpus is one sentence repeated, so a model trained on it a few hundred
steps predicts it well; its validation split is that sentence again for its
first half and random letters for its second, which no model predicts. An
evaluation of the split's first windows would see only the easy half:
- a partial evaluation (--eval-steps below a tenth of the split, so even the
  last one stays partial) scores windows spread over the whole split: its
  printed loss is close to `tapegpt eval`'s whole-split loss, where the easy
  half alone is far from it;
- with a partial evaluation that costs at most ten partial ones, the last
  evaluation scores the whole split and prints exactly `tapegpt eval`'s loss.
"""
import json
import os
import random
import re
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
import testutil  # noqa: E402

TAPEGPT = None
SENTENCE = "the quick brown fox jumps over the lazy dog and the cat sleeps.\n"
T = 16  # block_size
B = 4   # batch_size: one --eval-steps is 4 windows


def final_val_line(stdout):
    """(loss, the note in parentheses) of the run's last `val loss` line."""
    lines = [l for l in stdout.splitlines() if re.match(r"step \d+: val loss", l)]
    m = re.match(r"step \d+: val loss ([0-9.]+)(?: \((.*)\))?$", lines[-1])
    return float(m.group(1)), m.group(2) or ""


def eval_rows(run_dir):
    """metrics.jsonl's evaluation rows."""
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        return [r for r in map(json.loads, f) if "val_loss" in r]


class SpreadValidation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-valspread-")
        rng = random.Random(53)
        letters = sorted(set(SENTENCE))
        train_text = SENTENCE * 300
        cls.easy = SENTENCE * 26  # about 1,660 characters
        cls.hard = "".join(rng.choice(letters) for _ in range(len(cls.easy)))
        corpus = os.path.join(cls.tmp, "corpus.txt")
        with open(corpus, "w") as f:
            f.write(train_text + cls.easy + cls.hard)
        total = len(train_text) + len(cls.easy) + len(cls.hard)  # ASCII: characters are bytes
        val_fraction = f"{(len(cls.easy) + len(cls.hard)) / total:.6f}"
        cls.data = os.path.join(cls.tmp, "data")
        testutil.run(TAPEGPT, "prepare", "--input", corpus, "--tokenizer", "char", "--out", cls.data,
                     "--val-fraction", val_fraction)
        # prepare cuts at floor(total * (1 - f)); each window scores T of the N-1 targets.
        val_tokens = total - int(total * (1.0 - float(val_fraction)))
        cls.val_windows = (val_tokens - 1 + T - 1) // T
        cls.flags = ["train", "--data", cls.data, "--n-layer", "1", "--n-head", "2", "--n-embd", "48",
                     "--block-size", str(T), "--batch-size", str(B), "--lr", "3e-3", "--warmup", "10",
                     "--max-steps", "300", "--eval-interval", "100", "--threads", "2", "--precision", "fp32"]

    def eval_loss(self, ckpt, *source):
        p = testutil.run(TAPEGPT, "eval", "--ckpt", ckpt, *source, "--json")
        return json.loads(p.stdout)["loss"]

    def text_file(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_partial_estimate_is_near_the_whole_split(self):
        out = os.path.join(self.tmp, "partial")
        p = testutil.run(TAPEGPT, *self.flags, "--out", out, "--eval-steps", "4", timeout=300)
        partial = 4 * B
        self.assertGreater(self.val_windows, 10 * partial, "the split must be large enough to stay partial")
        self.assertIn(f"validation: {partial} of the validation split's {self.val_windows} windows, spread evenly",
                      p.stdout)
        estimate, note = final_val_line(p.stdout)
        self.assertIn(f"an estimate from {partial} of {self.val_windows} windows", note)
        ckpt = os.path.join(out, "ckpt.h5")
        whole = self.eval_loss(ckpt, "--tokens", os.path.join(self.data, "val.bin"))
        easy = self.eval_loss(ckpt, "--text", self.text_file("easy.txt", self.easy))
        hard = self.eval_loss(ckpt, "--text", self.text_file("hard.txt", self.hard))
        # The model learned the sentence: the halves are far apart, and the
        # split's first windows (all in the easy half) say about `easy`.
        self.assertGreater(hard - easy, 1.0, (easy, hard))
        self.assertLess(abs(estimate - whole), 0.15 * (whole - easy), (estimate, whole, easy, hard))
        print(f"estimate {estimate:.4f}, whole split {whole:.4f}, easy half {easy:.4f}, hard half {hard:.4f}")
        self.assertEqual([r["val_whole"] for r in eval_rows(out)], [False, False, False])

    def test_last_evaluation_scores_the_whole_split(self):
        out = os.path.join(self.tmp, "whole")
        steps = (self.val_windows + 9 * B) // (10 * B)  # partial windows ≥ a tenth of the split
        p = testutil.run(TAPEGPT, *self.flags, "--out", out, "--eval-steps", str(steps), timeout=300)
        loss, note = final_val_line(p.stdout)
        self.assertIn("the whole split", note)
        whole = self.eval_loss(os.path.join(out, "ckpt.h5"), "--tokens", os.path.join(self.data, "val.bin"))
        self.assertLess(abs(loss - whole), 1e-4, (loss, whole))
        self.assertEqual([r["val_whole"] for r in eval_rows(out)], [False, False, True])


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    unittest.main()
