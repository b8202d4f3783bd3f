#!/usr/bin/python3
# Data parallelism between test hosts: each rank in a network namespace of
# its own, the ranks joined by rate-limited links (netns.py), talking TCP as
# on separate machines. The run equals the one-process run as on one host;
# a link taken down or a rank stopped mid-run ends the job with one line
# naming the rank, and the last checkpoint resumes exactly; a --budget job
# makes one plan for both hosts and ends within its budget.
"""Run by CTest (as root) as: test_netns.py PATH/TO/tapegpt PATH/TO/mpirun"""
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest

import mpiutil
import netns
import test_data_parallel
import test_faults
from mpiutil import robutil
from netns import TestHosts

sys.path.insert(0, os.path.join(robutil.REPO, "tests", "support"))
import no_skip  # noqa: E402
import testutil  # noqa: E402

# Short enough for a quick test, far above a tiny-model step (milliseconds).
STALL_TIMEOUT = ["--stall-timeout", "5"]


class OnHosts:
    """Mixed into a test class: two test hosts for the whole class, removed
    whatever happens, and any process a failed case left on them killed."""

    @classmethod
    def setUpClass(cls):
        cls.hosts = TestHosts(2).__enter__()
        try:
            super().setUpClass()
        except BaseException:
            cls.hosts.close()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls.hosts.close()

    def tearDown(self):
        self.hosts.kill_processes()  # none, unless a run failed


class OverNamespaces(OnHosts, test_data_parallel.DataParallel):
    """test_data_parallel's checks, with mpirun launching onto the hosts."""

    def mpirun(self, n, args, mca=()):
        self.assertEqual((n, mca), (2, ()), "the hosts run 2 ranks over TCP")
        return self.hosts.mpirun_cmd(test_data_parallel.MPIRUN, test_data_parallel.TAPEGPT, *args)


class FaultsOverNamespaces(OnHosts, test_faults.Faults):
    """A dead link and a stopped rank, on the hosts."""

    def tearDown(self):
        super().tearDown()
        self.hosts.set_link(1, True)  # a case may have taken it down

    def mpirun(self, *args):
        return self.hosts.mpirun_cmd(test_faults.MPIRUN, test_faults.TAPEGPT, "train", *args)

    def finish(self, proc):
        """test_faults' finish, except that a job still running after
        ENDS_WITHIN_S is ended by killing everything in the hosts: mpirun
        alone would leave its ranks holding the output pipes."""
        t0 = time.time()
        try:
            stdout, stderr = proc.communicate(timeout=test_faults.ENDS_WITHIN_S)
        except subprocess.TimeoutExpired:
            self.hosts.kill_processes()
            _, stderr = proc.communicate(timeout=30)
            self.fail(f"the job still ran {test_faults.ENDS_WITHIN_S} s after the fault:\n{stderr}")
        return proc.returncode, stdout, stderr, time.time() - t0

    def rank_1_process(self):
        """The pid of rank 1's tapegpt (in host 1)."""
        for pid in self.hosts.pids(1):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = f.read().split(b"\0")
                exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
            except OSError:
                continue
            if exe == "tapegpt" and b"OMPI_COMM_WORLD_RANK=1" in env:
                return pid
        self.fail("rank 1's tapegpt is not running in host 1")

    def the_one_error_line(self, stderr):
        lines = test_faults.error_lines(stderr)
        self.assertEqual(len(lines), 1, stderr)
        self.assertRegex(lines[0], r"rank 1 did not join the other ranks' collective within 5 s", stderr)
        return lines[0]

    def test_a_link_down_ends_the_job_and_the_checkpoint_resumes_exactly(self):
        flags = [*self.flags, *STALL_TIMEOUT, "--ckpt-interval", "10", "--lr-decay-steps", str(test_faults.STEPS)]
        out = os.path.join(self.tmp, "link-down")
        proc = self.start_and_wait(self.mpirun(*flags, "--max-steps", "100000", "--out", out), out, 30)
        self.hosts.set_link(1, False)
        code, _, stderr, seconds = self.finish(proc)  # fails past test_faults.ENDS_WITHIN_S
        self.assertNotEqual(code, 0)
        line = self.the_one_error_line(stderr)
        ckpt = os.path.join(out, "ckpt.h5")
        step = robutil.checkpoint_step(ckpt)
        self.assertGreaterEqual(step, 10)
        self.assertEqual(robutil.temp_files(out), [])
        print(f"  ended {seconds:.1f} s after the link went down, checkpoint at step {step}: {line}", flush=True)

        # Host 1's orted and rank never heard of the end: the link was down.
        self.hosts.kill_processes()
        self.hosts.set_link(1, True)
        end = str(step + 10)
        subprocess.run(self.mpirun("--resume", ckpt, "--max-steps", end, "--threads", "1"), check=True,
                       capture_output=True, env=mpiutil.ENV, timeout=300)
        ref = os.path.join(self.tmp, "link-up")
        subprocess.run(self.mpirun(*flags, "--max-steps", end, "--out", ref), check=True, capture_output=True,
                       env=mpiutil.ENV, timeout=300)
        self.assertEqual(robutil.state_difference(robutil.checkpoint_state(os.path.join(ref, "ckpt.h5")),
                                                  robutil.checkpoint_state(ckpt)), "")
        self.assertEqual(mpiutil.train_rows(os.path.join(ref, "metrics.jsonl")),
                         mpiutil.train_rows(os.path.join(out, "metrics.jsonl")))

    def test_a_stopped_rank_is_named(self):
        out = os.path.join(self.tmp, "stopped")
        proc = self.start_and_wait(self.mpirun(*self.flags, *STALL_TIMEOUT, "--max-steps", "100000",
                                               "--ckpt-interval", "10", "--out", out), out, 20)
        os.kill(self.rank_1_process(), signal.SIGSTOP)
        code, _, stderr, seconds = self.finish(proc)
        self.assertNotEqual(code, 0)
        line = self.the_one_error_line(stderr)
        self.assertGreaterEqual(robutil.checkpoint_step(os.path.join(out, "ckpt.h5")), 10)
        print(f"  ended {seconds:.1f} s after SIGSTOP: {line}", flush=True)


class BudgetOverNamespaces(OnHosts, unittest.TestCase):
    """--budget under mpirun (Note [Budget everywhere] in train/budget/plan.h)."""

    BUDGET_S = 25

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-netns-budget-")
        cls.data = robutil.prepare_tiny(test_data_parallel.TAPEGPT, cls.tmp, chars=40000)

    def test_two_ranks_make_one_plan_and_end_within_the_budget(self):
        out = os.path.join(self.tmp, "budget")
        cmd = self.hosts.mpirun_cmd(test_data_parallel.MPIRUN, test_data_parallel.TAPEGPT, "train", "--data",
                                    self.data, "--out", out, "--budget", f"{self.BUDGET_S}s", "--threads", "1")
        start = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, env=mpiutil.ENV, timeout=300)
        wall = time.monotonic() - start
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # One plan, printed once (rank 0 speaks for the job), for both ranks.
        self.assertEqual(p.stdout.count("budget: model: "), 1, p.stdout)
        self.assertIn("budget: processes: 2 (mpirun), each 1 micro-batch a step", p.stdout)
        self.assertIn("data parallel: 2 processes", p.stdout)
        self.assertIn("done: ", p.stdout)
        # mpirun's start over the hosts, then the budget's 10%.
        self.assertLess(wall, self.BUDGET_S * 1.10 + 5, p.stdout)
        self.assertGreater(wall, self.BUDGET_S * 0.6, "the plan left most of the budget unused:\n" + p.stdout)
        # One metrics file, written by rank 0, every step by both ranks; the
        # last step is the planned (or revised) end, where the schedule ends.
        self.assertEqual(sorted(f for f in os.listdir(out) if f.endswith(".jsonl")), ["metrics.jsonl"])
        with open(os.path.join(out, "metrics.jsonl")) as f:
            rows = [json.loads(line) for line in f]
        self.assertEqual(sum(1 for r in rows if "plan" in r), 1)
        steps = [r for r in rows if "loss" in r]
        self.assertTrue(steps and all(r["world_size"] == 2 for r in steps))
        planned = int(re.search(r"budget: steps: (\d+) ", p.stdout).group(1))
        revised = [r["max_steps"] for r in rows if "revised_at_step" in r]
        self.assertEqual(steps[-1]["step"], revised[-1] if revised else planned)
        self.assertLess(steps[-1]["elapsed_s"], self.BUDGET_S)


if __name__ == "__main__":
    test_data_parallel.TAPEGPT = test_faults.TAPEGPT = os.path.abspath(sys.argv.pop(1))
    test_data_parallel.MPIRUN = test_faults.MPIRUN = sys.argv.pop(1)
    robutil.require_tools()
    why = netns.unavailable()
    if why:
        no_skip.skip_or_fail(why)
    suite = unittest.TestSuite()
    for case in ("test_two_ranks_equal_one_process_random_two_micro_batches_each",
                 "test_two_ranks_then_one_process",
                 "test_resume_with_the_same_ranks_is_bit_exact"):
        suite.addTest(OverNamespaces(case))
    for case in ("test_a_link_down_ends_the_job_and_the_checkpoint_resumes_exactly",
                 "test_a_stopped_rank_is_named"):
        suite.addTest(FaultsOverNamespaces(case))
    suite.addTest(BudgetOverNamespaces("test_two_ranks_make_one_plan_and_end_within_the_budget"))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)
