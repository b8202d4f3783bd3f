#!/usr/bin/python3
"""Time to loss, for scripts/bench_time_to_loss.sh: nanoGPT's CPU recipe for
Tiny Shakespeare trained in PyTorch (float32, or under bf16 autocast), and
the summary that compares it with tapegpt's runs.

  time_to_loss.py torch --data DIR --out RUNDIR [--bf16] [--steps N] [--eval-every N] [--threads N]
                        [--budget-s S [--started-at UNIXTIME]] [--save CKPT.pt]
  time_to_loss.py summary --run NAME=RUNDIR ... [--baseline NAME] [--md FILE] [--json FILE]

`torch` trains nanoGPT's model (scripts/nanogpt_model.py: 4 layers, 4
heads, 128 wide, T 64, no biases, tied head, erf GELU, dropout 0) as
nanoGPT's train.py does on the CPU: batches of 12 random windows of
train.bin, AdamW (betas 0.9/0.99, weight decay 0.1 on 2-D weights only,
torch 1.13's per-tensor loop, its CPU default), clip 1.0, nanoGPT's get_lr
(warmup 100, cosine from 1e-3 to 1e-4 at the last step), nanoGPT's
initialisation (normal 0.02, residual projections 0.02/sqrt(2·n_layer)).
With --bf16 the forward and loss run under torch.autocast("cpu",
dtype=torch.bfloat16), as nanoGPT's `ctx` does. It writes RUNDIR/metrics.jsonl
in tapegpt's format: a row per step (loss, lr, train_s) and per evaluation
(val_loss, train_s), where train_s counts only the training steps (batch,
forward, backward, clip, AdamW), never the evaluations. An evaluation scores
the whole of val.bin as `tapegpt train --eval-steps 0` does: non-overlapping
windows of T from the start, each target once (the last window shorter),
the mean over all targets; the logits are cast to float32 for the loss.

With --budget-s S the step count is not given but fitted to S wall seconds
from --started-at (scripts/bench_budget.sh passes the time it launched this
process, so the import of torch counts too): Note [Fitting nanoGPT's recipe
to a wall-time budget] below. --save writes the final model as nanoGPT's
ckpt.pt, for scripts/nanogpt_to_h5.py and `tapegpt eval`.

`summary` takes each run's metrics.jsonl, the baseline's final validation
loss as the target, and prints for each run the training seconds at its
first evaluation at or below the target, and the ratio to the baseline's.
The resolution is one evaluation interval.
"""
import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(message):
    sys.stderr.write(f"time_to_loss: error: {message}\n")
    sys.exit(2)


def read_tokens(path):
    """A tapegpt token file (Note [Token file format] in data/token_file.h)."""
    import numpy as np
    try:
        with open(path, "rb") as f:
            head = f.read(32)
            if len(head) < 32 or head[:8] != b"TGTOKENS":
                fail(f"{path} is not a tapegpt token file; make it with 'tapegpt prepare'")
            width = int.from_bytes(head[12:16], "little")
            count = int.from_bytes(head[16:24], "little")
            vocab = int.from_bytes(head[24:28], "little")
            data = np.frombuffer(f.read(), dtype=np.uint16 if width == 2 else np.uint32)
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    if data.size != count:
        fail(f"{path} holds {data.size} tokens, its header says {count}")
    return data.astype(np.int64), vocab


def nanogpt_lr(it, lr, min_lr, warmup, decay):
    """nanoGPT's get_lr(it)."""
    if it < warmup:
        return lr * (it + 1) / (warmup + 1)
    if it > decay:
        return min_lr
    ratio = (it - warmup) / (decay - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def evaluate(model, val, T, ctx, torch, F, batch=128):
    """Mean loss over every target of val, non-overlapping windows of T from
    the start (the last one shorter): train/evaluate.h's windows."""
    n = val.numel()
    starts = list(range(0, n - 1, T))
    total, count = 0.0, 0
    with torch.no_grad():
        i = 0
        while i < len(starts):
            length = min(T, n - 1 - starts[i])
            group = []
            while i < len(starts) and len(group) < batch and min(T, n - 1 - starts[i]) == length:
                group.append(starts[i])
                i += 1
            x = torch.stack([val[s:s + length] for s in group])
            y = torch.stack([val[s + 1:s + 1 + length] for s in group])
            with ctx:
                logits = model(x)
            loss = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum")
            total += float(loss)
            count += y.numel()
    return total / count


def cmd_torch(args):
    try:
        import torch
        from torch.nn import functional as F
    except ImportError as e:
        fail(f"PyTorch is not available to {sys.executable} ({e}); install python3-torch")
    import contextlib
    sys.path.insert(0, HERE)
    from nanogpt_model import GPT
    from bench_torch import blas_info

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    train_np, vocab = read_tokens(os.path.join(args.data, "train.bin"))
    val_np, _ = read_tokens(os.path.join(args.data, "val.bin"))
    train, val = torch.from_numpy(train_np), torch.from_numpy(val_np)
    T, B, L = args.block_size, args.batch_size, args.n_layer
    cfg = dict(vocab_size=vocab, block_size=T, n_layer=L, n_head=args.n_head, n_embd=args.n_embd, bias=False,
               tied=True, pos_encoding="learned", gelu="erf")
    model = GPT(cfg)
    # nanoGPT's _init_weights, then its scaled residual projections.
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            std = 0.02 / math.sqrt(2 * L) if name.endswith("c_proj.weight") else 0.02
            torch.nn.init.normal_(p, 0.0, std)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, args.beta2), eps=1e-8)
    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if args.bf16 else contextlib.nullcontext()
    warmup = min(args.warmup, args.steps)  # as tapegpt cuts it to a shorter run
    gen = torch.Generator().manual_seed(args.seed)

    os.makedirs(args.out, exist_ok=True)
    info = {k: v for k, v in vars(args).items() if k != "func"}
    info.update(framework=f"torch {torch.__version__}", dtype="bf16 autocast" if args.bf16 else "float32",
                omp_wait_policy=os.environ.get("OMP_WAIT_POLICY", "unset"), **blas_info())
    with open(os.path.join(args.out, "run.json"), "w") as f:
        json.dump(info, f, indent=1)
    log = open(os.path.join(args.out, "metrics.jsonl"), "w")

    def row(**r):
        log.write(json.dumps(r) + "\n")
        log.flush()

    model.train()
    train_s = 0.0

    def train_step(it, warmup, decay):
        nonlocal train_s
        t0 = time.perf_counter()
        lr = nanogpt_lr(it, args.lr, args.min_lr, warmup, decay)
        for g in opt.param_groups:
            g["lr"] = lr
        ix = torch.randint(len(train) - T, (B,), generator=gen)
        x = torch.stack([train[i:i + T] for i in ix])
        y = torch.stack([train[i + 1:i + 1 + T] for i in ix])
        with ctx:
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss_value = loss.item()
        seconds = time.perf_counter() - t0
        train_s += seconds
        row(step=it + 1, loss=loss_value, lr=lr, train_s=train_s, elapsed_s=elapsed())
        return seconds

    def evaluate_now(step):
        model.eval()
        v = evaluate(model, val, T, ctx, torch, F)
        model.train()
        row(step=step, val_loss=v, train_s=train_s, elapsed_s=elapsed())
        print(f"{info['dtype']}: step {step}: val loss {v:.4f} after {train_s:.1f} s of training", flush=True)

    def estimate_eval_s(batch=128):
        """evaluate()'s time: its first batch of windows, timed, times its number of batches."""
        windows = len(range(0, val.numel() - 1, T))
        x = torch.stack([val[s:s + T] for s in range(0, min(windows, batch) * T, T)])
        model.eval()
        t0 = time.perf_counter()
        with torch.no_grad(), ctx:
            model(x)
        seconds = time.perf_counter() - t0
        model.train()
        return seconds * math.ceil(windows / batch)

    # Wall seconds on the metrics rows: since training began, or under a
    # budget since the budget began.
    clock_zero = time.time() if args.started_at is None else args.started_at

    def elapsed():
        return time.time() - clock_zero

    if args.budget_s is None:
        steps = args.steps
        for it in range(args.steps):
            train_step(it, warmup, args.steps)
            step = it + 1
            if step % args.eval_every == 0 or step == args.steps:
                evaluate_now(step)
    else:
        steps = fit_steps_to_budget(args, train_step, evaluate_now, estimate_eval_s, elapsed, info)
        with open(os.path.join(args.out, "run.json"), "w") as f:
            json.dump(info, f, indent=1)
    log.close()
    if args.save:
        # nanoGPT's ckpt.pt layout (model, model_args), which scripts/nanogpt_to_h5.py reads.
        # The parameters only (no mask buffers); the tied head is wte, named once.
        state = {name: p.detach() for name, p in model.named_parameters()}
        model_args = dict(n_layer=L, n_head=args.n_head, n_embd=args.n_embd, block_size=T, bias=False,
                          vocab_size=vocab, dropout=0.0)
        torch.save({"model": state, "model_args": model_args, "iter_num": steps},
                   args.save)


# Note [Fitting nanoGPT's recipe to a wall-time budget]
# nanoGPT's CPU recipe fixes max_iters (= lr_decay_iters). Given a budget
# instead, as `tapegpt train --budget` is, the run measures its own speed
# and the measurement counts against the budget: the first PROBE_STEPS
# steps are the run's real first steps (still in warm-up, whose learning
# rate does not depend on max_iters), timed over their second half (the
# first steps pay one-time costs); one batch of the evaluation's windows is
# timed and scaled to the whole split. Whole-split evaluations may take
# EVAL_SHARE of the budget, at most MAX_EVALS, the last at the end (the
# reported loss); max_iters is set so that the rest of the steps and those
# evaluations fill what is left of the budget, less a safety share for a
# machine that slows down. Like tapegpt's guard, the run then revises
# max_iters every REFIT_EVERY steps from the mean step time it has seen,
# while less than REFIT_UNTIL of it is done (the cosine still near its
# top), so that a probe that measured the machine slower or faster than it
# runs does not leave PyTorch with less (or more) time than tapegpt gets.
# Should the machine slow down after that, the run stops early where the
# final evaluation still fits, and says so.
PROBE_STEPS = 20
EVAL_SHARE = 0.05
MAX_EVALS = 5
SAFETY = 0.95
REFIT_EVERY = 25
REFIT_UNTIL = 0.5


def fit_steps_to_budget(args, train_step, evaluate_now, estimate_eval_s, elapsed, info):
    """Trains for args.budget_s wall seconds since args.started_at; returns the steps taken."""
    budget = args.budget_s
    half = PROBE_STEPS // 2
    probe_s = 0.0
    for it in range(PROBE_STEPS):
        seconds = train_step(it, args.warmup, args.warmup)  # warm-up only: the decay end does not matter yet
        if it >= half:
            probe_s += seconds
    step_s = probe_s / (PROBE_STEPS - half)
    eval_s = estimate_eval_s()
    n_evals = max(1, min(MAX_EVALS, int(EVAL_SHARE * budget / eval_s)))

    def fill(step, evals_left):
        """The step count that fills what is left of the budget, evaluations paid for."""
        left = budget * SAFETY - elapsed() - evals_left * eval_s
        return step + max(0, int(left / step_s))

    max_iters = fill(PROBE_STEPS, n_evals)
    warmup = min(args.warmup, max_iters)
    info.update(budget_s=budget, probe_steps=PROBE_STEPS, probe_step_s=step_s, eval_s_estimate=eval_s,
                evaluations=n_evals, planned_max_iters=max_iters, safety=SAFETY)
    print(f"budget {budget:.0f} s: probe steps at {step_s * 1e3:.1f} ms, a whole-split evaluation about "
          f"{eval_s:.1f} s, {elapsed():.1f} s spent; max_iters = lr_decay_iters = {max_iters}, "
          f"{n_evals} evaluation(s)", flush=True)
    step, last_eval, evals_done, trained, trained_s, revisions = PROBE_STEPS, PROBE_STEPS, 0, 0, 0.0, []
    eval_every = -(-(max_iters - PROBE_STEPS) // n_evals)  # n_evals in all, the last at max_iters
    while step < max_iters:
        if elapsed() + step_s + eval_s > budget:
            info["stopped_early_at"] = step
            print(f"stopping early at step {step} of {max_iters}: the machine slowed down", flush=True)
            break
        trained_s += train_step(step, warmup, max_iters)
        trained += 1
        step += 1
        if trained % REFIT_EVERY == 0 and step < REFIT_UNTIL * max_iters:
            step_s = trained_s / trained
            revised = fill(step, n_evals - evals_done)
            if revised != max_iters:
                revisions.append([step, revised])
                max_iters = revised
                eval_every = -(-(max_iters - last_eval) // max(1, n_evals - evals_done))
        if step - last_eval >= eval_every and step < max_iters:
            t0 = elapsed()
            evaluate_now(step)
            eval_s = max(eval_s, elapsed() - t0)
            evals_done += 1
            last_eval = step
    if revisions:
        print(f"max_iters revised {len(revisions)} time(s) from the steps' mean time: {revisions[0][1]} at step "
              f"{revisions[0][0]}, ..., {max_iters} at step {revisions[-1][0]}", flush=True)
    info.update(max_iters=max_iters, lr_decay_iters=max_iters, revisions=revisions)
    evaluate_now(step)
    return step


def read_run(path):
    rows = []
    try:
        with open(os.path.join(path, "metrics.jsonl")) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        fail(f"cannot read {path}/metrics.jsonl: {e.strerror}")
    except json.JSONDecodeError:
        fail(f"{path}/metrics.jsonl is not JSON lines")
    evals = {}
    for r in rows:
        if "val_loss" in r and r.get("val_loss") is not None:
            if "train_s" not in r:
                fail(f"{path}/metrics.jsonl has no train_s (written by a tapegpt from before it)")
            evals[r["step"]] = (r["val_loss"], r["train_s"])
    if not evals:
        fail(f"{path}/metrics.jsonl holds no evaluation")
    steps = sorted(evals)
    train_total = max((r["train_s"] for r in rows if "loss" in r and "train_s" in r), default=evals[steps[-1]][1])
    return dict(evals=[(s, *evals[s]) for s in steps], final_val=evals[steps[-1]][0], steps=steps[-1],
                train_s=train_total)


def cmd_summary(args):
    runs = {}
    for spec in args.run:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            fail(f"--run wants NAME=RUNDIR (got '{spec}')")
        runs[name] = read_run(path)
    baseline = args.baseline or next(iter(runs))
    if baseline not in runs:
        fail(f"--baseline {baseline} is none of the runs ({', '.join(runs)})")
    target = runs[baseline]["final_val"]
    for r in runs.values():
        r["reached"] = next(((s, t) for s, v, t in r["evals"] if v <= target), None)
    base_time = runs[baseline]["reached"][1]
    lines = [f"target: validation loss {target:.4f} ({baseline}'s final, whole validation split)", "",
             "| run | steps | final val loss | training s | reaches target at step | training s to target "
             "| × " + baseline + " |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in runs.items():
        if r["reached"]:
            step, t = r["reached"]
            reach = f"{step} | {t:.1f} | {t / base_time:.2f}"
        else:
            reach = "not reached | — | —"
        lines.append(f"| {name} | {r['steps']} | {r['final_val']:.4f} | {r['train_s']:.1f} | {reach} |")
    text = "\n".join(lines)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text + "\n")
    if args.json:
        out = dict(target=target, baseline=baseline,
                   runs={n: dict(steps=r["steps"], final_val_loss=r["final_val"], train_s=r["train_s"],
                                 target_step=r["reached"][0] if r["reached"] else None,
                                 target_train_s=r["reached"][1] if r["reached"] else None,
                                 ratio=r["reached"][1] / base_time if r["reached"] else None,
                                 evals=r["evals"]) for n, r in runs.items()})
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command")
    t = sub.add_parser("torch", help="train nanoGPT's CPU recipe in PyTorch, writing metrics.jsonl")
    t.add_argument("--data", required=True, help="a directory made by 'tapegpt prepare'")
    t.add_argument("--out", required=True)
    t.add_argument("--bf16", action="store_true", help="forward and loss under torch.autocast bfloat16")
    t.add_argument("--steps", type=int, default=2000)
    t.add_argument("--eval-every", type=int, default=100)
    t.add_argument("--threads", type=int, default=os.cpu_count())
    t.add_argument("--seed", type=int, default=1337)
    t.add_argument("--n-layer", type=int, default=4)
    t.add_argument("--n-head", type=int, default=4)
    t.add_argument("--n-embd", type=int, default=128)
    t.add_argument("--block-size", type=int, default=64)
    t.add_argument("--batch-size", type=int, default=12)
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--min-lr", type=float, default=1e-4)
    t.add_argument("--warmup", type=int, default=100)
    t.add_argument("--beta2", type=float, default=0.99)
    t.add_argument("--weight-decay", type=float, default=0.1)
    t.add_argument("--grad-clip", type=float, default=1.0)
    t.add_argument("--budget-s", type=float,
                   help="instead of --steps: fit max_iters and lr_decay_iters to this many wall seconds "
                        "(Note [Fitting nanoGPT's recipe to a wall-time budget])")
    t.add_argument("--started-at", type=float,
                   help="with --budget-s: the Unix time the budget began (default: when training starts)")
    t.add_argument("--save", help="also write the final model there as a nanoGPT ckpt.pt (model, model_args)")
    t.set_defaults(func=cmd_torch)
    s = sub.add_parser("summary", help="time to the baseline's final validation loss, per run")
    s.add_argument("--run", action="append", required=True, help="NAME=RUNDIR (a metrics.jsonl there)")
    s.add_argument("--baseline", help="the run whose final validation loss is the target (default: the first)")
    s.add_argument("--md", help="also write the table here")
    s.add_argument("--json", help="also write the figures here")
    s.set_defaults(func=cmd_summary)
    args = ap.parse_args()
    if not getattr(args, "func", None):
        ap.print_help()
        sys.exit(2)
    if args.command == "torch" and (args.steps < 1 or args.eval_every < 1):
        fail("--steps and --eval-every must be at least 1")
    if args.command == "torch" and args.budget_s is not None and args.budget_s <= 0:
        fail("--budget-s must be positive")
    args.func(args)


if __name__ == "__main__":
    main()
