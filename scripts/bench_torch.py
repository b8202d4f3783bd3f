#!/usr/bin/python3
"""Times a nanoGPT-style training step in PyTorch on the CPU, for
scripts/bench.sh to compare with `tapegpt bench` on the same shapes.

Written as a careful PyTorch user would: nanoGPT's model and
configure_optimizers (AdamW, weight decay 0.1 on 2-D weights only),
`zero_grad(set_to_none=True)`, clip_grad_norm_(1.0). torch 1.13's AdamW has
no fused version; of its other two, the per-tensor loop (its default on
the CPU) beat the multi-tensor `foreach` one on S, M and G when both were
timed interleaved on the 2-core development machine, so it is the
baseline (`--compare-adamw` repeats that check). Sampling runs under
`torch.inference_mode()` with a preallocated KV cache written one row per
token. The thread count, OpenBLAS core type and OpenMP wait policy are set
by scripts/bench.sh (see there why).

With --autocast-bf16 the forward and the loss run under
`torch.autocast("cpu", dtype=torch.bfloat16)` (nanoGPT's `ctx`); backward,
clipping and AdamW are the float32 peer's, outside it, on float32
parameters and gradients, as autocast leaves them.

Prints one JSON object: median step time, tokens/s, optimizer time, peak
RSS, KV-cache sampling speed (batch 1), which OpenBLAS and which oneDNN this
process loaded, and which oneDNN ISA and kernels one step ran: the first
warm-up step (an extra untimed one with --warmup 0) runs with oneDNN's
verbose mode on (what ONEDNN_VERBOSE=1 turns on, here for that step only)
and its lines, which oneDNN writes to stdout, go to a file and are parsed,
not printed:
"onednn_isa" is its `isa:` line, null when the step ran no oneDNN primitive
(the float32 step's matmuls are OpenBLAS's). With --sgemm-rate it instead
times torch.mm on square matrices (the same sizes as `tapegpt bench
--sgemm-rate`), a check that both sides reach the same BLAS speed; with
--bf16-mm-rate it times torch.mm in bfloat16 (oneDNN) on the layers of
`tapegpt bench --bf16-rate`, the same check for the bf16 matmuls.
"""
import argparse
import contextlib
import ctypes
import json
import os
import resource
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch
    from torch.nn import functional as F
    from nanogpt_model import GPT
except ImportError as e:
    print(json.dumps({"error": f"torch not available: {e}"}))
    sys.exit(77)

SHAPES = {  # vocab, layers, heads, n_embd, T, B (as `tapegpt bench --shape`)
    "S": (65, 4, 4, 256, 128, 8),
    "M": (65, 6, 6, 384, 256, 8),
    "G": (50257, 12, 12, 768, 64, 4),
    # `tapegpt bench --budget-rung 1..3`: the three smallest rungs of
    # train --budget's ladder (train/budget/plan.cpp), heads of 64.
    "rung1": (65, 2, 2, 128, 128, 24),
    "rung2": (65, 4, 2, 128, 128, 24),
    "rung3": (65, 4, 3, 192, 128, 24),
}
# The budget's recipe (kBudgetRecipe in train/budget/plan.cpp): its
# architecture, and Muon over the blocks' matrices with AdamW (beta2 0.99)
# over the rest.
BUDGET_ARCH = dict(pos_encoding="rope", norm="rmsnorm", mlp="relu2", bias=False, tied=True)


def newton_schulz5(G, bf16, steps=5):
    """Muon's orthogonalisation as its reference implementation writes it
    (Keller Jordan's Muon; the coefficients tapegpt's kernel uses), in
    bfloat16 when the step runs under bf16 autocast (the reference always
    does; tapegpt's bf16 runs do), else in float32."""
    a, b, c = 3.4445, -4.7750, 2.0315
    X = G.bfloat16() if bf16 else G
    tall = G.size(0) > G.size(1)
    if tall:
        X = X.T
    X = X / (X.norm() + 1e-7)
    for _ in range(steps):
        A = X @ X.T
        B = b * A + c * A @ A
        X = a * X + B @ X
    if tall:
        X = X.T
    return X.to(G.dtype)


class Muon(torch.optim.Optimizer):
    """Muon (Nesterov momentum, then Newton-Schulz), decoupled weight decay,
    the update scaled by sqrt(max(1, rows/cols)) as tapegpt's."""

    def __init__(self, params, lr=0.02, momentum=0.95, weight_decay=0.1, bf16=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))
        self.bf16 = bf16

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            lr, mom = group["lr"], group["momentum"]
            for p in group["params"]:
                state = self.state[p]
                if "buf" not in state:
                    state["buf"] = torch.zeros_like(p.grad)
                buf = state["buf"]
                buf.mul_(mom).add_(p.grad)
                u = newton_schulz5(p.grad.add(buf, alpha=mom), self.bf16)
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(u, alpha=-lr * max(1.0, p.size(0) / p.size(1)) ** 0.5)


def blas_info():
    """Which OpenBLAS this process loaded (through torch), asked of the library itself."""
    with open("/proc/self/maps") as f:
        libs = sorted({line.split()[-1] for line in f if "libopenblas" in line or "/libblas.so" in line})
    info = dict(blas_libs=libs)
    for path in libs:
        try:
            lib = ctypes.CDLL(path)  # already loaded: the same handle
            lib.openblas_get_corename.restype = ctypes.c_char_p
        except (OSError, AttributeError):
            continue
        info.update(blas_core=lib.openblas_get_corename().decode(),
                    blas_build={0: "serial", 1: "pthread", 2: "openmp"}.get(lib.openblas_get_parallel(), "unknown"),
                    blas_threads=lib.openblas_get_num_threads())
        break
    return info


def onednn_libs():
    """The oneDNN library files this process mapped (torch links libdnnl.so.2)."""
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if "libdnnl" in line or "libmkldnn" in line})


def onednn_verbose_lines(fn):
    """Runs fn() with oneDNN's verbose mode on and returns the lines oneDNN
    printed. oneDNN writes them with printf to the C stdout, where this
    script's JSON line goes, so file descriptor 1 points to a temporary file
    meanwhile. The `info` lines (version, `isa:`) come once per process, at
    the first primitive run with verbose on: call this before any other."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile(mode="w+") as f:
        os.dup2(f.fileno(), 1)
        try:
            with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
                fn()
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        return [line.rstrip("\n") for line in f if line.startswith(("onednn_verbose,", "dnnl_verbose,"))]


def onednn_report(lines):
    """Which oneDNN ran, from its verbose lines: the `isa:` line (the ISA it
    dispatches to, after any ONEDNN_MAX_CPU_ISA cap), its version, and each
    primitive with the implementation it ran (e.g. "matmul brg:avx512_core_bf16")
    and how many times."""
    isa = version = None
    ran = {}
    for line in lines:
        fields = line.split(",")
        if fields[1] == "info" and len(fields) > 3 and fields[3].startswith("isa:"):
            isa = fields[3][len("isa:"):]
        elif fields[1] == "info" and fields[2].startswith("oneDNN v"):
            version = fields[2].split()[1][1:]
        elif fields[1] == "exec" and len(fields) > 4:
            key = f"{fields[3]} {fields[4]}"
            ran[key] = ran.get(key, 0) + 1
    return dict(onednn_isa=isa, onednn_version=version, onednn_ran=ran)


# The layers of `tapegpt bench --bf16-rate` (train/peak_flops.cpp): name, rows, IC, OC.
BF16_LAYERS = [("GPT-2 qkv", 512, 768, 2304), ("GPT-2 MLP up", 512, 768, 3072), ("GPT-2 MLP down", 512, 3072, 768),
               ("GPT-2 lm_head", 256, 768, 50257), ("M qkv", 1024, 384, 1152)]


def bf16_mm_rates(reps=5):
    """torch.mm in bfloat16 (oneDNN's matmul) on each layer's three matmuls
    (forward inp·Wᵀ, input gradient dout·W, weight gradient doutᵀ·inp, each
    2·rows·IC·OC FLOPs), median of reps calls after one untimed call, and
    the rate over all of them (FLOPs over the summed medians), as `tapegpt
    bench --bf16-rate` does for its own bf16 kernels. Returns the rate, the
    layers and onednn_report() of the untimed calls."""
    layers, lines, flops_sum, seconds_sum = [], [], 0.0, 0.0
    for name, n, ic, oc in BF16_LAYERS:
        inp = torch.full((n, ic), 0.5, dtype=torch.bfloat16)
        w = torch.full((oc, ic), 0.25, dtype=torch.bfloat16)
        dout = torch.full((n, oc), 0.125, dtype=torch.bfloat16)
        forms = [lambda: torch.mm(inp, w.t()), lambda: torch.mm(dout, w), lambda: torch.mm(dout.t(), inp)]
        flops = 2.0 * n * ic * oc
        rates = []
        for fn in forms:
            lines += onednn_verbose_lines(fn)  # the untimed call: which kernel each form runs
            t = []
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                t.append(time.perf_counter() - t0)
            seconds_sum += statistics.median(t)
            flops_sum += flops
            rates.append(flops / statistics.median(t) / 1e9)
        layers.append(dict(layer=name, rows=n, IC=ic, OC=oc, bf16_gflops=rates))
    return flops_sum / seconds_sum / 1e9, layers, onednn_report(lines)


def sgemm_rates(sizes=(1024, 1536, 2048), reps=7):
    """torch.mm (float32, which calls OpenBLAS's sgemm): median FLOP/s per size."""
    rates = {}
    for n in sizes:
        a, b = torch.full((n, n), 0.5), torch.full((n, n), 0.25)
        c = torch.empty(n, n)
        torch.mm(a, b, out=c)  # warm-up
        t = []
        for _ in range(reps):
            t0 = time.perf_counter()
            torch.mm(a, b, out=c)
            t.append(time.perf_counter() - t0)
        rates[str(n)] = 2.0 * n ** 3 / statistics.median(t) / 1e9
    return rates


def configure_adamw(model, kind):
    """nanoGPT's configure_optimizers: weight decay on 2-D weights only."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=1e-4, betas=(0.9, 0.95), eps=1e-8, foreach=kind == "foreach")


def compare_adamw(model, reps=6):
    """Best opt.step() time of each AdamW version on random gradients, interleaved."""
    for p in model.parameters():
        p.grad = torch.randn_like(p) * 1e-3
    opts = {kind: configure_adamw(model, kind) for kind in ("single", "foreach")}
    best = dict.fromkeys(opts, float("inf"))
    for _ in range(reps):
        for kind, opt in opts.items():
            t0 = time.perf_counter()
            opt.step()
            best[kind] = min(best[kind], time.perf_counter() - t0)
    return best


def sample_with_cache(model, cfg, prompt_tokens, new_tokens):
    """Greedy decoding, batch 1, with a KV cache preallocated for every
    position and written one row per token (attention reads rows 0..pos)."""
    tr = model.transformer
    C, NH, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    hs = C // NH
    positions = prompt_tokens + new_tokens
    K = torch.empty(L, NH, positions, hs)
    V = torch.empty(L, NH, positions, hs)
    scale = 1.0 / hs ** 0.5

    def step(token, pos):
        x = tr.wte.weight[token] + tr.wpe.weight[pos]  # (C,)
        for layer, block in enumerate(tr.h):
            q, k, v = block.attn.c_attn(block.ln_1(x)).split(C)
            K[layer, :, pos] = k.view(NH, hs)
            V[layer, :, pos] = v.view(NH, hs)
            keys, values = K[layer, :, :pos + 1], V[layer, :, :pos + 1]  # (NH, pos+1, hs)
            att = torch.softmax((keys @ q.view(NH, hs, 1)).squeeze(-1) * scale, dim=-1)
            y = (att.unsqueeze(1) @ values).reshape(C)
            x = x + block.attn.c_proj(y)
            x = x + block.mlp(block.ln_2(x))
        return model.lm_head(tr.ln_f(x))

    with torch.inference_mode():
        for i in range(prompt_tokens):
            logits = step(i % cfg["vocab_size"], i)
        t0 = time.perf_counter()
        for pos in range(prompt_tokens, positions):
            logits = step(int(torch.argmax(logits)), pos)
        return new_tokens / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="S", choices=sorted(SHAPES))
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--sample-tokens", type=int, default=64)
    ap.add_argument("--adamw", choices=["single", "foreach"], default="single",
                    help="torch 1.13's per-tensor AdamW (its default) or its multi-tensor one")
    ap.add_argument("--sdpa", action="store_true",
                    help="attention by F.scaled_dot_product_attention (PyTorch 2), as nanoGPT's flash path")
    ap.add_argument("--autocast-bf16", action="store_true",
                    help='forward and loss under torch.autocast("cpu", dtype=torch.bfloat16)')
    ap.add_argument("--sgemm-rate", action="store_true", help="only time torch.mm on square 1024-2048")
    ap.add_argument("--bf16-mm-rate", action="store_true",
                    help="only time torch.mm in bfloat16 (oneDNN) on the layers of `tapegpt bench --bf16-rate`")
    ap.add_argument("--compare-adamw", action="store_true",
                    help="only time opt.step() of both AdamW versions on --shape, interleaved (best of 6)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.sgemm_rate and args.bf16_mm_rate:
        sys.exit("bench_torch.py: --sgemm-rate and --bf16-mm-rate each time something else; give one")
    env = dict(threads=args.threads, framework=f"torch {torch.__version__}",
               omp_wait_policy=os.environ.get("OMP_WAIT_POLICY", "unset"), **blas_info())
    if args.sgemm_rate:
        rates = sgemm_rates()
        print(json.dumps(dict(sgemm_rate_gflops=max(rates.values()), sgemm_gflops_by_size=rates, **env)))
        return
    if args.bf16_mm_rate:
        rate, layers, probe = bf16_mm_rates()
        print(json.dumps(dict(bf16_rate_gflops=rate, layers=layers, onednn_libs=onednn_libs(), **probe, **env)))
        return
    if args.sdpa and not hasattr(F, "scaled_dot_product_attention"):
        print(json.dumps({"error": f"--sdpa: torch {torch.__version__} has no F.scaled_dot_product_attention"}))
        sys.exit(2)
    torch.manual_seed(0)
    V, L, NH, C, T, B = SHAPES[args.shape]
    budget = args.shape.startswith("rung")
    cfg = dict(vocab_size=V, block_size=T, n_layer=L, n_head=NH, n_embd=C, bias=True, tied=True,
               pos_encoding="learned", sdpa=args.sdpa)
    if budget:
        cfg.update(BUDGET_ARCH)
    model = GPT(cfg).float()  # RoPE's tables are built in float64 (for the parity checks)
    for p in model.parameters():
        if p.dim() >= 2:
            torch.nn.init.normal_(p, 0.0, 0.02)
    if args.compare_adamw:
        print(json.dumps(dict(shape=args.shape, adamw_step_s=compare_adamw(model), **env)))
        return
    if budget:  # Muon over the blocks' matrices, AdamW over the rest
        matrices = [p for n, p in model.named_parameters() if p.dim() == 2 and ".h." in n]
        rest = [p for n, p in model.named_parameters() if not (p.dim() == 2 and ".h." in n)]
        opts = [Muon(matrices, bf16=args.autocast_bf16),
                torch.optim.AdamW(rest, lr=1e-3, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0,
                                  foreach=args.adamw == "foreach")]
    else:
        opts = [configure_adamw(model, args.adamw)]
    ctx = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if args.autocast_bf16 else contextlib.nullcontext

    def step():
        """One training step; returns when the optimizer started (clip + AdamW)."""
        x = torch.randint(0, V, (B, T))
        y = torch.randint(0, V, (B, T))
        with ctx():
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, V), y.view(-1))
        for opt in opts:
            opt.zero_grad(set_to_none=True)
        loss.backward()
        t_opt = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        for opt in opts:
            opt.step()
        return t_opt

    # The first warm-up step runs under oneDNN's verbose mode (an extra
    # untimed step with --warmup 0).
    probe = onednn_report(onednn_verbose_lines(step))
    times, opt_times = [], []
    for s in range(min(args.warmup, 1), args.warmup + args.steps):
        t0 = time.perf_counter()
        t_opt = step()
        t1 = time.perf_counter()
        if s >= args.warmup:
            times.append(t1 - t0)
            opt_times.append(t1 - t_opt)
    step_s = statistics.median(times)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = dict(shape=args.shape, batch=B, T=T, precision="bf16 autocast" if args.autocast_bf16 else "fp32",
               step_s=step_s, tokens_per_s=B * T / step_s, optimizer_s=statistics.median(opt_times),
               adamw=args.adamw, optimizer="muon" if budget else "adamw", sdpa=args.sdpa,
               peak_rss_mib=rss / 2**20, onednn_libs=onednn_libs(), **probe, **env)
    if args.sample_tokens and not budget:  # the sampler is nanoGPT's (learned positions)
        # Sampling runs 16 + N positions: a model with room for them (the
        # context length does not change the work per token).
        scfg = dict(cfg, block_size=max(T, 16 + args.sample_tokens))
        smodel = GPT(scfg)
        with ctx():  # the bf16 peer samples under autocast too
            out["sample_tokens_per_s"] = sample_with_cache(smodel, scfg, 16, args.sample_tokens)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
