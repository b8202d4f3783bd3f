#!/usr/bin/env bash
# Trains the same small runs with two tapegpt binaries and checks that their
# checkpoints hold bit-identical weights, moments and training state: the
# test a behaviour-preserving refactor must pass (issue 10).
#   scripts/check_bit_identical.sh OLD_TAPEGPT NEW_TAPEGPT
# Covers dropout, gradient accumulation, both samplers, untied/no-bias/
# sinusoidal shapes, erf GELU, RMSNorm/RoPE/ReLU²/SwiGLU, zero-initialised
# projections, several threads, a resume, and bf16 runs with AdamW and with
# Muon (where the CPU has AVX-512); and, for each case, that `sample` (KV
# cache) and `eval` print the same text and loss from the final checkpoint.
set -euo pipefail
old="$(realpath "$1")"; new="$(realpath "$2")"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
head -c 200000 "$root/data/tinyshakespeare.txt" > "$work/corpus.txt"
"$old" prepare --input "$work/corpus.txt" --out "$work/data" --tokenizer char >/dev/null

compare() {  # compare A.h5 B.h5: every dataset byte for byte, every attribute but the run id and wall time
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
bad = []
def names(f):
    out = []
    f.visititems(lambda n, o: out.append(n))
    return sorted(out)
if names(a) != names(b): bad.append("different dataset/group names")
for n in names(a):
    oa, ob = a[n], b.get(n)
    if ob is None: continue
    if isinstance(oa, h5py.Dataset) and oa[()].tobytes() != ob[()].tobytes(): bad.append(n)
    for k in oa.attrs:
        if k in ("run_id", "run_dir", "train_seconds"): continue
        va, vb = oa.attrs[k], ob.attrs.get(k)
        if not np.array_equal(np.asarray(va), np.asarray(vb)): bad.append(f"{n}@{k}")
for k in a.attrs:
    if k in ("run_id", "run_dir"): continue
    if not np.array_equal(np.asarray(a.attrs[k]), np.asarray(b.attrs.get(k))): bad.append(f"/@{k}")
if bad:
    print("DIFFER:", ", ".join(bad[:20])); sys.exit(1)
PY
}

run_case() {  # run_case NAME FLAGS...
  local name="$1"; shift
  for which in old new; do
    local bin; [[ $which == old ]] && bin="$old" || bin="$new"
    "$bin" train --data "$work/data" --out "$work/$name-$which" --n-layer 2 --n-head 2 --n-embd 32 \
      --block-size 32 --batch-size 4 --max-steps 12 --eval-interval 6 --eval-steps 2 --ckpt-interval 6 \
      --warmup 3 "$@" >/dev/null 2>&1
    "$bin" train --resume "$work/$name-$which/ckpt.h5" --max-steps 18 >/dev/null 2>&1
  done
  for f in ckpt.h5 best.h5; do
    if ! compare "$work/$name-old/$f" "$work/$name-new/$f"; then echo "FAIL $name $f"; exit 1; fi
  done
  # Sampling past block_size exercises the context shift; --temperature 0.8
  # makes every logit count. Both binaries read the old binary's checkpoint.
  for which in old new; do
    local bin; [[ $which == old ]] && bin="$old" || bin="$new"
    "$bin" sample --ckpt "$work/$name-old/ckpt.h5" --prompt "ROMEO:" --max-new-tokens 80 \
      --temperature 0.8 --seed 7 --threads 1 > "$work/$name-$which.sample" 2>/dev/null
    "$bin" eval --ckpt "$work/$name-old/ckpt.h5" --tokens "$work/data/val.bin" --stride 16 --json \
      > "$work/$name-$which.eval" 2>/dev/null || true
  done
  if ! cmp -s "$work/$name-old.sample" "$work/$name-new.sample"; then echo "FAIL $name sample"; exit 1; fi
  if ! cmp -s "$work/$name-old.eval" "$work/$name-new.eval"; then echo "FAIL $name eval"; exit 1; fi
  [[ -s "$work/$name-old.sample" && -s "$work/$name-old.eval" ]] || { echo "FAIL $name: no sample or eval output"; exit 1; }
  echo "same: $name"
}
run_case plain
run_case dropout_accum --dropout 0.1 --grad-accum 2 --threads 2
run_case sequential_untied --sampler sequential --untied --no-bias --pos-encoding sinusoidal --gelu erf --threads 1
run_case rmsnorm_rope_swiglu --norm rmsnorm --pos-encoding rope --mlp swiglu --zero-init-proj
run_case relu2_rope_dropout --mlp relu2 --pos-encoding rope --dropout 0.1 --norm rmsnorm --no-bias
# bf16 matmuls need oneDNN's AVX-512 path (Note [bf16 matmuls]).
if grep -qw avx512bw /proc/cpuinfo; then
  run_case bf16 --precision bf16 --threads 2
  run_case bf16_muon --precision bf16 --optimizer muon --grad-accum 2
  run_case bf16_rope_swiglu --precision bf16 --norm rmsnorm --pos-encoding rope --mlp swiglu --dropout 0.1
  run_case bf16_relu2_untied --precision bf16 --mlp relu2 --untied --pos-encoding sinusoidal
else
  echo "skipped the bf16 cases: this CPU has no AVX-512, so no bf16 matmuls"
fi
echo "check_bit_identical: all checkpoints bit-identical"
