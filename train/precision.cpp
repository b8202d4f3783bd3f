// The --precision choice (see precision.h).
#include "train/precision.h"

#include "autograd/base/errors.h"
#include "autograd/kernels/bf16.h"

namespace train {

namespace {

// What oneDNN 2.6.3's bf16 matmuls were measured at against OpenBLAS's
// sgemm at GPT shapes: issue 22's Intel Xeon with oneDNN capped to each
// instruction set, and BENCHMARKS.md's AMD Zen 4 (`tapegpt bench
// --bf16-rate --without-amx`), where AVX512_BF16 ran about 2x sgemm. CPUs
// differ, so the user is pointed at the measurement.
const char* kMeasureThisCpu = "`tapegpt bench --bf16-rate --without-amx` measures this CPU";

std::string expected_speed(const std::string& isa) {
  if (isa == "avx512_core_bf16")
    return std::string("matmuls at about 0.6-0.7x float32's rate on an Intel Xeon, about 2x on an AMD Zen 4; ") +
           kMeasureThisCpu;
  return std::string("matmuls at about 0.2x float32's rate on an Intel Xeon (bf16 emulated); ") + kMeasureThisCpu;
}

}  // namespace

PrecisionChoice choose_precision(const std::string& requested, const std::string& asked) {
  const std::string isa = kernels::dnnl_effective_isa();
  PrecisionChoice c;
  if (requested == "fp32") {
    c.reason = asked;
  } else if (requested == "auto") {
    if (kernels::amx_bf16_usable()) {
      c.precision = nn::Precision::Bf16;
      c.reason = "auto: AMX-BF16 usable (oneDNN " + kernels::dnnl_version() + " runs " + isa + ")";
    } else if (!kernels::cpu_has_amx_bf16()) {
      c.reason = std::string("auto: this CPU has no AMX-BF16, so float32; --precision bf16 may be faster all the same: ") +
                 kMeasureThisCpu;
    } else {
      c.reason = "auto: the CPU has AMX-BF16 but " +
                 std::string(kernels::dnnl_version() == "none" ? "this build has no oneDNN (libdnnl-dev)"
                             : !kernels::os_permits_amx() ? "the kernel does not permit its tiles"
                                                          : "oneDNN runs " + isa + " (ONEDNN_MAX_CPU_ISA?)");
    }
  } else if (requested == "bf16") {
    if (!kernels::bf16_matmul_available())
      throw tg::UsageError(
          "--precision bf16 needs oneDNN's bf16 matmul, which " +
          std::string(kernels::dnnl_version() == "none"
                          ? "this build lacks (install libdnnl-dev: bash scripts/setup.sh, then rebuild)"
                          : "has none for this CPU (oneDNN runs " + isa + "; it needs AVX-512)") +
          "; use --precision fp32");
    c.precision = nn::Precision::Bf16;
    c.reason = kernels::amx_bf16_usable()
                   ? asked + "; AMX-BF16 usable (oneDNN runs " + isa + ")"
                   : asked + ", without AMX-BF16: oneDNN runs " + isa + ", expect " + expected_speed(isa);
  } else {
    throw tg::UsageError("--precision must be fp32, bf16 or auto (got '" + requested + "')");
  }
  return c;
}

void resolve_precision(TrainOptions* o, const std::string& asked) {
  const PrecisionChoice c = choose_precision(o->precision, asked);
  o->precision = nn::precision_name(c.precision);
  o->precision_reason = c.reason;
}

nn::Precision precision_of_saved(const std::string& saved) {
  if (saved == "bf16") return nn::Precision::Bf16;
  if (saved == "fp32" || saved.empty()) return nn::Precision::Fp32;
  throw tg::DataError("checkpoint flag 'precision' is '" + saved +
                      "', not fp32 or bf16; the checkpoint is damaged or from another program");
}

}  // namespace train
