#include "gpucheck/harness/timing.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/memory.hpp"
#include "gpucheck/kernels/spin.cuh"

namespace gpucheck::harness {
namespace {
constexpr unsigned long long kSpinTimeoutNs = 2'000'000'000ull;  // 2 s: a stuck host, not work

void set_flag(volatile int* f, int v) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *f = v;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
}  // namespace

Timing time_on_stream(benchmark::State& state, const Work& work, const TimingOptions& opt) {
  Device& dev = Device::get();
  const cudaStream_t s = dev.stream();
  Event start, stop;

  // Warm-up: module load, handle and workspace set-up, clocks ramping up.
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    work(s);
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i + 1 >= opt.warmup_calls && ms >= opt.warmup_ms) break;
  }

  // One timed call decides the batch.
  start.record(s);
  work(s);
  stop.record(s);
  const double one_ms = stop.elapsed_ms_since(start);
  int batch = 1;
  if (!opt.flush_l2 && one_ms > 0 && one_ms < opt.min_sample_ms)
    batch = std::clamp(static_cast<int>(std::ceil(opt.min_sample_ms / one_ms)), 1, opt.max_batch);

  Timing t;
  t.batch = batch;
  double total_s = 0;
  GPUCHECK_CUDA(cudaMemsetAsync(dev.spin_timed_out(), 0, sizeof(int), s));
  while (state.KeepRunningBatch(batch)) {
    if (opt.flush_l2) dev.flush_l2(s);
    set_flag(dev.host_flag(), 0);
    kernels::spin_until_flag(dev.device_view_of_flag(), dev.spin_timed_out(), kSpinTimeoutNs, s);
    start.record(s);
    for (int b = 0; b < batch; ++b) work(s);
    stop.record(s);
    set_flag(dev.host_flag(), 1);
    if (const std::size_t k = t.samples_s.size() + 1; (k & (k - 1)) == 0) {  // 1, 2, 4, 8, ...
      const Telemetry now = dev.refresh_telemetry();
      if (now.sm_clock_MHz) t.sm_clock_MHz = now.sm_clock_MHz;
      if (now.clock_event_reasons) t.clock_event_reasons = now.clock_event_reasons;
    }
    const double sample_s = stop.elapsed_ms_since(start) / 1e3;
    state.SetIterationTime(sample_s);
    total_s += sample_s;
    t.calls += batch;
    t.samples_s.push_back(sample_s / batch);
  }
  int timed_out = 0;
  GPUCHECK_CUDA(cudaMemcpyAsync(&timed_out, dev.spin_timed_out(), sizeof(int), cudaMemcpyDeviceToHost, s));
  GPUCHECK_CUDA(cudaStreamSynchronize(s));
  if (timed_out) throw GpuError("timing: the stream was held for over 2 s while work was queued; "
                                "the sample times are not trustworthy");
  if (t.calls == 0) throw GpuError("timing: no iterations were run");
  t.mean_s = total_s / static_cast<double>(t.calls);
  std::vector<double> sorted = t.samples_s;
  std::sort(sorted.begin(), sorted.end());
  t.median_s = sorted[sorted.size() / 2];
  t.min_s = sorted.front();
  if (t.sm_clock_MHz) state.counters["sm_clock_MHz"] = *t.sm_clock_MHz;
  if (t.clock_event_reasons) state.counters["throttled"] = is_throttling(*t.clock_event_reasons) ? 1 : 0;
  return t;
}

}  // namespace gpucheck::harness
