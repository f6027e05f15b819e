// `gpucheck accept` without --results: the measuring run. Every selected GPU runs the accept
// suites of bench_pcie, bench_memory and bench_matmul, one binary at a time in its own process
// (the gate's runner), so that each GPU's figures are its own; bench_nccl's accept suite runs
// once over all GPUs of the node; --burn runs bench_matmul's burn suite on every GPU at once.
// The JSON lands under OUT/gpuN/runs, OUT/node/runs and OUT/gpuN/burn/runs, where the judge
// reads it like any results shipped home. A binary that could not run is a failed check.
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "accept/measure.hpp"
#include "runner/gpu_activity.hpp"
#include "base/format.hpp"
#include "gpucheck/core/options.hpp"
#include "runner/suite_runner.hpp"

namespace gpucheck::compare {
namespace {

const char* const kPerGpu[] = {"bench_pcie", "bench_memory", "bench_matmul"};
constexpr double kDefaultTimeoutS = 600;
constexpr double kBurnGraceS = 300;  // set-up, verification and teardown around the burn

Expected<std::vector<int>> devices_to_measure(const AcceptArgs& a, const CliEnvironment& env,
                                              const ActivitySnapshot& snap) {
  if (a.devices) return *a.devices;
  std::size_t n = 0;
  if (env.cuda_visible_devices) {
    const std::string& v = *env.cuda_visible_devices;
    for (std::size_t at = 0; at <= v.size();) {
      const std::size_t comma = std::min(v.find(',', at), v.size());
      if (comma > at) ++n;
      at = comma + 1;
    }
  } else if (snap.known) {
    n = snap.gpus.size();
  } else {
    return Error{"accept", "no GPU found: NVML does not answer (" + snap.reason +
                               "); to judge results measured elsewhere: gpucheck accept --results DIR (or name this "
                               "machine's GPUs with --devices 0,1,...)"};
  }
  if (n == 0)
    return Error{"accept", "no GPU found: nothing to accept here; to judge results measured elsewhere: gpucheck accept "
                           "--results DIR"};
  std::vector<int> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<int>(i);
  return all;
}

AcceptCheck failed_run(const std::string& gpu, const cli::Outcome& o) {
  AcceptCheck c;
  c.gpu = gpu;
  c.check = "run";
  c.item = o.run.name;
  c.verdict = AcceptVerdict::Fail;
  c.measured = "did not run";
  c.note = o.run.reason + " (log " + o.run.log + ")";
  return c;
}

// One plan per folder: OUT/<sub>/runs and OUT/<sub>/logs.
Expected<cli::RunPlan> plan_for(FileSystem& fs, const std::string& out, const std::string& sub,
                                const std::string& bin_dir, const std::string& suite, int device, double timeout_s) {
  cli::RunPlan p;
  p.self = "gpucheck";
  p.bin_dir = bin_dir;
  p.out = join_path(out, sub);
  p.suite = suite;
  p.device = device;
  p.timeout_s = timeout_s;
  for (const char* d : {"runs", "logs"})
    if (auto m = fs.make_dirs(join_path(p.out, d)); !m) return m.error();
  return p;
}

// The burn's runners work at once: their file operations take turns.
class LockedFileSystem final : public FileSystem {
 public:
  explicit LockedFileSystem(FileSystem& fs) : fs_(fs) {}
  [[nodiscard]] Kind kind(const std::string& p) const override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.kind(p);
  }
  [[nodiscard]] Expected<std::string> read(const std::string& p, std::size_t max) const override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.read(p, max);
  }
  [[nodiscard]] Expected<std::vector<std::string>> list(const std::string& d) const override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.list(d);
  }
  Status write(const std::string& p, std::string_view data) override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.write(p, data);
  }
  Status append(const std::string& p, std::string_view data) override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.append(p, data);
  }
  Status rename(const std::string& from, const std::string& to) override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.rename(from, to);
  }
  [[nodiscard]] PathFacts output_facts(const std::string& p) const override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.output_facts(p);
  }
  Status write_output(const std::string& p, std::string_view data) override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.write_output(p, data);
  }
  [[nodiscard]] bool same_file(const std::string& a, const std::string& b) const override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.same_file(a, b);
  }
  Status remove(const std::string& p) override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.remove(p);
  }
  Status make_dirs(const std::string& p) override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.make_dirs(p);
  }
  [[nodiscard]] bool is_executable(const std::string& p) const override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.is_executable(p);
  }
  [[nodiscard]] bool is_link(const std::string& p) const override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.is_link(p);
  }
  Expected<std::unique_ptr<FileLock>> lock(const std::string& p, double wait_s) override {
    const std::lock_guard<std::mutex> l(m_);
    return fs_.lock(p, wait_s);
  }

 private:
  FileSystem& fs_;
  mutable std::mutex m_;
};

}  // namespace

Expected<AcceptMeasurement> measure_accept(const AcceptArgs& a, FileSystem& fs, const CliEnvironment& env, CliOutput& io) {
  if (!env.runner) return Error{"accept", "no process runner"};
  AcceptMeasurement m;
  m.dir = a.out.value_or("results/accept");
  const std::string exe = executable_dir();
  const std::string bin_dir = a.bin_dir.value_or(exe.empty() ? std::string(".") : exe);
  for (const char* b : kPerGpu)
    if (!fs.is_executable(join_path(bin_dir, b)))
      return Error{join_path(bin_dir, b), "not found or not executable: build the benchmarks or give --bin-dir DIR"};
  const double timeout_s = a.timeout_s.value_or(kDefaultTimeoutS);

  ActivitySnapshot snap;
  if (env.gpu_probe) snap = env.gpu_probe->snapshot();
  auto devices = devices_to_measure(a, env, snap);
  if (!devices) return devices.error();
  const ActivityReport act = describe_activity(snap, std::nullopt, 0, static_cast<unsigned>(::getpid()));
  for (const auto& w : act.warnings) io.emit("WARNING: " + w + " (its figures will be low)\n");
  io.emit("accept: " + std::to_string(devices->size()) + " GPU(s), binaries from " + bin_dir + ", results under " + m.dir +
          "\n");

  int no_device = 0, runs = 0;
  cli::Context ctx{fs, env, io};
  for (int d : *devices) {
    const std::string gpu = "GPU " + std::to_string(d);
    auto plan = plan_for(fs, m.dir, "gpu" + std::to_string(d), bin_dir, "accept", d, timeout_s);
    if (!plan) return plan.error();
    cli::SuiteRunner runner(ctx, *plan);
    int i = 0;
    for (const char* b : kPerGpu) {
      const std::string progress = "[" + gpu + " " + std::to_string(++i) + "/" + std::to_string(std::size(kPerGpu)) + "]";
      const cli::Outcome o = runner.run(b, progress, "first", 1, std::nullopt, false);
      if (o.interrupted) return Error{b, "interrupted by a signal"};
      ++runs;
      if (o.no_device) ++no_device;
      // The first binary finds no device: the others would say the same. One line, what to do.
      if (o.no_device && runs == 1) {
        std::string why = o.run.reason.substr(std::min(o.run.reason.size(), cli::kCouldNotRun.size()));
        if (why.starts_with("gpucheck: ")) why.erase(0, 10);
        return Error{"accept", "no GPU: " + std::string(b) + " said \"" + why +
                                   "\"; to judge results measured elsewhere: gpucheck accept --results DIR"};
      }
      if (o.run.status == BinaryRun::Status::Errored) m.failed_runs.push_back(failed_run(gpu, o));
    }
  }
  if (no_device == runs)
    return Error{"accept", "no GPU: the benchmark binaries found no CUDA device; to judge results measured elsewhere: "
                           "gpucheck accept --results DIR"};

  // NCCL over every GPU of the node (single process), where there is more than one.
  const bool whole_node = !a.devices;
  if (whole_node && devices->size() > 1 && fs.is_executable(join_path(bin_dir, "bench_nccl"))) {
    auto plan = plan_for(fs, m.dir, "node", bin_dir, "accept", 0, timeout_s);
    if (!plan) return plan.error();
    cli::SuiteRunner runner(ctx, *plan);
    const cli::Outcome o = runner.run("bench_nccl", "[node]", "first", 1, std::nullopt, false);
    if (o.interrupted) return Error{"bench_nccl", "interrupted by a signal"};
    if (o.run.status == BinaryRun::Status::Errored) m.failed_runs.push_back(failed_run("node", o));
  } else {
    m.notes.push_back(whole_node ? "NCCL not run: one GPU" : "NCCL not run: --devices selects part of the node");
  }

  // Burn: every GPU at once (the node's power and cooling under full load), each in its own
  // process; their progress lines are serialised.
  if (a.burn_s) {
    std::mutex emit_lock;
    CliOutput shared;
    shared.live = [&](std::string_view t) {
      const std::lock_guard<std::mutex> l(emit_lock);
      io.emit(std::string(t));
    };
    LockedFileSystem locked(fs);
    cli::Context burn_ctx{locked, env, shared};
    std::vector<cli::RunPlan> plans;
    for (int d : *devices) {
      auto plan = plan_for(fs, m.dir, "gpu" + std::to_string(d) + "/burn", bin_dir, "burn", d, *a.burn_s + kBurnGraceS);
      if (!plan) return plan.error();
      plan->extra_args = {"--burn-seconds", format_double("%g", *a.burn_s)};
      plans.push_back(std::move(*plan));
    }
    std::vector<cli::Outcome> outcomes(plans.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < plans.size(); ++i)
      threads.emplace_back([&, i] {
        cli::SuiteRunner runner(burn_ctx, plans[i]);
        outcomes[i] = runner.run("bench_matmul", "[burn GPU " + std::to_string(plans[i].device) + "]", "first", 1,
                                 std::nullopt, false);
      });
    for (auto& t : threads) t.join();
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      if (outcomes[i].interrupted) return Error{"bench_matmul", "interrupted by a signal"};
      if (outcomes[i].run.status == BinaryRun::Status::Errored)
        m.failed_runs.push_back(failed_run("GPU " + std::to_string(plans[i].device), outcomes[i]));
    }
  }
  return m;
}

}  // namespace gpucheck::compare
