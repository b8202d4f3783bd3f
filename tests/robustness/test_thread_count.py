#!/usr/bin/python3
# The same run with --threads 1, 2 and 3 gives bit-identical weights,
# moments, losses and validation losses, so a run resumed on a machine with
# another core count continues exactly.
"""Run by CTest as: test_thread_count.py PATH/TO/tapegpt

The model is just large enough that every kernel takes its OpenMP path
(N·C = 65536 rows×channels, N·V > 16384, B·NH = 32, 400K parameters);
tests/robustness/test_kernel_threads.cpp checks the kernels one by one.
"""
import json
import os
import sys
import unittest

import robutil
import testutil  # tests/support, on sys.path through robutil

TAPEGPT = None
MEDIUM = ["--n-layer", "2", "--n-head", "4", "--n-embd", "128", "--block-size", "64", "--batch-size", "8",
          "--eval-interval", "2", "--eval-steps", "2", "--max-steps", "4", "--dropout", "0.1", "--grad-accum", "2"]


class ThreadCount(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-threads-")
        cls.data = robutil.prepare_tiny(TAPEGPT, cls.tmp)

    def test_training_and_eval_do_not_depend_on_the_thread_count(self):
        self.check_thread_counts("fp32")

    def test_in_bf16_too(self):
        # oneDNN's matmuls run on one thread per shape-fixed piece (Note
        # [bf16 matmuls]), so the thread count changes no bits here either.
        self.check_thread_counts("bf16")

    def check_thread_counts(self, precision):
        results = {}
        for threads in (1, 2, 3):
            out = os.path.join(self.tmp, f"{precision}-t{threads}")
            robutil.run(TAPEGPT, "train", "--data", self.data, "--out", out, *MEDIUM, "--threads", str(threads),
                        "--precision", precision)
            ckpt = os.path.join(out, "ckpt.h5")
            ev = json.loads(robutil.run(TAPEGPT, "eval", "--ckpt", ckpt, "--tokens",
                                        os.path.join(self.data, "val.bin"), "--json", "--batch-size", "8",
                                        "--threads", str(threads), "--precision", precision).stdout)
            m = os.path.join(out, "metrics.jsonl")
            results[threads] = (robutil.checkpoint_state(ckpt), robutil.last_train_rows(m),
                                robutil.last_eval_rows(m), ev["loss"])
        state1, train1, eval1, loss1 = results[1]
        for threads in (2, 3):
            with self.subTest(threads=threads):
                state, train, evals, loss = results[threads]
                self.assertEqual(robutil.state_difference(state1, state), "")
                self.assertEqual(train, train1)
                self.assertEqual(evals, eval1)
                self.assertEqual(loss, loss1)

    # Weight gradients summing over N = B·T = 500 rows: OpenBLAS's threaded
    # sgemm split such K differently from its single-threaded one until
    # matmul.cpp fixed the split (Note [Thread-count-independent sgemm]).
    def test_odd_row_count(self):
        states = []
        for threads in (1, 2):
            out = os.path.join(self.tmp, f"odd{threads}")
            robutil.run(TAPEGPT, "train", "--data", self.data, "--out", out, "--n-layer", "1", "--n-head", "2",
                        "--n-embd", "64", "--block-size", "100", "--batch-size", "5", "--eval-interval", "0",
                        "--eval-steps", "1", "--max-steps", "2", "--threads", str(threads))
            states.append(robutil.checkpoint_state(os.path.join(out, "ckpt.h5")))
        self.assertEqual(robutil.state_difference(*states), "")


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    robutil.require_tools()
    unittest.main(verbosity=2)
