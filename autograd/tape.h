// The tape: a flat list of op entries in execution order, and the tensors
// and buffers they name. backward() is one reverse loop that hands each
// entry's record to its op's backward (Note [Tape entries]); gradients
// accumulate (Note [Kernel conventions]). Where a buffer lives is the
// planner's business (autograd/planner.h): the tape hands out storage in one
// of three modes (Note [Tape modes]). The tape knows nothing of GPTs nor of
// any op or kernel: it only replays what ops recorded.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <type_traits>
#include <vector>

#include "autograd/tensor.h"

namespace autograd {

class Arena;
struct MemoryPlan;

// Note [Tape entries]
// Each op (autograd/ops/<op>.cpp) defines a record: a plain struct with named
// fields holding exactly what its kernels read and write (pointers, sizes,
// seeds), a kName, and
//   void forward() const;   // runs the forward kernel: overwrites the output
//   void backward() const;  // adds into the inputs' gradients
// and, for an op that is cheaper to run again than to keep (LayerNorm, GELU),
//   static constexpr bool kRecomputable = true;
// Beside the record the op declares, by naming tensors (EntryUses below),
// the tensors its forward read and those whose data its backward reads (its
// saved tensors: some of its inputs, or its own output):
//   EntryUses{&x, &weight, &bias}.saves(x, weight)
// The entry keeps a copy of the record next to the ids the tape derives from
// that: plain data the planner reads. The buffers an op asks the tape for
// (its output's data and gradient, what it saves for backward, scratch) are
// numbered in the order they are asked for, and each names its tensor or
// entry, and any floats it may share with a buffer still alive (Reuse); so a
// planner can tell, from the tape alone, when each buffer is first written
// and last read, in forward and backward order, and where it may lie.
enum class BufferRole : uint8_t {
  Data,     // a tensor's values
  Grad,     // a tensor's gradient
  Saved,    // written by an entry's forward, read by its backward (e.g. LayerNorm's mean)
  Scratch,  // used by an entry's forward alone
  BackwardScratch,  // used by an entry's backward alone (e.g. a bf16 copy of its input)
};

// Floats a buffer may share with another buffer while both are alive, as an
// op asks for them by meaning; the planner grants the request where it is
// safe and else gives the buffer floats of its own (Note [Buffer reuse] in
// planner.h). An eager tape grants none, so an op must give the same bits
// either way.
enum class Reuse : uint8_t {
  None,
  // A Grad: written over its tensor's data by the backward of the tensor's
  // one consumer, which asked (EntryUses::may_write_grad_over_data).
  OverData,
  // A BackwardScratch: in the second half of its entry's output gradient,
  // which that backward first rounds to bf16 over the first half and then
  // reads only there (Note [bf16 linear] in ops/linear.cpp).
  OutputGradTail,
};

struct TapeBuffer {
  int64_t floats = 0;
  BufferRole role = BufferRole::Data;
  int32_t tensor = -1;  // Data, Grad: whose
  int32_t entry = -1;   // the entry that made it (for Saved and Scratch: its owner)
  Reuse reuse = Reuse::None;  // asked for; plan.alias says whether granted
};

struct TapeTensor {
  std::array<int64_t, 4> shape{};
  int ndim = 0;
  int32_t data = -1;  // buffer ids
  int32_t grad = -1;
  int32_t producer = -1;  // entry index
};

struct TapeEntry {
  static constexpr size_t kRecordBytes = 128;  // the largest record (attention_bf16) fits
  void (*forward)(const void* record) = nullptr;
  void (*backward)(const void* record) = nullptr;
  const char* op = "";  // the record's kName
  std::array<int32_t, 3> inputs{{-1, -1, -1}};  // tensor ids the forward read; -1: none, or untaped
  int32_t output = -1;                          // the tensor it made
  std::array<int32_t, 3> saved{{-1, -1, -1}};   // tensor ids whose data backward reads: inputs or
                                                //   the output; -1: none, or untaped
  bool recomputable = false;                    // the record's kRecomputable
  alignas(std::max_align_t) unsigned char record[kRecordBytes];
};

// Entries [begin, end) of one part of one block of the model, as the model
// marked them (BlockMark in ops.h): the MPI gradient buckets read these.
// What layer and part mean is the model's (Note [Block parts] in nn/params.h).
struct TapeBlock {
  int64_t layer = 0;
  int part = 0;
  size_t begin = 0, end = 0;
};

// What an op declares when it records, beside its record (Note [Tape
// entries]): the tensors its forward read, those whose data its backward
// reads, and an input whose gradient its backward may write over that
// input's data (Note [Gradient over data] in ops.h). Tensors are named, not
// numbered: the tape reads their ids.
//   EntryUses{&x, &weight, &bias}.saves(x, weight)
//   EntryUses{&logits}.saves(logits).may_write_grad_over_data(logits)
struct EntryUses {
  std::array<const Tensor*, 3> inputs{{nullptr, nullptr, nullptr}};
  std::array<const Tensor*, 3> saved{{nullptr, nullptr, nullptr}};
  const Tensor* grad_over_data = nullptr;

  explicit EntryUses(const Tensor* a = nullptr, const Tensor* b = nullptr, const Tensor* c = nullptr)
      : inputs{{a, b, c}} {}
  template <class... Tensors>
  EntryUses& saves(const Tensors&... tensors) {
    static_assert(sizeof...(Tensors) <= 3, "raise EntryUses::saved and TapeEntry::saved");
    saved = {{&tensors...}};
    return *this;
  }
  EntryUses& may_write_grad_over_data(const Tensor& input) {
    grad_over_data = &input;
    return *this;
  }
};

// Note [Tape modes]
// Eager: each buffer comes from the arena as it is asked for (a gradient
//   zeroed): what tests and any small graph use; nothing is planned.
// Planning: buffers get addresses that are never dereferenced and ops run no
//   kernel (runs_kernels() is false): one cheap pass that records the graph
//   of a step, for plan_memory (planner.h) to lay out.
// Planned: buffer i lives at base + plan.offset[i]; backward reruns
//   recomputed entries and zeroes each gradient where the plan says. The
//   graph must be the one planned (checked buffer by buffer), and the same
//   code recording the same shapes gives that.
enum class TapeMode : uint8_t { Eager, Planning, Planned };

class Tape {
 public:
  // Capacity is kept across clear(), so recording allocates only on the
  // first step. The mode and plan stay.
  void clear();
  void begin_planning();
  // `base` holds plan.total_floats floats; the plan must outlive its use.
  void use_plan(const MemoryPlan& plan, float* base);
  TapeMode mode() const { return mode_; }
  bool runs_kernels() const { return mode_ != TapeMode::Planning; }

  // A new tensor of `shape` made by the next entry recorded: its data and
  // gradient buffers, as the mode places them. Sets out.data, out.grad, out.id.
  void new_tensor(Arena& arena, Tensor& out);
  // A buffer owned by the next entry recorded (Saved, Scratch or
  // BackwardScratch), with the reuse the op asks for (Reuse).
  float* new_buffer(Arena& arena, int64_t floats, BufferRole role, Reuse reuse = Reuse::None);

  template <class Record>
  void record(const Record& r, const Tensor& out, const EntryUses& uses) {
    static_assert(std::is_trivially_copyable<Record>::value, "records are plain data");
    static_assert(sizeof(Record) <= TapeEntry::kRecordBytes, "raise TapeEntry::kRecordBytes");
    static_assert(alignof(Record) <= alignof(std::max_align_t), "over-aligned record");
    TapeEntry& e = push_entry(out, uses);
    e.op = Record::kName;
    e.forward = [](const void* p) { static_cast<const Record*>(p)->forward(); };
    e.backward = [](const void* p) { static_cast<const Record*>(p)->backward(); };
    e.recomputable = recomputable_of<Record>(0);
    new (e.record) Record(r);
  }

  void begin_block(int64_t layer, int part = 0);
  void end_block();

  size_t size() const { return entries_.size(); }
  const char* op_name(size_t i) const { return entries_[i].op; }
  const std::vector<TapeEntry>& entries() const { return entries_; }
  const std::vector<TapeTensor>& tensors() const { return tensors_; }
  const std::vector<TapeBuffer>& buffers() const { return buffers_; }
  const std::vector<TapeBlock>& blocks() const { return blocks_; }
  const MemoryPlan* plan() const { return plan_; }

  // Seeds d(loss) = seed (1, or 1/K for K accumulated micro-batches) and
  // replays the tape in reverse. `after_entry`, when given, is called with
  // each entry's index right after its backward ran (the trainer starts
  // gradient all-reduces from it).
  void backward(const Tensor& loss, float seed = 1.0f,
                const std::function<void(size_t)>& after_entry = nullptr);
  // Replays the tape in reverse with output gradients the caller has already
  // seeded (e.g. a projection d(Σ out·r)/d out = r in gradient checks).
  void replay_backward(const std::function<void(size_t)>& after_entry = nullptr);

 private:
  template <class R>
  static constexpr bool recomputable_of(decltype(R::kRecomputable)) { return R::kRecomputable; }
  template <class R>
  static constexpr bool recomputable_of(...) { return false; }

  TapeEntry& push_entry(const Tensor& out, const EntryUses& uses);
  float* place(Arena& arena, int64_t floats, bool zeroed);
  void run_backward(const std::function<void(size_t)>& after_entry);

  TapeMode mode_ = TapeMode::Eager;
  const MemoryPlan* plan_ = nullptr;
  float* base_ = nullptr;
  uintptr_t planning_next_ = 0;  // the next never-dereferenced address (Planning)
  bool in_block_ = false;        // between begin_block and end_block
  std::vector<TapeEntry> entries_;
  std::vector<TapeTensor> tensors_;
  std::vector<TapeBuffer> buffers_;
  std::vector<TapeBlock> blocks_;
};

}  // namespace autograd
