#!/bin/sh
# Round trip through the Python converters: tapegpt .h5 -> nanoGPT .pt ->
# tapegpt .h5, compared bit for bit by load_checkpoint. Exits 77 (CTest:
# skipped) when /usr/bin/python3 lacks torch, h5py or numpy, or 1 under
# TAPEGPT_NO_SKIP=1 (CI installs them; tests/support/no_skip.py).
#   converter_roundtrip.sh PATH/TO/checkpoint_tool   (run from the repo root)
set -eu
tool="$1"
py=/usr/bin/python3
if ! "$py" -c "import torch, h5py, numpy" > /dev/null 2>&1; then
  if [ "${TAPEGPT_NO_SKIP:-}" = 1 ]; then
    echo "converter_roundtrip: FAIL: $py lacks torch/h5py/numpy (apt-get install python3-torch python3-h5py python3-numpy); TAPEGPT_NO_SKIP=1 allows no skip"
    exit 1
  fi
  echo "converter_roundtrip: $py lacks torch/h5py/numpy (apt-get install python3-torch python3-h5py python3-numpy); skipping"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$tool" write "$tmp/a.h5"
"$py" scripts/h5_to_nanogpt.py "$tmp/a.h5" "$tmp/a.pt"
"$py" tests/checkpoints/check_nanogpt_pt.py "$tmp/a.pt" "$tmp/a.h5" "$tmp/dressed.pt"
# dressed.pt is a foreign nanoGPT file that does not record its GELU: say it.
"$py" scripts/nanogpt_to_h5.py "$tmp/dressed.pt" "$tmp/b.h5" --tokenizer-from "$tmp/a.h5" --gelu tanh
"$tool" compare "$tmp/a.h5" "$tmp/b.h5"
"$py" scripts/nanogpt_to_h5.py "$tmp/a.pt" "$tmp/c.h5" --byte
"$tool" compare "$tmp/a.h5" "$tmp/c.h5" --model-only

# The GELU variant survives both directions, and compare sees it.
"$py" scripts/nanogpt_to_h5.py "$tmp/a.pt" "$tmp/e.h5" --tokenizer-from "$tmp/a.h5" --gelu erf
"$py" scripts/h5_to_nanogpt.py "$tmp/e.h5" "$tmp/e.pt"
"$py" -c "import sys, torch; assert torch.load(sys.argv[1])['config']['gelu'] == 'erf'" "$tmp/e.pt"
"$py" scripts/nanogpt_to_h5.py "$tmp/e.pt" "$tmp/f.h5" --tokenizer-from "$tmp/a.h5"
"$tool" compare "$tmp/e.h5" "$tmp/f.h5"
if "$tool" compare "$tmp/a.h5" "$tmp/e.h5" 2> /dev/null; then
  echo "converter_roundtrip: a tanh and an erf checkpoint compared equal"; exit 1
fi

# --tokenizer-from also takes the tokenizer.json that prepare writes (or its
# directory), as its help says.
mkdir "$tmp/data"
"$py" - "$tmp/a.h5" "$tmp/data/tokenizer.json" <<'PY'
import json, sys
import h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    g = f["tokenizer"]
    kind = g.attrs["type"].decode() if isinstance(g.attrs["type"], bytes) else str(g.attrs["type"])
    data = bytes(np.asarray(g["token_bytes"], dtype=np.uint8))
    off = np.asarray(g["token_offsets"], dtype=np.int64)
    merges = np.asarray(g["merges"], dtype=np.int64).reshape(-1, 2).tolist()
toks = [data[off[i]:off[i + 1]].hex() for i in range(len(off) - 1)]
with open(sys.argv[2], "w") as f:
    json.dump({"format": "tapegpt-tokenizer", "version": 1, "type": kind,
               "vocab_size": len(toks), "tokens": toks, "merges": merges}, f)
PY
"$py" scripts/nanogpt_to_h5.py "$tmp/a.pt" "$tmp/g.h5" --tokenizer-from "$tmp/data/tokenizer.json"
"$tool" compare "$tmp/a.h5" "$tmp/g.h5"
"$py" scripts/nanogpt_to_h5.py "$tmp/a.pt" "$tmp/h.h5" --tokenizer-from "$tmp/data"
"$tool" compare "$tmp/a.h5" "$tmp/h.h5"

# Mistakes: one error line, the right exit code, never a traceback.
printf 'not a checkpoint' > "$tmp/garbage"
expect_error() {  # CODE COMMAND...
  code=$1; shift
  set +e
  "$@" > /dev/null 2> "$tmp/err"
  got=$?
  set -e
  lines=$(grep -c . "$tmp/err" || true)
  if [ "$got" != "$code" ] || [ "$lines" != 1 ] || grep -q Traceback "$tmp/err"; then
    echo "converter_roundtrip: want exit $code and one error line from: $*"; cat "$tmp/err"; exit 1
  fi
}
expect_error 1 "$py" scripts/nanogpt_to_h5.py "$tmp/missing.pt" "$tmp/x.h5" --byte
expect_error 1 "$py" scripts/nanogpt_to_h5.py "$tmp/garbage" "$tmp/x.h5" --byte
expect_error 1 "$py" scripts/nanogpt_to_h5.py "$tmp/a.pt" "$tmp/x.h5" --tokenizer-from "$tmp/garbage"
expect_error 1 "$py" scripts/nanogpt_to_h5.py "$tmp/a.pt" "$tmp/x.h5" --tokenizer-from "$tmp/nowhere.json"
expect_error 1 "$py" scripts/nanogpt_to_h5.py "$tmp/a.pt" "$tmp/x.h5" --meta-pkl "$tmp/garbage"
expect_error 1 "$py" scripts/nanogpt_to_h5.py "$tmp/a.pt" "$tmp/nodir/x.h5" --byte
expect_error 2 "$py" scripts/nanogpt_to_h5.py "$tmp/a.pt" "$tmp/x.h5"
expect_error 2 "$py" scripts/nanogpt_to_h5.py "$tmp/a.pt" "$tmp/x.h5" --byte --gelu relu
expect_error 1 "$py" scripts/h5_to_nanogpt.py "$tmp/garbage" "$tmp/x.pt"
expect_error 1 "$py" scripts/h5_to_nanogpt.py "$tmp/missing.h5" "$tmp/x.pt"
expect_error 1 "$py" scripts/h5_to_nanogpt.py "$tmp/a.h5" "$tmp/nodir/x.pt"
expect_error 2 "$py" scripts/h5_to_nanogpt.py "$tmp/a.h5"
# Model choices nanoGPT's format cannot hold (issue 23) are refused; the
# other way needs no check: a nanoGPT file is always the defaults.
for choice in norm=rmsnorm pos_encoding=rope mlp=relu2 mlp=swiglu qk_norm=on logit_softcap=15; do
  cp "$tmp/a.h5" "$tmp/o.h5"
  "$py" - "$tmp/o.h5" "${choice%%=*}" "${choice#*=}" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    f["config"].attrs[sys.argv[2]] = np.bytes_(sys.argv[3])
PY
  expect_error 1 "$py" scripts/h5_to_nanogpt.py "$tmp/o.h5" "$tmp/x.pt"
done
test ! -e "$tmp/x.h5" && test ! -e "$tmp/x.pt"
echo "converter_roundtrip: ok"
