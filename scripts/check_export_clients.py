#!/usr/bin/python3
"""Checks one checkpoint's exports in the real clients, as a user would run
them: the model `train --budget` made, say (tests/export/test_real_clients.py
does the same for small models of every family, in CI).

  python3 scripts/check_export_clients.py CKPT VAL.bin [--build build] [--windows N] [--greedy N]

Exports CKPT to a Hugging Face directory and to GGUF (f32 and f16) in a
temporary folder, then, inside the Debian forky folder (scripts/setup_forky.sh):
  transformers  AutoModelForCausalLM's mean NLL over `tapegpt eval`'s windows
                of VAL.bin (all of them: the whole split), against `tapegpt
                eval --precision fp32` (tests/export/hf_check.py);
  llama.cpp     node-llama-cpp's mean NLL over the first N full windows, f32
                and f16 files, against tapegpt's logits of the same windows
                (tests/export/llama_check.mjs);
  greedy        llama-completion --temp 0 from the f32 file against `tapegpt
                sample --top-k 1` (GREEDY tokens after "ROMEO:\\n").
Prints each figure; exits 1 when transformers is off by more than 1e-4
relative, llama.cpp by more than 2e-3, or the greedy texts differ.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "support"))
import forky  # noqa: E402

PROMPT = "ROMEO:\n"


def run(*argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        sys.exit(f"check_export_clients: {' '.join(argv)} exited {p.returncode}:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return p.stdout


def read_token_file(path):
    """The ids of a token file (Note [Token file format] in data/token_file.h):
    a 32-byte header, "TGTOKENS" first and the bytes per id (2 or 4) at 12."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != b"TGTOKENS":
        sys.exit(f"check_export_clients: {path} is not a tapegpt token file")
    width = struct.unpack_from("<I", raw, 12)[0]
    body = raw[32:]
    return list(struct.unpack("<%d%s" % (len(body) // width, "H" if width == 2 else "I"), body))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ckpt")
    ap.add_argument("val", help="a token file of the checkpoint's tokenizer (prepare's val.bin)")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--windows", type=int, default=8, help="full windows llama.cpp scores (default 8)")
    ap.add_argument("--greedy", type=int, default=64, help="tokens continued greedily (default 64)")
    a = ap.parse_args()
    why = forky.why_not("python3", "llama-completion", "node")
    if why:
        sys.exit("check_export_clients: " + why)
    tapegpt = os.path.join(a.build, "tapegpt")
    dump = os.path.join(a.build, "tests", "import", "import_logits_dump")
    package = os.path.join(REPO, ".node", "node_modules", "node-llama-cpp")
    tmp = tempfile.mkdtemp(prefix="tapegpt-export-clients-")
    try:
        ev = json.loads(run(tapegpt, "eval", "--ckpt", a.ckpt, "--tokens", a.val, "--precision", "fp32", "--json"))
        hf, g32, g16 = (os.path.join(tmp, n) for n in ("hf", "m-f32.gguf", "m-f16.gguf"))
        print(run(tapegpt, "export", "--ckpt", a.ckpt, "--format", "hf", "--out", hf).strip())
        print(run(tapegpt, "export", "--ckpt", a.ckpt, "--format", "gguf", "--out", g32).strip())
        run(tapegpt, "export", "--ckpt", a.ckpt, "--format", "gguf", "--dtype", "f16", "--out", g16)
        with open(os.path.join(hf, "config.json")) as f:
            config = json.load(f)
        T = config.get("max_position_embeddings") or config.get("n_positions")
        ids = read_token_file(a.val)
        windows = [ids[s:s + T + 1] for s in range(0, len(ids) - 1, T)]
        failed = []

        job = os.path.join(tmp, "hf-job.json")
        with open(job, "w") as f:
            json.dump({"dir": hf, "text": PROMPT, "windows": windows, "threads": 2}, f)
        o = json.loads(forky.run("python3", os.path.join(REPO, "tests", "export", "hf_check.py"), job,
                                 timeout=3600).stdout)
        mean = sum(o["nll"]) / o["targets"]
        rel = abs(mean - ev["loss"]) / ev["loss"]
        print(f"transformers {o['transformers']} {o['architectures']}: mean NLL {mean:.6f} over {o['targets']} "
              f"targets, tapegpt eval {ev['loss']:.6f} over {ev['tokens']}: relative difference {rel:.2e}")
        if rel > 1e-4 or o["targets"] != ev["tokens"]:
            failed.append("transformers")

        full = [w for w in windows if len(w) == T + 1][:a.windows]
        for name, gguf in (("f32", g32), ("f16", g16)):
            nll = ref = 0.0
            for w in full:
                idsbin, logits = os.path.join(tmp, "ids.bin"), os.path.join(tmp, "logits.bin")
                with open(idsbin, "wb") as f:
                    f.write(struct.pack("<%di" % T, *w[:T]))
                run(dump, a.ckpt, idsbin, "1", str(T), logits)
                with open(job, "w") as f:
                    json.dump({"model": gguf, "text": PROMPT, "window": w, "logits": logits,
                               "vocab": os.path.getsize(logits) // (4 * T), "kv": "f32", "threads": 2,
                               "package": package}, f)
                r = json.loads(forky.run("node", os.path.join(REPO, "tests", "export", "llama_check.mjs"), job,
                                         timeout=600).stdout)
                nll += sum(x if x is not None else float("inf") for x in r["nll"])
                ref += sum(r["ref_nll"])
            rel = abs(nll - ref) / ref
            print(f"llama.cpp (node-llama-cpp), {name} weights: mean NLL {nll / (T * len(full)):.6f} over "
                  f"{len(full)} windows of {T}, tapegpt {ref / (T * len(full)):.6f}: relative difference {rel:.2e}")
            if rel > 2e-3:
                failed.append("llama.cpp " + name)

        n = min(a.greedy, T - len(run(tapegpt, "tokenize", "--ckpt", a.ckpt, "--text", PROMPT).split()))
        ours = run(tapegpt, "sample", "--ckpt", a.ckpt, "--prompt", PROMPT, "--max-new-tokens", str(n), "--top-k", "1",
                   "--precision", "fp32", "--threads", "2")[len(PROMPT):-1]
        theirs = ""
        for _ in range(5):  # llama-completion 0.7.0 sometimes loses its output's end at exit
            theirs = forky.run("llama-completion", "-m", g32, "-p", PROMPT, "-n", str(n), "--temp", "0", "-c", str(T),
                               "-t", "2", "-no-cnv", "--no-display-prompt", "--no-warmup", "--simple-io",
                               "--ignore-eos").stdout
            if len(theirs) >= len(ours) + 2:
                break
        theirs = theirs[:-2]
        print(f"greedy, {n} tokens after {PROMPT!r}: {'the same' if theirs == ours else 'DIFFERENT'}\n"
              f"  tapegpt sample --top-k 1: {ours!r}\n  llama-completion --temp 0: {theirs!r}")
        if theirs != ours:
            failed.append("greedy")
        if failed:
            sys.exit("check_export_clients: failed: " + ", ".join(failed))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
