// The measurement engine's pure half: how many calls make a sample, when to stop sampling,
// which samples ran on a slowed card, and the statistics every case reports. The GPU modes
// (benchmarks/harness/src/engine.cpp) only produce samples; the loop that warms up, batches,
// samples and stops lives here, driven by a Clock so that tests run it on a fake clock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/core/contract.hpp"

namespace gpucheck {

// How a sample is timed (docs/ARCHITECTURE.md):
//   held      device time: the stream is held by a spin kernel until the batch is queued,
//             CUDA events around the batch (no host launch gaps);
//   per_call  events around the batch on an idle stream: host dispatch included, as a
//             framework user sees one call;
//   host      CPU time of the calls themselves (steady_clock), the device drained between
//             samples: launch and instantiate costs;
//   cold      held, with L2 flushed before every sample and one call per sample;
//   wall      host wall-clock from before the batch is issued until it has completed on
//             every lane: nccl-tests' method (its busbw columns are what users read);
//   queued    events around the batch on a stream kept busy: the next sample is queued
//             before this one is waited for, so the device never idles between samples
//             (continuous load, as a power plateau needs; held samples leave it idle while
//             the host queues each batch).
enum class TimingMode { held, per_call, host, cold, wall, queued };
std::string_view to_string(TimingMode m);

// When sampling stops. After at least min_samples samples and min_time_s of sampling, it
// stops as soon as the figure is known well enough: the samples' coefficient of variation
// is at or under target_cv, or the 95% confidence half-width of their mean relative to it
// (1.96 cv / sqrt(n)) is at or under target_rel_ci. Otherwise it stops at max_time_s
// (reason time_limit: the case reports the noise it has) or at max_samples.
struct StopRule {
  int min_samples = 10;
  int max_samples = 1 << 20;
  double min_time_s = 0.02;
  double max_time_s = 0.5;
  double target_cv = 0.005;
  double target_rel_ci = 0.005;
};

enum class StopReason { converged, time_limit, sample_limit };
std::string_view to_string(StopReason r);

// Running mean and variance (Welford), so the stop check is O(1) per sample.
class RunningStats {
 public:
  void add(double x);
  int count() const { return n_; }
  double mean() const { return mean_; }
  double variance() const;  // sample variance (n - 1); 0 below two values
  // Coefficient of variation (stddev / mean); 0 below two values or for a zero mean.
  double cv() const;

 private:
  int n_ = 0;
  double mean_ = 0, m2_ = 0;
};

// nullopt: keep sampling.
std::optional<StopReason> should_stop(const StopRule& rule, const RunningStats& stats, double elapsed_s);

// Calls per sample: enough that one sample spans min_sample_s, within [min_batch, max_batch].
// A call that measured no time (or a negative one) gets max_batch.
int choose_batch(double one_call_s, double min_sample_s, int min_batch, int max_batch);
// The batch during a plateau's load (SamplingPlan::discard_s), after each discarded sample of
// `batch` calls at per_call_s: choose_batch's figure when it is 25% or more away from `batch`,
// else `batch` (a queued source restarts its queue on every change). The load's samples run
// back to back, so they know the call's steady time, which the one calibration call, timed
// alone, misjudges: on an H200 a 15 us F.linear call read 9-200 us so (2026-12-03).
int follow_batch(int batch, double per_call_s, double min_sample_s, int min_batch, int max_batch);
// `batch` rounded up to a whole number of `turns` (SamplingPlan::batch_turns), or down where
// that passes max_batch; `turns` itself where no multiple fits. A sample that a CUDA graph
// replays again and again must end where the next begins in the rotation of its operands'
// copies: else the copy it ended on is read again at once, from the L2. 1 (or less): `batch`.
int whole_turns(int batch, int turns, int max_batch);

// Groups of samples of one case timed one after another (the engine's MeasureOptions::groups):
// the group of the lowest median and how far the medians spread (the slowest over the fastest,
// less 1, a fraction). nullopt when there is no group or a median is not finite and positive:
// such a group measured nothing. Ties go to the first group.
struct GroupPick {
  std::size_t index = 0;
  double spread = 0;
};
std::optional<GroupPick> fastest_group(std::span<const double> medians);

// What the driver said about the SM clock while a sample ran.
struct ClockReading {
  unsigned sm_clock_MHz = 0;
  std::uint64_t reasons = 0;  // NVML clocks-event (throttle) reason mask
};

// A sample on a slowed card: the SM clock under 75% of its maximum, or a hardware slowdown,
// thermal or power-brake reason. Power capping alone (sw_power_cap) is how a GPU runs under
// sustained load and is not counted. Such samples are counted and reported, not discarded
// (a card that throttles is what acceptance must see; docs/ARCHITECTURE.md).
bool is_slowed(const ClockReading& r, std::optional<unsigned> sm_clock_max_MHz);
using contract::kSlowingReasons;

// A case's samples, from gpucheck/core/stats.hpp (the tool's statistics): cv 0 where
// coefficient_of_variation has none (below two values, a zero mean), everything 0 when empty.
struct SampleStats {
  int n = 0;
  double median = 0, mean = 0, min = 0, max = 0;
  double cv = 0;  // fraction
};
SampleStats summarize(std::span<const double> xs);

// The clock behind the sampling loop (a fake one in tests).
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double now_s() const = 0;
};
class SteadyClock final : public Clock {
 public:
  double now_s() const override;
};

// What a timing mode provides to the loop.
class SampleSource {
 public:
  struct Sample {
    double seconds = 0;                 // for the whole batch
    std::optional<ClockReading> clock;  // when asked for, read while the batch ran
  };
  virtual ~SampleSource() = default;
  // One untimed call, complete when it returns.
  virtual void warm_up() = 0;
  // One timed sample of `batch` calls.
  virtual Sample sample(int batch, bool read_clock) = 0;
  // Between samples, untimed (e.g. destroy what a host-timed call created).
  virtual void between_samples() {}
  // The host reference's time (plan.host_reference_every): by default time_host_reference,
  // a fixed piece of CPU work; a family whose figure rides on another part of the host
  // (PCIe copies: its memory) times that instead.
  virtual double host_reference(const Clock& clock);
  // Once, before the first counted sample, when the plan discards the samples of its first
  // discard_s: what the source records about the timed samples starts here.
  virtual void counting_starts() {}
};

// Several processes measuring in lockstep (MPI ranks): the sample's time is the slowest
// rank's and every rank takes the same stop decision. Identity for one process.
class Agreement {
 public:
  virtual ~Agreement() = default;
  virtual double max(double v) = 0;
  virtual bool all(bool v) = 0;
};

struct SamplingPlan {
  StopRule stop;
  int warmup_calls = 3;      // at least this many untimed calls...
  double warmup_s = 0.02;    // ...and this long (a bound of 1000 calls or 10 s stops it)
  double min_sample_s = 5e-4;
  int min_batch = 1;
  int max_batch = 64;
  double clock_read_interval_s = 0.01;  // telemetry at most this often
  std::optional<unsigned> sm_clock_max_MHz;
  // Host-bound modes: time the host reference workload (below) every this many samples,
  // so that the host's own speed during the case is known (0: never).
  int host_reference_every = 0;  // > 0: read the host reference, warm, before and after the case
  // Samples that start within this many seconds of the first timed one run but are not
  // counted (no statistics, no clock reading): the load that takes the card into its power
  // limit before a plateau is timed (harness::power_plateau). The stop rule's times still
  // count from the first timed sample.
  double discard_s = 0;
  // Every batch a whole number of this many calls (whole_turns): a case whose calls rotate
  // over copies of their operands sets its number of copies.
  int batch_turns = 1;
};

// A power plateau's queued samples (harness::power_plateau): at least 5 ms of calls, at most
// 1024 calls, so that the host queueing one sample stays well ahead of the device running the
// one before (PyTorch's F.linear issues in about 10 us a call, ours in 3-5 us; the shortest
// F.linear row of the llm suite runs 14 us). ci/torch_reference.py's PLATEAU_SAMPLE_MS and
// PLATEAU_MAX_BATCH are the same.
inline constexpr double kPlateauSampleS = 5e-3;
inline constexpr int kPlateauMaxBatch = 1024;

struct Sampled {
  std::vector<double> per_call_s;  // one per sample
  SampleStats stats;               // of per_call_s
  int batch = 1;
  StopReason reason = StopReason::converged;
  double elapsed_s = 0;            // sampling wall time
  int slowed_samples = 0;          // samples whose clock reading (the latest at or before them) is_slowed
  std::optional<unsigned> sm_clock_MHz;      // the lowest reading during sampling
  std::optional<unsigned> sm_clock_max_seen_MHz;
  std::uint64_t clock_event_reasons = 0;     // OR of every reading
  bool clock_read = false;
  std::vector<double> host_reference_s;      // the warm host reference before and after the case, when asked for
  int discarded = 0;                         // samples run within plan.discard_s, not counted
};

// A fixed piece of host work (integer hashing with dependent loads from a 256 KiB table, so
// about 20 us on a 2-3 GHz core), timed with `clock`: the host's speed at that moment. A case
// whose figure is host time (launch, instantiate, per-call issue) moves with the host's
// speed (frequency, a neighbour on the same core); its ratio to this reference does not,
// which is what the gate compares for host-bound cases (docs/GATE.md).
double time_host_reference(const Clock& clock);
// One warm reading: an untimed pass, then the fastest of kHostReferenceTimedPasses timed ones.
inline constexpr int kHostReferenceTimedPasses = 3;
double warm_host_reference(SampleSource& src, const Clock& clock);

// Warm-up, one calibration sample to choose the batch, then samples until the stop rule
// (agreed across ranks when `agree` is given). Exceptions from the source propagate.
Sampled run_sampling(SampleSource& src, const SamplingPlan& plan, const Clock& clock, Agreement* agree = nullptr);

// "stop=time_limit cv=3.2%" when the noise target was not met, else "".
std::string noise_note(const Sampled& s);

}  // namespace gpucheck
