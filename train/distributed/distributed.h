// Distributed: the processes of one `mpirun` job training one model by data
// parallelism (Note [Data parallelism]). Built on MPI when CMake finds it
// (distributed_mpi.cpp), else on a one-process stub (distributed_single.cpp);
// a process not launched by mpirun is always one process, and every call is
// then the identity, so a one-process run is exactly the run it always was.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>

#include "autograd/base/fnv.h"

namespace train {

// Note [Data parallelism]: every rank holds the whole model and optimizer.
// The global batch is --batch-size B × --grad-accum K sequences whatever the
// number N of processes; N must divide K, and rank r runs micro-batches
// [r·K/N, (r+1)·K/N) of each step. Every rank walks the whole step's sampler
// and RNG stream, reading only its own micro-batches and skipping the draws
// of the others' (SequentialSampler::skip, RandomSampler::skip, the dropout
// seed), so micro-batch i gets the same windows and dropout masks for any N,
// and every rank ends the step holding the global sampler position and RNG
// state: the ones a checkpoint saves, so a run resumes with any N.
// Each backward is seeded with 1/K, so the ranks' gradient sum is the
// one-process average; it is summed before the norm, clipping and AdamW, so
// every rank applies the identical update (checked at every checkpoint by a
// weight checksum). Only the order of float additions differs from one
// process: there micro-batch k's gradient is added into the running sum
// kernel by kernel, here each rank sums its own and MPI adds the ranks'
// sums. The difference starts near one float32 ulp per step and AdamW
// carries it on: tests/distributed/mpiutil.py states the measured bound.
class Distributed {
 public:
  Distributed();  // joins the MPI job when launched by mpirun
  ~Distributed();
  Distributed(const Distributed&) = delete;
  Distributed& operator=(const Distributed&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }
  int local_size() const { return local_size_; }  // ranks on this machine
  // Note [Stall timeout]: how long a rank waits in a collective for the
  // others before naming the rank that does not answer and ending the job
  // (0 = wait forever). --stall-timeout sets it.
  void set_stall_timeout(double seconds) { stall_timeout_s_ = seconds; }

  // Runs `setup` (which returns a fingerprint of what must be equal on every
  // rank: token files, flags, run state) on every rank and agrees on the
  // outcome in one collective. When ranks failed, the lowest of them rethrows
  // its error (naming its rank unless all failed) and the others return
  // false, to exit with code 1 quietly; when a fingerprint differs from rank
  // 0's, rank 0 throws a tg::DataError naming that rank. One process: just
  // setup(), exceptions untouched.
  bool agree_setup(const std::function<uint64_t()>& setup);
  // Runs the training. With several ranks, an exception on one of them
  // prints one line naming the rank and the cause and ends every process of
  // the job (MPI_Abort): none is left waiting in a collective. A rank that
  // stops answering ends the job the same way (Note [Stall timeout]).
  int run(const std::function<int()>& body);

  // Sums x over the ranks, in place; the wait is added to reduce_seconds().
  void sum_in_place(float* x, int64_t n);
  // The same without waiting (Note [All-reduce overlap] in grad_buckets.h):
  // start_sum begins it, progress() lets MPI move started sums on while the
  // caller computes, wait_sums() waits for all (the wait is added too).
  // x must stay untouched until wait_sums() returns.
  void start_sum(float* x, int64_t n);
  void progress();
  // Sharded (Note [Sharded optimizer state]): sums x[begin, end) over the
  // ranks, but each rank receives only the part inside its own slice
  // [r·slice, (r+1)·slice), found at its place in x once wait_sums() has
  // returned; the rest of the range is then undefined. Half the bytes of
  // start_sum at two ranks: ring all-reduce = reduce-scatter + all-gather.
  void start_reduce_scatter(float* x, int64_t begin, int64_t end, int64_t slice);
  void wait_sums();
  double sum(double v);
  // Rank 0's v on every rank: a decision (the --budget plan's measured
  // times, its guard's step count) made once for the whole job.
  double from_root(double v);
  // Note [Sharded optimizer state] in optimizer_shard.h: x[n] in slices of
  // `slice` floats, rank r's at x + r·slice (the last ones shorter or
  // empty). all_gather_slices: every rank's slice of x, in place, reaches
  // every rank. gather_slices: rank r's `mine` lands in rank 0's full[n]
  // (full is read on rank 0 only; rank 0's own slice is copied there too).
  // The waits are added to reduce_seconds().
  void all_gather_slices(float* x, int64_t slice, int64_t n);
  void all_gather_slices(double* x, int64_t slice, int64_t n);
  void all_gather_slices(uint16_t* x, int64_t slice, int64_t n);
  // The same over elements [begin, n) of the slices only, x pointing at
  // element begin: the float32 part of a bf16 run's store (Note [Split
  // master weights]).
  void all_gather_slices(float* x, int64_t slice, int64_t begin, int64_t n);
  void gather_slices(const float* mine, float* full, int64_t slice, int64_t n);
  bool any(bool flag);
  int first_rank_with(bool flag);  // size() when no rank has it
  // The lowest rank whose value differs from rank 0's, or -1.
  int first_rank_differing(uint64_t value);

  // Seconds spent in sum_in_place since the last call.
  double take_reduce_seconds() {
    const double s = reduce_seconds_;
    reduce_seconds_ = 0.0;
    return s;
  }

 private:
  int rank_ = 0, size_ = 1, local_size_ = 1;
  bool mpi_ = false;
  double reduce_seconds_ = 0.0;
  double stall_timeout_s_ = 300.0;
  struct Mpi;  // MPI handles: sums started and not yet waited for, the watch communicator
  std::unique_ptr<Mpi> mpi_handles_;
  void wait(void* requests, int n);  // MPI_Request[n], bounded (Note [Stall timeout])
  template <typename Done>
  void wait_until(Done done);  // until done() is true, bounded the same way
  enum class Element { Float, Double, Uint16 };
  void all_gather_slices(void* x, int64_t slice, int64_t begin, int64_t n, Element type);
};

// Whether micro-batch k of K belongs to `rank` of `size` (size divides K).
inline bool owns_micro_batch(int64_t k, int64_t K, int rank, int size) {
  return k / (K / size) == rank;
}

// FNV-1a over n 32-bit words, continuing from h: equal buffers give equal
// checksums on every rank.
inline uint64_t checksum_words(const uint32_t* x, int64_t n, uint64_t h = tg::kFnvOffset) {
  for (int64_t i = 0; i < n; ++i) h = (h ^ x[i]) * tg::kFnvPrime;
  return h;
}

// The same over the bits of n floats.
inline uint64_t checksum_floats(const float* x, int64_t n, uint64_t h = tg::kFnvOffset) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    h = (h ^ bits) * tg::kFnvPrime;
  }
  return h;
}

}  // namespace train
