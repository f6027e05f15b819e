// The datasheet figures and acceptance config the repository ships (baselines/), parsed once,
// for the tests of accept and fleet.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "../test_util.hpp"
#include "accept/config.hpp"
#include "gpucheck/core/specs.hpp"

namespace gpucheck::compare::testing {

inline const gpucheck::SpecDb& shipped_specs() {
  static const gpucheck::SpecDb db = [] {
    gpucheck::SpecDb d;
    std::string err;
    EXPECT_TRUE(gpucheck::SpecDb::parse(gpucheck::testutil::slurp(gpucheck::testutil::source_path("baselines/specs.json")),
                                        "specs.json", &d, &err))
        << err;
    return d;
  }();
  return db;
}

inline const AcceptConfig& shipped_accept_config() {
  static const AcceptConfig c = [] {
    auto parsed = parse_accept_config(gpucheck::testutil::slurp(gpucheck::testutil::source_path("baselines/accept.json")),
                                      "baselines/accept.json");
    EXPECT_TRUE(parsed.ok()) << parsed.error().str();
    return parsed.ok() ? *parsed : AcceptConfig{};
  }();
  return c;
}

}  // namespace gpucheck::compare::testing
