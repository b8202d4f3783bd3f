#!/usr/bin/python3
# SIGTERM (what `kill`, systemd and batch schedulers send) stops a run
# gracefully: the step finishes, a checkpoint is written, exit 0, and the
# resumed run ends bit-identical to one never stopped.
"""Run by CTest as: test_graceful_stop.py PATH/TO/tapegpt

SIGINT is covered by tests/train/test_cli.py; this file covers SIGTERM, a
second signal while the first is being handled, and a stop right at the
first step.
"""
import os
import signal
import subprocess
import sys
import time
import unittest

import robutil
import testutil  # tests/support, on sys.path through robutil

TAPEGPT = None
STEPS = 40


class GracefulStop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-term-")
        cls.data = robutil.prepare_tiny(TAPEGPT, cls.tmp)
        cls.flags = ["--data", cls.data, *robutil.TINY_MODEL, "--max-steps", str(STEPS),
                     "--eval-interval", "0", "--ckpt-interval", "0", "--lr-decay-steps", str(STEPS),
                     "--dropout", "0.1", "--threads", "2"]
        cls.ref = os.path.join(cls.tmp, "reference")
        robutil.run(TAPEGPT, "train", *cls.flags, "--out", cls.ref)
        cls.ref_state = robutil.checkpoint_state(os.path.join(cls.ref, "ckpt.h5"))

    def stop_at(self, out, min_step, signals):
        """Starts the run, waits until min_step steps are logged, sends the
        signals; returns (stdout, step saved in ckpt.h5)."""
        os.makedirs(out)
        proc = subprocess.Popen([TAPEGPT, "train", *self.flags, "--out", out],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        path = os.path.join(out, "metrics.jsonl")
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            if min_step == 0 and os.path.exists(path) and os.path.getsize(path) > 0:
                break  # the loop is running (the handler is installed before step 1)
            if os.path.exists(path) and robutil.line_count(path) >= min_step > 0:
                break
            time.sleep(0.002)
        for s in signals:
            proc.send_signal(s)
        stdout, stderr = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, stderr)
        self.assertIn("Resume with: tapegpt train --resume", stdout)
        self.assertEqual(stderr.strip().count("\n"), 0, f"stderr should be quiet: {stderr!r}")
        self.assertEqual(robutil.temp_files(out), [])
        ckpt = os.path.join(out, "ckpt.h5")
        step = robutil.checkpoint_step(ckpt)
        rows = robutil.last_train_rows(path)
        self.assertEqual(step, max(rows, default=0), "checkpoint step is the last logged step")
        self.assertLess(step, STEPS, "stopped early")
        return stdout, step

    def finish_and_compare(self, out):
        ckpt = os.path.join(out, "ckpt.h5")
        robutil.run(TAPEGPT, "train", "--resume", ckpt, "--threads", "2")
        self.assertEqual(robutil.state_difference(self.ref_state, robutil.checkpoint_state(ckpt)), "")
        want = robutil.last_train_rows(os.path.join(self.ref, "metrics.jsonl"))
        self.assertEqual(robutil.last_train_rows(os.path.join(out, "metrics.jsonl")), want)

    def test_sigterm_saves_and_resumes_bit_exactly(self):
        out = os.path.join(self.tmp, "term")
        self.stop_at(out, 10, [signal.SIGTERM])
        self.finish_and_compare(out)

    def test_a_second_signal_is_still_graceful(self):
        # An impatient user pressing Ctrl-C again, or a scheduler sending
        # SIGTERM then SIGINT: still one checkpoint and exit 0.
        out = os.path.join(self.tmp, "twice")
        self.stop_at(out, 5, [signal.SIGTERM, signal.SIGINT, signal.SIGTERM])
        self.finish_and_compare(out)

    def test_sigterm_of_a_resumed_run(self):
        out = os.path.join(self.tmp, "resumed")
        _, step = self.stop_at(out, 5, [signal.SIGTERM])
        ckpt = os.path.join(out, "ckpt.h5")
        proc = subprocess.Popen([TAPEGPT, "train", "--resume", ckpt, "--threads", "2"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        path = os.path.join(out, "metrics.jsonl")
        lines = robutil.line_count(path)
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None and robutil.line_count(path) < lines + 3:
            time.sleep(0.002)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, stderr)
        if robutil.checkpoint_step(ckpt) < STEPS:  # else it finished before the signal
            self.assertIn("Resume with: tapegpt train --resume", stdout)
        self.assertGreater(robutil.checkpoint_step(ckpt), step)
        self.finish_and_compare(out)


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    robutil.require_tools()
    unittest.main(verbosity=2)
