// Ring reduce-scatters and all-reduces over MPI messages (see ring_sums.h,
// Note [Ring sums]).
#include "train/distributed/ring_sums.h"

#include <algorithm>

#include "autograd/base/check.h"
#include "autograd/kernels/kernels.h"

namespace train {

RingSums::RingSums(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &found);
  tag_limit_ = found && tag_ub ? std::min(*tag_ub, 1 << 24) : 32767;  // MPI promises at least 32767
}

RingSums::~RingSums() = default;

void RingSums::start(float* base, int64_t begin, int64_t end, int64_t slice, bool all_gather) {
  TG_CHECK(slice > 0 && begin <= end);
  ops_.push_back({base, begin, end, slice, all_gather});  // keeps its capacity: no allocation after step 1
  start_jobs();
}

RingSums::Span RingSums::piece(const Op& op, int part, int64_t j) const {
  const int64_t part_begin = std::max(op.begin, part * op.slice);
  const int64_t part_end = std::min(op.end, (part + 1) * op.slice);
  const int64_t b = part_begin + j * kPiece;
  if (b >= part_end) return {op.base + part_begin, 0};
  return {op.base + b, static_cast<int>(std::min(part_end, b + kPiece) - b)};
}

int64_t RingSums::pieces(const Op& op) const {
  int64_t longest = 0;
  for (int k = 0; k < size_; ++k)
    longest = std::max(longest, std::min(op.end, (k + 1) * op.slice) - std::max(op.begin, k * op.slice));
  return (longest + kPiece - 1) / kPiece;
}

// Puts the next jobs into the free lanes, in the order the sums were started.
void RingSums::start_jobs() {
  for (Job& job : lanes_) {
    while (!job.active) {
      while (next_op_ < ops_.size() && next_piece_ == pieces(ops_[next_op_])) {
        ++next_op_;
        next_piece_ = 0;
      }
      if (next_op_ == ops_.size()) return;
      job.active = true;
      job.op = next_op_;
      job.piece = next_piece_++;
      job.step = 0;
      job.tag = next_tag_;
      next_tag_ = (next_tag_ + 1) % tag_limit_;
      ++active_;
      if (!post_step(job)) {  // nothing to move here: the lane is free again
        job.active = false;
        --active_;
      }
    }
  }
}

// Posts the messages of the job's current step, skipping steps with nothing
// to move (empty parts: both neighbours see the same sizes and skip alike).
bool RingSums::post_step(Job& job) {
  const Op& op = ops_[job.op];
  const int n = size_, next = (rank_ + 1) % n, prev = (rank_ + n - 1) % n;
  const int steps = (n - 1) * (op.all_gather ? 2 : 1);
  for (; job.step < steps; ++job.step) {
    Span send, recv;
    float* recv_into;
    if (job.step < n - 1) {  // reduce: pass part r-s-1 on, add part r-s-2 into ours
      send = piece(op, (rank_ - job.step - 1 + 2 * n) % n, job.piece);
      recv = piece(op, (rank_ - job.step - 2 + 2 * n) % n, job.piece);
      // The lane's buffer grows to the largest piece it has received (at most
      // kPiece): the first steps allocate, later ones only if a lane meets a
      // larger piece than before.
      if (job.scratch.size() < static_cast<size_t>(recv.count)) job.scratch.resize(static_cast<size_t>(recv.count));
      recv_into = job.scratch.data();
      job.received = recv;
    } else {  // gather: pass the finished part r-s on, take part r-s-1 as it is
      const int s = job.step - (n - 1);
      send = piece(op, (rank_ - s + 2 * n) % n, job.piece);
      recv = piece(op, (rank_ - s - 1 + 2 * n) % n, job.piece);
      recv_into = recv.at;
      job.received = {nullptr, 0};
    }
    if (recv.count > 0) MPI_Irecv(recv_into, recv.count, MPI_FLOAT, prev, job.tag, comm_, &job.requests[0]);
    if (send.count > 0) MPI_Isend(send.at, send.count, MPI_FLOAT, next, job.tag, comm_, &job.requests[1]);
    if (recv.count > 0 || send.count > 0) return true;
    job.received = {nullptr, 0};
  }
  return false;
}

bool RingSums::progress() {
  // Each call lets every job's messages go on, and starts the next step of
  // each job whose messages are through.
  for (bool moved = true; moved;) {
    moved = false;
    start_jobs();
    for (Job& job : lanes_) {
      if (!job.active) continue;
      int done = 0;
      MPI_Testall(2, job.requests, &done, MPI_STATUSES_IGNORE);
      if (!done) continue;
      if (job.received.count > 0) kernels::accumulate(job.received.at, job.scratch.data(), job.received.count);
      job.received = {nullptr, 0};
      ++job.step;
      if (!post_step(job)) {
        job.active = false;
        --active_;
      }
      moved = true;
    }
  }
  if (!idle()) return false;
  ops_.clear();
  next_op_ = 0;
  next_piece_ = 0;
  return true;
}

}  // namespace train
