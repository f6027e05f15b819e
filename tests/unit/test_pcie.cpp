#include <gtest/gtest.h>

#include "gpucheck/core/pcie.hpp"

namespace gpucheck {
namespace {

TEST(Pcie, LinkBandwidthPerGeneration) {
  // GT/s x lanes x encoding / 8 bits.
  EXPECT_NEAR(pcie_link_GBps({5, 16}), 32.0 * 16 * 128 / 130 / 8, 1e-9);  // 63.015
  EXPECT_NEAR(pcie_link_GBps({5, 16}), 63.015, 1e-3);
  EXPECT_NEAR(pcie_link_GBps({4, 16}), 31.508, 1e-3);
  EXPECT_NEAR(pcie_link_GBps({3, 16}), 15.754, 1e-3);
  EXPECT_NEAR(pcie_link_GBps({2, 16}), 8.0, 1e-9);   // 5 GT/s, 8b/10b
  EXPECT_NEAR(pcie_link_GBps({1, 1}), 0.25, 1e-9);
  EXPECT_NEAR(pcie_link_GBps({6, 16}), 128.0, 1e-9);
  // A Gen5 card trained at x8 carries half; at Gen3 x16 a quarter.
  EXPECT_NEAR(pcie_link_GBps({5, 8}) / pcie_link_GBps({5, 16}), 0.5, 1e-12);
  EXPECT_NEAR(pcie_link_GBps({3, 16}) / pcie_link_GBps({5, 16}), 0.25, 1e-12);
}

TEST(Pcie, UnknownLinksCarryNothing) {
  EXPECT_EQ(pcie_link_GBps({0, 16}), 0.0);
  EXPECT_EQ(pcie_link_GBps({7, 16}), 0.0);
  EXPECT_EQ(pcie_link_GBps({5, 0}), 0.0);
  EXPECT_EQ(pcie_link_GBps({5, -4}), 0.0);
  EXPECT_EQ(to_string(PcieLink{}), "unknown");
  EXPECT_EQ(to_string(PcieLink{5, 16}), "Gen5 x16");
}

TEST(Pcie, ParsesSysfs) {
  EXPECT_EQ(pcie_gen_from_sysfs_speed("32.0 GT/s PCIe\n"), 5);
  EXPECT_EQ(pcie_gen_from_sysfs_speed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(pcie_gen_from_sysfs_speed("8 GT/s"), 3);
  EXPECT_EQ(pcie_gen_from_sysfs_speed("2.5 GT/s"), 1);
  EXPECT_EQ(pcie_gen_from_sysfs_speed("64.0 GT/s PCIe"), 6);
  EXPECT_FALSE(pcie_gen_from_sysfs_speed("Unknown").has_value());
  EXPECT_FALSE(pcie_gen_from_sysfs_speed("12 GT/s").has_value());
  EXPECT_FALSE(pcie_gen_from_sysfs_speed("32.0").has_value());
  EXPECT_FALSE(pcie_gen_from_sysfs_speed("").has_value());
  EXPECT_EQ(pcie_width_from_sysfs("16\n"), 16);
  EXPECT_EQ(pcie_width_from_sysfs("x8"), 8);
  EXPECT_FALSE(pcie_width_from_sysfs("0").has_value());
  EXPECT_FALSE(pcie_width_from_sysfs("sixteen").has_value());
  EXPECT_FALSE(pcie_width_from_sysfs("255").has_value());
}

}  // namespace
}  // namespace gpucheck
