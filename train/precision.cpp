// The --precision choice (see precision.h, Note [auto precision]).
#include "train/precision.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "autograd/kernels/bf16.h"
#include "train/peak_flops.h"

namespace train {

namespace {

const char* kMeasureThisCpu = "`tapegpt bench --bf16-rate` measures this CPU";

// Launched by mpirun (Open MPI or a PMI launcher): the ranks must agree, so
// auto decides on the ISA alone (the same test as
// distributed/distributed_mpi.cpp's).
bool under_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

// Why auto does not measure in this process, or "" where it does (Note
// [auto precision]).
std::string why_not_measured() {
  if (under_mpirun()) return kNotMeasuredMpi;
#if defined(__SANITIZE_ADDRESS__)
  // ASan and UBSan slow tapegpt's own loops (the roundings to bf16) far more
  // than oneDNN's JIT kernels: a measured ratio would say nothing.
  return "a sanitizer build's speeds say nothing of a release build's: the ISA alone decides";
#else
  return "";
#endif
}

std::string fixed2(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", x);
  return text;
}

std::string why_no_bf16(const Bf16Backend& b) {
  return b.isa == "none" ? "this build has no oneDNN (install libdnnl-dev: bash scripts/setup.sh, then rebuild)"
                         : "oneDNN has no bf16 matmul for this CPU (it runs " + b.isa + "; it needs AVX-512)";
}

}  // namespace

Bf16Backend Bf16Backend::here() {
  return Bf16Backend{kernels::bf16_matmul_available(), kernels::bf16_native(), kernels::dnnl_effective_isa()};
}

PrecisionChoice decide_auto(const Bf16Backend& b, double speedup, const AutoShape* shape,
                            const std::string& not_measured) {
  PrecisionChoice c;
  if (!b.available) {
    c.reason = "auto: float32, since " + why_no_bf16(b);
  } else if (!b.native) {
    c.reason = "auto: float32, since oneDNN would emulate bf16 here (it runs " + b.isa +
               ", without AVX512_BF16 or AMX-BF16: issue 22 measured about 0.2x float32's matmul speed so on an Intel Xeon)";
  } else if (speedup <= 0) {
    c.precision = Precision::Bf16;
    c.reason = "auto: bf16, since oneDNN runs " + b.isa + " (native bf16" +
               std::string(shape ? "; not measured: " + not_measured : "") + ")";
  } else {
    c.measured_speedup = speedup;
    const std::string measured = "measured " + fixed2(speedup) + "x float32's matmul speed at this model's width" +
                                 (shape ? " (C " + std::to_string(shape->C) + ")" : std::string());
    if (speedup >= kAutoMinSpeedup) {
      c.precision = Precision::Bf16;
      c.reason = "auto: bf16, since oneDNN runs " + b.isa + " (native bf16) and " + measured;
    } else {
      c.reason = "auto: float32, since oneDNN runs " + b.isa + " (native bf16) but " + measured + ", below " +
                 fixed2(kAutoMinSpeedup) + "x";
    }
  }
  return c;
}

PrecisionChoice choose_precision(const std::string& requested, const std::string& asked, const AutoShape* shape) {
  const Bf16Backend b = Bf16Backend::here();
  PrecisionChoice c;
  if (requested == "fp32") {
    c.reason = asked;
  } else if (requested == "auto") {
    const std::string not_measured = why_not_measured();
    const bool measure = b.native && shape && shape->C > 0 && not_measured.empty();
    const auto t0 = std::chrono::steady_clock::now();
    c = decide_auto(b, measure ? measure_bf16_speedup(shape->rows, shape->C) : 0.0, shape,
                    not_measured.empty() ? kNotMeasuredMpi : not_measured);
    if (measure)  // what the check cost this run
      c.reason += ", checked in " +
                  fixed2(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) + " s";
  } else if (requested == "bf16") {
    if (!b.available) throw tg::UsageError("--precision bf16 needs oneDNN's bf16 matmul, but " + why_no_bf16(b) +
                                           "; use --precision fp32");
    c.precision = Precision::Bf16;
    c.reason = b.native ? asked + "; oneDNN runs " + b.isa + " (native bf16)"
                        : asked + ", emulated: oneDNN runs " + b.isa +
                              " (no AVX512_BF16 or AMX-BF16), expect about 0.2x float32's matmul speed; " +
                              kMeasureThisCpu;
  } else {
    throw tg::UsageError("--precision must be fp32, bf16 or auto (got '" + requested + "')");
  }
  return c;
}

PrecisionChoice precision_for_checkpoint(const std::string& requested, Precision trained) {
  if (requested != "auto") return choose_precision(requested);
  PrecisionChoice c;
  if (trained == Precision::Fp32) {
    c.reason = "auto: the checkpoint's own (trained in float32)";
  } else if (kernels::bf16_matmul_available()) {
    c.precision = Precision::Bf16;
    c.reason = "auto: the checkpoint's own (trained in bf16; oneDNN runs " + kernels::dnnl_effective_isa() + ")";
  } else {
    c.reason = "auto: float32, though the checkpoint was trained in bf16, since " + why_no_bf16(Bf16Backend::here()) +
               ": losses may differ slightly from the training log's";
  }
  return c;
}

void resolve_precision(TrainOptions* o, const std::string& asked) {
  const AutoShape shape{o->batch_size * o->model.block_size, o->model.n_embd};
  const PrecisionChoice c = choose_precision(o->precision, asked, &shape);
  o->precision = precision_name(c.precision);
  o->precision_reason = c.reason;
}

Precision precision_of_saved(const std::string& saved) {
  if (saved == "bf16") return Precision::Bf16;
  if (saved == "fp32" || saved.empty()) return Precision::Fp32;
  throw tg::DataError("checkpoint flag 'precision' is '" + saved +
                      "', not fp32 or bf16; the checkpoint is damaged or from another program");
}

}  // namespace train
