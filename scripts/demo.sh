#!/usr/bin/env bash
# The main job: set up, build, then train a character-level GPT on the
# embedded Tiny Shakespeare for a three-minute budget (`train --budget`:
# the model, optimizer and steps chosen for this machine and those minutes),
# report its validation loss and perplexity, and sample from it.
# DEMO_BUDGET=5m gives it longer; DEMO_TRAIN_FLAGS adds training flags.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
TG=build/tapegpt
DATA=runs/shakespeare-char/data
RUN=runs/shakespeare-char

$TG prepare --input data/tinyshakespeare.txt --tokenizer char --out "$DATA"
# --overwrite: running the demo again starts its run afresh.
$TG train --data "$DATA" --out "$RUN" --overwrite --budget "${DEMO_BUDGET:-3m}" ${DEMO_TRAIN_FLAGS:-}
echo
echo "== validation loss and perplexity (best checkpoint)"
$TG eval --ckpt "$RUN/best.h5" --tokens "$DATA/val.bin"
echo
echo "== sample"
$TG sample --ckpt "$RUN/best.h5" --prompt "ROMEO:" --max-new-tokens 400 --temperature 0.8 --top-k 40
