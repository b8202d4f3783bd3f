#!/usr/bin/env bash
# Trains the same small runs with two tapegpt binaries and checks that their
# checkpoints hold bit-identical weights, moments and training state: the
# test a behaviour-preserving refactor must pass (issue 10).
#   scripts/check_bit_identical.sh OLD_TAPEGPT NEW_TAPEGPT
# Covers dropout, gradient accumulation, both samplers, untied/no-bias/
# sinusoidal shapes, erf GELU, several threads, a resume, and bf16 runs
# with AdamW and with Muon (where the CPU has AVX-512).
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
  echo "same: $name"
}
run_case plain
run_case dropout_accum --dropout 0.1 --grad-accum 2 --threads 2
run_case sequential_untied --sampler sequential --untied --no-bias --pos-encoding sinusoidal --gelu erf --threads 1
# bf16 matmuls need oneDNN's AVX-512 path (Note [bf16 matmuls]).
if grep -qw avx512bw /proc/cpuinfo; then
  run_case bf16 --precision bf16 --threads 2
  run_case bf16_muon --precision bf16 --optimizer muon --grad-accum 2
else
  echo "skipped the bf16 cases: this CPU has no AVX-512, so no bf16 matmuls"
fi
echo "check_bit_identical: all checkpoints bit-identical"
