#!/usr/bin/python3
"""The parameter table against nanoGPT: for every tied/bias/position/norm/MLP variant,
our names and shapes, in order, must be the parameters of nanoGPT's
state_dict (scripts/nanogpt_model.py), and their sizes must sum to what torch
counts. state_dict also holds buffers (the causal mask, the sinusoid and RoPE tables)
and, when tied, lm_head.weight as a second name for wte's storage: neither is
a parameter of ours, so both are left out.

Usage: test_param_names.py PARAM_TABLE_DUMP. Exit 0 pass, 1 fail, 77 torch
unavailable (1 under TAPEGPT_NO_SKIP=1: tests/support/no_skip.py).
"""
import itertools
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
sys.path.insert(0, os.path.join(here, "..", "..", "scripts"))
from no_skip import skip_or_fail  # noqa: E402

try:
    import torch  # noqa: F401
    import nanogpt_model
except ImportError as e:
    skip_or_fail(f"torch is not importable ({e})")


def ours(dump, cfg):
    args = [f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in cfg.items()]
    out = subprocess.run([dump] + args, check=True, capture_output=True, text=True).stdout
    table = []
    for line in out.splitlines():
        name, *dims = line.split()
        table.append((name, [int(d) for d in dims]))
    return table


def nanogpt(cfg):
    model = nanogpt_model.GPT(cfg)
    buffers = {name for name, _ in model.named_buffers()}
    table = [(name, list(t.shape)) for name, t in model.state_dict().items()
             if name not in buffers and not (cfg["tied"] and name == "lm_head.weight")]
    return table, sum(p.numel() for p in model.parameters())


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def main():
    dump = sys.argv[1]
    failures = 0
    variants = itertools.product([True, False], [True, False], ["learned", "sinusoidal", "rope"],
                                 ["layernorm", "rmsnorm"], ["gelu", "relu2", "swiglu"])
    for tied, bias, pos, norm, mlp in variants:
        cfg = dict(vocab_size=37, block_size=12, n_layer=3, n_head=2, n_embd=8,
                   bias=bias, tied=tied, pos_encoding=pos, norm=norm, mlp=mlp)
        mine = ours(dump, cfg)
        theirs, count = nanogpt(cfg)
        label = f"tied={tied} bias={bias} pos={pos} norm={norm} mlp={mlp}"
        if mine != theirs:
            failures += 1
            print(f"FAIL {label}: tables differ")
            for a, b in itertools.zip_longest(mine, theirs):
                if a != b:
                    print(f"  ours {a}  nanoGPT {b}")
        elif sum(numel(shape) for _, shape in mine) != count:
            failures += 1
            print(f"FAIL {label}: we count {sum(numel(s) for _, s in mine)}, torch {count}")
        else:
            print(f"ok   {label}: {len(mine)} tensors, {count} parameters")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
