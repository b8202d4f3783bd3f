#!/usr/bin/python3
# Faults in a data-parallel run end every process within seconds with one
# clear line naming the rank and the cause, never a hang; the last checkpoint
# stays intact and resumes; SIGINT to mpirun stops like a one-process run.
"""Run by CTest as: test_faults.py PATH/TO/tapegpt PATH/TO/mpirun

Open MPI's mpirun answers SIGINT (and SIGTERM) by sending SIGTERM to every
rank and SIGKILL about a second later (odls_base_sigkill_timeout): the ranks
agree to stop after the step in progress, rank 0 saves, and the tiny model's
steps and save fit well inside that second. A rank that dies makes mpirun
end the job and say which rank died of what.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unittest

import mpiutil
from mpiutil import robutil
import testutil  # tests/support, on sys.path through robutil

TAPEGPT = MPIRUN = None
STEPS = 400
ENDS_WITHIN_S = 30


def error_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("tapegpt train: error:")]


class Faults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-mpi-faults-")
        cls.data = robutil.prepare_tiny(TAPEGPT, cls.tmp)
        cls.flags = ["--data", cls.data, *robutil.TINY_MODEL, "--grad-accum", "2", "--dropout", "0.1",
                     "--max-steps", str(STEPS), "--eval-interval", "0", "--threads", "1"]

    def mpirun(self, *args):
        return mpiutil.mpirun_cmd(MPIRUN, 2, TAPEGPT, "train", *args)

    def start_and_wait(self, cmd, out, min_rows):
        """Starts cmd; returns it once metrics.jsonl has min_rows rows."""
        os.makedirs(out)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=mpiutil.ENV)
        path = os.path.join(out, "metrics.jsonl")
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None and robutil.line_count(path) < min_rows:
            time.sleep(0.005)
        self.assertIsNone(proc.poll(), "the run ended before the fault was injected")
        return proc

    def finish(self, proc):
        """(exit code, stdout, stderr, seconds to end) of a process told to stop."""
        t0 = time.time()
        try:
            stdout, stderr = proc.communicate(timeout=ENDS_WITHIN_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            self.fail(f"the job still ran {ENDS_WITHIN_S} s after the fault")
        return proc.returncode, stdout, stderr, time.time() - t0

    def test_sigkill_of_one_rank_ends_the_job_and_the_checkpoint_resumes(self):
        out = os.path.join(self.tmp, "killed")
        proc = self.start_and_wait(self.mpirun(*self.flags, "--max-steps", "100000", "--ckpt-interval", "10",
                                               "--out", out), out, 30)
        rank1 = None
        for pid in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split():
            with open(f"/proc/{pid}/environ", "rb") as f:
                if b"OMPI_COMM_WORLD_RANK=1" in f.read().split(b"\0"):
                    rank1 = int(pid)
        self.assertIsNotNone(rank1, "rank 1 not found among mpirun's children")
        os.kill(rank1, signal.SIGKILL)
        code, _, stderr, _ = self.finish(proc)
        self.assertNotEqual(code, 0)
        self.assertTrue(re.search(r"rank 1 .*signal 9", stderr), stderr)
        ckpt = os.path.join(out, "ckpt.h5")
        step = robutil.checkpoint_step(ckpt)
        self.assertGreaterEqual(step, 10)
        robutil.run(TAPEGPT, "train", "--resume", ckpt, "--max-steps", str(step + 5), "--threads", "1",
                    env=mpiutil.ENV)
        self.assertEqual(robutil.checkpoint_step(ckpt), step + 5)

    def test_sigint_to_mpirun_finishes_the_step_saves_and_resumes_bit_exactly(self):
        # A run far longer than the test (its schedule fixed by
        # --lr-decay-steps), stopped, resumed for 20 more steps, against one
        # run straight to that step.
        flags = [*self.flags, "--ckpt-interval", "0", "--lr-decay-steps", str(STEPS)]
        out = os.path.join(self.tmp, "interrupted")
        proc = self.start_and_wait(self.mpirun(*flags, "--max-steps", "1000000", "--out", out), out, 20)
        proc.send_signal(signal.SIGINT)
        _, stdout, stderr, seconds = self.finish(proc)
        # mpirun itself exits 1 after a signal, whatever the ranks did.
        self.assertIn("Resume with: tapegpt train --resume", stdout, stderr)
        self.assertEqual(error_lines(stderr), [])
        ckpt = os.path.join(out, "ckpt.h5")
        step = robutil.checkpoint_step(ckpt)
        self.assertEqual(step, max(robutil.last_train_rows(os.path.join(out, "metrics.jsonl"))))
        self.assertEqual(robutil.temp_files(out), [])
        end = str(step + 20)
        subprocess.run(mpiutil.mpirun_cmd(MPIRUN, 2, TAPEGPT, "train", "--resume", ckpt, "--max-steps", end,
                                          "--threads", "1"),
                       check=True, capture_output=True, env=mpiutil.ENV, timeout=300)
        ref = os.path.join(self.tmp, "uninterrupted")
        subprocess.run(self.mpirun(*flags, "--max-steps", end, "--out", ref), check=True,
                       capture_output=True, env=mpiutil.ENV, timeout=300)
        self.assertEqual(robutil.state_difference(robutil.checkpoint_state(os.path.join(ref, "ckpt.h5")),
                                                  robutil.checkpoint_state(ckpt)), "")
        print(f"  stopped at step {step}, {seconds:.1f} s after SIGINT", flush=True)

    def mpmd(self, rank1_data, out):
        """Rank 0 on the good data, rank 1 on rank1_data (mpirun's A : B form)."""
        rank0 = ["-np", "1", TAPEGPT, "train", *self.flags, "--out", out]
        rank1 = ["-np", "1", TAPEGPT, "train", *self.flags, "--out", out]
        rank1[rank1.index(self.data)] = rank1_data
        cmd = [MPIRUN, *mpiutil.LOCAL, *rank0, ":", *rank1]
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, env=mpiutil.ENV, timeout=120)
        self.assertLess(time.time() - t0, ENDS_WITHIN_S)
        self.assertNotEqual(p.returncode, 0)
        return p

    def test_other_data_on_one_rank_is_refused_by_rank_0(self):
        other = os.path.join(self.tmp, "other")
        shutil.copytree(self.data, other)
        with open(os.path.join(other, "train.bin"), "r+b") as f:  # one token changed, same size
            f.seek(-4, os.SEEK_END)
            f.write((1).to_bytes(4, "little"))
        p = self.mpmd(other, os.path.join(self.tmp, "other-run"))
        lines = error_lines(p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("rank 1 sees other token files", lines[0])

    def test_unreadable_data_on_one_rank_names_that_rank(self):
        broken = os.path.join(self.tmp, "broken")
        shutil.copytree(self.data, broken)
        with open(os.path.join(broken, "val.bin"), "r+b") as f:
            f.truncate(10)
        p = self.mpmd(broken, os.path.join(self.tmp, "broken-run"))
        lines = error_lines(p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("rank 1: ", lines[0])
        self.assertIn("val.bin", lines[0])

    def test_grad_accum_not_a_multiple_of_the_ranks(self):
        p = subprocess.run(self.mpirun(*self.flags, "--grad-accum", "3", "--out", os.path.join(self.tmp, "k3")),
                           capture_output=True, text=True, env=mpiutil.ENV, timeout=120)
        self.assertNotEqual(p.returncode, 0)
        lines = error_lines(p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("--grad-accum 3 is not a multiple of the 2 processes", lines[0])

    def test_divergence_stops_every_rank_with_one_line(self):
        out = os.path.join(self.tmp, "diverged")
        p = subprocess.run(self.mpirun(*self.flags, "--lr", "1e4", "--warmup", "0", "--grad-clip", "0",
                                       "--ckpt-interval", "1", "--out", out),
                           capture_output=True, text=True, env=mpiutil.ENV, timeout=120)
        self.assertNotEqual(p.returncode, 0)
        lines = error_lines(p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        m = re.search(r"non-finite at step (\d+)", lines[0])
        self.assertTrue(m, lines[0])
        self.assertEqual(robutil.checkpoint_step(os.path.join(out, "ckpt.h5")), int(m.group(1)) - 1)


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    MPIRUN = sys.argv.pop(1)
    robutil.require_tools()
    unittest.main(verbosity=2)
