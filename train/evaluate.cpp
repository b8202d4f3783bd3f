// Windowed evaluation (see evaluate.h).
#include "train/evaluate.h"

#include <algorithm>

#include "autograd/base/check.h"
#include "autograd/ops.h"

namespace train {

namespace {

struct Window {
  int64_t begin;   // first input token
  int64_t length;  // inputs begin…begin+length-1, targets shifted by one
  int64_t scored;  // the last `scored` targets count
};

// The whole split's windows j = 0 … count()-1, each in closed form, never
// listed: a file of 2^31 tokens has millions of them (billions with a small
// --stride). The first ends at T; each next one ends `stride` later and
// scores the targets since the last one ended; non-overlapping windows start
// where the last one ended, sliding ones reach back for a full block of
// context.
struct SplitWindows {
  int64_t N, T, stride;

  int64_t count() const {
    if (N < 2) return 0;
    return 1 + (std::max<int64_t>(0, N - 1 - T) + stride - 1) / stride;
  }
  Window at(int64_t j) const {
    const int64_t done = j == 0 ? 0 : std::min(T + (j - 1) * stride, N - 1);  // targets 1…done scored before
    const int64_t end = std::min(T + j * stride, N - 1);
    const int64_t begin = stride == T ? done : std::max<int64_t>(0, end - T);
    return {begin, end - begin, end - done};
  }
};

// The windows one evaluation scores, in order: all of the split's, or
// `scored` of them spread evenly (Note [Spread evaluation]).
struct WindowPlan {
  SplitWindows split;
  int64_t split_count, scored;
  int64_t made = 0;

  WindowPlan(SplitWindows s, int64_t max_windows)
      : split(s), split_count(s.count()),
        scored(max_windows > 0 ? std::min(max_windows, split_count) : split_count) {}
  bool more() const { return made < scored; }
  Window peek() const {
    if (scored == split_count) return split.at(made);
    const double j = (static_cast<double>(made) + 0.5) * static_cast<double>(split_count) /
                     static_cast<double>(scored);
    return split.at(std::min(split_count - 1, static_cast<int64_t>(j)));
  }
  void take() { ++made; }
};

}  // namespace

int64_t count_eval_windows(int64_t n_tokens, int64_t block_size, int64_t stride) {
  TG_CHECK(block_size > 0 && stride >= 0);
  return SplitWindows{n_tokens, block_size, stride > 0 ? std::min(stride, block_size) : block_size}.count();
}

bool final_eval_is_whole(int64_t partial_windows, int64_t split_windows) {
  return partial_windows <= 0 || split_windows <= kFinalWholeRatio * partial_windows;
}

EvalResult evaluate_tokens(const nn::GPT& model, const TokenSource& source,
                           const EvalOptions& options, autograd::Arena& arena) {
  const int64_t T = model.config.block_size;
  const int64_t stride = options.stride > 0 ? std::min(options.stride, T) : T;
  WindowPlan plan(SplitWindows{source.size, T, stride}, options.max_windows);
  EvalResult result;
  result.split_windows = plan.split_count;
  std::vector<int32_t> inputs, targets;
  std::vector<float> losses;
  std::vector<Window> windows;
  while (plan.more()) {
    // A batch of consecutive windows of equal length.
    windows.clear();
    while (plan.more() && static_cast<int64_t>(windows.size()) < options.batch_size) {
      const Window w = plan.peek();
      if (!windows.empty() && w.length != windows[0].length) break;
      plan.take();
      windows.push_back(w);
    }
    const int64_t len = windows[0].length;
    const int64_t B = static_cast<int64_t>(windows.size());
    inputs.resize(static_cast<size_t>(B * (len + 1)));
    targets.resize(static_cast<size_t>(B * len));
    losses.resize(static_cast<size_t>(B * len));
    for (int64_t b = 0; b < B; ++b) {
      // Read len+1 tokens, then split into inputs and targets.
      int32_t* row = inputs.data() + b * (len + 1);
      source.copy(row, windows[b].begin, len + 1);
      std::copy(row + 1, row + len + 1, targets.data() + b * len);
    }
    for (int64_t b = 0; b < B; ++b)  // compact inputs to B rows of len
      std::copy_n(inputs.data() + b * (len + 1), len, inputs.data() + b * len);

    arena.reset();
    autograd::OpContext ctx{&arena, nullptr, nn::run_precision(model.store)};
    autograd::Tensor logits = nn::gpt_forward(ctx, model, inputs.data(), B, len);
    autograd::cross_entropy(ctx, std::move(logits), targets.data(), losses.data());
    for (int64_t b = 0; b < B; ++b) {
      const Window& w = windows[b];
      for (int64_t t = len - w.scored; t < len; ++t) {
        result.loss_sum += losses[b * len + t];
        if (options.token_bytes) result.bytes += (*options.token_bytes)[targets[b * len + t]];
      }
      result.tokens += w.scored;
    }
    result.windows += B;
    if (options.progress) options.progress(plan.made, plan.scored);
  }
  return result;
}

}  // namespace train
