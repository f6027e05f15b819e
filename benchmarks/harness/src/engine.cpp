#include "gpucheck/core/contract.hpp"
#include "gpucheck/harness/engine.hpp"
#include "gpucheck/harness/graph.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "gpucheck/core/energy.hpp"
#include "gpucheck/core/stats.hpp"
#include "gpucheck/core/telemetry.hpp"
#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/memory.hpp"
#include "gpucheck/kernels/spin.cuh"

namespace gpucheck::harness {
namespace {

constexpr unsigned long long kHoldTimeoutNs = 2'000'000'000ull;  // 2 s: a stuck host, not work

// The modes whose figure includes host time: they read the host reference and report p10_us.
bool host_bound(TimingMode m) { return m == TimingMode::host || m == TimingMode::per_call || m == TimingMode::wall; }

// Makes `device` current for a scope and restores the previous one.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    GPUCHECK_CUDA(cudaGetDevice(&prev_));
    if (device != prev_) GPUCHECK_CUDA(cudaSetDevice(device));
  }
  ~ScopedDevice() { GPUCHECK_CUDA_NOEXCEPT(cudaSetDevice(prev_)); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int prev_ = 0;
};

void store_flag(volatile int* f, int v) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *f = v;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

// Holds every lane with a spin kernel from construction until destruction, so that the host
// queues a whole batch before any of it starts (host launch gaps stay out of device time).
// The destructor releases the lanes however the scope is left: a work that throws mid-batch
// does not leave a stream held until the spin kernel's timeout.
class StreamHold {
 public:
  StreamHold(const HoldFlags& f, std::span<const Lane> lanes) : flags_(f) {
    store_flag(flags_.host, 0);
    for (const Lane& l : lanes) {
      ScopedDevice on(l.device);
      kernels::spin_until_flag(flags_.device_view, flags_.device_timed_out, kHoldTimeoutNs, l.stream);
    }
  }
  ~StreamHold() { store_flag(flags_.host, 1); }
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;

 private:
  const HoldFlags& flags_;
};

}  // namespace

bool launches_block(Device& d) {
  // Once per process: the driver's launch mode does not change under a running process.
  static std::atomic<int> known{-1};
  if (const int k = known.load(); k >= 0) return k == 1;
  const HoldFlags& f = d.hold_flags();
  store_flag(f.host, 0);
  *f.host_timed_out = 0;
  // A spin kernel launched while its flag is down must still be running when the launch
  // returns; if it has finished, the launch waited for it (it ran into its 50 ms timeout).
  kernels::spin_until_flag(f.device_view, f.device_timed_out, 50'000'000ull, d.stream());
  const cudaError_t q = cudaStreamQuery(d.stream());
  store_flag(f.host, 1);
  GPUCHECK_CUDA(cudaStreamSynchronize(d.stream()));
  *f.host_timed_out = 0;
  if (q != cudaSuccess && q != cudaErrorNotReady) GPUCHECK_CUDA(q);
  known.store(q == cudaSuccess ? 1 : 0);
  return q == cudaSuccess;
}

namespace {

// MeasureOptions::graph takes effect in held and queued modes on one lane (no lanes given is
// the device's own stream): the rule GpuSource samples by and Measurement::graph reports.
bool replays_graphs(const MeasureOptions& o) {
  return o.graph && o.lanes.size() <= 1 && (o.mode == TimingMode::held || o.mode == TimingMode::queued);
}

// The GPU modes as a sample source for the core loop.
class GpuSource final : public SampleSource {
 public:
  GpuSource(Device& d, const Work& work, const MeasureOptions& o) : dev_(d), work_(work), o_(o) {
    if ((o.mode == TimingMode::held || o.mode == TimingMode::cold) && launches_block(d))
      throw GpuError("timing: kernel launches block until the kernel has run (CUDA_LAUNCH_BLOCKING=1, or a tool "
                     "that serialises launches): device time cannot be measured with the stream held");
    if (o.lanes.empty()) lanes_.push_back(Lane{d.index(), d.stream()});
    else lanes_ = o.lanes;
    for (const Lane& l : lanes_) {
      ScopedDevice on(l.device);
      start_.push_back(std::make_unique<Event>());
      stop_.push_back(std::make_unique<Event>());
    }
  }

  void warm_up() override {
    work_(lanes_.front().stream);
    if (o_.wait) {  // a watchdog waits: a collective that hangs in warm-up is an error too
      record(stop_);
      wait_for(stop_);
    } else {
      sync_lanes();
    }
  }

  Sample sample(int batch, bool read_clock) override {
    if (o_.mode == TimingMode::queued) return sample_queued(batch, read_clock);
    Sample s;
    if (o_.mode == TimingMode::wall) {
      sync_lanes();
      const auto t0 = std::chrono::steady_clock::now();
      for (int b = 0; b < batch; ++b) work_(lanes_.front().stream);
      record(stop_);
      if (read_clock) read_while_running(s);
      wait_for(stop_);
      s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      mark_end();
      return s;
    }
    if (o_.mode == TimingMode::host) {
      sync_lanes();  // an empty queue: the calls' own cost, not a full queue's back-pressure
      const auto t0 = std::chrono::steady_clock::now();
      for (int b = 0; b < batch; ++b) work_(lanes_.front().stream);
      const auto t1 = std::chrono::steady_clock::now();
      if (read_clock) read_while_running(s);
      sync_lanes();
      s.seconds = std::chrono::duration<double>(t1 - t0).count();
      mark_end();
      return s;
    }
    const bool held = o_.mode == TimingMode::held || o_.mode == TimingMode::cold;
    if (o_.mode == TimingMode::cold) {
      for (const Lane& l : lanes_) {
        ScopedDevice on(l.device);
        dev_.flush_l2(l.stream);
      }
    }
    if (held) *dev_.hold_flags().host_timed_out = 0;
    capture_for(batch);  // before the hold: the stream is idle, and no capture is timed
    {
      std::unique_ptr<StreamHold> hold;
      if (held) hold = std::make_unique<StreamHold>(dev_.hold_flags(), lanes_);
      record(start_);
      queue_calls(batch);
      record(stop_);
    }  // released here, also when the work threw
    if (read_clock) read_while_running(s);  // the work is running now
    wait_for(stop_);
    if (held && *dev_.hold_flags().host_timed_out != 0)
      throw HoldTimeout("timing: a stream was held for over 2 s while work was queued (the host took that long "
                     "to enqueue one sample); the sample times are not trustworthy");
    double ms = 0;
    for (std::size_t i = 0; i < lanes_.size(); ++i)
      ms = std::max(ms, static_cast<double>(stop_[i]->elapsed_ms_since(*start_[i])));
    s.seconds = ms / 1e3;
    mark_end();
    return s;
  }

  void between_samples() override {
    if (o_.between_samples) o_.between_samples();
  }

  // Queued mode: waits for the sample still in flight after the last one was returned (called
  // as soon as sampling ends, so that nothing of the case runs past its measurement).
  void drain() {
    if (slots_[0].pending || slots_[1].pending) sync_lanes();
    slots_[0].pending = slots_[1].pending = false;
  }

  // The plateau's counted samples start here: the clock readings and the energy's too.
  void counting_starts() override {
    pacer_.reset();
    paced_ = 0;
    if (!o_.record_power) return;
    clock_MHz_.clear();
    const double t0 = SteadyClock().now_s();
    start_energy();
    pacer_.took(t0, SteadyClock().now_s());  // the window's first reading is paced as the others
  }

  double host_reference(const Clock& clock) override {
    if (!o_.host_reference) return SampleSource::host_reference(clock);
    const double t0 = clock.now_s();
    o_.host_reference();
    return clock.now_s() - t0;
  }

  // record_power, called as soon as sampling returned: what the card did during the timed
  // samples. They run from the end of the first sample (run_sampling's calibration of the
  // batch, untimed, never clock-read), or from counting_starts on a plateau, to now. The
  // energy counter is read there and now, and on a plateau at its paced readings while the
  // queue runs (read_while_running; energy::EnergySteps). One reading takes about 4 ms of host
  // time on an H200 (246 a second idle, 470 in 2 s under load; 2026-12-04): a held sample's
  // host time is the card's idle time before the next one, and 4 ms more of it would cool a
  // burst. A burst (10-100 ms of samples) sees the counter move at most once and so has no
  // figure.
  void power_over(Measurement& m) {
    if (!o_.record_power || !energy_) return;
    m.sm_clock_mean_MHz = energy::mean_clock_MHz(clock_MHz_);
    read_energy();
    m.power_W = energy_->power_W();
  }

 private:
  void start_energy() {
    energy_.emplace();
    read_energy();
  }
  void read_energy() {  // the time once the reading is back (arguments' order is unspecified)
    const std::optional<double> joules = dev_.read_energy_J();
    energy_->add(SteadyClock().now_s(), joules);
  }
  // Queued samples' readings are paced (energy::ReadPacer): read every sample, they took longer
  // than a sample runs and left the card idle between samples. A plateau that records power
  // reads the energy counter at each paced reading and the clock at every second one
  // (energy::plateau_reads_clock), so that the readings, about 4 ms of host each, stay close
  // enough together to time the counter's steps.
  void read_while_running(Sample& s) {
    const bool queued = o_.mode == TimingMode::queued;
    const double t0 = SteadyClock().now_s();
    if (!queued || pacer_.due(t0)) {
      const bool energy = o_.record_power && energy_ && queued;
      if (!energy || energy::plateau_reads_clock(paced_++)) {
        s.clock = dev_.read_clock();
        if (o_.record_power && s.clock) clock_MHz_.push_back(s.clock->sm_clock_MHz);
      }
      if (energy) read_energy();  // see power_over
      if (queued) pacer_.took(t0, SteadyClock().now_s());
    }
    if (o_.during_sample) o_.during_sample();
  }
  // After a sample's work completed, outside its timing: the first sample's end is where the
  // timed samples start.
  void mark_end() {
    if (o_.record_power && !energy_) start_energy();
  }
  // MeasureOptions::graph (held and queued modes, one lane): a sample's calls are one CUDA
  // graph, captured once per batch size. The capture comes before the sample's start event:
  // timed, its host time (a few us a call) read as a slower call, and the plateau's batch
  // followed it down to two thirds of its target (2026-12-03: 193 calls of 16.5 us where
  // PyTorch's side, which captured first, ran 284).
  void capture_for(int batch) {
    if (!replays_graphs(o_) || graph_batch_ == batch) return;
    graph_ = capture_exec(lanes_.front().stream, [this, batch](cudaStream_t st) {
      for (int b = 0; b < batch; ++b) work_(st);
    });
    graph_batch_ = batch;
  }
  void queue_calls(int batch) {
    if (replays_graphs(o_)) {
      GPUCHECK_CUDA(cudaGraphLaunch(graph_.get(), lanes_.front().stream));
      return;
    }
    for (int b = 0; b < batch; ++b) work_(lanes_.front().stream);
  }
  // Queued mode: two samples in flight. The oldest (slots_[oldest_]) is returned once the
  // next has been queued behind it, so the stream never runs dry between them; a batch that
  // changes (after the calibration) waits for the old one and starts the queue afresh.
  struct Slot {
    std::vector<std::unique_ptr<Event>> start, stop;
    int batch = 0;
    bool pending = false;
  };
  void enqueue(Slot& slot, int batch) {
    if (slot.start.empty()) {
      for (const Lane& l : lanes_) {
        ScopedDevice on(l.device);
        slot.start.push_back(std::make_unique<Event>());
        slot.stop.push_back(std::make_unique<Event>());
      }
    }
    capture_for(batch);
    record(slot.start);
    queue_calls(batch);
    record(slot.stop);
    slot.batch = batch;
    slot.pending = true;
  }
  Sample sample_queued(int batch, bool read_clock) {
    Slot& old = slots_[static_cast<std::size_t>(oldest_)];
    if (old.pending && old.batch != batch) {
      wait_for(old.stop);
      old.pending = false;
    }
    if (!old.pending) enqueue(old, batch);
    enqueue(slots_[static_cast<std::size_t>(1 - oldest_)], batch);
    Sample s;
    if (read_clock) read_while_running(s);
    wait_for(old.stop);
    old.pending = false;
    double ms = 0;
    for (std::size_t i = 0; i < lanes_.size(); ++i)
      ms = std::max(ms, static_cast<double>(old.stop[i]->elapsed_ms_since(*old.start[i])));
    s.seconds = ms / 1e3;
    oldest_ = 1 - oldest_;
    mark_end();
    return s;
  }

  void record(const std::vector<std::unique_ptr<Event>>& events) {
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      ScopedDevice on(lanes_[i].device);
      events[i]->record(lanes_[i].stream);
    }
  }
  void wait_for(const std::vector<std::unique_ptr<Event>>& events) {
    std::vector<cudaEvent_t> raw;
    for (const auto& e : events) raw.push_back(e->get());
    if (o_.wait) {
      o_.wait(raw);
      return;
    }
    for (cudaEvent_t e : raw) GPUCHECK_CUDA(cudaEventSynchronize(e));
  }
  void sync_lanes() {
    for (const Lane& l : lanes_) {
      ScopedDevice on(l.device);
      GPUCHECK_CUDA(cudaStreamSynchronize(l.stream));
    }
  }

  Device& dev_;
  const Work& work_;
  const MeasureOptions& o_;
  std::vector<Lane> lanes_;
  std::vector<std::unique_ptr<Event>> start_, stop_;
  std::array<Slot, 2> slots_;
  int oldest_ = 0;
  GraphExec graph_;  // MeasureOptions::graph: one sample's calls, for graph_batch_ of them
  int graph_batch_ = 0;
  std::vector<unsigned> clock_MHz_;       // record_power: every reading, all during timed samples
  std::optional<energy::EnergySteps> energy_;  // record_power: the counter's readings from the calibration's end
  energy::ReadPacer pacer_;                    // queued mode: when a sample's readings are due
  long long paced_ = 0;                        // ... and how many were taken since counting_starts
};

// GPUCHECK_COOLDOWN's rule (energy::parse_cooldown), read once. One that does not parse fails
// every power burst with the reason (a static whose initialiser throws is tried again).
const std::optional<energy::Cooldown>& cooldown_rule() {
  static const std::optional<energy::Cooldown> rule = []() -> std::optional<energy::Cooldown> {
    const char* env = std::getenv("GPUCHECK_COOLDOWN");
    if (env == nullptr || *env == '\0') return std::nullopt;
    std::string err;
    std::optional<energy::Cooldown> r = energy::parse_cooldown(env, &err);
    if (!r) throw std::invalid_argument("GPUCHECK_COOLDOWN: " + err);
    return r;
  }();
  return rule;
}

// Opt-in (GPUCHECK_COOLDOWN): polls NVML until the card's power and temperature are under the
// rule's limits, the temperature has settled (settle_s) or the cap has passed; records the wait,
// how it ended and the temperature it ended at.
void cool_down(const Device& d, Measurement& m) {
  const std::optional<energy::Cooldown>& rule = cooldown_rule();
  if (!rule) return;
  const SteadyClock clock;
  const energy::CooldownWait w = energy::wait_cooled(
      *rule,
      [&d] {
        const Telemetry t = d.refresh_telemetry();
        return energy::PowerTemp{t.power_W, t.temperature_C};
      },
      [&clock] { return clock.now_s(); },
      [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); });
  m.cooldown_s = w.waited_s;
  m.start_temp_C = w.temp_C;
  m.cooldown_capped = w.capped;
  m.cooldown_settled = w.settled;
}

}  // namespace

MeasureOptions default_measure(const Device& d) {
  MeasureOptions o;
  // Quick: a figure known to +-0.5% (95%) or 0.5 s of sampling; full: up to 2 s.
  o.plan.stop.max_time_s = d.full() ? 2.0 : 0.5;
  o.plan.sm_clock_max_MHz = d.telemetry().sm_clock_max_MHz;
  return o;
}

MeasureOptions power_burst(MeasureOptions o) {
  o.settle_s = 0.3;
  o.plan.warmup_calls = 5;
  o.plan.warmup_s = 0;
  o.plan.stop.min_samples = o.plan.stop.max_samples = 20;
  o.plan.clock_read_interval_s = 0;  // a reading in every sample: the clock's mean over the burst
  o.record_power = true;
  o.wait_cooldown = true;
  return o;
}

MeasureOptions power_plateau(MeasureOptions o, double load_s, double window_s) {
  o.mode = TimingMode::queued;  // continuous load: a held sample idles the card while it queues
  o.settle_s = 0.3;
  o.plan.warmup_calls = 5;
  o.plan.warmup_s = 0;
  o.plan.discard_s = load_s;
  o.plan.stop.min_time_s = o.plan.stop.max_time_s = load_s + window_s;
  o.plan.stop.target_cv = o.plan.stop.target_rel_ci = 0;  // the whole window, whatever the noise
  o.plan.stop.min_samples = 10;
  o.plan.stop.max_samples = 1 << 20;
  o.plan.clock_read_interval_s = 0;
  o.plan.min_sample_s = kPlateauSampleS;
  o.plan.max_batch = kPlateauMaxBatch;
  o.record_power = true;
  o.wait_cooldown = false;
  o.graph = true;
  return o;
}

void redraw_memory_state(Device& d) {
  DeviceBuffer scratch(kRedrawBytes);
  GPUCHECK_CUDA(cudaMemsetAsync(scratch.get(), 1, kRedrawBytes, d.stream()));
  GPUCHECK_CUDA(cudaStreamSynchronize(d.stream()));
}  // freed here

namespace {

// One group of samples (MeasureOptions::groups) from a fresh source into m: its samples,
// median and, with record_power, the clock and power over them.
void sample_group(GpuSource& src, const MeasureOptions& opt, Measurement& m) {
  m.sampled = run_sampling(src, opt.plan, SteadyClock(), opt.agree);
  src.drain();
  m.per_call_s = m.sampled.stats.median;
  m.sm_clock_mean_MHz.reset();
  m.power_W.reset();
  src.power_over(m);
  if (!(m.per_call_s > 0) || !std::isfinite(m.per_call_s))
    throw GpuError("timing: the median sample is " + std::to_string(m.per_call_s) + " s; nothing was measured");
}

}  // namespace

Measurement measure(Device& d, const Work& work, const MeasureOptions& o) {
  MeasureOptions opt = o;
  if (opt.mode == TimingMode::cold) opt.plan.max_batch = 1;  // every call sees a flushed L2
  if (!opt.plan.sm_clock_max_MHz) opt.plan.sm_clock_max_MHz = d.telemetry().sm_clock_max_MHz;
  if (host_bound(opt.mode) && opt.plan.host_reference_every == 0) opt.plan.host_reference_every = 1;
  // Before the settle: a process's first source runs the launches_block probe, which must not
  // fall between the idle and the warm-up.
  auto src = std::make_unique<GpuSource>(d, work, opt);
  if (opt.settle_s > 0) {
    GPUCHECK_CUDA(cudaDeviceSynchronize());
    std::this_thread::sleep_for(std::chrono::duration<double>(opt.settle_s));
  }
  Measurement m;
  if (opt.wait_cooldown) cool_down(d, m);
  m.mode = opt.mode;
  m.graph = replays_graphs(opt);
  if (opt.groups <= 1) {
    sample_group(*src, opt, m);
    return m;
  }
  std::vector<Measurement> groups;
  std::vector<double> medians;
  for (int g = 0; g < opt.groups; ++g) {
    if (g > 0) src = std::make_unique<GpuSource>(d, work, opt);  // its own energy mark and clock readings
    redraw_memory_state(d);
    groups.push_back(m);
    sample_group(*src, opt, groups.back());
    medians.push_back(groups.back().per_call_s);
  }
  const GroupPick pick = *fastest_group(medians);  // sample_group threw on a median that measured nothing
  Measurement best = std::move(groups[pick.index]);
  best.groups = opt.groups;
  best.group_spread = pick.spread;
  return best;
}

void report(benchmark::State& state, const Measurement& m) {
  const Sampled& s = m.sampled;
  state.SetIterationTime(m.per_call_s);
  state.counters[contract::counter::samples] = s.stats.n;
  state.counters[contract::counter::cv_pct] = 100.0 * s.stats.cv;
  state.counters[contract::counter::batch] = s.batch;
  if (s.clock_read) {
    state.counters[contract::counter::throttled_samples] = s.slowed_samples;
    state.counters[contract::counter::clock_event_reasons] = static_cast<double>(s.clock_event_reasons);
    state.counters[contract::counter::throttled] = is_throttling(s.clock_event_reasons) ? 1 : 0;
    if (s.sm_clock_MHz) state.counters[contract::counter::sm_clock_MHz] = *s.sm_clock_MHz;
  }
  if (m.sm_clock_mean_MHz) state.counters[contract::counter::sm_clock_mean_MHz] = *m.sm_clock_mean_MHz;
  if (m.power_W) state.counters[contract::counter::power_W] = *m.power_W;
  if (m.groups > 1) {
    state.counters[contract::counter::groups] = m.groups;
    state.counters[contract::counter::group_spread_pct] = 100.0 * m.group_spread;
  }
  if (host_bound(m.mode))
    if (const auto p10 = percentile(s.per_call_s, 10.0)) state.counters[contract::counter::p10_us] = *p10 * 1e6;
  if (!s.host_reference_s.empty()) {
    // The typical (smaller) and the largest warm reading: compare trusts a reference only when
    // they agree (compare/rules/host_bound.hpp).
    const auto [lo, hi] = std::minmax_element(s.host_reference_s.begin(), s.host_reference_s.end());
    state.counters[contract::counter::host_ref_us] = *lo * 1e6;
    state.counters[contract::counter::host_ref_max_us] = *hi * 1e6;
  }
}

std::string engine_note(const Measurement& m) {
  std::string n;
  if (m.mode != TimingMode::held || m.graph) n += " timing=" + std::string(to_string(m.mode)) + (m.graph ? "_graph" : "");
  if (const std::string noise = noise_note(m.sampled); !noise.empty()) n += " " + noise;
  if (m.groups > 1) n += " groups=" + std::to_string(m.groups);
  if (m.cooldown_s) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " cooldown=%.1fs%s", *m.cooldown_s,
                  m.cooldown_capped ? "(cap)" : m.cooldown_settled ? "(settled)" : "");
    n += buf;
    n += " start=" + (m.start_temp_C ? std::to_string(*m.start_temp_C) + "C" : std::string("?"));
  }
  return n;
}

}  // namespace gpucheck::harness
