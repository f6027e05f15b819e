#include "gpucheck/harness/registry.hpp"

#include <exception>

#include "gpucheck/check_cuda.hpp"
#include "gpucheck/harness/device.hpp"

namespace gpucheck::harness {

Registry::Registry(Device& device) : device_(device) {}

Registry::~Registry() {
  release_current();
  // Family state (handles, caches) goes before the device and the CUDA runtime.
  while (!kept_.empty()) kept_.pop_back();
}

MeasureOptions Registry::defaults() const { return default_measure(device_); }

void Registry::release_current() {
  current_.reset();
  current_name_.clear();
}

void skip_case(benchmark::State& state, const std::string& reason) {
#ifdef GPUCHECK_HAVE_SKIP_WITH_MESSAGE
  state.SkipWithMessage(reason);
#else
  state.SkipWithError((std::string(contract::kUnsupportedPrefix) + reason).c_str());
#endif
}

void Registry::add(Case c) {
  auto shared = std::make_shared<const Case>(std::move(c));
  benchmark::RegisterBenchmark(shared->name.c_str(),
                               [this, shared](benchmark::State& st) { run_case(st, *shared); })
      ->UseManualTime()
      ->Iterations(1)  // one measurement per repetition: the engine takes the samples
      ->Unit(benchmark::kMicrosecond);
  ++registered_;
}

std::optional<std::string> exceeds_free_memory(std::uint64_t bytes) {
  std::size_t free_b = 0, total = 0;
  if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) return std::nullopt;  // set-up will say
  if (static_cast<double>(bytes) <= 0.95 * static_cast<double>(free_b)) return std::nullopt;
  const auto mib = [](std::uint64_t b) { return std::to_string((b + (1u << 20) - 1) >> 20) + " MiB"; };
  return "needs " + mib(bytes) + ", " + mib(free_b) + " free";
}

void Registry::add_unsupported(const std::string& name, const std::string& reason) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [reason](benchmark::State& st) {
                                 skip_case(st, reason);
                                 for ([[maybe_unused]] auto _ : st) {
                                 }
                               })
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kMicrosecond);
  ++registered_;
}

Op& Registry::prepare(const Case& c) {
  if (current_ && current_name_ == c.name) return *current_;  // a repetition: same data, verified
  release_current();  // the previous case's memory goes first
  std::unique_ptr<Op> op = c.setup();
  op->verify();
  current_ = std::move(op);
  current_name_ = c.name;
  return *current_;
}

void Registry::run_case(benchmark::State& state, const Case& c) {
  std::string skipped, failed;
  for ([[maybe_unused]] auto _ : state) {
    try {
      Op& op = prepare(c);
      MeasureOptions o = c.measure;
      if (std::vector<Lane> lanes = op.lanes(); !lanes.empty()) o.lanes = std::move(lanes);
      o.between_samples = [&op, &c] {
        if (c.measure.between_samples) c.measure.between_samples();
        op.between_samples();
      };
      o.during_sample = [&op, &c] {
        if (c.measure.during_sample) c.measure.during_sample();
        op.during_sample();
      };
      const Measurement m = measure(device_, [&op](cudaStream_t s) { op.run(s); }, o);
      op.verify_after();
      report(state, m);
      state.counters[contract::counter::method] = c.method;
      for (const Rate& r : c.rates) state.counters[r.counter] = r.amount / m.per_call_s / r.unit;
      op.add_counters(state, m);
      std::string label = op.label() + engine_note(m);
      if (!label.empty() && label.front() == ' ') label.erase(0, 1);
      if (!label.empty()) state.SetLabel(label);
    } catch (const Unsupported& e) {
      release_current();
      skipped = e.what();
    } catch (const std::exception& e) {
      release_current();
      failed = e.what();
    }
  }
  // Outside the loop: Google Benchmark then records no iteration for the case.
  if (!skipped.empty()) skip_case(state, skipped);
  if (!failed.empty()) {
    ++failed_;
    state.SkipWithError(failed.c_str());
  }
}

}  // namespace gpucheck::harness
