// Distributed on MPI (see distributed.h): with ring_sums.*, the only code
// that includes mpi.h. Only MPI's C API: Open MPI's deprecated C++ bindings
// would need libmpi_cxx.
#include "train/distributed/ring_sums.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "train/distributed/distributed.h"

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

struct Distributed::Mpi {
  MPI_Comm watch = MPI_COMM_NULL;  // pings between waiting ranks (Note [Stall timeout])
  MPI_Comm ring = MPI_COMM_NULL;   // the gradient sums' messages (Note [Ring sums])
  std::unique_ptr<RingSums> sums;  // started and not yet waited for
  std::vector<int> counts, displs;  // per-rank slices (Note [Sharded optimizer state])
};

Distributed::Distributed() : mpi_handles_(std::make_unique<Mpi>()) {
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
  MPI_Comm_dup(MPI_COMM_WORLD, &mpi_handles_->watch);
  MPI_Comm_dup(MPI_COMM_WORLD, &mpi_handles_->ring);
  mpi_handles_->sums = std::make_unique<RingSums>(mpi_handles_->ring, rank_, size_);
  mpi_ = true;
  // Rank 0 speaks for the job; the others' errors still reach stderr.
  if (rank_ != 0 && !std::freopen("/dev/null", "w", stdout)) std::fclose(stdout);
}

Distributed::~Distributed() {
  if (!mpi_) return;
  mpi_handles_->sums.reset();
  MPI_Comm_free(&mpi_handles_->ring);
  MPI_Comm_free(&mpi_handles_->watch);
  MPI_Finalize();
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

// Note [Stall timeout]: a blocking MPI collective waits forever for a rank
// that never arrives (stopped, hung, or cut off by a dead link: TCP reports
// nothing for many minutes). So every collective is started non-blocking and
// waited for here, at most --stall-timeout seconds. Then the rank pings every
// other rank on a communicator of its own (`watch`) and waits kPingGrace for
// the answers; a rank that is itself waiting in a collective answers within
// milliseconds, since this loop answers pings. The ranks that stay silent are
// the stalled ones. The lowest rank that answered (from this rank's view)
// prints one line naming them; every waiting rank then ends the job with
// MPI_Abort (the others after two seconds, so the line gets out first). When
// every rank answers (one was only slow and has arrived since), the wait
// starts over. Pings happen only after a timeout: they never touch the sums.
namespace {

constexpr int kPing = 1, kPong = 2;
constexpr double kPingGrace = 2.0;  // seconds to answer a ping; far above a network round trip

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Answers every ping that has arrived (the answer is fire-and-forget: the
// buffer is static and the request freed at once).
void answer_pings(MPI_Comm watch) {
  static const int kAlive = 1;
  for (;;) {
    int arrived = 0, token = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kPing, watch, &arrived, &status);
    if (!arrived) return;
    MPI_Recv(&token, 1, MPI_INT, status.MPI_SOURCE, kPing, watch, MPI_STATUS_IGNORE);
    MPI_Request reply;
    MPI_Isend(&kAlive, 1, MPI_INT, status.MPI_SOURCE, kPong, watch, &reply);
    MPI_Request_free(&reply);
  }
}

// The ranks that do not answer a ping within kPingGrace (never this one).
std::vector<int> silent_ranks(MPI_Comm watch, int rank, int size) {
  static const int kToken = 0;
  // Static: a silent rank's receive stays posted until the abort.
  static std::vector<MPI_Request> pongs;
  static std::vector<int> answers;
  pongs.assign(size, MPI_REQUEST_NULL);
  answers.assign(size, 0);
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    MPI_Request ping;
    MPI_Isend(&kToken, 1, MPI_INT, r, kPing, watch, &ping);
    MPI_Request_free(&ping);
    MPI_Irecv(&answers[r], 1, MPI_INT, r, kPong, watch, &pongs[r]);
  }
  const auto t0 = std::chrono::steady_clock::now();
  int all = 0;
  while (!all && seconds_since(t0) < kPingGrace) {
    answer_pings(watch);
    MPI_Testall(size, pongs.data(), &all, MPI_STATUSES_IGNORE);
  }
  std::vector<int> silent;  // (their receives stay posted: the caller then aborts)
  for (int r = 0; r < size; ++r)
    if (pongs[r] != MPI_REQUEST_NULL) silent.push_back(r);  // null: answered, or this rank
  return silent;
}

}  // namespace

void Distributed::wait(void* requests, int n) {
  MPI_Request* r = static_cast<MPI_Request*>(requests);
  wait_until([r, n] {
    int done = 0;
    MPI_Testall(n, r, &done, MPI_STATUSES_IGNORE);  // spins like MPI_Waitall would
    return done != 0;
  });
}

template <typename Done>
void Distributed::wait_until(Done done) {
  const MPI_Comm watch = mpi_handles_->watch;
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    if (done()) return;
    answer_pings(watch);
    if (stall_timeout_s_ <= 0 || seconds_since(t0) < stall_timeout_s_) continue;
    const std::vector<int> silent = silent_ranks(watch, rank_, size_);
    if (silent.empty()) {  // all alive: one was only slow
      t0 = std::chrono::steady_clock::now();
      continue;
    }
    int reporter = 0;
    while (std::find(silent.begin(), silent.end(), reporter) != silent.end()) ++reporter;
    std::fflush(stdout);
    if (rank_ == reporter) {
      std::string names;
      for (int s : silent) names += (names.empty() ? "" : ", ") + std::to_string(s);
      std::fprintf(stderr,
                   "tapegpt train: error: rank %d of %d: rank%s %s did not join the other ranks' collective "
                   "within %g s and do%s not answer (stopped, hung, or cut off from the network); if a step "
                   "or a checkpoint save can take that long, raise --stall-timeout; stopping every rank\n",
                   rank_, size_, silent.size() > 1 ? "s" : "", names.c_str(), stall_timeout_s_,
                   silent.size() > 1 ? "" : "es");
      std::fflush(stderr);
    } else {
      quiet_exit_after_report();
    }
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

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
  MPI_Request request;
  MPI_Iallgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, MPI_COMM_WORLD, &request);
  wait(&request, 1);
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
  start_sum(x, n);
  wait_sums();
}

void Distributed::start_sum(float* x, int64_t n) {
  if (!mpi_ || size_ == 1) return;
  const auto t0 = std::chrono::steady_clock::now();
  mpi_handles_->sums->start(x, 0, n, std::max<int64_t>(1, (n + size_ - 1) / size_), /*all_gather=*/true);
  reduce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Distributed::start_reduce_scatter(float* x, int64_t begin, int64_t end, int64_t slice) {
  if (!mpi_ || size_ == 1) return;
  const auto t0 = std::chrono::steady_clock::now();
  mpi_handles_->sums->start(x, begin, end, slice, /*all_gather=*/false);
  reduce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Distributed::progress() {
  if (mpi_) mpi_handles_->sums->progress();
}

void Distributed::wait_sums() {
  if (!mpi_ || mpi_handles_->sums->idle()) return;
  const auto t0 = std::chrono::steady_clock::now();
  RingSums& sums = *mpi_handles_->sums;
  wait_until([&sums] { return sums.progress(); });  // bounded by --stall-timeout
  reduce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double Distributed::sum(double v) {
  if (!mpi_) return v;
  double total = 0.0;
  MPI_Request request;
  MPI_Iallreduce(&v, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
  wait(&request, 1);
  return total;
}

double Distributed::from_root(double v) {
  if (!mpi_) return v;
  MPI_Request request;
  MPI_Ibcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &request);
  wait(&request, 1);
  return v;
}

namespace {

// Each rank's count and displacement for slices of `slice` elements over
// [begin, n), displacements counted from begin.
void slice_counts(int64_t slice, int64_t begin, int64_t n, int size, std::vector<int>* counts,
                  std::vector<int>* displs) {
  TG_CHECK(slice > 0 && slice < (int64_t{1} << 31) && (size - 1) * slice < (int64_t{1} << 31));
  counts->assign(static_cast<size_t>(size), 0);
  displs->assign(static_cast<size_t>(size), 0);
  for (int r = 0; r < size; ++r) {
    const int64_t b = std::clamp(r * slice, begin, n), e = std::clamp((r + 1) * slice, begin, n);
    (*counts)[r] = static_cast<int>(e - b);
    (*displs)[r] = static_cast<int>(b - begin);
  }
}

}  // namespace

void Distributed::all_gather_slices(void* x, int64_t slice, int64_t begin, int64_t n, Element element) {
  if (!mpi_ || size_ == 1) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int>& counts = mpi_handles_->counts;
  std::vector<int>& displs = mpi_handles_->displs;
  slice_counts(slice, begin, n, size_, &counts, &displs);  // no allocation after the first call
  const MPI_Datatype type = element == Element::Double ? MPI_DOUBLE
                            : element == Element::Float ? MPI_FLOAT
                                                        : MPI_UINT16_T;
  MPI_Request request;
  MPI_Iallgatherv(MPI_IN_PLACE, 0, type, x, counts.data(), displs.data(), type, MPI_COMM_WORLD, &request);
  wait(&request, 1);
  reduce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Distributed::all_gather_slices(float* x, int64_t slice, int64_t n) {
  all_gather_slices(x, slice, 0, n, Element::Float);
}
void Distributed::all_gather_slices(double* x, int64_t slice, int64_t n) {
  all_gather_slices(x, slice, 0, n, Element::Double);
}
void Distributed::all_gather_slices(uint16_t* x, int64_t slice, int64_t n) {
  all_gather_slices(x, slice, 0, n, Element::Uint16);
}
void Distributed::all_gather_slices(float* x, int64_t slice, int64_t begin, int64_t n) {
  all_gather_slices(x, slice, begin, n, Element::Float);
}

void Distributed::gather_slices(const float* mine, float* full, int64_t slice, int64_t n) {
  std::vector<int>& counts = mpi_handles_->counts;
  std::vector<int>& displs = mpi_handles_->displs;
  slice_counts(slice, 0, n, size_, &counts, &displs);
  if (rank_ == 0 && counts[0] > 0) std::memcpy(full, mine, static_cast<size_t>(counts[0]) * sizeof(float));
  if (!mpi_ || size_ == 1) return;
  const auto t0 = std::chrono::steady_clock::now();
  MPI_Request request;
  if (rank_ == 0)
    MPI_Igatherv(MPI_IN_PLACE, 0, MPI_FLOAT, full, counts.data(), displs.data(), MPI_FLOAT, 0, MPI_COMM_WORLD,
                 &request);
  else
    MPI_Igatherv(mine, counts[rank_], MPI_FLOAT, nullptr, nullptr, nullptr, MPI_FLOAT, 0, MPI_COMM_WORLD,
                 &request);
  wait(&request, 1);
  reduce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool Distributed::any(bool flag) {
  if (!mpi_) return flag;
  int mine = flag ? 1 : 0, result = 0;
  MPI_Request request;
  MPI_Iallreduce(&mine, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &request);
  wait(&request, 1);
  return result != 0;
}

int Distributed::first_rank_with(bool flag) {
  if (!mpi_) return flag ? 0 : 1;
  int mine = flag ? rank_ : size_, result = size_;
  MPI_Request request;
  MPI_Iallreduce(&mine, &result, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &request);
  wait(&request, 1);
  return result;
}

int Distributed::first_rank_differing(uint64_t value) {
  if (!mpi_) return -1;
  std::vector<uint64_t> all(static_cast<size_t>(size_));
  MPI_Request request;
  MPI_Iallgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD, &request);
  wait(&request, 1);
  for (int r = 1; r < size_; ++r)
    if (all[r] != all[0]) return r;
  return -1;
}

}  // namespace train
