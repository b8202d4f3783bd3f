// Distributed without MPI: always one process (see distributed.h).
#include "train/distributed/distributed.h"

#include <cstring>

namespace train {

struct Distributed::Mpi {};

Distributed::Distributed() = default;
Distributed::~Distributed() = default;

bool Distributed::agree_setup(const std::function<uint64_t()>& setup) {
  setup();
  return true;
}

int Distributed::run(const std::function<int()>& body) { return body(); }

void Distributed::sum_in_place(float*, int64_t) {}
void Distributed::start_sum(float*, int64_t) {}
void Distributed::progress() {}
void Distributed::start_reduce_scatter(float*, int64_t, int64_t, int64_t) {}
void Distributed::wait_sums() {}
double Distributed::sum(double v) { return v; }
double Distributed::from_root(double v) { return v; }
void Distributed::all_gather_slices(float*, int64_t, int64_t) {}
void Distributed::all_gather_slices(double*, int64_t, int64_t) {}
void Distributed::all_gather_slices(uint16_t*, int64_t, int64_t) {}
void Distributed::all_gather_slices(float*, int64_t, int64_t, int64_t) {}
void Distributed::gather_slices(const float* mine, float* full, int64_t, int64_t n) {
  if (mine != full) std::memcpy(full, mine, static_cast<size_t>(n) * sizeof(float));
}
bool Distributed::any(bool flag) { return flag; }
int Distributed::first_rank_with(bool flag) { return flag ? 0 : 1; }
int Distributed::first_rank_differing(uint64_t) { return -1; }

}  // namespace train
