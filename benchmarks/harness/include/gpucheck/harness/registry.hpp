// A family is a table of cases. A case is a name (the baseline's key), a set-up that returns
// the prepared work (an Op: buffers, handles, the chosen algorithm), the rates its figure
// turns into (FLOPs or bytes per call) and how the engine measures it. The Registry turns
// each case into a Google Benchmark with manual time; the body is the same for every case
// of every family: set up (once per case, reused across repetitions), verify, measure,
// report. A family file never times anything and never reaches for a global device.
#pragma once
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/harness/engine.hpp"

namespace gpucheck::harness {

class Device;

// One case's prepared work.
class Op {
 public:
  virtual ~Op() = default;
  // Enqueues one call on `s` (asynchronous).
  virtual void run(cudaStream_t s) = 0;
  // Checks the result against a reference before any figure is reported; throws
  // VerificationError (an error, never a figure).
  virtual void verify() = 0;
  // After timing, for work whose timed calls can be checked too (e.g. the copies carried the
  // same bytes). Throws like verify().
  virtual void verify_after() {}
  // The lanes the work runs on when it is more than the device's stream (MeasureOptions::lanes).
  virtual std::vector<Lane> lanes() const { return {}; }
  // Untimed, between the engine's samples (e.g. destroy what a host-timed call created).
  virtual void between_samples() {}
  // While a sample's work runs, when the engine reads the clock (e.g. the PCIe link under load).
  virtual void during_sample() {}
  // What the label says of the chosen algorithm, the link, the path.
  virtual std::string label() const { return {}; }
  // Counters beyond the rates (e.g. the link a copy ran on, latency).
  virtual void add_counters(benchmark::State& /*state*/, const Measurement& /*m*/) const {}
};

// A figure derived from the per-call time: counter = amount / seconds / unit.
struct Rate {
  std::string counter;  // a contract::counter name: TFLOPS, GBps, busbw_GBps, ...
  double amount = 0;    // per call: FLOPs, bytes
  double unit = 1;      // 1e12 for TFLOPS, 1e9 for GBps
};
inline Rate tflops(double flops) { return {contract::counter::TFLOPS, flops, 1e12}; }
inline Rate gbps(double bytes) { return {contract::counter::GBps, bytes, 1e9}; }

struct Case {
  std::string name;
  std::function<std::unique_ptr<Op>()> setup;
  std::vector<Rate> rates;
  MeasureOptions measure;
  // The case's way of measuring, written on every row as the counter "method": a change to how
  // the case is timed (its mode, plan, work per call) bumps it, so that no comparison, stored
  // baseline or history series spans two ways of measuring (the tool: not compared).
  int method = 1;
};

class Registry {
 public:
  explicit Registry(Device& device);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Device& device() { return device_; }
  // The engine's defaults for this device and suite; families start from them.
  MeasureOptions defaults() const;
  // The points of the user's --axis (null: the suite's table), set by the shared main.
  const std::vector<axes::Point>* points() const { return points_; }
  void set_points(const std::vector<axes::Point>* p) { points_ = p; }

  // Registers a case (manual time, one measurement per repetition).
  void add(Case c);
  // Registers a case that cannot run here: it appears in the results as skipped with the
  // reason (not an error, not absent).
  void add_unsupported(const std::string& name, const std::string& reason);

  // State a family shares between its cases (handles, caches), owned until the run ends
  // (destroyed before the device).
  template <typename T, typename... Args>
  T& keep(Args&&... args) {
    auto p = std::make_shared<T>(std::forward<Args>(args)...);
    T& ref = *p;
    kept_.push_back(std::move(p));
    return ref;
  }

  // Cases that ended in an error so far (verification failures, CUDA errors).
  int failed() const { return failed_; }
  // Registered cases.
  int size() const { return registered_; }

  // Drops the current case's prepared work (frees its memory).
  void release_current();

 private:
  void run_case(benchmark::State& state, const Case& c);
  Op& prepare(const Case& c);

  Device& device_;
  const std::vector<axes::Point>* points_ = nullptr;
  std::vector<std::shared_ptr<void>> kept_;
  std::string current_name_;
  std::unique_ptr<Op> current_;
  int failed_ = 0;
  int registered_ = 0;
};

// When `bytes` do not fit in the current device's free memory (less 5% kept for the libraries):
// the reason a case is skipped ("needs 9216 MiB, 8000 MiB free"); nullopt when they fit.
std::optional<std::string> exceeds_free_memory(std::uint64_t bytes);

// Marks a case skipped with a reason: Google Benchmark 1.8's SkipWithMessage where the
// library has it; with 1.7, SkipWithError with the message prefixed
// contract::kUnsupportedPrefix, which the compare tool reads as skipped (docs/ARCHITECTURE.md).
void skip_case(benchmark::State& state, const std::string& reason);

}  // namespace gpucheck::harness
