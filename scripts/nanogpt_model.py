"""A nanoGPT-style GPT in PyTorch, written out: the reference that
torch_parity.py checks tapegpt against and that bench_torch.py times.

cfg keys: vocab_size, block_size, n_layer, n_head, n_embd, bias, tied,
pos_encoding ("learned" or "sinusoidal"), gelu ("tanh", the default, or
"erf"). Parameter names are nanoGPT's.
"""
import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (torch 1.13's has no bias=False)."""

    def __init__(self, n, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.bias = nn.Parameter(torch.zeros(n)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


SQRT_2_OVER_PI = (2.0 / np.pi) ** 0.5


def new_gelu(x):
    """GPT-2's GELU, tanh approximation (nanoGPT's new_gelu)."""
    return 0.5 * x * (1.0 + torch.tanh(SQRT_2_OVER_PI * (x + 0.044715 * torch.pow(x, 3.0))))


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg["n_embd"]
        self.n_head = cfg["n_head"]
        self.c_attn = nn.Linear(C, 3 * C, bias=cfg["bias"])  # rows q…, k…, v…
        self.c_proj = nn.Linear(C, C, bias=cfg["bias"])
        T = cfg["block_size"]
        self.register_buffer("mask", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / hs ** 0.5)
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg["n_embd"]
        self.c_fc = nn.Linear(C, 4 * C, bias=cfg["bias"])
        self.c_proj = nn.Linear(4 * C, C, bias=cfg["bias"])
        # erf: nn.GELU(), as nanoGPT's current model.py
        self.gelu = nn.GELU() if cfg.get("gelu", "tanh") == "erf" else new_gelu

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = LayerNorm(cfg["n_embd"], cfg["bias"])
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = LayerNorm(cfg["n_embd"], cfg["bias"])
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        V, T, C = cfg["vocab_size"], cfg["block_size"], cfg["n_embd"]
        parts = dict(wte=nn.Embedding(V, C))
        if cfg["pos_encoding"] == "learned":
            parts["wpe"] = nn.Embedding(T, C)
        parts["h"] = nn.ModuleList([Block(cfg) for _ in range(cfg["n_layer"])])
        parts["ln_f"] = LayerNorm(C, cfg["bias"])
        self.transformer = nn.ModuleDict(parts)
        self.lm_head = nn.Linear(C, V, bias=False)
        if cfg["tied"]:
            self.lm_head.weight = self.transformer.wte.weight
        # Fixed sinusoidal table, computed here independently of our C++:
        # PE[t,2i] = sin(t / 10000^(2i/C)), PE[t,2i+1] = cos(same).
        t = torch.arange(T, dtype=torch.float64)[:, None]
        two_i = torch.arange(0, C, 2, dtype=torch.float64)[None, :]
        angle = t / torch.pow(10000.0, two_i / C)
        pe = torch.zeros(T, C, dtype=torch.float64)
        pe[:, 0::2] = torch.sin(angle)
        pe[:, 1::2] = torch.cos(angle)
        self.register_buffer("sinusoid", pe)

    def forward(self, idx):
        B, T = idx.size()
        pos = torch.arange(T)
        if "wpe" in self.transformer:
            pos_emb = self.transformer.wpe(pos)
        else:
            pos_emb = self.sinusoid[:T].to(self.transformer.wte.weight.dtype)
        x = self.transformer.wte(idx) + pos_emb
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


