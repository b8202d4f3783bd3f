# Helpers for the data-parallel tests: mpirun command lines (Open MPI run
# as root in CI containers needs two environment variables) and comparing
# runs to the tolerance of Note [Data parallelism] in
# train/distributed/distributed.h.
import array
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "robustness"))
import robutil  # noqa: E402

# Open MPI refuses to run as root unless both are set (CI runs as root).
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

# 2 ranks on a 2-core machine shared with other jobs: allow more processes
# than free slots and do not pin them.
LOCAL = ["--oversubscribe", "--bind-to", "none"]

# Tolerance of N ranks against one process (Note [Data parallelism]): the
# gradient sums differ only in the order of float32 additions, a few ulps per
# step that AdamW carries on. Measured on the tiny model over 20 steps (the
# cases of test_data_parallel.py): losses within 1e-8 relative, grad norms
# within 1e-5, every weight and moment within 3.4e-6 of its tensor's largest
# magnitude, except one slice: the key bias (the middle third of
# attn.c_attn.bias) has an exact gradient of zero (softmax ignores a constant
# added to every score), so in both runs AdamW moves it by normalised
# rounding noise, up to about lr per step; measured up to 1e-5 absolute.
# The bounds leave a factor of 10 (15 for the tensors).
LOSS_REL = 1e-5
GRAD_NORM_REL = 1e-4
TENSOR_REL = 5e-5
KEY_BIAS_ABS = 1e-4


def mpirun_cmd(mpirun, n, tapegpt, *args, mca=()):
    return [mpirun, "-np", str(n), *LOCAL, *mca, tapegpt, *args]


def train_rows(path):
    """Training rows by step, without timing and process-count fields."""
    return {s: {k: v for k, v in r.items() if k not in ("world_size", "allreduce_s")}
            for s, r in robutil.last_train_rows(path).items()}


def tensors(path):
    """{dataset: list of floats} for /model and /optimizer (all float32), read
    with h5py or h5dump through robutil."""
    out = {}
    for name, raw in robutil.checkpoint_state(path, per_dataset=True).items():
        if name.startswith("/train@"):
            continue
        values = array.array("f")
        values.frombytes(raw)
        if sys.byteorder != "little":
            values.byteswap()
        out[name] = values
    return out


def _relative_difference(a, b):
    scale = max(max((abs(x) for x in a), default=0.0), 1e-30)
    return max((abs(x - y) for x, y in zip(a, b)), default=0.0) / scale


def run_difference(run_a, run_b):
    """'' when two run directories agree to the stated tolerance, else why."""
    a = train_rows(os.path.join(run_a, "metrics.jsonl"))
    b = train_rows(os.path.join(run_b, "metrics.jsonl"))
    if a.keys() != b.keys():
        return f"logged steps differ: {sorted(a.keys() ^ b.keys())[:5]}"
    for s in sorted(a):
        for key, rel in (("loss", LOSS_REL), ("grad_norm", GRAD_NORM_REL)):
            x, y = a[s][key], b[s][key]
            if abs(x - y) > rel * abs(x):
                return f"step {s}: {key} {x} vs {y} (tolerance {rel} relative)"
        if a[s]["lr"] != b[s]["lr"]:
            return f"step {s}: lr {a[s]['lr']} vs {b[s]['lr']}"
    ca, cb = os.path.join(run_a, "ckpt.h5"), os.path.join(run_b, "ckpt.h5")
    for attr in ("step", "tokens_seen", "sampler_position", "rng_state"):
        sa, sb = robutil.checkpoint_state(ca), robutil.checkpoint_state(cb)
        if sa["/train@" + attr] != sb["/train@" + attr]:
            return f"/train {attr} differs: {sa['/train@' + attr]} vs {sb['/train@' + attr]}"
    ta, tb = tensors(ca), tensors(cb)
    if ta.keys() != tb.keys():
        return f"different tensors: {sorted(ta.keys() ^ tb.keys())[:5]}"
    for name in sorted(ta):
        if len(ta[name]) != len(tb[name]):
            return f"{name}: sizes differ"
        for part, (a_part, b_part) in _parts(name, ta[name], tb[name]).items():
            if part == "key bias":
                d = max(abs(x - y) for x, y in zip(a_part, b_part))
                if d > KEY_BIAS_ABS:
                    return f"{name} (key bias): differs by {d:.3g} (tolerance {KEY_BIAS_ABS})"
                continue
            d = _relative_difference(a_part, b_part)
            if d > TENSOR_REL:
                return f"{name}: differs by {d:.3g} of its largest value (tolerance {TENSOR_REL})"
    return ""


def _parts(name, a, b):
    """A tensor's parts compared alike: the model's key bias apart."""
    if name.startswith("/model/") and name.endswith("attn.c_attn.bias"):
        c = len(a) // 3
        return {"query and value bias": (a[:c] + a[2 * c:], b[:c] + b[2 * c:]),
                "key bias": (a[c:2 * c], b[c:2 * c])}
    return {"all": (a, b)}


def worst_differences(run_a, run_b):
    """(largest max|a - b| / max|a| over the tensors but the key bias, largest
    |a - b| of the key bias) of two checkpoints."""
    ta, tb = tensors(os.path.join(run_a, "ckpt.h5")), tensors(os.path.join(run_b, "ckpt.h5"))
    rel = key = 0.0
    for n in ta:
        for part, (a, b) in _parts(n, ta[n], tb[n]).items():
            if part == "key bias":
                key = max(key, max(abs(x - y) for x, y in zip(a, b)))
            else:
                rel = max(rel, _relative_difference(a, b))
    return rel, key
