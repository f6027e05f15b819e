// libFuzzer target: any bytes through the results reader, and whatever reads through the
// compare rules and every renderer. A crash, leak, hang or UB report here is a bug; an error
// value is the expected answer to garbage.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpucheck/core/json_load.hpp"
#include "rules/compare.hpp"
#include "report/render.hpp"
#include "results/results.hpp"
#include "rules/thresholds.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpucheck::compare;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ReadOptions keep;
  keep.keep_raw = true;
  auto r = parse_results(text, "fuzz.json", keep);
  if (!r) {
    (void)r.error().str();
  } else {
    // A stored baseline must read back.
    auto again = parse_results(to_gbench_json(*r), "again.json");
    if (!again) __builtin_trap();
    CompareOptions o;
    const Comparison c = compare_results(*r, *again, o);
    if (c.counts[Verdict::Regression] != 0) __builtin_trap();  // a file against itself never regresses
    (void)render_terminal(c, true);
    (void)render_markdown(c);
    (void)render_json(c);
    (void)render_junit(c);
  }
  (void)parse_thresholds(text, "fuzz-thresholds.json");
  // The loader's scanner reads exactly as nlohmann's parser: acceptance, document and wording.
  for (const bool streamed : {false, true}) {
    gpucheck::JsonStream stream[2];  // one per load: a load marks its stream seen
    gpucheck::JsonLoadOptions lo[2];
    for (int i = 0; i < 2; ++i) {
      stream[i].list_key = "benchmarks";
      stream[i].element = [](std::size_t, const gpucheck::JsonFlatObject*, const nlohmann::ordered_json&) {};
      if (streamed) lo[i].stream = &stream[i];
    }
    nlohmann::ordered_json ours, ref;
    std::string ours_err, ref_err;
    const bool ok = gpucheck::load_json(text, "f.json", &ours, &ours_err, lo[0]);
    if (ok != gpucheck::load_json_by_nlohmann(text, "f.json", &ref, &ref_err, lo[1]) || ours_err != ref_err ||
        (ok && (ours.dump() != ref.dump() || stream[0].count != stream[1].count)))
      __builtin_trap();
  }
  return 0;
}
