// Inside the judge: result files grouped into GPUs. A GpuView is one GPU's benchmarks by name
// and its contexts' values (several files of one GPU merged), with the SKU it was matched to;
// the checks read only this. Also the small helpers every check shares (parsing, wording).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "accept/judge.hpp"
#include "base/expected.hpp"
#include "gpucheck/core/specs.hpp"
#include "results/results.hpp"

namespace gpucheck::compare::accept_detail {

bool known(const std::string& s);  // neither empty nor "unknown"
std::vector<std::string> split(std::string_view s, std::string_view sep);  // trimmed parts
std::optional<long long> to_int(const std::string& s);

// Numbers as the report writes them: 3 significant-ish digits, whole numbers, percentages.
std::string num(double v);
std::string whole(double v);
std::string pct(double fraction);
std::string list_some(const std::vector<std::string>& xs, std::size_t most = 3);  // "a, b, c and 2 more"

struct GpuView {
  AcceptGpu info;
  std::string node;  // host, for alike and NCCL
  std::string key;
  std::vector<const Results*> files;
  std::map<std::string, const Benchmark*> bench;
  std::map<std::string, std::vector<std::string>> ctx;  // known values only
  std::set<std::string> recorded;                         // keys present, "unknown" or not
  const SkuSpec* sku = nullptr;

  [[nodiscard]] const Benchmark* find(const std::string& name) const;
  // A copy, not a reference: callers pass literals, and g++ 13 warns (-Wdangling-reference)
  // about a reference returned from a call with a temporary argument.
  [[nodiscard]] std::vector<std::string> values(const std::string& k) const;
  [[nodiscard]] std::vector<long long> ints(const std::string& k) const;
  [[nodiscard]] int max_int(const std::string& k) const;  // 0: none
  [[nodiscard]] int min_int(const std::string& k) const;  // 0: none
  [[nodiscard]] std::string sku_id() const { return sku ? sku->id : std::string("unknown"); }
  // Why a context entry has no value: the driver did not say, or the file predates it.
  [[nodiscard]] std::string why_unknown(const std::string& k) const;
};

// The GPUs of the files, sorted by host and index, labelled. Errors: a file of several GPUs,
// one benchmark twice for one GPU.
Expected<std::vector<GpuView>> group_by_gpu(const std::vector<Results>& files, const SpecDb& specs);

// A check row of this GPU, not checked until a check says otherwise.
AcceptCheck make_check(const GpuView& g, std::string check, std::string item);

}  // namespace gpucheck::compare::accept_detail
