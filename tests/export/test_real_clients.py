#!/usr/bin/python3
"""`tapegpt export`'s files in the real clients people run them in.

The clients are Debian forky's, run inside the forky folder that
scripts/setup_forky.sh makes (tests/support/forky.py): transformers and
PyTorch for the Hugging Face directories, Debian's llama.cpp tools for the
GGUF files, and node-llama-cpp (run by forky's Node.js) to score a quantized
file. One small model per family in FAMILIES, trained a few hundred steps
(so its predictions are peaked, not those at initialisation), then:
  transformers  AutoTokenizer and AutoModelForCausalLM load the exported
                directory: its ids of PROBE (newlines, runs of spaces, tabs,
                punctuation, non-ASCII) equal `tapegpt tokenize`'s, and its
                mean NLL over `tapegpt eval`'s windows of a held-out text is
                within 1e-4 relative of `tapegpt eval`'s loss (forward in
                float32 as the weights are, log-softmax and sums in float64).
  greedy        llama-completion at temperature 0 continues a prompt from the
                f32 GGUF file exactly as `tapegpt sample --top-k 1` does, for
                GREEDY_TOKENS new tokens.
  q8_0          llama-quantize turns the f16 GGUF file into q8_0; its mean
                NLL over the full windows of the held-out text (node-llama-cpp,
                llama_check.mjs) is within 2% of tapegpt's on the same windows.
The measured numbers are printed at the end.

Run by CTest as: test_real_clients.py TAPEGPT IMPORT_LOGITS_DUMP
Skips (exit 77) without the forky folder or one of its tools, or without
node-llama-cpp in .node/, and fails instead under TAPEGPT_NO_SKIP=1.
"""
import collections
import json
import os
import shutil
import struct
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "support"))
sys.path.insert(0, HERE)
import forky  # noqa: E402
import no_skip  # noqa: E402
import testutil  # noqa: E402
from test_export import PROBE  # noqa: E402

TAPEGPT = DUMP = None
PACKAGE = os.path.join(REPO, ".node", "node_modules", "node-llama-cpp")
LLAMA_CHECK = os.path.join(HERE, "llama_check.mjs")
HF_CHECK = os.path.join(HERE, "hf_check.py")

T = 64  # block_size
SHAPE = ["--n-layer", "2", "--n-head", "2", "--n-embd", "64", "--block-size", str(T), "--batch-size", "8",
         "--lr", "1e-2", "--warmup", "20", "--max-steps", "300", "--precision", "fp32", "--threads", "2",
         "--eval-steps", "0"]
LLAMA = ["--norm", "rmsnorm", "--mlp", "swiglu", "--pos-encoding", "rope"]

# One row per family: the tokenizer it is trained with, its training flags,
# and the architectures transformers and llama.cpp must load it as.
Family = collections.namedtuple("Family", "name tokenizer flags hf_arch gguf_arch")
FAMILIES = [
    Family("gpt2_char", "char", [], "GPT2LMHeadModel", "gpt2"),
    Family("gpt2_bpe", "gpt2", [], "GPT2LMHeadModel", "gpt2"),
    Family("llama", "byte", LLAMA, "LlamaForCausalLM", "llama"),
    # --budget's recipe (RoPE, RMSNorm, ReLU², no biases, Muon) and QK-norm.
    Family("arcee", "char", ["--norm", "rmsnorm", "--mlp", "relu2", "--pos-encoding", "rope", "--no-bias",
                             "--optimizer", "muon"], "ArceeForCausalLM", "arcee"),
    Family("qwen3", "char", LLAMA + ["--qk-norm", "--no-bias"], "Qwen3ForCausalLM", "qwen3"),
]

NLL_REL_HF = 1e-4    # transformers against tapegpt eval, relative
NLL_REL_Q8 = 0.02    # q8_0 in llama.cpp against tapegpt, relative
GREEDY_TOKENS = 48   # new tokens continued greedily
PROMPT = "ROMEO:\n"
Q8_WINDOWS = 4       # full windows scored for q8_0 (one node-llama-cpp run each)


def run(*args, ok=True):
    return testutil.run(TAPEGPT, *args, ok=ok, timeout=600)


def tokenize(ckpt, text):
    return [int(x) for x in run("tokenize", "--ckpt", ckpt, "--text", text).stdout.split()]


def in_forky(test, *args):
    p = forky.run(*args, timeout=600)
    test.assertEqual(p.returncode, 0, f"{' '.join(args)} in the forky folder:\n{p.stdout[-2000:]}\n"
                                      f"{p.stderr[-3000:]}")
    return p


class Models:
    """The trained checkpoints, each with its held-out text's windows."""
    tmp = None
    made = {}

    @classmethod
    def get(cls, family):
        if cls.tmp is None:
            cls.tmp = tempfile.mkdtemp(prefix="tapegpt-real-clients-")
            with open(os.path.join(REPO, "data", "tinyshakespeare.txt"), encoding="utf-8") as f:
                text = f.read()
            cls.corpus = os.path.join(cls.tmp, "corpus.txt")
            with open(cls.corpus, "w", encoding="utf-8") as f:
                f.write(text[:100000] + ("\n" + PROBE) * 20 + "\n")
            # Held out: lines the models never saw, then PROBE.
            cls.heldout = os.path.join(cls.tmp, "heldout.txt")
            with open(cls.heldout, "w", encoding="utf-8", newline="") as f:
                f.write(text[200000:201200] + "\n" + PROBE)
        if family.name not in cls.made:
            data = os.path.join(cls.tmp, "data-" + family.tokenizer)
            if not os.path.isdir(data):
                run("prepare", "--input", cls.corpus, "--tokenizer", family.tokenizer, "--out", data)
            out = os.path.join(cls.tmp, family.name)
            run("train", "--data", data, "--out", out, *SHAPE, *family.flags)
            ckpt = os.path.join(out, "ckpt.h5")
            with open(cls.heldout, encoding="utf-8") as f:
                ids = tokenize(ckpt, f.read())
            # `tapegpt eval`'s windows (train/evaluate.h): non-overlapping from
            # the start, each T inputs and the next token; the last one shorter.
            windows = [ids[s:s + T + 1] for s in range(0, len(ids) - 1, T)]
            ev = json.loads(run("eval", "--ckpt", ckpt, "--text", cls.heldout, "--precision", "fp32",
                                "--json").stdout)
            cls.made[family.name] = (ckpt, windows, ev)
        return cls.made[family.name]


def tearDownModule():
    if Models.tmp:
        shutil.rmtree(Models.tmp, ignore_errors=True)


class RealClients(unittest.TestCase):
    results = collections.defaultdict(dict)  # family → check → measured

    @classmethod
    def tearDownClass(cls):
        if cls.results:
            steps = SHAPE[SHAPE.index("--max-steps") + 1]
            print("\nreal clients vs tapegpt (block %d, trained %s steps):" % (T, steps))
            print("%-10s %-18s %12s %12s %10s %8s %12s %12s %10s" % (
                "family", "hf class", "tapegpt eval", "transformers", "rel diff", "greedy", "q8_0 NLL",
                "tapegpt", "rel diff"))
            for name, r in cls.results.items():
                hf = r.get("hf", ("-", float("nan"), float("nan"), float("nan")))
                q8 = r.get("q8", (float("nan"),) * 3)
                print("%-10s %-18s %12.6f %12.6f %10.2e %8s %12.6f %12.6f %10.2e" % (
                    name, hf[0], hf[1], hf[2], hf[3], r.get("greedy", "-"), *q8))
            for name, r in cls.results.items():
                if "greedy_text" in r:
                    print("%-10s greedy after %r: %r" % (name, PROMPT, r["greedy_text"]))

    def need(self, *programs, node=False):
        why = forky.why_not(*programs)
        if not why and node and not os.path.isfile(os.path.join(PACKAGE, "package.json")):
            why = "node-llama-cpp is not installed in .node/ (run scripts/setup.sh)"
        if why:
            no_skip.skip_test_or_fail(self, why)

    def export(self, family, ckpt, fmt, dtype=None):
        out = os.path.join(os.path.dirname(ckpt), family.name + "-" + (dtype or fmt) + (".gguf" if dtype else ""))
        if not os.path.exists(out):
            p = run("export", "--ckpt", ckpt, "--format", fmt, *(["--dtype", dtype] if dtype else []), "--out", out)
            if fmt == "gguf":
                self.assertIn("architecture " + family.gguf_arch, p.stdout)
        return out

    def check_transformers(self, family):
        self.need("python3")
        ckpt, windows, ev = Models.get(family)
        hf = self.export(family, ckpt, "hf")
        with open(os.path.join(hf, "config.json")) as f:
            self.assertEqual(json.load(f)["architectures"], [family.hf_arch])
        job = os.path.join(os.path.dirname(ckpt), "hf-job.json")
        with open(job, "w", encoding="utf-8") as f:
            json.dump({"dir": hf, "text": PROBE, "windows": windows, "threads": 2}, f)
        o = json.loads(in_forky(self, "python3", HF_CHECK, job).stdout)
        self.assertEqual(o["architectures"], family.hf_arch)
        self.assertEqual(o["ids"], tokenize(ckpt, PROBE), "transformers tokenizes PROBE differently from tapegpt")
        self.assertEqual(o["targets"], ev["tokens"], "the windows are not tapegpt eval's")
        mean = sum(o["nll"]) / o["targets"]
        rel = abs(mean - ev["loss"]) / ev["loss"]
        RealClients.results[family.name]["hf"] = (o["architectures"], ev["loss"], mean, rel)
        self.assertLess(rel, NLL_REL_HF, f"mean NLL: transformers {mean} against tapegpt eval {ev['loss']}")

    def check_greedy(self, family):
        self.need("llama-completion")
        ckpt, _, _ = Models.get(family)
        gguf = self.export(family, ckpt, "gguf", "f32")
        n_prompt = len(tokenize(ckpt, PROMPT))
        self.assertLessEqual(n_prompt + GREEDY_TOKENS, T, "the continuation must fit the block")
        ours = testutil.run(TAPEGPT, "sample", "--ckpt", ckpt, "--prompt", PROMPT, "--max-new-tokens",
                            str(GREEDY_TOKENS), "--top-k", "1", "--precision", "fp32", "--threads", "2", timeout=300)
        self.assertEqual(ours.returncode, 0, ours.stderr)
        ours = ours.stdout[len(PROMPT):-1]  # the prompt echoed, the continuation, a newline
        # llama-completion prints the continuation then "\n\n" through its
        # asynchronous log, which at exit sometimes loses its last lines (seen
        # in 0.7.0: about one run in four cut short, at any length): a cut
        # output, a strict prefix of the full one, is run again.
        for _ in range(5):
            p = in_forky(self, "llama-completion", "-m", gguf, "-p", PROMPT, "-n", str(GREEDY_TOKENS),
                         "--temp", "0", "-c", str(T), "-t", "2", "-no-cnv", "--no-display-prompt",
                         "--no-warmup", "--simple-io")
            if len(p.stdout) >= len(ours) + 2:
                break
        self.assertTrue(p.stdout.endswith("\n\n"), f"llama-completion printed {p.stdout!r}")
        theirs = p.stdout[:-2]
        # Equal text from the same prompt: the same greedy tokens, as many as
        # tapegpt generated (its tokens of the continuation, re-encoded, are
        # only a count where a BPE could spell the text differently).
        same = 0
        while same < min(len(ours), len(theirs)) and ours[same] == theirs[same]:
            same += 1
        matched = len(tokenize(ckpt, ours[:same])) if same else 0
        RealClients.results[family.name]["greedy_text"] = ours
        RealClients.results[family.name]["greedy"] = "%d/%d" % (matched if same < len(ours) else GREEDY_TOKENS,
                                                              GREEDY_TOKENS)
        self.assertEqual(theirs, ours, "llama-completion --temp 0 and tapegpt sample --top-k 1 differ")

    def check_q8_0(self, family):
        self.need("llama-quantize", "node", node=True)
        ckpt, windows, _ = Models.get(family)
        tmp = os.path.dirname(ckpt)
        f16 = self.export(family, ckpt, "gguf", "f16")
        q8 = os.path.join(tmp, family.name + "-q8_0.gguf")
        if not os.path.exists(q8):
            in_forky(self, "llama-quantize", f16, q8, "q8_0", "2")
        full = [w for w in windows if len(w) == T + 1][:Q8_WINDOWS]
        self.assertTrue(full, "the held-out text must give a full window")
        nll = ref = 0.0
        for i, w in enumerate(full):
            idsbin, logits = os.path.join(tmp, "q8-ids.bin"), os.path.join(tmp, "q8-logits.bin")
            with open(idsbin, "wb") as f:
                f.write(struct.pack("<%di" % T, *w[:T]))
            testutil.run(DUMP, ckpt, idsbin, "1", str(T), logits)
            job = os.path.join(tmp, "q8-job.json")
            with open(job, "w", encoding="utf-8") as f:
                json.dump({"model": q8, "text": PROBE, "window": w, "logits": logits,
                           "vocab": os.path.getsize(logits) // (4 * T), "kv": "f16", "threads": 2,
                           "package": PACKAGE}, f)
            o = json.loads(in_forky(self, "node", LLAMA_CHECK, job).stdout)
            # A probability below float32's range in llama.cpp comes back as null.
            zero = [(t, w[t + 1], o["ref_nll"][t]) for t, x in enumerate(o["nll"]) if x is None]
            self.assertEqual(zero, [], "q8_0 gives probability 0 to these targets (position, id, tapegpt's NLL)")
            nll += sum(o["nll"])
            ref += sum(o["ref_nll"])
        nll, ref = nll / (T * len(full)), ref / (T * len(full))
        rel = abs(nll - ref) / ref
        RealClients.results[family.name]["q8"] = (nll, ref, rel)
        self.assertLess(rel, NLL_REL_Q8, f"q8_0 mean NLL {nll} against tapegpt's {ref}")


# test_<family>_<check> for each row.
for _family in FAMILIES:
    for _check in ("transformers", "greedy", "q8_0"):
        setattr(RealClients, "test_%s_%s" % (_family.name, _check),
                (lambda f, c: lambda self: getattr(self, "check_" + c)(f))(_family, _check))


if __name__ == "__main__":
    TAPEGPT, DUMP = sys.argv[1:3]
    why = forky.why_not("python3", "llama-completion", "llama-quantize", "node")
    if why:
        no_skip.skip_or_fail(why)  # exit 77, or 1 under TAPEGPT_NO_SKIP=1
    unittest.main(argv=sys.argv[:1], verbosity=2)
