// The ring sums (train/distributed/ring_sums.h, Note [Ring sums]) under
// mpirun, checked exactly: every rank fills its buffer with small integers,
// whose float sums are exact, so each summed element must equal the closed
// form bit for bit. Sizes cover empty and one-element ranges, ranges
// shorter than the number of ranks, parts of several 4-MiB pieces,
// reduce-scatters whose range lies in one rank's slice or straddles slices,
// and many sums in flight at once.
// Run by CTest as `mpirun -np N ring_sums_check` for N = 2 and 3; prints
// one line per failure and exits 1, or prints "ring sums: ok".
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "train/distributed/distributed.h"

namespace {

float value(int rank, int64_t i) { return static_cast<float>((rank + 1) * (i % 1000) + rank); }

float summed(int size, int64_t i) {
  float s = 0;
  for (int r = 0; r < size; ++r) s += value(r, i);  // integers below 2^24: exact in any order
  return s;
}

struct Sum {
  int64_t begin, end;  // the range of the buffer
  int64_t slice;       // > 0: reduce-scatter to slices of this size; 0: all-reduce
};

int failures = 0;

void check(train::Distributed& dist, const std::vector<Sum>& sums, int64_t n, bool progress_between) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = value(dist.rank(), i);
  for (const Sum& s : sums) {
    if (s.slice > 0) dist.start_reduce_scatter(x.data(), s.begin, s.end, s.slice);
    else dist.start_sum(x.data() + s.begin, s.end - s.begin);
    if (progress_between) dist.progress();
  }
  dist.wait_sums();
  for (const Sum& s : sums) {
    int64_t from = s.begin, to = s.end;  // what this rank must hold summed
    if (s.slice > 0) {
      from = std::max(from, dist.rank() * s.slice);
      to = std::min(to, (dist.rank() + 1) * s.slice);
    }
    for (int64_t i = from; i < to; ++i)
      if (x[i] != summed(dist.size(), i)) {
        std::fprintf(stderr, "rank %d: sum [%lld, %lld) slice %lld: x[%lld] = %g, want %g\n", dist.rank(),
                     static_cast<long long>(s.begin), static_cast<long long>(s.end),
                     static_cast<long long>(s.slice), static_cast<long long>(i), x[i], summed(dist.size(), i));
        ++failures;
        break;
      }
  }
}

}  // namespace

int main() {
  train::Distributed dist;
  if (dist.size() < 2) {
    std::fprintf(stderr, "ring_sums_check: run it under mpirun with 2 or more ranks\n");
    return 2;
  }
  const int64_t piece = int64_t{1} << 20;  // RingSums' piece, in floats
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{5}, piece - 1, 2 * piece + 7, 5 * piece + 3})
    check(dist, {{0, n, 0}}, n, false);  // all-reduce of the whole buffer
  const int64_t n = 6 * piece + 11, slice = (n + dist.size() - 1) / dist.size();
  // Disjoint buckets as the backward sends them, from the end of the buffer
  // down: one short, one of several pieces across slices (at 3 ranks), one
  // across slice 0's end, one of several pieces inside slice 0, one empty.
  const std::vector<Sum> buckets = {{n - 100, n, 0},           {slice + 5, n - 100, 0}, {slice - 5, slice + 5, 0},
                                    {piece + 3, slice - 5, 0}, {7, 7, 0},               {0, piece + 3, 0}};
  check(dist, buckets, n, true);
  std::vector<Sum> scatters = buckets;
  for (Sum& s : scatters) s.slice = slice;
  check(dist, scatters, n, true);
  check(dist, {{0, n, slice}}, n, false);  // the whole buffer at once (--no-overlap)
  check(dist, {{0, 2, 1}}, 2, false);      // slices of one float: at 3 ranks the last is empty
  if (failures) return 1;
  if (dist.root()) std::printf("ring sums: ok (%d ranks)\n", dist.size());
  return 0;
}
