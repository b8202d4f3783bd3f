// The memory planner: where each buffer of a recorded step lives, which
// entries backward runs again, and where each gradient is zeroed, all read
// off the tape (Note [Memory planner]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/tape.h"

namespace autograd {

// Note [Memory planner]
// A step runs in a fixed order: the forward of entries 0…n-1, then their
// backwards n-1…0. Every buffer on the tape (tape.h's TapeBuffer) is used at
// known points of that order, so it needs its floats only from its first use
// to its last, and two buffers whose lives do not overlap may share floats
// (ggml-alloc's idea, done offline over the whole step as TFLite's arena
// planner does: the largest buffers are placed first, each at the lowest
// offset free for its whole life).
//   - A tensor's data lives from its producer's forward to its last reader:
//     a consumer's forward, or the backward of an entry that saves it (Note
//     [Tape entries]: a consumer, or the producer itself for an op whose
//     backward reads its own output). Data nobody reads (the loss) lives to
//     the end, for the caller.
//   - A gradient lives from its first write, the backward of its
//     last-recorded consumer, to its one read, its producer's backward; it
//     is zeroed just before that first write, so it accumulates from zero as
//     a fresh buffer would (same bits). A gradient nobody writes (the loss's)
//     is zeroed before backward starts and then seeded.
//   - A buffer whose reuse is granted (Note [Buffer reuse]) has no floats
//     of its own: a gradient written over its tensor's data extends the
//     data's life; a backward scratch in the tail of its entry's output
//     gradient lies within that gradient's life.
//   - Saved buffers live from their entry's forward to its backward; scratch
//     buffers only through its forward; backward scratch only through its
//     backward.
//   - Recomputation: an entry whose record is kRecomputable, whose output's
//     data some later backward reads, and whose inputs are kept, is run again
//     just before the first of those backwards; its output's data then lives
//     twice, through its forward readers and from the rerun to its last
//     backward reader, and the floats in between serve other buffers. The
//     rerun writes its saved buffers again with the same bits.
// Note [Buffer reuse]
// Besides sharing floats between buffers whose lives do not overlap, the
// planner lets a buffer lie in the floats of one that is still alive where
// the op that owns them asked for it by meaning (tape.h's Reuse) and the
// graph makes it safe. The op never says where anything goes and gives the
// same bits either way; the decision and its checks are here alone, and
// tests/autograd/test_planner.cpp holds one test per policy.
//   - Reuse::OverData, a gradient over its tensor's data (Note [Gradient
//     over data] in ops.h): granted when the tensor has one consumer (the
//     one that asked), its producer's backward does not read the data, and
//     the data is not recomputed; then the data's floats hold the gradient
//     from that consumer's backward to the producer's. Otherwise the
//     gradient has floats of its own, zeroed, and the op adds into them.
//   - Reuse::OutputGradTail, a backward scratch in the second half of its
//     entry's output gradient, floats [ceil(n/2), n) of n, which that
//     backward has freed by rounding the gradient to bf16 over the first
//     half (Note [bf16 linear] in ops/linear.cpp): granted when it fits
//     there. The gradient is alive through its producer's backward, the
//     scratch's one use.
// An eager tape grants nothing: every buffer has floats of its own.
struct MemoryPlan {
  int64_t total_floats = 0;        // the arena block a planned step needs
  int64_t entries = 0;             // the tape planned: its entries and
  std::vector<int64_t> floats;     //   each buffer's size, which a planned
  std::vector<int64_t> offset;     //   step checks; offset: in the block
  std::vector<int32_t> alias;      // per buffer: the buffer whose floats it
                                   //   lies in (Note [Buffer reuse]), or -1
  std::vector<bool> recomputed;    // per entry: its output is recomputed
  // Before the backward of entry i: rerun the forwards of
  // rerun[rerun_begin[i] .. rerun_begin[i+1]) and zero the buffers
  // zero[zero_begin[i] .. zero_begin[i+1]). Index `entries` is "before
  // backward starts" (the loss's gradient).
  std::vector<int32_t> rerun_begin, rerun;
  std::vector<int32_t> zero_begin, zero;
  // Each buffer's life as positions in the step's order (forward of entry i
  // at 2i, its backward at 2(2n-1-i), "just before a backward" at odd
  // positions); the second range is empty (first > last) unless the buffer
  // is recomputed. A buffer lying in another (alias) has its own life here.
  // For the tape dump and the planner's tests.
  std::vector<int64_t> first, last, first2, last2;

  // The floats every buffer would take with floats of its own (each
  // rounded up to 64 bytes, as placed): what planning saves, for reports.
  int64_t unplanned_floats = 0;
};

// Plans the recorded step (any mode's tape: the graph is what matters).
MemoryPlan plan_memory(const Tape& tape);

// One step's graph as text: each entry's op, the tensors it read and made
// (id, shape), where their data and gradient live (MiB into the arena), and
// then the backward order with its reruns and zeroings. `tapegpt bench
// --tape` prints it.
std::string tape_dump(const Tape& tape, const MemoryPlan& plan);

}  // namespace autograd
