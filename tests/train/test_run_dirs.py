#!/usr/bin/python3
"""A run is only ever written where its user points (train/run_dir.h).

Run by CTest as: test_run_dirs.py PATH/TO/tapegpt
- copy a run and resume the copy: the original is byte-identical, the copy
  advanced;
- --resume X --out DIR where DIR holds another run: refused with one line
  naming both runs, DIR untouched; with --overwrite it is replaced;
- --overwrite of a new run: metrics.jsonl holds only the new run's rows and
  no file of the old run is left;
- --keep 2 over 5 checkpoint intervals leaves exactly two ckpt-STEP.h5, the
  newest identical to ckpt.h5, every one loadable.
"""
import hashlib
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robustness"))
import robutil  # noqa: E402
import testutil  # noqa: E402  (tests/support, on sys.path through robutil)

TAPEGPT = None


def snapshot(d):
    """{relative path: sha256} of every file under d."""
    out = {}
    for root, _, files in os.walk(d):
        for n in files:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, d)] = hashlib.sha256(f.read()).hexdigest()
    return out


def run_id(ckpt):
    """The run id `tapegpt inspect` prints for a checkpoint."""
    out = robutil.run(TAPEGPT, "inspect", ckpt).stdout
    line = next(l for l in out.splitlines() if l.strip().startswith("run "))
    return line.split()[1]


class RunDirs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-rundirs-")
        cls.data = robutil.prepare_tiny(TAPEGPT, cls.tmp)
        cls.flags = ["--data", cls.data, *robutil.TINY_MODEL, "--eval-interval", "2", "--eval-steps", "2",
                     "--threads", "2"]

    def new_run(self, name, steps=4, *extra):
        out = os.path.join(self.tmp, name)
        robutil.run(TAPEGPT, "train", *self.flags, "--out", out, "--max-steps", str(steps), *extra)
        return out

    def expect_one_error(self, p, code):
        self.assertEqual(p.returncode, code, p.stderr)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith("tapegpt train: error: "), lines[0])
        return lines[0]

    def test_resuming_a_copy_leaves_the_original_untouched(self):
        a = self.new_run("a")
        b = os.path.join(self.tmp, "b")
        shutil.copytree(a, b)
        before = snapshot(a)
        robutil.run(TAPEGPT, "train", "--resume", os.path.join(b, "ckpt.h5"), "--max-steps", "8",
                    "--threads", "2")
        self.assertEqual(snapshot(a), before, "resuming the copy wrote into the original run")
        self.assertEqual(robutil.checkpoint_step(os.path.join(b, "ckpt.h5")), 8)
        steps = [r["step"] for r in robutil.metrics(os.path.join(b, "metrics.jsonl")) if "loss" in r]
        self.assertEqual(steps, list(range(1, 9)))
        # A relative checkpoint path resumes beside itself too.
        robutil.run(TAPEGPT, "train", "--resume", "ckpt.h5", "--max-steps", "10", "--threads", "2", cwd=b)
        self.assertEqual(robutil.checkpoint_step(os.path.join(b, "ckpt.h5")), 10)
        self.assertEqual(snapshot(a), before)
        # Into a new --out whose only file is a stale log (a run killed before
        # its first checkpoint): the resumed run starts a log of its own there.
        stale = os.path.join(self.tmp, "stale")
        os.makedirs(stale)
        with open(os.path.join(stale, "metrics.jsonl"), "w") as f:
            f.write('{"step":1,"loss":9.0}\n')
        robutil.run(TAPEGPT, "train", "--resume", os.path.join(a, "ckpt.h5"), "--max-steps", "6",
                    "--out", stale, "--threads", "2")
        rows = robutil.metrics(os.path.join(stale, "metrics.jsonl"))
        self.assertEqual([r["step"] for r in rows if "loss" in r], [5, 6])
        self.assertEqual(snapshot(a), before)

    def test_resume_into_a_directory_holding_another_run(self):
        x = self.new_run("x")
        other = self.new_run("other", 4, "--seed", "7")
        before = snapshot(other)
        ckpt = os.path.join(x, "ckpt.h5")
        p = robutil.run(TAPEGPT, "train", "--resume", ckpt, "--max-steps", "8", "--out", other,
                        "--threads", "2", ok=False)
        line = self.expect_one_error(p, 2)
        self.assertIn(run_id(ckpt), line)
        self.assertIn(run_id(os.path.join(other, "ckpt.h5")), line)
        self.assertIn("--overwrite", line)
        self.assertEqual(snapshot(other), before, "a refused resume changed the other run")
        # With --overwrite the other run is replaced by the resumed one.
        robutil.run(TAPEGPT, "train", "--resume", ckpt, "--max-steps", "8", "--out", other, "--overwrite",
                    "--threads", "2")
        self.assertEqual(run_id(os.path.join(other, "ckpt.h5")), run_id(ckpt))
        rows = robutil.metrics(os.path.join(other, "metrics.jsonl"))
        self.assertEqual([r["step"] for r in rows if "loss" in r], [5, 6, 7, 8])
        for n in os.listdir(other):
            if n.endswith(".h5"):
                self.assertEqual(run_id(os.path.join(other, n)), run_id(ckpt), n)

    def test_overwrite_starts_a_fresh_metrics_log(self):
        c = self.new_run("c", 6)
        old_id = run_id(os.path.join(c, "ckpt.h5"))
        p = robutil.run(TAPEGPT, "train", *self.flags, "--out", c, "--max-steps", "3", ok=False)
        self.assertIn("already holds a run", self.expect_one_error(p, 2))
        robutil.run(TAPEGPT, "train", *self.flags, "--out", c, "--max-steps", "3", "--seed", "9",
                    "--overwrite")
        rows = robutil.metrics(os.path.join(c, "metrics.jsonl"))
        self.assertEqual([r["step"] for r in rows if "loss" in r], [1, 2, 3])
        self.assertEqual([r["step"] for r in rows if "val_loss" in r], [2, 3])
        new_id = run_id(os.path.join(c, "ckpt.h5"))
        self.assertNotEqual(new_id, old_id)
        h5 = sorted(n for n in os.listdir(c) if n.endswith(".h5"))
        self.assertEqual(h5, ["best.h5", "ckpt-3.h5", "ckpt.h5"])  # the old ckpt-6.h5 is gone
        for n in h5:
            self.assertEqual(run_id(os.path.join(c, n)), new_id, n)
        self.assertEqual(robutil.temp_files(c), [])
        # --max-steps 0 logs no row: the old run's log goes with its files.
        robutil.run(TAPEGPT, "train", *self.flags, "--out", c, "--max-steps", "0", "--overwrite")
        self.assertEqual(sorted(os.listdir(c)), ["ckpt-0.h5", "ckpt.h5"])
        self.assertNotEqual(run_id(os.path.join(c, "ckpt.h5")), new_id)

    def test_keep_two_of_five_periodic_checkpoints(self):
        k = self.new_run("keep", 10, "--ckpt-interval", "2", "--keep", "2")
        periodic = sorted(n for n in os.listdir(k) if n.startswith("ckpt-"))
        self.assertEqual(periodic, ["ckpt-10.h5", "ckpt-8.h5"])
        with open(os.path.join(k, "ckpt.h5"), "rb") as f, open(os.path.join(k, "ckpt-10.h5"), "rb") as g:
            self.assertEqual(f.read(), g.read())
        self.assertEqual(robutil.checkpoint_step(os.path.join(k, "ckpt-8.h5")), 8)
        # The older one resumes, in place, to the same end state.
        robutil.run(TAPEGPT, "train", "--resume", os.path.join(k, "ckpt-8.h5"), "--threads", "2")
        self.assertEqual(robutil.checkpoint_step(os.path.join(k, "ckpt.h5")), 10)
        # A truncated ckpt.h5 (and ckpt-10.h5, the same file) does not stop
        # a resume from ckpt-8.h5 in place: that is what --keep is for.
        with open(os.path.join(k, "ckpt.h5"), "r+b") as f:
            f.truncate(1000)
        robutil.run(TAPEGPT, "train", "--resume", os.path.join(k, "ckpt-8.h5"), "--max-steps", "12",
                    "--threads", "2")
        self.assertEqual(robutil.checkpoint_step(os.path.join(k, "ckpt.h5")), 12)
        self.assertEqual(sorted(n for n in os.listdir(k) if n.startswith("ckpt-")), ["ckpt-10.h5", "ckpt-12.h5"])
        none = self.new_run("keep0", 4, "--ckpt-interval", "1", "--keep", "0")
        self.assertEqual(sorted(n for n in os.listdir(none) if n.endswith(".h5")), ["best.h5", "ckpt.h5"])


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    robutil.require_tools()
    unittest.main(verbosity=2)
