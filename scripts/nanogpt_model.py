"""A nanoGPT-style GPT in PyTorch, written out: the reference that
torch_parity.py checks tapegpt against and that bench_torch.py times.

cfg keys: vocab_size, block_size, n_layer, n_head, n_embd, bias, tied,
pos_encoding ("learned", "sinusoidal" or "rope"), gelu ("tanh", the default,
or "erf"), norm ("layernorm", the default, or "rmsnorm"), mlp ("gelu", the
default, "relu2" or "swiglu"), qk_norm ("off", the default, or "on"),
logit_softcap ("off", the default, or a cap: "15", "20", "30"): the model
choices of nn/config.h (Note [Model choices]), each written out here
independently of the C++ kernels.
Parameter names are nanoGPT's.
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


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + 1e-5) * weight: a gain, no bias, no centring."""

    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.weight


def make_norm(cfg):
    if cfg.get("norm", "layernorm") == "rmsnorm":
        return RMSNorm(cfg["n_embd"])
    return LayerNorm(cfg["n_embd"], cfg["bias"])


def rope_tables(T, hs):
    """cos and sin [T, hs] of RoPE's angles t·θ_i, θ_i = 10000^(-2i/hs) for
    i < hs/2, each repeated for the pair (i, i + hs/2); float64, cast by .to()."""
    theta = torch.pow(10000.0, -torch.arange(0, hs // 2, dtype=torch.float64) * 2.0 / hs)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * theta[None, :]
    angle = torch.cat([angle, angle], dim=-1)
    return torch.cos(angle), torch.sin(angle)


def rotate_half(x):
    """(x1, x2) -> (-x2, x1) over the two halves of the last dimension."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


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
        self.rope = cfg["pos_encoding"] == "rope"
        self.qk_norm = cfg.get("qk_norm", "off") == "on"
        self.sdpa = cfg.get("sdpa", False)  # F.scaled_dot_product_attention (PyTorch 2)
        if self.rope:
            cos, sin = rope_tables(T, C // self.n_head)
            self.register_buffer("rope_cos", cos)
            self.register_buffer("rope_sin", sin)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        if self.rope:  # q and k of every head rotated to positions 0..T-1; v as is
            cos, sin = self.rope_cos[:T], self.rope_sin[:T]
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        if self.qk_norm:  # each head's q and k RMS-normed, no gain (nanochat's norm(q), norm(k))
            q = q * torch.rsqrt(q.pow(2).mean(-1, keepdim=True) + 1e-5)
            k = k * torch.rsqrt(k.pow(2).mean(-1, keepdim=True) + 1e-5)
        if self.sdpa:  # PyTorch 2's fused causal attention (nanoGPT's flash path)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / hs ** 0.5)
            att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg["n_embd"]
        kind = cfg.get("mlp", "gelu")
        # SwiGLU: c_fc's rows are the gate a (first 4C) then the value b.
        self.c_fc = nn.Linear(C, (8 if kind == "swiglu" else 4) * C, bias=cfg["bias"])
        self.c_proj = nn.Linear(4 * C, C, bias=cfg["bias"])
        # The activation between c_fc and c_proj, whatever --mlp picks (named
        # gelu for torch_parity.py's positive control, which wraps it).
        if kind == "relu2":
            self.gelu = relu2
        elif kind == "swiglu":
            self.gelu = swiglu
        else:  # erf: nn.GELU(), as nanoGPT's current model.py
            self.gelu = nn.GELU() if cfg.get("gelu", "tanh") == "erf" else new_gelu

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


def relu2(x):
    return F.relu(x) ** 2


def swiglu(x):
    """silu(a) * b for x = [a | b] split in halves on the last dimension."""
    a, b = x.chunk(2, dim=-1)
    return F.silu(a) * b


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = make_norm(cfg)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = make_norm(cfg)
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
        parts["ln_f"] = make_norm(cfg)
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
        x = self.transformer.wte(idx)
        if "wpe" in self.transformer:
            x = x + self.transformer.wpe(pos)
        elif self.cfg["pos_encoding"] == "sinusoidal":
            x = x + self.sinusoid[:T].to(self.transformer.wte.weight.dtype)
        # rope: nothing added here; each attention rotates its q and k
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        cap = self.cfg.get("logit_softcap", "off")
        if cap != "off":  # modded-nanoGPT's and nanochat's soft-cap: cap * tanh(logits / cap)
            logits = float(cap) * torch.tanh(logits / float(cap))
        return logits


