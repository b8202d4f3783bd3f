#!/usr/bin/python3
# A run whose loss becomes NaN/Inf stops with one error line naming the step,
# exits 1, saves nothing over its last checkpoint, and that checkpoint
# resumes with a lower learning rate.
"""Run by CTest as: test_divergence.py PATH/TO/tapegpt

How to diverge reliably (measured on the tiny model): --lr 1e4 with no
warm-up and --grad-clip 0 gives a NaN loss at step 3-4 of a fresh run; a
healthy run resumed with --lr 1e4 (and a cosine long enough that the
override matters) diverges within about five steps.
"""
import hashlib
import math
import os
import re
import sys
import unittest

import robutil
import testutil  # tests/support, on sys.path through robutil

TAPEGPT = None


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Divergence(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-nan-")
        cls.data = robutil.prepare_tiny(TAPEGPT, cls.tmp)
        cls.flags = ["--data", cls.data, *robutil.TINY_MODEL, "--eval-interval", "0", "--eval-steps", "4",
                     "--threads", "2"]

    def expect_divergence(self, p, run_dir):
        """Exit 1 and one error line naming the step; returns that step."""
        self.assertEqual(p.returncode, 1, p.stderr)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, p.stderr)
        m = re.match(r"tapegpt train: error: the loss or gradient became non-finite at step (\d+)", lines[0])
        self.assertTrue(m, lines[0])
        self.assertIn("--resume", lines[0])
        self.assertNotIn("done:", p.stdout)
        self.assertEqual(robutil.temp_files(run_dir), [])
        step = int(m.group(1))
        rows = robutil.last_train_rows(os.path.join(run_dir, "metrics.jsonl"))
        self.assertEqual(max(rows), step - 1, "every step before the bad one is logged, the bad one is not")
        for r in rows.values():
            self.assertTrue(math.isfinite(r["loss"]), r)
        return step

    def test_fresh_run_diverges_and_keeps_its_last_checkpoint(self):
        out = os.path.join(self.tmp, "fresh")
        p = robutil.run(TAPEGPT, "train", *self.flags, "--out", out, "--max-steps", "50", "--lr", "1e4",
                        "--warmup", "0", "--grad-clip", "0", "--ckpt-interval", "1", ok=False)
        step = self.expect_divergence(p, out)
        self.assertLess(step, 50)
        ckpt = os.path.join(out, "ckpt.h5")
        self.assertEqual(robutil.checkpoint_step(ckpt), step - 1)  # the last finite state
        self.assertFalse(os.path.exists(os.path.join(out, "best.h5")))
        robutil.run(TAPEGPT, "params", "--ckpt", ckpt)  # it loads (its weights are finite)
        # --keep 2 (the default): the message names the newest periodic
        # checkpoint to resume from, and the one before it is still there.
        newest = os.path.join(out, f"ckpt-{step - 1}.h5")
        line = p.stderr.strip()
        self.assertIn(f"last good checkpoint {newest}", line)
        self.assertIn(f"--resume {newest} ", line)
        periodic = sorted(n for n in os.listdir(out) if n.startswith("ckpt-"))
        self.assertEqual(periodic, sorted({f"ckpt-{step - 1}.h5", f"ckpt-{max(1, step - 2)}.h5"}))
        if step >= 3:
            self.assertIn(os.path.join(out, f"ckpt-{step - 2}.h5"), line)

    def test_lr_too_high_on_resume_then_recover_with_a_lower_lr(self):
        out = os.path.join(self.tmp, "resumed")
        robutil.run(TAPEGPT, "train", *self.flags, "--out", out, "--max-steps", "10", "--ckpt-interval", "5",
                    "--warmup", "0", "--lr-decay-steps", "1000")
        ckpt = os.path.join(out, "ckpt.h5")
        before = sha(ckpt)
        p = robutil.run(TAPEGPT, "train", "--resume", ckpt, "--lr", "1e4", "--max-steps", "60",
                        "--ckpt-interval", "100", "--threads", "2", ok=False)
        step = self.expect_divergence(p, out)
        self.assertGreater(step, 10)
        self.assertEqual(sha(ckpt), before, "the diverged run wrote over the last good checkpoint")
        p = robutil.run(TAPEGPT, "train", "--resume", ckpt, "--lr", "1e-3", "--max-steps", "20",
                        "--threads", "2")
        self.assertIn("done:", p.stdout)
        self.assertEqual(robutil.checkpoint_step(ckpt), 20)
        rows = robutil.last_train_rows(os.path.join(out, "metrics.jsonl"))
        self.assertEqual(sorted(rows), list(range(1, 21)))
        for s in range(11, 21):
            self.assertTrue(math.isfinite(rows[s]["loss"]) and rows[s]["loss"] < 10, rows[s])


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    robutil.require_tools()
    unittest.main(verbosity=2)
