#!/usr/bin/python3
# `tapegpt train --shard-optimizer` under mpirun (Note [Sharded optimizer
# state] in train/distributed/optimizer_shard.h): each rank keeps the AdamW
# moments of a slice of the parameters, and the run is bit-identical to the
# unsharded one with the same ranks; its checkpoints hold whole moments, so
# it resumes sharded, unsharded or in one process, and one-process
# checkpoints resume sharded.
"""Run by CTest as: test_shard_optimizer.py PATH/TO/tapegpt PATH/TO/mpirun"""
import json
import os
import subprocess
import sys
import unittest

import mpiutil
from mpiutil import robutil
import no_skip  # tests/support, on sys.path through robutil
import test_data_parallel

TAPEGPT = MPIRUN = None
STEPS = 20


# Slices are whole chunks of the gradient norm's sum, 16384 floats for any
# model under 67 M parameters (kernels::sum_squares_chunk): this model (about
# 110 K parameters) gives every one of 2 or 3 ranks a slice of its own.
CHUNK = 16384
MODEL = {"--n-layer": "2", "--n-embd": "64"}


class ShardOptimizer(test_data_parallel.Runs):
    def flags(self, sampler, accum, steps=STEPS):
        flags = super().flags(sampler, accum, steps)
        for name, value in MODEL.items():
            flags[flags.index(name) + 1] = value
        return flags

    def assert_every_rank_owns_a_slice(self, out, n):
        state = robutil.checkpoint_state(os.path.join(out, "ckpt.h5"), per_dataset=True)
        total = sum(len(raw) // 4 for name, raw in state.items() if name.startswith("/model/"))
        slice_ = -(-(-(-total // n)) // CHUNK) * CHUNK
        self.assertLess((n - 1) * slice_, total, f"the last of {n} ranks would own no parameter")

    def run_once(self, n, sharded, accum=2, extra=(), steps=STEPS):
        """A whole run of `steps` steps (once per configuration)."""
        key = (n, sharded, accum, tuple(extra), steps)
        if key not in self.runs:
            name = f"run-{n}-{'sharded' if sharded else 'whole'}-{accum}-{steps}{''.join(extra)}"
            out = os.path.join(self.tmp, name)
            self.train(n, out, [*self.flags("random", accum, steps), *(["--shard-optimizer"] if sharded else []),
                                *extra])
            self.runs[key] = out
        return self.runs[key]

    def test_two_ranks_sharded_equal_unsharded_bit_for_bit(self):
        # The gradients reduce-scattered (a + b) as the all-reduce sums them,
        # the norm from the ranks' partials in the unsharded order.
        self.assert_every_rank_owns_a_slice(self.run_once(2, True), 2)
        self.assert_identical(self.run_once(2, False), self.run_once(2, True))

    def test_two_ranks_sharded_without_overlap_equal_unsharded_bit_for_bit(self):
        self.assert_identical(self.run_once(2, False), self.run_once(2, True, extra=("--no-overlap",)))

    def test_two_ranks_sharded_bf16_equal_unsharded_bit_for_bit(self):
        # In a bf16 run the next forward reads the weights' bf16 copies: each
        # rank's update writes its own slice's, and the slices the others
        # gathered must be rounded into theirs (OptimizerShard::update).
        p = subprocess.run([TAPEGPT, "bench", "--bf16-rate", "--json"], capture_output=True, text=True, timeout=120)
        isa = json.loads(p.stdout)["dnnl_isa"]
        if isa in ("none", "avx2", "avx", "sse41"):
            reason = f"oneDNN has no bf16 matmul here ({isa}): --precision bf16 cannot run"
            if no_skip.strict():
                self.fail(reason + " (TAPEGPT_NO_SKIP=1)")
            self.skipTest(reason)
        bf16 = ("--precision", "bf16")
        self.assert_identical(self.run_once(2, False, extra=bf16), self.run_once(2, True, extra=bf16))

    def test_three_ranks_uneven_slices_equal_unsharded(self):
        # The last slice is shorter than the others. At three ranks the two
        # runs add each element's three gradients in another order (Note
        # [Ring sums]: the reduce-scatter's parts are the ranks' slices, the
        # all-reduce's are a third of each bucket), so Note [Data
        # parallelism]'s tolerance, over the first 10 steps: step 16 of this
        # tiny run is a spike of the gradient norm that turns the last bits
        # of any other order into 0.1-0.4% (the unsharded 3-rank run differs
        # from the one-process run by 0.13% there too). A wrong slice would
        # change step 2 by far more.
        self.assert_every_rank_owns_a_slice(self.run_once(3, True, accum=3, steps=10), 3)
        self.assertEqual(mpiutil.run_difference(self.run_once(3, False, accum=3, steps=10),
                                                self.run_once(3, True, accum=3, steps=10)), "")

    def test_sharded_periodic_checkpoints_hold_the_whole_moments(self):
        # --keep: each save gathers both moments on rank 0 (Note [Sharded
        # optimizer state]); the periodic file at the last step is the final one.
        out = self.run_once(2, True, extra=("--ckpt-interval", "10", "--keep", "2"))
        final = robutil.checkpoint_state(os.path.join(out, "ckpt.h5"))
        periodic = robutil.checkpoint_state(os.path.join(out, f"ckpt-{STEPS}.h5"))
        self.assertEqual(robutil.state_difference(final, periodic), "")
        self.assertTrue(os.path.exists(os.path.join(out, f"ckpt-{STEPS // 2}.h5")))
        self.assert_identical(self.run_once(2, False), out)

    def resume_across(self, first, then):
        """STEPS/2 steps as `first`, resumed as `then` to STEPS; each is
        (processes, sharded)."""
        name = "-".join(f"{n}{'s' if s else 'w'}" for n, s in (first, then))
        out = os.path.join(self.tmp, f"resume-{name}")
        self.train(first[0], out, [*self.flags("random", 2, steps=STEPS // 2), *(["--shard-optimizer"] if first[1] else [])])
        ckpt = os.path.join(out, "ckpt.h5")
        self.assertEqual(robutil.checkpoint_step(ckpt), STEPS // 2)
        self.train(then[0], out, ["--resume", ckpt, "--max-steps", str(STEPS), "--threads", "1",
                                  *(["--shard-optimizer"] if then[1] else [])])
        return out

    def test_sharded_resume_with_the_same_ranks_is_bit_exact(self):
        self.assert_identical(self.run_once(2, True), self.resume_across((2, True), (2, True)))

    def test_sharded_then_unsharded_with_the_same_ranks_is_bit_exact(self):
        self.assert_identical(self.run_once(2, False), self.resume_across((2, True), (2, False)))

    def test_sharded_checkpoint_resumes_in_one_process(self):
        # Two ranks against one process: Note [Data parallelism]'s tolerance.
        self.assertEqual(mpiutil.run_difference(self.run_once(1, False), self.resume_across((2, True), (1, False))), "")

    def test_one_process_checkpoint_resumes_sharded(self):
        self.assertEqual(mpiutil.run_difference(self.run_once(1, False), self.resume_across((1, False), (2, True))), "")

    def test_help_says_off_by_default(self):
        p = subprocess.run([TAPEGPT, "train", "--help"], capture_output=True, text=True, timeout=60)
        text = " ".join(p.stdout.split())  # cxxopts wraps the help
        self.assertIn("--shard-optimizer", text)
        self.assertIn("off by default", text)


if __name__ == "__main__":
    TAPEGPT = test_data_parallel.TAPEGPT = os.path.abspath(sys.argv.pop(1))
    MPIRUN = test_data_parallel.MPIRUN = sys.argv.pop(1)
    robutil.require_tools()
    unittest.main(verbosity=2)
