#include "gpucheck/core/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "gpucheck/core/stats.hpp"

namespace gpucheck {

std::string_view to_string(TimingMode m) {
  switch (m) {
    case TimingMode::held: return "held";
    case TimingMode::per_call: return "per_call";
    case TimingMode::host: return "host";
    case TimingMode::cold: return "cold";
    case TimingMode::wall: return "wall";
    case TimingMode::queued: return "queued";
  }
  return "?";
}

std::string_view to_string(StopReason r) {
  switch (r) {
    case StopReason::converged: return "converged";
    case StopReason::time_limit: return "time_limit";
    case StopReason::sample_limit: return "sample_limit";
  }
  return "?";
}

void RunningStats::add(double x) {
  ++n_;
  const double d = x - mean_;
  mean_ += d / n_;
  m2_ += d * (x - mean_);
}

double RunningStats::variance() const { return n_ < 2 ? 0.0 : std::max(0.0, m2_ / (n_ - 1)); }

double RunningStats::cv() const {
  if (n_ < 2 || mean_ == 0) return 0.0;
  return std::sqrt(variance()) / std::fabs(mean_);
}

int follow_batch(int batch, double per_call_s, double min_sample_s, int min_batch, int max_batch) {
  const int want = choose_batch(per_call_s, min_sample_s, min_batch, max_batch);
  const auto far = [](int a, int b) { return static_cast<long long>(a) * 4 >= static_cast<long long>(b) * 5; };
  return far(want, batch) || far(batch, want) ? want : batch;
}

int whole_turns(int batch, int turns, int max_batch) {
  if (turns <= 1) return batch;
  const long long up = (static_cast<long long>(std::max(batch, 1)) + turns - 1) / turns * turns;
  if (up <= max_batch) return static_cast<int>(up);
  const int down = max_batch / turns * turns;
  return down > 0 ? down : turns;
}

std::optional<GroupPick> fastest_group(std::span<const double> medians) {
  if (medians.empty()) return std::nullopt;
  GroupPick pick;
  double slowest = 0;
  for (std::size_t i = 0; i < medians.size(); ++i) {
    const double m = medians[i];
    if (!(m > 0) || !std::isfinite(m)) return std::nullopt;
    if (m < medians[pick.index]) pick.index = i;
    slowest = std::max(slowest, m);
  }
  pick.spread = slowest / medians[pick.index] - 1;
  return pick;
}

std::optional<StopReason> should_stop(const StopRule& rule, const RunningStats& stats, double elapsed_s) {
  const int n = stats.count();
  if (n >= rule.max_samples) return StopReason::sample_limit;
  if (n >= rule.min_samples && elapsed_s >= rule.min_time_s) {
    const double cv = stats.cv();
    const double rel_ci = 1.96 * cv / std::sqrt(static_cast<double>(n));
    if (cv <= rule.target_cv || rel_ci <= rule.target_rel_ci) return StopReason::converged;
  }
  if (elapsed_s >= rule.max_time_s && n >= std::min(rule.min_samples, rule.max_samples)) return StopReason::time_limit;
  // Past the time limit with fewer samples than the minimum: keep going, but not forever
  // (a call that takes longer than the limit still gets its minimum of samples).
  return std::nullopt;
}

int choose_batch(double one_call_s, double min_sample_s, int min_batch, int max_batch) {
  max_batch = std::max(max_batch, 1);
  min_batch = std::clamp(min_batch, 1, max_batch);
  if (!(one_call_s > 0) || !std::isfinite(one_call_s)) return max_batch;
  const double want = std::ceil(min_sample_s / one_call_s);
  if (want >= max_batch) return max_batch;
  return std::clamp(static_cast<int>(want), min_batch, max_batch);
}

bool is_slowed(const ClockReading& r, std::optional<unsigned> sm_clock_max_MHz) {
  if (r.reasons & kSlowingReasons) return true;
  return sm_clock_max_MHz && *sm_clock_max_MHz > 0 && r.sm_clock_MHz > 0 &&
         r.sm_clock_MHz * 4u < *sm_clock_max_MHz * 3u;
}

SampleStats summarize(std::span<const double> xs) {
  SampleStats s;
  s.n = static_cast<int>(xs.size());
  if (xs.empty()) return s;
  const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  s.min = *lo;
  s.max = *hi;
  s.median = *median(xs);
  s.mean = *mean(xs);
  s.cv = coefficient_of_variation(xs).value_or(0.0);
  return s;
}

double SteadyClock::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {
bool everyone(Agreement* agree, bool v) { return agree ? agree->all(v) : v; }

// The reference's table: 64 Ki words, a random permutation cycle (each load depends on the
// last, as a driver's pointer-chasing does).
const std::vector<std::uint32_t>& reference_table() {
  static const std::vector<std::uint32_t> t = [] {
    constexpr std::uint32_t n = 1u << 16;
    std::vector<std::uint32_t> order(n);
    for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    for (std::uint32_t i = n - 1; i > 0; --i) {  // Fisher-Yates with a fixed xorshift
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::swap(order[i], order[static_cast<std::uint32_t>(x % (i + 1))]);
    }
    std::vector<std::uint32_t> next(n);
    for (std::uint32_t i = 0; i < n; ++i) next[order[i]] = order[(i + 1) % n];
    return next;
  }();
  return t;
}
}  // namespace

double SampleSource::host_reference(const Clock& clock) { return time_host_reference(clock); }

double time_host_reference(const Clock& clock) {
  const std::vector<std::uint32_t>& t = reference_table();
  static volatile std::uint32_t sink = 0;
  std::uint32_t at = 0, h = 0x811C9DC5u;
  const double t0 = clock.now_s();
  for (int i = 0; i < 4096; ++i) {
    at = t[at];
    for (int j = 0; j < 4; ++j) h = (h ^ (at + static_cast<std::uint32_t>(j))) * 0x01000193u;
  }
  const double t1 = clock.now_s();
  sink = sink + h + at;
  return t1 - t0;
}

double warm_host_reference(SampleSource& src, const Clock& clock) {
  (void)src.host_reference(clock);  // untimed: brings the reference's data back into the caches
  double best = src.host_reference(clock);
  for (int i = 1; i < kHostReferenceTimedPasses; ++i) best = std::min(best, src.host_reference(clock));
  return best;
}

Sampled run_sampling(SampleSource& src, const SamplingPlan& plan, const Clock& clock, Agreement* agree) {
  // The host reference, warm, before the case's own work: a fixed piece of host work timed
  // after one untimed pass, so it reads the host's speed rather than how much of the
  // reference the case just evicted (docs/GATE.md, host-bound). Read again after the case.
  Sampled out;
  if (plan.host_reference_every > 0) out.host_reference_s.push_back(warm_host_reference(src, clock));

  // Warm-up: module load, handles, workspaces, clocks ramping up. Bounded so that a slow
  // call cannot stretch it without end; ranks in lockstep stop warming up together.
  constexpr int kMaxWarmupCalls = 1000;
  constexpr double kMaxWarmupS = 10.0;
  const double w0 = clock.now_s();
  for (int i = 0;; ++i) {
    const double t = clock.now_s() - w0;
    const bool done = (i >= plan.warmup_calls && t >= plan.warmup_s) || i >= kMaxWarmupCalls ||
                      (i >= plan.warmup_calls && t >= kMaxWarmupS);
    if (everyone(agree, done)) break;
    src.warm_up();
  }

  // One timed call decides the batch (the same on every rank: the slowest rank's call).
  double one = src.sample(1, false).seconds;
  if (agree) one = agree->max(one);
  out.batch = whole_turns(choose_batch(one, plan.min_sample_s, plan.min_batch, plan.max_batch), plan.batch_turns,
                          plan.max_batch);
  src.between_samples();

  RunningStats stats;
  const double start = clock.now_s();
  double last_read = -1e300;
  bool slowed_now = false;
  bool counting = !(plan.discard_s > 0);
  for (;;) {
    const double now = clock.now_s();
    if (!counting && everyone(agree, now - start >= plan.discard_s)) {
      src.counting_starts();
      counting = true;
    }
    if (!counting) {  // the load before the plateau: run, not counted, not clock-read
      const SampleSource::Sample s = src.sample(out.batch, false);
      const double seconds = agree ? agree->max(s.seconds) : s.seconds;  // the same batch on every rank
      ++out.discarded;
      out.batch = whole_turns(follow_batch(out.batch, seconds / out.batch, plan.min_sample_s, plan.min_batch,
                                           plan.max_batch),
                              plan.batch_turns, plan.max_batch);
      src.between_samples();
      continue;
    }
    const bool read = now - last_read >= plan.clock_read_interval_s;
    SampleSource::Sample s = src.sample(out.batch, read);
    double seconds = s.seconds;
    if (agree) seconds = agree->max(seconds);
    if (read) last_read = now;
    if (s.clock) {
      out.clock_read = true;
      out.clock_event_reasons |= s.clock->reasons;
      if (s.clock->sm_clock_MHz > 0) {
        if (!out.sm_clock_MHz || s.clock->sm_clock_MHz < *out.sm_clock_MHz) out.sm_clock_MHz = s.clock->sm_clock_MHz;
        if (!out.sm_clock_max_seen_MHz || s.clock->sm_clock_MHz > *out.sm_clock_max_seen_MHz)
          out.sm_clock_max_seen_MHz = s.clock->sm_clock_MHz;
      }
      slowed_now = is_slowed(*s.clock, plan.sm_clock_max_MHz);
    }
    if (slowed_now) ++out.slowed_samples;
    const double per_call = seconds / out.batch;
    out.per_call_s.push_back(per_call);
    stats.add(per_call);
    src.between_samples();
    out.elapsed_s = clock.now_s() - start;
    const std::optional<StopReason> stop = should_stop(plan.stop, stats, out.elapsed_s);
    if (everyone(agree, stop.has_value())) {
      // Ranks that agreed to stop for different reasons report their own.
      out.reason = stop.value_or(StopReason::converged);
      break;
    }
  }
  if (plan.host_reference_every > 0) out.host_reference_s.push_back(warm_host_reference(src, clock));
  out.stats = summarize(out.per_call_s);
  return out;
}

std::string noise_note(const Sampled& s) {
  if (s.reason != StopReason::time_limit) return {};
  char buf[64];
  std::snprintf(buf, sizeof buf, "stop=time_limit cv=%.2f%%", 100.0 * s.stats.cv);
  return buf;
}

}  // namespace gpucheck
