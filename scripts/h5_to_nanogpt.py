#!/usr/bin/python3
"""Converts a tapegpt checkpoint (HDF5) into a nanoGPT-style ckpt.pt.

The output is {'model': state_dict, 'model_args': {...}, 'iter_num': step,
'best_val_loss': ..., 'config': {training flags}}, which nanoGPT's sample.py
loads as is (init_from='resume'). The optimizer state is not converted.

    /usr/bin/python3 scripts/h5_to_nanogpt.py runs/x/ckpt.h5 out/ckpt.pt

Needs torch, h5py and numpy (Debian: python3-torch python3-h5py python3-numpy).

GELU: the model's variant (/config gelu, tanh when absent) is recorded as
config['gelu'] in the output (nanoGPT's GPTConfig takes no such argument, so
it is not in model_args), and read back by nanogpt_to_h5.py. nanoGPT's
current model.py uses nn.GELU(), the erf form; a tanh model (the default,
GPT-2's) needs nn.GELU(approximate='tanh') there, and this script says so.

Any mistake ends as one line 'h5_to_nanogpt: error: ...' and exit code 2
(usage) or 1 (data), never a traceback.
"""
import argparse
import os
import re
import sys

try:
    import h5py
    import numpy as np
    import torch
except ImportError as e:
    sys.exit(f"h5_to_nanogpt: error: {e}; install python3-torch python3-h5py python3-numpy")


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of usage + error
        sys.stderr.write(f"h5_to_nanogpt: error: {message}; see --help\n")
        sys.exit(2)


def fail(message):
    sys.stderr.write(f"h5_to_nanogpt: error: {message}\n")
    sys.exit(1)


def text(value):
    """An HDF5 string attribute as str (tapegpt writes fixed-length bytes)."""
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8")
    return str(value)


def nanogpt_order(name):
    """Sort key giving nanoGPT's state_dict order (wte, wpe, h.0..., ln_f, lm_head)."""
    m = re.match(r"transformer\.h\.(\d+)\.(.*)", name)
    sub = ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
           "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
           "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"]
    if m:
        rest = m.group(2)
        return (1, int(m.group(1)), sub.index(rest) if rest in sub else len(sub), rest)
    head = {"transformer.wte.weight": 0, "transformer.wpe.weight": 0.5}
    if name in head:
        return (0, head[name], 0, name)
    return (2, 0, 0, name)


# /config choices beyond pos_encoding (checked above) and gelu (recorded in
# config['gelu']) that nanoGPT's model.py can compute: one value each.
NANOGPT_CHOICES = {"norm": "layernorm", "mlp": "gelu", "qk_norm": "off", "logit_softcap": "off"}


def main():
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("ckpt", help="tapegpt checkpoint (.h5)")
    parser.add_argument("out", help="nanoGPT checkpoint to write (.pt)")
    args = parser.parse_args()
    try:
        convert(args)
    except (OSError, KeyError, ValueError, TypeError, RuntimeError) as e:
        # A missing or damaged file, an unwritable output, a missing attribute.
        detail = str(e).splitlines()[0] if str(e) else ""
        fail(f"cannot convert {args.ckpt} to {args.out} ({type(e).__name__}: {detail})")


def convert(args):
    with h5py.File(args.ckpt, "r") as f:
        if text(f.attrs.get("format", b"")) != "tapegpt":
            fail(f"{args.ckpt} is not a tapegpt checkpoint (no format='tapegpt')")
        # Version 2 adds only per-dataset Fletcher32 checksums, which h5py
        # (HDF5) verifies as it reads.
        if int(f.attrs["format_version"]) not in (1, 2):
            fail(f"{args.ckpt} has format_version {int(f.attrs['format_version'])}; "
                 "this script reads versions 1 and 2")
        cfg = f["config"].attrs
        if text(cfg["pos_encoding"]) != "learned":
            fail("nanoGPT has only learned position embeddings; this model uses "
                 f"{text(cfg['pos_encoding'])} positions and cannot be converted")
        # The model choices nanoGPT's model has (Note [Model choices] in
        # nn/config.h; absent in older checkpoints = the default). Its
        # LayerNorm and GELU MLP would load some other choices' weights and
        # silently compute another function, so refuse rather than write them.
        for key, nanogpt in NANOGPT_CHOICES.items():
            value = text(cfg[key]) if key in cfg else nanogpt
            if value != nanogpt:
                fail(f"nanoGPT's model has only {key} {nanogpt}; this model uses {key} {value} "
                     "and cannot be converted")
        gelu = text(cfg["gelu"]) if "gelu" in cfg else "tanh"
        if gelu not in ("tanh", "erf"):
            fail(f"/config gelu is '{gelu}', expected tanh or erf")
        tied = bool(int(cfg["tied"]))
        model_args = dict(
            n_layer=int(cfg["n_layer"]), n_head=int(cfg["n_head"]), n_embd=int(cfg["n_embd"]),
            block_size=int(cfg["block_size"]), bias=bool(int(cfg["bias"])),
            vocab_size=int(cfg["vocab_size"]), dropout=float(cfg["dropout"]))
        state = {}
        for name in sorted(f["model"].keys(), key=nanogpt_order):
            state[name] = torch.from_numpy(np.asarray(f["model"][name], dtype=np.float32))
        if tied:
            # nanoGPT ties lm_head to wte; its state_dict lists both keys, one tensor.
            state["lm_head.weight"] = state["transformer.wte.weight"]
        else:
            print("h5_to_nanogpt: warning: this model has an untied lm_head; nanoGPT's GPT class "
                  "always ties it to wte, so load the state_dict into a model without tying",
                  file=sys.stderr)
        train = f["train"].attrs
        flags = {}
        if "flags" in f["train"]:
            for key, value in f["train/flags"].attrs.items():
                flags[key] = text(value) if isinstance(value, (bytes, np.bytes_, str)) else value.item()
        flags["gelu"] = gelu
        out = {"model": state, "model_args": model_args, "iter_num": int(train["step"]),
               "best_val_loss": float(train["best_val_loss"]), "config": flags}
    # Atomic: a failed save leaves no half-written .pt (and an old one intact).
    tmp = f"{args.out}.tmp-{os.getpid()}"
    try:
        torch.save(out, tmp)
        os.replace(tmp, args.out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    if gelu == "tanh":
        print("h5_to_nanogpt: note: this model uses the tanh GELU (GPT-2's); nanoGPT's current "
              "model.py uses nn.GELU() (erf): use nn.GELU(approximate='tanh') in its MLP to "
              "reproduce this model's outputs", file=sys.stderr)
    print(f"h5_to_nanogpt: wrote {args.out} ({sum(t.numel() for k, t in state.items() if k != 'lm_head.weight' or not tied)} "
          "parameters)")


if __name__ == "__main__":
    main()
