# Shared helpers for the robustness tests and scripts/kill_anywhere.py:
# running tapegpt, a tiny prepared corpus, and bit-exact checkpoint contents.
"""Helpers shared by tests/robustness/*.py and scripts/kill_anywhere.py.

Checkpoint contents are compared as raw bytes of every dataset under /model
and /optimizer plus the /train attributes. h5py is used when installed; the
h5dump tool (Debian's hdf5-tools, a hard dependency of the project) is the
fallback, so the comparisons never need Python packages.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The tiny model every robustness check trains: a step takes milliseconds.
TINY_MODEL = ["--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--block-size", "16",
              "--batch-size", "4", "--warmup", "2"]

sys.path.insert(0, os.path.join(REPO, "tests", "support"))
import no_skip  # noqa: E402
import testutil  # noqa: E402
from testutil import run  # noqa: E402,F401  (robutil.run, for its many callers)

# Exit code CTest treats as "skipped" (SKIP_RETURN_CODE 77 in CMakeLists.txt).
SKIP = no_skip.SKIP

try:
    import h5py
    import numpy as np
except ImportError:  # fall back to h5dump
    h5py = None


def require_tools():
    """Exits 77 (CTest: skipped; 1 under TAPEGPT_NO_SKIP=1) when neither h5py
    nor h5dump can read checkpoints; everything else these tests use is in
    the standard library."""
    if h5py is None and shutil.which("h5dump") is None:
        no_skip.skip_or_fail("needs h5dump (Debian package hdf5-tools) or h5py")


def built_with_tsan(tapegpt):
    """True for a ThreadSanitizer build (scripts/tsan.sh): its runtime dies
    with SIGBUS at start-up under a small RLIMIT_FSIZE, so such cases skip."""
    with open(tapegpt, "rb") as f:
        return b"__tsan_init" in f.read()


def prepare_tiny(tapegpt, tmp, chars=20000):
    """A char-tokenized slice of Tiny Shakespeare in tmp/data; returns the dir."""
    return testutil.prepare_corpus_head(tapegpt, tmp, chars)


def metrics(path):
    """metrics.jsonl rows; a torn last line (a kill mid-write) raises."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def line_count(path):
    """Lines in a file, 0 when it does not exist yet."""
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def last_train_rows(path):
    """Training rows keyed by step, the LAST occurrence winning.

    A resumed run appends to metrics.jsonl, and a step logged just before a
    kill but after the last checkpoint is trained (identically) again, so a
    step may appear more than once. Timing fields are dropped.
    """
    rows = {}
    for r in metrics(path):
        if "loss" in r:
            rows[r["step"]] = {k: v for k, v in r.items() if k not in ("tokens_per_s", "elapsed_s", "train_s")}
    return rows


def last_eval_rows(path):
    rows = {}
    for r in metrics(path):
        if "val_loss" in r:
            rows[r["step"]] = r["val_loss"]
    return rows


def _h5dump_names(path):
    out = subprocess.run(["h5dump", "-n", path], capture_output=True, text=True, check=True).stdout
    return sorted(m.group(1) for m in re.finditer(r"^\s*dataset\s+(\S+)\s*$", out, re.M))


def _h5dump_attrs(path, obj, attrs):
    """{attr: value text} for attributes of obj, from one h5dump call."""
    out = subprocess.run(["h5dump", *[a for n in attrs for a in ("-a", f"{obj}/{n}")], path],
                         capture_output=True, text=True, check=True).stdout
    values = {}
    for m in re.finditer(r'ATTRIBUTE "([^"]+)".*?DATA \{(.*?)\}', out, re.S):
        values[m.group(1)] = re.sub(r"\s+", " ", re.sub(r"\(\d+\):", "", m.group(2))).strip()
    return values


def _h5dump_bytes(path, names):
    """The raw little-endian bytes of the datasets, concatenated in order."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "all.bin")
        subprocess.run(["h5dump", "-b", "LE", "-o", out, *[a for n in names for a in ("-d", n)], path],
                       capture_output=True, check=True)
        with open(out, "rb") as f:
            return f.read()


# /train attributes that must survive a resume exactly (best_val_loss is
# compared through metrics.jsonl, where it is written to 9 digits).
TRAIN_ATTRS = ("step", "tokens_seen", "sampler_position", "rng_state")


def checkpoint_state(path, per_dataset=False):
    """Raw bytes of every dataset under /model and /optimizer, and the /train
    run state as text: equal states mean bit-identical weights, moments and
    run state. Keys are dataset paths and "/train@attr"; without h5py (and
    unless per_dataset) all datasets form one "datasets" entry, for speed —
    state_difference then looks again dataset by dataset."""
    state = {}
    if h5py:
        with h5py.File(path, "r") as f:
            def visit(name, obj):
                if isinstance(obj, h5py.Dataset) and name.split("/")[0] in ("model", "optimizer"):
                    state["/" + name] = obj[()].tobytes()
            f.visititems(visit)
            for a in TRAIN_ATTRS:
                state["/train@" + a] = repr(np.asarray(f["train"].attrs[a]).tolist())
        return state
    names = [n for n in _h5dump_names(path) if n.split("/")[1] in ("model", "optimizer")]
    if per_dataset:
        for n in names:
            state[n] = _h5dump_bytes(path, [n])
    else:
        state["datasets"] = (path, tuple(names), _h5dump_bytes(path, names))
    for a, v in _h5dump_attrs(path, "/train", TRAIN_ATTRS).items():
        state["/train@" + a] = v
    return state


def state_difference(a, b):
    """A short description of how two checkpoint_state dicts differ, or ''."""
    if "datasets" in a and "datasets" in b:
        pa, na, ba = a["datasets"]
        pb, nb, bb = b["datasets"]
        if na == nb and ba == bb:
            a, b = dict(a), dict(b)
            del a["datasets"], b["datasets"]
        else:  # look dataset by dataset to say which differ
            a = {**checkpoint_state(pa, True), **{k: v for k, v in a.items() if k != "datasets"}}
            b = {**checkpoint_state(pb, True), **{k: v for k, v in b.items() if k != "datasets"}}
    if a.keys() != b.keys():
        return f"different objects: {sorted(a.keys() ^ b.keys())}"
    diff = [k for k in sorted(a) if a[k] != b[k]]
    return f"{len(diff)} differ, e.g. {diff[:5]}" if diff else ""


def checkpoint_step(path):
    """/train step of a checkpoint (h5py or h5dump)."""
    if h5py:
        with h5py.File(path, "r") as f:
            return int(f["train"].attrs["step"])
    return int(_h5dump_attrs(path, "/train", ["step"])["step"])


def temp_files(run_dir):
    """Temporary files an atomic save or write left behind (`*.tmp-*`)."""
    if not os.path.isdir(run_dir):
        return []
    return sorted(n for n in os.listdir(run_dir) if ".tmp" in n)
