#!/usr/bin/python3
"""`--precision fp32|bf16|auto` end to end (Note [bf16 linear] in autograd/ops/linear.cpp).

A bf16 run learns as a float32 one does (close losses, not the same bits);
N steps = N/2 + save + resume + N/2, bit for bit, in bf16; the checkpoint
records the precision and a resume keeps it, refuses another unless
--change-precision, and continues in the new one with it; `auto` picks bf16
where oneDNN runs it natively and measures it faster, fp32 where it would be
emulated, and says why; eval, sample, attention and bench take the flag,
and under auto follow the checkpoint's precision (sample: unless the other
generates 1.1x faster, measured); --logit-softcap trains and
resumes bit-exactly in bf16; mistakes get one error line and leave no file.
Run by CTest as: test_precision_cli.py PATH/TO/tapegpt
"""
import json
import os
import re
import sys
import unittest

TAPEGPT = None
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = ["--n-layer", "2", "--n-head", "2", "--n-embd", "64", "--block-size", "32",
         "--batch-size", "4", "--warmup", "2", "--threads", "2", "--lr-decay-steps", "30",
         "--eval-interval", "10", "--eval-steps", "3", "--dropout", "0.1"]

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


def rows(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


def step_rows(run_dir):  # the training rows, without wall times
    return [{k: v for k, v in r.items() if k not in ("tokens_per_s", "elapsed_s", "train_s")}
            for r in rows(run_dir) if "loss" in r]


def last_val_loss(run_dir):
    return [r["val_loss"] for r in rows(run_dir) if "val_loss" in r][-1]


class PrecisionCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-precision-")
        cls.data = testutil.prepare_corpus_head(TAPEGPT, cls.tmp)
        cls.common = ["--data", cls.data, *MODEL]
        isa = json.loads(run("bench", "--bf16-rate", "--json").stdout)["dnnl_isa"]
        if isa in ("none", "avx2", "avx", "sse41"):
            no_skip.skip_or_fail(f"oneDNN has no bf16 matmul here ({isa}): --precision bf16 cannot run")
        cls.runs = {}
        for precision in ("fp32", "bf16"):
            out = os.path.join(cls.tmp, precision)
            cls.runs[precision] = (out, run("train", *cls.common, "--out", out, "--max-steps", "30",
                                            "--precision", precision).stdout)

    def expect_error(self, args, code, must_mention):
        return testutil.assert_one_error_line(self, run(*args, ok=False), args, code, must_mention)

    def test_bf16_learns_as_float32_does(self):
        fp32, bf16 = step_rows(self.runs["fp32"][0]), step_rows(self.runs["bf16"][0])
        self.assertEqual(len(fp32), 30)
        self.assertEqual(len(bf16), 30)
        self.assertNotEqual(fp32, bf16)  # the matmuls really ran in another precision
        val_fp32, val_bf16 = last_val_loss(self.runs["fp32"][0]), last_val_loss(self.runs["bf16"][0])
        self.assertAlmostEqual(val_bf16, val_fp32, delta=0.03)
        self.assertLess(val_bf16, bf16[0]["loss"] - 0.5)
        self.assertIn("precision: bf16 (asked for", self.runs["bf16"][1])
        self.assertIn("precision: fp32 (asked for)", self.runs["fp32"][1])

    def test_bf16_resume_is_bit_exact(self):
        half = os.path.join(self.tmp, "half")
        run("train", *self.common, "--out", half, "--max-steps", "15", "--precision", "bf16")
        out = run("train", "--resume", os.path.join(half, "ckpt.h5"), "--max-steps", "30",
                  "--precision", "bf16").stdout  # restating the run's own precision is accepted
        self.assertIn("precision: bf16 (the run's own", out)
        self.assertEqual(step_rows(half), step_rows(self.runs["bf16"][0]))
        self.assertEqual(last_val_loss(half), last_val_loss(self.runs["bf16"][0]))
        if not h5py:
            return
        with h5py.File(os.path.join(self.runs["bf16"][0], "ckpt.h5")) as fa, \
                h5py.File(os.path.join(half, "ckpt.h5")) as fb:
            for group in ("model", "optimizer/m", "optimizer/v"):
                for name in fa[group]:
                    self.assertTrue(np.array_equal(fa[group][name][()], fb[group][name][()]), name)

    def test_eval_in_bf16_reproduces_the_trainers_validation_loss(self):
        # --eval-steps 0: the trainer and eval score every window of val.bin.
        # The trainer validates with the bf16 copies its last step refreshed;
        # eval rounds the saved weights again: the same copies, the same loss.
        out = os.path.join(self.tmp, "whole-val")
        run("train", *self.common, "--out", out, "--max-steps", "4", "--eval-interval", "4", "--eval-steps", "0",
            "--precision", "bf16")
        r = json.loads(run("eval", "--ckpt", os.path.join(out, "ckpt.h5"), "--tokens",
                           os.path.join(self.data, "val.bin"), "--json", "--batch-size", "4",
                           "--precision", "bf16").stdout)
        self.assertAlmostEqual(r["loss"], last_val_loss(out), delta=1e-6)

    def test_logit_softcap_in_bf16_learns_and_resumes_bit_exact(self):
        # The soft-cap runs in float32 on the bf16 lm_head's float32 output.
        full, half = os.path.join(self.tmp, "softcap"), os.path.join(self.tmp, "softcap-half")
        flags = [*self.common, "--logit-softcap", "15", "--precision", "bf16"]
        run("train", *flags, "--out", full, "--max-steps", "8")
        run("train", *flags, "--out", half, "--max-steps", "4")
        run("train", "--resume", os.path.join(half, "ckpt.h5"), "--max-steps", "8")
        capped = step_rows(full)
        self.assertEqual(step_rows(half), capped)
        self.assertLess(capped[-1]["loss"], capped[0]["loss"])
        # The same run without the cap (its first 8 steps) computes another loss.
        self.assertNotEqual(capped[0]["loss"], step_rows(self.runs["bf16"][0])[0]["loss"])

    def test_the_checkpoint_records_the_precision(self):
        for precision in ("fp32", "bf16"):
            self.assertIn(f"precision={precision}", run("inspect", os.path.join(self.runs[precision][0],
                                                                                "ckpt.h5")).stdout)

    def test_a_resume_keeps_the_precision_unless_told(self):
        ckpt = os.path.join(self.runs["bf16"][0], "ckpt.h5")
        line = self.expect_error(["train", "--resume", ckpt, "--max-steps", "40", "--precision", "fp32"], 2,
                                 "--precision fp32")
        self.assertIn("trained in bf16", line)
        self.assertIn("--change-precision", line)
        self.expect_error(["train", "--resume", ckpt, "--max-steps", "40", "--change-precision"], 2,
                          "--change-precision needs --precision")
        moved = os.path.join(self.tmp, "moved")
        out = run("train", "--resume", ckpt, "--out", moved, "--max-steps", "35", "--change-precision",
                  "--precision", "fp32").stdout
        self.assertIn("precision: fp32 (changed from bf16)", out)
        self.assertIn("precision=fp32", run("inspect", os.path.join(moved, "ckpt.h5")).stdout)
        out = run("train", "--resume", os.path.join(moved, "ckpt.h5"), "--max-steps", "40").stdout
        self.assertIn("precision: fp32 (the run's own)", out)

    def test_auto_says_which_and_why(self):
        # Note [auto precision]: bf16 where oneDNN runs it natively and the
        # measurement confirms it; float32 where bf16 would be emulated
        # (checked by capping oneDNN's ISA) or is missing.
        isa = json.loads(run("bench", "--bf16-rate", "--json").stdout)["dnnl_isa"]
        out = os.path.join(self.tmp, "auto")
        text = run("train", *self.common, "--out", out, "--max-steps", "1").stdout
        # A sanitizer build (scripts/sanitize.sh) does not measure: the ISA decides, and the line says why.
        sanitized = "not measured: a sanitizer build's speeds say nothing of a release build's" in text
        if isa in ("avx512_core_bf16", "avx512_core_amx") and sanitized:
            self.assertIn("precision: bf16 (auto: bf16, since oneDNN runs " + isa + " (native bf16; not measured: "
                          "a sanitizer build's", text)
        elif isa in ("avx512_core_bf16", "avx512_core_amx"):
            self.assertRegex(text, r"precision: (bf16 \(auto: bf16, since oneDNN runs " + isa + r" \(native bf16\) "
                             r"and measured \d+\.\d\dx|fp32 \(auto: float32, since oneDNN runs " + isa +
                             r" \(native bf16\) but measured)")
        chose = "bf16" if "precision: bf16 (auto" in text else "fp32"
        self.assertIn(f"precision={chose}", run("inspect", os.path.join(out, "ckpt.h5")).stdout)  # never "auto"
        bench = json.loads(run("bench", "--shape", "S", "--block-size", "8", "--batch-size", "1", "--steps", "1",
                               "--warmup", "0", "--sample-tokens", "2", "--json", "--threads", "2").stdout)
        self.assertTrue(bench["precision_reason"].startswith("auto: "))
        if sanitized:
            self.assertIsNone(bench["precision_speedup"])
            self.assertIn("a sanitizer build", bench["precision_reason"])
        elif isa in ("avx512_core_bf16", "avx512_core_amx"):
            self.assertGreater(bench["precision_speedup"], 0)  # measured, and the line says the ratio
            self.assertIn(f"measured {bench['precision_speedup']:.2f}x", bench["precision_reason"])
        if isa.startswith("avx512_core"):
            capped = testutil.run(TAPEGPT, "train", *self.common, "--out", os.path.join(self.tmp, "auto-capped"),
                                  "--max-steps", "1", env=dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX512_CORE")).stdout
            self.assertIn("precision: fp32 (auto: float32, since oneDNN would emulate bf16 here (it runs avx512_core",
                          capped)

    def test_checkpoint_commands_follow_the_trained_precision(self):
        # Under auto, eval, sample and attention run the precision the
        # checkpoint was trained in: eval reproduces the training log's loss.
        val = os.path.join(self.data, "val.bin")
        for precision in ("fp32", "bf16"):
            ckpt = os.path.join(self.runs[precision][0], "ckpt.h5")
            r = json.loads(run("eval", "--ckpt", ckpt, "--tokens", val, "--json").stdout)
            self.assertEqual(r["precision"], precision)
            text = run("eval", "--ckpt", ckpt, "--tokens", val).stdout
            trained = "float32" if precision == "fp32" else "bf16"
            self.assertIn(f"auto: the checkpoint's own (trained in {trained}", text)

    def test_sample_measures_which_precision_generates_faster(self):
        # Note [Sampling precision]: under auto, sample times a token in each
        # precision and switches from the checkpoint's only for 1.1x.
        pattern = re.compile(r"^precision: (fp32|bf16) \(auto: a token measured ([0-9.e+]+) ms in (fp32|bf16) "
                             r"\(the checkpoint's\), ([0-9.e+]+) ms in (fp32|bf16): (the faster|not 1\.1× faster)")
        for trained in ("fp32", "bf16"):
            ckpt = os.path.join(self.runs[trained][0], "ckpt.h5")
            err = run("sample", "--ckpt", ckpt, "--max-new-tokens", "40").stderr
            lines = [l for l in err.splitlines() if l.startswith("precision:")]
            self.assertEqual(len(lines), 1, err)
            m = pattern.match(lines[0])
            self.assertIsNotNone(m, lines[0])
            chosen, own_ms, own, other_ms, other, verdict = m.groups()
            self.assertEqual(own, trained)
            self.assertNotEqual(other, trained)
            if verdict == "the faster":
                self.assertEqual(chosen, other)
                self.assertLess(float(other_ms) * 1.1, float(own_ms) * 1.01)  # printed to 3 digits
            else:
                self.assertEqual(chosen, own)
                self.assertGreater(float(other_ms) * 1.1, float(own_ms) * 0.99)
            # A short generation, or an explicit flag, measures nothing.
            short = run("sample", "--ckpt", ckpt, "--max-new-tokens", "5").stderr
            self.assertIn(f"precision: {trained} (auto: the checkpoint's own", short)
            fixed = run("sample", "--ckpt", ckpt, "--max-new-tokens", "40", "--precision", "fp32").stderr
            self.assertIn("precision: fp32 (asked for", fixed)

    def test_inference_commands_take_the_flag(self):
        ckpt = os.path.join(self.runs["bf16"][0], "ckpt.h5")
        val = os.path.join(self.data, "val.bin")
        losses = {}
        for precision in ("fp32", "bf16"):
            r = json.loads(run("eval", "--ckpt", ckpt, "--tokens", val, "--json", "--precision", precision).stdout)
            self.assertEqual(r["precision"], precision)
            losses[precision] = r["loss"]
        self.assertNotEqual(losses["fp32"], losses["bf16"])
        self.assertAlmostEqual(losses["fp32"], losses["bf16"], delta=0.02)
        text = run("sample", "--ckpt", ckpt, "--max-new-tokens", "20", "--precision", "bf16").stdout
        self.assertGreater(len(text), 10)
        page = os.path.join(self.tmp, "attention")
        run("attention", "--ckpt", ckpt, "--prompt", "ROMEO:", "--out", page, "--precision", "bf16")
        self.assertTrue(os.path.exists(os.path.join(page, "attention.json")))

    def test_flag_mistakes(self):
        out = os.path.join(self.tmp, "bad")
        self.expect_error(["train", *self.common, "--out", out, "--precision", "fp16"], 2,
                          "--precision must be fp32, bf16 or auto")
        self.expect_error(["train", *self.common, "--out", out, "--change-precision"], 2,
                          "--change-precision is for --resume")
        self.expect_error(["eval", "--ckpt", os.path.join(self.runs["fp32"][0], "ckpt.h5"), "--tokens",
                           os.path.join(self.data, "val.bin"), "--precision", "half"], 2,
                          "--precision must be fp32, bf16 or auto")
        self.expect_error(["bench", "--sgemm-rate", "--precision", "bf16"], 2, "drop --precision")
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    if h5py is None and no_skip.strict():  # the weight comparisons would not run
        no_skip.skip_or_fail("the bit-for-bit weight comparisons need python3-h5py and python3-numpy")
    unittest.main(verbosity=2)
