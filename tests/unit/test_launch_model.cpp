#include <gtest/gtest.h>

#include <stdexcept>

#include "gpucheck/core/launch_model.hpp"

namespace gpucheck {
namespace {

TEST(LaunchModel, UsPerLaunch) {
  EXPECT_DOUBLE_EQ(us_per_launch(200e-6, 100), 2.0);
  EXPECT_DOUBLE_EQ(us_per_launch(3e-6, 1), 3.0);
  EXPECT_THROW(us_per_launch(1.0, 0), std::invalid_argument);
}

TEST(LaunchModel, ExpectedCounterWraps) {
  EXPECT_EQ(expected_counter(0, 100), 0u);
  EXPECT_EQ(expected_counter(1, 100), 100u);
  EXPECT_EQ(expected_counter(2000, 1000), 2000000u);
  EXPECT_EQ(expected_counter(1ull << 32, 1), 0u);
  EXPECT_EQ(expected_counter((1ull << 32) + 3, 2), 6u);
}

}  // namespace
}  // namespace gpucheck
