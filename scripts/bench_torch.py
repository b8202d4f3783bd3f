#!/usr/bin/python3
"""Times a nanoGPT-style training step in PyTorch on the CPU, for
scripts/bench.sh to compare with `tapegpt bench` on the same shapes.

Same work as tapegpt's step: forward, mean cross-entropy over B×T
positions, backward, clip_grad_norm_(1.0), AdamW (weight decay 0.1 on 2-D
weights). Prints one JSON object: median step time, tokens/s, peak RSS,
and KV-cache sampling speed (batch 1).
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch
    from torch.nn import functional as F
    from nanogpt_model import GPT
except ImportError as e:
    print(json.dumps({"error": f"torch not available: {e}"}))
    sys.exit(77)

SHAPES = {  # vocab, layers, heads, n_embd, T, B
    "S": (65, 4, 4, 256, 128, 8),
    "M": (65, 6, 6, 384, 256, 8),
    "G": (50257, 12, 12, 768, 64, 4),
}


def sample_with_cache(model, cfg, prompt_tokens, new_tokens):
    """Greedy decoding with a hand-written KV cache over the nanoGPT weights."""
    tr = model.transformer
    C, NH = cfg["n_embd"], cfg["n_head"]
    hs = C // NH
    caches = [([], []) for _ in tr.h]
    def step(token, pos):
        x = tr.wte.weight[token] + tr.wpe.weight[pos]
        for block, (ks, vs) in zip(tr.h, caches):
            h = block.ln_1(x[None])[0]
            q, k, v = block.attn.c_attn(h).split(C)
            ks.append(k.view(NH, hs))
            vs.append(v.view(NH, hs))
            K = torch.stack(ks, 1)  # NH, t, hs
            V = torch.stack(vs, 1)
            att = torch.softmax((K @ q.view(NH, hs, 1)).squeeze(-1) / hs ** 0.5, dim=-1)
            y = (att.unsqueeze(1) @ V).reshape(C)
            x = x + block.attn.c_proj(y)
            x = x + block.mlp(block.ln_2(x[None])[0])
        return model.lm_head(tr.ln_f(x[None])[0])
    with torch.no_grad():
        for i in range(prompt_tokens):
            logits = step(i % cfg["vocab_size"], i)
        t0 = time.perf_counter()
        pos = prompt_tokens
        for _ in range(new_tokens):
            logits = step(int(torch.argmax(logits)), pos)
            pos += 1
        return new_tokens / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shape", default="S", choices=sorted(SHAPES))
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--sample-tokens", type=int, default=64)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    V, L, NH, C, T, B = SHAPES[args.shape]
    cfg = dict(vocab_size=V, block_size=T, n_layer=L, n_head=NH, n_embd=C, bias=True, tied=True,
               pos_encoding="learned")
    model = GPT(cfg)
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            torch.nn.init.normal_(p, 0.0, 0.02)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}], lr=1e-4, betas=(0.9, 0.95), eps=1e-8)
    times, opt_times = [], []
    for s in range(args.warmup + args.steps):
        x = torch.randint(0, V, (B, T))
        y = torch.randint(0, V, (B, T))
        t0 = time.perf_counter()
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, V), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        t_opt = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        t1 = time.perf_counter()
        if s >= args.warmup:
            times.append(t1 - t0)
            opt_times.append(t1 - t_opt)
    step = statistics.median(times)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = dict(shape=args.shape, framework=f"torch {torch.__version__}", threads=args.threads,
               step_s=step, tokens_per_s=B * T / step, optimizer_s=statistics.median(opt_times),
               peak_rss_mib=rss / 2**20)
    if args.sample_tokens:
        # Sampling runs 16 + N positions: a model with room for them (the
        # context length does not change the work per token).
        scfg = dict(cfg, block_size=max(T, 16 + args.sample_tokens))
        smodel = GPT(scfg)
        out["sample_tokens_per_s"] = sample_with_cache(smodel, scfg, 16, args.sample_tokens)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
