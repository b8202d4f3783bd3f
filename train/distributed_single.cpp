// Distributed without MPI: always one process (see distributed.h).
#include "train/distributed.h"

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
void Distributed::wait_sums() {}
double Distributed::sum(double v) { return v; }
bool Distributed::any(bool flag) { return flag; }
int Distributed::first_rank_with(bool flag) { return flag ? 0 : 1; }
int Distributed::first_rank_differing(uint64_t) { return -1; }

}  // namespace train
