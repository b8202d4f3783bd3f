#!/usr/bin/python3
"""Converts a nanoGPT ckpt.pt (or a bare state_dict) into a tapegpt checkpoint.

A checkpoint must carry its tokenizer, so pick where it comes from:
  --tokenizer-from FILE         copy the tokenizer of a tapegpt checkpoint
                                (.h5), or the tokenizer.json (or its
                                directory) that tapegpt's prepare wrote
  --byte                        the 256-token byte tokenizer
  --meta-pkl META.pkl           nanoGPT's character-level meta.pkl (itos);
                                pickle runs code: only use your own files
The result has the model, config, tokenizer, optimizer hyper-parameters (from
the nanoGPT config when present) and train state at step 0; no optimizer
moments, so training from it starts AdamW fresh.

GELU: --gelu tanh|erf, else the 'gelu' entry h5_to_nanogpt.py records in the
checkpoint's config, else erf: nanoGPT's current model.py uses nn.GELU()
(erf); its older new_gelu was the tanh form (pass --gelu tanh for those).

Any mistake ends as one line 'nanogpt_to_h5: error: ...' and exit code 2
(usage) or 1 (data), never a traceback.

    /usr/bin/python3 scripts/nanogpt_to_h5.py out/ckpt.pt runs/x/ckpt.h5 --byte
"""
import argparse
import json
import math
import os
import pickle
import sys

try:
    import h5py
    import numpy as np
    import torch
except ImportError as e:
    sys.exit(f"nanogpt_to_h5: error: {e}; install python3-torch python3-h5py python3-numpy")


class DataError(Exception):
    """A problem with an input file: one line, exit code 1."""



def checksummed(group, name, data):
    """A dataset as tapegpt writes it (format_version 2): chunked with a
    Fletcher32 checksum, or contiguous when empty (nothing to checksum)."""
    if data.size == 0:
        return group.create_dataset(name, data=data)
    return group.create_dataset(name, data=data, chunks=True, fletcher32=True)

def fail(message):
    raise DataError(message)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of usage + error
        sys.stderr.write(f"nanogpt_to_h5: error: {message}; see --help\n")
        sys.exit(2)


def fixed(value):
    """A fixed-length NUL-padded string attribute, the only kind tapegpt reads."""
    data = value.encode("utf-8")
    return np.array(data if data else b"\0", dtype=f"S{max(1, len(data))}")


def expected_shapes(a):
    """tapegpt's parameter table (nn/params.cpp) for model args `a`."""
    V, T, C = a["vocab_size"], a["block_size"], a["n_embd"]
    shapes = {"transformer.wte.weight": (V, C), "transformer.wpe.weight": (T, C)}
    for l in range(a["n_layer"]):
        h = f"transformer.h.{l}."
        layer = {"ln_1.weight": (C,), "ln_1.bias": (C,), "attn.c_attn.weight": (3 * C, C),
                 "attn.c_attn.bias": (3 * C,), "attn.c_proj.weight": (C, C), "attn.c_proj.bias": (C,),
                 "ln_2.weight": (C,), "ln_2.bias": (C,), "mlp.c_fc.weight": (4 * C, C),
                 "mlp.c_fc.bias": (4 * C,), "mlp.c_proj.weight": (C, 4 * C), "mlp.c_proj.bias": (C,)}
        for k, s in layer.items():
            if a["bias"] or not k.endswith(".bias"):
                shapes[h + k] = s
    shapes["transformer.ln_f.weight"] = (C,)
    if a["bias"]:
        shapes["transformer.ln_f.bias"] = (C,)
    if not a["tied"]:
        shapes["lm_head.weight"] = (V, C)
    return shapes


def load_state(path):
    try:
        ckpt = torch.load(path, map_location="cpu")
    except FileNotFoundError:
        fail(f"{path}: no such file")
    except Exception as e:  # torch raises many kinds for a file it cannot read
        fail(f"{path} is not a PyTorch checkpoint torch.load can read ({type(e).__name__}: "
             f"{str(e).splitlines()[0] if str(e) else ''})")
    state = ckpt.get("model", ckpt) if isinstance(ckpt, dict) else None
    if not isinstance(state, dict):
        fail(f"{path} holds neither a nanoGPT checkpoint nor a state_dict")
    clean = {}
    for key, value in state.items():
        # torch.compile wraps the model: its keys carry an _orig_mod. prefix.
        while key.startswith("_orig_mod."):
            key = key[len("_orig_mod."):]
        # nanoGPT's causal-mask buffers are not parameters.
        if key.endswith(".attn.bias") or key.endswith(".attn.masked_bias"):
            continue
        if torch.is_tensor(value):
            clean[key] = value.detach().to(torch.float32).cpu().numpy()
    return ckpt, clean


def model_args_of(ckpt, state):
    args = dict(ckpt.get("model_args", {})) if isinstance(ckpt, dict) else {}
    wte = state.get("transformer.wte.weight")
    if wte is None:
        fail("the state_dict has no transformer.wte.weight: not a nanoGPT GPT")
    args.setdefault("vocab_size", wte.shape[0])
    args.setdefault("n_embd", wte.shape[1])
    if "transformer.wpe.weight" in state:
        args.setdefault("block_size", state["transformer.wpe.weight"].shape[0])
    args.setdefault("n_layer", len({k.split(".")[2] for k in state if k.startswith("transformer.h.")}))
    args.setdefault("bias", "transformer.ln_f.bias" in state)
    args.setdefault("dropout", 0.0)
    if "n_head" not in args:
        fail("the checkpoint has no model_args with n_head; pass --n-head")
    lm_head = state.get("lm_head.weight")
    args["tied"] = lm_head is None or np.array_equal(lm_head, wte)
    if args["tied"]:
        state.pop("lm_head.weight", None)
    return args


def tokenizer_from_json(path):
    """A tokenizer.json written by tapegpt prepare (Note [tokenizer.json format])."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        if doc.get("format") != "tapegpt-tokenizer":
            fail(f"{path} is not a tapegpt tokenizer.json (no format 'tapegpt-tokenizer')")
        tokens = [bytes.fromhex(t) for t in doc["tokens"]]
        merges = np.asarray(doc.get("merges", []), dtype=np.int32).reshape(-1, 2)
        return str(doc["type"]), tokens, merges
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        fail(f"{path} is not a valid tokenizer.json ({type(e).__name__}: {e})")


def tokenizer_from_h5(path):
    try:
        with h5py.File(path, "r") as f:
            if "tokenizer" not in f:
                fail(f"{path} has no /tokenizer group (not a tapegpt checkpoint?)")
            g = f["tokenizer"]
            kind = g.attrs["type"]
            kind = kind.decode("utf-8") if isinstance(kind, (bytes, np.bytes_)) else str(kind)
            data = bytes(np.asarray(g["token_bytes"], dtype=np.uint8))
            offsets = np.asarray(g["token_offsets"], dtype=np.int64)
            tokens = [data[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
            merges = np.asarray(g["merges"], dtype=np.int32).reshape(-1, 2)
        return kind, tokens, merges
    except (KeyError, ValueError, TypeError) as e:
        fail(f"{path}: its /tokenizer group is damaged ({type(e).__name__}: {e})")


def tokenizer_of(opts):
    """(type, list of token bytes, merges [M, 2] int32)."""
    if opts.byte:
        return "byte", [bytes([i]) for i in range(256)], np.zeros((0, 2), np.int32)
    if opts.meta_pkl:
        try:
            with open(opts.meta_pkl, "rb") as fh:
                meta = pickle.load(fh)
            itos = meta["itos"]
            return "char", [itos[i].encode("utf-8") for i in range(len(itos))], np.zeros((0, 2), np.int32)
        except (pickle.UnpicklingError, EOFError, KeyError, TypeError, AttributeError, ValueError) as e:
            fail(f"{opts.meta_pkl} is not nanoGPT's meta.pkl with an itos table ({type(e).__name__}: {e})")
    path = opts.tokenizer_from
    if os.path.isdir(path):
        path = os.path.join(path, "tokenizer.json")
    if not os.path.isfile(path):
        fail(f"--tokenizer-from {opts.tokenizer_from}: no such file")
    with open(path, "rb") as fh:
        head = fh.read(8)
    if head == b"\x89HDF\r\n\x1a\n":
        return tokenizer_from_h5(path)
    return tokenizer_from_json(path)


def gelu_of(opts, ckpt):
    """'tanh' or 'erf' (see the module docstring), and where it came from."""
    if opts.gelu:
        return opts.gelu
    config = ckpt.get("config", {}) if isinstance(ckpt, dict) else {}
    recorded = config.get("gelu") if isinstance(config, dict) else None
    if recorded in ("tanh", "erf"):
        return recorded
    print("nanogpt_to_h5: note: the checkpoint does not record its GELU; assuming erf "
          "(nanoGPT's nn.GELU()); pass --gelu tanh for a model trained with new_gelu",
          file=sys.stderr)
    return "erf"


def main():
    try:
        convert()
    except (DataError, OSError) as e:  # OSError: unreadable input, unwritable output, bad HDF5
        lines = str(e).splitlines()
        sys.stderr.write(f"nanogpt_to_h5: error: {lines[0] if lines else type(e).__name__}\n")
        sys.exit(1)


def convert():
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("pt", help="nanoGPT ckpt.pt or a saved state_dict")
    parser.add_argument("out", help="tapegpt checkpoint to write (.h5)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tokenizer-from", metavar="FILE",
                        help="a tapegpt checkpoint (.h5), or prepare's tokenizer.json or its directory")
    source.add_argument("--byte", action="store_true")
    source.add_argument("--meta-pkl", metavar="PKL")
    parser.add_argument("--n-head", type=int, help="only for a bare state_dict without model_args")
    parser.add_argument("--gelu", choices=["tanh", "erf"],
                        help="the model's GELU (default: as recorded, else erf, nanoGPT's)")
    opts = parser.parse_args()

    ckpt, state = load_state(opts.pt)
    if opts.n_head:
        if not isinstance(ckpt, dict) or "model_args" not in ckpt:
            ckpt = {"model_args": {"n_head": opts.n_head}}
    args = model_args_of(ckpt, state)
    gelu = gelu_of(opts, ckpt)
    if "transformer.wpe.weight" not in state:
        fail("the state_dict has no transformer.wpe.weight (tapegpt's sinusoidal models have none, "
             "but nanoGPT's always do)")

    shapes = expected_shapes(args)
    for name, shape in shapes.items():
        if name not in state:
            fail(f"the state_dict lacks {name}, which the model args require")
        if tuple(state[name].shape) != shape:
            fail(f"{name} has shape {list(state[name].shape)}, expected {list(shape)}")
        if not np.all(np.isfinite(state[name])):
            fail(f"{name} holds NaN or Inf")
    extra = sorted(set(state) - set(shapes))
    if extra:
        print(f"nanogpt_to_h5: warning: ignoring tensors tapegpt has no use for: {', '.join(extra)}",
              file=sys.stderr)

    kind, tokens, merges = tokenizer_of(opts)
    if not 1 <= len(tokens) <= args["vocab_size"]:
        fail(f"the tokenizer has {len(tokens)} tokens but the model's vocab_size is {args['vocab_size']}")

    train_config = ckpt.get("config", {}) if isinstance(ckpt, dict) else {}
    tmp = f"{opts.out}.tmp-{os.getpid()}"
    try:
        # v1.8+ structures: checksummed metadata, the only kind tapegpt loads.
        with h5py.File(tmp, "w", libver=("v108", "latest")) as f:
            f.attrs["format"] = fixed("tapegpt")
            f.attrs["format_version"] = np.int64(2)  # every dataset checksummed (Fletcher32)
            c = f.create_group("config")
            for key in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
                c.attrs[key] = np.int64(args[key])
            c.attrs["bias"] = np.int64(bool(args["bias"]))
            c.attrs["tied"] = np.int64(bool(args["tied"]))
            c.attrs["dropout"] = np.float64(args["dropout"])
            c.attrs["pos_encoding"] = fixed("learned")
            c.attrs["gelu"] = fixed(gelu)
            m = f.create_group("model")
            for name in shapes:
                checksummed(m, name, np.ascontiguousarray(state[name], dtype="<f4"))
            o = f.create_group("optimizer")
            o.attrs["step"] = np.int64(0)
            o.attrs["lr"] = np.float64(train_config.get("learning_rate", 0.0))
            o.attrs["beta1"] = np.float64(train_config.get("beta1", 0.9))
            o.attrs["beta2"] = np.float64(train_config.get("beta2", 0.95))
            o.attrs["eps"] = np.float64(1e-8)
            o.attrs["weight_decay"] = np.float64(train_config.get("weight_decay", 0.1))
            t = f.create_group("train")
            for key in ("step", "tokens_seen", "sampler_position"):
                t.attrs[key] = np.int64(0)
            t.attrs["seed"] = np.uint64(0)
            t.attrs["rng_state"] = np.zeros(4, dtype=np.uint64)
            t.attrs["best_val_loss"] = np.float64(math.inf)
            t.attrs["data_hash"] = fixed("")
            t.attrs["run_dir"] = fixed("")
            t.attrs["run_id"] = fixed(os.urandom(8).hex())
            t.create_group("flags", track_order=True)
            k = f.create_group("tokenizer")
            k.attrs["type"] = fixed(kind)
            offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
            offsets[1:] = np.cumsum([len(b) for b in tokens])
            checksummed(k, "token_bytes", np.frombuffer(b"".join(tokens), dtype=np.uint8))
            checksummed(k, "token_offsets", offsets)
            checksummed(k, "merges", np.asarray(merges, dtype=np.int32).reshape(-1, 2))
        os.replace(tmp, opts.out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    print(f"nanogpt_to_h5: wrote {opts.out}")


if __name__ == "__main__":
    main()
