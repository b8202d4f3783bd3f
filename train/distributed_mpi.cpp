// Distributed on MPI (see distributed.h): the only file that includes mpi.h.
// Only MPI's C API: Open MPI's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <chrono>
#include <thread>
#include <vector>

#include "autograd/base/errors.h"
#include "train/distributed.h"

namespace train {

namespace {

// Set by mpirun (Open MPI), or by the PMI/PMIx launchers of other MPIs. A
// process started without one stays a plain process and never calls MPI.
bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

// The same exception type with "rank R: " in front, so main() still maps it
// to its exit code.
[[noreturn]] void rethrow_with_rank(std::exception_ptr error, int rank) {
  const std::string prefix = "rank " + std::to_string(rank) + ": ";
  try {
    std::rethrow_exception(error);
  } catch (const tg::UsageError& e) {
    throw tg::UsageError(prefix + e.what());
  } catch (const tg::DataError& e) {
    throw tg::DataError(prefix + e.what());
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(prefix + e.what());
  }
}

}  // namespace

struct Distributed::Pending {
  std::vector<MPI_Request> requests;
};

Distributed::Distributed() : pending_(std::make_unique<Pending>()) {
  if (!launched_by_mpirun()) return;
  int provided = 0;
  // Only the main thread calls MPI (OpenMP threads never do).
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
  mpi_ = true;
  // Rank 0 speaks for the job; the others' errors still reach stderr.
  if (rank_ != 0 && !std::freopen("/dev/null", "w", stdout)) std::fclose(stdout);
}

Distributed::~Distributed() {
  if (mpi_) MPI_Finalize();
}

namespace {

// A rank that leaves the reporting to another returns false, and its process
// exits 1 at once; mpirun then stops the whole job, and may kill the reporter
// before it has printed its line. So such a rank first gives the reporter
// (which prints as soon as its exception reaches main) two seconds.
bool quiet_exit_after_report() {
  std::this_thread::sleep_for(std::chrono::seconds(2));
  return false;
}

}  // namespace

bool Distributed::agree_setup(const std::function<uint64_t()>& setup) {
  std::exception_ptr error;
  uint64_t fingerprint = 0;
  try {
    fingerprint = setup();
  } catch (...) {
    error = std::current_exception();
  }
  if (!mpi_) {
    if (error) std::rethrow_exception(error);
    return true;
  }
  const uint64_t mine[2] = {error ? 1u : 0u, fingerprint};
  std::vector<uint64_t> all(2 * static_cast<size_t>(size_));
  MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, MPI_COMM_WORLD);
  int failed = 0, first_failed = -1;
  for (int r = 0; r < size_; ++r)
    if (all[2 * r]) {
      if (first_failed < 0) first_failed = r;
      ++failed;
    }
  if (first_failed >= 0) {
    if (rank_ != first_failed) return quiet_exit_after_report();
    if (failed == size_) std::rethrow_exception(error);  // the same mistake everywhere
    rethrow_with_rank(error, rank_);
  }
  for (int r = 1; r < size_; ++r) {
    if (all[2 * r + 1] == all[1]) continue;
    if (rank_ != 0) return quiet_exit_after_report();
    throw tg::DataError("rank " + std::to_string(r) +
                        " sees other token files, flags or checkpoint than rank 0; every rank must "
                        "run the same command line on identical data");
  }
  return true;
}

int Distributed::run(const std::function<int()>& body) {
  if (!mpi_) return body();
  std::string cause;
  try {
    return body();
  } catch (const std::bad_alloc&) {
    cause = "out of memory; use a smaller model or batch";
  } catch (const std::exception& e) {
    cause = e.what();
  }
  std::fflush(stdout);
  std::fprintf(stderr, "tapegpt train: error: rank %d of %d: %s; stopping every rank\n", rank_, size_,
               cause.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

void Distributed::sum_in_place(float* x, int64_t n) {
  if (!mpi_ || size_ == 1) return;
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int64_t kChunk = int64_t{1} << 30;  // MPI counts are int
  for (int64_t done = 0; done < n; done += kChunk) {
    const int count = static_cast<int>(std::min(kChunk, n - done));
    MPI_Allreduce(MPI_IN_PLACE, x + done, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  reduce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Distributed::start_sum(float* x, int64_t n) {
  if (!mpi_ || size_ == 1) return;
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int64_t kChunk = int64_t{1} << 30;
  for (int64_t done = 0; done < n; done += kChunk) {
    pending_->requests.emplace_back();
    MPI_Iallreduce(MPI_IN_PLACE, x + done, static_cast<int>(std::min(kChunk, n - done)), MPI_FLOAT,
                   MPI_SUM, MPI_COMM_WORLD, &pending_->requests.back());
  }
  reduce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Distributed::progress() {
  if (pending_->requests.empty()) return;
  // Open MPI moves non-blocking collectives on only inside MPI calls.
  int done = 0;
  MPI_Testall(static_cast<int>(pending_->requests.size()), pending_->requests.data(), &done,
              MPI_STATUSES_IGNORE);
}

void Distributed::wait_sums() {
  if (pending_->requests.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  MPI_Waitall(static_cast<int>(pending_->requests.size()), pending_->requests.data(), MPI_STATUSES_IGNORE);
  pending_->requests.clear();  // keeps its capacity: no allocation after the first step
  reduce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double Distributed::sum(double v) {
  if (!mpi_) return v;
  double total = 0.0;
  MPI_Allreduce(&v, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

bool Distributed::any(bool flag) {
  if (!mpi_) return flag;
  int mine = flag ? 1 : 0, result = 0;
  MPI_Allreduce(&mine, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return result != 0;
}

int Distributed::first_rank_with(bool flag) {
  if (!mpi_) return flag ? 0 : 1;
  int mine = flag ? rank_ : size_, result = size_;
  MPI_Allreduce(&mine, &result, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return result;
}

int Distributed::first_rank_differing(uint64_t value) {
  if (!mpi_) return -1;
  std::vector<uint64_t> all(static_cast<size_t>(size_));
  MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int r = 1; r < size_; ++r)
    if (all[r] != all[0]) return r;
  return -1;
}

}  // namespace train
