#!/usr/bin/env bash
# Data-parallel training across two test hosts on a shaped network: each
# rank in a network namespace of its own behind a rate-limited link
# (tests/distributed/netns.py), at 1, 5 and 10 Gbit/s, with and without the
# overlapped all-reduce and the sharded optimizer, on the demo model and
# GPT-2 small (scripts/bench_mpi.py prints what each column means).
#   sudo bash scripts/bench_mpi.sh
#   MODELS=demo RATES="1 10" STEPS=20 TAPEGPT=build/tapegpt bash scripts/bench_mpi.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TAPEGPT_WITH_BENCH=1 scripts/setup.sh >/dev/null
exec /usr/bin/python3 scripts/bench_mpi.py
