// The PCIe link check as a decision apart from its words: core's decide_pcie_link turns the
// link's readings (under load, at idle, the maxima NVML reports, the SKU's link) into a
// structured PcieLinkDecision; word_pcie_link says it in the report's English. Pure, no GpuView.
#pragma once

#include <string>

#include "gpucheck/core/pcie_link.hpp"

namespace gpucheck::compare {

// The decision is core's (gpucheck/core/pcie_link.hpp, shared with watch); its names here too.
using gpucheck::decide_pcie_link;
using gpucheck::LinkCause;
using gpucheck::LinkDimension;
using gpucheck::LinkOutcome;
using gpucheck::LinkReadAt;
using gpucheck::LinkReferenceFrom;
using gpucheck::LinkState;
using gpucheck::LinkWantFrom;
using gpucheck::PcieLinkDecision;
using gpucheck::PcieLinkReadings;
using gpucheck::PcieLinkValue;

// The decision as the report says it.
struct PcieLinkWords {
  std::string measured, floor, note;
};
[[nodiscard]] PcieLinkWords word_pcie_link(const PcieLinkDecision& d);
// Where the bandwidth's reference link comes from, for its notes: "read under load",
// "the nvidia-h200 link", "the most GPU and slot allow".
[[nodiscard]] std::string word_link_reference(const PcieLinkDecision& d);

}  // namespace gpucheck::compare
