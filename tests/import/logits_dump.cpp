// import_logits_dump: the logits a checkpoint computes for given token ids,
// for the Hugging Face GPT-2 parity check (tests/import/test_import.py).
//
//   import_logits_dump CKPT IDS.bin B T OUT.bin
// IDS.bin: int32 [B, T] little-endian; OUT.bin: float32 [B, T, V]. The model
// is loaded exactly as eval and sample load it (cli::load_model's path:
// load_checkpoint, then the untaped forward).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "autograd/arena.h"
#include "autograd/base/errors.h"
#include "autograd/ops.h"
#include "checkpoints/checkpoint.h"
#include "nn/gpt.h"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: import_logits_dump CKPT IDS.bin B T OUT.bin\n");
    return 2;
  }
  const int64_t B = std::atoll(argv[3]), T = std::atoll(argv[4]);
  try {
    checkpoints::Loaded ck = checkpoints::load_checkpoint(argv[1], false);
    const nn::GPT model = nn::gpt_create(ck.meta.config, std::move(ck.store));
    std::ifstream in(argv[2], std::ios::binary);
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (B < 1 || T < 1 || T > model.config.block_size || static_cast<int64_t>(raw.size()) != B * T * 4) {
      std::fprintf(stderr, "import_logits_dump: %s must hold B*T int32 ids with 1 <= T <= block_size\n", argv[2]);
      return 2;
    }
    std::vector<int32_t> ids(static_cast<size_t>(B * T));
    std::memcpy(ids.data(), raw.data(), raw.size());
    autograd::Arena arena;
    autograd::OpContext ctx{&arena, nullptr};
    const autograd::Tensor logits = nn::gpt_forward(ctx, model, ids.data(), B, T);
    std::ofstream out(argv[5], std::ios::binary);
    out.write(reinterpret_cast<const char*>(logits.data), static_cast<std::streamsize>(logits.numel() * 4));
    if (!out) {
      std::fprintf(stderr, "import_logits_dump: cannot write %s\n", argv[5]);
      return 1;
    }
  } catch (const tg::DataError& e) {
    std::fprintf(stderr, "import_logits_dump: %s\n", e.what());
    return 1;
  }
  return 0;
}
