// bench_launch: launch overhead, counter us_per_launch on every case.
//   eager/{empty,small}/N   N back-to-back launches on the stream; CUDA events around the whole
//                           chain, no synchronisation inside it; us_per_launch = chain / N.
//   graph/{empty,small}/N   the same N launches captured once into a CUDA Graph, replayed with
//                           one cudaGraphLaunch between the events; us_per_launch = chain / N.
//   host_launch/{empty,small}/1      host time of one cudaLaunchKernel (steady_clock around 100
//                           async launches, no sync inside, then sync); us_per_launch = that.
//   host_graph_launch/empty/N        host time of one cudaGraphLaunch of an N-node graph (10
//                           launches per sample); us_per_launch = µs per cudaGraphLaunch call.
//   graph_instantiate/empty/N        cudaGraphInstantiate of an N-node graph; us_per_launch =
//                           instantiate time / N (per node), counter us_total = the whole call.
// How to read the GPU-side figures: the stream is NOT held by the harness's spin kernel here.
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
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpucheck/core/launch_model.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/memory.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/harness/timing.hpp"
#include "gpucheck/kernels/launch.cuh"

namespace gpucheck {
namespace {

using Clock = std::chrono::steady_clock;

enum class Mode { eager, graph, host_launch, host_graph_launch, graph_instantiate };
enum class Kernel { empty, small };

constexpr int kSmallElems = 1024;          // 4 KiB of uint32
constexpr int kHostLaunchesPerSample = 100;  // far below the launch queue's depth
constexpr int kGraphLaunchesPerSample = 10;

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::eager: return "eager";
    case Mode::graph: return "graph";
    case Mode::host_launch: return "host_launch";
    case Mode::host_graph_launch: return "host_graph_launch";
    case Mode::graph_instantiate: return "graph_instantiate";
  }
  return "unknown";
}

struct LaunchCase {
  Mode mode;
  Kernel kernel;
  std::int64_t n;  // chain length / graph nodes (1 for host_launch)
  std::string name() const {
    return bench_name({"launch", mode_name(mode), kernel == Kernel::empty ? "empty" : "small", std::to_string(n)});
  }
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    if (g_) GPUCHECK_CUDA_NOEXCEPT(cudaGraphDestroy(g_));
  }
  cudaGraph_t* out() { return &g_; }
  cudaGraph_t get() const { return g_; }

 private:
  cudaGraph_t g_ = nullptr;
};

class GraphExec {
 public:
  GraphExec() = default;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec() { reset(); }
  void reset() noexcept {
    if (e_) GPUCHECK_CUDA_NOEXCEPT(cudaGraphExecDestroy(e_));
    e_ = nullptr;
  }
  cudaGraphExec_t* out() { return &e_; }
  cudaGraphExec_t get() const { return e_; }

 private:
  cudaGraphExec_t e_ = nullptr;
};

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

void warm_up(const std::function<void()>& once, cudaStream_t s) {
  const auto t0 = Clock::now();
  for (int i = 0;; ++i) {
    once();
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    if (i + 1 >= 3 && std::chrono::duration<double, std::milli>(Clock::now() - t0).count() >= 20) break;
  }
}

void set_per_launch(benchmark::State& state, double total_s, std::int64_t samples, std::int64_t per_sample,
                    const std::string& name) {
  if (samples <= 0) throw GpuError(name + ": no iterations were run");
  const double us = us_per_launch(total_s / static_cast<double>(samples), per_sample);
  if (!(us > 0)) throw GpuError(name + ": us_per_launch is not positive");
  state.counters["us_per_launch"] = us;
}

// GPU-side time of chains (eager) or replays (graph): events around each, stream not held.
void gpu_chain(benchmark::State& state, const LaunchCase& c) {
  cudaStream_t s = harness::Device::get().stream();
  Chain chain(c.kernel, c.n);
  Graph graph;
  GraphExec exec;
  const bool as_graph = c.mode == Mode::graph;
  if (as_graph) {
    chain.capture(s, graph);
    GPUCHECK_CUDA(cudaGraphInstantiateWithFlags(exec.out(), graph.get(), 0));
    GPUCHECK_CUDA(cudaGraphUpload(exec.get(), s));
  }
  const auto once = [&] {
    if (as_graph) GPUCHECK_CUDA(cudaGraphLaunch(exec.get(), s));
    else chain.enqueue(s);
  };
  // Correctness first: one chain from zero leaves every counter at N.
  chain.reset_counter(s);
  once();
  chain.check_counter(expected_counter(1, static_cast<std::uint64_t>(c.n)), c.name(), s);

  warm_up(once, s);
  chain.reset_counter(s);
  GPUCHECK_CUDA(cudaStreamSynchronize(s));
  harness::Event start, stop;
  double total = 0;
  std::int64_t chains = 0;
  for ([[maybe_unused]] auto _ : state) {
    start.record(s);
    once();
    stop.record(s);
    const double sec = stop.elapsed_ms_since(start) / 1e3;  // waits for stop, outside the chain
    state.SetIterationTime(sec);
    total += sec;
    ++chains;
  }
  chain.check_counter(expected_counter(static_cast<std::uint64_t>(chains), static_cast<std::uint64_t>(c.n)),
                      c.name() + " (after the timed chains)", s);
  set_per_launch(state, total, chains, c.n, c.name());
  state.SetLabel(as_graph ? "events around one cudaGraphLaunch, stream not held"
                          : "events around the chain, stream not held");
}

// Host-side cost per call: warms up, then times `batch` (calls_per_sample async calls) with
// steady_clock, syncing after the clock stops; sets us_per_launch per call.
void time_host_calls(benchmark::State& state, const std::function<void()>& batch, int calls_per_sample,
                     cudaStream_t s, const std::string& name) {
  warm_up(batch, s);
  double total = 0;
  std::int64_t samples = 0;
  for ([[maybe_unused]] auto _ : state) {
    const auto t0 = Clock::now();
    batch();
    const auto t1 = Clock::now();
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    const double per_call = std::chrono::duration<double>(t1 - t0).count() / calls_per_sample;
    state.SetIterationTime(per_call);
    total += per_call;
    ++samples;
  }
  set_per_launch(state, total, samples, 1, name);
}

// Host-side cost of one cudaLaunchKernel: steady_clock around 100 async launches (no sync
// inside), then a sync outside the timed region.
void host_launch(benchmark::State& state, const LaunchCase& c) {
  cudaStream_t s = harness::Device::get().stream();
  const void* fn = kernels::empty_kernel_fn();  // no parameters: kernelParams may be null
  const dim3 one(1);
  const auto batch = [&] {
    for (int i = 0; i < kHostLaunchesPerSample; ++i) GPUCHECK_CUDA(cudaLaunchKernel(fn, one, one, nullptr, 0, s));
  };
  time_host_calls(state, batch, kHostLaunchesPerSample, s, c.name());
  state.SetLabel("steady_clock over " + std::to_string(kHostLaunchesPerSample) + " async cudaLaunchKernel calls");
}

// Host-side cost of one cudaGraphLaunch of an N-node graph.
void host_graph_launch(benchmark::State& state, const LaunchCase& c) {
  cudaStream_t s = harness::Device::get().stream();
  Chain chain(c.kernel, c.n);
  Graph graph;
  GraphExec exec;
  chain.capture(s, graph);
  GPUCHECK_CUDA(cudaGraphInstantiateWithFlags(exec.out(), graph.get(), 0));
  GPUCHECK_CUDA(cudaGraphUpload(exec.get(), s));
  const auto batch = [&] {
    for (int i = 0; i < kGraphLaunchesPerSample; ++i) GPUCHECK_CUDA(cudaGraphLaunch(exec.get(), s));
  };
  chain.reset_counter(s);
  batch();
  chain.check_counter(expected_counter(kGraphLaunchesPerSample, static_cast<std::uint64_t>(c.n)), c.name(), s);
  time_host_calls(state, batch, kGraphLaunchesPerSample, s, c.name());  // per cudaGraphLaunch call, not per node
  state.counters["us_per_node"] = state.counters["us_per_launch"].value / static_cast<double>(c.n);
  state.SetLabel("steady_clock over " + std::to_string(kGraphLaunchesPerSample) +
                 " async cudaGraphLaunch calls; us_per_launch is per call");
}

// cudaGraphInstantiate of an N-node graph (captured once); destroy outside the timed region.
void graph_instantiate(benchmark::State& state, const LaunchCase& c) {
  cudaStream_t s = harness::Device::get().stream();
  Chain chain(c.kernel, c.n);
  Graph graph;
  chain.capture(s, graph);
  GraphExec exec;
  for (int i = 0; i < 3; ++i) {  // warm-up
    GPUCHECK_CUDA(cudaGraphInstantiateWithFlags(exec.out(), graph.get(), 0));
    exec.reset();
  }
  double total = 0;
  std::int64_t samples = 0;
  for ([[maybe_unused]] auto _ : state) {
    const auto t0 = Clock::now();
    const cudaError_t st = cudaGraphInstantiateWithFlags(exec.out(), graph.get(), 0);
    const auto t1 = Clock::now();
    GPUCHECK_CUDA(st);
    exec.reset();
    const double sec = std::chrono::duration<double>(t1 - t0).count();
    state.SetIterationTime(sec);
    total += sec;
    ++samples;
  }
  set_per_launch(state, total, samples, c.n, c.name());  // per node
  state.counters["us_total"] = total / static_cast<double>(samples) * 1e6;
  state.SetLabel("us_per_launch = instantiate time per node");
}

void run_case(benchmark::State& state, const LaunchCase& c) {
  switch (c.mode) {
    case Mode::eager:
    case Mode::graph: gpu_chain(state, c); return;
    case Mode::host_launch: host_launch(state, c); return;
    case Mode::host_graph_launch: host_graph_launch(state, c); return;
    case Mode::graph_instantiate: graph_instantiate(state, c); return;
  }
}

}  // namespace

void harness::register_benchmarks(Device& device) {
  std::vector<LaunchCase> cases;
  const std::vector<std::int64_t> ns = device.full() ? std::vector<std::int64_t>{1, 10, 100, 1000}
                                                     : std::vector<std::int64_t>{100};
  for (std::int64_t n : ns)
    for (Mode m : {Mode::eager, Mode::graph})
      for (Kernel k : {Kernel::empty, Kernel::small}) cases.push_back({m, k, n});
  cases.push_back({Mode::host_launch, Kernel::empty, 1});
  for (std::int64_t n : ns) cases.push_back({Mode::host_graph_launch, Kernel::empty, n});
  for (std::int64_t n : ns) cases.push_back({Mode::graph_instantiate, Kernel::empty, n});
  for (const LaunchCase& c : cases) {
    benchmark::internal::Benchmark* b = register_case(c.name(), [c](benchmark::State& s) { run_case(s, c); });
    // Fixed sample counts: Google Benchmark's min_time counts manual time only, so a case whose
    // figure is far below its wall time per iteration (host-side, per-launch) would run for
    // minutes; these keep every case to well under a second.
    b->Iterations(launch_chain_iterations(c.n));
  }
}

}  // namespace gpucheck
