// bench_pcie: host<->device copies over PCIe in GB/s (1e9 bytes/s): H2D, D2H and
// bidirectional (H2D and D2H at once on two streams; GBps counts both directions' bytes),
// from pinned (cudaHostAlloc) and pageable (malloc'd, touched first) host memory, 4 KiB to
// 1 GiB. Small copies also report latency_us: the GPU-side time of one copy.
//
// How to read the numbers: pinned copies are timed held (the engine's spin kernel holds the
// stream, events around back-to-back copies), which is what PyTorch's event-timed
// tensor.to() measures at 256 MiB; bidirectional pinned copies hold two streams, one per
// direction, released together. Pageable copies block the host inside cudaMemcpyAsync (the
// driver stages them through its own pinned buffer), so they cannot sit behind a held
// stream: they are timed per call (events around the copies while the host waits in the
// call); that includes the staging, which is the point. The pageable buffer is written (and
// so faulted in) before timing and reused by every call: the figure is the staging path, not
// page-fault cost. pct_of_link is over the link's theoretical one-way rate (twice that for
// bidirectional), the link being the one read WHILE the copies ran (counters
// pcie_gen_load / pcie_width_load: links drop to a low generation at idle to save power, so
// the context's idle reading can be low on a healthy card). Every copy moves a byte pattern
// that is checked after it lands, before and after timing.
//
// Every case also times a host reference (counter host_ref_us, every 5th sample): one memcpy
// of 128 MiB between two pageable host buffers, more than any L3, so through the host's DRAM
// as the copies' DMA goes. The gate compares the copy cases only while it ran within 1.5x of
// the baseline's (baselines/thresholds.json, host_bound): a host busy elsewhere is not a
// regression of ours.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cases/pcie.hpp"
#include "gpucheck/core/collectives.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/pcie.hpp"
#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck {
namespace {

using harness::DeviceBuffer;
using harness::PinnedBuffer;

using pcie::Dir;
using pcie::Mem;
using pcie::PcieCase;

constexpr std::size_t kLatencyMaxBytes = std::size_t{64} << 10;  // latency_us on copies this small

// Host memory of either kind. Pageable memory is plain malloc. Every page then holds real
// bytes (the pattern, or 0xFF before a D2H copy) before anything is timed: first-touch faults
// stay out of the timed copies, and no page is the kernel's shared zero page. (A never-written
// buffer maps that one page everywhere; pageable H2D from it reads far faster than from real
// data, since the driver's staging memcpy then reads one cached page: docs/PERFORMANCE.md.
// malloc + memset(0) can be turned into calloc and stay unwritten.)
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
class Direction {
 public:
  Direction(bool to_device, std::size_t bytes, Mem mem, cudaStream_t s)
      : to_device_(to_device), dev_(bytes), host_(bytes, mem),
        seed_(static_cast<std::uint32_t>(std::random_device{}())) {
    kernels::fill_pattern_u8(dev_.get(), bytes, seed_, s);
    if (to_device_) {
      // The source pattern reaches the host through the device (the generator lives there),
      // then the H2D copy brings it back: a round trip checked in verify().
      GPUCHECK_CUDA(cudaMemcpyAsync(host_.get(), dev_.get(), bytes, cudaMemcpyDeviceToHost, s));
    } else {
      check_ = DeviceBuffer(bytes);
    }
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
  }
  // The timed copy.
  void copy(cudaStream_t s) const {
    if (to_device_) GPUCHECK_CUDA(cudaMemcpyAsync(dev_.get(), host_.get(), host_.bytes(), cudaMemcpyHostToDevice, s));
    else GPUCHECK_CUDA(cudaMemcpyAsync(host_.get(), dev_.get(), host_.bytes(), cudaMemcpyDeviceToHost, s));
  }
  // Overwrites the destination so that a copy that did not happen cannot pass.
  void clobber_destination(cudaStream_t s) {
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    if (to_device_) kernels::poison(dev_.get(), dev_.bytes(), s);
    else std::memset(host_.get(), 0xFF, host_.bytes());
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

// Issues D2H copies from a second host thread, one per call of issue(): a pageable copy
// blocks the thread that issues it, so both directions at once need two threads.
class CopyThread {
 public:
  CopyThread(int device, const Direction& lane, cudaStream_t s) : device_(device), lane_(lane), s_(s), t_([this] { loop(); }) {}
  ~CopyThread() {
    {
      std::lock_guard<std::mutex> l(m_);
      quit_ = true;
    }
    cv_.notify_all();
    t_.join();
  }
  CopyThread(const CopyThread&) = delete;
  CopyThread& operator=(const CopyThread&) = delete;
  void start() {
    {
      std::lock_guard<std::mutex> l(m_);
      ++requested_;
    }
    cv_.notify_all();
  }
  // Waits until the copy asked for by start() was issued (for a pageable D2H: completed).
  void wait() {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [this] { return done_ == requested_; });
    if (!error_.empty()) {
      std::string e = std::move(error_);
      error_.clear();
      throw GpuError(e);
    }
  }

 private:
  void loop() {
    cudaError_t set = cudaSetDevice(device_);
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      cv_.wait(l, [this] { return quit_ || done_ < requested_; });
      if (quit_) return;
      l.unlock();
      std::string err;
      try {
        if (set != cudaSuccess) GPUCHECK_CUDA(set);
        lane_.copy(s_);
      } catch (const std::exception& e) {
        err = e.what();
      }
      l.lock();
      if (!err.empty()) error_ = err;
      ++done_;
      cv_.notify_all();
    }
  }
  int device_;
  const Direction& lane_;
  cudaStream_t s_;
  std::mutex m_;
  std::condition_variable cv_;
  std::uint64_t requested_ = 0, done_ = 0;
  bool quit_ = false;
  std::string error_;
  std::thread t_;  // last: starts after the members it uses
};

// One case: one lane (h2d, d2h) or two on two streams (bidir: H2D on the device's stream,
// D2H on a second one).
class PcieOp final : public harness::Op {
 public:
  PcieOp(const PcieCase& c, harness::Device& dev) : c_(c), dev_(dev) {
    cudaStream_t s = dev_.stream();
    if (c.dir != Dir::d2h) up_ = std::make_unique<Direction>(true, c.bytes, c.mem, s);
    if (c.dir != Dir::h2d) down_ = std::make_unique<Direction>(false, c.bytes, c.mem, s);
    if (c.dir == Dir::bidir && c.mem == Mem::pageable) thread_ = std::make_unique<CopyThread>(dev.index(), *down_, second_.get());
  }
  // Bidirectional: both streams are lanes (held and released together, the sample spans both).
  std::vector<harness::Lane> lanes() const override {
    if (c_.dir != Dir::bidir) return {};
    return {{dev_.index(), dev_.stream()}, {dev_.index(), second_.get()}};
  }

  void run(cudaStream_t s) override {
    switch (c_.dir) {
      case Dir::h2d: up_->copy(s); return;
      case Dir::d2h: down_->copy(s); return;
      case Dir::bidir:
        if (thread_) {
          thread_->start();
          up_->copy(s);
          thread_->wait();
        } else {
          up_->copy(s);
          down_->copy(second_.get());
        }
        return;
    }
  }
  void verify() override {
    cudaStream_t s = dev_.stream();
    for (Direction* l : directions()) l->clobber_destination(s);
    run(s);
    second_.sync();
    verify_after();
  }
  void verify_after() override {  // the timed copies carried the same bytes
    second_.sync();
    for (Direction* l : directions()) l->verify(c_.name(), dev_.stream());
  }
  void during_sample() override {
    const Telemetry t = dev_.refresh_telemetry();
    if (t.pcie_gen_current) gen_load_ = std::max(gen_load_, *t.pcie_gen_current);
    if (t.pcie_width_current) width_load_ = std::max(width_load_, *t.pcie_width_current);
  }
  void add_counters(benchmark::State& state, const harness::Measurement& m) const override {
    const Telemetry& idle = dev_.telemetry();
    if (gen_load_ > 0) state.counters[contract::counter::pcie_gen_load] = gen_load_;
    if (width_load_ > 0) state.counters[contract::counter::pcie_width_load] = width_load_;
    const PcieLink link = gen_load_ > 0 && width_load_ > 0
                              ? PcieLink{gen_load_, width_load_}
                              : PcieLink{idle.pcie_gen_current.value_or(0), idle.pcie_width_current.value_or(0)};
    const double directions = c_.dir == Dir::bidir ? 2.0 : 1.0;
    const double GBps = directions * static_cast<double>(c_.bytes) / m.per_call_s / 1e9;
    if (const double link_GBps = pcie_link_GBps(link); link_GBps > 0)
      state.counters[contract::counter::pct_of_link] = 100.0 * GBps / (directions * link_GBps);
    if (c_.bytes <= kLatencyMaxBytes) state.counters[contract::counter::latency_us] = m.per_call_s * 1e6;
  }
  std::string label() const override {
    const Telemetry& t = dev_.telemetry();
    const PcieLink max{t.pcie_gen_max.value_or(0), t.pcie_width_max.value_or(0)};
    const PcieLink load{gen_load_, width_load_};
    return "link=" + (gen_load_ > 0 ? to_string(load) + " under load" : to_string(PcieLink{t.pcie_gen_current.value_or(0), t.pcie_width_current.value_or(0)}) + " idle") +
           " (max " + to_string(max) + ")";
  }

 private:
  std::vector<Direction*> directions() const {
    std::vector<Direction*> v;
    if (up_) v.push_back(up_.get());
    if (down_) v.push_back(down_.get());
    return v;
  }
  PcieCase c_;
  harness::Device& dev_;
  harness::Stream second_;
  std::unique_ptr<Direction> up_, down_;
  std::unique_ptr<CopyThread> thread_;
  int gen_load_ = 0, width_load_ = 0;
};

// The host reference of the copy cases (see the top): two 128 MiB pageable buffers, written
// once, then copied one into the other per reading.
class HostMemoryProbe {
 public:
  static constexpr std::size_t kBytes = std::size_t{128} << 20;
  HostMemoryProbe()  // value-initialised: every page of both buffers is touched here
      : src_(std::make_unique<unsigned char[]>(kBytes)), dst_(std::make_unique<unsigned char[]>(kBytes)) {
    std::memset(src_.get(), 0x5a, kBytes);
  }
  void copy() {
    std::memcpy(dst_.get(), src_.get(), kBytes);
    sink_ = static_cast<unsigned char>(sink_ + dst_[kBytes / 2]);  // the copy is used
  }

 private:
  std::unique_ptr<unsigned char[]> src_, dst_;
  volatile unsigned char sink_ = 0;
};

void register_cases(harness::Registry& r) {
  harness::Device& dev = r.device();
  HostMemoryProbe& probe = r.keep<HostMemoryProbe>();
  for (const PcieCase& pc : pcie::cases(dev.suite(), r.points())) {
    if (const auto why = harness::exceeds_free_memory((pc.dir == Dir::bidir ? 2 : 1) * static_cast<std::uint64_t>(pc.bytes))) {
      r.add_unsupported(pc.name(), *why);
      continue;
    }
    harness::Case c;
    c.name = pc.name();
    c.rates = {harness::gbps((pc.dir == Dir::bidir ? 2.0 : 1.0) * static_cast<double>(pc.bytes))};
    c.measure = r.defaults();
    // Pageable copies block the host in the call: they cannot be queued behind a hold.
    c.measure.mode = pc.mem == Mem::pinned ? TimingMode::held : TimingMode::per_call;
    c.measure.host_reference = [&probe] { probe.copy(); };
    c.measure.plan.host_reference_every = 1;
    c.setup = [pc, &dev] { return std::make_unique<PcieOp>(pc, dev); };
    r.add(std::move(c));
  }
}

}  // namespace

harness::Family harness::family() {
  Family f;
  f.model = pcie::model();
  f.register_cases = register_cases;
  f.summary = "bench_pcie: host-device copy bandwidth (GB/s) over PCIe, H2D, D2H and both at once, from pinned and "
              "pageable memory, with the link's generation and width under load.";
  f.list = [](Suite s, const std::vector<axes::Point>* p, const axes::DeviceFacts&) { return listed(pcie::cases(s, p)); };
  f.own_help =
      "Examples:\n"
      "  bench_pcie -a direction=h2d -a memory=pinned -b 4K -e 1G -f 4 --list\n"
      "  bench_pcie -a bytes=64MiB,1GiB -a memory=pageable --benchmark_out=pageable.json\n";
  return f;
}

}  // namespace gpucheck
