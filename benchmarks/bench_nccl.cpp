// bench_nccl: NCCL all-reduce, all-gather and reduce-scatter (fp32 sum), in place and out of
// place, reported like nccl-tests: algbw_GBps = size / time and busbw_GBps = algbw x 2(n-1)/n
// (all-reduce) or (n-1)/n (the others), so busbw is comparable with the links' bandwidth
// whatever the number of GPUs n; with one GPU busbw is 0. "size" is nccl-tests' column: the
// all-reduce buffer, the all-gather output, the reduce-scatter input (see core/collectives.hpp).
//
// Two ways to run: one process drives every visible GPU (ncclCommInitAll, one stream per GPU,
// group calls; the default), or one process per GPU under MPI (`--mpi`, or GPUCHECK_MPI=1,
// with mpirun or srun; the unique id goes out with MPI_Bcast). In MPI mode every rank runs
// the same cases with a fixed iteration count (collective_plan) so they stay in lockstep;
// each sample's time is the slowest rank's, and only rank 0 prints. See docs/MULTI_GPU.md.
//
// Time: CUDA events around `batch` back-to-back collectives on each GPU's stream, the
// slowest GPU's elapsed time per collective. Verification: every rank's input holds small
// integers (exact sums in fp32) that depend on rank, segment and position; the output is
// compared on the device, element for element, with the expected period tiled by D2D copies.
// A wrong element is an error. A watchdog aborts the communicators (an error, not a hang)
// when a sample does not finish within GPUCHECK_NCCL_TIMEOUT_S seconds (default 60).
#include <fcntl.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#ifdef GPUCHECK_HAVE_MPI
#include <mpi.h>
#endif

#include "gpucheck/core/collectives.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/harness/check_nccl.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck {
namespace harness {
// Optional hook of the shared main (see docs/MULTI_GPU.md): removes --mpi from argv, starts
// MPI and keeps --benchmark_out off ranks other than 0. Without the hook, GPUCHECK_MPI=1.
void preprocess_args(int* argc, char** argv);
}  // namespace harness

namespace {

using harness::DeviceBuffer;
using harness::Event;

constexpr std::size_t kPeriod = kCollectivePatternPeriod;
constexpr std::size_t kWantElems = kPeriod * 256;  // 64 MiB verification tile (a whole number of periods)

// ---------------------------------------------------------------------------------------------
// How the job runs: decided once, at registration (or in the argv hook).

struct Launch {
  bool mpi_requested = false;
  bool mpi = false;
  bool we_initialised_mpi = false;
  int world_rank = 0, world_size = 1;
  std::vector<int> devices;  // GPUs this process drives
  std::vector<int> ranks;    // communicator rank of each
  int nranks = 0;            // ranks in the communicator
  bool root() const { return world_rank == 0; }
};

Launch& launch() {
  static Launch l;
  return l;
}

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1 << 20) return std::nullopt;
  return static_cast<int>(x);
}

#ifdef GPUCHECK_HAVE_MPI
void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw GpuError(std::string("MPI error ") + msg + " in " + call);
  }
}
#define GPUCHECK_MPI(call) check_mpi((call), #call)
#endif

// Starts MPI once (idempotent). Throws when the binary was built without MPI.
void start_mpi() {
  Launch& l = launch();
  if (l.mpi) return;
#ifdef GPUCHECK_HAVE_MPI
  int initialised = 0;
  GPUCHECK_MPI(MPI_Initialized(&initialised));
  if (!initialised) {
    GPUCHECK_MPI(MPI_Init(nullptr, nullptr));
    l.we_initialised_mpi = true;
  }
  GPUCHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &l.world_rank));
  GPUCHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &l.world_size));
  l.mpi = true;
#else
  throw GpuError("--mpi / GPUCHECK_MPI=1: this bench_nccl was built without MPI (CMake found no MPI_CXX)");
#endif
}

// Node-local rank: the launcher's variable, else ranks sharing this node (MPI-3).
int local_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MV2_COMM_WORLD_LOCAL_RANK",
                        "MPI_LOCALRANKID", "PMI_LOCAL_RANK"})
    if (auto x = env_int(v)) return *x;
#ifdef GPUCHECK_HAVE_MPI
  MPI_Comm node;
  GPUCHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int r = 0;
  GPUCHECK_MPI(MPI_Comm_rank(node, &r));
  MPI_Comm_free(&node);
  return r;
#else
  return 0;
#endif
}

// Agreement across MPI ranks (identity without MPI): every rank takes the same branch.
bool all_ok(bool ok) {
#ifdef GPUCHECK_HAVE_MPI
  if (launch().mpi) {
    int in = ok ? 1 : 0, out = 0;
    GPUCHECK_MPI(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    return out == 1;
  }
#endif
  return ok;
}
std::uint64_t sum_all(std::uint64_t v) {
#ifdef GPUCHECK_HAVE_MPI
  if (launch().mpi) {
    std::uint64_t out = 0;
    GPUCHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD));
    return out;
  }
#endif
  return v;
}
double max_all(double v) {
#ifdef GPUCHECK_HAVE_MPI
  if (launch().mpi) {
    double out = 0;
    GPUCHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return out;
  }
#endif
  return v;
}
std::uint64_t min_all(std::uint64_t v) {
#ifdef GPUCHECK_HAVE_MPI
  if (launch().mpi) {
    std::uint64_t out = 0;
    GPUCHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD));
    return out;
  }
#endif
  return v;
}

// Ranks other than 0 print nothing: Google Benchmark's console output goes to /dev/null.
void silence_stdout() {
  std::fflush(stdout);
  const int fd = open("/dev/null", O_WRONLY);
  if (fd >= 0) {
    dup2(fd, STDOUT_FILENO);
    close(fd);
  }
}

// ---------------------------------------------------------------------------------------------
// The communicators, created on the first case (in lockstep on every rank) and kept.

class ScopedDevice {
 public:
  ScopedDevice() { GPUCHECK_CUDA(cudaGetDevice(&prev_)); }
  ~ScopedDevice() { GPUCHECK_CUDA_NOEXCEPT(cudaSetDevice(prev_)); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int prev_ = 0;
};

struct World {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::string failure;  // set when init failed or the watchdog aborted: later cases fail fast

  void abort_all() noexcept {
    for (ncclComm_t& c : comms)
      if (c) ncclCommAbort(c);
    std::fill(comms.begin(), comms.end(), nullptr);
  }
  void destroy() noexcept {
    for (std::size_t i = 0; i < comms.size(); ++i) {
      cudaSetDevice(launch().devices[i]);
      if (comms[i]) ncclCommDestroy(comms[i]);
    }
    comms.clear();
    for (std::size_t i = 0; i < streams.size(); ++i) {
      cudaSetDevice(launch().devices[i]);
      if (streams[i]) cudaStreamDestroy(streams[i]);
    }
    streams.clear();
  }
};

World* g_world = nullptr;  // never freed: torn down explicitly at exit

void at_exit() noexcept {
  if (g_world && g_world->failure.empty()) g_world->destroy();
#ifdef GPUCHECK_HAVE_MPI
  if (launch().we_initialised_mpi) {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (!finalised) MPI_Finalize();
  }
#endif
}

World& world() {
  static bool tried = false;
  if (!tried) {
    tried = true;
    g_world = new World;
    World& w = *g_world;
    const Launch& l = launch();
    ScopedDevice restore;
    try {
      w.comms.assign(l.devices.size(), nullptr);
      w.streams.assign(l.devices.size(), nullptr);
      for (std::size_t i = 0; i < l.devices.size(); ++i) {
        GPUCHECK_CUDA(cudaSetDevice(l.devices[i]));
        GPUCHECK_CUDA(cudaStreamCreateWithFlags(&w.streams[i], cudaStreamNonBlocking));
      }
      if (l.mpi) {
#ifdef GPUCHECK_HAVE_MPI
        ncclUniqueId id{};
        if (l.root()) GPUCHECK_NCCL(ncclGetUniqueId(&id));
        GPUCHECK_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
        GPUCHECK_CUDA(cudaSetDevice(l.devices[0]));
        GPUCHECK_NCCL(ncclCommInitRank(&w.comms[0], l.nranks, id, l.ranks[0]));
#endif
      } else {
        GPUCHECK_NCCL(ncclCommInitAll(w.comms.data(), static_cast<int>(l.devices.size()), l.devices.data()));
      }
    } catch (const std::exception& e) {
      w.failure = std::string("NCCL set-up failed: ") + e.what();
    }
  }
  if (!g_world->failure.empty()) throw GpuError(g_world->failure);
  return *g_world;
}

double timeout_s() {
  if (auto t = env_int("GPUCHECK_NCCL_TIMEOUT_S"); t && *t > 0) return *t;
  return 60.0;
}

// Waits for every event, polling NCCL's asynchronous error state; past the deadline (or on
// an error) aborts the communicators and throws: a stuck collective becomes an error.
void wait_or_abort(World& w, const std::vector<cudaEvent_t>& done, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s());
  for (int polls = 0;; ++polls) {
    bool all_done = true;
    for (cudaEvent_t e : done) {
      const cudaError_t q = cudaEventQuery(e);
      if (q == cudaErrorNotReady) {
        all_done = false;
      } else if (q != cudaSuccess) {
        w.failure = what + ": " + cudaGetErrorString(q) + "; communicators aborted";
        w.abort_all();
        throw GpuError(w.failure);
      }
    }
    if (all_done) return;
    for (ncclComm_t c : w.comms) {
      ncclResult_t r = ncclSuccess;
      if (c && ncclCommGetAsyncError(c, &r) == ncclSuccess && r != ncclSuccess && r != ncclInProgress) {
        w.failure = what + ": NCCL asynchronous error " + ncclGetErrorString(r) + "; communicators aborted";
        w.abort_all();
        throw GpuError(w.failure);
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      w.failure = what + ": did not finish within " + std::to_string(static_cast<int>(timeout_s())) +
                  " s (watchdog; GPUCHECK_NCCL_TIMEOUT_S); communicators aborted";
      w.abort_all();
      throw GpuError(w.failure);
    }
    if (polls < 1000) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// ---------------------------------------------------------------------------------------------
// One case.

struct NcclCase {
  Collective coll;
  bool in_place;
  std::uint64_t bytes;  // nominal size S
  std::string name() const { return collective_case_name(coll, in_place, DType::fp32, bytes, launch().nranks); }
  CollectiveCounts counts() const { return collective_counts(coll, bytes, sizeof(float), launch().nranks); }
};

// One local GPU's buffers for a case. `a` is the send buffer (in place: the only buffer), `b`
// the receive buffer. Destroyed with its device current (the caller restores the device).
struct RankBuffers {
  int device;
  int rank;
  DeviceBuffer a, b;
  DeviceBuffer period;  // one period of the pattern, kPeriod floats
  DeviceBuffer want;    // the expected values, tiled
  std::unique_ptr<Event> start, stop;
  RankBuffers(int dev, int r) : device(dev), rank(r) {}
  ~RankBuffers() { GPUCHECK_CUDA_NOEXCEPT(cudaSetDevice(device)); }
  RankBuffers(const RankBuffers&) = delete;
  RankBuffers& operator=(const RankBuffers&) = delete;

  float* send(const NcclCase& c, const CollectiveCounts& k) const {
    if (c.in_place && c.coll == Collective::all_gather) return a.as<float>() + static_cast<std::size_t>(rank) * k.count;
    return a.as<float>();
  }
  float* recv(const NcclCase& c, const CollectiveCounts& k) const {
    if (!c.in_place) return b.as<float>();
    if (c.coll == Collective::reduce_scatter) return a.as<float>() + static_cast<std::size_t>(rank) * k.count;
    return a.as<float>();
  }
};

// dst[i] = period[i mod kPeriod] for i < n: one copy of the period, then doubling D2D copies
// (the copied prefix is always a whole number of periods, so the phase is kept).
void tile(float* dst, std::size_t n, const float* period, cudaStream_t s) {
  if (n == 0) return;
  const std::size_t first = std::min(n, kPeriod);
  GPUCHECK_CUDA(cudaMemcpyAsync(dst, period, first * sizeof(float), cudaMemcpyDeviceToDevice, s));
  for (std::size_t have = first; have < n;) {
    const std::size_t c = std::min(have, n - have);
    GPUCHECK_CUDA(cudaMemcpyAsync(dst + have, dst, c * sizeof(float), cudaMemcpyDeviceToDevice, s));
    have += c;
  }
}

void upload_period(const RankBuffers& r, const std::vector<float>& host, cudaStream_t s) {
  GPUCHECK_CUDA(cudaMemcpyAsync(r.period.get(), host.data(), kPeriod * sizeof(float), cudaMemcpyHostToDevice, s));
  GPUCHECK_CUDA(cudaStreamSynchronize(s));  // `host` may go away after this
}

std::vector<float> pattern_period(int rank, int segment) {
  std::vector<float> v(kPeriod);
  for (std::size_t j = 0; j < kPeriod; ++j) v[j] = collective_pattern(rank, segment, j);
  return v;
}

// Writes the rank's input: segment s of the send data holds pattern(rank, s, .); the rest of
// the buffers is poisoned (NaN), so an element NCCL does not write is counted as wrong.
void fill_input(const RankBuffers& r, const NcclCase& c, const CollectiveCounts& k, cudaStream_t s) {
  if (r.a.bytes()) kernels::poison(r.a.get(), r.a.bytes(), s);
  if (r.b.bytes()) kernels::poison(r.b.get(), r.b.bytes(), s);
  float* send = r.send(c, k);
  const int segments = c.coll == Collective::reduce_scatter ? launch().nranks : 1;
  const std::size_t seg_elems = c.coll == Collective::reduce_scatter ? k.per_rank : k.send_elems;
  for (int seg = 0; seg < segments; ++seg) {
    upload_period(r, pattern_period(r.rank, seg), s);
    tile(send + static_cast<std::size_t>(seg) * seg_elems, seg_elems, r.period.as<float>(), s);
  }
  GPUCHECK_CUDA(cudaStreamSynchronize(s));
}

// Wrong elements of `n` outputs at `got` against an expected period (on the device).
std::uint64_t count_wrong(const RankBuffers& r, const float* got, std::size_t n, const std::vector<float>& expect,
                          cudaStream_t s) {
  upload_period(r, expect, s);
  const std::size_t tile_n = std::min(n, r.want.bytes() / sizeof(float));
  tile(r.want.as<float>(), tile_n, r.period.as<float>(), s);
  std::uint64_t wrong = 0;
  for (std::size_t off = 0; off < n; off += tile_n) {  // off is a multiple of the period
    const std::size_t len = std::min(tile_n, n - off);
    const kernels::DiffStats d = kernels::compare_arrays(got + off, r.want.get(), len, DType::fp32, 0.0, 0.0, s);
    wrong += d.mismatches + d.nonfinite;
  }
  return wrong;
}

std::uint64_t verify_rank(const RankBuffers& r, const NcclCase& c, const CollectiveCounts& k, cudaStream_t s) {
  const int n = launch().nranks;
  const float* out = r.recv(c, k);
  switch (c.coll) {
    case Collective::all_reduce:
      return count_wrong(r, out, k.recv_elems, collective_expected_period(c.coll, r.rank, n), s);
    case Collective::reduce_scatter:
      return count_wrong(r, out, k.recv_elems, collective_expected_period(c.coll, r.rank, n), s);
    case Collective::all_gather: {
      std::uint64_t wrong = 0;
      for (int seg = 0; seg < n; ++seg)
        wrong += count_wrong(r, out + static_cast<std::size_t>(seg) * k.per_rank, k.per_rank,
                             collective_expected_period(c.coll, seg, n), s);
      return wrong;
    }
  }
  return 0;
}

// Enqueues one collective on every local GPU (one group).
void enqueue(World& w, const std::vector<std::unique_ptr<RankBuffers>>& rb, const NcclCase& c,
             const CollectiveCounts& k) {
  GPUCHECK_NCCL(ncclGroupStart());
  ncclResult_t first = ncclSuccess;
  for (std::size_t i = 0; i < rb.size() && first == ncclSuccess; ++i) {
    const RankBuffers& r = *rb[i];
    const float* send = r.send(c, k);
    float* recv = r.recv(c, k);
    switch (c.coll) {
      case Collective::all_reduce:
        first = ncclAllReduce(send, recv, k.count, ncclFloat, ncclSum, w.comms[i], w.streams[i]);
        break;
      case Collective::all_gather:
        first = ncclAllGather(send, recv, k.count, ncclFloat, w.comms[i], w.streams[i]);
        break;
      case Collective::reduce_scatter:
        first = ncclReduceScatter(send, recv, k.count, ncclFloat, ncclSum, w.comms[i], w.streams[i]);
        break;
    }
  }
  const ncclResult_t end = ncclGroupEnd();
  GPUCHECK_NCCL(first);
  GPUCHECK_NCCL(end);
}

// `calls` collectives between a start and a stop event on every GPU; the slowest GPU's
// elapsed milliseconds (over all MPI ranks).
double run_sample(World& w, const std::vector<std::unique_ptr<RankBuffers>>& rb, const NcclCase& c,
                  const CollectiveCounts& k, int calls, const std::string& what) {
  for (std::size_t i = 0; i < rb.size(); ++i) {
    GPUCHECK_CUDA(cudaSetDevice(rb[i]->device));
    rb[i]->start->record(w.streams[i]);
  }
  for (int j = 0; j < calls; ++j) enqueue(w, rb, c, k);
  std::vector<cudaEvent_t> stops;
  for (std::size_t i = 0; i < rb.size(); ++i) {
    GPUCHECK_CUDA(cudaSetDevice(rb[i]->device));
    rb[i]->stop->record(w.streams[i]);
    stops.push_back(rb[i]->stop->get());
  }
  wait_or_abort(w, stops, what);
  double ms = 0;
  for (const auto& r : rb) ms = std::max(ms, static_cast<double>(r->stop->elapsed_ms_since(*r->start)));
  return max_all(ms);
}

// Runs `fn` on this process's GPUs; every MPI rank learns whether any rank failed, so that all
// of them leave the case together instead of leaving the others waiting in a collective.
template <typename Fn>
void on_all_ranks(const std::string& what, Fn&& fn) {
  std::string err;
  try {
    fn();
  } catch (const std::exception& e) {
    err = e.what();
  }
  if (!all_ok(err.empty())) throw GpuError(err.empty() ? what + " failed on another rank" : err);
}

std::uint64_t count_wrong_everywhere(const World& w, const std::vector<std::unique_ptr<RankBuffers>>& rb,
                                     const NcclCase& c, const CollectiveCounts& k, const std::string& name) {
  std::uint64_t wrong = 0;
  on_all_ranks(name + ": verification", [&] {
    for (std::size_t i = 0; i < rb.size(); ++i) {
      GPUCHECK_CUDA(cudaSetDevice(rb[i]->device));
      wrong += verify_rank(*rb[i], c, k, w.streams[i]);
    }
  });
  return sum_all(wrong);
}

void throw_if_wrong(std::uint64_t wrong, const NcclCase& c, const CollectiveCounts& k, const char* when) {
  if (wrong == 0) return;
  const std::uint64_t outputs = static_cast<std::uint64_t>(k.recv_elems) * static_cast<std::uint64_t>(launch().nranks);
  throw VerificationError(c.name() + ": " + std::to_string(wrong) + " of " + std::to_string(outputs) +
                          " output elements wrong " + when);
}

void nccl_case(benchmark::State& state, const NcclCase& c) {
  const Launch& l = launch();
  const CollectiveCounts k = c.counts();
  const CollectivePlan plan = collective_plan(c.bytes);
  const std::string name = c.name();
  ScopedDevice restore;  // declared first: restores the device after the buffers are freed
  World& w = world();
  std::vector<std::unique_ptr<RankBuffers>> rb;
  on_all_ranks(name + ": set-up", [&] {
    const std::size_t a_elems = c.in_place ? std::max(k.send_elems, k.recv_elems) : k.send_elems;
    const std::size_t b_elems = c.in_place ? 0 : k.recv_elems;
    const std::size_t segment = c.coll == Collective::all_gather ? k.per_rank : k.recv_elems;
    for (std::size_t i = 0; i < l.devices.size(); ++i) {
      GPUCHECK_CUDA(cudaSetDevice(l.devices[i]));
      auto r = std::make_unique<RankBuffers>(l.devices[i], l.ranks[i]);
      r->a = DeviceBuffer(a_elems * sizeof(float));
      r->b = DeviceBuffer(b_elems * sizeof(float));
      r->period = DeviceBuffer(kPeriod * sizeof(float));
      r->want = DeviceBuffer(std::min(kWantElems, segment) * sizeof(float));
      r->start = std::make_unique<Event>();
      r->stop = std::make_unique<Event>();
      fill_input(*r, c, k, w.streams[i]);
      rb.push_back(std::move(r));
    }
  });

  // Correctness first: one call on fresh inputs, every output element checked.
  run_sample(w, rb, c, k, 1, name + ": first call");
  throw_if_wrong(count_wrong_everywhere(w, rb, c, k, name), c, k, "after the first call");

  run_sample(w, rb, c, k, plan.warmup, name + ": warm-up");
  double total_s = 0;
  std::int64_t samples = 0;
  for (auto _ : state) {
    const double per_call_s = run_sample(w, rb, c, k, plan.batch, name) / 1e3 / plan.batch;
    state.SetIterationTime(per_call_s);
    total_s += per_call_s;
    ++samples;
  }
  // Out of place (and all-gather in place) every call rewrites the same result: check again.
  const bool repeatable = !c.in_place || c.coll == Collective::all_gather;
  if (repeatable) throw_if_wrong(count_wrong_everywhere(w, rb, c, k, name), c, k, "after the timed calls");
  if (samples == 0) throw GpuError(name + ": no iterations were run");

  const double mean_s = total_s / static_cast<double>(samples);
  state.counters["algbw_GBps"] = algbw_GBps(k.bytes, mean_s);
  state.counters["busbw_GBps"] = busbw_GBps(c.coll, k.bytes, mean_s, l.nranks);
  state.counters["wrong"] = 0;
  state.counters["ranks"] = l.nranks;
  std::string label = "mode=" + std::string(l.mpi ? "mpi" : "single-process") + " count=" + std::to_string(k.count) +
                      " batch=" + std::to_string(plan.batch);
  if (l.nranks == 1 && c.in_place) label += " (one rank in place: NCCL moves no data; launch cost only)";
  state.SetLabel(label);
}

// Least free device memory over this job's GPUs (all MPI ranks agree on it, so that every
// rank registers the same cases).
std::uint64_t min_free_memory() {
  ScopedDevice restore;
  std::uint64_t least = ~std::uint64_t{0};
  for (int d : launch().devices) {
    GPUCHECK_CUDA(cudaSetDevice(d));
    std::size_t free_b = 0, total_b = 0;
    GPUCHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    least = std::min<std::uint64_t>(least, free_b);
  }
  return min_all(least);
}

bool cmdline_has(const char* prefix) {
  std::FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (!f) return false;
  std::string all;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) all.append(buf, n);
  std::fclose(f);
  for (std::size_t pos = 0; pos < all.size(); pos = all.find('\0', pos) + 1) {
    if (all.compare(pos, std::strlen(prefix), prefix) == 0) return true;
    if (all.find('\0', pos) == std::string::npos) break;
  }
  return false;
}

}  // namespace

void harness::preprocess_args(int* argc, char** argv) {
  Launch& l = launch();
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp(argv[i], "--mpi") == 0) l.mpi_requested = true;
    else argv[out++] = argv[i];
  }
  *argc = out;
  argv[out] = nullptr;
  if (!l.mpi_requested) return;
  try {
    start_mpi();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpucheck: %s\n", e.what());
    std::exit(2);
  }
  if (l.root()) return;
  // Only rank 0 writes the results file.
  out = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--benchmark_out=") || a.starts_with("--benchmark_out_format=")) continue;
    argv[out++] = argv[i];
  }
  *argc = out;
  argv[out] = nullptr;
}

void harness::register_benchmarks(Device& device) {
  // NVLink SHARP (multicast objects) stays off unless the user asks for it.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  Launch& l = launch();
  if (const char* e = std::getenv("GPUCHECK_MPI"); e && std::string_view(e) == "1") l.mpi_requested = true;
  int count = 0;
  GPUCHECK_CUDA(cudaGetDeviceCount(&count));
  if (l.mpi_requested) {
    start_mpi();
    l.devices = {local_rank() % count};
    l.ranks = {l.world_rank};
    l.nranks = l.world_size;
    if (!l.root()) {
      if (cmdline_has("--benchmark_out=") && !cmdline_has("--mpi"))
        std::fprintf(stderr, "bench_nccl: rank %d: --benchmark_out is written by every rank; pass it to rank 0 "
                             "only (docs/MULTI_GPU.md)\n", l.world_rank);
      silence_stdout();
    }
  } else {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
      if (auto n = env_int(v); n && *n > 1)
        std::fprintf(stderr, "bench_nccl: started by an MPI launcher (%s=%d) without --mpi: every process drives "
                             "every GPU; pass --mpi (or GPUCHECK_MPI=1) for one process per GPU\n", v, *n);
    for (int d = 0; d < count; ++d) {
      l.devices.push_back(d);
      l.ranks.push_back(d);
    }
    l.nranks = count;
  }
  std::atexit(at_exit);

  benchmark::AddCustomContext("nccl_launch", l.mpi ? "mpi" : "single-process");
  benchmark::AddCustomContext("nccl_ranks", std::to_string(l.nranks));
  benchmark::AddCustomContext("nccl_processes", std::to_string(l.world_size));
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  benchmark::AddCustomContext("nccl_nvls_enable", nvls ? nvls : "unset");

  // Room for the buffers: what the GPU has free now, less NCCL's own buffers and the
  // harness's; the same limit on every rank.
  const std::uint64_t free_b = min_free_memory();
  const std::uint64_t reserve = std::uint64_t{2} << 30;
  const std::uint64_t budget = free_b * 9 / 10 > reserve ? free_b * 9 / 10 - reserve : 0;

  constexpr std::uint64_t MiB = std::uint64_t{1} << 20, GiB = std::uint64_t{1} << 30;
  std::vector<NcclCase> cases;
  const Collective all[] = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter};
  if (device.full()) {
    for (Collective coll : all)
      for (std::uint64_t b : geometric_sizes(8, 8 * GiB, 2))
        for (bool in_place : {false, true}) cases.push_back({coll, in_place, b});
  } else {
    // With one rank an in-place collective moves no data: NCCL returns after a launch of about
    // 2 us, so a quick (gate) suite on one GPU leaves it out; the full suite keeps it, as
    // nccl-tests does.
    const std::vector<bool> places = l.nranks > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false};
    for (std::uint64_t b : {MiB, 64 * MiB, GiB})
      for (bool in_place : places) cases.push_back({Collective::all_reduce, in_place, b});
    for (Collective coll : {Collective::all_gather, Collective::reduce_scatter})
      for (bool in_place : places) cases.push_back({coll, in_place, 64 * MiB});
  }
  std::uint64_t skipped_from = 0;
  for (const NcclCase& c : cases) {
    const CollectiveCounts k = c.counts();
    if (!k.runnable()) continue;  // fewer elements than ranks
    const std::size_t segment = c.coll == Collective::all_gather ? k.per_rank : k.recv_elems;
    const std::uint64_t need = collective_buffer_bytes(c.coll, c.in_place, c.bytes, sizeof(float), l.nranks) +
                               (std::min(kWantElems, segment) + kPeriod) * sizeof(float);
    if (need > budget) {
      if (skipped_from == 0 || c.bytes < skipped_from) skipped_from = c.bytes;
      continue;
    }
    register_case(c.name(), [c](benchmark::State& st) { nccl_case(st, c); })
        ->Iterations(collective_plan(c.bytes).samples);
  }
  if (skipped_from != 0 && l.root())
    std::fprintf(stderr, "bench_nccl: sizes from %s up left out: they do not fit in %llu MiB of free device memory\n",
                 bytes_label(skipped_from).c_str(), static_cast<unsigned long long>(free_b >> 20));
}

}  // namespace gpucheck
