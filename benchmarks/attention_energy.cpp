// attention_energy: what the power limit does to fused attention, ours (`flash`, the automatic
// pick) and cuDNN's SDPA (the suite's graph, attention_cudnn.hpp) on the same inputs. The
// suite times each case as a burst (0.3 s idle, 5 + 20 calls: bench_attention.cpp); on the
// longest rows the H200 reaches its power limit inside that window, so the burst reads the
// power controller's transient as much as the kernel. This tool runs each kernel back to back
// for --seconds after --idle seconds of rest, reading the time, NVML's energy counter and the
// SM clock between chunks of calls, and prints both parts (gpucheck/core/energy.hpp): the
// burst (the first 90 ms) and the steady state, with the energy of a call and per FLOP.
// The order per case is ours, cuDNN, cuDNN, ours. Every kernel's output is checked against
// the fp64 reference on sampled rows before it is timed. NVML's energy counter moves in
// steps, so a steady part under a second gives rough energy figures (short runs disagree on
// the same call); the default run is 2.5 s. Nothing here changes
// a card's settings.
//
//   attention_energy [--shape b1h32s16384d128] [--dtype fp16|bf16|both] [--mask causal|none|both]
//                    [--seconds 2.5] [--idle 2] [--device 0]
//
// Exit status: 0 measured; 1 a check failed or CUDA/cuDNN failed (one line says which); 2 bad
// usage or no CUDA device.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "attention_check.hpp"
#include "attention_cudnn.hpp"
#include "gpucheck/core/args.hpp"
#include "gpucheck/core/energy.hpp"
#include "gpucheck/harness/cudnn_handle.hpp"
#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/memory.hpp"
#include "gpucheck/kernels/attention.cuh"
#include "gpucheck/kernels/fill.cuh"

namespace gpucheck {
namespace {

using kernels::AttentionKernel;
using kernels::AttentionProblem;

constexpr double kBurstS = 0.09;     // about the suite's 5 + 20 calls of the longest rows
constexpr double kSteadyFrom = 0.4;  // the last 60% of a run

int usage(const std::string& why) {
  std::fprintf(stderr, "attention_energy: %s\n", why.c_str());
  return 2;
}

// Seconds as a finite number in [lo, hi].
std::optional<double> seconds(const std::string& s, double lo, double hi) {
  const auto v = args::to_number(s);
  if (!v || !std::isfinite(*v) || *v < lo || *v > hi) return std::nullopt;
  return v;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One problem's inputs, the output, and a check of what a kernel wrote.
struct Problem {
  AttentionProblem p;
  harness::DeviceBuffer q, k, v, o;
  explicit Problem(const AttentionProblem& prob)
      : p(prob),
        q(prob.q_elems() * storage_bytes(prob.dtype)),
        k(prob.kv_elems() * storage_bytes(prob.dtype)),
        v(prob.kv_elems() * storage_bytes(prob.dtype)),
        o(prob.q_elems() * storage_bytes(prob.dtype)) {
    attention_check::fill_inputs(p, q.get(), k.get(), v.get(), 11, nullptr);  // the suite's inputs
  }
  // "" when O (poisoned before the run) passes the suite's check, else why not.
  std::string check() const { return attention_check::output_error(p, q.get(), k.get(), v.get(), o.get(), 14, nullptr); }
};

// Runs `call` back to back for `run_s` seconds after `idle_s` of rest, two chunks in flight so
// the readings between chunks leave the GPU busy.
template <class Call>
std::vector<energy::Reading> power_run(harness::Device& dev, cudaStream_t st, Call call, double idle_s, double run_s) {
  GPUCHECK_CUDA(cudaStreamSynchronize(st));
  // A chunk of about 5 ms (at least 4 calls), from one call timed now.
  const double c0 = now_s();
  call();
  GPUCHECK_CUDA(cudaStreamSynchronize(st));
  const int chunk = std::max(4, static_cast<int>(std::ceil(0.005 / std::max(now_s() - c0, 1e-6))));
  std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
  cudaEvent_t ev[2];
  for (auto& e : ev) GPUCHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  auto reading = [&](double t, long long calls) {
    const Telemetry tel = dev.read_power();
    return energy::Reading{t, calls, tel.energy_J, tel.sm_clock_MHz};
  };
  std::vector<energy::Reading> r{reading(0, 0)};
  const double t0 = now_s();
  auto enqueue = [&](int slot) {
    for (int i = 0; i < chunk; ++i) call();
    GPUCHECK_CUDA(cudaEventRecord(ev[slot], st));
  };
  enqueue(0);
  long long done = 0;
  bool more = true;
  for (int k = 0; more; ++k) {
    more = now_s() - t0 < run_s;
    if (more) enqueue((k + 1) % 2);
    GPUCHECK_CUDA(cudaEventSynchronize(ev[k % 2]));
    done += chunk;
    r.push_back(reading(now_s() - t0, done));
  }
  for (auto& e : ev) GPUCHECK_CUDA(cudaEventDestroy(e));
  return r;
}

int run(int argc, char** argv) {
  args::OptionSet known{{"--shape", "--dtype", "--mask", "--seconds", "--idle", "--device"}, {"--help"}};
  args::Parsed a;
  args::ParseError perr;
  const std::vector<std::string> in = args::from_argv(argc, argv);
  if (!args::parse(in, known, &a, &perr)) return usage(perr.str());
  if (a.flag("--help")) {
    std::puts(
        "attention_energy [--shape b1h32s16384d128] [--dtype fp16|bf16|both] [--mask causal|none|both]\n"
        "                 [--seconds 2.5] [--idle 2] [--device 0]\n"
        "Ours and cuDNN's fused attention back to back under the power limit: the burst (first 90 ms)\n"
        "and the steady state, with the energy of a call (NVML). docs/ATTENTION.md, \"Why each shape\n"
        "still under cuDNN is there\".");
    return 0;
  }
  if (!a.positional.empty()) return usage("unexpected argument '" + a.positional.front() + "'");
  const std::string label = a.value("--shape").value_or("b1h32s16384d128");
  const auto shape = energy::parse_shape(label);
  if (!shape) return usage("--shape '" + label + "': expected b<batch>h<heads>[kv<n>]s<seq>[sk<keys>]d<head dim>");
  const int kv = shape->kv_heads ? shape->kv_heads : shape->heads;
  if (shape->heads % kv != 0) return usage("--shape '" + label + "': kv heads must divide heads");
  std::vector<DType> dtypes;
  const std::string dt = a.value("--dtype").value_or("both");
  if (dt == "fp16" || dt == "both") dtypes.push_back(DType::fp16);
  if (dt == "bf16" || dt == "both") dtypes.push_back(DType::bf16);
  if (dtypes.empty()) return usage("--dtype '" + dt + "': expected fp16, bf16 or both");
  std::vector<bool> masks;
  const std::string mk = a.value("--mask").value_or("both");
  if (mk == "causal" || mk == "both") masks.push_back(true);
  if (mk == "none" || mk == "both") masks.push_back(false);
  if (masks.empty()) return usage("--mask '" + mk + "': expected causal, none or both");
  const auto run_s = seconds(a.value("--seconds").value_or("2.5"), 0.2, 600);
  if (!run_s) return usage("--seconds: expected a number of seconds in [0.2, 600]");
  const auto idle_s = seconds(a.value("--idle").value_or("2"), 0, 600);
  if (!idle_s) return usage("--idle: expected a number of seconds in [0, 600]");
  Options opt;
  const std::string dev_text = a.value("--device").value_or("0");
  const auto dev_index = args::to_integer(dev_text);
  if (!dev_index || *dev_index < 0 || *dev_index > 9999)
    return usage("--device '" + dev_text + "': expected a device index");
  opt.device = static_cast<int>(*dev_index);
  const DeviceCount devices = cuda_device_count();
  if (devices.count == 0) return usage(devices.none);
  if (opt.device >= devices.count) return usage("--device " + dev_text + " out of range");

  harness::Device dev(opt);
  if (!dev.nvml_loaded()) std::printf("note: NVML not loaded (%s): no energy figures\n", dev.nvml_note().c_str());
  std::printf("%s, SM clock max %u MHz, power limit %.0f W (0: unknown)\n", dev.props().name,
              dev.telemetry().sm_clock_max_MHz.value_or(0), dev.telemetry().power_limit_W.value_or(0));
  harness::CudnnHandle cudnn;
  const cudaStream_t st = dev.stream();
  GPUCHECK_CUDNN(cudnnSetStream(cudnn.get(), st));
  int status = 0;
  for (bool causal : masks)
    for (DType t : dtypes) {
      AttentionProblem p;
      p.batch = shape->batch;
      p.heads = shape->heads;
      p.kv_heads = shape->kv_heads;
      p.seq_q = shape->seq_q;
      p.seq_k = shape->seq_k ? shape->seq_k : shape->seq_q;
      p.head_dim = shape->head_dim;
      p.dtype = t;
      p.causal = causal;
      p.scale = 1.f / std::sqrt(static_cast<float>(p.head_dim));
      kernels::validate_attention(p);
      const std::string name = std::string(t == DType::fp16 ? "fp16" : "bf16") + "/" + label + (causal ? "/causal" : "");
      // The suite's count: 4 d per visible (query, key) pair, the causal diagonal by half.
      const double sq = p.seq_q, sk = p.seq_k;
      const double flops = 4.0 * p.batch * p.heads * p.head_dim * (causal ? sq * (sk - sq / 2) : sq * sk);
      Problem prob(p);
      std::optional<attention_cudnn::Sdpa> sdpa;
      harness::DeviceBuffer ws;
      try {
        sdpa.emplace(cudnn.get(), attention_cudnn::spec_for(p), std::size_t(1) << 30);
        ws = harness::DeviceBuffer(sdpa->workspace_bytes());
      } catch (const Unsupported& e) {
        std::printf("%s: cudnn skipped (%s)\n", name.c_str(), e.what());
      }
      auto ours = [&] {
        kernels::flash_attention_fwd(p, prob.q.get(), prob.k.get(), prob.v.get(), prob.o.get(), nullptr, st,
                                     AttentionKernel::automatic);
      };
      auto theirs = [&] { sdpa->execute(cudnn.get(), prob.q.get(), prob.k.get(), prob.v.get(), prob.o.get(), ws.get()); };
      struct Row {
        const char* who;
        std::vector<energy::Summary> runs;
      };
      Row rows[2] = {{"ours", {}}, {"cudnn", {}}};
      for (int i = 0; i < 4; ++i) {
        const bool is_ours = i == 0 || i == 3;
        if (!is_ours && !sdpa) continue;
        // Checked before it is timed: poisoned, run, every element written, sampled rows
        // against the reference (attention_check.hpp).
        kernels::poison(prob.o.get(), prob.o.bytes(), st);
        is_ours ? ours() : theirs();
        GPUCHECK_CUDA(cudaStreamSynchronize(st));
        if (const std::string bad = prob.check(); !bad.empty()) {
          std::printf("%s: %s FAILED its check (%s): not timed\n", name.c_str(), is_ours ? "ours" : "cudnn", bad.c_str());
          status = 1;
          break;
        }
        const auto readings = is_ours ? power_run(dev, st, ours, *idle_s, *run_s) : power_run(dev, st, theirs, *idle_s, *run_s);
        energy::Summary s;
        std::string err;
        if (!energy::summarize(readings, kBurstS, kSteadyFrom, &s, &err)) {
          std::printf("%s: %s: %s\n", name.c_str(), is_ours ? "ours" : "cudnn", err.c_str());
          status = 1;
          continue;
        }
        rows[is_ours ? 0 : 1].runs.push_back(s);
        std::printf("%-36s %-5s burst %7.1f TFLOP/s (%lld calls in %.0f ms, %u MHz at its end) | steady %7.1f TFLOP/s",
                    name.c_str(), is_ours ? "ours" : "cudnn", flops * s.burst_rate * 1e-12, s.burst_calls, s.burst_s * 1e3,
                    s.burst_end_clock_MHz.value_or(0), flops * s.steady_rate * 1e-12);
        if (s.joules_per_call)
          std::printf(", %.1f mJ/call, %.3f pJ/FLOP, %.0f W", *s.joules_per_call * 1e3, *s.joules_per_call / flops * 1e12,
                      s.mean_power_W.value_or(0));
        if (s.mean_clock_MHz) std::printf(", %.0f MHz", *s.mean_clock_MHz);
        std::printf("\n");
        std::fflush(stdout);
      }
      if (rows[0].runs.size() == 2 && rows[1].runs.size() == 2) {
        auto mean = [](const Row& r, auto f) { return (f(r.runs[0]) + f(r.runs[1])) / 2; };
        const double steady = mean(rows[0], [](const energy::Summary& s) { return s.steady_rate; }) /
                              mean(rows[1], [](const energy::Summary& s) { return s.steady_rate; });
        const double burst = mean(rows[0], [](const energy::Summary& s) { return s.burst_rate; }) /
                             mean(rows[1], [](const energy::Summary& s) { return s.burst_rate; });
        std::printf("%-36s ours / cudnn: burst %.3f, steady %.3f", name.c_str(), burst, steady);
        const bool joules = rows[0].runs[0].joules_per_call && rows[0].runs[1].joules_per_call &&
                            rows[1].runs[0].joules_per_call && rows[1].runs[1].joules_per_call;
        if (joules)
          std::printf(", energy per call %.3f", mean(rows[0], [](const energy::Summary& s) { return *s.joules_per_call; }) /
                                                    mean(rows[1], [](const energy::Summary& s) { return *s.joules_per_call; }));
        std::printf("\n");
      }
    }
  return status;
}

}  // namespace
}  // namespace gpucheck

int main(int argc, char** argv) {
  try {
    return gpucheck::run(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "attention_energy: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attention_energy: %s\n", e.what());
    return 1;
  }
}
