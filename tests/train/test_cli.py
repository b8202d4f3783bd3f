#!/usr/bin/python3
"""End-to-end tests of the tapegpt command line on a tiny corpus.

prepare -> train -> loss falls -> checkpoint -> eval -> sample, exact resume,
eval agreeing with the trainer's validation loss, and every bad input getting
one clear error line with the right exit code and no damaged file.
Run by CTest as: test_cli.py PATH/TO/tapegpt
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

TAPEGPT = None
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# float32 pinned: eval must give the trainer's validation loss to 1e-6, a
# float32 promise (on AMX, --precision auto would train in bf16;
# precision_cli covers that).
MODEL = ["--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--block-size", "16",
         "--batch-size", "4", "--warmup", "2", "--precision", "fp32", "--threads", "2"]

sys.path.insert(0, os.path.join(REPO, "tests", "support"))
import no_skip  # noqa: E402
import testutil  # noqa: E402

try:
    import h5py
    import numpy as np
except ImportError:  # the weight comparisons need them; everything else runs
    h5py = None


def run(*args, ok=True, stdin=None):
    """tapegpt with this file's binary (testutil.run)."""
    return testutil.run(TAPEGPT, *args, ok=ok, input=stdin)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def metrics(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


class Cli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-cli-")
        cls.corpus = os.path.join(cls.tmp, "tiny.txt")
        with open(os.path.join(REPO, "data", "tinyshakespeare.txt"), encoding="utf-8") as f:
            text = f.read()[:40000]
        with open(cls.corpus, "w", encoding="utf-8") as f:
            f.write(text)
        cls.data = os.path.join(cls.tmp, "data")
        run("prepare", "--input", cls.corpus, "--tokenizer", "char", "--out", cls.data)
        cls.run_dir = os.path.join(cls.tmp, "run")
        run("train", "--data", cls.data, "--out", cls.run_dir, *MODEL, "--max-steps", "60",
            "--lr", "3e-3", "--eval-interval", "30", "--eval-steps", "0")

    def expect_error(self, args, code, must_mention, stdin=None):
        return testutil.assert_one_error_line(self, run(*args, ok=False, stdin=stdin), args, code, must_mention)

    # ---- the happy path ---------------------------------------------------
    def test_prepare_wrote_files(self):
        for name in ("train.bin", "val.bin", "tokenizer.json"):
            self.assertTrue(os.path.getsize(os.path.join(self.data, name)) > 0, name)

    def test_training_lowers_the_loss_and_writes_outputs(self):
        rows = metrics(os.path.join(self.run_dir, "metrics.jsonl"))
        steps = [r for r in rows if "loss" in r]
        self.assertEqual([r["step"] for r in steps], list(range(1, 61)))
        for key in ("step", "loss", "lr", "grad_norm", "tokens_per_s", "elapsed_s", "train_s"):
            self.assertIn(key, steps[0])
        # train_s: the steps' own wall time, growing, never more than the elapsed time
        train_s = [r["train_s"] for r in steps]
        self.assertTrue(all(b > a for a, b in zip(train_s, train_s[1:])), train_s[:5])
        self.assertTrue(all(r["train_s"] <= r["elapsed_s"] + 1e-6 for r in steps))
        first = sum(r["loss"] for r in steps[:5]) / 5
        last = sum(r["loss"] for r in steps[-5:]) / 5
        self.assertLess(last, first - 0.5, "training did not lower the loss")
        evals = [r for r in rows if "val_loss" in r]
        self.assertEqual([r["step"] for r in evals], [30, 60])
        by_step = {r["step"]: r for r in steps}
        for r in evals:  # an evaluation carries the training time of its step: its own is not counted
            self.assertEqual(r["train_s"], by_step[r["step"]]["train_s"])
        self.assertLess(by_step[60]["train_s"] - by_step[31]["train_s"],
                        by_step[60]["elapsed_s"] - by_step[30]["elapsed_s"])
        for name in ("ckpt.h5", "best.h5"):
            self.assertTrue(os.path.exists(os.path.join(self.run_dir, name)), name)

    def test_eval_agrees_with_the_trainers_validation_loss(self):
        # --eval-steps 0 scores every window of val.bin, so the trainer and
        # eval score exactly the same targets.
        rows = metrics(os.path.join(self.run_dir, "metrics.jsonl"))
        val = [r["val_loss"] for r in rows if "val_loss" in r][-1]
        # The run trained in float32 (MODEL); on AMX eval's --precision auto is bf16.
        p = run("eval", "--ckpt", os.path.join(self.run_dir, "ckpt.h5"),
                "--tokens", os.path.join(self.data, "val.bin"), "--json", "--batch-size", "4", "--precision", "fp32")
        res = json.loads(p.stdout)
        self.assertAlmostEqual(res["loss"], val, delta=1e-6)
        self.assertAlmostEqual(res["perplexity"], 2.718281828 ** res["loss"], delta=1e-3)
        val_tokens = os.path.getsize(os.path.join(self.data, "val.bin"))  # generous bound
        self.assertGreater(res["tokens"], 1000)
        self.assertLess(res["tokens"], val_tokens)
        # char tokenizer on ASCII: one byte per token
        self.assertEqual(res["bytes"], res["tokens"])
        self.assertAlmostEqual(res["bits_per_byte"], res["loss"] / 0.6931471805599453, delta=1e-6)

    def test_eval_text_and_stride(self):
        ckpt = os.path.join(self.run_dir, "ckpt.h5")
        text = os.path.join(self.tmp, "held_out.txt")
        with open(text, "w") as f:
            f.write("ROMEO:\nWhat light through yonder window breaks?\n" * 3)
        plain = json.loads(run("eval", "--ckpt", ckpt, "--text", text, "--json").stdout)
        sliding = json.loads(run("eval", "--ckpt", ckpt, "--text", text, "--json", "--stride", "4").stdout)
        n = len(open(text).read())
        self.assertEqual(plain["tokens"], n - 1)
        self.assertEqual(sliding["tokens"], n - 1)  # every target once, more context each
        self.assertNotEqual(plain["loss"], sliding["loss"])
        human = run("eval", "--ckpt", ckpt, "--text", text).stdout
        self.assertIn("perplexity", human)

    def test_sample_streams_text_deterministically(self):
        ckpt = os.path.join(self.run_dir, "ckpt.h5")
        # A fixed precision: under auto sample measures which generates faster,
        # and the two could differ in their last bits (Note [Sampling precision]).
        same = ["--prompt", "ROMEO:", "--max-new-tokens", "50", "--seed", "7", "--precision", "fp32"]
        a = run("sample", "--ckpt", ckpt, *same).stdout
        b = run("sample", "--ckpt", ckpt, *same).stdout
        self.assertEqual(a, b)
        self.assertTrue(a.startswith("ROMEO:"))
        self.assertEqual(len(a), len("ROMEO:") + 50 + 1)  # char tokens + final newline
        greedy = run("sample", "--ckpt", ckpt, "--max-new-tokens", "40", "--temperature", "0").stdout
        self.assertEqual(len(greedy), 41)
        filtered = run("sample", "--ckpt", ckpt, "--max-new-tokens", "40", "--temperature", "0.8",
                       "--top-k", "5", "--top-p", "0.9").stdout
        self.assertEqual(len(filtered), 41)

    def test_tokenize_round_trip(self):
        ids = run("tokenize", "--data", self.data, "hello there").stdout.split()
        self.assertEqual(len(ids), 11)
        text = run("tokenize", "--data", self.data, "--decode", " ".join(ids)).stdout
        self.assertEqual(text.rstrip("\n"), "hello there")
        same = run("tokenize", "--ckpt", os.path.join(self.run_dir, "ckpt.h5"), "hello there").stdout.split()
        self.assertEqual(ids, same)

    def test_resume_is_bit_exact(self):
        full = os.path.join(self.tmp, "full")
        half = os.path.join(self.tmp, "half")
        common = ["--data", self.data, *MODEL, "--lr-decay-steps", "24", "--eval-interval", "8",
                  "--eval-steps", "3", "--dropout", "0.1"]
        run("train", *common, "--out", full, "--max-steps", "24")
        run("train", *common, "--out", half, "--max-steps", "12")
        run("train", "--resume", os.path.join(half, "ckpt.h5"), "--max-steps", "24")
        # Training rows (appended across the resume) must match bit for bit;
        # the interrupted run also validated at its last step (12), so the
        # evaluations are compared where both runs made one.
        strip = lambda rows: [{k: v for k, v in r.items() if k not in ("tokens_per_s", "elapsed_s", "train_s")}
                              for r in rows if "loss" in r]
        evals = lambda rows: {r["step"]: r["val_loss"] for r in rows if "val_loss" in r}
        a, b = metrics(os.path.join(full, "metrics.jsonl")), metrics(os.path.join(half, "metrics.jsonl"))
        self.assertEqual(len(strip(a)), 24)
        self.assertEqual(strip(a), strip(b))
        # The training time goes on across the resume (saved in ckpt.h5).
        b_steps = {r["step"]: r["train_s"] for r in b if "loss" in r}
        self.assertGreater(b_steps[13], b_steps[12])
        self.assertEqual(evals(a), {s: v for s, v in evals(b).items() if s in evals(a)})
        if h5py:
            with h5py.File(os.path.join(full, "ckpt.h5")) as fa, h5py.File(os.path.join(half, "ckpt.h5")) as fb:
                for group in ("model", "optimizer/m", "optimizer/v"):
                    for name in fa[group]:
                        self.assertTrue(np.array_equal(fa[group][name][()], fb[group][name][()]), name)

    def test_max_steps_zero_writes_the_initial_model(self):
        out = os.path.join(self.tmp, "zero")
        run("train", "--data", self.data, "--out", out, *MODEL, "--max-steps", "0")
        self.assertTrue(os.path.exists(os.path.join(out, "ckpt.h5")))
        p = run("params", "--ckpt", os.path.join(out, "ckpt.h5"))
        self.assertIn("total", p.stdout)

    def test_sigint_finishes_the_step_saves_and_resumes(self):
        out = os.path.join(self.tmp, "interrupted")
        proc = subprocess.Popen([TAPEGPT, "train", "--data", self.data, "--out", out, *MODEL,
                                 "--max-steps", "100000", "--eval-interval", "0", "--ckpt-interval", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        metrics_path = os.path.join(out, "metrics.jsonl")
        deadline = time.time() + 60
        while time.time() < deadline and not (os.path.exists(metrics_path) and os.path.getsize(metrics_path) > 200):
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, stderr)
        self.assertIn("Resume with: tapegpt train --resume", stdout)
        steps = [r["step"] for r in metrics(metrics_path) if "loss" in r]
        if h5py:
            with h5py.File(os.path.join(out, "ckpt.h5")) as f:
                self.assertEqual(int(f["train"].attrs["step"]), steps[-1])
        run("train", "--resume", os.path.join(out, "ckpt.h5"), "--max-steps", str(steps[-1] + 2))

    def test_params_presets(self):
        small = run("params", "--preset", "gpt2-small").stdout
        self.assertIn("124,439,808", small)  # GPT-2 124M with tied embedding, as nanoGPT counts
        big = run("params", "--preset", "gpt3-175b").stdout
        self.assertIn("query (per head)", big)
        self.assertIn("9,216", big)  # 96 layers × 96 heads query matrices

    def test_help_everywhere(self):
        self.assertIn("Commands:", run("--help").stdout)
        for cmd in ("prepare", "train", "eval", "sample", "tokenize", "params", "inspect"):
            self.assertIn("--", run(cmd, "--help").stdout, cmd)

    def test_inspect_describes_the_checkpoint(self):
        ckpt = os.path.join(self.run_dir, "ckpt.h5")
        out = run("inspect", ckpt).stdout
        for want in ("format_version  2", "step            60", "tokens seen     3840",
                     "tokenizer       char", "AdamW moments saved",
                     "/model/transformer.wte.weight", "/optimizer/v/transformer.ln_f.bias",
                     "match their checksums"):
            self.assertIn(want, out)
        rows = metrics(os.path.join(self.run_dir, "metrics.jsonl"))
        best = min(r["val_loss"] for r in rows if "val_loss" in r)
        self.assertIn(f"best val loss   {best:.6f}", out)
        if h5py:  # the norms are those of the stored tensors
            with h5py.File(ckpt, "r") as f:
                wte = f["model/transformer.wte.weight"][()].astype(np.float64)
            line = next(l for l in out.splitlines() if "/model/transformer.wte.weight" in l)
            self.assertAlmostEqual(float(line.split()[-2]), float(np.sqrt((wte * wte).sum())), places=4)
        self.expect_error(["inspect"], 2, "inspect CKPT")
        self.expect_error(["inspect", ckpt, "extra"], 2, "extra")
        self.expect_error(["inspect", os.path.join(self.tmp, "nope.h5")], 1, "nope.h5")

    # ---- bad input: one line, right exit code, nothing damaged -------------
    def test_bad_inputs(self):
        tmp = self.tmp
        ckpt = os.path.join(self.run_dir, "ckpt.h5")
        before = sha(ckpt)
        empty = os.path.join(tmp, "empty.txt")
        open(empty, "w").close()
        binary = os.path.join(tmp, "binary.bin")
        with open(binary, "wb") as f:
            f.write(bytes(range(256)) * 4)
        short = os.path.join(tmp, "short.txt")
        with open(short, "w") as f:
            f.write("abcdefghij" * 3)
        run("prepare", "--input", short, "--tokenizer", "char", "--out", os.path.join(tmp, "short"), "--val-fraction", "0.5")
        garbage = os.path.join(tmp, "garbage.h5")
        with open(garbage, "wb") as f:
            f.write(b"this is not an HDF5 file at all" * 10)
        truncated = os.path.join(tmp, "truncated.h5")
        with open(ckpt, "rb") as f, open(truncated, "wb") as g:
            g.write(f.read()[:3000])

        self.expect_error(["prepare", "--input", os.path.join(tmp, "missing.txt"), "--tokenizer", "char", "--out", tmp + "/x"], 1, "missing.txt")
        self.expect_error(["prepare", "--input", empty, "--tokenizer", "char", "--out", tmp + "/x"], 1, "empty")
        self.expect_error(["prepare", "--input", binary, "--tokenizer", "char", "--out", tmp + "/x"], 1, "binary")
        self.expect_error(["prepare", "--input", self.corpus, "--tokenizer", "wordpiece", "--out", tmp + "/x"], 2, "tokenizer")
        self.expect_error(["train", "--data", os.path.join(tmp, "short"), "--out", tmp + "/s", *MODEL], 1, "block_size")
        self.expect_error(["train", "--data", self.data, "--out", tmp + "/y", "--n-embd", "30", "--n-head", "4"], 2, "divisible")
        self.expect_error(["train", "--data", os.path.join(tmp, "nodata"), "--out", tmp + "/y"], 1, "nodata")
        self.expect_error(["train", "--resume", ckpt], 2, "already finished")
        self.expect_error(["train", "--resume", ckpt, "--max-steps", "100", "--n-layer", "3"], 2, "n-layer")
        self.expect_error(["eval", "--ckpt", garbage, "--tokens", os.path.join(self.data, "val.bin")], 1, "garbage.h5")
        self.expect_error(["eval", "--ckpt", truncated, "--tokens", os.path.join(self.data, "val.bin")], 1, "truncated.h5")
        self.expect_error(["sample", "--ckpt", ckpt, "--prompt", "snow\u2603man"], 1, "character")
        self.expect_error(["sample", "--ckpt", ckpt, "--top-p", "0"], 2, "top-p")
        self.expect_error(["train", "--data", self.data, "--out", tmp + "/z", "--bogus-flag"], 2, "bogus")
        self.expect_error(["train", "--data", self.data, "--out", self.run_dir, *MODEL], 2, "already holds a run")
        self.expect_error(["eval", "--ckpt", ckpt], 2, "--tokens")
        self.expect_error(["nonsense"], 2, "unknown command")
        self.assertEqual(sha(ckpt), before, "a failed command changed an existing checkpoint")

    # ---- one CLI contract (train/cli_util.h), command by command -------------
    def test_every_command_refuses_stray_arguments_and_bad_threads(self):
        ckpt = os.path.join(self.run_dir, "ckpt.h5")
        val = os.path.join(self.data, "val.bin")
        valid = {
            "prepare": ["--input", self.corpus, "--tokenizer", "char", "--out", os.path.join(self.tmp, "p2")],
            "train": ["--data", self.data, "--out", os.path.join(self.tmp, "t2"), *MODEL[:-2], "--max-steps", "0"],
            "eval": ["--ckpt", ckpt, "--tokens", val],
            "sample": ["--ckpt", ckpt, "--max-new-tokens", "3"],
            "tokenize": ["--data", self.data, "hello"],
            "params": ["--preset", "demo"],
            "bench": ["--shape", "S", "--block-size", "8", "--batch-size", "1", "--steps", "1",
                      "--warmup", "0", "--sample-tokens", "0", "--no-profile"],
        }
        for cmd, args in valid.items():
            assert "--threads" not in args
            run(cmd, *args, "--threads", "1")  # every command accepts it
            self.expect_error([cmd, *args, "stray"], 2, "unexpected argument 'stray'")
            self.expect_error([cmd, *args, "--threads", "-5"], 2, "--threads")
            self.expect_error([cmd, *args, "--threads", "99999"], 2, "--threads")

    def test_contradictory_or_out_of_range_flags_are_usage_errors(self):
        ckpt = os.path.join(self.run_dir, "ckpt.h5")
        out = os.path.join(self.tmp, "contra")
        self.expect_error(["train", "--data", self.data, "--out", out, "--warmup", "5",
                           "--lr-decay-steps", "1"], 2, "--warmup 5")
        self.assertFalse(os.path.exists(os.path.join(out, "ckpt.h5")))
        self.expect_error(["train", "--data", self.data, "--out", out, "--gelu", "relu"], 2, "--gelu")
        self.expect_error(["sample", "--ckpt", ckpt, "--temperature", "0", "--top-k", "5"], 2, "greedy")
        self.expect_error(["bench", "--sample-tokens", "65521"], 2, "--sample-tokens")
        self.expect_error(["tokenize", "--data", self.data, "one", "two"], 2, "unexpected argument 'two'")

    def test_wsd_schedule_and_zero_init_proj_are_saved_and_resume(self):
        full = os.path.join(self.tmp, "wsd-full")
        half = os.path.join(self.tmp, "wsd-half")
        common = ["--data", self.data, *MODEL, "--lr", "2e-3", "--min-lr", "2e-4", "--lr-schedule", "wsd",
                  "--lr-decay-frac", "0.25", "--zero-init-proj", "--eval-interval", "0", "--eval-steps", "2"]
        run("train", *common, "--out", full, "--max-steps", "16")
        run("train", *common, "--out", half, "--max-steps", "8", "--lr-decay-steps", "16")
        run("train", "--resume", os.path.join(half, "ckpt.h5"), "--max-steps", "16")
        strip = lambda rows: [{k: v for k, v in r.items() if k not in ("tokens_per_s", "elapsed_s", "train_s")}
                              for r in rows if "loss" in r]
        a, b = metrics(os.path.join(full, "metrics.jsonl")), metrics(os.path.join(half, "metrics.jsonl"))
        self.assertEqual(strip(a), strip(b))
        # warmup 2, then lr held until step 12 of 16, then a line down to min-lr
        lr = {r["step"]: r["lr"] for r in a if "loss" in r}
        self.assertAlmostEqual(lr[1], 2e-3 / 3, delta=1e-12)
        self.assertEqual({lr[s] for s in range(3, 14)}, {2e-3})
        self.assertAlmostEqual(lr[14], 2e-4 + 1.8e-3 * 3 / 4, delta=1e-12)
        self.assertAlmostEqual(lr[16], 2e-4 + 1.8e-3 / 4, delta=1e-12)
        flags = run("inspect", os.path.join(half, "ckpt.h5")).stdout
        for saved in ("lr_schedule=wsd", "lr_decay_frac=0.25", "zero_init_proj=1"):
            self.assertIn(saved, flags)
        out = os.path.join(self.tmp, "zero-proj")
        run("train", "--data", self.data, "--out", out, *MODEL, "--max-steps", "0", "--zero-init-proj")
        if h5py:
            with h5py.File(os.path.join(out, "ckpt.h5"), "r") as f:
                for name in ("transformer.h.0.attn.c_proj.weight", "transformer.h.0.mlp.c_proj.weight"):
                    self.assertFalse(np.any(f["model"][name][()]), name)
                self.assertTrue(np.any(f["model"]["transformer.h.0.attn.c_attn.weight"][()]))
        self.expect_error(["train", "--resume", os.path.join(half, "ckpt.h5"), "--max-steps", "20",
                           "--lr-schedule", "cosine"], 2, "--lr-schedule cannot be changed")

    def test_preset_sets_its_flags_under_the_command_lines(self):
        out = os.path.join(self.tmp, "preset")
        run("train", "--preset", "shakespeare-fast", "--data", self.data, "--out", out, "--max-steps", "2",
            "--n-embd", "32", "--eval-interval", "0", "--eval-steps", "1", "--threads", "2")
        text = run("inspect", os.path.join(out, "ckpt.h5")).stdout
        self.assertIn("n_embd 32", text)      # given: wins over the recipe's 128
        self.assertIn("block_size 64", text)  # the recipe's
        self.assertIn("max_steps=2", text)
        self.assertIn("preset=shakespeare-fast", text)
        self.assertIn("shakespeare-fast", run("train", "--help").stdout)
        self.expect_error(["train", "--preset", "gpt2-small", "--data", self.data, "--out", out + "2"], 2,
                          "'shakespeare-fast'")
        self.expect_error(["train", "--preset", "shakespeare-fast", "--init-from", os.path.join(out, "ckpt.h5"),
                           "--data", self.data, "--out", out + "3"], 2, "--preset")

    def test_time_to_loss_flag_errors(self):
        out = os.path.join(self.tmp, "ttl-errors")
        self.expect_error(["train", "--data", self.data, "--out", out, "--lr-decay-frac", "0.3"], 2,
                          "--lr-schedule wsd")
        self.expect_error(["train", "--data", self.data, "--out", out, "--lr-schedule", "linear"], 2,
                          "--lr-schedule must be")
        self.expect_error(["train", "--data", self.data, "--out", out, "--lr-schedule", "wsd",
                           "--lr-decay-frac", "0"], 2, "--lr-decay-frac")
        self.expect_error(["train", "--data", self.data, "--out", out, "--eval-steps", "-1"], 2, "--eval-steps")
        self.expect_error(["train", "--init-from", os.path.join(self.run_dir, "ckpt.h5"), "--data", self.data,
                           "--out", out, "--zero-init-proj"], 2, "--zero-init-proj")
        self.assertFalse(os.path.exists(out))

    def test_sample_help_states_the_context_shift(self):
        text = run("sample", "--help").stdout
        self.assertIn("block_size/2", text)
        self.assertIn("renormalise", text)

    def test_gelu_is_saved_and_used(self):
        if not h5py:
            no_skip.skip_test_or_fail(self, "h5py is not installed for /usr/bin/python3 (run scripts/setup.sh)")
        out = os.path.join(self.tmp, "erf")
        run("train", "--data", self.data, "--out", out, *MODEL, "--max-steps", "2", "--gelu", "erf")
        ckpt = os.path.join(out, "ckpt.h5")
        with h5py.File(ckpt, "r") as f:
            self.assertEqual(f["config"].attrs["gelu"], b"erf")
        # An old checkpoint without the attribute loads as tanh: dropping it
        # from the erf run changes what the model computes.
        old = os.path.join(self.tmp, "old.h5")
        shutil.copy(ckpt, old)
        with h5py.File(old, "r+") as f:
            del f["config"].attrs["gelu"]
        val = os.path.join(self.data, "val.bin")
        erf_loss = run("eval", "--ckpt", ckpt, "--tokens", val, "--json").stdout
        tanh_loss = run("eval", "--ckpt", old, "--tokens", val, "--json").stdout
        self.assertNotEqual(json.loads(erf_loss)["loss"], json.loads(tanh_loss)["loss"])
        self.assertIn("gelu", run("train", "--help").stdout)

    def test_qk_norm_is_saved_resumed_sampled_and_refused_by_export(self):
        if not h5py:
            no_skip.skip_test_or_fail(self, "h5py is not installed for /usr/bin/python3 (run scripts/setup.sh)")
        out = os.path.join(self.tmp, "qk")
        run("train", "--data", self.data, "--out", out, *MODEL, "--max-steps", "2", "--qk-norm",
            "--ckpt-interval", "1")
        ckpt = os.path.join(out, "ckpt.h5")
        with h5py.File(ckpt, "r") as f:
            self.assertEqual(f["config"].attrs["qk_norm"], b"on")
        self.assertIn("qk_norm on", run("inspect", "--ckpt", ckpt).stdout)
        run("train", "--resume", ckpt, "--max-steps", "3")
        self.assertTrue(run("sample", "--ckpt", ckpt, "--max-new-tokens", "5").stdout)
        # Without QK-norm the same weights compute another function.
        off = os.path.join(self.tmp, "qk_off.h5")
        shutil.copy(ckpt, off)
        with h5py.File(off, "r+") as f:
            f["config"].attrs["qk_norm"] = np.bytes_(b"off")
        val = os.path.join(self.data, "val.bin")
        on_loss = json.loads(run("eval", "--ckpt", ckpt, "--tokens", val, "--json").stdout)["loss"]
        off_loss = json.loads(run("eval", "--ckpt", off, "--tokens", val, "--json").stdout)["loss"]
        self.assertNotEqual(on_loss, off_loss)
        gguf = os.path.join(self.tmp, "qk.gguf")
        self.expect_error(["export", "--ckpt", ckpt, "--format", "gguf", "--out", gguf], 1, "--qk-norm")
        self.assertFalse(os.path.exists(gguf))
        self.assertIn("--qk-norm", run("train", "--help").stdout)

    def test_logit_softcap_is_saved_resumed_sampled_and_refused_by_export(self):
        if not h5py:
            no_skip.skip_test_or_fail(self, "h5py is not installed for /usr/bin/python3 (run scripts/setup.sh)")
        out = os.path.join(self.tmp, "softcap")
        run("train", "--data", self.data, "--out", out, *MODEL, "--max-steps", "2", "--logit-softcap", "20",
            "--ckpt-interval", "1")
        ckpt = os.path.join(out, "ckpt.h5")
        with h5py.File(ckpt, "r") as f:
            self.assertEqual(f["config"].attrs["logit_softcap"], b"20")
        self.assertIn("logit_softcap 20", run("inspect", "--ckpt", ckpt).stdout)
        self.assertIn("logit_softcap 20", run("params", "--ckpt", ckpt).stdout)
        self.assertIn("logit_softcap 15", run("params", "--preset", "demo", "--logit-softcap", "15").stdout)
        run("train", "--resume", ckpt, "--max-steps", "3")
        self.assertTrue(run("sample", "--ckpt", ckpt, "--max-new-tokens", "5").stdout)
        # Without the cap the same weights compute another function.
        off = os.path.join(self.tmp, "softcap_off.h5")
        shutil.copy(ckpt, off)
        with h5py.File(off, "r+") as f:
            f["config"].attrs["logit_softcap"] = np.bytes_(b"off")
        val = os.path.join(self.data, "val.bin")
        on_loss = json.loads(run("eval", "--ckpt", ckpt, "--tokens", val, "--json").stdout)["loss"]
        off_loss = json.loads(run("eval", "--ckpt", off, "--tokens", val, "--json").stdout)["loss"]
        self.assertNotEqual(on_loss, off_loss)
        gguf = os.path.join(self.tmp, "softcap.gguf")
        self.expect_error(["export", "--ckpt", ckpt, "--format", "gguf", "--out", gguf], 1, "--logit-softcap 20")
        self.assertFalse(os.path.exists(gguf))
        self.assertIn("--logit-softcap", run("train", "--help").stdout)
        self.expect_error(["train", "--data", self.data, "--out", os.path.join(self.tmp, "softcap_bad"), *MODEL,
                           "--logit-softcap", "25"], 2, "--logit-softcap must be 'off', '15', '20' or '30'")

    def test_version_mismatch_and_foreign_hdf5(self):
        if not h5py:
            no_skip.skip_test_or_fail(self, "h5py not installed (python3-h5py)")
        ckpt = os.path.join(self.run_dir, "ckpt.h5")
        newer = os.path.join(self.tmp, "newer.h5")
        shutil.copy(ckpt, newer)
        with h5py.File(newer, "r+") as f:
            f.attrs["format_version"] = np.int64(99)
        self.expect_error(["eval", "--ckpt", newer, "--tokens", os.path.join(self.data, "val.bin")], 1, "version")
        foreign = os.path.join(self.tmp, "foreign.h5")
        with h5py.File(foreign, "w") as f:
            f["weights"] = np.zeros(3)
        self.expect_error(["sample", "--ckpt", foreign], 1, "foreign.h5")


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    if h5py is None and no_skip.strict():  # the weight comparisons would not run
        no_skip.skip_or_fail("the bit-for-bit weight comparisons need python3-h5py and python3-numpy")
    unittest.main(verbosity=2)
