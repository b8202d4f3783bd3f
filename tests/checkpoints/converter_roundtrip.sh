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
"$py" scripts/nanogpt_to_h5.py "$tmp/dressed.pt" "$tmp/b.h5" --tokenizer-from "$tmp/a.h5"
"$tool" compare "$tmp/a.h5" "$tmp/b.h5"
"$py" scripts/nanogpt_to_h5.py "$tmp/a.pt" "$tmp/c.h5" --byte
"$tool" compare "$tmp/a.h5" "$tmp/c.h5" --model-only
echo "converter_roundtrip: ok"
