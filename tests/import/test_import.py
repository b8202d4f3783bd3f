#!/usr/bin/python3
"""End-to-end tests of `tapegpt import` and `tapegpt train --init-from`.

No real GPT-2 weights exist on the test machines: scripts/make_hf_gpt2.py
writes small random GPT-2s in Hugging Face's exact layout (Conv1D (in, out)
weights, the attn.bias / attn.masked_bias buffers, config.json), in F32,
F16 and BF16. Then:
  parity     import → logits of our forward vs a float64 PyTorch forward with
             HF's semantics (x @ W + b, gelu_new, the buffer as causal mask,
             tied head), max|ours - torch| / max|torch| <= 1e-5; and
             `tapegpt eval` loss vs torch's cross-entropy to 1e-5 relative
  hostile    truncated file, header length past the end, overlapping and
             out-of-range offsets, wrong dtype, shape/size mismatch, missing
             tensor, NaN weights, unknown tensors, bad config.json → one
             error line, exit 1, no output file
  fine-tune  --init-from: the run starts from the imported weights (cropped
             to --block-size), loss falls on the same text; contradicting
             shape flags, a larger context, --resume and data prepared with
             another tokenizer are refused with usage errors (exit 2)
  nanoGPT    the imported checkpoint → scripts/h5_to_nanogpt.py → nanoGPT's
             state_dict equals HF's weights transposed, and back through
             scripts/nanogpt_to_h5.py bit for bit.

Run by CTest as: test_import.py PATH/TO/tapegpt PATH/TO/import_logits_dump
Exit 77 (skipped) without torch/numpy/h5py, unless TAPEGPT_NO_SKIP=1.
"""
import json
import os
import struct
import subprocess
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, os.path.join(REPO, "tests", "support"))
import testutil  # noqa: E402

try:
    import h5py
    import numpy as np
    import torch
    import torch.nn.functional as F
    import make_hf_gpt2 as hf
except ImportError as e:
    if os.environ.get("TAPEGPT_NO_SKIP") == "1":
        print(f"test_import: FAILED: {e} (TAPEGPT_NO_SKIP=1 forbids skipping; "
              "install python3-torch python3-numpy python3-h5py)")
        sys.exit(1)
    print(f"test_import: skipped ({e}); install python3-torch python3-numpy python3-h5py")
    sys.exit(77)

TAPEGPT = DUMP = None
TINY = dict(n_layer=2, n_head=4, n_embd=32, n_positions=64, vocab_size=50257)
STD = 0.1  # larger than GPT-2's 0.02 so that logits spread over a few units


def run(*args, ok=True, timeout=300):
    """tapegpt with this file's binary and time limit (testutil.run)."""
    return testutil.run(TAPEGPT, *args, ok=ok, timeout=timeout)


def rel_err(ours, ref):
    return float((ours - ref).abs().max() / ref.abs().max())


def write_tokens(path, ids, vocab):
    """A tapegpt token file (data/token_file.h): 32-byte header + uint16 ids."""
    header = b"TGTOKENS" + struct.pack("<IIQI", 1, 2, len(ids), vocab)
    with open(path, "wb") as f:
        f.write(header + b"\0" * (32 - len(header)) + np.asarray(ids, dtype="<u2").tobytes())


def read_header(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def write_with_header(path, header, data):
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


class Import(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-import-")
        cls.f32_dir = os.path.join(cls.tmp, "f32")
        cls.sd = hf.write_model(cls.f32_dir, TINY, "F32", seed=1, std=STD)
        cls.f32 = os.path.join(cls.f32_dir, "model.safetensors")
        cls.config = os.path.join(cls.f32_dir, "config.json")
        cls.ckpt = os.path.join(cls.tmp, "f32.h5")
        p = run("import", "--safetensors", cls.f32, "--config", cls.config, "--out", cls.ckpt)
        assert "imported" in p.stdout, p.stdout

    def path(self, name):
        return os.path.join(self.tmp, name)

    def logits(self, ckpt, ids):
        B, T = ids.shape
        ids_path, out_path = self.path("ids.bin"), self.path("logits.bin")
        ids.numpy().astype("<i4").tofile(ids_path)
        p = subprocess.run([DUMP, ckpt, ids_path, str(B), str(T), out_path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return torch.from_numpy(np.fromfile(out_path, dtype="<f4").astype(np.float64)).view(B, T, -1)

    def check_parity(self, ckpt, sd, cfg, name):
        g = torch.Generator().manual_seed(7)
        ids = torch.randint(0, cfg["vocab_size"], (2, cfg["n_positions"]), generator=g)
        ref = hf.hf_forward(sd, cfg, ids)
        err = rel_err(self.logits(ckpt, ids), ref)
        print(f"parity {name}: logits max rel err {err:.2e} (B=2, T={cfg['n_positions']}, "
              f"logit range ±{float(ref.abs().max()):.2f})")
        self.assertLess(err, 1e-5, name)
        # A wrong transpose, LayerNorm or GELU is far outside the tolerance:
        # make sure the comparison could fail.
        wrong = dict(sd)
        wrong["h.0.mlp.c_fc.weight"] = sd["h.0.mlp.c_fc.weight"].flip(0)
        self.assertGreater(rel_err(hf.hf_forward(wrong, cfg, ids), ref), 1e-3)

    # ---- parity -------------------------------------------------------------
    def test_f32_logits_match_hf_forward(self):
        self.check_parity(self.ckpt, self.sd, TINY, "F32 + config.json")

    def test_eval_loss_matches_torch(self):
        g = torch.Generator().manual_seed(3)
        T = TINY["n_positions"]
        ids = torch.randint(0, TINY["vocab_size"], (2 * T + 1,), generator=g)
        tokens = self.path("eval.bin")
        write_tokens(tokens, ids.tolist(), TINY["vocab_size"])
        # float32 against float32 (on AMX, --precision auto would be bf16).
        p = run("eval", "--ckpt", self.ckpt, "--tokens", tokens, "--json", "--precision", "fp32")
        ours = json.loads(p.stdout)
        self.assertEqual(ours["tokens"], 2 * T)
        # eval's non-overlapping windows: [0, T) and [T, 2T), targets shifted by one.
        x = torch.stack([ids[:T], ids[T:2 * T]])
        y = torch.stack([ids[1:T + 1], ids[T + 1:2 * T + 1]])
        logits = hf.hf_forward(self.sd, TINY, x)
        ref = float(F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)))
        print(f"parity eval: loss ours {ours['loss']:.9f} torch {ref:.9f}")
        self.assertLess(abs(ours["loss"] - ref) / ref, 1e-5)

    def test_f16_without_config_infers_shape(self):
        cfg = dict(TINY, n_embd=64, n_head=1)  # inference assumes heads of 64
        d = self.path("f16")
        sd = hf.write_model(d, cfg, "F16", seed=2, std=STD, buffer_dtype="BOOL", config=False)
        out = self.path("f16.h5")
        p = run("import", "--safetensors", os.path.join(d, "model.safetensors"), "--out", out)
        self.assertIn("no --config given: inferred n_layer 2, n_embd 64", p.stdout)
        self.assertIn("n_head 1 = n_embd / 64", p.stdout)
        self.assertIn("F16", p.stdout)
        self.check_parity(out, sd, cfg, "F16, BOOL buffers, shape inferred")

    def test_bf16_lm_head_model_with_prefix(self):
        d = self.path("bf16")
        sd = hf.write_model(d, TINY, "BF16", seed=3, std=STD, prefix="transformer.", lm_head=True)
        out = self.path("bf16.h5")
        run("import", "--safetensors", os.path.join(d, "model.safetensors"), "--config",
            os.path.join(d, "config.json"), "--out", out)
        self.check_parity(out, sd, TINY, "BF16, transformer. prefix, stored lm_head")

    def test_sample_runs_on_imported(self):
        p = run("sample", "--ckpt", self.ckpt, "--prompt", "Hello", "--max-new-tokens", "8", "--seed", "1")
        self.assertTrue(p.stdout.startswith("Hello"), p.stdout)

    # ---- hostile files -----------------------------------------------------
    def expect_refused(self, st_path, must_mention, config=None, code=1):
        out = self.path("refused.h5")
        args = ["import", "--safetensors", st_path, "--out", out] + (["--config", config] if config else [])
        p = run(*args, ok=False)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        self.assertEqual(p.returncode, code, f"{must_mention}: {p.stderr!r}")
        self.assertEqual(len(lines), 1, f"{must_mention}: want one line, got {p.stderr!r}")
        self.assertIn("tapegpt import: error:", lines[0])
        self.assertIn(must_mention.lower(), lines[0].lower())
        self.assertNotIn("Traceback", p.stderr)
        self.assertFalse(os.path.exists(out), f"{must_mention}: an output file was left")
        self.assertEqual([f for f in os.listdir(self.tmp) if ".tmp" in f], [], "temporary file left")
        return lines[0]

    def hostile(self, name, header_edit=None, data=None, cut=None):
        header, raw = read_header(self.f32)
        if header_edit:
            header_edit(header)
        path = self.path(name + ".safetensors")
        write_with_header(path, header, raw if data is None else data)
        if cut:
            with open(path, "r+b") as f:
                f.truncate(os.path.getsize(path) - cut)
        return path

    def test_truncated(self):
        self.expect_refused(self.hostile("cut", cut=100), "truncated")
        with open(self.f32, "rb") as f:
            head = f.read(5)
        p = self.path("five.safetensors")
        with open(p, "wb") as f:
            f.write(head)
        self.expect_refused(p, "too short")

    def test_header_length_past_end(self):
        p = self.path("hlen.safetensors")
        with open(self.f32, "rb") as f:
            raw = bytearray(f.read())
        raw[:8] = struct.pack("<Q", len(raw))
        with open(p, "wb") as f:
            f.write(raw)
        self.expect_refused(p, "runs past the end")

    def test_overlapping_offsets(self):
        def edit(h):
            a = h["h.0.ln_1.weight"]["data_offsets"]
            h["h.0.ln_1.weight"]["data_offsets"] = [a[0] - 4, a[1] - 4]
        self.expect_refused(self.hostile("overlap", edit), "overlapping")

    def test_offsets_out_of_range(self):
        def edit(h):
            h["wte.weight"]["data_offsets"][1] += 1 << 40
        self.expect_refused(self.hostile("range", edit), "ends at byte")

    def test_wrong_dtype(self):
        def edit(h):
            h["h.1.mlp.c_fc.weight"]["dtype"] = "I32"  # same size: the offsets still tile
        self.expect_refused(self.hostile("dtype", edit), "has dtype I32", self.config)
        def unknown(h):
            h["h.1.mlp.c_fc.weight"]["dtype"] = "F12"
        self.expect_refused(self.hostile("dtype2", unknown), "unknown dtype")

    def test_shape_size_mismatch(self):
        C = TINY["n_embd"]
        def size(h):
            h["h.0.attn.c_attn.weight"]["shape"] = [C, 3 * C + 1]
        self.expect_refused(self.hostile("size", size), "data_offsets span")
        def shape(h):  # same size, nn.Linear's (out, in) instead of Conv1D's (in, out)
            h["h.0.attn.c_attn.weight"]["shape"] = [3 * C, C]
        self.expect_refused(self.hostile("shape", shape), f"expected [{C}, {3 * C}]", self.config)

    def test_missing_tensor(self):
        sd = hf.random_gpt2(TINY, 1, STD)
        del sd["h.1.ln_2.bias"]
        p = self.path("missing.safetensors")
        with open(p, "wb") as f:
            f.write(hf.safetensors_bytes(hf.hf_entries(sd, "F32"), {"format": "pt"}))
        self.expect_refused(p, "has no tensor 'h.1.ln_2.bias'", config=self.config)

    def test_nan_weights(self):
        sd = hf.random_gpt2(TINY, 1, STD)
        sd["h.0.mlp.c_proj.weight"][3, 5] = float("nan")
        p = self.path("nan.safetensors")
        with open(p, "wb") as f:
            f.write(hf.safetensors_bytes(hf.hf_entries(sd, "F16"), {"format": "pt"}))
        self.expect_refused(p, "'h.0.mlp.c_proj.weight' holds NaN", config=self.config)

    def test_not_gpt2(self):
        sd = hf.random_gpt2(TINY, 1, STD)
        sd["score.weight"] = torch.zeros(2, TINY["n_embd"])
        p = self.path("cls.safetensors")
        with open(p, "wb") as f:
            f.write(hf.safetensors_bytes(hf.hf_entries(sd, "F32")))
        self.expect_refused(p, "'score.weight', which a GPT-2 language model does not have")
        self.expect_refused(self.config, "not safetensors")  # a JSON file is not one

    def test_config_disagreements(self):
        def config(**change):
            c = hf.hf_config(TINY)
            c.update(change)
            path = self.path("config-%d.json" % len(os.listdir(self.tmp)))
            with open(path, "w") as f:
                json.dump(c, f)
            return path
        self.expect_refused(self.f32, "has no tensor 'h.2.ln_1.weight'", config(n_layer=3))
        self.expect_refused(self.f32, "beyond the model's n_layer 1", config(n_layer=1))
        self.expect_refused(self.f32, "has shape [50257, 32], expected [50257, 16]", config(n_embd=16))
        self.expect_refused(self.f32, "gelu only", config(activation_function="relu"))
        # "gelu" is the exact (erf) GELU: imported as --gelu erf, not refused.
        erf_out = self.path("erf.h5")
        run("import", "--safetensors", self.f32, "--config", config(activation_function="gelu"), "--out", erf_out)
        self.assertIn("gelu erf", run("inspect", erf_out).stdout)
        self.expect_refused(self.f32, "layer_norm_epsilon", config(layer_norm_epsilon=1e-6))
        self.expect_refused(self.f32, "n_embd (32) must be divisible by n_head (5)", config(n_head=5))
        self.expect_refused(self.f32, "model_type", config(model_type="gpt_neo"))
        small = self.path("small-vocab")
        hf.write_model(small, dict(TINY, vocab_size=100), "F32", std=STD)
        self.expect_refused(os.path.join(small, "model.safetensors"), "smaller than gpt-2's tokenizer",
                            os.path.join(small, "config.json"))
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        self.expect_refused(self.f32, "not valid json", bad)

    def test_existing_output_is_kept(self):
        keep = self.path("keep.h5")
        with open(keep, "w") as f:
            f.write("mine")
        p = run("import", "--safetensors", self.f32, "--out", keep, ok=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--overwrite", p.stderr)
        with open(keep) as f:
            self.assertEqual(f.read(), "mine")
        # Without --config, n_embd 32 is no multiple of GPT-2's head size 64.
        p = run("import", "--safetensors", self.f32, "--out", self.path("x.h5"), ok=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("pass --config config.json", p.stderr)
        p = run("import", "--out", self.path("y.h5"), ok=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--safetensors", p.stderr)

    # ---- fine-tuning --------------------------------------------------------
    def gpt2_data(self):
        d = self.path("data-gpt2")
        if not os.path.exists(d):
            corpus = self.path("corpus.txt")
            with open(os.path.join(REPO, "data", "tinyshakespeare.txt"), encoding="utf-8") as f:
                text = f.read()[:30000]
            with open(corpus, "w", encoding="utf-8") as f:
                f.write(text)
            run("prepare", "--input", corpus, "--tokenizer", "gpt2", "--out", d)
        return d

    def test_init_from_starts_at_imported_weights_and_loss_falls(self):
        data = self.gpt2_data()
        out = self.path("ft0")
        # float32: a bf16 run keeps each 2-D weight as a split master, which
        # moves about one weight in 131,072 by one float32 ulp (Note [Split
        # master weights]); the bits must be the imported ones here.
        p = run("train", "--init-from", self.ckpt, "--data", data, "--out", out, "--block-size", "32",
                "--max-steps", "0", "--threads", "2", "--precision", "fp32")
        self.assertIn("context cropped from 64 to 32", p.stdout)
        self.assertIn("memory estimate:", p.stdout)
        with h5py.File(self.ckpt, "r") as a, h5py.File(os.path.join(out, "ckpt.h5"), "r") as b:
            self.assertEqual(int(b["config"].attrs["block_size"]), 32)
            self.assertEqual(int(b["train"].attrs["step"]), 0)
            for name in a["model"]:
                x, y = np.asarray(a["model"][name]), np.asarray(b["model"][name])
                if name == "transformer.wpe.weight":
                    x = x[:32]
                self.assertTrue(np.array_equal(x, y), name)

        out = self.path("ft")
        run("train", "--init-from", self.ckpt, "--data", data, "--out", out, "--block-size", "32",
            "--batch-size", "4", "--max-steps", "30", "--lr", "3e-3", "--warmup", "0", "--dropout", "0.1",
            "--eval-interval", "0", "--threads", "2")
        with open(os.path.join(out, "metrics.jsonl")) as f:
            losses = [r["loss"] for r in map(json.loads, f) if "loss" in r]
        first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
        print(f"fine-tune: mean loss of steps 1-5 {first:.3f}, steps 26-30 {last:.3f}")
        self.assertLess(last, first - 0.5)
        with h5py.File(os.path.join(out, "ckpt.h5"), "r") as b:
            self.assertAlmostEqual(float(b["config"].attrs["dropout"]), 0.1, places=6)
        # A fine-tuned run resumes like any other.
        run("train", "--resume", os.path.join(out, "ckpt.h5"), "--max-steps", "32", "--threads", "2")

    def expect_usage(self, args, must_mention):
        p = run("train", *args, ok=False)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        self.assertEqual(p.returncode, 2, f"{args}: {p.stderr!r}")
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn(must_mention, lines[0])

    def test_init_from_refusals(self):
        data = self.gpt2_data()
        base = ["--init-from", self.ckpt, "--data", data, "--max-steps", "0", "--threads", "2"]
        out = ["--out", self.path("refused-run")]
        self.expect_usage(base + out + ["--n-layer", "3"], "--n-layer 3 contradicts")
        self.expect_usage(base + out + ["--n-embd", "64"], "--n-embd 64 contradicts")
        self.expect_usage(base + out + ["--untied"], "--untied")
        self.expect_usage(base + out + ["--no-bias"], "--no-bias")
        self.expect_usage(base + out + ["--pos-encoding", "sinusoidal"], "--pos-encoding sinusoidal")
        self.expect_usage(base + out + ["--norm", "rmsnorm"], "--norm rmsnorm contradicts")
        self.expect_usage(base + out + ["--mlp", "swiglu"], "which has mlp gelu")
        self.expect_usage(base + out + ["--block-size", "128"], "use at most 64")
        self.expect_usage(base + out + ["--resume", self.ckpt], "give only one of them")
        self.assertFalse(os.path.exists(self.path("refused-run")))
        char_data = self.path("data-char")
        run("prepare", "--input", os.path.join(REPO, "data", "tinyshakespeare.txt"), "--tokenizer", "char",
            "--out", char_data)
        self.expect_usage(["--init-from", self.ckpt, "--data", char_data, "--max-steps", "0"] + out,
                          "prepare the data with --tokenizer gpt2")
        # Flags that agree with the checkpoint are fine.
        run("train", *base, "--out", self.path("agree"), "--n-layer", "2", "--n-head", "4", "--n-embd", "32")

    # ---- nanoGPT round trip -------------------------------------------------
    def test_round_trip_through_nanogpt(self):
        pt = self.path("nano.pt")
        subprocess.run(["/usr/bin/python3", os.path.join(REPO, "scripts", "h5_to_nanogpt.py"), self.ckpt, pt],
                       check=True, capture_output=True)
        ck = torch.load(pt, map_location="cpu")
        self.assertEqual(ck["model_args"]["n_layer"], TINY["n_layer"])
        self.assertEqual(ck["model_args"]["block_size"], TINY["n_positions"])
        state = ck["model"]
        for name, t in self.sd.items():
            if name.endswith("attn.bias") and "c_attn" not in name or name.endswith("masked_bias"):
                continue
            ours = state["transformer." + name].double()
            conv1d = name.endswith("weight") and state["transformer." + name].dim() == 2 and \
                name not in ("wte.weight", "wpe.weight")
            self.assertTrue(torch.equal(ours, t.t() if conv1d else t), name)
        self.assertTrue(torch.equal(state["lm_head.weight"], state["transformer.wte.weight"]))
        back = self.path("back.h5")
        subprocess.run(["/usr/bin/python3", os.path.join(REPO, "scripts", "nanogpt_to_h5.py"), pt, back,
                        "--tokenizer-from", self.ckpt], check=True, capture_output=True)
        with h5py.File(self.ckpt, "r") as a, h5py.File(back, "r") as b:
            self.assertEqual(sorted(a["model"]), sorted(b["model"]))
            for name in a["model"]:
                self.assertTrue(np.array_equal(np.asarray(a["model"][name]), np.asarray(b["model"][name])), name)
            self.assertTrue(np.array_equal(np.asarray(a["tokenizer/merges"]), np.asarray(b["tokenizer/merges"])))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: test_import.py PATH/TO/tapegpt PATH/TO/import_logits_dump")
    TAPEGPT, DUMP = os.path.abspath(sys.argv.pop(1)), os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
