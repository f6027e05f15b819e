// The acceptance judge on real H200 results (fixtures/h200_quick_06ccf6c.json, the accept
// suite's shape in fixtures/accept/h200_gpu0.json, whose figures are the same run's) and on
// copies edited here as a sick node would write them: a Gen4 or x8 link, a throttle reason,
// rows pending a remap, one GPU of two or four 15% low. Each must fail naming the GPU and the
// check; what the files do not hold is "not checked", never a failure. The tests read the
// rows' fields (verdict, check, item, value, limit, benchmark, the structured `basis`), not their
// English; a phrase is checked only where the words are the behaviour (each says so).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "../test_util.hpp"
#include "fake_fs.hpp"
#include "shipped.hpp"
#include "accept/command.hpp"
#include "accept/measure.hpp"
#include "cli/cli.hpp"
#include "runner/process.hpp"
#include "gpucheck/core/pcie.hpp"
#include "gpucheck/core/specs.hpp"

namespace gc = gpucheck::compare;
using gc::AcceptVerdict;
using gc::LinkCause;
using gc::LinkOutcome;
using gc::LinkReadAt;
using gc::LinkState;
using gpucheck::compare::testing::FakeFileSystem;
using json = nlohmann::ordered_json;

namespace {

// A file of the source tree, from its root.
std::string source(const std::string& rel) {
  return gpucheck::testutil::slurp(gpucheck::testutil::source_path(rel));
}
// The quick suite of commit 06ccf6c on an H200 (the baseline of 2026-11-29, kept as a fixture: the
// stored baseline itself is re-recorded as the suite changes).
json quick() { return json::parse(source("tests/unit/compare/fixtures/h200_quick_06ccf6c.json")); }
json accept_fixture() { return json::parse(source("tests/unit/compare/fixtures/accept/h200_gpu0.json")); }

const gpucheck::SpecDb& specs() { return gpucheck::compare::testing::shipped_specs(); }
const gc::AcceptConfig& config() { return gpucheck::compare::testing::shipped_accept_config(); }

// The same results as if another GPU of the node had written them.
json as_gpu(json doc, int index) {
  char pci[32];
  std::snprintf(pci, sizeof pci, "0000:%02X:00.0", 0x18 + index * 0x10);
  doc["context"]["gpucheck_device_index"] = std::to_string(index);
  doc["context"]["gpu_uuid"] = "GPU-3cad92c8-808f-91a7-2da5-c83ef7c7980" + std::to_string(index);
  doc["context"]["gpu_pci_bus_id"] = pci;
  return doc;
}

// The entry of a case (by its key). `const char*`, not a string: no temporary argument for a
// function returning a reference (g++ 13 -Wdangling-reference).
json& entry(json& doc, const char* key) {
  for (auto& e : doc["benchmarks"])
    if (e["name"].get<std::string>().starts_with(std::string(key) + "/")) return e;
  ADD_FAILURE() << "no " << key;
  return doc["benchmarks"][0];
}

// Every rate of the file (GBps, TFLOPS, busbw) times f: a GPU that lags by 1 - f.
void scale_rates(json& doc, double f) {
  for (auto& e : doc["benchmarks"])
    for (const char* k : {"GBps", "TFLOPS"})
      if (e.contains(k)) e[k] = e[k].get<double>() * f;
}

gc::AcceptReport judge(const std::vector<json>& docs) {
  std::vector<gc::Results> files;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    auto r = gc::parse_results(docs[i].dump(), "gpu" + std::to_string(i) + ".json");
    EXPECT_TRUE(r.ok()) << r.error().str();
    if (r.ok()) files.push_back(std::move(*r));
  }
  auto rep = gc::judge(files, specs(), config());
  EXPECT_TRUE(rep.ok()) << (rep.ok() ? "" : rep.error().str());
  return rep.ok() ? *rep : gc::AcceptReport{};
}

const gc::AcceptCheck* find(const gc::AcceptReport& r, const std::string& gpu_prefix, const std::string& check,
                            const std::string& item = "") {
  for (const auto& c : r.checks)
    if (c.gpu.starts_with(gpu_prefix) && c.check == check && c.item == item) return &c;
  return nullptr;
}

std::vector<std::string> lines_with(const gc::AcceptReport& r, AcceptVerdict v) {
  std::vector<std::string> out;
  for (const auto& c : r.checks)
    if (c.verdict == v) out.push_back(c.line());
  return out;
}

// "check item" of every row with the verdict, in report order: which rows, not what they say.
std::vector<std::string> rows_with(const gc::AcceptReport& r, AcceptVerdict v) {
  std::vector<std::string> out;
  for (const auto& c : r.checks)
    if (c.verdict == v) out.push_back(c.item.empty() ? c.check : c.check + " " + c.item);
  return out;
}

// The structured finding a row carries (a failure, and a default value, when it has none).
template <class T>
T basis(const gc::AcceptCheck* c) {
  if (c == nullptr) {
    ADD_FAILURE() << "no such row";
    return T{};
  }
  const T* b = std::get_if<T>(&c->basis);
  if (b == nullptr) ADD_FAILURE() << c->line() << ": carries no such basis";
  return b ? *b : T{};
}

std::string all(const std::vector<std::string>& xs) {
  std::string s;
  for (const auto& x : xs) s += x + "\n";
  return s;
}

// One dimension of a link decision, every field of it.
::testing::AssertionResult dimension_is(const gc::LinkDimension& d, LinkState state, int seen, LinkReadAt at,
                                        LinkCause cause = LinkCause::None, int cause_value = 0) {
  if (d.state == state && d.seen == seen && d.read_at == at && d.cause == cause && d.cause_value == cause_value)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "state " << static_cast<int>(d.state) << ", seen " << d.seen << ", read at "
                                       << static_cast<int>(d.read_at) << ", cause " << static_cast<int>(d.cause) << " "
                                       << d.cause_value;
}

#define EXPECT_VERDICT(report, gpu, check, item, want)                                          \
  do {                                                                                          \
    const gc::AcceptCheck* c_ = find(report, gpu, check, item);                                 \
    ASSERT_NE(c_, nullptr) << gpu << " " << check << " " << item;                               \
    EXPECT_EQ(c_->verdict, want) << c_->line() << " (measured " << c_->measured << ")";          \
  } while (false)

constexpr const char* kGpu0 = "GPU 0 0000:00:06.0";

}  // namespace

// ---- real results pass ----------------------------------------------------------------------

TEST(Accept, RealQuickResultsPassAndListWhatTheyLack) {
  const auto r = judge({quick()});
  EXPECT_FALSE(r.failed()) << all(lines_with(r, AcceptVerdict::Fail));
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].label, kGpu0);
  EXPECT_EQ(r.gpus[0].sku, "nvidia-h200");
  EXPECT_VERDICT(r, kGpu0, "pcie_link", "", AcceptVerdict::Pass);  // idle reading at the expected link
  for (const char* dir : {"h2d", "d2h"}) EXPECT_VERDICT(r, kGpu0, "pcie_bandwidth", dir, AcceptVerdict::Pass);
  for (const char* m : {"copy_kernel", "memcpy_d2d"}) EXPECT_VERDICT(r, kGpu0, "memory", m, AcceptVerdict::Pass);
  for (const char* d : {"bf16", "fp16", "tf32", "fp8"}) EXPECT_VERDICT(r, kGpu0, "gemm", d, AcceptVerdict::Pass);
  EXPECT_VERDICT(r, kGpu0, "clocks", "", AcceptVerdict::Pass);  // sw_power_cap only
  const auto clocks = basis<gc::ClockFindings>(find(r, kGpu0, "clocks"));
  EXPECT_EQ(clocks.cases, 0);  // the context's throttle_reasons only
  EXPECT_EQ(clocks.context_reasons, (std::vector<std::string>{"sw_power_cap"}));
  EXPECT_TRUE(clocks.context_faults.empty());
  EXPECT_EQ(clocks.fault_mask, 0u);
  EXPECT_VERDICT(r, kGpu0, "ecc", "mode", AcceptVerdict::Pass);
  // Older than the health keys, no burn, one GPU: said, not failed.
  EXPECT_EQ(rows_with(r, AcceptVerdict::NotChecked),
            (std::vector<std::string>{"ecc uncorrected", "memory_health remapped_rows_pending",
                                      "memory_health remapped_rows_failure", "memory_health retired_pages_pending",
                                      "burn bf16", "alike"}));
  // Why, in words (the reason has no field): the file predates the key, the driver did not fail to say.
  EXPECT_EQ(find(r, kGpu0, "ecc", "uncorrected")->note,
            "ecc_uncorrected_volatile not in the results (written by an older gpucheck)");
  EXPECT_EQ(find(r, kGpu0, "burn", "bf16")->benchmark, "matmul/burn/bf16/8192x8192x8192");
  EXPECT_VERDICT(r, "node vm", "nccl", "allreduce g1", AcceptVerdict::Reported);
  // The figures against their floors, as the terminal shows them.
  const auto* h2d = find(r, kGpu0, "pcie_bandwidth", "h2d");
  EXPECT_EQ(h2d->measured, "55.33 GB/s");
  EXPECT_EQ(h2d->floor, ">= 50.41 GB/s (80% of Gen5 x16)");
  EXPECT_EQ(find(r, kGpu0, "pcie_link")->measured, "Gen5 x16");
  const auto link = basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link"));
  EXPECT_EQ(link.outcome, LinkOutcome::Ok);
  EXPECT_EQ(link.want_from, gc::LinkWantFrom::Sku);
  EXPECT_EQ(link.gen.read_at, LinkReadAt::AtIdle);
  EXPECT_EQ(link.reference_from, gc::LinkReferenceFrom::SkuLink);  // no reading under load
}

TEST(Accept, AcceptSuiteShapeOfTheSameRunPasses) {
  const auto r = judge({accept_fixture()});
  EXPECT_FALSE(r.failed()) << all(lines_with(r, AcceptVerdict::Fail));
  const auto link = basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link"));
  EXPECT_EQ(link.outcome, LinkOutcome::Ok);
  EXPECT_EQ(link.gen.read_at, LinkReadAt::UnderLoad);
  EXPECT_EQ(link.width.read_at, LinkReadAt::UnderLoad);
  EXPECT_EQ(link.reference_from, gc::LinkReferenceFrom::UnderLoad);
  for (const char* k : {"remapped_rows_pending", "remapped_rows_failure"})
    EXPECT_VERDICT(r, kGpu0, "memory_health", k, AcceptVerdict::Pass);
  // Cards that remap rows leave retired_pages_pending unknown: no row for it.
  EXPECT_EQ(find(r, kGpu0, "memory_health", "retired_pages_pending"), nullptr);
  EXPECT_VERDICT(r, kGpu0, "ecc", "uncorrected", AcceptVerdict::Pass);
  EXPECT_VERDICT(r, kGpu0, "burn", "bf16", AcceptVerdict::Pass);
  const auto burn = basis<gc::BurnFindings>(find(r, kGpu0, "burn", "bf16"));
  EXPECT_EQ(burn.iterations, 36906);
  EXPECT_EQ(burn.mismatches, 0);
  EXPECT_EQ(rows_with(r, AcceptVerdict::NotChecked), (std::vector<std::string>{"alike"}));
}

// ---- 1. PCIe link -------------------------------------------------------------------------

TEST(Accept, Gen4UnderLoadFailsNamingGpuAndNumbers) {
  json d = accept_fixture();
  for (const char* k : {"pcie/h2d/pinned/256MiB", "pcie/d2h/pinned/256MiB"}) entry(d, k)["pcie_gen_load"] = 4;
  const auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "pcie_link", "", AcceptVerdict::Fail);
  const auto link = basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link"));
  EXPECT_EQ(link.outcome, LinkOutcome::Short);
  EXPECT_EQ(link.want.gen, 5);
  EXPECT_EQ(link.want.width, 16);
  EXPECT_EQ(link.want_from, gc::LinkWantFrom::Sku);
  EXPECT_TRUE(dimension_is(link.gen, LinkState::Short, 4, LinkReadAt::UnderLoad));  // nothing caps it: it trained low
  EXPECT_TRUE(dimension_is(link.width, LinkState::Ok, 16, LinkReadAt::UnderLoad));
  // Bandwidth is judged against the link it ran at: 55 GB/s on Gen4 x16 (31.5) is > 100%.
  EXPECT_VERDICT(r, kGpu0, "pcie_bandwidth", "h2d", AcceptVerdict::Pass);
}

TEST(Accept, Gen4ContextOfQuickResultsFails) {
  json d = quick();
  d["context"]["pcie_gen_current"] = "4";
  d["context"]["pcie_gen_max"] = "4";  // NVML: the most GPU and system allow
  auto r = judge({d});
  ASSERT_TRUE(r.failed());
  EXPECT_VERDICT(r, kGpu0, "pcie_link", "", AcceptVerdict::Fail);
  auto link = basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link"));
  EXPECT_EQ(link.outcome, LinkOutcome::Short);
  // It cannot train higher than NVML's maximum, whatever it reads at idle.
  EXPECT_TRUE(dimension_is(link.gen, LinkState::Short, 4, LinkReadAt::Maximum, LinkCause::GpuAndSlotMaximum, 4));
  EXPECT_TRUE(dimension_is(link.width, LinkState::Ok, 16, LinkReadAt::AtIdle));
  d["context"]["pcie_gen_gpu_max"] = "5";  // the GPU alone could: the slot caps it
  r = judge({d});
  link = basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link"));
  EXPECT_VERDICT(r, kGpu0, "pcie_link", "", AcceptVerdict::Fail);
  EXPECT_TRUE(dimension_is(link.gen, LinkState::Short, 4, LinkReadAt::Maximum, LinkCause::SlotLimit, 4));
  EXPECT_TRUE(dimension_is(link.width, LinkState::Ok, 16, LinkReadAt::AtIdle));
}

TEST(Accept, LowGenerationReadAtIdleIsNotCheckedNotFailed) {
  json d = quick();
  d["context"]["pcie_gen_current"] = "1";  // links idle at Gen1 to save power
  const auto r = judge({d});
  EXPECT_FALSE(r.failed()) << all(lines_with(r, AcceptVerdict::Fail));
  EXPECT_VERDICT(r, kGpu0, "pcie_link", "", AcceptVerdict::NotChecked);
  const auto link = basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link"));
  EXPECT_EQ(link.outcome, LinkOutcome::IdleGeneration);
  EXPECT_TRUE(dimension_is(link.gen, LinkState::IdleLow, 1, LinkReadAt::AtIdle));
  EXPECT_TRUE(dimension_is(link.width, LinkState::Ok, 16, LinkReadAt::AtIdle));
  // Bandwidth still checked, against the SKU's link.
  EXPECT_VERDICT(r, kGpu0, "pcie_bandwidth", "h2d", AcceptVerdict::Pass);
}

TEST(Accept, SlotThatCapsTheCardIsNamed) {
  json d = accept_fixture();
  d["context"]["pcie_gen_slot_max"] = "4";
  for (const char* k : {"pcie/h2d/pinned/256MiB", "pcie/d2h/pinned/256MiB"}) entry(d, k)["pcie_gen_load"] = 4;
  const auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "pcie_link", "", AcceptVerdict::Fail);
  const auto link = basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link"));
  EXPECT_TRUE(dimension_is(link.gen, LinkState::Short, 4, LinkReadAt::UnderLoad, LinkCause::SlotLimit, 4));
  EXPECT_TRUE(dimension_is(link.width, LinkState::Ok, 16, LinkReadAt::UnderLoad));
}

TEST(Accept, X8LinkFails) {
  json d = quick();
  d["context"]["pcie_width_current"] = "8";  // the width is not lowered at idle: a narrow link is real
  auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "pcie_link", "", AcceptVerdict::Fail);
  auto link = basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link"));
  EXPECT_TRUE(dimension_is(link.width, LinkState::Short, 8, LinkReadAt::AtIdle, LinkCause::TrainedNarrow));
  EXPECT_TRUE(dimension_is(link.gen, LinkState::Ok, 5, LinkReadAt::AtIdle));
  d["context"]["pcie_gen_current"] = "1";  // and idling at Gen1: the generation is left out
  r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "pcie_link", "", AcceptVerdict::Fail);
  link = basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link"));
  EXPECT_EQ(link.outcome, LinkOutcome::Short);
  EXPECT_TRUE(dimension_is(link.gen, LinkState::IdleLow, 1, LinkReadAt::AtIdle));
  EXPECT_TRUE(dimension_is(link.width, LinkState::Short, 8, LinkReadAt::AtIdle, LinkCause::TrainedNarrow));

  json l = accept_fixture();
  entry(l, "pcie/h2d/pinned/256MiB")["pcie_width_load"] = 8;
  l["context"]["pcie_width_slot_max"] = "8";
  r = judge({l});
  EXPECT_VERDICT(r, kGpu0, "pcie_link", "", AcceptVerdict::Fail);
  link = basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link"));
  EXPECT_TRUE(dimension_is(link.width, LinkState::Short, 8, LinkReadAt::UnderLoad, LinkCause::SlotLimit, 8));
  EXPECT_TRUE(dimension_is(link.gen, LinkState::Ok, 5, LinkReadAt::UnderLoad));
}

// The words of each link decision above: here the text is the behaviour under test (what the
// report tells the person at the machine), so the notes are compared whole.
TEST(Accept, PcieLinkWording) {
  using V = gc::PcieLinkValue;
  const V h200{5, 16};
  const auto readings = [&](V load, V idle, int gpu_gen_max, V gpu_slot, V slot) {
    return gc::PcieLinkReadings{load, idle, gpu_gen_max, gpu_slot, slot, h200, "nvidia-h200"};
  };
  const std::pair<gc::PcieLinkReadings, const char*> cases[] = {
      {readings({4, 16}, {5, 16}, 0, h200, {}), "PCIe Gen4 x16, expected Gen5 x16 (read under load)"},
      {readings({}, {4, 16}, 0, {4, 16}, {}),
       "PCIe Gen4 x16, expected Gen5 x16; GPU and slot allow Gen4 at most (NVML) (width read at idle)"},
      {readings({}, {4, 16}, 5, {4, 16}, {}), "PCIe Gen4 x16, expected Gen5 x16; the slot allows Gen4 only (width read at idle)"},
      {readings({4, 16}, {5, 16}, 0, h200, {4, 0}),
       "PCIe Gen4 x16, expected Gen5 x16; the slot allows Gen4 only (read under load)"},
      {readings({}, {5, 8}, 0, h200, {}),
       "PCIe Gen5 x8, expected Gen5 x16; trained narrow: reseat the card or riser (read at idle)"},
      {readings({}, {1, 8}, 0, h200, {}),
       "PCIe x8, expected Gen5 x16; trained narrow: reseat the card or riser (width read at idle; the generation, "
       "Gen1 at idle, proves nothing)"},
      {readings({5, 8}, {5, 16}, 0, h200, {0, 8}), "PCIe Gen5 x8, expected Gen5 x16; the slot allows x8 only (read under load)"},
      {readings({}, {5, 16}, 0, h200, {}), "read at idle"},
      {readings({5, 16}, {5, 16}, 0, h200, {}), "read under load"},
      {readings({}, {1, 16}, 0, h200, {}),
       "generation read at idle (Gen1): links drop to a low generation when idle; the accept suite's bench_pcie "
       "reads it under load"},
      {readings({}, {}, 0, {}, {}),
       "no PCIe link reading in the results (pcie_gen_load/pcie_width_load counters or context)"},
      {gc::PcieLinkReadings{{}, {5, 16}, 0, {}, {}, {}, ""}, "no expected link: unknown SKU and no maximum reported"},
  };
  for (const auto& [r, want] : cases) {
    const auto d = gc::decide_pcie_link(r);
    EXPECT_EQ(gc::word_pcie_link(d).note, want);
  }
  const auto d = gc::decide_pcie_link(readings({}, {5, 16}, 0, h200, {}));
  EXPECT_EQ(gc::word_pcie_link(d).floor, "Gen5 x16 (nvidia-h200)");
  EXPECT_EQ(gc::word_pcie_link(d).measured, "Gen5 x16");
  EXPECT_EQ(gc::word_link_reference(d), "the nvidia-h200 link");
  const auto unknown = gc::decide_pcie_link(gc::PcieLinkReadings{{}, {5, 16}, 0, {5, 16}, {}, {}, ""});
  EXPECT_EQ(gc::word_pcie_link(unknown).floor, "Gen5 x16 (what GPU and slot allow)");
  EXPECT_EQ(gc::word_link_reference(unknown), "the most GPU and slot allow");
}

// ---- 2. PCIe bandwidth: the 80% boundary ---------------------------------------------------

TEST(Accept, PcieBandwidthBoundary) {
  const double link = gpucheck::pcie_link_GBps({5, 16});
  EXPECT_NEAR(link, 63.015, 0.001);
  for (const auto& [share, want] : {std::pair{0.799, AcceptVerdict::Fail}, std::pair{0.801, AcceptVerdict::Pass}}) {
    json d = accept_fixture();
    entry(d, "pcie/d2h/pinned/256MiB")["GBps"] = share * link;
    const auto r = judge({d});
    EXPECT_VERDICT(r, kGpu0, "pcie_bandwidth", "d2h", want);
    const auto* c = find(r, kGpu0, "pcie_bandwidth", "d2h");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->benchmark, "pcie/d2h/pinned/256MiB");
    EXPECT_EQ(c->unit, "GB/s");
    ASSERT_TRUE(c->value && c->limit);
    EXPECT_NEAR(*c->value, share * link, 1e-9);
    EXPECT_NEAR(*c->limit, 0.80 * link, 1e-9);  // 80% of the Gen5 x16 it ran at
    const auto l = basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link"));
    EXPECT_EQ(l.reference.gen, 5);
    EXPECT_EQ(l.reference.width, 16);
    EXPECT_EQ(l.reference_from, gc::LinkReferenceFrom::UnderLoad);
  }
}

// ---- 3. HBM and tensor cores ---------------------------------------------------------------

TEST(Accept, HbmAndGemmFloorsOfTheDatasheet) {
  json d = accept_fixture();
  entry(d, "memory/copy_kernel/u8/2GiB")["GBps"] = 0.79 * 4800;
  entry(d, "matmul/cublaslt/tf32/8192x8192x8192")["TFLOPS"] = 0.64 * 494.7;
  entry(d, "matmul/cublaslt/bf16/8192x8192x8192")["TFLOPS"] = 0.66 * 989.4;
  const auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "memory", "copy_kernel", AcceptVerdict::Fail);
  EXPECT_VERDICT(r, kGpu0, "memory", "memcpy_d2d", AcceptVerdict::Pass);
  EXPECT_VERDICT(r, kGpu0, "gemm", "tf32", AcceptVerdict::Fail);
  EXPECT_VERDICT(r, kGpu0, "gemm", "bf16", AcceptVerdict::Pass);
  const auto* tf32 = find(r, kGpu0, "gemm", "tf32");
  EXPECT_EQ(tf32->benchmark, "matmul/cublaslt/tf32/8192x8192x8192");
  EXPECT_EQ(tf32->unit, "TFLOP/s");
  ASSERT_TRUE(tf32->value && tf32->limit);
  EXPECT_NEAR(*tf32->value, 0.64 * 494.7, 1e-9);
  EXPECT_NEAR(*tf32->limit, 0.65 * 494.7, 1e-9);  // 65% of the datasheet
  const auto* copy = find(r, kGpu0, "memory", "copy_kernel");
  ASSERT_TRUE(copy->value && copy->limit);
  EXPECT_NEAR(*copy->limit, 0.80 * 4800, 1e-9);
}

TEST(Accept, ErroredCaseFailsSkippedOrMissingIsNotChecked) {
  json d = accept_fixture();
  json& fp8 = entry(d, "matmul/cublaslt/fp8e4m3/8192x8192x8192");
  fp8 = {{"name", fp8["name"]}, {"run_name", fp8["run_name"]}, {"run_type", "iteration"}, {"skipped", true},
         {"skip_message", "fp8 needs compute capability 8.9"}};
  json& fp16 = entry(d, "matmul/cublaslt/fp16/8192x8192x8192");
  fp16 = {{"name", fp16["name"]}, {"run_type", "iteration"}, {"error_occurred", true},
          {"error_message", "CUBLAS_STATUS_EXECUTION_FAILED"}};
  auto& list = d["benchmarks"];
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i]["name"].get<std::string>().starts_with("memory/memcpy_d2d/")) list.erase(i);
  const auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "gemm", "fp8", AcceptVerdict::NotChecked);
  EXPECT_EQ(find(r, kGpu0, "gemm", "fp8")->benchmark, "matmul/cublaslt/fp8e4m3/8192x8192x8192");
  EXPECT_FALSE(find(r, kGpu0, "gemm", "fp8")->value);
  EXPECT_VERDICT(r, kGpu0, "gemm", "fp16", AcceptVerdict::Fail);
  EXPECT_EQ(find(r, kGpu0, "gemm", "fp16")->benchmark, "matmul/cublaslt/fp16/8192x8192x8192");
  EXPECT_FALSE(find(r, kGpu0, "gemm", "fp16")->value);
  // The binary's own message is passed on: the words are the behaviour here.
  EXPECT_NE(find(r, kGpu0, "gemm", "fp16")->note.find("CUBLAS_STATUS_EXECUTION_FAILED"), std::string::npos);
  EXPECT_VERDICT(r, kGpu0, "memory", "memcpy_d2d", AcceptVerdict::NotChecked);
  EXPECT_EQ(find(r, kGpu0, "memory", "memcpy_d2d")->benchmark, "memory/memcpy_d2d/u8/2GiB");
  EXPECT_FALSE(find(r, kGpu0, "memory", "memcpy_d2d")->value);
}

TEST(Accept, UnknownSkuLeavesDatasheetChecksNotChecked) {
  json d = quick();
  d["context"]["gpu_name"] = "NVIDIA Imaginary 9000";
  d["context"]["gpu_sku"] = "unknown";
  const auto r = judge({d});
  EXPECT_FALSE(r.failed()) << all(lines_with(r, AcceptVerdict::Fail));
  EXPECT_EQ(r.gpus[0].sku, "unknown");
  EXPECT_VERDICT(r, kGpu0, "memory", "copy_kernel", AcceptVerdict::NotChecked);
  const auto* copy = find(r, kGpu0, "memory", "copy_kernel");
  ASSERT_TRUE(copy->value);  // measured, with nothing to hold it to
  EXPECT_NEAR(*copy->value, 4263, 0.5);
  EXPECT_FALSE(copy->limit);
  for (const char* dt : {"bf16", "fp16", "tf32", "fp8"}) EXPECT_VERDICT(r, kGpu0, "gemm", dt, AcceptVerdict::NotChecked);
  // The link is still held to what GPU and slot report, and bandwidth to that link.
  EXPECT_VERDICT(r, kGpu0, "pcie_link", "", AcceptVerdict::Pass);
  EXPECT_EQ(basis<gc::PcieLinkDecision>(find(r, kGpu0, "pcie_link")).want_from, gc::LinkWantFrom::GpuAndSlot);
  EXPECT_VERDICT(r, kGpu0, "pcie_bandwidth", "h2d", AcceptVerdict::Pass);
  EXPECT_VERDICT(r, kGpu0, "ecc", "mode", AcceptVerdict::Pass);  // on, though no rule asks for it

  d["context"]["ecc"] = "disabled";
  const auto off = judge({d});
  EXPECT_VERDICT(off, kGpu0, "ecc", "mode", AcceptVerdict::Reported);  // no ECC rule for an unknown SKU
  EXPECT_EQ(find(off, kGpu0, "ecc", "mode")->measured, "disabled");
}

TEST(Accept, SkuWithoutFp8HasNoFp8Row) {
  json d = quick();
  d["context"]["gpu_name"] = "NVIDIA A100-SXM4-80GB";
  auto& list = d["benchmarks"];
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i]["name"].get<std::string>().starts_with("matmul/cublaslt/fp8e4m3/")) list.erase(i);
  const auto r = judge({d});
  EXPECT_EQ(r.gpus[0].sku, "nvidia-a100-sxm4-80gb");
  EXPECT_EQ(find(r, kGpu0, "gemm", "fp8"), nullptr);
  EXPECT_VERDICT(r, kGpu0, "pcie_link", "", AcceptVerdict::Pass);  // Gen5 x16 is above A100's Gen4 x16
}

// ---- 4. clocks and health ----------------------------------------------------------------

TEST(Accept, HwSlowdownInContextFails) {
  json d = quick();
  d["context"]["throttle_reasons"] = "hw_slowdown";
  const auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "clocks", "", AcceptVerdict::Fail);
  const auto clocks = basis<gc::ClockFindings>(find(r, kGpu0, "clocks"));
  EXPECT_EQ(clocks.context_faults, (std::vector<std::string>{"hw_slowdown"}));
  EXPECT_EQ(clocks.fault_mask, 0u);  // the context alone says it
}

TEST(Accept, ThermalReasonInACaseFailsAndNamesTheCase) {
  json d = accept_fixture();
  entry(d, "matmul/cublaslt/bf16/8192x8192x8192")["clock_event_reasons"] = 0x4 | 0x40;
  const auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "clocks", "", AcceptVerdict::Fail);
  const auto clocks = basis<gc::ClockFindings>(find(r, kGpu0, "clocks"));
  EXPECT_EQ(clocks.fault_mask, 0x40u);  // hw_thermal_slowdown
  EXPECT_EQ(clocks.fault_cases, (std::vector<std::string>{"matmul/cublaslt/bf16/8192x8192x8192"}));
  EXPECT_VERDICT(r, kGpu0, "burn", "bf16", AcceptVerdict::Pass);  // the burn has its own row
}

TEST(Accept, AReasonInOneRepetitionCounts) {
  // Three repetitions of the bf16 GEMM, thermal slow-down in the second only: the median of
  // the masks would hide it; the OR over repetitions does not.
  json d = accept_fixture();
  json& bf16 = entry(d, "matmul/cublaslt/bf16/8192x8192x8192");
  const std::string run = bf16["name"].get<std::string>();
  json reps = json::array();
  for (int i = 0; i < 3; ++i) {
    json e = bf16;
    e["run_name"] = run;
    e["run_type"] = "iteration";
    e["repetitions"] = 3;
    e["repetition_index"] = i;
    e["clock_event_reasons"] = i == 1 ? 0x4 | 0x40 : 0x4;
    reps.push_back(e);
  }
  json kept = json::array();
  for (const auto& e : d["benchmarks"])
    if (e["name"] != run) kept.push_back(e);
  for (const auto& e : reps) kept.push_back(e);
  d["benchmarks"] = kept;
  const auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "clocks", "", AcceptVerdict::Fail);
  const auto clocks = basis<gc::ClockFindings>(find(r, kGpu0, "clocks"));
  EXPECT_EQ(clocks.fault_mask, 0x40u);  // hw_thermal_slowdown
  EXPECT_EQ(clocks.fault_cases, (std::vector<std::string>{"matmul/cublaslt/bf16/8192x8192x8192"}));
}

TEST(Accept, PowerCapAloneIsReportedNotFailed) {
  json d = accept_fixture();
  for (auto& e : d["benchmarks"]) e["clock_event_reasons"] = 0x4;
  const auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "clocks", "", AcceptVerdict::Pass);
  const auto clocks = basis<gc::ClockFindings>(find(r, kGpu0, "clocks"));
  EXPECT_EQ(clocks.power_capped, 9);
  EXPECT_EQ(clocks.cases, 9);
  EXPECT_EQ(clocks.fault_mask, 0u);
}

TEST(Accept, RemappedRowsPendingFails) {
  json d = quick();
  d["context"]["remapped_rows_pending"] = "yes";
  d["context"]["remapped_rows_uncorrectable"] = "2";
  const auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "memory_health", "remapped_rows_pending", AcceptVerdict::Fail);
  // The advice and the remap counts are said in the note only: its words are what is tested.
  EXPECT_EQ(find(r, kGpu0, "memory_health", "remapped_rows_pending")->line(),
            "GPU 0 0000:00:06.0: memory_health remapped_rows_pending: rows wait for a remap: reset the GPU, then test "
            "again; 2 rows remapped for uncorrectable and 0 for correctable errors");
  // remapped_rows_failure is not in this file: said, not failed.
  EXPECT_VERDICT(r, kGpu0, "memory_health", "remapped_rows_failure", AcceptVerdict::NotChecked);
}

TEST(Accept, EccStates) {
  json d = accept_fixture();
  d["context"]["ecc"] = "disabled";
  d["context"]["ecc_uncorrected_volatile"] = "3";
  d["context"]["ecc_uncorrected_aggregate"] = "7";
  d["context"]["remapped_rows_failure"] = "yes";
  auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "ecc", "mode", AcceptVerdict::Fail);
  EXPECT_VERDICT(r, kGpu0, "ecc", "uncorrected", AcceptVerdict::Fail);
  EXPECT_VERDICT(r, kGpu0, "memory_health", "remapped_rows_failure", AcceptVerdict::Fail);
  EXPECT_EQ(find(r, kGpu0, "ecc", "uncorrected")->value, 3);  // since the driver loaded
  // The card's lifetime count is reported in the note only: its words are what is tested.
  EXPECT_NE(find(r, kGpu0, "ecc", "uncorrected")->note.find("7 over the card's life"), std::string::npos);

  json u = accept_fixture();  // unknown everywhere: reported as not checked, never failed
  for (const char* k : {"ecc", "ecc_uncorrected_volatile", "remapped_rows_pending", "remapped_rows_failure"})
    u["context"][k] = "unknown";
  r = judge({u});
  EXPECT_FALSE(r.failed()) << all(lines_with(r, AcceptVerdict::Fail));
  EXPECT_VERDICT(r, kGpu0, "ecc", "mode", AcceptVerdict::NotChecked);
  // Why, in words (the reason has no field): the driver did not say, not an older file.
  EXPECT_EQ(find(r, kGpu0, "ecc", "mode")->note, "ecc unknown (NVML did not report it)");

  json old = accept_fixture();  // aggregate errors alone are history: reported in the note
  old["context"]["ecc_uncorrected_aggregate"] = "2";
  r = judge({old});
  EXPECT_VERDICT(r, kGpu0, "ecc", "uncorrected", AcceptVerdict::Pass);
  EXPECT_EQ(find(r, kGpu0, "ecc", "uncorrected")->value, 0);
}

// ---- 5. all GPUs alike -------------------------------------------------------------------

TEST(Accept, OneGpuOfFourFifteenPercentLowIsTheOutlier) {
  std::vector<json> docs;
  for (int i = 0; i < 4; ++i) docs.push_back(as_gpu(quick(), i));
  scale_rates(docs[2], 0.85);
  const auto r = judge(docs);
  ASSERT_EQ(r.gpus.size(), 4u);
  const std::string slow = "GPU 2 0000:38:00.0";
  EXPECT_EQ(r.gpus[2].label, slow);
  EXPECT_VERDICT(r, slow, "alike", "gemm bf16", AcceptVerdict::Fail);
  const auto* bf16 = find(r, slow, "alike", "gemm bf16");
  EXPECT_EQ(bf16->benchmark, "matmul/cublaslt/bf16/8192x8192x8192");
  EXPECT_EQ(bf16->unit, "TFLOP/s");
  ASSERT_TRUE(bf16->value && bf16->limit);
  EXPECT_NEAR(*bf16->value, 680.3, 0.05);
  EXPECT_NEAR(*bf16->limit / 0.90, 800.4, 0.05);  // 10% below the others' median
  // Which GPUs the median is of is said in the note only: its words are what is tested.
  EXPECT_NE(bf16->note.find("(800.4 TFLOP/s, GPUs 0, 1, 3)"), std::string::npos) << bf16->note;
  for (const auto& c : r.checks)  // only the slow one
    if (c.verdict == AcceptVerdict::Fail) {
      EXPECT_EQ(c.gpu, slow) << c.line();
    }
  EXPECT_GT(r.count(AcceptVerdict::Fail), 0);
  for (const char* g : {"GPU 0 ", "GPU 1 ", "GPU 3 "}) EXPECT_VERDICT(r, g, "alike", "", AcceptVerdict::Pass);
}

TEST(Accept, OneGpuOfTwoFifteenPercentLowIsNamedNotBoth) {
  json a = as_gpu(accept_fixture(), 0), b = as_gpu(accept_fixture(), 1);
  scale_rates(b, 0.85);
  const auto r = judge({a, b});
  EXPECT_VERDICT(r, "GPU 0 ", "alike", "", AcceptVerdict::Pass);
  EXPECT_VERDICT(r, "GPU 1 ", "alike", "memory copy_kernel", AcceptVerdict::Fail);
  EXPECT_VERDICT(r, "GPU 1 ", "alike", "burn bf16", AcceptVerdict::Fail);
  EXPECT_VERDICT(r, "GPU 1 0000:28:00.0", "alike", "pcie h2d", AcceptVerdict::Fail);
}

TEST(Accept, OutlierBoundaryAtTenPercent) {
  for (const auto& [factor, want] : {std::pair{0.901, AcceptVerdict::Pass}, std::pair{0.899, AcceptVerdict::Fail}}) {
    std::vector<json> docs;
    for (int i = 0; i < 4; ++i) docs.push_back(as_gpu(accept_fixture(), i));
    auto& bf16 = entry(docs[3], "matmul/cublaslt/bf16/8192x8192x8192");
    bf16["TFLOPS"] = bf16["TFLOPS"].get<double>() * factor;
    const auto r = judge(docs);
    if (want == AcceptVerdict::Pass) {
      EXPECT_FALSE(r.failed()) << all(lines_with(r, AcceptVerdict::Fail));
      EXPECT_VERDICT(r, "GPU 3 ", "alike", "", AcceptVerdict::Pass);
      // The pass row names the closest call in its note only: its words are what is tested.
      EXPECT_NE(find(r, "GPU 3 ", "alike")->note.find("lowest: gemm bf16 9.9% below"), std::string::npos);
    } else {
      EXPECT_VERDICT(r, "GPU 3 ", "alike", "gemm bf16", AcceptVerdict::Fail);
      EXPECT_EQ(r.count(AcceptVerdict::Fail), 1);
    }
  }
}

TEST(Accept, FasterGpuIsNotAnOutlier) {
  std::vector<json> docs;
  for (int i = 0; i < 3; ++i) docs.push_back(as_gpu(accept_fixture(), i));
  scale_rates(docs[1], 1.2);  // the others' median is then 1.1x: 9.1% above each normal GPU
  auto r = judge(docs);
  EXPECT_FALSE(r.failed()) << all(lines_with(r, AcceptVerdict::Fail));
  // Of two, the slower is named whichever of them is off: never the faster one.
  docs.pop_back();
  r = judge(docs);
  EXPECT_VERDICT(r, "GPU 1 ", "alike", "", AcceptVerdict::Pass);
  EXPECT_VERDICT(r, "GPU 0 ", "alike", "gemm bf16", AcceptVerdict::Fail);
}

TEST(Accept, GpusOfDifferentHostsAreNotComparedWithEachOther) {
  json a = as_gpu(accept_fixture(), 0), b = as_gpu(accept_fixture(), 0);
  b["context"]["host_name"] = "node-b";
  b["context"]["gpu_uuid"] = "GPU-other";
  scale_rates(b, 0.85);
  const auto r = judge({a, b});
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].label, "node-b GPU 0 0000:18:00.0");  // hosts named once there are several
  EXPECT_VERDICT(r, "node-b GPU 0", "alike", "", AcceptVerdict::NotChecked);
}

// ---- 6. NCCL ------------------------------------------------------------------------------

TEST(Accept, NcclFloorOnlyWhereTheConfigSetsOne) {
  for (const auto& [busbw, ranks, want] : {std::tuple{324.4, 2, AcceptVerdict::Pass}, std::tuple{200.0, 2, AcceptVerdict::Fail},
                                           std::tuple{200.0, 4, AcceptVerdict::Reported}}) {
    std::vector<json> docs;
    for (int i = 0; i < ranks; ++i) docs.push_back(as_gpu(accept_fixture(), i));
    json& n = entry(docs[0], "nccl/allreduce/fp32/1GiB/g1");
    const std::string name = "nccl/allreduce/fp32/1GiB/g" + std::to_string(ranks);
    n["name"] = n["run_name"] = name + "/manual_time";
    n["busbw_GBps"] = busbw;
    for (std::size_t i = 1; i < docs.size(); ++i) {
      auto& list = docs[i]["benchmarks"];
      for (std::size_t k = 0; k < list.size(); ++k)
        if (list[k]["name"].get<std::string>().starts_with("nccl/")) list.erase(k);
    }
    const auto r = judge(docs);
    EXPECT_VERDICT(r, "node vm", "nccl", "allreduce g" + std::to_string(ranks), want);
  }
}

// ---- 7. burn ------------------------------------------------------------------------------

TEST(Accept, BurnMismatchErrorOrThrottleFails) {
  json d = accept_fixture();
  entry(d, "matmul/burn/bf16/8192x8192x8192")["mismatches"] = 2;
  auto r = judge({d});
  EXPECT_VERDICT(r, kGpu0, "burn", "bf16", AcceptVerdict::Fail);
  EXPECT_EQ(basis<gc::BurnFindings>(find(r, kGpu0, "burn", "bf16")).mismatches, 2);

  json e = accept_fixture();
  json& burn = entry(e, "matmul/burn/bf16/8192x8192x8192");
  burn = {{"name", burn["name"]}, {"run_type", "iteration"}, {"error_occurred", true},
          {"error_message", "iteration 812: 3 of 67108864 elements differ from the first iteration's result"}};
  r = judge({e});
  EXPECT_VERDICT(r, kGpu0, "burn", "bf16", AcceptVerdict::Fail);
  EXPECT_EQ(find(r, kGpu0, "burn", "bf16")->benchmark, "matmul/burn/bf16/8192x8192x8192");
  // The binary's own message is passed on: the words are the behaviour here.
  EXPECT_NE(find(r, kGpu0, "burn", "bf16")->note.find("iteration 812"), std::string::npos);

  json t = accept_fixture();
  entry(t, "matmul/burn/bf16/8192x8192x8192")["clock_event_reasons"] = 0x4 | 0x20;
  r = judge({t});
  EXPECT_VERDICT(r, kGpu0, "burn", "bf16", AcceptVerdict::Fail);
  EXPECT_VERDICT(r, kGpu0, "clocks", "", AcceptVerdict::Pass);  // the burn's own row says it
  const auto throttled = basis<gc::BurnFindings>(find(r, kGpu0, "burn", "bf16"));
  EXPECT_EQ(throttled.reasons.fault_mask, 0x20u);  // sw_thermal_slowdown
  EXPECT_EQ(throttled.mismatches, 0);
}

TEST(Accept, NonFiniteOrOddCountersAreNotFigures) {
  std::string text = source("tests/unit/compare/fixtures/accept/h200_gpu0.json");
  const std::string h2d = "\"GBps\": 55.32677014092559";
  ASSERT_NE(text.find(h2d), std::string::npos);
  text.replace(text.find(h2d), h2d.size(), "\"GBps\": NaN");  // Google Benchmark writes bare NaN
  json parsed = json::parse(source("tests/unit/compare/fixtures/accept/h200_gpu0.json"));
  auto r = gc::parse_results(text, "nan.json");
  ASSERT_TRUE(r.ok()) << r.error().str();
  auto rep = gc::judge({*r}, specs(), config());
  ASSERT_TRUE(rep.ok());
  // The case ran and wrote no figure: a failed check naming the value, not "no GBps counter".
  EXPECT_VERDICT(*rep, kGpu0, "pcie_bandwidth", "h2d", AcceptVerdict::Fail);
  EXPECT_EQ(find(*rep, kGpu0, "pcie_bandwidth", "h2d")->benchmark, "pcie/h2d/pinned/256MiB");
  EXPECT_EQ(find(*rep, kGpu0, "pcie_bandwidth", "h2d")->measured, "NaN");
  EXPECT_FALSE(find(*rep, kGpu0, "pcie_bandwidth", "h2d")->value);  // NaN is no figure

  // Issue 18, item 5: a clock_event_reasons of 8.5 was dropped and the clocks passed. A value
  // that is no mask is "not checked" with the value, never a pass.
  entry(parsed, "memory/copy_kernel/u8/2GiB")["clock_event_reasons"] = 8.5;  // not a mask
  const auto odd = judge({parsed});
  EXPECT_VERDICT(odd, kGpu0, "clocks", "", AcceptVerdict::NotChecked);
  EXPECT_NE(find(odd, kGpu0, "clocks", "")->note.find("clock_event_reasons 8.5"), std::string::npos);
  entry(parsed, "memory/copy_kernel/u8/2GiB")["clock_event_reasons"] = 4;
  // A negative counter is bad input before any judging (the reader's rule, exit 2).
  entry(parsed, "memory/memcpy_d2d/u8/2GiB")["clock_event_reasons"] = -8;
  const auto negative = gc::parse_results(parsed.dump(), "negative.json");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().str().find("negative"), std::string::npos);
}

// A GEMM or burn that wrote NaN or Infinity did not measure: its row fails and says the value.
// A rate over 1.5x its datasheet peak is no measurement either (1e308 TFLOP/s passed).
TEST(Accept, NonFiniteOrImpossibleRatesFail) {
  const std::string fixture = source("tests/unit/compare/fixtures/accept/h200_gpu0.json");
  for (const char* v : {"NaN", "Infinity", "1e308", "1500"}) {
    json doc = json::parse(fixture);
    entry(doc, "matmul/cublaslt/bf16/8192x8192x8192")["TFLOPS"] = 12345.678;
    std::string text = doc.dump();
    text.replace(text.find("12345.678"), 9, v);
    auto r = gc::parse_results(text, "g.json");
    ASSERT_TRUE(r.ok()) << r.error().str();
    auto rep = gc::judge({*r}, specs(), config());
    ASSERT_TRUE(rep.ok());
    EXPECT_VERDICT(*rep, kGpu0, "gemm", "bf16", AcceptVerdict::Fail);
    EXPECT_VERDICT(*rep, kGpu0, "gemm", "fp16", AcceptVerdict::Pass);
    EXPECT_TRUE(rep->failed());
    const gc::AcceptCheck* c = find(*rep, kGpu0, "gemm", "bf16");
    if (std::string(v) == "NaN" || std::string(v) == "Infinity") {
      EXPECT_EQ(c->measured, v);
      EXPECT_FALSE(c->value);
    } else {
      EXPECT_EQ(c->value, std::stod(v));  // 1500 of a 989.4 peak: 152%, over the 150% bound
    }
  }
  // 1.5x the peak itself is the bound: 1484 TFLOP/s (150.0% of 989.4) still passes.
  json edge = json::parse(fixture);
  entry(edge, "matmul/cublaslt/bf16/8192x8192x8192")["TFLOPS"] = 1484.0;
  EXPECT_VERDICT(judge({edge}), kGpu0, "gemm", "bf16", AcceptVerdict::Pass);

  const std::string burn = source("tests/unit/compare/fixtures/fleet/h200/h200-d/gpu0/burn/runs/bench_matmul.json");
  for (const char* v : {"NaN", "Infinity"}) {
    std::string text = burn;
    const auto at = text.find("\"mismatches\": ");
    ASSERT_NE(at, std::string::npos);
    const auto end = text.find_first_of(",\n}", at + 14);
    text.replace(at + 14, end - at - 14, v);
    auto r = gc::parse_results(text, "burn.json");
    ASSERT_TRUE(r.ok()) << r.error().str();
    auto rep = gc::judge({*r}, specs(), config());
    ASSERT_TRUE(rep.ok());
    const gc::AcceptCheck* c = nullptr;
    for (const auto& x : rep->checks)
      if (x.check == "burn") c = &x;
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->verdict, AcceptVerdict::Fail) << v << ": " << c->line();
    EXPECT_EQ(c->measured, v);
  }
}

// ---- grouping files into GPUs ------------------------------------------------------------

TEST(Accept, SeveralFilesOfOneGpuMerge) {
  json d = accept_fixture();
  json pcie = d, rest = d;
  pcie["benchmarks"] = json::array();
  rest["benchmarks"] = json::array();
  for (const auto& e : d["benchmarks"])
    (e["name"].get<std::string>().starts_with("pcie/") ? pcie : rest)["benchmarks"].push_back(e);
  pcie["context"]["pcie_gen_current"] = "1";  // bench_pcie's context read the idle link
  const auto r = judge({pcie, rest});
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].files.size(), 2u);
  EXPECT_FALSE(r.failed()) << all(lines_with(r, AcceptVerdict::Fail));
  EXPECT_EQ(r.count(AcceptVerdict::Pass), judge({d}).count(AcceptVerdict::Pass));
}

TEST(Accept, BadGroupingIsAnError) {
  std::vector<gc::Results> files;
  for (const char* name : {"a.json", "b.json"}) files.push_back(*gc::parse_results(accept_fixture().dump(), name));
  auto rep = gc::judge(files, specs(), config());
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.error().where, "b.json");
  EXPECT_NE(rep.error().message.find("is also in a.json"), std::string::npos) << rep.error().str();

  json mixed = accept_fixture();
  mixed["context"]["gpu_uuid"] = "GPU-a | GPU-b";
  files.clear();
  files.push_back(*gc::parse_results(mixed.dump(), "merged.json"));
  rep = gc::judge(files, specs(), config());
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.error().str(),
            "merged.json: holds results of several GPUs (gpu_uuid GPU-a | GPU-b): give each GPU its own files");
  EXPECT_FALSE(gc::judge({}, specs(), config()).ok());
}

// ---- the config ---------------------------------------------------------------------------

TEST(AcceptConfig, ShippedFileMatchesTheBuiltInDefaults) {
  const gc::AcceptLimits built_in;
  const gc::AcceptLimits& file = config().defaults;
  EXPECT_EQ(file.pcie_bandwidth_fraction, built_in.pcie_bandwidth_fraction);
  EXPECT_EQ(file.memory_fraction, built_in.memory_fraction);
  EXPECT_EQ(file.gemm_fraction, built_in.gemm_fraction);
  EXPECT_EQ(file.alike_fraction, built_in.alike_fraction);
  EXPECT_EQ(config().ecc_for("nvidia-h200"), std::optional<bool>(true));
  EXPECT_EQ(config().ecc_for("nvidia-geforce-rtx-4090"), std::optional<bool>(false));
  EXPECT_EQ(config().nccl_floor("nvidia-h200", 2), std::optional<double>(260));
  EXPECT_EQ(config().nccl_floor("nvidia-h200", 8), std::nullopt);
  for (const auto& rule : config().skus) {  // every rule names a SKU specs.json knows
    const auto& skus = specs().skus();
    const std::string& id = rule.first;
    EXPECT_TRUE(std::any_of(skus.begin(), skus.end(), [&](const gpucheck::SkuSpec& s) { return s.id == id; })) << id;
  }
}

TEST(AcceptConfig, OverridesAndStrictness) {
  auto c = gc::parse_accept_config(
      R"({"defaults": {"gemm_fraction": {"bf16": 0.7}}, "skus": {"x": {"alike_fraction": 0.05, "_note": "ok"}}})", "c.json");
  ASSERT_TRUE(c.ok()) << c.error().str();
  EXPECT_EQ(c->limits_for("x").gemm_fraction.at("bf16"), 0.7);  // defaults flow into the SKU
  EXPECT_EQ(c->limits_for("x").alike_fraction, 0.05);
  EXPECT_EQ(c->limits_for("y").alike_fraction, 0.10);

  const std::pair<const char*, const char*> bad[] = {
      {"{", "c.json: not valid JSON"},
      {"[]", "c.json: expected an object with \"defaults\" and \"skus\""},
      {R"({"default": {}})", "c.json: default: unknown key (did you mean defaults?)"},
      // Issue 18, item 6: accept.json's `defualts` gets a suggestion, as a command does.
      {R"({"defualts": {}})", "c.json: defualts: unknown key (did you mean defaults?)"},
      {R"({"colour": {}})", "c.json: colour: unknown key (schema, defaults, skus)"},
      {R"({"defaults": {"pcie_bandwith_fraction": 0.5}})",
       "c.json: defaults.pcie_bandwith_fraction: unknown key (did you mean pcie_bandwidth_fraction?)"},
      // Issue 18, item 3: a key given twice turned a 20 GB/s PCIe FAIL into a PASS (the last won).
      {R"({"schema":1,"defaults":{"pcie_bandwidth_fraction":0.8,"pcie_bandwidth_fraction":0.01}})",
       "c.json: key \"pcie_bandwidth_fraction\" given twice in defaults"},
      {R"({"defaults": {"gemm_fraction": {"bf16": 1.5}}})", "c.json: defaults.gemm_fraction.bf16: 1.5 is outside (0, 1]"},
      {R"({"defaults": {"gemm_fraction": {"fp4": 0.5}}})", "c.json: defaults.gemm_fraction.fp4: unknown key (known: bf16, fp16, fp8, tf32)"},
      {R"({"defaults": {"alike_fraction": 1}})", "c.json: defaults.alike_fraction: 1 is outside (0, 1)"},
      {R"({"defaults": {"pcie_bandwidth_fraction": "80%"}})", "c.json: defaults.pcie_bandwidth_fraction: expected a number"},
      {R"({"skus": {"a": {"ecc": "yes"}}})", "c.json: skus.a.ecc: expected true or false"},
      {R"({"skus": {"a": {"nccl_allreduce_busbw_GBps": {"eight": 400}}}})",
       "c.json: skus.a.nccl_allreduce_busbw_GBps: key \"eight\" is not a GPU count"},
      {R"({"skus": {"a": {"nccl_allreduce_busbw_GBps": {"8": -1}}}})",
       "c.json: skus.a.nccl_allreduce_busbw_GBps.8: expected a positive number of GB/s"},
      {R"({"schema": 2})", "c.json: schema: expected 1"},
      {R"({"schema": 4294967297})", "c.json: schema: expected 1"},  // not truncated to 1
      {R"({"schema": 1.0})", "c.json: schema: expected 1"},
      {R"({"schema": -1})", "c.json: schema: expected 1"},
  };
  for (const auto& [text, want] : bad) {
    auto r = gc::parse_accept_config(text, "c.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().str().substr(0, std::string(want).size()), want) << r.error().str();
  }
}

// ---- the command line (in process, fake disk) -------------------------------------------

namespace {

gpucheck::compare::testing::InProcessRun accept_cli(std::vector<std::string> args, FakeFileSystem& fs) {
  return gpucheck::compare::testing::run_command("accept", std::move(args), fs);
}

// A fake disk with the shipped specs and config where `gpucheck accept` looks first.
void add_baselines(FakeFileSystem& fs) {
  fs.add("baselines/specs.json", source("baselines/specs.json"));
  fs.add("baselines/accept.json", source("baselines/accept.json"));
}

std::size_t newlines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST(AcceptCli, JudgesAFolderOfGpusAndWritesReports) {
  FakeFileSystem fs;
  add_baselines(fs);
  json slow = as_gpu(accept_fixture(), 1);
  scale_rates(slow, 0.85);
  fs.add("results/gpu0/bench_all.json", as_gpu(accept_fixture(), 0).dump());
  fs.add("results/gpu1/bench_all.json", slow.dump());
  fs.add("results/gpu1/bench_all.stderr.log", "not json, skipped");
  fs.add("results/accept.json", "{\"gpucheck_accept\": 1}");  // an earlier verdict: skipped
  auto r = accept_cli({"--results", "results", "--out", "verdict"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Regression) << r.io.err;
  EXPECT_TRUE(r.io.err.empty()) << r.io.err;
  // The terminal's and the Markdown's verdict lines: rendered text is the behaviour here.
  EXPECT_NE(r.io.out.find("accept: FAIL:"), std::string::npos);
  ASSERT_TRUE(fs.files.count("verdict/accept.json"));
  ASSERT_TRUE(fs.files.count("verdict/accept.md"));
  const json verdict = json::parse(fs.files["verdict/accept.json"]);
  EXPECT_EQ(verdict["verdict"], "fail");
  EXPECT_EQ(verdict["gpus"][0]["verdict"], "pass");
  EXPECT_EQ(verdict["gpus"][1]["verdict"], "fail");
  const auto failed = std::count_if(verdict["checks"].begin(), verdict["checks"].end(), [](const json& c) {
    return c["gpu"] == "GPU 1 0000:28:00.0" && c["check"] == "alike" && c["item"] == "gemm bf16" && c["verdict"] == "fail";
  });
  EXPECT_EQ(failed, 1) << verdict["checks"].dump(1);
  EXPECT_NE(fs.files["verdict/accept.md"].find("# gpucheck accept: FAIL"), std::string::npos);

  // --devices 0: the healthy one alone passes (and has nobody to be compared with).
  r = accept_cli({"--results", "results", "--devices", "0", "--format", "json"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Ok) << r.io.out << r.io.err;
  EXPECT_EQ(json::parse(r.io.out)["verdict"], "pass");
}

TEST(AcceptCli, RealQuickFilePassesWithMarkdown) {
  FakeFileSystem fs;
  add_baselines(fs);
  fs.add("quick.json", quick().dump());
  auto r = accept_cli({"--results", "quick.json", "--format", "markdown"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Ok) << r.io.err;
  // The Markdown renderer's rows: rendered text is the behaviour here.
  EXPECT_NE(r.io.out.find("| pcie\\_link | Gen5 x16 | Gen5 x16 (nvidia-h200) | pass |"), std::string::npos) << r.io.out;
  EXPECT_NE(r.io.out.find("## Not checked"), std::string::npos);
}

TEST(AcceptCli, BadInputIsOneLineAndExitTwo) {
  FakeFileSystem fs;
  add_baselines(fs);
  fs.add("bad/gpu0.json", "{\"context\": {}, \"benchmarks\": [");
  fs.add("empty/notes.txt", "no results here");
  fs.add("blank/gpu0.json", "");
  fs.dirs.insert("void");
  fs.add("cfg.json", "{\"defaults\": {\"alike_fraction\": 2}}");
  fs.add("ok/gpu0.json", accept_fixture().dump());
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--results", "bad"}, "gpucheck: bad/gpu0.json: not valid JSON"},
      {{"--results", "empty"}, "gpucheck: empty: holds no results files (*.json)"},
      {{"--results", "blank"}, "gpucheck: blank/gpu0.json: empty file"},
      {{"--results", "void"}, "gpucheck: void: holds no results files (*.json)"},
      {{"--results", "missing"}, "gpucheck: missing: no such file or folder"},
      {{}, "gpucheck: accept: no process runner"},  // (the CLI wires the real one in main)
      {{"--burn", "60"}, "gpucheck: accept: no process runner"},
      {{"--results", "ok", "--burn", "60"}, "gpucheck: --burn: is for a measuring run"},
      {{"--results", "ok", "--format", "html"}, "gpucheck: --format: unknown format \"html\""},
      {{"--results", "ok", "--devices", "0,x"}, "gpucheck: --devices: expected device indices"},
      {{"--results", "ok", "--devices", "3"}, "gpucheck: --devices: no results of those devices"},
      {{"--results", "ok", "--config", "cfg.json"}, "gpucheck: cfg.json: defaults.alike_fraction: 2 is outside (0, 1)"},
      {{"--results", "ok", "--specs", "nope.json"}, "gpucheck: nope.json: cannot open"},
      {{"--results", "ok", "--timeout", "-1"}, "gpucheck: --timeout: expected seconds"},
      {{"--results", "ok", "--specs", "a", "--specs", "b"}, "gpucheck: --specs: given twice"},
      {{"--results", "ok", "--bogus"}, "gpucheck: --bogus: unknown option"},
      {{"ok"}, "gpucheck: accept: unexpected argument \"ok\""},
  };
  for (const auto& [args, want] : cases) {
    auto r = accept_cli(args, fs);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.status, gc::ExitStatus::BadInput) << joined << r.io.out;
    EXPECT_EQ(newlines(r.io.err), 1u) << joined << r.io.err;
    EXPECT_EQ(r.io.err.substr(0, want.size()), want) << joined << r.io.err;
    EXPECT_TRUE(r.io.out.empty()) << joined << r.io.out;
  }
}

// A config or specs file found by the default search (baselines/ in the working folder) is an
// input as much as a given one: --out baselines may not replace baselines/accept.json.
TEST(AcceptCli, AnOutputThatNamesAFoundConfigIsRefusedAndTheFileKept) {
  FakeFileSystem fs;
  add_baselines(fs);
  fs.add("node/gpu0/runs/bench_all.json", accept_fixture().dump());
  const std::string config_before = fs.files.at("baselines/accept.json");
  auto r = accept_cli({"--results", "node", "--out", "baselines"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput) << r.io.err;
  EXPECT_EQ(newlines(r.io.err), 1u) << r.io.err;
  EXPECT_NE(r.io.err.find("baselines/accept.json"), std::string::npos) << r.io.err;
  EXPECT_NE(r.io.err.find("--config"), std::string::npos) << r.io.err;
  EXPECT_EQ(fs.files.at("baselines/accept.json"), config_before);
  EXPECT_FALSE(fs.files.count("baselines/accept.md"));
  fs.files.erase("baselines/accept.json");  // none found: the folder is free to write
  auto ok = accept_cli({"--results", "node", "--out", "baselines"}, fs);
  EXPECT_EQ(ok.status, gc::ExitStatus::Ok) << ok.io.err;
  EXPECT_TRUE(fs.files.count("baselines/accept.json"));
}

// A `skus` key that is no id of specs.json (a misspelt "nvidia-h20O") would drop that SKU's
// rules without a word, and an ECC-disabled H200 passed: exit 2 naming the key and the ids.
TEST(AcceptCli, AConfigSkuIdNotInSpecsIsBadInput) {
  FakeFileSystem fs;
  add_baselines(fs);
  json doc = accept_fixture();
  doc["context"]["ecc"] = "disabled";
  fs.add("node/gpu0/runs/bench_all.json", doc.dump());
  std::string typo = source("baselines/accept.json");
  const std::string id = "\"nvidia-h200\": {";
  ASSERT_NE(typo.find(id), std::string::npos);
  typo.replace(typo.find(id), id.size(), "\"nvidia-h20O\": {");
  fs.add("typo.json", typo);
  auto bad = accept_cli({"--results", "node", "--config", "typo.json"}, fs);
  EXPECT_EQ(bad.status, gc::ExitStatus::BadInput) << bad.io.out;
  EXPECT_EQ(newlines(bad.io.err), 1u) << bad.io.err;
  EXPECT_EQ(bad.io.err.rfind("gpucheck: typo.json: skus.nvidia-h20O: unknown SKU id", 0), 0u) << bad.io.err;
  EXPECT_NE(bad.io.err.find("nvidia-h200"), std::string::npos) << bad.io.err;  // the ids it knows
  EXPECT_TRUE(bad.io.out.empty());
  auto good = accept_cli({"--results", "node"}, fs);  // the shipped config: ECC must be on
  EXPECT_EQ(good.status, gc::ExitStatus::Regression) << good.io.err;
}

TEST(AcceptCli, MeasureModeFlagsParse) {
  auto a = gc::parse_accept_args({"gpucheck", "accept", "--devices", "0,3", "--bin-dir=build/bin", "--burn", "60",
                                  "--timeout", "900", "--out", "acc"},
                                 2);
  ASSERT_TRUE(a.ok()) << a.error().str();
  EXPECT_EQ(a->devices, (std::vector<int>{0, 3}));
  EXPECT_EQ(a->bin_dir, "build/bin");
  EXPECT_EQ(a->burn_s, 60.0);
  EXPECT_EQ(a->timeout_s, 900.0);
  EXPECT_TRUE(a->results.empty());
  auto all_devices = gc::parse_accept_args({"gpucheck", "accept", "--devices", "all"}, 2);
  ASSERT_TRUE(all_devices.ok());
  EXPECT_FALSE(all_devices->devices.has_value());
  EXPECT_FALSE(gc::parse_accept_args({"gpucheck", "accept", "--devices", "1,1"}, 2).ok());
}

TEST(AcceptCli, ResultsRepeatsInOrderOtherOptionsDoNot) {
  auto a = gc::parse_accept_args({"gpucheck", "accept", "--results", "b", "--results=a", "--format", "json"}, 2);
  ASSERT_TRUE(a.ok()) << a.error().str();
  EXPECT_EQ(a->results, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(a->format, "json");
  auto empty = gc::parse_accept_args({"gpucheck", "accept", "--results", "b", "--results="}, 2);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().str(), "--results: needs a value");
  auto empty_out = gc::parse_accept_args({"gpucheck", "accept", "--out="}, 2);
  ASSERT_FALSE(empty_out.ok());
  EXPECT_EQ(empty_out.error().str(), "--out: needs a value");
  auto last = gc::parse_accept_args({"gpucheck", "accept", "--results"}, 2);
  ASSERT_FALSE(last.ok());
  EXPECT_EQ(last.error().str(), "--results: needs a value");
  auto twice = gc::parse_accept_args({"gpucheck", "accept", "--burn", "5", "--burn=6"}, 2);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().str(), "--burn: given twice");
  auto misspelt = gc::parse_accept_args({"gpucheck", "accept", "--resluts", "x"}, 2);
  ASSERT_FALSE(misspelt.ok());
  EXPECT_EQ(misspelt.error().str(), "--resluts: unknown option (did you mean --results?)");
}

TEST(AcceptCli, HelpAndUsage) {
  FakeFileSystem fs;
  auto r = accept_cli({"--help"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Ok);
  EXPECT_NE(r.io.out.find("gpucheck accept --results PATH"), std::string::npos);
  EXPECT_NE(gc::usage_text().find("gpucheck accept"), std::string::npos);
}

// ---- the measuring run, with fake binaries -------------------------------------------------

namespace {

// Binaries that write the accept fixture's cases of their family, as GPU `--device N` (uuid
// per device), or crash where asked.
class FakeAcceptRunner final : public gc::ProcessRunner {
 public:
  explicit FakeAcceptRunner(FakeFileSystem& fs) : fs_(fs) {}
  std::vector<gc::ProcessSpec> calls;
  std::string crash;  // "bench_memory@1": that binary crashes on device 1
  gc::ProcessResult run(const gc::ProcessSpec& spec) override {
    calls.push_back(spec);
    fs_.add(spec.stderr_path, "");
    const std::string bin = spec.program.substr(spec.program.rfind('/') + 1);
    std::string device, out, suite;
    for (std::size_t i = 0; i < spec.args.size(); ++i) {
      if (spec.args[i] == "--device") device = spec.args[i + 1];
      if (spec.args[i] == "--suite") suite = spec.args[i + 1];
      if (spec.args[i].rfind("--benchmark_out=", 0) == 0) out = spec.args[i].substr(16);
    }
    gc::ProcessResult r;
    r.seconds = 1;
    if (crash == bin + "@" + device) {
      r.end = gc::ProcessResult::End::Signalled;
      r.signal = 11;
      return r;
    }
    json d = accept_fixture();
    const std::string family = bin.substr(6) + "/";  // bench_pcie -> pcie/
    json kept = json::array();
    for (const auto& e : d["benchmarks"]) {
      const std::string n = e["name"].get<std::string>();
      const bool burn = n.starts_with("matmul/burn/");
      if (n.starts_with(family) && burn == (suite == "burn")) kept.push_back(e);
    }
    d["benchmarks"] = kept;
    d["context"]["gpucheck_device_index"] = device;
    d["context"]["gpu_uuid"] = "GPU-fake-" + device;
    d["context"]["gpu_pci_bus_id"] = "0000:0" + device + ":00.0";
    fs_.add(out, d.dump());
    r.end = gc::ProcessResult::End::Exited;
    r.exit_code = 0;
    return r;
  }

 private:
  FakeFileSystem& fs_;
};

gc::AcceptArgs measure_args(std::vector<int> devices) {
  gc::AcceptArgs a;
  a.devices = std::move(devices);
  a.bin_dir = "bin";
  a.out = "acc";
  return a;
}

void add_binaries(FakeFileSystem& fs) {
  for (const char* b : {"bin/bench_pcie", "bin/bench_memory", "bin/bench_matmul", "bin/bench_nccl"}) {
    fs.add(b, "#!fake");
    fs.executables.insert(b);
  }
}

}  // namespace

TEST(AcceptMeasure, RunsEachGpusSuitesInTheirOwnProcessesThenTheJudgeReadsThem) {
  FakeFileSystem fs;
  add_binaries(fs);
  FakeAcceptRunner runner(fs);
  gc::CliEnvironment env;
  env.runner = &runner;
  gc::CliOutput io;
  auto m = gc::measure_accept(measure_args({0, 1}), fs, env, io);
  ASSERT_TRUE(m.ok()) << m.error().str();
  ASSERT_EQ(runner.calls.size(), 6u);  // 3 binaries x 2 GPUs; no NCCL for a subset of the node
  EXPECT_EQ(runner.calls[0].program, "bin/bench_pcie");
  EXPECT_NE(std::find(runner.calls[4].args.begin(), runner.calls[4].args.end(), "1"), runner.calls[4].args.end());
  EXPECT_TRUE(m->failed_runs.empty());
  EXPECT_EQ(m->notes.size(), 1u);
  auto files = gc::load_accept_results(fs, {m->dir});
  ASSERT_TRUE(files.ok()) << files.error().str();
  EXPECT_EQ(files->size(), 6u);
  auto rep = gc::judge(*files, specs(), config());
  ASSERT_TRUE(rep.ok()) << rep.error().str();
  EXPECT_EQ(rep->gpus.size(), 2u);
  EXPECT_FALSE(rep->failed());
}

TEST(AcceptMeasure, ABinaryThatCrashesFailsItsGpuAndTheBurnRunsOnEveryGpu) {
  FakeFileSystem fs;
  add_binaries(fs);
  FakeAcceptRunner runner(fs);
  runner.crash = "bench_memory@1";
  gc::CliEnvironment env;
  env.runner = &runner;
  gc::CliOutput io;
  gc::AcceptArgs a = measure_args({0, 1});
  a.burn_s = 60;
  auto m = gc::measure_accept(a, fs, env, io);
  ASSERT_TRUE(m.ok()) << m.error().str();
  ASSERT_EQ(m->failed_runs.size(), 1u);
  EXPECT_EQ(m->failed_runs[0].gpu, "GPU 1");
  EXPECT_EQ(m->failed_runs[0].item, "bench_memory");
  EXPECT_EQ(m->failed_runs[0].verdict, AcceptVerdict::Fail);
  // The signal by its name, for the person at the machine: the words are the behaviour here.
  EXPECT_NE(m->failed_runs[0].note.find("SIGSEGV"), std::string::npos) << m->failed_runs[0].note;
  int burns = 0;
  for (const auto& c : runner.calls)
    if (std::find(c.args.begin(), c.args.end(), "burn") != c.args.end()) {
      ++burns;
      EXPECT_NE(std::find(c.args.begin(), c.args.end(), "--burn-seconds"), c.args.end());
    }
  EXPECT_EQ(burns, 2);
  auto files = gc::load_accept_results(fs, {m->dir});
  ASSERT_TRUE(files.ok()) << files.error().str();
  gc::CliOutput out;
  a.format = "json";
  EXPECT_EQ(gc::judge_and_report(a, *files, fs, out, m->failed_runs), gc::ExitStatus::Regression);
  const json report = json::parse(out.out);
  const auto crashed = std::count_if(report["checks"].begin(), report["checks"].end(), [](const json& c) {
    return c["gpu"] == "GPU 1" && c["item"] == "bench_memory" && c["verdict"] == "fail";
  });
  EXPECT_EQ(crashed, 1) << out.out;
}

TEST(AcceptMeasure, MissingBinariesOrNoGpuAreBadInput) {
  FakeFileSystem fs;
  FakeAcceptRunner runner(fs);
  gc::CliEnvironment env;
  env.runner = &runner;
  gc::CliOutput io;
  auto m = gc::measure_accept(measure_args({0}), fs, env, io);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().str().find("bench_pcie"), std::string::npos);
  add_binaries(fs);
  gc::AcceptArgs all = measure_args({});
  all.devices.reset();  // count them: no NVML probe and no CUDA_VISIBLE_DEVICES
  auto none = gc::measure_accept(all, fs, env, io);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().str().find("no GPU found: NVML does not answer"), std::string::npos);
  EXPECT_NE(none.error().str().find("--results DIR"), std::string::npos);  // what to do on a machine without one
}
