#!/usr/bin/python3
"""End-to-end tests of `tapegpt export`, with real llama.cpp as the oracle.

Small models are trained a few steps (so they are not at initialisation) on
the start of Tiny Shakespeare plus PROBE, a text with newlines, runs of
spaces, tabs, punctuation, contractions, digits and non-ASCII, then:
  llama.cpp  each model exported to GGUF is loaded by node-llama-cpp 3.21.1's
             prebuilt llama.cpp (scripts/setup.sh installs it into .node/):
             its tokens of PROBE equal `tapegpt tokenize`'s, and over one
             full window (block_size predictions) its mean NLL is within
             2e-3 relative of `tapegpt eval`'s loss and its most likely next
             token is tapegpt's at every position. Models: char GPT-2 family
             (f32 and f16), the same with sinusoidal positions, no biases and
             an untied head, GPT-2 BPE (f32 and f16), our trained bpe with
             the gpt2 pre-split (prepare --bpe-split gpt2; f32 and f16; its
             PROBE tokens also checked to use merges), and the Llama family
             (RMSNorm, RoPE, SwiGLU) with the byte tokenizer and biases (f32
             and f16) and with the char tokenizer, untied, without biases, and
             LayerNorm + GELU + RoPE as llama.cpp's gptneox (char; byte,
             untied, without biases, f32 and f16), train --budget's recipe
             (RMSNorm, RoPE, ReLU², no biases) as llama.cpp's arcee (char,
             tied, trained with Muon; byte, untied; f32 and f16), and the
             Llama mix with --qk-norm and no biases as qwen3 (char, f32 and
             f16). Char models with biases
             get an added end-of-text token of probability 0 (Note [Silent
             end-of-text]); llama.cpp must give it exactly 0.
  refusals   options no runtime computes (ReLU² with LayerNorm, RMSNorm
             with GELU, SwiGLU with LayerNorm, ReLU² with QK-norm, a logit
             soft-cap, biases with arcee's and qwen3's mixes, --gelu erf for
             GGUF, GPT-NeoX's mix for Hugging Face; the line names the
             nearest exportable choice), the bpe tokenizer with the default byte-class split (the
             message says how to get an exportable one), an existing --out,
             a missing,
             corrupt or foreign checkpoint, bad flags: one error line, the
             right exit code, no file left behind.
  hf         --format hf of the GPT-2 BPE model: the files, config.json, and
             `tapegpt import` of the directory giving back the same model bit
             for bit; the LlamaForCausalLM, ArceeForCausalLM (tied and
             untied) and Qwen3ForCausalLM layouts (config.json, tensor
             names and shapes); the trained
             bpe (gpt2 split) model's vocab.json and merges.txt (its tokens
             and merges in byte-to-unicode spelling; `tapegpt import` reads
             GPT-2's own tokenizer only, so it is not imported back).
The per-case numbers are printed (the table in checkpoints/README.md).

Run by CTest as: test_export.py TAPEGPT IMPORT_LOGITS_DUMP EXPORT_PARAM_DIFF
The llama.cpp cases run node-llama-cpp with the Node.js of the Debian forky
folder (scripts/setup_forky.sh, through tests/support/forky.py); they skip
(exit 77) without that folder or node-llama-cpp, and fail instead under
TAPEGPT_NO_SKIP=1.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "support"))
import forky  # noqa: E402
import no_skip  # noqa: E402
import testutil  # noqa: E402

TAPEGPT = DUMP = DIFF = None
PACKAGE = os.path.join(REPO, ".node", "node_modules", "node-llama-cpp")
CHECK = os.path.join(REPO, "tests", "export", "llama_check.mjs")
T = 32  # block_size: one window is T predictions

PROBE = ("First Citizen:\nWe're  done -- aren't we?  I'll say 'no'.\n\n\n"
         "    Indented   line\twith\ttabs; numbers 12345 and 3.14!\n"
         "Café naïve — “quoted” ‘single’ 日本語 ✓ 🙂 Ünïcödé…\n"
         "  \"quote,\" she said, \"yes\",\"no\"\n\nEnd.")

# Every model: the same small shape, float32 training, a few steps.
SHAPE = ["--n-layer", "2", "--n-head", "2", "--n-embd", "32", "--block-size", str(T), "--batch-size", "8",
         "--lr", "1e-2", "--warmup", "2", "--precision", "fp32", "--threads", "2", "--eval-steps", "0"]
# The model flags of train --budget's recipe (train/budget/plan.cpp).
BUDGET_RECIPE = ["--norm", "rmsnorm", "--mlp", "relu2", "--pos-encoding", "rope", "--no-bias"]
# name: (tokenizer, extra training flags, dtypes checked in llama.cpp)
MODELS = {
    "char_gpt2": ("char", [], ["f32", "f16"]),
    "char_gpt2_sin": ("char", ["--pos-encoding", "sinusoidal", "--no-bias", "--untied"], ["f32"]),
    "gpt2_bpe": ("gpt2", [], ["f32", "f16"]),
    "bpe_gpt2_split": ("bpe-gpt2", [], ["f32", "f16"]),
    "llama_byte": ("byte", ["--norm", "rmsnorm", "--mlp", "swiglu", "--pos-encoding", "rope"], ["f32", "f16"]),
    "llama_char": ("char", ["--norm", "rmsnorm", "--mlp", "swiglu", "--pos-encoding", "rope", "--no-bias",
                            "--untied"], ["f32"]),
    "neox_char": ("char", ["--pos-encoding", "rope"], ["f32"]),
    "neox_byte": ("byte", ["--pos-encoding", "rope", "--no-bias", "--untied"], ["f32", "f16"]),
    # --budget's recipe (Muon, as --budget trains it): llama.cpp's arcee.
    "arcee_char": ("char", BUDGET_RECIPE + ["--optimizer", "muon"], ["f32", "f16"]),
    "arcee_byte_untied": ("byte", BUDGET_RECIPE + ["--untied"], ["f32", "f16"]),
    # The Llama mix with QK-norm and no biases: llama.cpp's qwen3.
    "qwen3_char": ("char", ["--norm", "rmsnorm", "--mlp", "swiglu", "--pos-encoding", "rope", "--qk-norm",
                            "--no-bias"], ["f32", "f16"]),
}
MEAN_NLL_REL = 2e-3  # the bound, for every dtype and KV cache
# prepare flags per data directory; the default is --tokenizer NAME.
PREPARE = {"bpe-gpt2": ["--tokenizer", "bpe", "--bpe-split", "gpt2", "--vocab-size", "400"]}


def run(*args, ok=True):
    return testutil.run(TAPEGPT, *args, ok=ok, timeout=300)


def tokenize(ckpt, text):
    return [int(x) for x in run("tokenize", "--ckpt", ckpt, "--text", text).stdout.split()]


def node_ok():
    """Why llama.cpp cannot run here, or None. Node.js is forky's (>= 20, as
    node-llama-cpp needs), run through tests/support/forky.py."""
    why = forky.why_not("node")
    if why:
        return why
    v = forky.run("node", "-p", "process.versions.node.split('.')[0]", timeout=60)
    if v.returncode != 0 or int(v.stdout.strip() or 0) < 20:
        return "Node.js >= 20 is needed for node-llama-cpp: forky's node says " + (v.stdout + v.stderr).strip()
    if not os.path.isfile(os.path.join(PACKAGE, "package.json")):
        return "node-llama-cpp is not installed in .node/ (run scripts/setup.sh)"
    return None


class Models:
    """The trained checkpoints, shared by the test classes (trained once)."""
    tmp = None
    ckpts = {}

    @classmethod
    def get(cls, name):
        if cls.tmp is None:
            import tempfile
            cls.tmp = tempfile.mkdtemp(prefix="tapegpt-export-")
            with open(os.path.join(REPO, "data", "tinyshakespeare.txt"), encoding="utf-8") as f:
                text = f.read()[:30000]
            cls.corpus = os.path.join(cls.tmp, "corpus.txt")
            with open(cls.corpus, "w", encoding="utf-8") as f:
                f.write(text + ("\n" + PROBE) * 20 + "\n")
        if name not in cls.ckpts:
            tokenizer, flags, _ = MODELS[name]
            data = os.path.join(cls.tmp, "data-" + tokenizer)
            if not os.path.isdir(data):
                run("prepare", "--input", cls.corpus, *PREPARE.get(tokenizer, ["--tokenizer", tokenizer]),
                    "--out", data)
            out = os.path.join(cls.tmp, name)
            run("train", "--data", data, "--out", out, *SHAPE, "--max-steps", "40", *flags)
            cls.ckpts[name] = os.path.join(out, "ckpt.h5")
        return cls.ckpts[name]


def tearDownModule():
    if Models.tmp:
        shutil.rmtree(Models.tmp, ignore_errors=True)


class LlamaCpp(unittest.TestCase):
    results = []

    @classmethod
    def setUpClass(cls):
        cls.why_not = node_ok()

    @classmethod
    def tearDownClass(cls):
        if cls.results:
            print("\nllama.cpp vs tapegpt over one window of %d predictions:" % T)
            print("%-14s %-5s %-8s %-7s %10s %12s %10s %10s" % ("model", "dtype", "KV", "arch", "mean NLL",
                                                               "tapegpt eval", "rel diff", "max |dNLL|"))
            for r in cls.results:
                print("%-14s %-5s %-8s %-7s %10.6f %12.6f %10.2e %10.2e  argmax %d/%d" % r)

    def check(self, name):
        if self.why_not:
            no_skip.skip_test_or_fail(self, self.why_not)
        ckpt = Models.get(name)
        tmp = os.path.dirname(ckpt)
        ids = tokenize(ckpt, PROBE)
        self.assertGreater(len(ids), T, "PROBE must give a full window")
        if name == "bpe_gpt2_split":  # merges must be exercised, not just bytes
            self.assertGreater(sum(i >= 256 for i in ids[:T]), T // 4)
        window = ids[:T + 1]
        # The window as text, for `tapegpt eval --text`: it must tokenize to
        # the same ids (a cut inside a GPT-2 word could change its last token).
        wtext = run("tokenize", "--ckpt", ckpt, "--decode", "--text", " ".join(map(str, window))).stdout
        self.assertEqual(tokenize(ckpt, wtext), window)
        wfile = os.path.join(tmp, "window.txt")
        with open(wfile, "w", encoding="utf-8", newline="") as f:
            f.write(wtext)
        ev = json.loads(run("eval", "--ckpt", ckpt, "--text", wfile, "--precision", "fp32", "--json").stdout)
        self.assertEqual(ev["tokens"], T)
        idsbin, logits = os.path.join(tmp, "ids.bin"), os.path.join(tmp, "logits.bin")
        with open(idsbin, "wb") as f:
            f.write(struct.pack("<%di" % T, *window[:T]))
        subprocess.run([DUMP, ckpt, idsbin, "1", str(T), logits], check=True)
        vocab = os.path.getsize(logits) // (4 * T)

        for dtype in MODELS[name][2]:
            gguf = os.path.join(tmp, "%s-%s.gguf" % (name, dtype))
            p = run("export", "--ckpt", ckpt, "--format", "gguf", "--dtype", dtype, "--out", gguf)
            arch = p.stdout.split("architecture ")[1].split(",")[0]
            if name == "char_gpt2" and dtype == "f32":  # trained biases: the silent end-of-text applies
                self.assertIn("added token", p.stdout)
            for kv in ("f16", "f32"):
                with self.subTest(dtype=dtype, kv_cache=kv):
                    o = self.llama_cpp(tmp, {"model": gguf, "text": PROBE, "window": window, "logits": logits,
                                             "vocab": vocab, "kv": kv})
                    self.assertEqual(o["ids"], ids, "llama.cpp tokenizes PROBE differently from tapegpt tokenize")
                    # An added end-of-text token (Note [Silent end-of-text])
                    # takes no probability anywhere; without one, none exists.
                    self.assertEqual(o["beyond"], 0.0)
                    if "added token" in p.stdout:
                        self.assertEqual(o["eos"], vocab)
                    ref = sum(o["ref_nll"]) / T
                    self.assertAlmostEqual(ref, ev["loss"], delta=1e-5 * ev["loss"],
                                           msg="tapegpt's logits and tapegpt eval disagree")
                    mean = sum(o["nll"]) / T
                    rel = abs(mean - ev["loss"]) / ev["loss"]
                    worst = max(abs(a - b) for a, b in zip(o["nll"], o["ref_nll"]))
                    agree = sum(a == b for a, b in zip(o["argmax"], o["ref_argmax"]))
                    LlamaCpp.results.append((name, dtype, kv, arch, mean, ev["loss"], rel, worst, agree, T))
                    self.assertLess(rel, MEAN_NLL_REL, "mean NLL of llama.cpp vs tapegpt eval")
                    self.assertEqual(o["argmax"], o["ref_argmax"], "most likely next token differs")
                    if dtype == "f32" and kv == "f32":
                        # Float32 throughout: only summation order differs
                        # (measured at most 1.3e-4), so a wrong eps, rope
                        # pair or bias would show here first.
                        self.assertLess(worst, 1e-3, "per-token NLL with float32 weights and cache")

        if name == "bpe_gpt2_split":
            # Our own merges: also a longer text, so that many more apply.
            with open(Models.corpus, encoding="utf-8") as f:
                text = f.read()[:6000] + "\n\n\nI'M  it's\t\t x \r\n  end"
            gguf = os.path.join(tmp, "%s-f32.gguf" % name)
            o = self.llama_cpp(tmp, {"model": gguf, "text": text, "window": window, "logits": logits,
                                     "vocab": vocab, "kv": "f32"})
            self.assertEqual(o["ids"], tokenize(ckpt, text), "llama.cpp tokenizes the longer text differently")

    def llama_cpp(self, tmp, job):
        path = os.path.join(tmp, "job.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({**job, "threads": 2, "package": PACKAGE}, f)
        c = forky.run("node", CHECK, path, timeout=300)
        self.assertEqual(c.returncode, 0, c.stderr[-3000:])
        return json.loads(c.stdout)

    def test_char_gpt2(self):
        self.check("char_gpt2")

    def test_char_gpt2_sinusoidal_untied_no_bias(self):
        self.check("char_gpt2_sin")

    def test_gpt2_bpe(self):
        self.check("gpt2_bpe")

    def test_trained_bpe_gpt2_split(self):
        self.check("bpe_gpt2_split")

    def test_llama_byte(self):
        self.check("llama_byte")

    def test_llama_char_untied_no_bias(self):
        self.check("llama_char")

    def test_neox_char(self):
        self.check("neox_char")

    def test_neox_byte_untied_no_bias(self):
        self.check("neox_byte")

    def test_arcee_char_budget_recipe(self):
        self.check("arcee_char")

    def test_arcee_byte_budget_recipe_untied(self):
        self.check("arcee_byte_untied")

    def test_qwen3_char_qk_norm(self):
        self.check("qwen3_char")


class Refusals(unittest.TestCase):
    def expect_error(self, args, code, must_mention, leaves=None):
        line = testutil.assert_one_error_line(self, run(*args, ok=False), args, code, must_mention)
        if leaves:
            self.assertFalse(os.path.exists(leaves), f"{args} left {leaves}")
            self.assertEqual([n for n in os.listdir(os.path.dirname(leaves)) if ".tmp-" in n], [])
        return line

    @classmethod
    def setUpClass(cls):
        cls.ckpt = Models.get("char_gpt2")
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-export-refusals-")

    def other_model(self, name, tokenizer, flags):
        data = os.path.join(self.tmp, "data-" + tokenizer)
        if not os.path.isdir(data):
            run("prepare", "--input", Models.corpus, "--tokenizer", tokenizer, "--out", data,
                *(["--vocab-size", "300"] if tokenizer == "bpe" else []))
        out = os.path.join(self.tmp, name)
        run("train", "--data", data, "--out", out, *SHAPE, "--max-steps", "3", *flags)
        return os.path.join(out, "ckpt.h5")

    def test_options_no_runtime_computes(self):
        cases = [
            ("relu2", ["--mlp", "relu2"], "--mlp relu2", ["gguf", "hf"]),
            ("rms_gelu", ["--norm", "rmsnorm"], "--norm rmsnorm", ["gguf", "hf"]),
            ("ln_swiglu", ["--mlp", "swiglu"], "--mlp swiglu", ["gguf", "hf"]),
            ("neox", ["--pos-encoding", "rope"], "GGUF only", ["hf"]),
            ("erf", ["--gelu", "erf"], "--gelu erf", ["gguf"]),
            # ReLU² with QK-norm: Arcee without --qk-norm, or Qwen3 with SwiGLU.
            ("relu2_qk", BUDGET_RECIPE + ["--qk-norm"],
             "--qk-norm and --mlp relu2 cannot be expressed: no runtime computes that mix exactly; the nearest "
             "exportable choice is no --qk-norm (Arcee family: GGUF arcee, Hugging Face ArceeForCausalLM) or "
             "--mlp swiglu (Qwen3 family: GGUF qwen3, Hugging Face Qwen3ForCausalLM)", ["gguf", "hf"]),
            ("softcap", BUDGET_RECIPE + ["--logit-softcap", "15"],
             "--logit-softcap 15 cannot be expressed: no runtime computes that mix exactly; the nearest "
             "exportable choice is no --logit-softcap (Arcee family", ["gguf", "hf"]),
            # llama.cpp's arcee and qwen3 have no MLP biases.
            ("arcee_bias", BUDGET_RECIPE[:-1], "biases cannot be expressed", ["gguf", "hf"]),
            ("qwen3_bias", ["--norm", "rmsnorm", "--mlp", "swiglu", "--pos-encoding", "rope", "--qk-norm"],
             "--no-bias (Qwen3 family", ["gguf", "hf"]),
        ]
        for name, flags, mention, formats in cases:
            ckpt = self.other_model(name, "char", flags)
            for fmt in formats:
                with self.subTest(model=name, format=fmt):
                    out = os.path.join(self.tmp, name + "." + fmt)
                    self.expect_error(["export", "--ckpt", ckpt, "--format", fmt, "--out", out], 1, mention,
                                      leaves=out)
        # GPT-2's GELU in erf form is Hugging Face's "gelu": exported there.
        erf = os.path.join(self.tmp, "erf", "ckpt.h5")
        hf = os.path.join(self.tmp, "erf-hf")
        run("export", "--ckpt", erf, "--format", "hf", "--out", hf)
        with open(os.path.join(hf, "config.json")) as f:
            self.assertEqual(json.load(f)["activation_function"], "gelu")

    def test_bpe_tokenizer_refused(self):
        ckpt = self.other_model("bpe", "bpe", [])
        for fmt in ("gguf", "hf"):
            out = os.path.join(self.tmp, "bpe-out." + fmt)
            line = self.expect_error(["export", "--ckpt", ckpt, "--format", fmt, "--out", out], 1,
                                     "bpe tokenizer", leaves=out)
            self.assertIn("--tokenizer bpe --bpe-split gpt2", line)

    def test_existing_output_needs_overwrite(self):
        out = os.path.join(self.tmp, "exists.gguf")
        with open(out, "wb") as f:
            f.write(b"keep me")
        self.expect_error(["export", "--ckpt", self.ckpt, "--format", "gguf", "--out", out], 2, "--overwrite")
        with open(out, "rb") as f:
            self.assertEqual(f.read(), b"keep me")
        run("export", "--ckpt", self.ckpt, "--format", "gguf", "--out", out, "--overwrite")
        with open(out, "rb") as f:
            self.assertEqual(f.read(4), b"GGUF")
        hf = os.path.join(self.tmp, "hf-exists")
        run("export", "--ckpt", self.ckpt, "--format", "hf", "--out", hf)
        self.expect_error(["export", "--ckpt", self.ckpt, "--format", "hf", "--out", hf], 2, "--overwrite")
        run("export", "--ckpt", self.ckpt, "--format", "hf", "--out", hf, "--overwrite")

    def test_bad_checkpoints(self):
        missing = os.path.join(self.tmp, "missing.h5")
        out = os.path.join(self.tmp, "never.gguf")
        self.expect_error(["export", "--ckpt", missing, "--format", "gguf", "--out", out], 1, "missing.h5",
                          leaves=out)
        corrupt = os.path.join(self.tmp, "corrupt.h5")
        with open(self.ckpt, "rb") as f:
            data = f.read()
        with open(corrupt, "wb") as f:
            f.write(data[:len(data) // 2])  # truncated
        self.expect_error(["export", "--ckpt", corrupt, "--format", "gguf", "--out", out], 1, "corrupt.h5",
                          leaves=out)
        foreign = os.path.join(self.tmp, "foreign.h5")
        with open(foreign, "wb") as f:
            f.write(b"GGUF" + b"\0" * 100)
        self.expect_error(["export", "--ckpt", foreign, "--format", "gguf", "--out", out], 1, "foreign.h5",
                          leaves=out)

    def test_bad_flags(self):
        out = os.path.join(self.tmp, "flags.gguf")
        self.expect_error(["export", "--format", "gguf", "--out", out], 2, "--ckpt")
        self.expect_error(["export", "--ckpt", self.ckpt, "--out", out], 2, "--format")
        self.expect_error(["export", "--ckpt", self.ckpt, "--format", "onnx", "--out", out], 2, "--format")
        self.expect_error(["export", "--ckpt", self.ckpt, "--format", "gguf"], 2, "--out")
        self.expect_error(["export", "--ckpt", self.ckpt, "--format", "gguf", "--dtype", "q8", "--out", out], 2,
                          "--dtype")
        self.expect_error(["export", "--ckpt", self.ckpt, "--format", "hf", "--dtype", "f16", "--out", out], 2,
                          "--dtype")
        self.expect_error(["export", "--ckpt", self.ckpt, "--format", "gguf", "--out", self.tmp], 2,
                          "directory")
        self.assertFalse(os.path.exists(out))
        self.assertIn("--format", run("export", "--help").stdout)


class HuggingFace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-export-hf-")

    def test_gpt2_round_trip_is_bit_identical(self):
        ckpt = Models.get("gpt2_bpe")
        out = os.path.join(self.tmp, "gpt2")
        run("export", "--ckpt", ckpt, "--format", "hf", "--out", out)
        self.assertEqual(sorted(os.listdir(out)), ["config.json", "merges.txt", "model.safetensors",
                                                   "tokenizer_config.json", "vocab.json"])
        with open(os.path.join(out, "config.json")) as f:
            cfg = json.load(f)
        self.assertEqual(cfg["architectures"], ["GPT2LMHeadModel"])
        self.assertEqual((cfg["n_positions"], cfg["n_ctx"], cfg["n_embd"], cfg["n_layer"], cfg["n_head"]),
                         (T, T, 32, 2, 2))
        self.assertEqual((cfg["vocab_size"], cfg["eos_token_id"], cfg["activation_function"]),
                         (50257, 50256, "gelu_new"))
        with open(os.path.join(out, "vocab.json"), encoding="utf-8") as f:
            vocab = json.load(f)
        self.assertEqual((len(vocab), vocab["Ġthe"], vocab["<|endoftext|>"]), (50257, 262, 50256))
        with open(os.path.join(out, "merges.txt"), encoding="utf-8") as f:
            merges = f.read().splitlines()
        self.assertEqual(merges[:3], ["#version: 0.2", "Ġ t", "Ġ a"])
        back = os.path.join(self.tmp, "back.h5")
        run("import", "--safetensors", os.path.join(out, "model.safetensors"), "--config",
            os.path.join(out, "config.json"), "--out", back)
        d = subprocess.run([DIFF, ckpt, back], capture_output=True, text=True)
        self.assertEqual(d.returncode, 0, d.stdout + d.stderr)

    def test_trained_bpe_vocab_and_merges(self):
        ckpt = Models.get("bpe_gpt2_split")
        out = os.path.join(self.tmp, "bpe")
        run("export", "--ckpt", ckpt, "--format", "hf", "--out", out)
        with open(os.path.join(Models.tmp, "data-bpe-gpt2", "tokenizer.json")) as f:
            spec = json.load(f)
        self.assertEqual(spec["split"], "gpt2")
        tokens = [bytes.fromhex(t) for t in spec["tokens"]]
        # GPT-2's bytes_to_unicode: printable bytes stand for themselves.
        printable = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
        stand_in = {b: chr(b) for b in printable}
        stand_in.update({b: chr(256 + n) for n, b in enumerate(b for b in range(256) if b not in printable)})
        spell = ["".join(stand_in[b] for b in t) for t in tokens]
        with open(os.path.join(out, "vocab.json"), encoding="utf-8") as f:
            vocab = json.load(f)
        self.assertEqual(vocab, {s: i for i, s in enumerate(spell)})  # 400 distinct spellings, ids as ours
        self.assertEqual((vocab["Ġ"], vocab["Ċ"], len(vocab)), (32, 10, 400))
        with open(os.path.join(out, "merges.txt"), encoding="utf-8") as f:
            merges = f.read().splitlines()
        self.assertEqual(merges, ["#version: 0.2"] + ["%s %s" % (spell[l], spell[r]) for l, r in spec["merges"]])
        with open(os.path.join(out, "config.json")) as f:
            cfg = json.load(f)
        self.assertEqual((cfg["architectures"], cfg["vocab_size"]), (["GPT2LMHeadModel"], 400))
        with open(os.path.join(out, "tokenizer_config.json")) as f:
            self.assertIsNone(json.load(f)["eos_token"])  # no special tokens

    def test_llama_layout(self):
        ckpt = Models.get("llama_byte")
        out = os.path.join(self.tmp, "llama")
        run("export", "--ckpt", ckpt, "--format", "hf", "--out", out)
        with open(os.path.join(out, "config.json")) as f:
            cfg = json.load(f)
        self.assertEqual((cfg["architectures"], cfg["hidden_size"], cfg["intermediate_size"], cfg["head_dim"],
                          cfg["attention_bias"], cfg["tie_word_embeddings"]),
                         (["LlamaForCausalLM"], 32, 128, 16, True, True))
        with open(os.path.join(out, "model.safetensors"), "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
        self.assertEqual(header["model.layers.1.mlp.gate_proj.weight"]["shape"], [128, 32])
        self.assertEqual(header["model.layers.0.self_attn.q_proj.bias"]["shape"], [32])
        self.assertNotIn("lm_head.weight", header)

    def hf_files(self, name):
        """config.json and the safetensors header of model `name`'s export."""
        out = os.path.join(self.tmp, name)
        run("export", "--ckpt", Models.get(name), "--format", "hf", "--out", out)
        with open(os.path.join(out, "config.json")) as f:
            cfg = json.load(f)
        with open(os.path.join(out, "model.safetensors"), "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
        del header["__metadata__"]
        return cfg, header

    def llama_like_names(self, layers, mlp, extra=()):
        names = {"model.embed_tokens.weight", "model.norm.weight"}
        for l in range(layers):
            p = "model.layers.%d." % l
            names |= {p + n + ".weight" for n in ("input_layernorm", "post_attention_layernorm", "self_attn.q_proj",
                                                  "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                                                  *("mlp." + m for m in mlp), *extra)}
        return names

    def test_arcee_layout(self):
        for name, tied in (("arcee_char", True), ("arcee_byte_untied", False)):
            with self.subTest(model=name):
                cfg, header = self.hf_files(name)
                self.assertEqual(
                    {k: cfg[k] for k in ("architectures", "model_type", "hidden_act", "hidden_size",
                                         "intermediate_size", "num_hidden_layers", "num_attention_heads",
                                         "num_key_value_heads", "head_dim", "rms_norm_eps", "rope_theta",
                                         "attention_bias", "mlp_bias", "tie_word_embeddings",
                                         "max_position_embeddings", "bos_token_id", "eos_token_id")},
                    {"architectures": ["ArceeForCausalLM"], "model_type": "arcee", "hidden_act": "relu2",
                     "hidden_size": 32, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
                     "num_key_value_heads": 2, "head_dim": 16, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
                     "attention_bias": False, "mlp_bias": False, "tie_word_embeddings": tied,
                     "max_position_embeddings": T, "bos_token_id": None, "eos_token_id": None})
                want = self.llama_like_names(2, ("up_proj", "down_proj")) | (set() if tied else {"lm_head.weight"})
                self.assertEqual(set(header), want)
                self.assertEqual(header["model.layers.0.mlp.up_proj.weight"]["shape"], [128, 32])
                self.assertEqual(header["model.layers.0.mlp.down_proj.weight"]["shape"], [32, 128])

    def test_qwen3_layout(self):
        cfg, header = self.hf_files("qwen3_char")
        self.assertEqual((cfg["architectures"], cfg["model_type"], cfg["hidden_act"], cfg["head_dim"],
                          cfg["rms_norm_eps"], cfg["attention_bias"], cfg["tie_word_embeddings"]),
                         (["Qwen3ForCausalLM"], "qwen3", "silu", 16, 1e-5, False, True))
        self.assertNotIn("mlp_bias", cfg)  # Qwen3Config has none: its MLP never has biases
        self.assertEqual(set(header), self.llama_like_names(2, ("gate_proj", "up_proj", "down_proj"),
                                                            ("self_attn.q_norm", "self_attn.k_norm")))
        self.assertEqual(header["model.layers.1.self_attn.k_norm.weight"]["shape"], [16])


if __name__ == "__main__":
    TAPEGPT, DUMP, DIFF = sys.argv[1:4]
    unittest.main(argv=sys.argv[:1], verbosity=2)
