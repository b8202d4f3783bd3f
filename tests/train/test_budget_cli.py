#!/usr/bin/python3
"""`tapegpt train --budget` end to end (Note [Budget plan] in train/budget/plan.h).

A budget run measures, prints its choices with their reasons, ends within
its budget (everything included) and leaves best.h5; the plan is recorded in
metrics.jsonl and the checkpoint; flags given win; --budget-fit steps keeps
the default model; a resume continues the recorded plan bit for bit, and a
killed run resumes on the budget's clock; --init-from with --budget
fine-tunes a checkpoint's shape; the mistakes get one error line and touch
nothing. (Under mpirun: tests/distributed/test_netns.py.)
Run by CTest as: test_budget_cli.py PATH/TO/tapegpt
"""
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest

TAPEGPT = None
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "support"))
import no_skip  # noqa: E402
import testutil  # noqa: E402

try:
    import h5py
    import numpy as np
except ImportError:
    h5py = None

BUDGET_S = 20


def run(*args, ok=True):
    return testutil.run(TAPEGPT, *args, ok=ok)


def metrics(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


class BudgetCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-budget-")
        cls.data = testutil.prepare_corpus_head(TAPEGPT, cls.tmp)
        cls.run_dir = os.path.join(cls.tmp, "planned")
        start = time.monotonic()
        cls.out = run("train", "--data", cls.data, "--out", cls.run_dir, "--budget", f"{BUDGET_S}s",
                      "--threads", "2").stdout
        cls.wall = time.monotonic() - start

    def expect_error(self, args, must_mention):
        return testutil.assert_one_error_line(self, run(*args, ok=False), args, 2, must_mention)

    def test_the_run_ends_within_its_budget_and_leaves_best(self):
        # The whole command, start-up and measurements included; the margin
        # is the 10% plus process start and exit.
        self.assertLess(self.wall, BUDGET_S * 1.10 + 2, self.out)
        self.assertGreater(self.wall, BUDGET_S * 0.6, "the plan left most of the budget unused:\n" + self.out)
        for name in ("best.h5", "ckpt.h5", "metrics.jsonl"):
            self.assertTrue(os.path.exists(os.path.join(self.run_dir, name)), name)

    def test_the_header_gives_each_choice_and_its_reason(self):
        for part in ("budget: model: ", "ladder rung", "ms a step, measured", "budget: steps: ",
                     "budget: recipe: --optimizer muon (", "budget: dropout: ", "budget: evaluations: ",
                     "budget: learning rate: Muon ", "budget: planned in "):
            self.assertIn(part, self.out)

    def test_metrics_record_the_plan_and_the_clock(self):
        rows = metrics(os.path.join(self.run_dir, "metrics.jsonl"))
        self.assertEqual(rows[0]["budget_s"], BUDGET_S)
        self.assertTrue(any(line.startswith("model: ") for line in rows[0]["plan"]))
        steps = [r for r in rows if "loss" in r]
        evals = [r for r in rows if "val_loss" in r]
        self.assertGreater(len(steps), 10)
        self.assertGreaterEqual(len(evals), 2)
        self.assertLess(evals[-1]["val_loss"], evals[0]["val_loss"])
        # elapsed_s counts from the command's start: the measurements came first.
        planned_s = float(re.search(r"budget: planned in ([0-9.]+) s", self.out).group(1))
        self.assertGreaterEqual(steps[0]["elapsed_s"], planned_s - 0.05)
        self.assertLess(steps[-1]["elapsed_s"], BUDGET_S)
        # The last step is the planned (or revised) last one, where the schedule ends.
        revisions = [r for r in rows if "revised_at_step" in r]
        planned_end = revisions[-1]["max_steps"] if revisions else None
        if planned_end is not None:
            self.assertEqual(steps[-1]["step"], planned_end)

    def test_the_checkpoint_records_the_plan(self):
        out = run("inspect", os.path.join(self.run_dir, "ckpt.h5")).stdout
        self.assertIn(f"budget={BUDGET_S}s", out)
        self.assertIn("budget_fit=all", out)
        if not h5py:
            return no_skip.skip_test_or_fail(self, "h5py is not installed")
        with h5py.File(os.path.join(self.run_dir, "ckpt.h5")) as f:
            plan = f["train/flags"].attrs["budget_plan"]
            plan = plan.decode() if isinstance(plan, bytes) else plan
            self.assertIn("model: ", plan)
            self.assertIn("steps: ", plan)

    def test_flags_given_win_and_fit_steps_keeps_the_defaults(self):
        # --max-steps given: the header's choices, on any machine however busy
        # (without it a short budget on a loaded machine leaves no time to train).
        out = run("train", "--data", self.data, "--out", os.path.join(self.tmp, "mine"), "--budget", "30s",
                  "--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--optimizer", "adamw", "--max-steps", "4",
                  "--threads", "2").stdout
        self.assertIn("budget: model: 1 layers x 32 wide, 2 heads", out)
        self.assertIn("(yours)", out)
        self.assertIn("recipe: yours for --optimizer", out)
        self.assertNotIn("recipe: --optimizer muon", out)
        fit = run("train", "--data", self.data, "--out", os.path.join(self.tmp, "fit"), "--budget", "30s",
                  "--budget-fit", "steps", "--max-steps", "4", "--threads", "2").stdout
        self.assertIn("budget: model: 4 layers x 192 wide, 4 heads, context 128 (as the flags say)", fit)
        self.assertNotIn("recipe:", fit)
        self.assertIn(" parameters (4 layers, 4 heads, 192 wide, context 128,", fit)

    def test_a_resume_continues_the_recorded_plan_bit_for_bit(self):
        # The shape, steps and evaluation given: nothing left to the clock,
        # so the run is the same on any machine; the recipe still applies.
        args = ["--data", self.data, "--budget", "1m", "--n-layer", "1", "--n-head", "2", "--n-embd", "32",
                "--block-size", "16", "--batch-size", "4", "--max-steps", "24", "--eval-steps", "2",
                "--ckpt-interval", "8", "--keep", "3", "--adamw-lr", "0.004", "--threads", "2"]
        full = os.path.join(self.tmp, "full")
        run("train", *args, "--out", full)
        cont = os.path.join(self.tmp, "continued")
        out = run("train", "--resume", os.path.join(full, "ckpt-8.h5"), "--out", cont).stdout
        self.assertIn("plan continues to step 24 with no guard", out)
        strip = lambda rows: [{k: v for k, v in r.items() if k not in ("tokens_per_s", "elapsed_s", "train_s")}
                              for r in rows if "loss" in r and r["step"] > 8]
        a = strip(metrics(os.path.join(full, "metrics.jsonl")))
        b = strip(metrics(os.path.join(cont, "metrics.jsonl")))
        self.assertEqual(len(a), 16)
        self.assertEqual(a, b)
        if not h5py:
            return no_skip.skip_test_or_fail(self, "h5py is not installed")
        with h5py.File(os.path.join(full, "ckpt.h5")) as fa, h5py.File(os.path.join(cont, "ckpt.h5")) as fb:
            for group in ("model", "optimizer/m", "optimizer/v"):
                for name in fa[group]:
                    self.assertTrue(np.array_equal(fa[group][name][()], fb[group][name][()]), name)

    def test_init_from_with_budget_keeps_the_shape_and_fits_the_rest(self):
        source = os.path.join(self.run_dir, "ckpt.h5")
        out_dir = os.path.join(self.tmp, "fine-tuned")
        budget_s = 15
        start = time.monotonic()
        out = run("train", "--init-from", source, "--data", self.data, "--out", out_dir, "--budget",
                  f"{budget_s}s", "--threads", "2").stdout
        wall = time.monotonic() - start
        self.assertLess(wall, budget_s * 1.10 + 2, out)
        shape = re.search(r"budget: model: (\d+ layers x \d+ wide, \d+ heads, context \d+)", self.out).group(1)
        self.assertIn(f"budget: model: {shape} (the checkpoint's), ", out)
        for part in ("fine-tuning keeps its architecture", "fine-tuning takes", "budget: steps: ",
                     "budget: evaluations: ", "initialised from " + source):
            self.assertIn(part, out)
        params = re.compile(r"^model: (\d+) parameters", re.M)
        self.assertEqual(params.search(out).group(1), params.search(self.out).group(1))
        self.assertTrue(os.path.exists(os.path.join(out_dir, "best.h5")))
        rows = metrics(os.path.join(out_dir, "metrics.jsonl"))
        evals = [r["val_loss"] for r in rows if "val_loss" in r]
        source_rows = metrics(os.path.join(self.run_dir, "metrics.jsonl"))
        # It starts from the trained weights: its first evaluation is already
        # near where the source run ended, far below a fresh model's.
        source_evals = [r["val_loss"] for r in source_rows if "val_loss" in r]
        self.assertLess(evals[0], source_evals[0])
        # --budget-fit steps: the defaults' optimizer, the checkpoint's shape.
        fit = run("train", "--init-from", source, "--data", self.data, "--out", os.path.join(self.tmp, "ft-fit"),
                  "--budget", "30s", "--budget-fit", "steps", "--max-steps", "3", "--threads", "2").stdout
        self.assertIn(f"budget: model: {shape} (as the flags say)", fit)
        self.assertNotIn("recipe:", fit)

    def test_a_killed_run_resumes_within_the_budget_left(self):
        # Killed (SIGKILL: no save at the end) after its first checkpoint,
        # down a while, resumed: both processes together stay within the
        # budget, the time it was down aside. The steps after the last
        # checkpoint were spent too: the clock goes on from the log's last row.
        budget_s = 24
        out_dir = os.path.join(self.tmp, "killed")
        start = time.monotonic()
        proc = subprocess.Popen([TAPEGPT, "train", "--data", self.data, "--out", out_dir, "--budget", f"{budget_s}s",
                                 "--ckpt-interval", "10", "--threads", "2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ckpt = os.path.join(out_dir, "ckpt.h5")
        while not os.path.exists(ckpt) and proc.poll() is None and time.monotonic() - start < budget_s:
            time.sleep(0.1)
        time.sleep(1.5)
        proc.send_signal(signal.SIGKILL)
        first, _ = proc.communicate(timeout=30)
        first_wall = time.monotonic() - start
        self.assertTrue(os.path.exists(ckpt), first)
        time.sleep(3)  # down: not the budget's time
        start = time.monotonic()
        out = run("train", "--resume", ckpt, "--threads", "2").stdout
        second_wall = time.monotonic() - start
        self.assertIn("budget spent before this resume", out)
        self.assertIn("done: ", out)
        # Two process start-ups, and the 10% the budget allows.
        self.assertLess(first_wall + second_wall, budget_s * 1.10 + 3, first + out)
        rows = metrics(os.path.join(out_dir, "metrics.jsonl"))
        self.assertLess(max(r["elapsed_s"] for r in rows if "elapsed_s" in r), budget_s)

    def test_mistakes_get_one_line_and_touch_nothing(self):
        ckpt = os.path.join(self.run_dir, "ckpt.h5")
        before = os.path.getmtime(ckpt)
        fresh = os.path.join(self.tmp, "never")
        self.expect_error(["train", "--data", self.data, "--out", fresh, "--budget", "5"], "--budget '5'")
        self.expect_error(["train", "--data", self.data, "--out", fresh, "--budget", "soon"], "--budget 'soon'")
        self.expect_error(["train", "--data", self.data, "--out", fresh, "--budget-fit", "steps"],
                          "--budget-fit says what --budget fits")
        self.expect_error(["train", "--data", self.data, "--out", fresh, "--budget", "5m", "--budget-fit", "most"],
                          "--budget-fit must be 'all' or 'steps'")
        self.expect_error(["train", "--data", self.data, "--out", fresh, "--budget", "0.1s"],
                          "the budget leaves no time to train")
        self.expect_error(["train", "--resume", ckpt, "--budget", "10m"], "--budget cannot be changed when resuming")
        # Muon's settings are fine with the recipe's Muon (the resume test
        # passes --adamw-lr), not with an AdamW the user chose.
        self.expect_error(["train", "--data", self.data, "--out", fresh, "--budget", "5m", "--optimizer", "adamw",
                           "--adamw-lr", "0.01"], "--adamw-lr is a setting of --optimizer muon")
        self.expect_error(["train", "--data", self.data, "--out", self.run_dir, "--budget", "5m"], "already holds a run")
        self.assertFalse(os.path.exists(fresh))
        self.assertEqual(os.path.getmtime(ckpt), before)


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
