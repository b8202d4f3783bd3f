#!/usr/bin/python3
# Data-parallel scaling to N machines at a link rate, predicted from figures
# measured by scripts/bench_mpi.sh (nothing here is measured). One rank per
# machine; each step every rank runs K micro-batches of its own, then the
# gradients (G bytes) are summed by a ring all-reduce, which moves
# 2(N-1)/N x G through each machine's link at `efficiency` x the link rate.
# Each of the model's buckets also pays the ring's 2(N-1) hops of latency.
# The overlap (Note [All-reduce overlap]) hides at most the part of the
# transfer that fits in the last micro-batch's backward (2/3 of its
# compute), and of that only the share bench_mpi measured it to hide (the
# embeddings' bytes are final only when the backward ends, and Open MPI
# moves messages only between tape entries).
"""Usage: scaling_table.py --model NAME --compute-s C --tokens T --grad-mib G --hidden H --efficiency E
  C: one micro-batch's forward+backward seconds on one machine; T: its tokens;
  G: gradient MiB; H: share of the transfer the overlap hid in bench_mpi; E: bus bandwidth / link rate;
  --buckets: all-reduces per step; --latency-us: one hop (an assumption, not measured here)."""
import argparse


def step_seconds(n, gbit, k, a):
    comm = 0.0
    if n > 1:
        comm = 2 * (n - 1) / n * a.grad_mib * 2**20 * 8 / (a.efficiency * gbit * 1e9)
        comm += a.buckets * 2 * (n - 1) * a.latency_us * 1e-6
    window = 2 / 3 * a.compute_s  # the last micro-batch's backward
    exposed = max((1 - a.hidden) * comm, comm - window)
    return k * a.compute_s + exposed, comm, exposed


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--compute-s", type=float, required=True)
    p.add_argument("--tokens", type=int, required=True)
    p.add_argument("--grad-mib", type=float, required=True)
    p.add_argument("--hidden", type=float, required=True)
    p.add_argument("--efficiency", type=float, required=True)
    p.add_argument("--buckets", type=int, required=True)
    p.add_argument("--latency-us", type=float, default=50.0)
    a = p.parse_args()
    print(f"{a.model}: {a.grad_mib:,.0f} MiB of gradients, {a.tokens} tokens per micro-batch in "
          f"{a.compute_s * 1e3:,.0f} ms, overlap hides {a.hidden:.0%}, links at {a.efficiency:.0%} of their rate, "
          f"{a.buckets} buckets, {a.latency_us:g} us a hop")
    print("| machines | Gbit/s | all-reduce s | micro-batches per rank (global batch, tokens) | exposed s | "
          "step s | tokens/s | scaling efficiency | micro-batches per rank for >= 90% |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (8, 64):
        for gbit in (10, 100):
            need = next(k for k in range(1, 10**6)
                        if k * a.compute_s / step_seconds(n, gbit, k, a)[0] >= 0.9)
            for k in sorted({1, need}):
                step, comm, exposed = step_seconds(n, gbit, k, a)
                tokens_s = n * k * a.tokens / step
                eff = k * a.compute_s / step
                print(f"| {n} | {gbit} | {comm:.3f} | {k} ({n * k * a.tokens:,}) | {exposed:.3f} | {step:.2f} | "
                      f"{tokens_s:,.0f} | {eff:.0%} | {need} |")


if __name__ == "__main__":
    main()
