// A kernel under the power limit: a run of back-to-back calls read in chunks (the time, the
// calls done, NVML's energy counter, the SM clock), summarized as the burst that a suite's
// timing sees (the first tens of milliseconds after idle, before the power limit pulls the
// clock down) and the steady state the limit settles to, with the energy of a call there.
// Pure: the readings come from the caller (benchmarks/attention_energy.cpp).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpucheck::energy {

struct Reading {
  double t_s = 0;       // seconds since the run's first call was queued
  long long calls = 0;  // calls finished by then
  std::optional<double> energy_J;  // NVML's counter (any origin: only differences are used)
  std::optional<unsigned> sm_clock_MHz;
};

struct Summary {
  // The burst: from the start to the first reading at or past the burst window.
  long long burst_calls = 0;
  double burst_s = 0;
  double burst_rate = 0;  // calls per second
  std::optional<unsigned> burst_end_clock_MHz;
  // The steady part: from the first reading at or past steady_from of the run's length to the
  // last reading.
  long long steady_calls = 0;
  double steady_s = 0;
  double steady_rate = 0;                  // calls per second
  std::optional<double> joules_per_call;   // empty without the counter at both ends, or if it went back
  std::optional<double> mean_power_W;      // the counter's joules over the steady part's seconds
  std::optional<double> mean_clock_MHz;    // of the steady part's readings that have one
};

// readings: the start (t 0, 0 calls), then one per chunk, in order. burst_s > 0, steady_from
// in [0, 1). False with *err when the run cannot be summarized: fewer than three readings, a
// start that is not (0, 0), time or calls not increasing, a value not finite, the burst window
// not ended before the last reading, or a steady part without a call.
bool summarize(const std::vector<Reading>& readings, double burst_s, double steady_from, Summary* out,
               std::string* err);

// A case measured as a power burst (benchmarks/harness: power_burst) reports what the card did
// during its timed samples: the SM clock's mean and the board's mean power.
//
// The mean of the SM clock readings taken while the samples ran; a reading of 0 is no reading
// (NVML did not say). nullopt without any reading.
std::optional<double> mean_clock_MHz(const std::vector<unsigned>& readings);
// The mean power over the timed samples, from NVML's energy counter, which moves in steps: on
// an H200 it changed every 100 ms (96.9-102.6 ms under a bf16 GEMM's load, 72 J a step at
// 692 W; 2026-12-04). Two readings around a stretch of 0.4 s count 3 or 4 of those steps
// (+-25%: 922 W read on a 700 W card), and around a burst's 10 ms none or one (1,755 W). So
// the counter is read at the window's start and end, and between them as often as the caller
// can (the engine: a plateau's paced readings, ReadPacer below), and the power is taken between
// the counter's first and last moves: whole steps over their time. A move happened between the
// reading that saw it and the one before; it is timed at the middle of that gap, so to within
// half of it either way. Where those two halves add up to more than kMaxStepTimingFraction of
// the stretch between the two moves (the figure's worst error), or fewer than two moves were
// seen, there is no figure (never 0). Timed at the reading that saw it, as before 2026-12-04,
// with the whole gaps as the rule's error, a model of the paced queue (test_precision.cpp: 5.4 ms
// samples, readings of 6.3 ms +-20%, steps every 100 ms, 0.4 s) had a figure in 103 of its 400
// windows, and GPU-d57c4b0c's plateau rows in 33-39% of their runs; timed at the middle, the
// model has one in all 400, 1.2% off the power (median; at most 7.1%).
inline constexpr double kMaxStepTimingFraction = 0.1;
class EnergySteps {
 public:
  // A reading at t_s (seconds, increasing); an absent or non-finite counter is no reading.
  // A counter lower than the last reading (a driver reload) leaves no figure for the window.
  void add(double t_s, std::optional<double> energy_J);
  std::optional<double> power_W() const;
  int moves() const { return moves_; }

 private:
  struct Move {
    double t_s, energy_J, uncertainty_s;
  };
  std::optional<double> last_t_s_, last_J_;
  std::optional<Move> first_, last_;
  int moves_ = 0;
  bool broken_ = false;
};

// A plateau's readings while its queued samples run (the SM clock and the energy counter,
// harness GpuSource): taken only once the host has spent, since the last one ended, at least
// as long as that one took, so that NVML has at most half the host's time. Queued samples run
// two deep: a host that reads every sample for longer than a sample runs falls behind, and the
// card idles between samples. On an H200 a sample's readings took 6.3 ms of host (median; up to
// 9 ms) against samples of 5-6 ms, and the plateau rows that ran the fewest calls in their
// window read up to 10% more TFLOP/s (the card, idle part of the time, ran at a higher clock):
// the rows outside the parity's range moved between processes that way (GPU-4c0d3cfe,
// 2026-12-04). Paced, a reading comes every second or third sample, and a single one of up to two
// samples' time is absorbed by the queue. A time that is not finite, or an end before its
// start, forgets the last reading (the next is due).
class ReadPacer {
 public:
  bool due(double now_s) const;
  void took(double start_s, double end_s);
  void reset() { last_end_s_.reset(); }

 private:
  std::optional<double> last_end_s_;
  double last_took_s_ = 0;
};
// Which of a plateau's paced readings read the SM clock besides the energy counter: every
// second one, from the first (the k-th, k from 0). The counter's steps want readings close
// together (EnergySteps); the clock's mean over 0.4 s needs far fewer.
inline bool plateau_reads_clock(long long k) { return k % 2 == 0; }

// Before a power burst, the card back near idle (opt-in, the environment variable
// GPUCHECK_COOLDOWN; ci/gemm_parity.sh sets it for both sides, ci/torch_reference.py reads the
// same rule): after the burst's fixed settle, NVML's board power and GPU temperature are polled
// until both are at or under their limits, the temperature has settled (settle_s) or max_s has
// passed. A burst then starts from the same power and thermal state whatever ran before it, not
// from the last case's heat.
struct Cooldown {
  std::optional<double> power_W;  // board power (NVML's reading, which lags: a history of ~1 s)
  std::optional<double> temp_C;   // GPU temperature
  double max_s = 30;              // the cap on the wait
  // Also done once the power is under its limit and the temperature has set no new low for
  // settle_s: a card that has soaked up heat idles above a limit taken from its idle at the
  // start of a session, and the cap would only have waited longer at the same temperature.
  std::optional<double> settle_s;
  double poll_s = 0.1;
};
// "power_W=120,temp_C=42,max_s=30,settle_s=2" (any of them, in any order; at least one limit;
// every value a finite number > 0). nullopt with *err naming the bad part.
std::optional<Cooldown> parse_cooldown(std::string_view spec, std::string* err);
// Whether the readings meet every limit the rule sets; a reading NVML did not give does not
// hold the wait (nothing to wait for).
bool cooled(const Cooldown& rule, std::optional<double> power_W, std::optional<unsigned> temp_C);
// The wait: read() (board power W, temperature C) until cooled, settled (settle_s) or max_s has
// passed since the first reading, sleep(poll_s) between readings; now() a clock in seconds. The
// seconds waited, whether the cap ended it, whether the settle did, and the temperature at the
// last reading.
struct CooldownWait {
  double waited_s = 0;
  bool capped = false;
  bool settled = false;
  std::optional<unsigned> temp_C;
};
using PowerTemp = std::pair<std::optional<double>, std::optional<unsigned>>;
CooldownWait wait_cooled(const Cooldown& rule, const std::function<PowerTemp()>& read,
                         const std::function<double()>& now, const std::function<void(double)>& sleep);

// An attention shape as the suite names its cases: b<batch>h<heads>[kv<kv heads>]s<seq>
// [sk<keys>]d<head dim>, every number >= 1 ("b1h32s16384d128", "b4h32kv8s4096d128",
// "b8h32kv8s1sk8192d128"). kv_heads 0: as many as heads; seq_k 0: seq_q.
struct Shape {
  int batch = 0, heads = 0, kv_heads = 0, seq_q = 0, seq_k = 0, head_dim = 0;
};
std::optional<Shape> parse_shape(std::string_view label);

}  // namespace gpucheck::energy
