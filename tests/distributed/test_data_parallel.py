#!/usr/bin/python3
# `mpirun -np 2 tapegpt train` computes the run one process computes with the
# same global batch (Note [Data parallelism] in
# train/distributed/distributed.h), over shared memory and over TCP, and a
# run resumes with another process count.
"""Run by CTest as: test_data_parallel.py PATH/TO/tapegpt PATH/TO/mpirun"""
import json
import os
import subprocess
import sys
import unittest

import mpiutil
from mpiutil import robutil
import testutil  # tests/support, on sys.path through robutil

TAPEGPT = MPIRUN = None
STEPS = 20


class Runs(unittest.TestCase):
    """Training runs in one or more processes, on one tiny prepared corpus
    per class; test_shard_optimizer.py and test_netns.py build on it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-mpi-")
        cls.data = robutil.prepare_tiny(TAPEGPT, cls.tmp)
        cls.runs = {}

    def flags(self, sampler, accum, steps=STEPS):
        return ["--data", self.data, *robutil.TINY_MODEL, "--grad-accum", str(accum), "--sampler", sampler,
                "--dropout", "0.1", "--max-steps", str(steps), "--lr-decay-steps", str(STEPS),
                "--eval-interval", "0", "--ckpt-interval", "0", "--threads", "1",
                "--precision", "fp32"]  # the tolerances are float32's (on AMX auto would be bf16)

    def mpirun(self, n, args, mca=()):
        """The command line of tapegpt ARGS in n ranks on this machine
        (test_netns.py puts each on a test host of its own)."""
        return mpiutil.mpirun_cmd(MPIRUN, n, TAPEGPT, *args, mca=mca)

    def train(self, n, out, args, mca=()):
        """Runs tapegpt train in n processes (n = 1: no mpirun); returns stdout."""
        if n == 1:
            cmd = [TAPEGPT, "train", *args, "--out", out]
        else:
            cmd = self.mpirun(n, ["train", *args, "--out", out], mca)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=mpiutil.ENV)
        self.assertEqual(p.returncode, 0, f"{' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
        return p.stdout

    def assert_identical(self, a, b):
        """The two runs' last checkpoints and training rows, bit for bit."""
        self.assertEqual(robutil.state_difference(robutil.checkpoint_state(os.path.join(a, "ckpt.h5")),
                                                  robutil.checkpoint_state(os.path.join(b, "ckpt.h5"))), "")
        self.assertEqual(mpiutil.train_rows(os.path.join(a, "metrics.jsonl")),
                         mpiutil.train_rows(os.path.join(b, "metrics.jsonl")))


class DataParallel(Runs):
    def one_process(self, sampler, accum):
        """The one-process reference run (once per configuration)."""
        key = (sampler, accum)
        if key not in self.runs:
            out = os.path.join(self.tmp, f"one-{sampler}-{accum}")
            self.train(1, out, self.flags(sampler, accum))
            self.runs[key] = out
        return self.runs[key]

    def assert_same_run(self, reference, out):
        self.assertEqual(mpiutil.run_difference(reference, out), "")
        rel, key = mpiutil.worst_differences(reference, out)
        print(f"  {os.path.basename(out)}: tensors within {rel:.2g} of their largest value, "
              f"key bias within {key:.2g}", flush=True)

    def test_two_ranks_equal_one_process_sequential(self):
        out = os.path.join(self.tmp, "two-sequential")
        stdout = self.train(2, out, self.flags("sequential", 2))
        self.assertIn("data parallel: 2 processes", stdout)
        self.assert_same_run(self.one_process("sequential", 2), out)
        rows = robutil.metrics(os.path.join(out, "metrics.jsonl"))
        steps = [r for r in rows if "loss" in r]
        self.assertEqual({r["world_size"] for r in steps}, {2})
        self.assertTrue(all(r["allreduce_s"] >= 0 for r in steps))
        # Rank 0 alone printed: one "done" line.
        self.assertEqual(stdout.count("done:"), 1)

    def test_two_ranks_equal_one_process_random_two_micro_batches_each(self):
        out = os.path.join(self.tmp, "two-random")
        self.train(2, out, self.flags("random", 4))
        self.assert_same_run(self.one_process("random", 4), out)

    def test_over_tcp(self):
        # The transport between machines, here on loopback.
        out = os.path.join(self.tmp, "two-tcp")
        self.train(2, out, self.flags("random", 2), mca=("--mca", "btl", "tcp,self"))
        self.assert_same_run(self.one_process("random", 2), out)

    def test_overlapped_all_reduce_equals_the_blocking_one(self):
        # Note [All-reduce overlap]: buckets summed during the backward pass
        # give each element the same a + b as one sum after it (2 ranks).
        flags = [*self.flags("random", 4), "--n-layer", "3"]
        runs = []
        for name, extra in (("overlap", []), ("no-overlap", ["--no-overlap"])):
            out = os.path.join(self.tmp, name)
            self.train(2, out, [*flags, *extra])
            runs.append(out)
        self.assertEqual(robutil.state_difference(*[robutil.checkpoint_state(os.path.join(r, "ckpt.h5"))
                                                    for r in runs]), "")
        self.assertEqual(*[mpiutil.train_rows(os.path.join(r, "metrics.jsonl")) for r in runs])

    def test_one_process_rows_record_world_size_one(self):
        rows = robutil.metrics(os.path.join(self.one_process("random", 2), "metrics.jsonl"))
        self.assertEqual({(r["world_size"], r["allreduce_s"]) for r in rows if "loss" in r}, {(1, 0)})

    def resume_across(self, first_n, then_n):
        out = os.path.join(self.tmp, f"resume-{first_n}-{then_n}")
        self.train(first_n, out, self.flags("random", 2, steps=STEPS // 2))
        ckpt = os.path.join(out, "ckpt.h5")
        self.assertEqual(robutil.checkpoint_step(ckpt), STEPS // 2)
        self.train(then_n, out, ["--resume", ckpt, "--max-steps", str(STEPS), "--threads", "1"])
        return out

    def test_two_ranks_then_one_process(self):
        self.assert_same_run(self.one_process("random", 2), self.resume_across(2, 1))

    def test_one_process_then_two_ranks(self):
        self.assert_same_run(self.one_process("random", 2), self.resume_across(1, 2))

    def test_resume_with_the_same_ranks_is_bit_exact(self):
        whole = os.path.join(self.tmp, "two-whole")
        self.train(2, whole, self.flags("random", 2))
        self.assert_identical(whole, self.resume_across(2, 2))


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    MPIRUN = sys.argv.pop(1)
    robutil.require_tools()
    unittest.main(verbosity=2)
