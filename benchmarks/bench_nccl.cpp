// bench_nccl: NCCL all-reduce, all-gather and reduce-scatter (fp32 sum), in place and out of
// place, reported like nccl-tests: algbw_GBps = size / time and busbw_GBps = algbw x 2(n-1)/n
// (all-reduce) or (n-1)/n (the others), so busbw is comparable with the links' bandwidth
// whatever the number of GPUs n; with one GPU busbw is 0. "size" is nccl-tests' column: the
// all-reduce buffer, the all-gather output, the reduce-scatter input (core/collectives.hpp).
//
// One process drives every visible GPU (group calls), or one process per GPU under MPI
// (`--mpi`); nccl_job.hpp owns that. With two ranks or more a sample is timed the way
// nccl-tests times (-w 5 -n 20): the host's clock from before the first of at least 20
// back-to-back calls is issued until every GPU (and rank) finished them; one GPU alone is
// held and batched like any device-time case. With several ranks each call uses the next region of
// its buffers, as nccl-tests does, so that no call finds its data in L2 (--fixed-buffers: one
// region, warm). docs/MULTI_GPU.md says how the two methods differ.
//
// Verification: every rank's input holds small integers (exact sums in fp32) that depend on
// rank, segment and position; after the first call on fresh inputs every output element is
// compared on the device with the expected values (and again after timing where the calls
// are repeatable). A wrong element is an error, never a figure.
#include <nccl.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cases/nccl.hpp"
#include "gpucheck/core/collectives.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/harness/check_nccl.hpp"
#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/libraries.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/verify.cuh"
#include "nccl_job.hpp"

namespace gpucheck {
namespace {

using harness::DeviceBuffer;
using harness::Event;

constexpr std::size_t kPeriod = kCollectivePatternPeriod;

// The NCCL call of each collective (fp32, sum); its name, busbw factor, buffer split and
// expected output are its row in core/collectives.hpp.
using Enqueue = ncclResult_t (*)(const float* send, float* recv, std::size_t count, ncclComm_t comm, cudaStream_t s);
struct NcclCall {
  Collective id;
  Enqueue enqueue;
};
const NcclCall kCalls[] = {
    {Collective::all_reduce,
     [](const float* s, float* r, std::size_t n, ncclComm_t c, cudaStream_t st) {
       return ncclAllReduce(s, r, n, ncclFloat, ncclSum, c, st);
     }},
    {Collective::all_gather,
     [](const float* s, float* r, std::size_t n, ncclComm_t c, cudaStream_t st) {
       return ncclAllGather(s, r, n, ncclFloat, c, st);
     }},
    {Collective::reduce_scatter,
     [](const float* s, float* r, std::size_t n, ncclComm_t c, cudaStream_t st) {
       return ncclReduceScatter(s, r, n, ncclFloat, ncclSum, c, st);
     }},
};

Enqueue enqueue_of(Collective c) {
  for (const NcclCall& call : kCalls)
    if (call.id == c) return call.enqueue;
  throw std::logic_error("bench_nccl: no NCCL call for collective " + collective_variant(c, false));
}

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

// One local GPU's part of a case. The destructor's body makes its device current before the
// members (its buffers) are freed.
struct GpuPart {
  int device = 0, rank = 0;
  cudaStream_t stream = nullptr;
  ncclComm_t comm = nullptr;
  // a: the input (in place, the only buffer); b: the output. Each holds `copies` regions of
  // a_stride / b_stride elements; call i uses region i mod copies.
  DeviceBuffer a, b;
  std::size_t a_stride = 0, b_stride = 0;
  DeviceBuffer period;   // one period of a pattern
  DeviceBuffer want;     // the expected values, tiled
  std::size_t send_offset = 0, recv_offset = 0;  // in region 0 (of a; of b out of place)
  bool in_place = false;
  std::unique_ptr<Event> done;
  float* send(int copy) const { return a.as<float>() + static_cast<std::size_t>(copy) * a_stride + send_offset; }
  float* recv(int copy) const {
    return in_place ? a.as<float>() + static_cast<std::size_t>(copy) * a_stride + recv_offset
                    : b.as<float>() + static_cast<std::size_t>(copy) * b_stride + recv_offset;
  }
  ~GpuPart() { GPUCHECK_CUDA_NOEXCEPT(cudaSetDevice(device)); }

  void upload_period(const std::vector<float>& host) const {
    GPUCHECK_CUDA(cudaMemcpyAsync(period.get(), host.data(), kPeriod * sizeof(float), cudaMemcpyHostToDevice, stream));
    GPUCHECK_CUDA(cudaStreamSynchronize(stream));  // `host` may go away after this
  }
};

std::vector<float> pattern_period(int rank, int segment) {
  std::vector<float> v(kPeriod);
  for (std::size_t j = 0; j < kPeriod; ++j) v[j] = collective_pattern(rank, segment, j);
  return v;
}

// Regions start 4 KiB apart (whole pages, like separate allocations' alignment or better).
std::size_t region_stride(std::size_t elems) { return (elems + 1023) / 1024 * 1024; }

// One case's buffers on every local GPU; run() is one group call of the collective, on the
// next of `copies` regions of the buffers (collective_buffer_copies: no call finds its data
// in L2 from the one before, as in nccl-tests).
class CollectiveOp final : public harness::Op {
 public:
  CollectiveOp(NcclJob& job, const CollectiveCase& c, int copies)
      : job_(job), c_(c), k_(collective_counts(c.coll, c.bytes, sizeof(float), job.nranks())),
        enqueue_(enqueue_of(c.coll)), copies_(std::max(copies, 1)) {
    DeviceRestore restore;
    const std::size_t scratch = collective_verify_scratch_elems(k_);
    for (std::size_t i = 0; i < job.local_gpus(); ++i) {
      GPUCHECK_CUDA(cudaSetDevice(job.device(i)));
      auto g = std::make_unique<GpuPart>();
      g->device = job.device(i);
      g->rank = job.rank(i);
      g->stream = job.stream(i);
      g->comm = job.comm(i);
      const CollectivePlacement p = collective_placement(c.coll, k_, g->rank, c.in_place);
      g->a_stride = copies_ > 1 ? region_stride(p.a_elems) : p.a_elems;
      g->b_stride = copies_ > 1 ? region_stride(p.b_elems) : p.b_elems;
      g->a = DeviceBuffer(g->a_stride * static_cast<std::size_t>(copies_) * sizeof(float));
      g->b = DeviceBuffer(g->b_stride * static_cast<std::size_t>(copies_) * sizeof(float));
      g->send_offset = p.send_offset;
      g->recv_offset = p.recv_offset;
      g->in_place = c.in_place;
      g->period = DeviceBuffer(kPeriod * sizeof(float));
      g->want = DeviceBuffer((scratch - kPeriod) * sizeof(float));
      g->done = std::make_unique<Event>(cudaEventDisableTiming);
      fill_input(*g);
      parts_.push_back(std::move(g));
    }
  }

  // One collective on every local GPU, one group. An NCCL error is kept for the job's next
  // wait, which every rank reaches: all of them then leave the case together.
  void run(cudaStream_t /*first lane: every GPU's stream is used*/) override {
    if (job_.enqueue_error_pending()) return;
    last_ = next_;
    next_ = (next_ + 1) % copies_;
    ncclResult_t r = ncclGroupStart();
    if (r == ncclSuccess) {
      for (const auto& g : parts_) {
        r = enqueue_(g->send(last_), g->recv(last_), k_.count, g->comm, g->stream);
        if (r != ncclSuccess) break;
      }
      if (const ncclResult_t end = ncclGroupEnd(); r == ncclSuccess) r = end;
    }
    if (r != ncclSuccess)
      job_.note_enqueue_error(collective_variant(c_.coll, c_.in_place) + ": " + ncclGetErrorString(r) + " (" +
                              ncclGetLastError(nullptr) + ")");
  }

  // Correctness first: one call on fresh inputs, every output element checked.
  void verify() override {
    run_once();
    check("after the first call");
  }
  // Out of place (and all-gather in place) every call rewrites the same result: check again.
  void verify_after() override {
    if (collective_repeatable(c_.coll, c_.in_place)) check("after the timed calls");
  }

  std::string label() const override {
    std::string l = "mode=" + std::string(job_.mpi() ? "mpi" : "single-process") +
                    " count=" + std::to_string(k_.count) + " batch=" + std::to_string(batch_) +
                    " buffers=" + std::to_string(copies_);
    if (!collective_moves_data(c_.in_place, job_.nranks()))
      l += " (one rank in place: NCCL moves no data; launch cost only)";
    return l;
  }
  void add_counters(benchmark::State& state, const harness::Measurement& m) const override {
    state.counters[contract::counter::wrong] = 0;  // verify() and verify_after() threw otherwise
    state.counters[contract::counter::ranks] = job_.nranks();
    batch_ = m.sampled.batch;  // for label(), which the registry asks for next
  }

 private:
  // Segment s of the rank's input holds pattern(rank, s, .); everything else is poisoned
  // (NaN), so an element NCCL does not write counts as wrong. Every region of A is a copy
  // of the first.
  void fill_input(const GpuPart& g) const {
    if (g.a.bytes()) kernels::poison(g.a.get(), g.a.bytes(), g.stream);
    if (g.b.bytes()) kernels::poison(g.b.get(), g.b.bytes(), g.stream);
    const std::size_t seg = k_.send_segment_elems();
    for (int s = 0; s < k_.send_segments; ++s) {
      g.upload_period(pattern_period(g.rank, s));
      tile(g.send(0) + static_cast<std::size_t>(s) * seg, seg, g.period.as<float>(), g.stream);
    }
    for (int i = 1; i < copies_; ++i)
      GPUCHECK_CUDA(cudaMemcpyAsync(g.a.as<float>() + static_cast<std::size_t>(i) * g.a_stride, g.a.get(),
                                    g.a_stride * sizeof(float), cudaMemcpyDeviceToDevice, g.stream));
    GPUCHECK_CUDA(cudaStreamSynchronize(g.stream));
  }

  void run_once() {
    run(nullptr);
    std::vector<cudaEvent_t> done;
    try {
      DeviceRestore restore;
      for (const auto& g : parts_) {
        GPUCHECK_CUDA(cudaSetDevice(g->device));
        g->done->record(g->stream);
        done.push_back(g->done->get());
      }
    } catch (const std::exception& e) {
      job_.note_enqueue_error(e.what());  // reported by the wait below, on every rank
    }
    job_.wait(done);
  }

  // Wrong elements among `n` outputs at `got` against an expected period (on the device).
  static std::uint64_t count_wrong(const GpuPart& g, const float* got, std::size_t n, const std::vector<float>& expect) {
    g.upload_period(expect);
    const std::size_t tile_n = std::min(n, g.want.bytes() / sizeof(float));  // whole periods when < n
    tile(g.want.as<float>(), tile_n, g.period.as<float>(), g.stream);
    std::uint64_t wrong = 0;
    for (std::size_t off = 0; off < n; off += tile_n) {
      const std::size_t len = std::min(tile_n, n - off);
      const kernels::DiffStats d = kernels::compare_arrays(got + off, g.want.get(), len, DType::fp32, 0.0, 0.0, g.stream);
      wrong += d.mismatches + d.nonfinite;
    }
    return wrong;
  }

  void check(const char* when) {
    std::uint64_t wrong = 0;
    job_.agreed("verification", [&] {
      DeviceRestore restore;
      const std::size_t seg = k_.recv_segment_elems();
      for (const auto& g : parts_) {
        GPUCHECK_CUDA(cudaSetDevice(g->device));
        for (int s = 0; s < k_.recv_segments; ++s)
          wrong += count_wrong(*g, g->recv(last_) + static_cast<std::size_t>(s) * seg, seg,
                               collective_expected_period(c_.coll, g->rank, s, job_.nranks()));
      }
    });
    wrong = job_.sum(wrong);
    if (wrong == 0) return;
    const std::uint64_t outputs = static_cast<std::uint64_t>(k_.recv_elems) * static_cast<std::uint64_t>(job_.nranks());
    throw VerificationError(collective_case_name(c_.coll, c_.in_place, DType::fp32, c_.bytes, job_.nranks()) + ": " +
                            std::to_string(wrong) + " of " + std::to_string(outputs) + " output elements wrong " + when);
  }

  DeviceRestore restore_;  // first: the device is restored after every part is freed
  NcclJob& job_;
  CollectiveCase c_;
  CollectiveCounts k_;
  Enqueue enqueue_;
  std::vector<std::unique_ptr<GpuPart>> parts_;
  int copies_ = 1;
  int next_ = 0;  // the region the next call uses
  int last_ = 0;  // the region the last call used: what check() reads
  mutable int batch_ = 0;
};

std::string mib(std::uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

// How each case is measured: like nccl-tests with several ranks, device time alone (core).
harness::MeasureOptions measure_for(const CollectiveCase& c, const harness::Registry& r, NcclJob& job) {
  harness::MeasureOptions o = r.defaults();
  const CollectiveTiming t = collective_timing(c, job.nranks(), o.plan);
  o.mode = t.mode;
  o.plan = t.plan;
  if (!job.failed()) o.lanes = job.lanes();
  o.agree = job.agreement();
  o.wait = job.waiter();
  o.graph = t.graph;  // one rank's short calls (core: kCollectiveGraphMaxBytes)
  return o;
}

void register_cases(harness::Registry& r, NcclJob& job) {
  harness::record_nccl_version();
  for (const CollectiveSpec& row : collective_table()) enqueue_of(row.id);  // every row has its NCCL call
  job.start();
  for (const auto& [key, value] : job.context()) benchmark::AddCustomContext(key, value);

  // The same case list on every rank: the least free memory over all of them decides.
  const int n = job.nranks();
  const std::uint64_t free_b = job.failed() ? 0 : job.least_free_memory();
  const std::uint64_t budget = collective_memory_budget(free_b);
  // Several ranks: nccl-tests' cold buffers (one region per call), unless --fixed-buffers.
  const bool rotate = n > 1 && !job.fixed_buffers() && !job.failed();
  const std::uint64_t l2 = rotate ? job.largest_l2_bytes() : 0;  // one agreement, not one per case
  for (const nccl::Case& nc : nccl::cases(r.device().suite(), r.points(), n)) {
    const CollectiveCase& c = nc.c;
    const std::string name = nc.name();
    if (nc.ranks != n) {
      r.add_unsupported(name, "this job has " + std::to_string(n) + " rank" + (n == 1 ? "" : "s") +
                                  " (every visible GPU, or one per MPI process: CUDA_VISIBLE_DEVICES or mpirun -np picks)");
      continue;
    }
    const CollectiveCounts k = collective_counts(c.coll, c.bytes, sizeof(float), n);
    if (!k.runnable()) {
      r.add_unsupported(name, bytes_label(c.bytes) + " of fp32 is fewer elements than ranks (" + std::to_string(n) + ")");
      continue;
    }
    const std::uint64_t need = collective_case_bytes(c.coll, c.in_place, c.bytes, sizeof(float), n);
    if (!job.failed() && need > budget) {
      r.add_unsupported(name, "needs " + mib(need) + " per GPU, " + mib(free_b) +
                                  " free (a case may use 90% of it less 2 GiB kept for NCCL)");
      continue;
    }
    const int copies = rotate ? collective_buffer_copies(need, l2, budget - need) : 1;
    harness::Case hc;
    hc.name = name;
    const auto bytes = static_cast<double>(k.bytes);
    hc.rates = {{contract::counter::algbw_GBps, bytes, 1e9}, {contract::counter::busbw_GBps, bytes * busbw_factor(c.coll, n), 1e9}};
    hc.measure = measure_for(c, r, job);
    hc.method = collective_timing(c, n, hc.measure.plan).method;
    hc.setup = [&job, c, copies]() -> std::unique_ptr<harness::Op> {
      job.throw_if_failed();  // set-up failed, or a watchdog aborted the communicators
      std::unique_ptr<harness::Op> op;
      job.agreed("set-up", [&] { op = std::make_unique<CollectiveOp>(job, c, copies); });
      return op;
    };
    r.add(std::move(hc));
  }
}

}  // namespace

harness::Family harness::family() {
  // Held by the Family's functions, so it outlives run_family: communicators and MPI end
  // after the last case, when main() drops the Family.
  auto job = std::make_shared<NcclJob>();
  Family f;
  f.model = nccl::model();
  f.register_cases = [job](Registry& r) { register_cases(r, *job); };
  f.take_args = [job](int* c, char** v, std::string* err) { return job->take_args(c, v, err); };
  f.prints = [job] { return job->root(); };
  f.options = {"--mpi", "--fixed-buffers"};
  f.summary = "bench_nccl: NCCL all-reduce, all-gather and reduce-scatter over every GPU of the job, algbw and busbw "
              "like nccl-tests (busbw 0 for one rank), every result checked (#wrong = 0).";
  f.list = [](Suite s, const std::vector<axes::Point>* p, const axes::DeviceFacts& d) {
    return listed(nccl::cases(s, p, d.gpus));  // the job's ranks: the GPUs seen (an MPI job lists one process's view)
  };
  f.own_help =
      "bench_nccl flags:\n"
      "  -b MIN -e MAX -f F  nccl-tests' sizes: the bytes axis MIN, MIN*F, ... up to MAX (8, 4K, 1M, 8G)\n"
      "  --mpi               one process per GPU under mpirun (also GPUCHECK_MPI=1; needs an MPI build)\n"
      "  --fixed-buffers     one buffer per case with several ranks, instead of nccl-tests' rotated cold buffers\n"
      "Environment: GPUCHECK_MPI=1 (as --mpi), GPUCHECK_NCCL_TIMEOUT_S=N (a hung collective is an error after N s),\n"
      "  NCCL_* (recorded in the context; see docs/MULTI_GPU.md).\n"
      "Examples:\n"
      "  bench_nccl -b 8 -e 8G -f 2 -a collective=allreduce --benchmark_out=ar.json\n"
      "  mpirun -np 8 bench_nccl --mpi -a 'bytes[pow2]=[20:30]' -a in_place=false,true\n";
  return f;
}

}  // namespace gpucheck
