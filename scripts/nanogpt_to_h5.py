#!/usr/bin/python3
"""Converts a nanoGPT ckpt.pt (or a bare state_dict) into a tapegpt checkpoint.

A checkpoint must carry its tokenizer, so pick where it comes from:
  --tokenizer-from EXISTING.h5  copy /tokenizer from a tapegpt checkpoint or
                                the tokenizer file tapegpt's prepare wrote
  --byte                        the 256-token byte tokenizer
  --meta-pkl META.pkl           nanoGPT's character-level meta.pkl (itos);
                                pickle runs code: only use your own files
The result has the model, config, tokenizer, optimizer hyper-parameters (from
the nanoGPT config when present) and train state at step 0; no optimizer
moments, so training from it starts AdamW fresh.

    /usr/bin/python3 scripts/nanogpt_to_h5.py out/ckpt.pt runs/x/ckpt.h5 --byte
"""
import argparse
import math
import os
import pickle
import sys

import h5py
import numpy as np
import torch



def checksummed(group, name, data):
    """A dataset as tapegpt writes it (format_version 2): chunked with a
    Fletcher32 checksum, or contiguous when empty (nothing to checksum)."""
    if data.size == 0:
        return group.create_dataset(name, data=data)
    return group.create_dataset(name, data=data, chunks=True, fletcher32=True)

def fail(message):
    sys.exit(f"nanogpt_to_h5: {message}")


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
    ckpt = torch.load(path, map_location="cpu")
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


def tokenizer_of(opts):
    """(type, list of token bytes, merges [M, 2] int32)."""
    if opts.byte:
        return "byte", [bytes([i]) for i in range(256)], np.zeros((0, 2), np.int32)
    if opts.meta_pkl:
        with open(opts.meta_pkl, "rb") as fh:
            meta = pickle.load(fh)
        itos = meta["itos"]
        return "char", [itos[i].encode("utf-8") for i in range(len(itos))], np.zeros((0, 2), np.int32)
    with h5py.File(opts.tokenizer_from, "r") as f:
        if "tokenizer" not in f:
            fail(f"{opts.tokenizer_from} has no /tokenizer group")
        g = f["tokenizer"]
        kind = g.attrs["type"]
        kind = kind.decode("utf-8") if isinstance(kind, (bytes, np.bytes_)) else str(kind)
        data = bytes(np.asarray(g["token_bytes"], dtype=np.uint8))
        offsets = np.asarray(g["token_offsets"], dtype=np.int64)
        tokens = [data[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
        merges = np.asarray(g["merges"], dtype=np.int32).reshape(-1, 2)
    return kind, tokens, merges


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pt", help="nanoGPT ckpt.pt or a saved state_dict")
    parser.add_argument("out", help="tapegpt checkpoint to write (.h5)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tokenizer-from", metavar="H5")
    source.add_argument("--byte", action="store_true")
    source.add_argument("--meta-pkl", metavar="PKL")
    parser.add_argument("--n-head", type=int, help="only for a bare state_dict without model_args")
    opts = parser.parse_args()

    ckpt, state = load_state(opts.pt)
    if opts.n_head:
        if not isinstance(ckpt, dict) or "model_args" not in ckpt:
            ckpt = {"model_args": {"n_head": opts.n_head}}
    args = model_args_of(ckpt, state)
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
