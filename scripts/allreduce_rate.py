#!/usr/bin/python3
# A bare MPI all-reduce of N float32s, timed: what the link gives MPI alone,
# with no training around it. Run under mpirun by scripts/bench_mpi.py;
# rank 0 prints the median seconds of REPS all-reduces, each after a barrier
# so that no rank's lateness is counted as transfer.
"""Usage: mpirun -np 2 allreduce_rate.py N [REPS]"""
import sys
import time

import numpy as np
from mpi4py import MPI

n = int(sys.argv[1])
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
comm = MPI.COMM_WORLD
x = np.ones(n, dtype=np.float32)
times = []
for _ in range(reps + 1):  # the first sets up the connections
    comm.Barrier()
    t0 = time.perf_counter()
    comm.Allreduce(MPI.IN_PLACE, x, op=MPI.SUM)
    times.append(time.perf_counter() - t0)
if comm.Get_rank() == 0:
    print(sorted(times[1:])[len(times[1:]) // 2])
