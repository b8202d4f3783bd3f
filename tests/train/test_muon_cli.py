#!/usr/bin/python3
"""`tapegpt train --optimizer muon` end to end (Note [Muon] in train/optimizer.h).

The loss falls; N steps = N/2 + save + resume + N/2, bit for bit (weights,
Muon's momentum, AdamW's moments); the checkpoint names its optimizer and
keeps the layout (v zero for Muon's matrices); a resume keeps the optimizer
and refuses another; the flags' mistakes get one error line.
Run by CTest as: test_muon_cli.py PATH/TO/tapegpt
"""
import json
import os
import sys
import unittest

TAPEGPT = None
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = ["--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--block-size", "16",
         "--batch-size", "4", "--warmup", "2", "--threads", "2"]
MUON_MATRICES = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")

sys.path.insert(0, os.path.join(REPO, "tests", "support"))
import no_skip  # noqa: E402
import testutil  # noqa: E402

try:
    import h5py
    import numpy as np
except ImportError:  # the weight comparisons need them; everything else runs
    h5py = None


def run(*args, ok=True):
    return testutil.run(TAPEGPT, *args, ok=ok)


def metrics(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


class MuonCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-muon-")
        cls.data = testutil.prepare_corpus_head(TAPEGPT, cls.tmp)
        cls.common = ["--data", cls.data, *MODEL, "--optimizer", "muon", "--lr-decay-steps", "40",
                      "--eval-interval", "10", "--eval-steps", "3", "--dropout", "0.1"]
        cls.full = os.path.join(cls.tmp, "full")
        run("train", *cls.common, "--out", cls.full, "--max-steps", "40")

    def expect_error(self, args, code, must_mention):
        return testutil.assert_one_error_line(self, run(*args, ok=False), args, code, must_mention)

    def test_the_loss_falls(self):
        steps = [r for r in metrics(os.path.join(self.full, "metrics.jsonl")) if "loss" in r]
        self.assertEqual(len(steps), 40)
        first = sum(r["loss"] for r in steps[:5]) / 5
        last = sum(r["loss"] for r in steps[-5:]) / 5
        self.assertLess(last, first - 0.5, "Muon did not lower the loss")
        self.assertAlmostEqual(steps[2]["lr"], 0.02, delta=1e-3)  # Muon's default peak after the warmup

    def test_resume_is_bit_exact(self):
        half = os.path.join(self.tmp, "half")
        run("train", *self.common, "--out", half, "--max-steps", "20")
        run("train", "--resume", os.path.join(half, "ckpt.h5"), "--max-steps", "40",
            "--optimizer", "muon")  # restating the run's own optimizer is accepted
        strip = lambda rows: [{k: v for k, v in r.items() if k not in ("tokens_per_s", "elapsed_s", "train_s")}
                              for r in rows if "loss" in r]
        a, b = metrics(os.path.join(self.full, "metrics.jsonl")), metrics(os.path.join(half, "metrics.jsonl"))
        self.assertEqual(len(strip(a)), 40)
        self.assertEqual(strip(a), strip(b))
        if not h5py:
            return
        with h5py.File(os.path.join(self.full, "ckpt.h5")) as fa, h5py.File(os.path.join(half, "ckpt.h5")) as fb:
            for group in ("model", "optimizer/m", "optimizer/v"):
                for name in fa[group]:
                    self.assertTrue(np.array_equal(fa[group][name][()], fb[group][name][()]), name)

    def test_the_checkpoint_names_its_optimizer(self):
        ckpt = os.path.join(self.full, "ckpt.h5")
        out = run("inspect", ckpt).stdout
        self.assertIn("optimizer       muon: Muon momentum", out)
        self.assertIn("optimizer=muon", out)
        self.assertIn("adamw_lr=0.003", out)
        self.assertIn("muon_momentum=0.95", out)
        self.assertIn("/optimizer/m/transformer.h.0.attn.c_attn.weight", out)
        if not h5py:
            return
        with h5py.File(ckpt) as f:
            self.assertEqual(f["optimizer"].attrs["name"], b"muon")
            for name in f["optimizer/v"]:
                m, v = f["optimizer/m"][name][()], f["optimizer/v"][name][()]
                self.assertTrue(np.any(m != 0), name)
                # Muon's matrices keep their momentum in m and no second moment.
                self.assertEqual(not np.any(v != 0), name.endswith(MUON_MATRICES), name)
        # An AdamW run's checkpoint says so too.
        adamw = os.path.join(self.tmp, "adamw")
        run("train", "--data", self.data, "--out", adamw, *MODEL, "--max-steps", "2")
        self.assertIn("optimizer       adamw: AdamW moments saved", run("inspect", os.path.join(adamw, "ckpt.h5")).stdout)
        with h5py.File(os.path.join(adamw, "ckpt.h5")) as f:
            self.assertEqual(f["optimizer"].attrs["name"], b"adamw")

    def test_a_resume_keeps_the_optimizer(self):
        ckpt = os.path.join(self.full, "ckpt.h5")
        line = self.expect_error(["train", "--resume", ckpt, "--max-steps", "50", "--optimizer", "adamw"], 2,
                                 "--optimizer adamw")
        self.assertIn("trained with --optimizer muon", line)
        self.expect_error(["train", "--resume", ckpt, "--max-steps", "50", "--muon-momentum", "0.9"], 2,
                          "--muon-momentum cannot be changed")

    def test_flag_mistakes(self):
        out = os.path.join(self.tmp, "bad")
        self.expect_error(["train", "--data", self.data, "--out", out, "--optimizer", "sgd"], 2,
                          "--optimizer must be 'adamw' or 'muon'")
        self.expect_error(["train", "--data", self.data, "--out", out, "--adamw-lr", "1e-3"], 2,
                          "--adamw-lr is a setting of --optimizer muon")
        self.expect_error(["train", "--data", self.data, "--out", out, "--optimizer", "muon",
                           "--muon-momentum", "1"], 2, "--muon-momentum must be in [0, 1)")
        self.expect_error(["train", "--data", self.data, "--out", out, "--optimizer", "muon",
                           "--shard-optimizer"], 2, "--shard-optimizer cannot run --optimizer muon")
        self.assertFalse(os.path.exists(os.path.join(out, "ckpt.h5")))


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    if h5py is None and no_skip.strict():  # the weight comparisons would not run
        no_skip.skip_or_fail("the bit-for-bit weight comparisons need python3-h5py and python3-numpy")
    unittest.main(verbosity=2)
