// bench_pcie: host<->device copies over PCIe in GB/s (1e9 bytes/s): H2D, D2H and
// bidirectional (H2D and D2H at once on two streams; GBps counts both directions' bytes),
// from pinned (cudaHostAlloc) and pageable (malloc'd, touched first) host memory, 4 KiB to
// 1 GiB. Small copies also report latency_us: the GPU-side time of one copy.
//
// How to read the numbers: pinned one-way copies go through the harness's timer (spin kernel
// holds the stream, events around back-to-back copies), which is what PyTorch's
// event-timed tensor.to() measures at 256 MiB. Pageable copies block the host inside
// cudaMemcpyAsync (the driver stages them through its own pinned buffer), so they cannot sit
// behind a held stream: they are timed with events recorded on the stream around the copies
// while the host waits in the call; that includes the staging, which is the point. pct_of_link
// is over the trained link's theoretical one-way rate (twice that for bidirectional).
// Every copy moves a byte pattern that is checked after it lands, before and after timing.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpucheck/core/collectives.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/pcie.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/harness/timing.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/spin.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck {
namespace {

using harness::DeviceBuffer;
using harness::Event;
using harness::PinnedBuffer;

enum class Dir { h2d, d2h, bidir };
enum class Mem { pinned, pageable };

constexpr std::size_t kLatencyMaxBytes = std::size_t{64} << 10;  // latency_us on copies this small

struct PcieCase {
  Dir dir;
  Mem mem;
  std::size_t bytes;  // per direction
  std::string name() const {
    const char* d = dir == Dir::h2d ? "h2d" : dir == Dir::d2h ? "d2h" : "bidir";
    return bench_name({"pcie", d, mem == Mem::pinned ? "pinned" : "pageable", bytes_label(bytes)});
  }
};

// Host memory of either kind. Pageable memory is plain malloc. Every page then holds real
// bytes (the pattern, or 0xFF before a D2H copy) before anything is timed: first-touch faults
// stay out of the timed copies, and no page is the kernel's shared zero page. (A never-written
// buffer maps that one page everywhere; pageable H2D from it ran at 19 GB/s on the H200
// against 7 for real data, since the driver's staging memcpy then reads one cached page:
// docs/PERFORMANCE.md. malloc + memset(0) can be turned into calloc and stay unwritten.)
class HostBuffer {
 public:
  HostBuffer(std::size_t bytes, Mem mem) : bytes_(bytes) {
    if (mem == Mem::pinned) {
      pinned_ = PinnedBuffer(bytes);
      p_ = pinned_.get();
    } else {
      pageable_.reset(std::malloc(bytes));
      if (!pageable_) throw GpuError("malloc of " + bytes_label(bytes) + " of pageable host memory failed");
      p_ = pageable_.get();
      std::memset(p_, 0, bytes);
    }
  }
  void* get() const { return p_; }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const noexcept { std::free(p); }
  };
  std::size_t bytes_;
  PinnedBuffer pinned_;
  std::unique_ptr<void, Free> pageable_;
  void* p_ = nullptr;
};

// One direction of traffic: a device buffer, a host buffer and the pattern they carry.
class Lane {
 public:
  Lane(bool to_device, std::size_t bytes, Mem mem, cudaStream_t s)
      : to_device_(to_device), dev_(bytes), host_(bytes, mem),
        seed_(static_cast<std::uint32_t>(std::random_device{}())) {
    if (to_device_) {
      // The source pattern reaches the host through the device (the generator lives there),
      // then the H2D copy brings it back: a round trip checked in verify().
      kernels::fill_pattern_u8(dev_.get(), bytes, seed_, s);
      GPUCHECK_CUDA(cudaMemcpyAsync(host_.get(), dev_.get(), bytes, cudaMemcpyDeviceToHost, s));
      GPUCHECK_CUDA(cudaStreamSynchronize(s));
    } else {
      kernels::fill_pattern_u8(dev_.get(), bytes, seed_, s);
      check_ = DeviceBuffer(bytes);
      GPUCHECK_CUDA(cudaStreamSynchronize(s));
    }
  }
  // The timed copy.
  cudaError_t copy(cudaStream_t s) const {
    return to_device_ ? cudaMemcpyAsync(dev_.get(), host_.get(), host_.bytes(), cudaMemcpyHostToDevice, s)
                      : cudaMemcpyAsync(host_.get(), dev_.get(), host_.bytes(), cudaMemcpyDeviceToHost, s);
  }
  // Overwrites the destination so that a copy that did not happen cannot pass.
  void clobber_destination(cudaStream_t s) {
    if (to_device_) {
      kernels::poison(dev_.get(), dev_.bytes(), s);
    } else {
      GPUCHECK_CUDA(cudaStreamSynchronize(s));
      std::memset(host_.get(), 0xFF, host_.bytes());
    }
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
  }
  // Counts bytes at the destination that differ from the pattern (after a sync of `s`).
  void verify(const std::string& name, cudaStream_t s) const {
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    std::uint64_t bad = 0;
    if (to_device_) {
      bad = kernels::count_pattern_mismatches(dev_.get(), dev_.bytes(), seed_, s);
    } else {
      // Bring the host copy back to the device, where the pattern is checked.
      kernels::poison(check_.get(), check_.bytes(), s);
      GPUCHECK_CUDA(cudaMemcpyAsync(check_.get(), host_.get(), host_.bytes(), cudaMemcpyHostToDevice, s));
      bad = kernels::count_pattern_mismatches(check_.get(), check_.bytes(), seed_, s);
    }
    if (bad != 0)
      throw VerificationError(name + ": " + std::to_string(bad) + " of " + std::to_string(dev_.bytes()) +
                              (to_device_ ? " bytes copied to the device" : " bytes copied to the host") +
                              " differ from the source");
  }

 private:
  bool to_device_;
  DeviceBuffer dev_;
  HostBuffer host_;
  DeviceBuffer check_;
  std::uint32_t seed_;
};

void set_flag(volatile int* f, int v) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *f = v;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

// Our own sample loop (pageable and bidirectional copies): `sample(batch)` enqueues `batch`
// calls between events and returns the elapsed milliseconds. Warm-up first; small calls are
// batched like the harness does. Returns the mean time per call.
double time_samples(benchmark::State& state, const std::function<double(int)>& sample) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    sample(1);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i + 1 >= 3 && ms >= 50) break;
  }
  const double one_ms = sample(1);
  int batch = 1;
  if (one_ms > 0 && one_ms < 0.5) batch = std::clamp(static_cast<int>(std::ceil(0.5 / one_ms)), 1, 64);
  double total_s = 0;
  std::int64_t calls = 0;
  while (state.KeepRunningBatch(batch)) {
    const double s = sample(batch) / 1e3;
    state.SetIterationTime(s);
    total_s += s;
    calls += batch;
  }
  if (calls == 0) throw GpuError("timing: no iterations were run");
  return total_s / static_cast<double>(calls);
}

// Pageable one-way copies: events on the stream around copies that block the host.
double time_pageable(benchmark::State& state, const Lane& lane, cudaStream_t s) {
  Event start, stop;
  return time_samples(state, [&](int batch) {
    start.record(s);
    for (int b = 0; b < batch; ++b) GPUCHECK_CUDA(lane.copy(s));
    stop.record(s);
    return static_cast<double>(stop.elapsed_ms_since(start));
  });
}

// Both directions at once: H2D on s1, D2H on s2, between one start event (s2 waits for it)
// and one stop event (s1 waits for s2's end). Pinned: the spin kernel holds s1 while the host
// queues everything, so neither copy starts late. Pageable: each copy blocks the host thread
// that issues it, so the D2H copies are issued from a second thread.
double time_bidir(benchmark::State& state, const Lane& up, const Lane& down, Mem mem, cudaStream_t s1,
                  cudaStream_t s2) {
  harness::Device& dev = harness::Device::get();
  Event start, mid, stop;
  GPUCHECK_CUDA(cudaMemsetAsync(dev.spin_timed_out(), 0, sizeof(int), s1));
  const double per_call = time_samples(state, [&](int batch) {
    if (mem == Mem::pinned) {
      set_flag(dev.host_flag(), 0);
      kernels::spin_until_flag(dev.device_view_of_flag(), dev.spin_timed_out(), 2'000'000'000ull, s1);
    }
    start.record(s1);
    GPUCHECK_CUDA(cudaStreamWaitEvent(s2, start.get(), 0));
    if (mem == Mem::pinned) {
      for (int b = 0; b < batch; ++b) {
        GPUCHECK_CUDA(up.copy(s1));
        GPUCHECK_CUDA(down.copy(s2));
      }
    } else {
      cudaError_t down_err = cudaSuccess;
      const int device = dev.index();
      std::thread t([&] {
        down_err = cudaSetDevice(device);
        for (int b = 0; b < batch && down_err == cudaSuccess; ++b) down_err = down.copy(s2);
      });
      cudaError_t up_err = cudaSuccess;
      for (int b = 0; b < batch && up_err == cudaSuccess; ++b) up_err = up.copy(s1);
      t.join();
      GPUCHECK_CUDA(up_err);
      GPUCHECK_CUDA(down_err);
    }
    mid.record(s2);
    GPUCHECK_CUDA(cudaStreamWaitEvent(s1, mid.get(), 0));
    stop.record(s1);
    if (mem == Mem::pinned) set_flag(dev.host_flag(), 1);
    return static_cast<double>(stop.elapsed_ms_since(start));
  });
  int timed_out = 0;
  GPUCHECK_CUDA(cudaMemcpyAsync(&timed_out, dev.spin_timed_out(), sizeof(int), cudaMemcpyDeviceToHost, s1));
  GPUCHECK_CUDA(cudaStreamSynchronize(s1));
  if (timed_out) throw GpuError("timing: the stream was held for over 2 s while copies were queued");
  return per_call;
}

struct LinkInfo {
  std::string label;  // "link=Gen5 x16 (max Gen5 x16)"
  double GBps = 0;    // current link, one direction; 0 when unknown
};

LinkInfo link_info(const harness::Device& device) {
  const Telemetry& t = device.telemetry();
  const PcieLink cur{t.pcie_gen_current.value_or(0), t.pcie_width_current.value_or(0)};
  const PcieLink max{t.pcie_gen_max.value_or(0), t.pcie_width_max.value_or(0)};
  return {"link=" + to_string(cur) + " (max " + to_string(max) + ")", pcie_link_GBps(cur)};
}

void pcie_case(benchmark::State& state, const PcieCase& c, const LinkInfo& link) {
  harness::Device& dev = harness::Device::get();
  const cudaStream_t s = dev.stream();
  const std::string name = c.name();
  double per_call_s = 0;
  if (c.dir == Dir::bidir) {
    harness::Stream second;
    Lane up(true, c.bytes, c.mem, s), down(false, c.bytes, c.mem, s);
    up.clobber_destination(s);
    down.clobber_destination(s);
    GPUCHECK_CUDA(up.copy(s));
    GPUCHECK_CUDA(down.copy(second.get()));
    second.sync();
    up.verify(name, s);
    down.verify(name, s);
    per_call_s = time_bidir(state, up, down, c.mem, s, second.get());
    second.sync();
    up.verify(name, s);  // the timed copies carried the same bytes
    down.verify(name, s);
  } else {
    Lane lane(c.dir == Dir::h2d, c.bytes, c.mem, s);
    lane.clobber_destination(s);
    GPUCHECK_CUDA(lane.copy(s));
    lane.verify(name, s);
    if (c.mem == Mem::pinned) {
      const harness::Timing t =
          harness::time_on_stream(state, [&](cudaStream_t st) { GPUCHECK_CUDA(lane.copy(st)); });
      per_call_s = t.mean_s;
    } else {
      per_call_s = time_pageable(state, lane, s);
    }
    lane.verify(name, s);
  }
  const double directions = c.dir == Dir::bidir ? 2.0 : 1.0;
  const double GBps = directions * static_cast<double>(c.bytes) / per_call_s / 1e9;
  state.counters["GBps"] = GBps;
  if (link.GBps > 0) state.counters["pct_of_link"] = 100.0 * GBps / (directions * link.GBps);
  if (c.bytes <= kLatencyMaxBytes) state.counters["latency_us"] = per_call_s * 1e6;
  state.SetLabel(link.label);
}

}  // namespace

void harness::register_benchmarks(Device& device) {
  const LinkInfo link = link_info(device);
  std::vector<PcieCase> cases;
  const std::size_t quick = std::size_t{256} << 20;
  if (device.full()) {
    for (Dir d : {Dir::h2d, Dir::d2h, Dir::bidir})
      for (Mem m : {Mem::pinned, Mem::pageable})
        for (std::uint64_t b : geometric_sizes(std::uint64_t{4} << 10, std::uint64_t{1} << 30, 4))
          cases.push_back({d, m, static_cast<std::size_t>(b)});
  } else {
    cases = {{Dir::h2d, Mem::pinned, quick},   {Dir::h2d, Mem::pageable, quick}, {Dir::d2h, Mem::pinned, quick},
             {Dir::d2h, Mem::pageable, quick}, {Dir::bidir, Mem::pinned, quick}, {Dir::h2d, Mem::pinned, 4096}};
  }
  for (const PcieCase& c : cases)
    register_case(c.name(), [c, link](benchmark::State& st) { pcie_case(st, c, link); });
}

}  // namespace gpucheck
