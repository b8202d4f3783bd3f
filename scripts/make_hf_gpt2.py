#!/usr/bin/python3
"""Writes a random GPT-2 in Hugging Face's exact on-disk layout: model.safetensors
(Conv1D weights as (in, out), the h.N.attn.bias / h.N.attn.masked_bias
buffers, "__metadata__": {"format": "pt"}, tensors sorted as the safetensors
package sorts them) and config.json. No safetensors or transformers package is
needed: the file is written by hand (8-byte little-endian header length, JSON
header padded with spaces to a multiple of 8, raw little-endian data).

Used by tests/import/test_import.py (tiny models, F32/F16/BF16) and for the
fine-tuning benchmark (the real 124M shape, random weights):

    /usr/bin/python3 scripts/make_hf_gpt2.py --out /tmp/gpt2-random \\
        --n-layer 12 --n-head 12 --n-embd 768 --n-positions 1024 --vocab-size 50257

Needs torch and numpy (Debian: python3-torch python3-numpy).
"""
import argparse
import json
import math
import os
import struct

import numpy as np
import torch

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def random_gpt2(cfg, seed=0, std=0.02):
    """A GPT-2 state dict in HF's layout and names (GPT2Model, no prefix),
    float32. Non-zero biases and LayerNorm parameters near 1, so that a
    wrong transpose, a missing bias or a swapped LayerNorm shows in logits."""
    g = torch.Generator().manual_seed(seed)
    C, V, P, L = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"], cfg["n_layer"]

    def randn(*shape, s=std):
        return torch.randn(*shape, generator=g) * s

    sd = {"wte.weight": randn(V, C), "wpe.weight": randn(P, C, s=std / 2)}
    mask = torch.tril(torch.ones(P, P)).view(1, 1, P, P)
    for l in range(L):
        h = f"h.{l}."
        sd[h + "ln_1.weight"] = 1.0 + randn(C, s=0.1)
        sd[h + "ln_1.bias"] = randn(C, s=0.1)
        sd[h + "attn.c_attn.weight"] = randn(C, 3 * C)  # Conv1D: (in, out)
        sd[h + "attn.c_attn.bias"] = randn(3 * C, s=0.1)
        sd[h + "attn.c_proj.weight"] = randn(C, C)
        sd[h + "attn.c_proj.bias"] = randn(C, s=0.1)
        sd[h + "ln_2.weight"] = 1.0 + randn(C, s=0.1)
        sd[h + "ln_2.bias"] = randn(C, s=0.1)
        sd[h + "mlp.c_fc.weight"] = randn(C, 4 * C)
        sd[h + "mlp.c_fc.bias"] = randn(4 * C, s=0.1)
        sd[h + "mlp.c_proj.weight"] = randn(4 * C, C)
        sd[h + "mlp.c_proj.bias"] = randn(C, s=0.1)
        sd[h + "attn.bias"] = mask.clone()          # causal-mask buffer
        sd[h + "attn.masked_bias"] = torch.tensor(-1e4)
    sd["ln_f.weight"] = 1.0 + randn(C, s=0.1)
    sd["ln_f.bias"] = randn(C, s=0.1)
    return sd


def is_buffer(name):
    return name.endswith("attn.bias") and not name.endswith("c_attn.bias") or name.endswith("masked_bias")


def tensor_bytes(t, dtype):
    """Raw little-endian bytes of t in safetensors dtype `dtype`."""
    if dtype == "BOOL":
        return t.to(torch.bool).numpy().astype(np.uint8).tobytes()
    t = t.to(DTYPES[dtype]).contiguous()
    if dtype == "BF16":  # numpy has no bfloat16: write its bits
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def rounded(t, dtype):
    """t as the importer will see it: rounded to dtype, then float64."""
    if dtype == "BOOL":
        return t.to(torch.bool).to(torch.float64)
    return t.to(DTYPES[dtype]).to(torch.float64)


def safetensors_bytes(entries, metadata=None):
    """entries: list of (name, dtype string, shape list, raw bytes), laid out
    in the given order. Returns the whole file."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset, blobs = 0, []
    for name, dtype, shape, raw in entries:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def hf_entries(sd, dtype, prefix="", buffer_dtype=None, lm_head=False):
    """sd as the safetensors package writes it: sorted by dtype size (largest
    first), then by name."""
    size = {"F32": 4, "F16": 2, "BF16": 2, "BOOL": 1}
    items = []
    for name, t in sd.items():
        d = (buffer_dtype or dtype) if is_buffer(name) else dtype
        items.append((prefix + name, d, list(t.shape), tensor_bytes(t, d)))
    if lm_head:
        items.append(("lm_head.weight", dtype, list(sd["wte.weight"].shape), tensor_bytes(sd["wte.weight"], dtype)))
    items.sort(key=lambda e: (-size[e[1]], e[0]))
    return items


def hf_config(cfg):
    """config.json as Hugging Face's gpt2 repository has it (shape fields set)."""
    return {
        "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256,
        "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
        "n_ctx": cfg["n_positions"], "n_embd": cfg["n_embd"], "n_head": cfg["n_head"],
        "n_layer": cfg["n_layer"], "n_positions": cfg["n_positions"], "resid_pdrop": 0.1,
        "summary_activation": None, "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
        "summary_type": "cls_index", "summary_use_proj": True,
        "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
        "vocab_size": cfg["vocab_size"],
    }


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def hf_forward(sd, cfg, ids, eps=1e-5):
    """Logits of Hugging Face's GPT2LMHeadModel, written out: Conv1D is
    x @ W + b with W (in, out), gelu_new, the attn.bias buffer as the causal
    mask, the head tied to wte. sd: HF names (no prefix) -> float64 tensors."""
    import torch.nn.functional as F
    B, T = ids.shape
    C, NH = cfg["n_embd"], cfg["n_head"]
    hs = C // NH
    h = sd["wte.weight"][ids] + sd["wpe.weight"][:T]
    for l in range(cfg["n_layer"]):
        p = f"h.{l}."
        a = F.layer_norm(h, (C,), sd[p + "ln_1.weight"], sd[p + "ln_1.bias"], eps)
        qkv = a @ sd[p + "attn.c_attn.weight"] + sd[p + "attn.c_attn.bias"]
        q, k, v = (x.view(B, T, NH, hs).transpose(1, 2) for x in qkv.split(C, dim=2))
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hs)
        causal = sd[p + "attn.bias"][:, :, :T, :T].to(torch.bool)
        att = torch.where(causal, att, torch.tensor(torch.finfo(att.dtype).min, dtype=att.dtype))
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
        h = h + (y @ sd[p + "attn.c_proj.weight"] + sd[p + "attn.c_proj.bias"])
        m = F.layer_norm(h, (C,), sd[p + "ln_2.weight"], sd[p + "ln_2.bias"], eps)
        m = gelu_new(m @ sd[p + "mlp.c_fc.weight"] + sd[p + "mlp.c_fc.bias"])
        h = h + (m @ sd[p + "mlp.c_proj.weight"] + sd[p + "mlp.c_proj.bias"])
    h = F.layer_norm(h, (C,), sd["ln_f.weight"], sd["ln_f.bias"], eps)
    return h @ sd["wte.weight"].T


def write_model(out_dir, cfg, dtype="F32", seed=0, std=0.02, prefix="", buffer_dtype=None,
                lm_head=False, config=True):
    """Writes out_dir/model.safetensors (and config.json); returns the weights
    as the importer will read them (HF names, float64)."""
    os.makedirs(out_dir, exist_ok=True)
    sd = random_gpt2(cfg, seed, std)
    entries = hf_entries(sd, dtype, prefix, buffer_dtype, lm_head)
    with open(os.path.join(out_dir, "model.safetensors"), "wb") as f:
        f.write(safetensors_bytes(entries, {"format": "pt"}))
    if config:
        with open(os.path.join(out_dir, "config.json"), "w") as f:
            json.dump(hf_config(cfg), f, indent=2)
    return {n: rounded(t, (buffer_dtype or dtype) if is_buffer(n) else dtype) for n, t in sd.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="directory for model.safetensors and config.json")
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--n-head", type=int, default=2)
    ap.add_argument("--n-embd", type=int, default=32)
    ap.add_argument("--n-positions", type=int, default=64)
    ap.add_argument("--vocab-size", type=int, default=50257)
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="F32")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--std", type=float, default=0.02)
    ap.add_argument("--prefix", default="", help="name prefix, e.g. 'transformer.' (GPT2LMHeadModel)")
    ap.add_argument("--lm-head", action="store_true", help="also store lm_head.weight (= wte)")
    ap.add_argument("--no-config", action="store_true", help="write no config.json")
    a = ap.parse_args()
    cfg = dict(n_layer=a.n_layer, n_head=a.n_head, n_embd=a.n_embd, n_positions=a.n_positions,
               vocab_size=a.vocab_size)
    write_model(a.out, cfg, a.dtype, a.seed, a.std, a.prefix, None, a.lm_head, not a.no_config)
    print(f"make_hf_gpt2: wrote {a.out}/model.safetensors ({a.dtype})" + ("" if a.no_config else " and config.json"))


if __name__ == "__main__":
    main()
