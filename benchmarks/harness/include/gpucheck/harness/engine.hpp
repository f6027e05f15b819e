// The one place GPU work is timed (docs/ARCHITECTURE.md). A case hands over `work`, a
// callable that enqueues one call; the engine warms it up, batches calls shorter than the
// minimum sample, takes samples in the chosen mode until the stop rule says the figure is
// known (core/measure.hpp), reads the SM clock while the work runs, and returns the
// samples. Families never time anything themselves.
#pragma once
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpucheck/check_cuda.hpp"
#include "gpucheck/core/measure.hpp"

namespace gpucheck::harness {

class Device;

// A held stream stayed held past the spin kernel's 2 s limit: queuing one sample's work took
// the host that long (the work waits on the host), so the sample times are not trustworthy.
class HoldTimeout : public GpuError {
 public:
  using GpuError::GpuError;
};

// Where a sample's events are recorded: a stream of a device. Most cases have one lane, the
// device's stream; bidirectional copies have two on one device; a single-process collective
// one per GPU. A sample's time is the longest lane's.
struct Lane {
  int device = 0;
  cudaStream_t stream = nullptr;
};

// Enqueues one call. Its argument is the first lane's stream (the device's own stream unless
// the case names lanes); a multi-lane work enqueues on every lane itself.
using Work = std::function<void(cudaStream_t)>;

// Waits until every event has completed (default: cudaEventSynchronize each). A collective
// supplies a watchdog that turns a hang into an error instead.
using Waiter = std::function<void(std::span<const cudaEvent_t>)>;

struct MeasureOptions {
  TimingMode mode = TimingMode::held;
  SamplingPlan plan;
  std::vector<Lane> lanes;               // empty: one lane, the device's stream
  Agreement* agree = nullptr;            // ranks measuring in lockstep (MPI)
  Waiter wait;                           // empty: cudaEventSynchronize
  std::function<void()> between_samples; // untimed, after each sample
  std::function<void()> during_sample;   // when the clock is read: while the work runs
  // When set, the host reference (read warm before and after the case: counters host_ref_us
  // and host_ref_max_us) times this instead of the fixed CPU work.
  std::function<void()> host_reference;
  // Seconds the GPU is left idle before the warm-up: a burst then starts from a card whose
  // power limiter has recovered from whatever ran before (matmul's burst cases).
  double settle_s = 0;
  // Record what the card did during the timed samples: the SM clock's mean (a reading every
  // sample) and the board's mean power from the energy counter (counters sm_clock_mean_MHz and
  // power_W, report-only). Set by power_burst.
  bool record_power = false;
  // Under GPUCHECK_COOLDOWN, wait after the settle until the card's power and temperature are
  // under its limits (energy::Cooldown). Set by power_burst.
  bool wait_cooldown = false;
  // Held and queued modes, one lane: each sample's calls are one CUDA graph, captured once
  // per batch size (untimed, before the sample) and replayed, so that no host's launch path
  // enters the figure (the work must be capturable). Set by power_plateau; bench_matmul sets
  // it on its decode F.linear bursts too.
  bool graph = false;
  // Work that streams its operands from HBM and whose time follows a state of the card's
  // memory that each write and free of other memory draws anew (bench_matmul's F.linear rows
  // of at most 128 tokens: matmul.hpp): this many groups, each after redraw_memory_state and
  // with its own warm-up and samples; the group of the lowest median is the measurement
  // (counters groups and group_spread_pct). The settle and the cool-down come once, before the
  // first group.
  int groups = 1;
};

// A write and a free of kRedrawBytes of device memory on the device's stream, waited for:
// what draws that memory state anew (MeasureOptions::groups).
inline constexpr std::size_t kRedrawBytes = std::size_t{256} << 20;
void redraw_memory_state(Device& d);

// The defaults of the device's suite: quick stops sooner than full.
MeasureOptions default_measure(const Device& d);

// `o` as a power burst, for work that draws past the card's power limit within tens of
// milliseconds (a GEMM, fused attention: the SM clock falls soon after they start): the GPU is
// left idle 0.3 s, then 5 warm-up calls and exactly 20 samples, so every case measures the
// same burst whatever ran before it, not the limiter. It records the SM clock at every sample
// and the energy counter around the timed samples (record_power). Under GPUCHECK_COOLDOWN the
// idle also lasts until the card's power and temperature are under its limits (energy::Cooldown).
MeasureOptions power_burst(MeasureOptions o);

// `o` as a power plateau, for the same work timed where the card holds its power limit: the GPU
// is left idle 0.3 s, then 5 warm-up calls, then queued samples (TimingMode::queued: the card
// kept busy, kPlateauSampleS each, each a replay of its calls captured as one CUDA graph, so
// that neither ours' nor a Python host's launch rate enters it) for load_s + window_s, of which
// those that start in the first load_s are not counted (SamplingPlan::discard_s); the median of
// the rest. On an H200 a GEMM at 700 W runs at its boost clock for about 0.1 s, then holds a
// lower clock within 1% until about 0.75 s, when the slower power loop starts to swing it by
// 3-5% (docs/MATMUL.md): a window inside that span reads the same from a cool or a hot card,
// so no cool-down is waited for. Records the SM clock and power over the counted samples.
MeasureOptions power_plateau(MeasureOptions o, double load_s, double window_s);

struct Measurement {
  TimingMode mode = TimingMode::held;
  Sampled sampled;
  double per_call_s = 0;  // the median sample: what real_time and every rate report
  // With record_power: the mean SM clock reading over the timed samples, and the mean power
  // over them (the energy counter's delta over their time); empty where the driver gave none.
  std::optional<double> sm_clock_mean_MHz, power_W;
  // With record_power and GPUCHECK_COOLDOWN (energy::Cooldown): the wait before the warm-up and
  // the card's temperature when it ended; capped when the limits were not met by max_s, settled
  // when the rule's settle_s ended it first.
  std::optional<double> cooldown_s;
  std::optional<unsigned> start_temp_C;
  bool cooldown_capped = false;
  bool cooldown_settled = false;
  bool graph = false;  // MeasureOptions::graph: the samples were graph replays
  int groups = 1;          // MeasureOptions::groups: the groups timed, the fastest reported
  double group_spread = 0;  // ...and their medians' spread (the slowest over the fastest, less 1)
};

// Times `work`. Throws GpuError on a CUDA failure (a work that throws mid-batch releases a
// held stream first) and HoldTimeout when a held stream stayed held for over 2 s.
// Whether kernel launches block until the kernel has run (CUDA_LAUNCH_BLOCKING=1 reached the
// driver, or a tool serialises launches): a 50 ms probe, once per process. The held and cold
// modes refuse to time under it: their stream hold cannot be set up.
bool launches_block(Device& d);

Measurement measure(Device& d, const Work& work, const MeasureOptions& o);

// Writes the measurement into the Google Benchmark state: manual time (the median per call)
// and the counters every case carries: samples, cv_pct, batch, throttled_samples,
// clock_event_reasons, sm_clock_MHz and throttled (where the driver told); host-bound modes
// (host, per_call, wall) and cases with their own host reference also host_ref_us, the host
// reference's median time during the case; host-bound modes p10_us, the samples' 10th
// percentile; record_power cases sm_clock_mean_MHz and power_W where the driver told.
void report(benchmark::State& state, const Measurement& m);

// " timing=per_call stop=time_limit cv=3.2% cooldown=1.8s start=41C": the engine's part of a
// label ("" when held, converged and not cooled down).
std::string engine_note(const Measurement& m);

}  // namespace gpucheck::harness
