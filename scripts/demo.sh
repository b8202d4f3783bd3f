#!/usr/bin/env bash
# The main job: set up, build, then train a character-level GPT on the
# embedded Tiny Shakespeare for about five minutes on 2 cores, report its
# validation loss and perplexity, and sample from it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
TG=build/tapegpt
DATA=runs/shakespeare-char/data
RUN=runs/shakespeare-char

$TG prepare --input data/tinyshakespeare.txt --tokenizer char --out "$DATA"
# --overwrite: running the demo again starts its run afresh.
$TG train --data "$DATA" --out "$RUN" --overwrite ${DEMO_TRAIN_FLAGS:-}
echo
echo "== validation loss and perplexity (best checkpoint)"
$TG eval --ckpt "$RUN/best.h5" --tokens "$DATA/val.bin"
echo
echo "== sample"
$TG sample --ckpt "$RUN/best.h5" --prompt "ROMEO:" --max-new-tokens 400 --temperature 0.8 --top-k 40
