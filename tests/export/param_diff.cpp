// export_param_diff: whether two checkpoints hold the same model, bit for bit
// (the Hugging Face export → import round trip, tests/export/test_export.py).
//
//   export_param_diff A.h5 B.h5
// Prints one line per difference (config field, missing tensor, first
// differing element) and exits 1 if there is any, 0 when identical.
#include <cstdio>
#include <cstring>
#include <string>

#include "autograd/base/errors.h"
#include "checkpoints/checkpoint.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: export_param_diff A.h5 B.h5\n");
    return 2;
  }
  try {
    const checkpoints::Loaded a = checkpoints::load_checkpoint(argv[1], false);
    const checkpoints::Loaded b = checkpoints::load_checkpoint(argv[2], false);
    int differences = 0;
    auto field = [&](const char* name, double x, double y) {
      if (x != y) std::printf("config %s: %g vs %g\n", name, x, y), ++differences;
    };
    const nn::GPTConfig &ca = a.meta.config, &cb = b.meta.config;
    field("vocab_size", ca.vocab_size, cb.vocab_size);
    field("block_size", ca.block_size, cb.block_size);
    field("n_layer", ca.n_layer, cb.n_layer);
    field("n_head", ca.n_head, cb.n_head);
    field("n_embd", ca.n_embd, cb.n_embd);
    field("bias", ca.bias, cb.bias);
    field("tied", ca.tied, cb.tied);
    for (const nn::ModelChoice& row : nn::model_choices()) field(row.key, row.get(ca), row.get(cb));
    for (const nn::ParamInfo& p : a.store.table) {
      const nn::ParamInfo* q = b.store.find(p.name);
      if (!q || q->shape != p.shape) {
        std::printf("%s: missing or reshaped in %s\n", p.name.c_str(), argv[2]), ++differences;
        continue;
      }
      const float* x = a.store.values.floats() + p.offset;
      const float* y = b.store.values.floats() + q->offset;
      for (int64_t i = 0; i < p.numel; ++i)
        if (std::memcmp(x + i, y + i, sizeof(float)) != 0) {
          std::printf("%s[%lld]: %.9g vs %.9g\n", p.name.c_str(), static_cast<long long>(i), x[i], y[i]);
          ++differences;
          break;
        }
    }
    if (b.store.table.size() != a.store.table.size())
      std::printf("%zu tensors vs %zu\n", a.store.table.size(), b.store.table.size()), ++differences;
    if (differences == 0) std::printf("identical: %zu tensors\n", a.store.table.size());
    return differences ? 1 : 0;
  } catch (const tg::DataError& e) {
    std::fprintf(stderr, "export_param_diff: %s\n", e.what());
    return 2;
  }
}
