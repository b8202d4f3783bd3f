// libFuzzer target: checkpoints::load_checkpoint on arbitrary bytes. Any
// outcome but a loaded checkpoint or a tg::DataError is a bug (a crash, a
// sanitizer report, another exception, a hang).
// Run with -detect_leaks=0 and ASAN_OPTIONS=allocator_may_return_null=1:
// HDF5 leaks on corrupt headers and may try one huge allocation before it
// checks a checksum (checkpoints/README.md). HDF5 is serial: no -fork here
// shares it between threads (each job is a process).
#include <cstddef>
#include <cstdint>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "checkpoints/checkpoint.h"
#include "fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::FuzzInputFile file(".h5");
  const std::string& path = file.write(data, size);
  for (bool with_optimizer : {true, false}) {
    try {
      checkpoints::Loaded ck = checkpoints::load_checkpoint(path, with_optimizer);
      // A file that loads must be internally consistent.
      TG_CHECK(ck.store.total >= 0);
      TG_CHECK(ck.meta.tokenizer.tokens.size() <= static_cast<size_t>(ck.meta.config.vocab_size));
    } catch (const tg::DataError&) {
    }
  }
  return 0;
}
