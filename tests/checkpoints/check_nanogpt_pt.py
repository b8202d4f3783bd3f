#!/usr/bin/python3
"""Checks a .pt written by scripts/h5_to_nanogpt.py against its source .h5,
then writes a copy dressed like a torch.compile'd nanoGPT checkpoint
(_orig_mod. prefixes, causal-mask buffers) for nanogpt_to_h5.py to undo.

    check_nanogpt_pt.py OUT.pt SOURCE.h5 DRESSED.pt
"""
import sys

import h5py
import numpy as np
import torch

pt_path, h5_path, dressed_path = sys.argv[1:4]
ckpt = torch.load(pt_path, map_location="cpu")
sd, args = ckpt["model"], ckpt["model_args"]
assert set(args) == {"n_layer", "n_head", "n_embd", "block_size", "bias", "vocab_size", "dropout"}, args
with h5py.File(h5_path, "r") as f:
    cfg = f["config"].attrs
    for key in ("n_layer", "n_head", "n_embd", "block_size", "vocab_size"):
        assert args[key] == int(cfg[key]), key
    assert args["bias"] == bool(cfg["bias"]) and abs(args["dropout"] - float(cfg["dropout"])) < 1e-7
    for name, ds in f["model"].items():
        got = sd[name].numpy()
        assert got.dtype == np.float32 and got.shape == ds.shape, name
        assert got.tobytes() == np.asarray(ds).tobytes(), f"{name} not bit-exact"
    assert ckpt["iter_num"] == int(f["train"].attrs["step"])
# nanoGPT's state_dict has lm_head.weight sharing wte's storage.
assert torch.equal(sd["lm_head.weight"], sd["transformer.wte.weight"])
assert ckpt["config"]["batch_size"] == 12 and ckpt["config"]["dataset"] == "shakespeare"

dressed = {"_orig_mod." + k: v for k, v in sd.items()}
for layer in range(args["n_layer"]):
    T = args["block_size"]
    dressed[f"_orig_mod.transformer.h.{layer}.attn.bias"] = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
torch.save({"model": dressed, "model_args": args, "iter_num": 0, "best_val_loss": 1.0,
            "config": {"learning_rate": 6e-4, "beta1": 0.9, "beta2": 0.99, "weight_decay": 0.1}},
           dressed_path)
print("check_nanogpt_pt: ok")
