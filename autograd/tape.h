// The tape: a flat list of op records in execution order. backward() is one
// reverse loop that hands each record to its op's backward (Note [Op
// records]); gradients accumulate (Note [Kernel conventions]), and an output
// gradient in shared storage is zeroed once its producer's backward has
// read it (Note [Gradient liveness] in ops.h). The tape knows
// nothing of GPTs nor of any op or kernel: it only replays what ops recorded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <type_traits>
#include <vector>

#include "autograd/tensor.h"

namespace autograd {

class Arena;

// Note [Op records]
// Each op (autograd/ops/<op>.cpp) defines, next to its forward, a record: a
// plain struct with named fields holding exactly what its backward reads
// (gradient and data pointers, sizes, seeds), a kName, and
//   void backward(Arena& scratch) const;
// Tape::record copies the record into a fixed-size slot of the entry, with a
// pointer to a function that calls that backward, so the reverse loop calls
// each op's backward without a list of ops or a switch, and recording stays
// allocation-free once the entry vector has grown (the first step).
struct TapeEntry {
  static constexpr size_t kRecordBytes = 96;  // the largest record (attention) fits
  void (*backward)(const void* record, Arena& scratch) = nullptr;
  const char* op = "";  // the record's kName, for debugging and tests
  // Zeroed right after the backward (Note [Gradient liveness] in ops.h):
  // the op's output gradient when it lives in shared storage; else null.
  float* zero_after = nullptr;
  int64_t zero_floats = 0;
  alignas(std::max_align_t) unsigned char record[kRecordBytes];
};

class Tape {
 public:
  // Capacity is kept across clear(), so recording allocates only on the
  // first step. `zero_after`, when given, is the op's output gradient in
  // shared storage: its `zero_floats` floats are zeroed once r's backward
  // has read them (Note [Gradient liveness] in ops.h).
  template <class Record>
  void record(const Record& r, float* zero_after = nullptr, int64_t zero_floats = 0) {
    static_assert(std::is_trivially_copyable<Record>::value, "records are plain data");
    static_assert(sizeof(Record) <= TapeEntry::kRecordBytes, "raise TapeEntry::kRecordBytes");
    static_assert(alignof(Record) <= alignof(std::max_align_t), "over-aligned record");
    TapeEntry& e = entries_.emplace_back();
    e.op = Record::kName;
    e.backward = [](const void* p, Arena& scratch) {
      static_cast<const Record*>(p)->backward(scratch);
    };
    new (e.record) Record(r);
    e.zero_after = zero_after;
    e.zero_floats = zero_after ? zero_floats : 0;
  }
  void clear() { entries_.clear(); }
  size_t size() const { return entries_.size(); }
  const char* op_name(size_t i) const { return entries_[i].op; }

  // Seeds d(loss) = seed (1, or 1/K for K accumulated micro-batches) and
  // replays the tape in reverse. Scratch buffers come from `arena`.
  // `after_entry`, when given, is called with each entry's index right after
  // its backward ran (the trainer starts gradient all-reduces from it).
  void backward(const Tensor& loss, Arena& arena, float seed = 1.0f,
                const std::function<void(size_t)>& after_entry = nullptr);
  // Replays the tape in reverse with output gradients the caller has already
  // seeded (e.g. a projection d(Σ out·r)/d out = r in gradient checks).
  void replay_backward(Arena& arena, const std::function<void(size_t)>& after_entry = nullptr);

 private:
  std::vector<TapeEntry> entries_;
};

}  // namespace autograd
