// RingSums: the gradient sums of data parallelism as ring reduce-scatters
// and all-reduces over MPI point-to-point messages (Note [Ring sums]). Used
// only by distributed_mpi.cpp; with it, the only code that includes mpi.h.
#pragma once

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace train {

// Note [Ring sums]: MPI's non-blocking collectives in Open MPI 4.1 (libnbc)
// pick poor schedules for our sums. MPI_Iallreduce of a buffer in place, or
// on fewer than 4 ranks, is a reduce to rank 0 and a broadcast back: with 2
// ranks every byte crosses the link twice, one direction at a time, so it
// took twice as long as the blocking MPI_Allreduce (measured by
// scripts/bench_mpi.sh on GPT-2 small: 8.8 s against 4.2 s at 1 Gbit/s).
// MPI_Ireduce_scatter reduces the whole buffer to rank 0 and then scatters
// it: three times the time of a ring reduce-scatter. So we run the ring
// ourselves. A sum covers a range of the flat gradients cut into one part per
// rank (for a reduce-scatter, each rank's slice; for an all-reduce, N equal
// parts). In N-1 reduce steps each rank sends one part to the next rank and
// adds the part it receives from the previous one into its own copy, after
// which rank r holds the whole sum of part r; an all-reduce then passes the
// finished parts on around the ring in N-1 more steps. Each rank sends and
// receives 2(N-1)/N of the range (half that for a reduce-scatter), both
// directions of every link at once, as the bandwidth-optimal ring does.
// Parts go in pieces of at most kPiece floats, each piece a job of its own
// with a receive buffer of one piece. Up to kLanes jobs are in flight at
// once, taken in the order the sums were started (the same on every rank):
// Open MPI moves messages on only inside MPI calls, which the backward makes
// between tape entries (progress()), and each call then moves every job's
// messages, not only one. Each job's messages carry a tag of its own, so
// jobs at different steps on two ranks never match each other's messages.
// Every element of part k is summed in the same order on every run (with 2
// ranks: a + b, the same bits as any order), so results depend on N and the
// parts only.
class RingSums {
 public:
  RingSums(MPI_Comm comm, int rank, int size);
  ~RingSums();
  RingSums(const RingSums&) = delete;
  RingSums& operator=(const RingSums&) = delete;

  // Queues the sum of base[begin, end) over the ranks, cut into parts
  // [k·slice, (k+1)·slice) ∩ [begin, end) for rank k. all_gather: every
  // rank ends with the whole range summed; else rank k only with part k.
  // base must stay untouched until the sum is done.
  void start(float* base, int64_t begin, int64_t end, int64_t slice, bool all_gather);
  // Moves the sums on as far as the messages that have arrived allow;
  // true when none is left.
  bool progress();
  bool idle() const { return next_op_ == ops_.size() && active_ == 0; }

 private:
  static constexpr int64_t kPiece = int64_t{1} << 20;  // floats: 4 MiB messages
  static constexpr int kLanes = 8;                     // jobs in flight
  struct Op {
    float* base;
    int64_t begin, end, slice;
    bool all_gather;
  };
  struct Span {
    float* at;
    int count;
  };
  struct Job {  // one piece of one sum, in a lane
    bool active = false;
    size_t op = 0;
    int64_t piece = 0;
    int step = 0;  // 0..N-2 reduce steps, then N-1..2N-3 gather steps
    int tag = 0;
    Span received{};  // where the reduce step's received piece is added
    std::vector<float> scratch;  // what the previous rank sent: up to one piece
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  };
  Span piece(const Op& op, int part, int64_t j) const;
  int64_t pieces(const Op& op) const;
  bool post_step(Job& job);  // false when the job has no step left
  void start_jobs();

  MPI_Comm comm_;
  int rank_, size_, tag_limit_;
  std::vector<Op> ops_;  // started since the last idle moment (keeps its capacity)
  size_t next_op_ = 0;   // the first job not yet in a lane: ops_[next_op_], piece next_piece_
  int64_t next_piece_ = 0;
  int active_ = 0, next_tag_ = 0;
  Job lanes_[kLanes];
};

}  // namespace train
