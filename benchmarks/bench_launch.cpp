// bench_launch: launch overhead, counter us_per_launch on every case.
//   eager/{empty,small}/N   N back-to-back launches on the stream; CUDA events around the whole
//                           chain, no synchronisation inside it; us_per_launch = chain / N.
//   graph/{empty,small}/N   the same N launches captured once into a CUDA Graph, replayed with
//                           one cudaGraphLaunch between the events; us_per_launch = chain / N.
//   eager_held/{empty,small}/N   the eager chain queued whole behind the harness's hold (a spin
//                           kernel the host releases once the chain and the stop event are
//                           queued), events around it: the GPU's own cost of N individually
//                           submitted kernels, with the host's launch time taken out. Device
//                           time, so it holds still where the host figures move between
//                           processes (docs/GATE.md); us_per_launch = chain / N.
//   host_launch/{empty,small}/1      host time of one cudaLaunchKernel (steady_clock around 100
//                           async launches, no sync inside, then sync); us_per_launch = that.
//   host_graph_launch/empty/N        host time of one cudaGraphLaunch of an N-node graph (10
//                           launches per sample); us_per_launch = µs per cudaGraphLaunch call.
//   graph_instantiate/empty/N        cudaGraphInstantiate of an N-node graph (one per sample,
//                           destroyed between samples); us_per_launch = instantiate time / N
//                           (per node), counter us_total = the whole call.
// The host-timed cases take many samples (at least 100) and report the median: one sample in
// a few lands on a host hiccup (scheduling, page faults in the driver), which moves a mean by
// tens of percent; the median does not move with them.
// How to read the GPU-side figures: the stream is NOT held by the harness's spin kernel for
// eager and graph (eager_held is the held counterpart).
// A held stream would let the host queue the whole chain first and then show only the GPU's
// drain rate, hiding the cost eager launching really has. Unheld, the start event fires as soon
// as the idle GPU reaches it and the kernels run as the host issues them, so eager
// us_per_launch ~ max(kernel time + inter-kernel gap, host time per launch) plus, spread over
// N, the latency of the first launch (dominant at N = 1, negligible at N = 1000). The graph
// figure is the GPU's per-node cost plus one graph launch's latency spread over N. This is the
// method of PyTorch's anchors (events around x.add_(1) x 100 and around g.replay()).
// The small kernel (one block of 256 threads adding 1 to 1024 uint32 = 4 KiB) is checked: after
// a chain (or a replay) every element equals N, and after the timed chains, chains x N.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cases/launch.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/launch_model.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/graph.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/memory.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/kernels/launch.cuh"

namespace gpucheck {
namespace {

using launch::Kernel;
using launch::kGraphLaunchesPerSample;
using launch::kHostLaunchesPerSample;

constexpr int kSmallElems = 1024;            // 4 KiB of uint32

using harness::Graph;
using harness::GraphExec;

// The launches of one case, on stream s; counter is the small kernel's array.
class Chain {
 public:
  Chain(Kernel k, std::int64_t n) : kernel_(k), n_(n), counter_(sizeof(std::uint32_t) * kSmallElems) {}

  // n launches, each return code checked (a compare per launch; no cudaGetLastError).
  void enqueue(cudaStream_t s) const {
    for (std::int64_t i = 0; i < n_; ++i) GPUCHECK_CUDA(launch_one(s));
  }
  cudaError_t launch_one(cudaStream_t s) const {
    return kernel_ == Kernel::empty ? kernels::launch_empty(s)
                                    : kernels::launch_add_one(counter_.as<std::uint32_t>(), kSmallElems, s);
  }

  // Captures the chain into `g` (stream s idle) and checks it has n kernel nodes.
  void capture(cudaStream_t s, Graph& g) const {
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    GPUCHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    cudaError_t launch_status = cudaSuccess;
    for (std::int64_t i = 0; i < n_ && launch_status == cudaSuccess; ++i) launch_status = launch_one(s);
    const cudaError_t end_status = cudaStreamEndCapture(s, g.out());  // always end the capture
    GPUCHECK_CUDA(launch_status);
    GPUCHECK_CUDA(end_status);
    std::size_t nodes = 0;
    GPUCHECK_CUDA(cudaGraphGetNodes(g.get(), nullptr, &nodes));
    if (static_cast<std::int64_t>(nodes) != n_)
      throw VerificationError("captured graph has " + std::to_string(nodes) + " nodes, expected " +
                              std::to_string(n_));
  }

  void reset_counter(cudaStream_t s) const {
    GPUCHECK_CUDA(cudaMemsetAsync(counter_.get(), 0, counter_.bytes(), s));
  }
  // Every element must equal `want` (synchronous).
  void check_counter(std::uint32_t want, const std::string& what, cudaStream_t s) const {
    if (kernel_ != Kernel::small) return;
    std::vector<std::uint32_t> host(kSmallElems);
    GPUCHECK_CUDA(cudaMemcpyAsync(host.data(), counter_.get(), counter_.bytes(), cudaMemcpyDeviceToHost, s));
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    const auto bad = std::count_if(host.begin(), host.end(), [&](std::uint32_t v) { return v != want; });
    if (bad != 0)
      throw VerificationError(what + ": " + std::to_string(bad) + " of " + std::to_string(kSmallElems) +
                              " counters differ from " + std::to_string(want) + " (element 0 reads " +
                              std::to_string(host[0]) + ")");
  }

  std::int64_t n() const { return n_; }

 private:
  Kernel kernel_;
  std::int64_t n_;
  harness::DeviceBuffer counter_;
};

// What every launch case shares: a chain (and its graph where the mode uses one), the count
// of calls since the counter was reset (so the counter can be checked after timing too), and
// how a per-call time becomes us_per_launch.
class LaunchOp : public harness::Op {
 public:
  LaunchOp(std::string name, Kernel k, std::int64_t n, harness::Device& dev, std::int64_t launches_per_call,
           std::int64_t per_launch_divisor)
      : dev_(dev), chain_(k, n), name_(std::move(name)), launches_per_call_(launches_per_call),
        divisor_(per_launch_divisor) {}

  // One call from zero leaves every counter at its launches; then counting starts afresh.
  void verify() override {
    cudaStream_t s = dev_.stream();
    chain_.reset_counter(s);
    run(s);
    chain_.check_counter(expected_counter(1, static_cast<std::uint64_t>(launches_per_call_)), name_, s);
    chain_.reset_counter(s);
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    calls_ = 0;
  }
  void verify_after() override {
    chain_.check_counter(expected_counter(calls_, static_cast<std::uint64_t>(launches_per_call_)),
                         name_ + " (after the timed calls)", dev_.stream());
  }
  void add_counters(benchmark::State& state, const harness::Measurement& m) const override {
    const double us = us_per_launch(m.per_call_s, divisor_);
    if (!(us > 0)) throw GpuError(name_ + ": us_per_launch is not positive");
    state.counters[contract::counter::us_per_launch] = us;
  }

 protected:
  harness::Device& dev_;
  Chain chain_;
  std::uint64_t calls_ = 0;

 private:
  std::string name_;
  std::int64_t launches_per_call_, divisor_;
};

// eager: the chain launched kernel by kernel; graph: captured once, one cudaGraphLaunch.
// Timed per call (events around the chain; the stream held for eager_held only): see the top
// of the file.
class ChainOp final : public LaunchOp {
 public:
  ChainOp(std::string name, Kernel k, std::int64_t n, harness::Device& dev, bool as_graph, bool held = false)
      : LaunchOp(std::move(name), k, n, dev, n, n), as_graph_(as_graph), held_(held) {
    if (as_graph_) {
      chain_.capture(dev_.stream(), graph_);
      GPUCHECK_CUDA(cudaGraphInstantiateWithFlags(exec_.out(), graph_.get(), 0));
      GPUCHECK_CUDA(cudaGraphUpload(exec_.get(), dev_.stream()));
    }
  }
  void run(cudaStream_t s) override {
    if (as_graph_) GPUCHECK_CUDA(cudaGraphLaunch(exec_.get(), s));
    else chain_.enqueue(s);
    ++calls_;
  }
  std::string label() const override {
    if (held_) return "events around the chain, queued behind the hold: the GPU's cost per kernel";
    return as_graph_ ? "events around one cudaGraphLaunch, stream not held" : "events around the chain, stream not held";
  }

 private:
  bool as_graph_, held_;
  Graph graph_;
  GraphExec exec_;
};

// Host cost of one cudaLaunchKernel of the empty kernel.
class HostLaunchOp final : public LaunchOp {
 public:
  HostLaunchOp(std::string name, harness::Device& dev) : LaunchOp(std::move(name), Kernel::empty, 1, dev, 1, 1) {}
  void run(cudaStream_t s) override {
    static const dim3 one(1);
    GPUCHECK_CUDA(cudaLaunchKernel(kernels::empty_kernel_fn(), one, one, nullptr, 0, s));
    ++calls_;
  }
  std::string label() const override {
    return "steady_clock over " + std::to_string(kHostLaunchesPerSample) + " async cudaLaunchKernel calls";
  }
};

// Host cost of one cudaGraphLaunch of an N-node graph (us_per_launch is per call, not per node).
class HostGraphLaunchOp final : public LaunchOp {
 public:
  HostGraphLaunchOp(std::string name, std::int64_t n, harness::Device& dev)
      : LaunchOp(std::move(name), Kernel::empty, n, dev, n, 1), n_(n) {
    chain_.capture(dev_.stream(), graph_);
    GPUCHECK_CUDA(cudaGraphInstantiateWithFlags(exec_.out(), graph_.get(), 0));
    GPUCHECK_CUDA(cudaGraphUpload(exec_.get(), dev_.stream()));
  }
  void run(cudaStream_t s) override {
    GPUCHECK_CUDA(cudaGraphLaunch(exec_.get(), s));
    ++calls_;
  }
  void add_counters(benchmark::State& state, const harness::Measurement& m) const override {
    LaunchOp::add_counters(state, m);
    state.counters[contract::counter::us_per_node] = m.per_call_s * 1e6 / static_cast<double>(n_);
  }
  std::string label() const override {
    return "steady_clock over " + std::to_string(kGraphLaunchesPerSample) +
           " async cudaGraphLaunch calls; us_per_launch is per call";
  }

 private:
  std::int64_t n_;
  Graph graph_;
  GraphExec exec_;
};

// cudaGraphInstantiate of an N-node graph (captured once); each sample's executable graph is
// destroyed between samples, outside the timed region.
class InstantiateOp final : public LaunchOp {
 public:
  InstantiateOp(std::string name, std::int64_t n, harness::Device& dev)
      : LaunchOp(std::move(name), Kernel::empty, n, dev, 0, n) {
    chain_.capture(dev_.stream(), graph_);
  }
  void verify() override {
    GraphExec e;
    GPUCHECK_CUDA(cudaGraphInstantiateWithFlags(e.out(), graph_.get(), 0));
    if (!e.get()) throw VerificationError("cudaGraphInstantiate returned no executable graph");
  }
  void verify_after() override {}
  void run(cudaStream_t) override {
    execs_.emplace_back();
    GPUCHECK_CUDA(cudaGraphInstantiateWithFlags(execs_.back().out(), graph_.get(), 0));
  }
  void between_samples() override { execs_.clear(); }
  void add_counters(benchmark::State& state, const harness::Measurement& m) const override {
    LaunchOp::add_counters(state, m);  // per node
    state.counters[contract::counter::us_total] = m.per_call_s * 1e6;
  }
  std::string label() const override { return "us_per_launch = instantiate time per node"; }

 private:
  Graph graph_;
  std::vector<GraphExec> execs_;
};

// A mode's op (benchmarks/cases/launch.hpp holds the table), by its name.
std::unique_ptr<harness::Op> make(std::string_view mode, const std::string& n, Kernel k, std::int64_t len,
                                  harness::Device& d) {
  namespace seg = contract::segment;
  if (mode == seg::eager) return std::make_unique<ChainOp>(n, k, len, d, false);
  if (mode == seg::graph) return std::make_unique<ChainOp>(n, k, len, d, true);
  if (mode == "eager_held") return std::make_unique<ChainOp>(n, k, len, d, false, true);
  if (mode == "host_launch") return std::make_unique<HostLaunchOp>(n, d);
  if (mode == "host_graph_launch") return std::make_unique<HostGraphLaunchOp>(n, len, d);
  return std::make_unique<InstantiateOp>(n, len, d);
}

void register_cases(harness::Registry& r) {
  harness::Device& dev = r.device();
  for (const launch::Case& row : launch::cases(dev.suite(), r.points())) {
    if (const auto why = row.unrunnable()) {
      r.add_unsupported(row.name(), *why);
      continue;
    }
    harness::Case c;
    c.name = row.name();
    c.measure = r.defaults();
    c.measure.mode = row.mode->timing;
    if (row.mode->batch > 0) c.measure.plan.min_batch = c.measure.plan.max_batch = row.mode->batch;
    if (row.mode->timing == TimingMode::host) {
      // A robust figure for host time: many samples and their median (see the top of the file).
      c.measure.plan.stop.min_samples = 100;
    }
    c.setup = [mode = row.mode, name = c.name, k = row.kernel, n = row.n, &dev] { return make(mode->name, name, k, n, dev); };
    r.add(std::move(c));
  }
}

}  // namespace

harness::Family harness::family() {
  Family f;
  f.model = launch::model();
  f.register_cases = register_cases;
  f.summary = "bench_launch: the cost of launching (us per kernel): a chain of kernels launched eagerly against the "
              "same chain replayed as a CUDA Graph, the eager chain's GPU side (queued behind a hold), and the host's time in cudaLaunchKernel, cudaGraphLaunch and "
              "cudaGraphInstantiate.";
  f.list = [](Suite s, const std::vector<axes::Point>* p, const axes::DeviceFacts&) {
    return listed(launch::cases(s, p));
  };
  f.own_help =
      "Examples:\n"
      "  bench_launch -a length=1,10,100,1000,10000 -a kernel=empty --list\n"
      "  bench_launch -a mode=graph_instantiate,host_graph_launch -a kernel=empty -a length=2^[0:12:4]\n";
  return f;
}

}  // namespace gpucheck
