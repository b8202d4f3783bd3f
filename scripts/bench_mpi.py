#!/usr/bin/python3
# Data-parallel training between two test hosts (tests/distributed/netns.py:
# one network namespace per rank, a veth link with a tc tbf rate limit, TCP
# as between machines) at several link rates, with and without the
# overlapped all-reduce and the sharded optimizer, on the demo model and on
# GPT-2 small. Prints, per run: global tokens/s, the median step and
# communication wait, the compute time, how much of the transfer the overlap
# hid, and each rank's peak RSS; per link rate, a bare MPI all-reduce of the
# gradients' size (scripts/allreduce_rate.py) and its bus bandwidth. Run by
# scripts/bench_mpi.sh (as root: namespaces need it).
"""Environment: MODELS ("demo gpt2"), RATES (Gbit/s; default per model), STEPS, MODES, TAPEGPT."""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "distributed"))
import netns  # noqa: E402

TAPEGPT = os.path.abspath(os.environ.get("TAPEGPT", os.path.join(REPO, "build", "tapegpt")))
MPIRUN = shutil.which("mpirun") or "mpirun"
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
SKIP = 2  # the first steps (first-touch of the arena, TCP slow start) are left out of the medians

# Each model: its tokenizer and flags. Both run one micro-batch per rank
# (--grad-accum 2 over 2 ranks), 1 thread per rank.
MODELS = {
    "demo": ("char", ["--batch-size", "8"]),  # the default model: 4 layers, 192 wide, T 128
    "gpt2": ("gpt2", ["--n-layer", "12", "--n-head", "12", "--n-embd", "768", "--block-size", "64",
                      "--batch-size", "2"]),
}
MODES = {  # name: extra flags
    "overlap": [],
    "no-overlap": ["--no-overlap"],
    "overlap+shard": ["--shard-optimizer"],
    "no-overlap+shard": ["--no-overlap", "--shard-optimizer"],
}

# The launched program: tapegpt as a child, then this rank's peak RSS (the
# child's maximum resident set, in KiB) into a file named by its rank.
RSS_WRAPPER = (
    "import os, resource, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[2:])\n"
    "kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "open(sys.argv[1] + os.environ['OMPI_COMM_WORLD_RANK'], 'w').write(str(kib))\n"
    "sys.exit(rc)\n")


def prepare(work, tokenizer):
    out = os.path.join(work, f"data-{tokenizer}")
    if not os.path.exists(out):
        subprocess.run([TAPEGPT, "prepare", "--input", os.path.join(REPO, "data", "tinyshakespeare.txt"),
                        "--out", out, "--tokenizer", tokenizer], check=True, capture_output=True)
    return out


def gradient_bytes(stdout):
    """The gradients' size from train's memory estimate line."""
    m = re.search(r"gradients ([0-9.]+) MiB", stdout)
    return float(m.group(1)) * 2**20 if m else float("nan")


def bare_allreduce_s(hosts, floats):
    """Median seconds of a bare all-reduce of `floats` float32s between the hosts."""
    cmd = hosts.mpirun_cmd(MPIRUN, sys.executable, os.path.join(REPO, "scripts", "allreduce_rate.py"), str(floats))
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=600)
    if p.returncode != 0:
        sys.exit(f"bench_mpi: {' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return float(p.stdout.split()[-1])


def run(hosts, work, model, rate, mode, steps):
    tokenizer, flags = MODELS[model]
    out = os.path.join(work, f"run-{model}-{rate}-{mode}")
    rss = os.path.join(work, f"rss-{model}-{rate}-{mode}-")
    wrapper = os.path.join(work, "rss.py")
    with open(wrapper, "w") as f:
        f.write(RSS_WRAPPER)
    args = ["train", "--data", prepare(work, tokenizer), "--out", out, *flags, "--grad-accum", "2",
            "--max-steps", str(steps), "--eval-interval", "0", "--eval-steps", "1", "--ckpt-interval", "0",
            "--keep", "0", "--threads", "1", *MODES[mode]]
    cmd = hosts.mpirun_cmd(MPIRUN, sys.executable, wrapper, rss, TAPEGPT, *args)
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=3600)
    if p.returncode != 0:
        sys.exit(f"bench_mpi: {' '.join(cmd)} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    rows = [json.loads(line) for line in open(os.path.join(out, "metrics.jsonl"))
            if '"loss"' in line and '"val_loss"' not in line][SKIP:]
    step_s = statistics.median(b["elapsed_s"] - a["elapsed_s"] for a, b in zip(rows, rows[1:]))
    wait_s = statistics.median(r["allreduce_s"] for r in rows)
    peaks = [int(open(rss + str(r)).read()) / 1024 for r in range(2)]
    shutil.rmtree(out, ignore_errors=True)
    return {"tokens_per_s": statistics.median(r["tokens_per_s"] for r in rows), "step_s": step_s,
            "wait_s": wait_s, "grad_bytes": gradient_bytes(p.stdout), "rss_mib": peaks}


def main():
    why = netns.unavailable()
    if why:
        sys.exit(f"bench_mpi: cannot make test hosts here: {why}")
    models = os.environ.get("MODELS", "demo gpt2").split()
    # Per model: the demo's compute and communication are about equal near 0.4 Gbit/s.
    default_rates = {"demo": "0.4 1 5 10", "gpt2": "1 5 10"}
    modes = os.environ.get("MODES", " ".join(MODES)).split()
    steps = int(os.environ.get("STEPS", "12"))
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"commit {commit}; {cpu}, {os.cpu_count()} cores; 2 ranks on 2 test hosts, 1 thread each; "
          f"{steps} steps, medians of steps {SKIP + 1}..{steps}")
    print("comm wait: the step's wait for the gradient sum (and, sharded, the weights' all-gather); compute: "
          "step - wait; bare all-reduce: MPI alone summing the gradients' bytes over the link, after a barrier; "
          "bus bandwidth: 2(N-1)/N x gradient bytes / bare all-reduce; hidden: 1 - wait / bare all-reduce")
    print("| model | Gbit/s | mode | tokens/s | step ms | comm wait ms | compute ms | bare all-reduce ms | "
          "bus Gbit/s | hidden | peak RSS rank 0 / 1 MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    work = tempfile.mkdtemp(prefix="tapegpt-bench-mpi-")
    try:
        for model in models:
            for rate in os.environ.get("RATES", default_rates[model]).split():
                # tbf's burst must hold a timer tick of the rate (about 10 ms here), or it caps the rate lower.
                burst = f"{max(256, int(float(rate) * 1e9 / 8 / 100 / 1024))}kb"
                with netns.TestHosts(2, rate=f"{rate}gbit", burst=burst) as hosts:
                    results = {mode: run(hosts, work, model, rate, mode, steps) for mode in modes}
                    grad_bytes = next(iter(results.values()))["grad_bytes"]
                    bare = bare_allreduce_s(hosts, int(grad_bytes // 4))
                bus = 2 * (2 - 1) / 2 * grad_bytes * 8 / bare / 1e9  # N = 2
                for mode, r in results.items():
                    compute = r["step_s"] - r["wait_s"]
                    hidden = max(0.0, 1 - r["wait_s"] / bare) if mode.startswith("overlap") else None
                    print(f"| {model} | {rate} | {mode} | {r['tokens_per_s']:,.0f} | {r['step_s'] * 1e3:,.0f} | "
                          f"{r['wait_s'] * 1e3:,.0f} | {compute * 1e3:,.0f} | {bare * 1e3:,.0f} | {bus:.2f} | "
                          f"{'' if hidden is None else f'{hidden:.0%}'} | "
                          f"{r['rss_mib'][0]:,.0f} / {r['rss_mib'][1]:,.0f} |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
