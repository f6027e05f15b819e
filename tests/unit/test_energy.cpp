// gpucheck/core/energy.hpp: a run of back-to-back calls under the power limit, summarized.
#include "gpucheck/core/energy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

using gpucheck::energy::cooled;
using gpucheck::energy::Cooldown;
using gpucheck::energy::CooldownWait;
using gpucheck::energy::parse_cooldown;
using gpucheck::energy::parse_shape;
using gpucheck::energy::PowerTemp;
using gpucheck::energy::wait_cooled;
using gpucheck::energy::Reading;
using gpucheck::energy::summarize;
using gpucheck::energy::Summary;

namespace {

// A run of `n` chunks of 8 calls, 10 ms a chunk for the first `fast` chunks and 12 ms after
// (the clock pulled down), 7 J a call, the counter starting at 1000 J.
std::vector<Reading> run(int n, int fast) {
  std::vector<Reading> r{{0, 0, 1000.0, 1980u}};
  double t = 0;
  for (int i = 1; i <= n; ++i) {
    t += i <= fast ? 0.010 : 0.012;
    r.push_back({t, 8LL * i, 1000.0 + 7.0 * 8 * i, i <= fast ? 1980u : 1650u});
  }
  return r;
}

TEST(EnergySummary, BurstAndSteadyParts) {
  Summary s;
  std::string err;
  ASSERT_TRUE(summarize(run(100, 9), 0.09, 0.4, &s, &err)) << err;
  // The burst ends at the first reading at or past 90 ms: chunk 9 at 0.090 s.
  EXPECT_EQ(s.burst_calls, 72);
  EXPECT_NEAR(s.burst_s, 0.090, 1e-12);
  EXPECT_NEAR(s.burst_rate, 800.0, 1e-6);
  EXPECT_EQ(s.burst_end_clock_MHz, 1980u);
  // Run length 0.09 + 91 x 0.012 = 1.182 s; the steady part from 0.4728 s: chunk 41 (0.474 s).
  EXPECT_EQ(s.steady_calls, 8 * (100 - 41));
  EXPECT_NEAR(s.steady_rate, 8 / 0.012, 1e-6);
  ASSERT_TRUE(s.joules_per_call.has_value());
  EXPECT_NEAR(*s.joules_per_call, 7.0, 1e-9);
  ASSERT_TRUE(s.mean_power_W.has_value());
  EXPECT_NEAR(*s.mean_power_W, 7.0 * 8 / 0.012, 1e-6);
  ASSERT_TRUE(s.mean_clock_MHz.has_value());
  EXPECT_DOUBLE_EQ(*s.mean_clock_MHz, 1650.0);
}

TEST(EnergySummary, WithoutTheCounterOrWhenItGoesBack) {
  auto r = run(50, 9);
  for (auto& x : r) x.energy_J.reset(), x.sm_clock_MHz.reset();
  Summary s;
  std::string err;
  ASSERT_TRUE(summarize(r, 0.09, 0.4, &s, &err)) << err;
  EXPECT_FALSE(s.joules_per_call.has_value());
  EXPECT_FALSE(s.mean_power_W.has_value());
  EXPECT_FALSE(s.mean_clock_MHz.has_value());
  EXPECT_GT(s.steady_rate, 0);
  // A counter that went back (a driver reload between readings): no energy, the rates stay.
  r = run(50, 9);
  r.back().energy_J = 10.0;
  ASSERT_TRUE(summarize(r, 0.09, 0.4, &s, &err)) << err;
  EXPECT_FALSE(s.joules_per_call.has_value());
  EXPECT_GT(s.burst_rate, 0);
}

TEST(EnergySummary, RefusesWhatCannotBeSummarized) {
  Summary s;
  std::string err;
  EXPECT_FALSE(summarize({}, 0.09, 0.4, &s, &err));
  EXPECT_FALSE(summarize(run(1, 1), 0.09, 0.4, &s, &err));
  // The run ends inside the burst window (5 chunks of 10 ms, a 90 ms window).
  EXPECT_FALSE(summarize(run(5, 5), 0.09, 0.4, &s, &err));
  // The window's end is the run's last reading: nothing after it for the steady part.
  EXPECT_FALSE(summarize(run(9, 9), 0.09, 0.4, &s, &err));
  auto r = run(50, 9);
  r[0].t_s = 0.001;  // not the start
  EXPECT_FALSE(summarize(r, 0.09, 0.4, &s, &err));
  r = run(50, 9);
  r[20].t_s = r[19].t_s;  // time does not increase
  EXPECT_FALSE(summarize(r, 0.09, 0.4, &s, &err));
  r = run(50, 9);
  r[20].calls = r[19].calls;  // no call in a chunk
  EXPECT_FALSE(summarize(r, 0.09, 0.4, &s, &err));
  r = run(50, 9);
  r[30].t_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(summarize(r, 0.09, 0.4, &s, &err));
  r = run(50, 9);
  r[30].energy_J = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(summarize(r, 0.09, 0.4, &s, &err));
  EXPECT_FALSE(summarize(run(50, 9), 0, 0.4, &s, &err));
  EXPECT_FALSE(summarize(run(50, 9), std::nan(""), 0.4, &s, &err));
  EXPECT_FALSE(summarize(run(50, 9), 0.09, 1.0, &s, &err));
  EXPECT_FALSE(summarize(run(50, 9), 0.09, -0.1, &s, &err));
  EXPECT_FALSE(err.empty());
}

TEST(EnergySummary, SteadyFromTheStart) {
  Summary s;
  std::string err;
  ASSERT_TRUE(summarize(run(20, 20), 0.05, 0.0, &s, &err)) << err;
  EXPECT_EQ(s.steady_calls, 160);
  EXPECT_NEAR(s.steady_rate, 800.0, 1e-6);
}

TEST(EnergyShape, TheSuitesLabels) {
  auto s = parse_shape("b1h32s16384d128");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->batch, 1);
  EXPECT_EQ(s->heads, 32);
  EXPECT_EQ(s->kv_heads, 0);
  EXPECT_EQ(s->seq_q, 16384);
  EXPECT_EQ(s->seq_k, 0);
  EXPECT_EQ(s->head_dim, 128);
  s = parse_shape("b8h32kv8s1sk8192d128");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->kv_heads, 8);
  EXPECT_EQ(s->seq_q, 1);
  EXPECT_EQ(s->seq_k, 8192);
  s = parse_shape("b4h32kv8s4096d128");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->kv_heads, 8);
  EXPECT_EQ(s->seq_k, 0);
}

TEST(EnergyShape, RefusesOthers) {
  for (const char* bad : {"", "b1", "b1h32s16384", "h32s16384d128", "b0h32s16384d128", "b1h32s16384d128/causal",
                          "b1h32s16384d128x", "b-1h32s16384d128", "b1h32kvs16384d128", "b1h32s16384skd128",
                          "b99999999999h32s16384d128", "B1H32S16384D128", "b1 h32 s16384 d128"})
    EXPECT_FALSE(parse_shape(bad).has_value()) << bad;
}

TEST(EnergyCooldown, ParsesTheEnvironmentsRule) {
  std::string err;
  auto c = parse_cooldown("power_W=120,temp_C=42.5,max_s=20", &err);
  ASSERT_TRUE(c.has_value()) << err;
  EXPECT_EQ(c->power_W, 120.0);
  EXPECT_EQ(c->temp_C, 42.5);
  EXPECT_EQ(c->max_s, 20.0);
  c = parse_cooldown("temp_C=40", &err);
  ASSERT_TRUE(c.has_value()) << err;
  EXPECT_FALSE(c->power_W.has_value());
  EXPECT_EQ(c->max_s, 30.0);  // the default cap
  EXPECT_FALSE(c->settle_s.has_value());  // no settle unless asked
  c = parse_cooldown("settle_s=2.5,temp_C=44", &err);
  ASSERT_TRUE(c.has_value()) << err;
  EXPECT_EQ(c->settle_s, 2.5);
  for (const char* bad : {"", "max_s=10", "settle_s=2", "max_s=10,settle_s=2", "settle_s=0,temp_C=40",
                          "temp_C=40,settle_s=-1", "power_W", "power_W=", "power_W=0", "power_W=-5", "power_W=1e999",
                          "power_W=12x", "watts=100", "power_W=100,", "power_W=nan", "temp_C=40,,max_s=3"}) {
    err.clear();
    EXPECT_FALSE(parse_cooldown(bad, &err).has_value()) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

TEST(EnergyCooldown, EveryLimitMetAndMissingReadingsDoNotHold) {
  Cooldown c;
  c.power_W = 120;
  c.temp_C = 40;
  EXPECT_TRUE(cooled(c, 119.0, 40u));
  EXPECT_TRUE(cooled(c, 120.0, 39u));
  EXPECT_FALSE(cooled(c, 121.0, 35u));
  EXPECT_FALSE(cooled(c, 90.0, 41u));
  EXPECT_TRUE(cooled(c, std::nullopt, 38u));
  EXPECT_FALSE(cooled(c, std::nullopt, 45u));
  EXPECT_TRUE(cooled(c, std::nullopt, std::nullopt));
  Cooldown power_only;
  power_only.power_W = 100;
  EXPECT_TRUE(cooled(power_only, 99.5, 90u));  // no temperature limit: 90 C does not hold it
  EXPECT_FALSE(cooled(power_only, 150.0, 20u));
}

// A fake card cooling by one reading each poll, and a fake clock the sleeps advance.
struct CoolingCard {
  explicit CoolingCard(std::vector<PowerTemp> r) : readings(std::move(r)) {}
  std::vector<PowerTemp> readings;
  std::size_t next = 0;
  double t = 100.0;
  std::vector<double> slept;
  PowerTemp read() { return readings[std::min(next++, readings.size() - 1)]; }
  // wait_cooled on this card's readings, its clock and its record of the sleeps.
  CooldownWait wait(const Cooldown& rule) {
    return wait_cooled(rule, [this] { return read(); }, [this] { return t; },
                       [this](double s) {
                         slept.push_back(s);
                         t += s;
                       });
  }
};

TEST(EnergyCooldown, WaitsUntilCooledOrCapped) {
  Cooldown c;
  c.power_W = 120;
  c.temp_C = 40;
  c.max_s = 1.0;
  c.poll_s = 0.25;
  CoolingCard card({{300.0, 45u}, {150.0, 42u}, {110.0, 40u}, {100.0, 39u}});
  auto w = card.wait(c);
  EXPECT_DOUBLE_EQ(w.waited_s, 0.5);  // the third reading, after two polls
  EXPECT_FALSE(w.capped);
  EXPECT_EQ(w.temp_C, 40u);
  EXPECT_EQ(card.slept, (std::vector<double>{0.25, 0.25}));
  card = CoolingCard({{300.0, 60u}});  // never cools: the cap, at the first reading at or past max_s
  w = card.wait(c);
  EXPECT_DOUBLE_EQ(w.waited_s, 1.0);
  EXPECT_TRUE(w.capped);
  EXPECT_EQ(w.temp_C, 60u);
  EXPECT_EQ(card.slept.size(), 4u);
  EXPECT_FALSE(w.settled);
  card = CoolingCard({{std::nullopt, std::nullopt}});  // NVML gave nothing: no wait
  w = card.wait(c);
  EXPECT_DOUBLE_EQ(w.waited_s, 0.0);
  EXPECT_FALSE(w.capped);
  EXPECT_FALSE(w.temp_C.has_value());
  EXPECT_TRUE(card.slept.empty());
}

// settle_s: a card that idles above the temperature limit (heat soaked up over a session) ends
// the wait once its temperature sets no new low for settle_s with the power under its limit.
TEST(EnergyCooldown, ASoakedCardSettlesInsteadOfWaitingOutTheCap) {
  Cooldown c;
  c.power_W = 130;
  c.temp_C = 44;
  c.max_s = 10;
  c.poll_s = 0.5;
  c.settle_s = 1.0;
  // Lows at 0, 0.5, 1.0 and 1.5 s; 45 again at 2.0, 46 at 2.5: 1.0 s since the last low.
  CoolingCard soaked({{300.0, 50u}, {150.0, 47u}, {120.0, 46u}, {120.0, 45u}, {110.0, 45u}, {110.0, 46u}});
  auto w = soaked.wait(c);
  EXPECT_DOUBLE_EQ(w.waited_s, 2.5);
  EXPECT_TRUE(w.settled);
  EXPECT_FALSE(w.capped);
  EXPECT_EQ(w.temp_C, 46u);
  // Still cooling a degree a poll: it reaches the limit, not a settle.
  CoolingCard cooling({{120.0, 50u}, {120.0, 49u}, {120.0, 48u}, {120.0, 47u}, {120.0, 46u}, {120.0, 45u}, {120.0, 44u}});
  w = cooling.wait(c);
  EXPECT_DOUBLE_EQ(w.waited_s, 3.0);
  EXPECT_FALSE(w.settled);
  EXPECT_FALSE(w.capped);
  // The power over its limit holds a settled temperature: the cap.
  c.max_s = 3;
  CoolingCard busy({{200.0, 45u}});
  w = busy.wait(c);
  EXPECT_DOUBLE_EQ(w.waited_s, 3.0);
  EXPECT_TRUE(w.capped);
  EXPECT_FALSE(w.settled);
  // No temperature reading: nothing to settle on (and nothing to wait for but the power).
  CoolingCard no_temp({{200.0, std::nullopt}, {200.0, std::nullopt}});
  w = no_temp.wait(c);
  EXPECT_TRUE(w.capped);
  EXPECT_FALSE(w.settled);
  // Without settle_s, the soaked card waits out the cap, as before.
  c.settle_s.reset();
  CoolingCard soaked_again({{120.0, 45u}});
  w = soaked_again.wait(c);
  EXPECT_DOUBLE_EQ(w.waited_s, 3.0);
  EXPECT_TRUE(w.capped);
  EXPECT_FALSE(w.settled);
}

}  // namespace
