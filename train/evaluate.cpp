// Windowed evaluation (see evaluate.h).
#include "train/evaluate.h"

#include <algorithm>

#include "autograd/check.h"
#include "autograd/ops.h"

namespace train {

namespace {

struct Window {
  int64_t begin;   // first input token
  int64_t length;  // inputs begin…begin+length-1, targets shifted by one
  int64_t scored;  // the last `scored` targets count
};

std::vector<Window> plan_windows(int64_t N, int64_t T, int64_t stride, int64_t max_windows) {
  std::vector<Window> windows;
  int64_t done = 0;  // targets 1…done are scored
  while (done < N - 1 && (max_windows == 0 || static_cast<int64_t>(windows.size()) < max_windows)) {
    const int64_t step = windows.empty() ? T : stride;
    const int64_t end = std::min(done + step, N - 1);
    // Non-overlapping windows start where the last one ended; sliding ones
    // reach back for a full block of context.
    const int64_t begin = stride == T ? done : std::max<int64_t>(0, end - T);
    windows.push_back({begin, end - begin, end - done});
    done = end;
  }
  return windows;
}

}  // namespace

EvalResult evaluate_tokens(const nn::GPT& model, const TokenSource& source,
                           const EvalOptions& options, autograd::Arena& arena) {
  const int64_t T = model.config.block_size;
  const int64_t stride = options.stride > 0 ? std::min(options.stride, T) : T;
  const std::vector<Window> windows = plan_windows(source.size, T, stride, options.max_windows);
  EvalResult result;
  std::vector<int32_t> inputs, targets;
  std::vector<float> losses;
  size_t i = 0;
  while (i < windows.size()) {
    // A batch of consecutive windows of equal length.
    const int64_t len = windows[i].length;
    size_t j = i;
    while (j < windows.size() && windows[j].length == len &&
           static_cast<int64_t>(j - i) < options.batch_size)
      ++j;
    const int64_t B = static_cast<int64_t>(j - i);
    inputs.resize(static_cast<size_t>(B * (len + 1)));
    targets.resize(static_cast<size_t>(B * len));
    losses.resize(static_cast<size_t>(B * len));
    for (int64_t b = 0; b < B; ++b) {
      // Read len+1 tokens, then split into inputs and targets.
      int32_t* row = inputs.data() + b * (len + 1);
      source.copy(row, windows[i + b].begin, len + 1);
      std::copy(row + 1, row + len + 1, targets.data() + b * len);
    }
    for (int64_t b = 0; b < B; ++b)  // compact inputs to B rows of len
      std::copy_n(inputs.data() + b * (len + 1), len, inputs.data() + b * len);

    arena.reset();
    autograd::OpContext ctx{&arena, nullptr};
    autograd::Tensor logits = nn::gpt_forward(ctx, model, inputs.data(), B, len);
    autograd::cross_entropy(ctx, logits, targets.data(), losses.data());
    for (int64_t b = 0; b < B; ++b) {
      const Window& w = windows[i + b];
      for (int64_t t = len - w.scored; t < len; ++t) {
        result.loss_sum += losses[b * len + t];
        if (options.token_bytes) result.bytes += (*options.token_bytes)[targets[b * len + t]];
      }
      result.tokens += w.scored;
    }
    i = j;
    if (options.progress) options.progress(static_cast<int64_t>(i), static_cast<int64_t>(windows.size()));
  }
  return result;
}

}  // namespace train
