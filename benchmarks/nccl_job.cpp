#include "nccl_job.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#ifdef GPUCHECK_HAVE_MPI
#include <mpi.h>
#endif

#include "gpucheck/core/args.hpp"
#include "gpucheck/core/collectives.hpp"
#include "gpucheck/harness/check_nccl.hpp"

namespace gpucheck {
namespace {

#ifdef GPUCHECK_HAVE_MPI
void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw GpuError(std::string("MPI error ") + msg + " in " + call);
}
#define GPUCHECK_MPI_CALL(call) check_mpi((call), #call)

template <typename T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, int>) return MPI_INT;
  else {
    static_assert(std::is_same_v<T, std::uint64_t>, "mpi_type: double, int or std::uint64_t");
    return MPI_UINT64_T;
  }
}
#endif

// The engine's lockstep hook, answered by the job's MPI reductions.
class JobAgreement final : public Agreement {
 public:
  explicit JobAgreement(NcclJob& job) : job_(job) {}
  double max(double v) override { return job_.max(v); }
  bool all(bool v) override { return job_.all(v); }

 private:
  NcclJob& job_;
};

std::optional<int> env_int(const char* name, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return parse_env_int(v, lo, hi);
}

// Drops the arguments `drop` says so of, keeping argv's terminating null.
template <typename Pred>
void remove_args(int* argc, char** argv, Pred drop) {
  int out = 1;
  for (int i = 1; i < *argc; ++i)
    if (!drop(std::string_view(argv[i]))) argv[out++] = argv[i];
  *argc = out;
  argv[out] = nullptr;
}

}  // namespace

NcclJob::NcclJob() : agreement_(std::make_unique<JobAgreement>(*this)) {
  // NVLink SHARP (NVLS) needs multicast objects, which the machines we test on do not allow:
  // off unless the user set it (overwrite 0 keeps their value). Before any NCCL call, which
  // reads the environment once.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  nvls_ = nvls ? nvls : "0";
}

NcclJob::~NcclJob() {
  DeviceRestore restore;
  for (std::size_t i = 0; i < comms_.size(); ++i) {
    if (!comms_[i]) continue;
    // After a failure fail() has aborted them all (a peer may be gone: destroying would wait
    // for it); what is left is healthy.
    cudaSetDevice(devices_[i]);
    if (const ncclResult_t r = ncclCommDestroy(comms_[i]); r != ncclSuccess)
      std::fprintf(stderr, "bench_nccl: ncclCommDestroy: %s\n", ncclGetErrorString(r));
  }
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    if (!streams_[i]) continue;
    cudaSetDevice(devices_[i]);
    GPUCHECK_CUDA_NOEXCEPT(cudaStreamDestroy(streams_[i]));
  }
#ifdef GPUCHECK_HAVE_MPI
  if (we_initialised_mpi_) {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (!finalised) MPI_Finalize();
  }
#endif
}

bool NcclJob::take_args(int* argc, char** argv, std::string* err) {
  if (const char* t = std::getenv("GPUCHECK_NCCL_TIMEOUT_S"); t && *t) {
    const std::optional<int> s = parse_env_int(t, 1, 1 << 20);
    if (!s) {
      *err = std::string("GPUCHECK_NCCL_TIMEOUT_S wants a whole number of seconds >= 1, got '") + t + "'";
      return false;
    }
    timeout_s_ = *s;
  }
  bool want_mpi = false;
  if (const char* e = std::getenv("GPUCHECK_MPI"); e && *e) {
    const std::optional<int> v = parse_env_int(e, 0, 1);
    if (!v) {
      *err = std::string("GPUCHECK_MPI wants 1 (one process per GPU, as --mpi) or 0, got '") + e + "'";
      return false;
    }
    want_mpi = *v == 1;
  }
  {
    const args::OptionSet ours{{}, {"--mpi", "--fixed-buffers"}, {}, {}, {}, /*pass_unknown=*/true};
    args::Parsed p;
    args::ParseError e;
    if (!args::parse(args::from_argv(*argc, argv), ours, &p, &e)) {
      *err = e.str();
      return false;
    }
    fixed_buffers_ = p.flag("--fixed-buffers");
    want_mpi = want_mpi || p.flag("--mpi");
    args::keep_passed(argc, argv, p);
  }
  if (!want_mpi) return true;
#ifdef GPUCHECK_HAVE_MPI
  try {
    start_mpi();
  } catch (const std::exception& e) {
    *err = e.what();
    return false;
  }
  // Only rank 0 writes the results file.
  if (!root())
    remove_args(argc, argv, [](std::string_view a) {
      return a.starts_with("--benchmark_out=") || a.starts_with("--benchmark_out_format=");
    });
  return true;
#else
  *err = "--mpi (or GPUCHECK_MPI=1): this bench_nccl was built without MPI (CMake found no MPI_CXX)";
  return false;
#endif
}

void NcclJob::start_mpi() {
#ifdef GPUCHECK_HAVE_MPI
  int initialised = 0;
  GPUCHECK_MPI_CALL(MPI_Initialized(&initialised));
  if (!initialised) {
    GPUCHECK_MPI_CALL(MPI_Init(nullptr, nullptr));
    we_initialised_mpi_ = true;
  }
  GPUCHECK_MPI_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_));
  GPUCHECK_MPI_CALL(MPI_Comm_size(MPI_COMM_WORLD, &world_size_));
  mpi_ = true;
#endif
}

// Node-local rank: the launcher's variable, else the ranks sharing this node (MPI-3).
int NcclJob::local_rank() const {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MV2_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                        "PMI_LOCAL_RANK"})
    if (const std::optional<int> r = env_int(v, 0, 1 << 20)) return *r;
#ifdef GPUCHECK_HAVE_MPI
  if (mpi_) {
    MPI_Comm node;
    GPUCHECK_MPI_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int r = 0;
    const int rc = MPI_Comm_rank(node, &r);
    MPI_Comm_free(&node);
    GPUCHECK_MPI_CALL(rc);
    return r;
  }
#endif
  return 0;
}

void NcclJob::start() {
  DeviceRestore restore;
  std::string err;
  bool nccl_called = false;  // comms_ hold what NCCL returned (null them if it failed)
  try {
    int count = 0;
    GPUCHECK_CUDA(cudaGetDeviceCount(&count));
    if (count <= 0) throw GpuError("no CUDA device");
    if (mpi_) {
      devices_ = {local_rank() % count};
      ranks_ = {world_rank_};
      nranks_ = world_size_;
    } else {
      for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
        if (const std::optional<int> n = env_int(v, 0, 1 << 20); n && *n > 1)
          std::fprintf(stderr, "bench_nccl: started by an MPI launcher (%s=%d) without --mpi: every process drives "
                               "every GPU; pass --mpi for one process per GPU\n", v, *n);
      for (int d = 0; d < count; ++d) {
        devices_.push_back(d);
        ranks_.push_back(d);
      }
      nranks_ = count;
    }
    streams_.assign(devices_.size(), nullptr);
    comms_.assign(devices_.size(), nullptr);
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      GPUCHECK_CUDA(cudaSetDevice(devices_[i]));
      GPUCHECK_CUDA(cudaStreamCreateWithFlags(&streams_[i], cudaStreamNonBlocking));
    }
    if (!mpi_) {
      nccl_called = true;
      GPUCHECK_NCCL(ncclCommInitAll(comms_.data(), static_cast<int>(devices_.size()), devices_.data()));
    }
  } catch (const std::exception& e) {
    err = e.what();
    if (nccl_called) std::fill(comms_.begin(), comms_.end(), nullptr);
  }
  if (mpi_) {
    // Rank 0 makes the unique id and sends it to every rank. Communicators are created only
    // where every rank got this far: a rank that never arrives would leave the others
    // waiting inside ncclCommInitRank, which has no watchdog.
    ncclUniqueId id{};
    if (err.empty() && root()) {
      if (const ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
        err = std::string("ncclGetUniqueId: ") + ncclGetErrorString(r);
    }
    if (all(err.empty())) {
      try {
#ifdef GPUCHECK_HAVE_MPI
        GPUCHECK_MPI_CALL(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
#endif
        GPUCHECK_CUDA(cudaSetDevice(devices_[0]));
        nccl_called = true;
        GPUCHECK_NCCL(ncclCommInitRank(&comms_[0], nranks_, id, ranks_[0]));
      } catch (const std::exception& e) {
        err = e.what();
        if (nccl_called) comms_[0] = nullptr;
      }
      if (!all(err.empty()) && err.empty()) err = "it failed on another rank (see that rank's stderr)";
    } else if (err.empty()) {
      err = "it failed on another rank (see that rank's stderr)";
    }
  }
  if (!err.empty()) fail("NCCL set-up failed: " + err);
}

void NcclJob::throw_if_failed() const {
  if (failed()) throw GpuError(failure_);
}

void NcclJob::fail(const std::string& why) noexcept {
  if (failure_.empty()) failure_ = why;
  for (ncclComm_t& c : comms_) {
    if (c) ncclCommAbort(c);
    c = nullptr;
  }
}

void NcclJob::throw_failed_elsewhere(const std::string& what) {
  throw GpuError(what + " failed on another rank (its reason is in that rank's output)");
}

std::vector<harness::Lane> NcclJob::lanes() const {
  std::vector<harness::Lane> out;
  for (std::size_t i = 0; i < devices_.size(); ++i) out.push_back({devices_[i], streams_[i]});
  return out;
}

harness::Waiter NcclJob::waiter() {
  return [this](std::span<const cudaEvent_t> done) { wait(done); };
}

void NcclJob::note_enqueue_error(const std::string& what) {
  if (pending_error_.empty()) pending_error_ = what;
}

std::string NcclJob::watch(std::span<const cudaEvent_t> done) const {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::seconds(timeout_s_);
  for (;;) {
    bool all_done = true;
    for (cudaEvent_t e : done) {
      const cudaError_t q = cudaEventQuery(e);
      if (q == cudaErrorNotReady) all_done = false;
      else if (q != cudaSuccess)
        return "CUDA error " + cuda_error_text(q) + " while waiting for a collective";
    }
    if (all_done) return {};
    for (ncclComm_t c : comms_) {
      ncclResult_t r = ncclSuccess;
      if (c && ncclCommGetAsyncError(c, &r) == ncclSuccess && r != ncclSuccess && r != ncclInProgress)
        return std::string("NCCL asynchronous error: ") + ncclGetErrorString(r);
    }
    if (std::chrono::steady_clock::now() > deadline)
      return "a collective did not finish within " + std::to_string(timeout_s_) +
             " s (watchdog; GPUCHECK_NCCL_TIMEOUT_S)";
    // Poll without sleeping for as long as any timed sample lasts (nccl-tests polls its streams
    // the same way): sleeping once the wait passed a millisecond read less busbw at the sizes
    // where a sample of 20 calls takes a few milliseconds. Past a second
    // something is wrong anyway: poll gently until the watchdog's deadline.
    if (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void NcclJob::wait(std::span<const cudaEvent_t> done) {
  std::string err = std::exchange(pending_error_, {});
  if (err.empty()) err = watch(done);
  if (!err.empty()) {
    err += "; communicators aborted";
    fail(err);
  }
  if (all(err.empty())) return;
  if (err.empty()) {
    err = "a collective failed on another rank (its reason is in that rank's output); communicators aborted";
    fail(err);
  }
  throw GpuError(err);
}

template <typename T>
T NcclJob::reduce(T v, Reduction r) {
#ifdef GPUCHECK_HAVE_MPI
  if (mpi_) {
    const MPI_Op op = r == Reduction::max ? MPI_MAX : r == Reduction::min ? MPI_MIN : MPI_SUM;
    T out{};
    GPUCHECK_MPI_CALL(MPI_Allreduce(&v, &out, 1, mpi_type<T>(), op, MPI_COMM_WORLD));
    return out;
  }
#endif
  static_cast<void>(r);
  return v;
}

bool NcclJob::all(bool ok) { return reduce(ok ? 1 : 0, Reduction::min) == 1; }
std::uint64_t NcclJob::sum(std::uint64_t v) { return reduce(v, Reduction::sum); }
std::uint64_t NcclJob::min(std::uint64_t v) { return reduce(v, Reduction::min); }
double NcclJob::max(double v) { return reduce(v, Reduction::max); }

std::uint64_t NcclJob::least_free_memory() {
  std::uint64_t least = std::numeric_limits<std::uint64_t>::max();
  agreed("reading free device memory", [&] {
    DeviceRestore restore;
    for (int d : devices_) {
      GPUCHECK_CUDA(cudaSetDevice(d));
      std::size_t free_b = 0, total_b = 0;
      GPUCHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
      least = std::min<std::uint64_t>(least, free_b);
    }
  });
  return min(least);
}

std::uint64_t NcclJob::largest_l2_bytes() {
  std::uint64_t largest = 0;
  agreed("reading the L2 size", [&] {
    for (int d : devices_) {
      int l2 = 0;
      GPUCHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, d));
      largest = std::max<std::uint64_t>(largest, static_cast<std::uint64_t>(std::max(l2, 0)));
    }
  });
  return reduce(largest, Reduction::max);
}

std::map<std::string, std::string> NcclJob::context() const {
  return {{"nccl_launch", mpi_ ? "mpi" : "single-process"},
          {"nccl_ranks", std::to_string(nranks_)},
          {"nccl_processes", std::to_string(world_size_)},
          {"nccl_nvls_enable", nvls_},
          {"nccl_buffers", fixed_buffers_ ? "fixed" : "one region per call (nccl-tests)"}};
}

}  // namespace gpucheck
