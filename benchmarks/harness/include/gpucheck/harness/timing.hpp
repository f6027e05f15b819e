// The one place GPU work is timed. A benchmark hands over a callable that enqueues the work
// on a stream; the harness warms it up, optionally flushes L2 before each sample, holds the
// stream with a spin kernel until the work is queued (host launch latency stays out), times
// with CUDA events, and feeds Google Benchmark's manual time.
#pragma once
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace gpucheck::harness {

struct TimingOptions {
  // Evict L2 before every sample (cold data). Forces one call per sample.
  bool flush_l2 = false;
  // Calls shorter than this are batched so that one sample spans at least this long.
  double min_sample_ms = 0.5;
  // Upper bound on calls per sample (keeps the queued launches far below the queue depth).
  int max_batch = 64;
  // Warm-up: at least this many calls and this long.
  int warmup_calls = 3;
  double warmup_ms = 50;
};

struct Timing {
  std::int64_t calls = 0;   // timed calls in all
  int batch = 1;            // calls per sample
  double mean_s = 0;        // per call: what Google Benchmark reports as real_time
  double median_s = 0;      // per call, median over samples
  double min_s = 0;
  std::vector<double> samples_s;  // per-call time of each sample
  // Read from the driver while the timed work ran (at samples 1, 2, 4, 8, ...; the last read
  // kept): a GEMM at full power can lose clock within a second, and this says so.
  std::optional<unsigned> sm_clock_MHz;
  std::optional<std::uint64_t> clock_event_reasons;
};

using Work = std::function<void(cudaStream_t)>;

// Times `work` on the device's stream. Throws GpuError on any CUDA failure. Sets the counters
// `sm_clock_MHz` (clock while the work ran) and `throttled` (1 when the driver reported a
// power or thermal slowdown then) where the driver tells.
Timing time_on_stream(benchmark::State& state, const Work& work, const TimingOptions& opt = {});

// Rates per call, from the mean (consistent with real_time in the JSON).
inline double tflops(double flops_per_call, const Timing& t) { return flops_per_call / t.mean_s / 1e12; }
inline double gbps(double bytes_per_call, const Timing& t) { return bytes_per_call / t.mean_s / 1e9; }

}  // namespace gpucheck::harness
