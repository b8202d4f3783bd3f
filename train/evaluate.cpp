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

// Windows are made one at a time, never listed: a file of 2^31 tokens has
// millions of them (billions with a small --stride).
struct WindowPlan {
  int64_t N, T, stride, max_windows;
  int64_t done = 0;  // targets 1…done are scored
  int64_t made = 0;

  bool more() const { return done < N - 1 && (max_windows == 0 || made < max_windows); }
  // The next window, without taking it.
  Window peek() const {
    const int64_t step = made == 0 ? T : stride;
    const int64_t end = std::min(done + step, N - 1);
    // Non-overlapping windows start where the last one ended; sliding ones
    // reach back for a full block of context.
    const int64_t begin = stride == T ? done : std::max<int64_t>(0, end - T);
    return {begin, end - begin, end - done};
  }
  void take(const Window& w) {
    done = w.begin + w.length;
    ++made;
  }
};

int64_t count_windows(WindowPlan plan) {
  while (plan.more()) plan.take(plan.peek());
  return plan.made;
}
}  // namespace

EvalResult evaluate_tokens(const nn::GPT& model, const TokenSource& source,
                           const EvalOptions& options, autograd::Arena& arena) {
  const int64_t T = model.config.block_size;
  const int64_t stride = options.stride > 0 ? std::min(options.stride, T) : T;
  WindowPlan plan{source.size, T, stride, options.max_windows};
  const int64_t total_windows = options.progress ? count_windows(plan) : 0;
  EvalResult result;
  std::vector<int32_t> inputs, targets;
  std::vector<float> losses;
  std::vector<Window> windows;
  while (plan.more()) {
    // A batch of consecutive windows of equal length.
    windows.clear();
    while (plan.more() && static_cast<int64_t>(windows.size()) < options.batch_size) {
      const Window w = plan.peek();
      if (!windows.empty() && w.length != windows[0].length) break;
      plan.take(w);
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
    if (options.progress) options.progress(plan.made, total_windows);
  }
  return result;
}

}  // namespace train
