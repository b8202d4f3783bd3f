#!/usr/bin/python3
"""`tapegpt export --format hf` against PyTorch forwards with Hugging Face's
semantics: the files must compute what tapegpt computes.

  GPT-2 family  model.safetensors + config.json → scripts/make_hf_gpt2.py's
                hf_forward (Conv1D x @ W + b, gelu_new, causal mask buffer,
                tied head), for a learned-position model with biases and a
                sinusoidal one without (its table as wpe, zero biases).
  Llama family  model.safetensors + config.json → LlamaForCausalLM's forward
                written out below (RMSNorm, rotate_half RoPE with
                inv_freq = rope_theta^(-2i/head_dim), SwiGLU, biases per
                attention_bias / mlp_bias), with and without biases.
  Arcee, Qwen3  the same forward as ArceeForCausalLM computes it (hidden_act
                relu2: down(relu(up(x))²), no gate_proj) for --budget's
                recipe, tied and untied, and as Qwen3ForCausalLM does (q_norm
                and k_norm, RMSNorm over each head with the file's gains,
                before RoPE) for the Llama mix with --qk-norm.
Both in float64, against tapegpt's float32 logits for the same ids:
max|tapegpt - torch| / max|torch| <= 1e-5, as tests/import checks import.

Run by CTest as: test_export_hf_torch.py TAPEGPT IMPORT_LOGITS_DUMP
Exit 77 (skipped) without torch/numpy, unless TAPEGPT_NO_SKIP=1 (then it fails).
"""
import json
import math
import os
import struct
import subprocess
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, os.path.join(REPO, "tests", "support"))
import no_skip  # noqa: E402
import testutil  # noqa: E402

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
    import make_hf_gpt2 as hf
except ImportError as e:
    no_skip.skip_or_fail(f"{e}; install python3-torch python3-numpy")

TAPEGPT = DUMP = None
T = 16
SHAPE = ["--n-layer", "2", "--n-head", "2", "--n-embd", "32", "--block-size", str(T), "--batch-size", "8",
         "--max-steps", "20", "--lr", "1e-2", "--warmup", "2", "--precision", "fp32", "--threads", "2",
         "--eval-steps", "0"]


def run(*args):
    return testutil.run(TAPEGPT, *args, timeout=300)


def read_safetensors(path):
    """{name: float64 tensor} of an F32 safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        assert meta["dtype"] == "F32", name
        b, e = meta["data_offsets"]
        arr = np.frombuffer(data[8 + n + b:8 + n + e], dtype="<f4").reshape(meta["shape"])
        out[name] = torch.from_numpy(arr.astype(np.float64))
    return out


def llama_forward(sd, cfg, ids):
    """LlamaForCausalLM's logits (transformers' modeling_llama), float64."""
    B, Tn = ids.shape
    C, NH, hd = cfg["hidden_size"], cfg["num_attention_heads"], cfg["head_dim"]
    eps = cfg["rms_norm_eps"]

    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    def linear(x, name):
        y = x @ sd[name + ".weight"].T
        return y + sd[name + ".bias"] if name + ".bias" in sd else y

    def rotate_half(x):
        x1, x2 = x[..., :hd // 2], x[..., hd // 2:]
        return torch.cat((-x2, x1), dim=-1)

    inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    freqs = torch.arange(Tn, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.ones(Tn, Tn, dtype=torch.bool).tril()
    h = sd["model.embed_tokens.weight"][ids]
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        a = rms(h, sd[p + "input_layernorm.weight"])
        q, k, v = (linear(a, p + "self_attn." + n).view(B, Tn, NH, hd).transpose(1, 2)
                   for n in ("q_proj", "k_proj", "v_proj"))
        if cfg["model_type"] == "qwen3":  # Qwen3Attention: q_norm, k_norm per head, before RoPE
            q, k = rms(q, sd[p + "self_attn.q_norm.weight"]), rms(k, sd[p + "self_attn.k_norm.weight"])
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        att = att.masked_fill(~mask, float("-inf"))
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(B, Tn, C)
        h = h + linear(y, p + "self_attn.o_proj")
        m = rms(h, sd[p + "post_attention_layernorm.weight"])
        if cfg["hidden_act"] == "relu2":  # ArceeMLP: down(relu2(up(x)))
            h = h + linear(F.relu(linear(m, p + "mlp.up_proj")).pow(2), p + "mlp.down_proj")
        else:
            assert cfg["hidden_act"] == "silu", cfg["hidden_act"]
            h = h + linear(F.silu(linear(m, p + "mlp.gate_proj")) * linear(m, p + "mlp.up_proj"), p + "mlp.down_proj")
    h = rms(h, sd["model.norm.weight"])
    head = sd["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else sd["lm_head.weight"]
    return h @ head.T


class ExportHfTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-export-hf-torch-")
        with open(os.path.join(REPO, "data", "tinyshakespeare.txt"), encoding="utf-8") as f:
            text = f.read()[:20000]
        corpus = os.path.join(cls.tmp, "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write(text)
        cls.data = os.path.join(cls.tmp, "data")
        run("prepare", "--input", corpus, "--tokenizer", "char", "--out", cls.data)

    def exported(self, name, flags):
        """(tapegpt's logits, HF files' state dict, config.json, ids) of a model."""
        out = os.path.join(self.tmp, name)
        run("train", "--data", self.data, "--out", out, *SHAPE, *flags)
        ckpt = os.path.join(out, "ckpt.h5")
        hfdir = os.path.join(self.tmp, name + "-hf")
        run("export", "--ckpt", ckpt, "--format", "hf", "--out", hfdir)
        with open(os.path.join(hfdir, "config.json")) as f:
            cfg = json.load(f)
        sd = read_safetensors(os.path.join(hfdir, "model.safetensors"))
        ids = torch.randint(0, cfg["vocab_size"], (2, T), generator=torch.Generator().manual_seed(1))
        idsbin, logits = os.path.join(self.tmp, "ids.bin"), os.path.join(self.tmp, "logits.bin")
        with open(idsbin, "wb") as f:
            f.write(ids.to(torch.int32).numpy().astype("<i4").tobytes())
        subprocess.run([DUMP, ckpt, idsbin, "2", str(T), logits], check=True)
        ours = torch.from_numpy(np.fromfile(logits, dtype="<f4").astype(np.float64)).view(2, T, -1)
        return ours, sd, cfg, ids

    def assert_close(self, ours, theirs):
        err = (ours - theirs).abs().max().item() / theirs.abs().max().item()
        self.assertLessEqual(err, 1e-5, f"max|tapegpt - torch| / max|torch| = {err:.3e}")

    def check_gpt2(self, name, flags):
        ours, sd, cfg, ids = self.exported(name, flags)
        self.assertEqual(cfg["architectures"], ["GPT2LMHeadModel"])
        sd = {k[len("transformer."):]: v for k, v in sd.items()}
        for l in range(cfg["n_layer"]):  # the causal mask buffer HF keeps in every block
            sd[f"h.{l}.attn.bias"] = torch.ones(T, T).tril().view(1, 1, T, T)
        self.assert_close(ours, hf.hf_forward(sd, cfg, ids))

    def test_gpt2_learned_with_biases(self):
        self.check_gpt2("gpt2", [])

    def test_gpt2_sinusoidal_without_biases(self):
        self.check_gpt2("gpt2-sin", ["--pos-encoding", "sinusoidal", "--no-bias"])

    def check_llama(self, name, flags, arch="LlamaForCausalLM", mlp="swiglu"):
        ours, sd, cfg, ids = self.exported(name, ["--norm", "rmsnorm", "--mlp", mlp, "--pos-encoding", "rope",
                                                  *flags])
        self.assertEqual(cfg["architectures"], [arch])
        self.assert_close(ours, llama_forward(sd, cfg, ids))

    def test_llama_with_biases(self):
        self.check_llama("llama", [])

    def test_llama_untied_without_biases(self):
        self.check_llama("llama-nb", ["--no-bias", "--untied"])

    def test_arcee_budget_recipe(self):
        self.check_llama("arcee", ["--no-bias", "--optimizer", "muon"], "ArceeForCausalLM", "relu2")

    def test_arcee_budget_recipe_untied(self):
        self.check_llama("arcee-untied", ["--no-bias", "--untied"], "ArceeForCausalLM", "relu2")

    def test_qwen3_qk_norm(self):
        self.check_llama("qwen3", ["--no-bias", "--qk-norm"], "Qwen3ForCausalLM")


if __name__ == "__main__":
    TAPEGPT, DUMP = sys.argv[1:3]
    unittest.main(argv=sys.argv[:1], verbosity=2)
