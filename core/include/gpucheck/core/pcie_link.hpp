// The PCIe link decision: whether a GPU's link is short of what it should train to, and in which
// dimension, from its readings (under load, at idle, the maxima NVML and the slot report, the
// SKU's link). Pure. `gpucheck accept` words it for its report (compare/accept/pcie_link.hpp);
// `gpucheck watch` judges a sampled job's links with it (compare/watch/rules.hpp). An idle
// generation below the target proves nothing: idle links drop to a low generation to save power.
#pragma once

#include <string>

namespace gpucheck {

// A link's generation and width; 0: not known.
struct PcieLinkValue {
  int gen = 0, width = 0;
};

// What the results say about one GPU's link.
struct PcieLinkReadings {
  PcieLinkValue load;      // the lowest read by the cases under load (pcie_*_load counters)
  PcieLinkValue idle;      // the context's pcie_*_current (the link at idle)
  int gpu_gen_max = 0;     // the GPU alone (pcie_gen_gpu_max)
  PcieLinkValue gpu_slot;  // the most GPU and system allow (NVML: pcie_*_max)
  PcieLinkValue slot;      // the slot's maximum (pcie_*_slot_max)
  PcieLinkValue sku_link;  // specs.json's link for the SKU (0: unknown SKU, or none there)
  std::string sku;         // the SKU's id; empty when the SKU is unknown
};

enum class LinkState { Ok, Short, IdleLow, Unknown };        // IdleLow: low at idle, which proves nothing
enum class LinkReadAt { None, UnderLoad, AtIdle, Maximum };  // Maximum: the most the link can train to
enum class LinkCause { None, SlotLimit, GpuMaximum, GpuAndSlotMaximum, TrainedNarrow };
enum class LinkWantFrom { Sku, GpuAndSlot };  // the SKU's link, or what GPU and slot allow
enum class LinkReferenceFrom { UnderLoad, SkuLink, GpuAndSlotMaximum };
// Which way the check went: short (fail), ok (pass), or why it could not say.
enum class LinkOutcome { Short, Ok, NoReading, IdleGeneration, NoExpectation };

// One dimension (generation or width) of the link.
struct LinkDimension {
  LinkState state = LinkState::Unknown;
  int seen = 0;  // the value judged (0: none)
  LinkReadAt read_at = LinkReadAt::None;
  LinkCause cause = LinkCause::None;  // why it is short (Short only)
  int cause_value = 0;                // the limit the cause names (the 4 of "the slot allows Gen4 only")
};

struct PcieLinkDecision {
  PcieLinkValue want;  // the link expected
  LinkWantFrom want_from = LinkWantFrom::GpuAndSlot;
  std::string sku;  // the SKU's id (empty: unknown)
  LinkDimension gen, width;
  LinkOutcome outcome = LinkOutcome::NoReading;
  // The link the bandwidth is measured against (0: none), and where it comes from.
  PcieLinkValue reference;
  LinkReferenceFrom reference_from = LinkReferenceFrom::GpuAndSlotMaximum;
};

[[nodiscard]] PcieLinkDecision decide_pcie_link(const PcieLinkReadings& r);

}  // namespace gpucheck
