#!/usr/bin/python3
"""Pins tapegpt's whole model to PyTorch: logits, loss, every parameter
gradient and the weights after a few AdamW steps, for several configs.

tapegpt_parity_dump (tests/parity/parity_dump.cpp) writes what our float32
code computes; this script rebuilds the same model as a plain nanoGPT-style
torch module, loads our initial weights and recomputes everything in float64.

Error measure: for each tensor, max|ours - torch| / max|torch| — relative to
the tensor's largest entry, because a float32 rounding error scales with the
magnitudes summed, not with the (possibly near-zero) entry it lands in.

What is compared, per config:
  logits and loss at the initial weights;
  every parameter gradient, name by name, at the initial weights and again at
    our weights after each step (each step's fresh forward/backward must not
    inherit state from the last);
  adamw: torch's clip_grad_norm_ + AdamW (nanoGPT's decay groups) fed OUR
    gradients, against our weights after each of the K steps — the optimizer
    alone, no gradient noise in play; also the gradient norm we clipped with;
  trajectory: torch's own K steps (forward, backward, clip, AdamW) from the
    same start, against our weights and losses.
Each line also prints torch's own float32 error against its float64, the
yardstick of what float32 alone costs on that quantity.

Ratio report: after the K AdamW steps of the trajectory, each tensor's
deviation from torch float64 divided by torch float32's own deviation, per
tensor (Note [parity ratio] in report_ratios: each entry's deviation in
units of the drift float32 noise is expected to cause there, mean over the
tensor's entries in 4 trials with different seeds). Check: at most 2 in
every tensor of every config — our float32 arithmetic gives away no more
precision than PyTorch's does.

Thresholds (float32 unit roundoff is 6e-8; measured errors are ~1e-7..2e-6,
the same as torch float32's, so every threshold leaves a 10-50x margin while
a wrong LayerNorm eps, the erf GELU, a sinusoid 1e-4 off, a missing decay
group, missing clipping or a wrong beta each fail it):
  logits            1e-5  a few hundred roundings through L blocks
  loss              1e-6  a mean over B*T rows, accumulated in double
  gradients         1e-4  backward goes through softmax and LayerNorm
                          Jacobians, which amplify cancellation a little
  gradient norm     1e-5
  adamw             1e-5  same inputs on both sides: only rounding differs
  trajectory        1e-3  Adam divides each gradient entry by its own size, so
                          an entry that is near zero by cancellation (float32
                          noise ~1e-6 of the tensor max, relative error of
                          order 1) still moves by a sizable part of lr; torch
                          float32 shows the same ~5e-5 effect. The losses stay
                          tight (1e-6): the loss barely feels such entries.
Note [key bias rows]: rows C…2C-1 of attn.c_attn.bias have zero gradient in
exact arithmetic (a vector added to every key shifts each row of scores by a
constant, which softmax ignores). Ours holds float32 noise there, so those rows
get an absolute tolerance (1e-5 × the tensor's largest gradient) instead of a
relative one. Adam normalises that noise to steps of up to ~lr, so in the
trajectory those rows may drift by up to ~lr per step (harmlessly: the loss
cannot see them) and are checked against that bound (1.5·lr·k) instead.

Exit status: 0 pass, 1 fail, 2 usage error, 77 torch or numpy unavailable (1 under
TAPEGPT_NO_SKIP=1, as in CI: tests/support/no_skip.py)
(CTest's SKIP_RETURN_CODE).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "support"))
import no_skip  # noqa: E402

try:
    import numpy as np
    import torch
    import torch.nn as nn
    from torch.nn import functional as F
except ImportError as e:  # skipped without torch, except under TAPEGPT_NO_SKIP=1 (CI)
    no_skip.skip_or_fail(f"torch parity needs python3-torch and python3-numpy ({e})")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

TOL = {
    "logits": 1e-5,
    "loss": 1e-6,
    "grads": 1e-4,
    "key_rows": 1e-5,
    "grad_norm": 1e-5,
    "adamw": 1e-5,
    "trajectory": 1e-3,
    "key_drift": 1.5,
    "trajectory_loss": 1e-6,
    "ratio": 2.0,
}

# (label, dump flags). Small enough that all of them run in a few seconds,
# big enough for several heads, layers and a vocabulary wider than C.
BASE = dict(vocab=29, block=12, layers=2, heads=4, embd=32, bias=1, tied=1, pos="learned",
            batch=3, time=12, steps=3, lr=1e-3, clip=0.5, wd=0.1, spread=5.0, seed=1337)
CONFIGS = [
    ("tied+learned+bias", {}),
    ("untied", dict(tied=0)),
    ("no bias", dict(bias=0)),
    ("sinusoidal", dict(pos="sinusoidal")),
    ("n_head=1, 3 layers", dict(heads=1, layers=3)),
    ("T=7 < block_size", dict(time=7)),
    ("erf GELU", dict(gelu="erf")),
    # The config of issue 9: a char-sized vocabulary, GPT-2-scale weights
    # (spread 1), a large learning rate and clipping at 1.
    ("issue 9: L2 NH2 C32 T16 B4 lr1e-2", dict(vocab=65, block=16, layers=2, heads=2, embd=32,
                                                batch=4, time=16, lr=1e-2, clip=1.0, spread=1.0)),
]
# The model choices of issue 23 (--norm, --pos-encoding rope, --mlp), run
# one at a time with --config NAME (CTest parity_rmsnorm, parity_rope,
# parity_relu2, parity_swiglu); they join CONFIGS once gpt_forward computes
# them (until then tapegpt's side ignores the option and they fail).
OPTION_CONFIGS = {
    "rmsnorm": dict(norm="rmsnorm"),
    "rope": dict(pos="rope"),
    "relu2": dict(mlp="relu2"),
    "swiglu": dict(mlp="swiglu"),
    "qk_norm": {"qk-norm": "on"},
    "logit_softcap": {"logit-softcap": "15"},
}


from nanogpt_model import GPT  # noqa: E402  (the reference model, shared with bench_torch.py)


# ---- loading the dump ----------------------------------------------------------

class Dump:
    def __init__(self, d):
        self.dir = d
        with open(os.path.join(d, "manifest.json")) as f:
            self.m = json.load(f)
        self.cfg = self.m["config"]
        self.params = self.m["params"]
        self.B, self.T = self.m["B"], self.m["T"]

    def ints(self, name):
        return np.fromfile(os.path.join(self.dir, name), dtype="<i4").reshape(self.B, self.T)

    def floats(self, name):
        return np.fromfile(os.path.join(self.dir, name), dtype="<f4")

    def named(self, name):
        """{param name: float32 array in PyTorch's shape} from a concatenated file."""
        flat = self.floats(name)
        return {p["name"]: flat[p["offset"]:p["offset"] + p["numel"]].reshape(p["shape"])
                for p in self.params}


def rel_err(ours, ref):
    """max|ours - ref| / max|ref| (absolute when ref is all zero)."""
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    scale = np.max(np.abs(ref)) if ref.size else 0.0
    diff = np.max(np.abs(ours - ref)) if ref.size else 0.0
    return diff / scale if scale > 0 else diff


def key_row_slice(name, C):
    """Rows of a parameter whose exact gradient is zero (Note [key bias rows])."""
    if name.endswith("attn.c_attn.bias"):
        return slice(C, 2 * C)
    return None


def grad_err(ours, ref, rows):
    """(relative error outside `rows`, |error| in rows / max|ref|, max|ours| in rows).

    Both are scaled by the tensor's largest gradient; rows (if any) are the
    exactly-zero key bias rows of Note [key bias rows]."""
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if rows is None:
        return rel_err(ours, ref), None, None
    scale = np.max(np.abs(ref))
    keep = np.ones(ours.shape[0], dtype=bool)
    keep[rows] = False
    return (np.max(np.abs(ours[keep] - ref[keep])) / scale,
            np.max(np.abs(ours[rows] - ref[rows])) / scale, np.max(np.abs(ours[rows])))


def weight_err(ours, ref, rows):
    """(relative error outside `rows`, max |drift| in rows or None)."""
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if rows is None:
        return rel_err(ours, ref), None
    keep = np.ones(ours.shape[0], dtype=bool)
    keep[rows] = False
    return (np.max(np.abs(ours[keep] - ref[keep])) / np.max(np.abs(ref[keep])),
            np.max(np.abs(ours[rows] - ref[rows])))


def build_torch(dump, dtype, weights="weights_0.bin"):
    model = GPT(dump.cfg).to(dtype)
    named = dict(model.named_parameters())  # the tied head appears once, as wte
    want = [p["name"] for p in dump.params]
    if sorted(named) != sorted(want):
        raise SystemExit(f"parameter names differ: ours {sorted(want)} torch {sorted(named)}")
    w0 = dump.named(weights)
    with torch.no_grad():
        for name in want:
            named[name].copy_(torch.from_numpy(w0[name].astype(np.float64)).to(dtype))
    return model, named


def make_optimizer(named, opt):
    # nanoGPT's groups: decay on every tensor with dim >= 2 (both embeddings,
    # every matrix), none on biases and LayerNorm weights.
    decay = [p for p in named.values() if p.dim() >= 2]
    no_decay = [p for p in named.values() if p.dim() < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": opt["weight_decay"]},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=opt["lr"], betas=(opt["beta1"], opt["beta2"]), eps=opt["eps"], foreach=False)


def forward_backward(model, idx, targets):
    model.zero_grad(set_to_none=True)
    logits = model(idx)
    V = logits.size(-1)
    loss = F.cross_entropy(logits.view(-1, V), targets.view(-1))
    loss.backward()
    return logits, loss


# ---- one config ------------------------------------------------------------------

class Report:
    def __init__(self):
        self.worst = {}   # quantity -> (error, where)
        self.failures = []
        self.ratios = []  # (config, tensor, ours, torch32, ratio)

    def add(self, quantity, err, where, tol):
        if quantity not in self.worst or err > self.worst[quantity][0]:
            self.worst[quantity] = (err, where)
        if not err <= tol:  # also catches NaN
            self.failures.append(f"{where}: {quantity} error {err:.3g} > {tol:.0e}")


def check_config(label, flags, dump_tool, report, pool, quiet=False):
    """Every check of one config at one seed; the ratio terms go to `pool`."""
    out = sys.stdout
    if quiet:  # a later trial: the same checks, only its summary line printed
        sys.stdout = open(os.devnull, "w")
    try:
        return _check_config(label, flags, dump_tool, report, pool)
    finally:
        if quiet:
            sys.stdout.close()
            sys.stdout = out


def _check_config(label, flags, dump_tool, report, pool):
    with tempfile.TemporaryDirectory(prefix="tapegpt_parity_") as d:
        cmd = [dump_tool, "--out", d] + [x for k, v in flags.items() for x in (f"--{k}", str(v))]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            report.failures.append(f"{label}: dump tool failed ({run.returncode}): {run.stderr.strip()}")
            print(f"== {label}: dump tool failed: {run.stderr.strip()}")
            return
        dump = Dump(d)
        cfg, opt, C = dump.cfg, dump.m["optimizer"], dump.cfg["n_embd"]
        K = opt["steps"]
        idx = torch.from_numpy(dump.ints("inputs.bin").astype(np.int64))
        targets = torch.from_numpy(dump.ints("targets.bin").astype(np.int64))
        our_logits = dump.floats("logits.bin").reshape(dump.B, dump.T, cfg["vocab_size"])
        our_grads = [dump.named(f"grads_{k}.bin") for k in range(K + 1)]
        our_weights = [dump.named(f"weights_{k}.bin") for k in range(K + 1)]
        names = [p["name"] for p in dump.params]
        print(f"== {label}: V={cfg['vocab_size']} T'={cfg['block_size']} L={cfg['n_layer']} "
              f"NH={cfg['n_head']} C={C} bias={cfg['bias']} tied={cfg['tied']} "
              f"pos={cfg['pos_encoding']} norm={cfg.get('norm', 'layernorm')} mlp={cfg.get('mlp', 'gelu')} "
              f"B={dump.B} T={dump.T}, {K} AdamW steps")

        # Reference (float64) and torch's own float32 as a yardstick.
        m64, p64 = build_torch(dump, torch.float64)
        logits64, loss64 = forward_backward(m64, idx, targets)
        m32, p32 = build_torch(dump, torch.float32)
        logits32, loss32 = forward_backward(m32, idx, targets)
        ref_logits = logits64.detach().numpy()

        e = rel_err(our_logits, ref_logits)
        report.add("logits", e, label, TOL["logits"])
        print(f"   logits  {e:.2e}   (torch float32 {rel_err(logits32.detach().numpy(), ref_logits):.2e})")
        e = abs(dump.m["losses"][0] - loss64.item()) / abs(loss64.item())
        report.add("loss", e, label, TOL["loss"])
        print(f"   loss    {e:.2e}   ours {dump.m['losses'][0]:.7f} torch {loss64.item():.7f}"
              f"   (torch float32 {abs(loss32.item() - loss64.item()) / abs(loss64.item()):.2e})")

        print("   gradients (relative to each tensor's max |grad|; torch float32 alongside):")
        # float32's gradient noise per tensor: torch float32's largest error.
        # (At least one rounding of the largest gradient, so it is never 0.)
        noise = {n: max(np.max(np.abs(p32[n].grad.double().numpy() - p64[n].grad.numpy())),
                        2.0 ** -24 * np.max(np.abs(p64[n].grad.numpy())), 1e-30) for n in names}
        for name in names:
            ref = p64[name].grad.numpy()
            e, key_abs, ours_key = grad_err(our_grads[0][name], ref, key_row_slice(name, C))
            e32, _, _ = grad_err(p32[name].grad.double().numpy(), ref, key_row_slice(name, C))
            report.add("grads", e, f"{label} {name}", TOL["grads"])
            note = ""
            if key_abs is not None:
                report.add("key_rows", key_abs, f"{label} {name}[C:2C]", TOL["key_rows"])
                note = (f"   key rows (exact 0): max|ours| {ours_key:.1e}, "
                        f"error / max|grad| {key_abs:.1e}")
            print(f"     {name:40s} {e:.2e}  ({e32:.2e}){note}")

        # Each later step's fresh forward/backward, at our own weights_k: the
        # same tight check, so no state (gradients, arena, tape) leaks between
        # steps.
        for k in range(1, K + 1):
            mk, pk = build_torch(dump, torch.float64, f"weights_{k}.bin")
            _, loss_k = forward_backward(mk, idx, targets)
            el = abs(dump.m["losses"][k] - loss_k.item()) / abs(loss_k.item())
            report.add("loss", el, f"{label} at weights_{k}", TOL["loss"])
            worst = (0.0, "")
            for name in names:
                rows = key_row_slice(name, C)
                e, key_abs, _ = grad_err(our_grads[k][name], pk[name].grad.numpy(), rows)
                report.add("grads", e, f"{label} at weights_{k} {name}", TOL["grads"])
                if key_abs is not None:
                    report.add("key_rows", key_abs, f"{label} at weights_{k} {name}[C:2C]",
                               TOL["key_rows"])
                worst = max(worst, (e, name))
            print(f"   at weights_{k}: loss {el:.2e}, worst gradient {worst[0]:.2e} ({worst[1]})")

        # AdamW alone: torch's optimizer (clip_grad_norm_ + AdamW) fed OUR
        # gradients at each step, against our weights after that step.
        _, pa = build_torch(dump, torch.float64)
        opt_a = make_optimizer(pa, opt)
        # The trajectory: torch's own forward/backward/clip/AdamW from the same
        # initial weights, in float64 and (as the yardstick) float32.
        # The control is the float32 run with a GELU 512 ulps coarse
        # (Note [parity ratio]): the ratio check must flag it.
        traj = {}
        for key, dtype in (("f64", torch.float64), ("f32", torch.float32), ("control", torch.float32)):
            mt, pt = build_torch(dump, dtype)
            if key == "control":
                coarsen_gelu(mt)
            traj[key] = (mt, pt, make_optimizer(pt, opt))
        min_grad = {n: np.full(p64[n].shape, np.inf) for n in names}  # min over steps of |g64|
        for k in range(K):
            for name in names:
                pa[name].grad = torch.from_numpy(our_grads[k][name].astype(np.float64))
            norm_a = torch.nn.utils.clip_grad_norm_(list(pa.values()), opt["grad_clip"]).item()
            en = abs(norm_a - dump.m["grad_norms"][k]) / norm_a
            report.add("grad_norm", en, f"{label} step {k + 1}", TOL["grad_norm"])
            opt_a.step()
            for key, (mt, pt, ot) in traj.items():
                _, loss_t = forward_backward(mt, idx, targets)
                if key == "f64" and k > 0:
                    e = abs(dump.m["losses"][k] - loss_t.item()) / abs(loss_t.item())
                    report.add("trajectory_loss", e, f"{label} step {k + 1}", TOL["trajectory_loss"])
                if key == "f64":
                    for n in names:
                        min_grad[n] = np.minimum(min_grad[n], np.abs(pt[n].grad.numpy()))
                torch.nn.utils.clip_grad_norm_(list(pt.values()), opt["grad_clip"])
                ot.step()
            p_t64, p_t32 = traj["f64"][1], traj["f32"][1]
            worst_a = worst_t = worst_t32 = (0.0, "")
            for name in names:
                ours = our_weights[k + 1][name]
                ea = rel_err(ours, pa[name].detach().numpy())
                report.add("adamw", ea, f"{label} step {k + 1} {name}", TOL["adamw"])
                worst_a = max(worst_a, (ea, name))
                ref = p_t64[name].detach().numpy()
                rows = key_row_slice(name, C)
                et, drift = weight_err(ours, ref, rows)
                report.add("trajectory", et, f"{label} step {k + 1} {name}", TOL["trajectory"])
                worst_t = max(worst_t, (et, name))
                worst_t32 = max(worst_t32, (weight_err(p_t32[name].detach().double().numpy(), ref, rows)[0], name))
                if drift is not None:
                    report.add("key_drift", drift / ((k + 1) * opt["lr"]),
                               f"{label} step {k + 1} {name}[C:2C]", TOL["key_drift"])
            if k == K - 1:
                collect_ratio_terms(pool, names, our_weights[K], p_t64, p_t32, traj["control"][1], C,
                                    min_grad, noise, opt["lr"], K)
            clipped = "clipped" if dump.m["grad_norms"][k] > opt["grad_clip"] else "NOT clipped"
            print(f"   step {k + 1}: grad norm {dump.m['grad_norms'][k]:.4f} ({clipped}, error {en:.1e}),"
                  f" adamw {worst_a[0]:.2e} ({worst_a[1]}), trajectory {worst_t[0]:.2e} ({worst_t[1]};"
                  f" torch float32 {worst_t32[0]:.2e})")
        with torch.no_grad():
            loss_t = F.cross_entropy(traj["f64"][0](idx).view(-1, cfg["vocab_size"]),
                                     targets.view(-1)).item()
        e = abs(dump.m["losses"][K] - loss_t) / abs(loss_t)
        report.add("trajectory_loss", e, f"{label} after step {K}", TOL["trajectory_loss"])
        print(f"   losses ours {' '.join(f'{x:.7f}' for x in dump.m['losses'])};"
              f" torch's own after step {K}: {loss_t:.7f} (error {e:.1e})")


U32 = 2.0 ** -24  # float32 unit roundoff
TRIALS = 4  # seeds per config pooled in the ratio (Note [parity ratio])


CONTROL_BITS = 14  # relative error up to 2^-15: 512 float32 ulps


class CoarseGelu(nn.Module):
    """A GELU whose output is rounded to CONTROL_BITS significant bits in the
    forward pass; gradients flow as through the exact one."""

    def __init__(self, exact):
        super().__init__()
        self.exact = exact

    def forward(self, x):
        y = self.exact(x)
        mant, exp = torch.frexp(y)
        scale = 2.0 ** CONTROL_BITS
        return y + (torch.ldexp(torch.round(mant * scale) / scale, exp) - y).detach()


def coarsen_gelu(model):
    """The positive control of Note [parity ratio]: every block's GELU output
    rounded to CONTROL_BITS significant bits."""
    for block in model.transformer.h:
        block.mlp.gelu = CoarseGelu(block.mlp.gelu)


def collect_ratio_terms(pool, names, ours, p_t64, p_t32, p_ctrl, C, min_grad, noise, lr, K):
    """Appends, per tensor, each entry's deviation from float64 in units of its
    expected float32 drift (ours and torch float32's), and the raw max-based
    deviations, to pool[name]: one trial's share of Note [parity ratio]."""
    for name in names:
        ref = p_t64[name].detach().numpy()
        t32 = p_t32[name].detach().double().numpy()
        drift = U32 * np.max(np.abs(ref)) + K * lr * noise[name] / np.maximum(min_grad[name], noise[name])
        keep = np.ones(ref.shape, dtype=bool)
        rows = key_row_slice(name, C)
        if rows is not None:
            keep[rows] = False
        scaled = lambda w: (np.abs(np.asarray(w, dtype=np.float64)[keep] - ref[keep]) / drift[keep]).ravel()
        entry = pool.setdefault(name, {"ours": [], "t32": [], "ctrl": [], "raw_ours": [], "raw_t32": []})
        entry["ours"].append(scaled(ours[name]))
        entry["t32"].append(scaled(t32))
        entry["ctrl"].append(scaled(p_ctrl[name].detach().double().numpy()))
        entry["raw_ours"].append(weight_err(ours[name], ref, rows)[0])
        entry["raw_t32"].append(weight_err(t32, ref, rows)[0])


def report_ratios(label, pool, trials, report):
    """Per tensor: our deviation from float64 / torch float32's, after the last
    step, pooled over the config's trials.

    Note [parity ratio]: Adam divides each gradient entry by its own running
    size, so float32's gradient noise sigma (torch float32's largest gradient
    error on the tensor) moves an entry whose gradient is g by about
    lr*sigma/|g| per step: entries with |g| near sigma drift by ~lr in ANY
    float32 implementation, and a plain max over entries measures which
    implementation drew the unluckier noise on them, not precision (the raw
    max is printed too, as the median over trials). So each entry's deviation
    is divided by its expected float32 drift, u*max|w| + K*lr*sigma/max(min_k
    |g_k|, sigma), and the tensor's deviation is the mean of that over its
    entries (key-bias rows excluded) in every trial: a systematic error
    anywhere (a worse GELU, a float sum that loses bits) raises it for every
    entry it touches, noise does not. The mean, not the RMS, and TRIALS seeds
    (other initial weights and batches) pooled before dividing, because one
    lucky or unlucky entry must not decide: with one trial and the RMS, a
    32-entry bias vector's ratio swung from 1.6 to 3.6 between an -O3 and an
    -O2 build, which round differently but are equally precise.
    Positive control, every run: the same float32 PyTorch trajectory with
    each GELU output rounded to CONTROL_BITS = 14 significant bits (up to 512
    ulps off, gradients untouched) must exceed the bound in some tensor of
    every config, or the check fails: it shows the measure can see a
    kernel that gives precision away (measured: 4-75x)."""
    print(f"== {label}: ratio after the last step over {trials} trials, Note [parity ratio]"
          f" (raw max-based figures, median over trials, alongside):")
    worst = worst_ctrl = (0.0, "")
    mean = lambda parts: float(np.mean(np.concatenate(parts))) if parts else 0.0
    for name, e in pool.items():
        e_ours, e_t32 = mean(e["ours"]), mean(e["t32"])
        raw_ours, raw_t32 = float(np.median(e["raw_ours"])), float(np.median(e["raw_t32"]))
        ratio = e_ours / e_t32 if e_t32 > 0 else (0.0 if e_ours == 0 else float("inf"))
        report.add("ratio", ratio, f"{label} {name}", TOL["ratio"])
        report.ratios.append((label, name, e_ours, e_t32, ratio, raw_ours, raw_t32))
        worst = max(worst, (ratio, name))
        ctrl = mean(e["ctrl"]) / e_t32 if e_t32 > 0 else 0.0
        worst_ctrl = max(worst_ctrl, (ctrl, name))
        print(f"     {name:40s} ours {e_ours:6.3f}  torch32 {e_t32:6.3f}  ratio {ratio:5.2f}  control {ctrl:6.2f}"
              f"   (raw max: ours {raw_ours:.2e} torch32 {raw_t32:.2e} = {raw_ours / max(raw_t32, 1e-30):.2f}x)")
    print(f"   worst ratio {worst[0]:.2f} ({worst[1]}); control (GELU rounded to {CONTROL_BITS} bits) {worst_ctrl[0]:.2f}"
          f" ({worst_ctrl[1]})")
    # The check must be able to fail: the control must exceed the bound.
    report.add("control_ratio_inverse", TOL["ratio"] / max(worst_ctrl[0], 1e-30), f"{label} control", 1.0)


def find_dump_tool():
    pattern = os.path.join(REPO, "build*", "tests", "parity", "tapegpt_parity_dump")
    found = sorted(glob.glob(pattern), key=os.path.getmtime)
    return found[-1] if found else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump-tool", help="path to tapegpt_parity_dump (default: newest build*/ one)")
    ap.add_argument("--markdown", action="store_true",
                    help="also print the ratio report as a markdown table (for notes)")
    ap.add_argument("--config", choices=sorted(OPTION_CONFIGS),
                    help="check only this model choice (on the base config) instead of CONFIGS")
    args = ap.parse_args()
    configs = [(args.config, OPTION_CONFIGS[args.config])] if args.config else CONFIGS
    tool = args.dump_tool or find_dump_tool()
    if not tool or not os.access(tool, os.X_OK):
        print("torch parity: cannot find tapegpt_parity_dump; build it "
              "(make tapegpt_parity_dump) and pass --dump-tool PATH", file=sys.stderr)
        return 2
    torch.set_num_threads(1)  # tiny tensors: threads only add noise to the timing

    report = Report()
    for label, over in configs:
        flags = {**BASE, **over}
        pool = {}
        for trial in range(TRIALS):
            check_config(label, {**flags, "seed": flags["seed"] + trial}, tool, report, pool, quiet=trial > 0)
        report_ratios(label, pool, TRIALS, report)

    def w(q):
        err, where = report.worst.get(q, (float("nan"), "not measured"))
        return f"{err:.1e}", where

    verdict = "PASS" if not report.failures else "FAIL"
    if args.markdown:
        print("\n| config | tensor | ours | torch f32 | ratio | raw max: ours | raw max: torch f32 | raw ratio |"
              "\n|---|---|---|---|---|---|---|---|")
        for label, name, eo, et, r, ao, at in report.ratios:
            print(f"| {label} | {name} | {eo:.3f} | {et:.3f} | {r:.2f} | {ao:.2e} | {at:.2e} | {ao / max(at, 1e-30):.2f} |")
    for f in report.failures[:25]:
        print(f"FAIL {f}")
    if len(report.failures) > 25:
        print(f"FAIL ... and {len(report.failures) - 25} more")
    g, gwhere = w("grads")
    print(f"torch parity: worst relative error logits {w('logits')[0]}, loss {w('loss')[0]}, "
          f"grads {g} ({gwhere}), key-bias rows {w('key_rows')[0]}, grad norm {w('grad_norm')[0]}, "
          f"adamw weights {w('adamw')[0]}, trajectory weights {w('trajectory')[0]} "
          f"(key-bias drift {w('key_drift')[0]}·lr·k), trajectory loss {w('trajectory_loss')[0]}, "
          f"worst ratio to torch float32 {report.worst.get('ratio', (float('nan'),))[0]:.2f} "
          f"({w('ratio')[1]})"
          f" — {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
