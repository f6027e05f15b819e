// The verdict of `gpucheck watch`: which link of the chain limits a job, from a recorded
// timeline of NVML/GPM and host samples. Pure functions over data (tested on timelines recorded
// on the H200); every threshold is a named constant in watch_thresholds below, each with the
// measurement that justifies it. docs/WATCH.md states every rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "watch/host_sample.hpp"
#include "gpucheck/core/pcie_link.hpp"
#include "gpucheck/core/telemetry.hpp"

namespace gpucheck::watch {

// One place for every threshold. The figures are the H200's (2026-12-01, pynvml at 10 Hz
// beside five PyTorch workloads; docs/WATCH.md has the table):
//   bf16 GEMM loop        util 97.4  power 691.9/700 W  SM active 93.7  tensor 90.9  DRAM 17.1  PCIe rx 2.7
//   100 tiny kernels      util 25.3  power 121.7        SM active  0.0  tensor  0.0  DRAM  0.0  PCIe rx 216.8
//   10 GEMMs + 30 ms nap  util  5.4  power 165.8        SM active  4.2  tensor  4.0  DRAM  0.6
//   pinned H2D 256 MiB    util 99.9  power 128.4        SM active  0.0  tensor  0.0  DRAM  1.1  PCIe rx 57640
//   D2D copy 2 GiB        util 98.0  power 467.2        SM active 97.9  tensor  0.0  DRAM 87.4
namespace thresholds {
// A sample is "active" when a kernel ran in NVML's window at all (an idle H200 reads 0): the
// starved loop's whole run averages 5.4%, so anything higher would call it idle.
inline constexpr double kActiveUtilPct = 1.0;
// DRAM bandwidth share for memory-bound: the D2D copy 87.4 against the GEMM's 17.1.
inline constexpr double kMemoryBoundDramPct = 50.0;
// SM active for compute-bound: the GEMM 93.7 (tensor 90.9).
inline constexpr double kComputeBoundSmActivePct = 60.0;
// PCIe traffic (rx + tx, MiB/s) for PCIe-bound: pinned H2D 57640 against the tiny-kernel loop's
// 216.8 and the GEMM's 2.7; 5000 is 40% of a Gen3 x16 link, so an older host is caught too.
inline constexpr double kPcieBoundMBps = 5000.0;
// "SMs idle": SM active under 10% while PCIe-bound (H2D 0.0; the D2D copy that is not PCIe 97.9).
inline constexpr double kSmIdlePct = 10.0;
// Launch/latency-bound: NVML counts the GPU busy (tiny kernels 25.3%) but SM active is under half
// of that (0.0 of 25.3); the starved loop's 4.2 of 5.4 (0.78) and the GEMM's 93.7 of 97.4 are not.
inline constexpr double kLaunchMinUtilPct = 15.0;
inline constexpr double kLaunchSmPerUtil = 0.5;
// Starved: the GPU is busy under 80% of the run while the work it gets fills its SMs (the
// starved loop 5.4%; every saturating workload of the table reads 97.4 and above).
inline constexpr double kStarvedUtilPct = 80.0;
// Without GPM, power tells "busy" from "busy but SMs idle": tiny kernels drew 17% of the limit,
// H2D 18%, the D2D copy 67%, the GEMM 99%.
inline constexpr double kLowPowerShare = 0.30;
inline constexpr double kHighPowerShare = 0.60;
// At the power limit: the GEMM loop's 691.9 W of 700 (98.8%), its SM clock 1482 of 1980 MHz.
inline constexpr double kPowerCappedShare = 0.95;
// Throttled: a slowing clock-event reason (hardware slowdown, thermal, power brake) in 10% of
// the active samples; power capping alone is how the GEMM ran and is not throttling.
inline constexpr double kThrottledSampleShare = 0.10;
// A stall: NVML's utilisation at or under 1% (no kernel in its window) for 0.5 s or longer,
// inside the active window. NVML averages over its own sample period (1/6 s to 1 s by product),
// so gaps shorter than that lower the utilisation instead of showing as stalls: the starved
// loop's 30 ms naps read as a steady 5.4%.
inline constexpr double kStallUtilPct = 1.0;
inline constexpr double kStallMinSeconds = 0.5;
// Stalls are periodic when 3 or more start at intervals within 30% of their median.
inline constexpr int kPeriodicMinStalls = 3;
inline constexpr double kPeriodicSpread = 0.30;
// With step lines (--step), the figures are taken over the counted steps (after warm-up) when
// that span holds at least this many GPU samples: a training script's start-up (importing,
// building the model, cuDNN's autotuning) draws little and would otherwise read "starved"
// (ResNet-50 on the H200: GPU busy 18-40% over the whole active window at 57 ms a step).
inline constexpr int kStepsWindowMinSamples = 3;
// Host: one core at 90% or more while the host as a whole is under 50%; all cores at 90%;
// iowait 10% of CPU time.
inline constexpr double kCoreSaturatedPct = 90.0;
inline constexpr double kHostMostlyFreePct = 50.0;
inline constexpr double kAllCoresBusyPct = 90.0;
inline constexpr double kIoWaitPct = 10.0;
// GPUs of one job differ: one under 10% while another is over 50%.
inline constexpr double kImbalanceIdlePct = 10.0;
inline constexpr double kImbalanceBusyPct = 50.0;
// Starved, not idle: a GPU that never reaches 1% util but whose SMs were active at all, or on
// which NVML lists the job's process, waits on the host (the H200's disk-fed loop, 2026-12-02:
// util 0%, SM active 0.03%, NVML listing the job, a tiny GEMM per 64 MiB read).
inline constexpr double kFaintSmActivePct = 0.0;
// Disk reads: the command tree's read rate (or the disks', in a record without it) at 50 MiB/s
// while the GPU waits; the disk-fed loop read 95 MiB/s over its whole run and 931 over its steps,
// an idle host and a GPU-resident loop read under 1.
inline constexpr double kDiskReadsMBps = 50.0;
// Stalled: pauses (kStallMinSeconds and longer) hold 20% of the window while the GPU is busy
// (80% util, as kStarvedUtilPct) between them: the H200's checkpointing GEMM loop paused 2.5 s
// every 5.1 s (49%) at util 97 between; the numpy-fed ResNet step, busy 20% between its stalls,
// is a loader slow every step (starved), not a pause.
inline constexpr double kStalledShare = 0.20;
inline constexpr double kStalledBusyBetweenPct = 80.0;
// No verdict: a failure status (1-125) in under 5 s, or before any GPU activity, is a command
// that did not run (the H200's: exit 2 after 0.2 s, PyTorch missing); 128+N is an interruption.
inline constexpr double kFailedEarlySeconds = 5.0;
inline constexpr int kFailureStatusMin = 1;
inline constexpr int kFailureStatusMax = 125;
// The PCIe link: the width is judged on every reading, the generation only on readings where
// the GPU works (util 1%, as kActiveUtilPct) or its link carries 100 MiB/s (the tiny-kernel
// loop's 216.8 is traffic; the GEMM loop's 2.7 and the starved loop's 2.1 are launches), since
// an idle GPU drops its link's generation to save power (Gen1 at idle is normal). Each is the
// lower median of its readings, so a reading taken while the link retrains does not make it short.
inline constexpr double kLinkBusyPcieMBps = 100.0;
// A link reading above 64 is none, as 0 is: PCIe has at most 32 lanes and 7 generations.
inline constexpr unsigned kLinkReadingMax = 64;
// A GPU's processes as recorded: at most 16 (an MPS server's clients can be many), the busiest first.
inline constexpr std::size_t kMaxProcessesPerGpu = 16;
}  // namespace thresholds

struct GpuPoint {
  double t_s = 0.0;
  GpuSample s;
};
struct HostPoint {
  double t_s = 0.0;
  HostSample h;
};
// A process NVML listed on a GPU during the run, with its share where NVML gives per-process
// utilisation (nvmlDeviceGetProcessUtilization): the mean over the readings that had one.
struct ProcessShare {
  unsigned pid = 0;
  std::string name;
  bool job = false;   // one of the command's processes
  int readings = 0;        // how many of NVML's process lists (one a second) named it
  int share_readings = 0;  // of those, how many gave its share
  std::optional<double> sm_pct, mem_pct;
};
// One of NVML's process lists of a GPU added to its processes over the run: a new process joins,
// a known one's count and running mean grow. `tree` is the command's process tree, sorted.
void add_process_reading(std::vector<ProcessShare>& ps, const std::vector<GpuProcess>& listed, const std::vector<int>& tree);
// The processes as recorded: the busiest first (no share last), at most kMaxProcessesPerGpu.
std::vector<ProcessShare> busiest_first(std::vector<ProcessShare> ps);

struct GpuTimeline {
  unsigned index = 0;  // NVML's
  std::string name, uuid;
  std::optional<bool> gpm;  // nvmlGpmQueryDeviceSupport
  bool in_job = true;       // used by the command (its processes, or --devices)
  bool job_process = false; // NVML listed one of the command's processes on it
  std::vector<std::string> other_processes;  // others NVML listed on it ("4242 python3"): a shared GPU
  std::vector<ProcessShare> processes;       // every process NVML listed on it (records from version 2)
  std::vector<GpuPoint> points;
};
// A span of the run, in seconds since the command started.
struct Window {
  double from_s = 0.0, to_s = 0.0;
};

struct Timeline {
  double duration_s = 0.0;
  std::vector<GpuTimeline> gpus;
  std::vector<HostPoint> host;
  std::vector<double> step_ms;  // after warm-up
  std::optional<Window> steps;  // when those steps ran (from the times their lines came)
  std::optional<int> exit_status;  // the shell's: the code, 128+N for signal N (absent: still running)
  std::string last_stderr_line;    // the command's, for a "no verdict" line
};

// A kind (a GPU's limit, a host symptom) is one row: its key (watch.json), its words, the next
// step practitioners give.
template <typename E>
struct KindRow {
  E kind;
  const char* key;
  const char* title;
  const char* next_step;
};

enum class Bound { Idle, Compute, Memory, Pcie, Launch, Starved, Stalled, Busy, NoVerdict };
using BoundKind = KindRow<Bound>;
const std::vector<BoundKind>& bound_kinds();
const BoundKind& kind_of(Bound b);

enum class HostSymptom { OneCore, AllCores, IoWait, DiskReads };
using HostSymptomKind = KindRow<HostSymptom>;
const std::vector<HostSymptomKind>& host_symptom_kinds();
const HostSymptomKind& kind_of(HostSymptom h);

// Means over a GPU's window: the counted steps' span where given and sampled
// (kStepsWindowMinSamples), else its active window (first to last active sample); empty where
// never read.
struct GpuFigures {
  int samples = 0, active_samples = 0;
  double active_from_s = 0.0, active_to_s = 0.0;  // the window the figures are over
  bool over_steps = false;                          // that window is the steps'
  bool faint = false;  // never 1% util, but SM active above zero: the window is those samples'
  std::optional<double> util_pct, power_W, power_limit_W, sm_clock_MHz, sm_clock_max_MHz, temperature_max_C;
  std::optional<double> sm_active_pct, sm_occupancy_pct, tensor_active_pct, dram_bw_pct, pcie_MBps;
  std::optional<double> mem_used_max_MiB;
  std::uint64_t clock_event_reasons = 0;  // OR of every active sample's
  double slowed_share = 0.0, power_capped_share = 0.0;
  double setup_s = 0.0;  // left out before the job's first busy run (work_start in rules.cpp)
};
GpuFigures gpu_figures(const GpuTimeline& g, const std::optional<Window>& steps = std::nullopt);

struct Stalls {
  int count = 0;
  double mean_s = 0.0, longest_s = 0.0;
  std::optional<double> period_s;  // when periodic
  std::vector<double> starts_s;
  std::vector<double> ends_s;            // each stall's end (the first busy reading after it)
  double share = 0.0;                    // of the window searched
  std::optional<double> util_between_pct;  // mean util outside the stalls
};
// Over [from_s, to_s]: judge_gpu passes the figures' window, which starts after the job's set-up
// (gpu_figures: the first busy run of kStallMinSeconds), so set-up is never a stall.
Stalls find_stalls(const GpuTimeline& g, double from_s, double to_s);

// A GPU's PCIe link over the run, decided by core's decide_pcie_link (accept's rule): the width
// always, the generation on the readings where the GPU worked or copied (kLinkBusyPcieMBps),
// against the most GPU and system allow.
struct LinkVerdict {
  PcieLinkDecision decision;
  int gen_max = 0, width_max = 0;  // 0: NVML gave none
  int busy_readings = 0;           // readings of the generation taken while the GPU worked or copied
  bool gen_short() const { return decision.gen.state == LinkState::Short; }
  bool width_short() const { return decision.width.state == LinkState::Short; }
  bool is_short() const { return decision.outcome == LinkOutcome::Short; }
};
// Empty where no reading of the link was recorded (an older record, a driver without the calls).
std::optional<LinkVerdict> judge_link(const GpuTimeline& g);
// "PCIe Gen5 x8 of x16", "PCIe Gen4 x16 of Gen5 under load", "PCIe x8 of x16" (generation read at idle only).
std::string link_words(const LinkVerdict& l);

struct GpuVerdict {
  unsigned index = 0;
  bool in_job = true;
  Bound bound = Bound::Idle;
  bool throttled = false, power_capped = false;
  GpuFigures f;
  Stalls stalls;
  std::vector<std::string> evidence;  // the numbers the verdict rests on
  std::optional<LinkVerdict> link;
  std::vector<ProcessShare> processes;    // as recorded: the job's and the others', each with its share
  std::optional<ProcessShare> neighbour;  // another job's busiest process on it (the job's GPU only)
};
GpuVerdict judge_gpu(const GpuTimeline& g, const std::optional<Window>& steps = std::nullopt);

struct HostFigures {
  std::optional<double> cpu_pct, busiest_core_pct, iowait_pct, disk_read_MBps, tree_cpu_pct, tree_rss_max_MiB;
  std::optional<double> tree_read_MBps;  // the command tree's (/proc/PID/io), absent in older records
  int cores = 0;
};
HostFigures host_figures(const std::vector<HostPoint>& host, double from_s, double to_s);
std::vector<HostSymptom> host_symptoms(const HostFigures& h);

struct Verdict {
  bool gpu_sampled = false;
  Bound bound = Bound::Idle;  // the whole run's (the job's GPUs' most common)
  std::vector<GpuVerdict> gpus;
  HostFigures host;
  std::vector<HostSymptom> host_symptoms;
  std::optional<std::string> imbalance;  // "GPU 3 idle (util 0%) while GPUs 0,1,2 work (util 97%)"
  std::optional<double> step_median_ms;
  std::string headline;                  // one line: the verdict first
  std::vector<std::string> next_steps;
};
Verdict judge(const Timeline& t);

// "no verdict: the command exited 2 after 0.2 s: <its last stderr line>" for a command that failed
// (1-125) in under kFailedEarlySeconds or before any GPU activity; empty otherwise.
std::optional<std::string> no_verdict(const Timeline& t);

}  // namespace gpucheck::watch
