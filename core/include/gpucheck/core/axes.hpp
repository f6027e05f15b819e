// Axes: one case model for every family and every suite (nvbench's syntax where it can be).
// A family declares its axes once (name, kind, bounds) and its suites as axis values: each
// suite is a list of sets of values, every set multiplying into points like `--axis
// NAME=VALUES` (or `-a`) does, plus the values -a leaves to the suite. The family turns
// points into cases named by the naming contract, whether a suite or the user named them.
// Pure: parsing, expansion and the product are values and errors here, main() prints.
//
// VALUES: a comma list (`1024,4096`), a range `[start:stop]` or `[start:stop:step]` (both
// ends included), powers of two `2^[10:14]` (or nvbench's `NAME[pow2]=[10:14]`: every value
// an exponent), sizes with units (`4KiB`, `8GiB`, `8G` as nccl-tests writes it; `KB`/`MB`/
// `GB` are powers of 1000), dtypes and words by our names, booleans as true/false (1/0).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpucheck/core/options.hpp"

namespace gpucheck::axes {

enum class Kind { integer, bytes, dtype, word, boolean };

// One value of an axis: n for integer, bytes and boolean axes; text is its canonical text
// (the decimal number, the size label `4KiB`, the dtype's or word's name, true/false).
struct Value {
  std::int64_t n = 0;
  std::string text;
  bool operator==(const Value&) const = default;
};

struct Axis {
  std::string name;
  Kind kind = Kind::integer;
  std::string help;                 // a few words: "rows of A and C"
  std::vector<std::string> words;   // dtype and word axes: the values it takes
  std::int64_t min = 1;             // integer and bytes axes: the bounds of a value
  std::int64_t max = std::int64_t{1} << 31;
  // A follower takes the value of `follows` in each point unless it is given itself (N
  // follows M: `-a M=4096` is a square), through `follow` when that is set (conv's padding
  // is R / 2).
  std::string follows = {};
  std::function<std::int64_t(std::int64_t)> follow = {};
  // Word axes: values a suite's sets may name but a user may not (matmul's burn load).
  std::vector<std::string> suite_words = {};
};

// Axis values as a user writes them with -a: (NAME, VALUES), e.g. {"M", "2^[10:14]"}.
using Values = std::vector<std::pair<std::string, std::string>>;

// A suite as axis values. `sets`: its cases, in order, each set the product of its values
// (first axis outermost), the axes it does not name taking `defaults`. `defaults`: also the
// values of the axes -a leaves unnamed; a suite without them (acceptance's, the burn's)
// takes no -a: its cases are what is judged.
struct SuiteAxes {
  Suite suite;
  Values defaults;
  std::vector<Values> sets;
};

// A family's case model: its axes and its suites.
struct CaseModel {
  std::string family;
  std::vector<Axis> axes;
  std::vector<SuiteAxes> suites;
  const SuiteAxes* find(Suite s) const;  // null: the family has no case in s
};

// `NAME=VALUES` as given, before the family's axes are known.
struct Override {
  std::string name;
  bool pow2 = false;  // NAME[pow2]=...
  std::string values;
  std::string arg;    // as given, for error lines
};

// One case's coordinates: a value per axis, in the family's axis order.
struct Point {
  std::vector<Value> values;
  std::shared_ptr<const std::vector<std::string>> names;  // the axes', shared by the points of one selection
  const Value& at(std::string_view name) const;  // throws std::out_of_range on a name not declared
  std::int64_t n(std::string_view name) const { return at(name).n; }
  const std::string& text(std::string_view name) const { return at(name).text; }
};

// The most cases one selection may make: a product beyond it is an error, not a long run.
inline constexpr std::uint64_t kMaxCases = 100000;

// Parses `NAME=VALUES` / `NAME[pow2]=VALUES`. False with a one-line reason.
bool parse_override(std::string_view arg, Override* out, std::string* err);

// A number with an optional size unit (bytes axes): 4096, 4KiB, 4K, 4KB (= 4000), 1GiB.
// False on anything else, or a value that does not fit in int64.
bool parse_size(std::string_view s, std::int64_t* out);

// The values VALUES names for `axis` (a list, ranges, powers of two, units), duplicates
// dropped (the first kept). False with a one-line reason naming the axis on a malformed
// value, one out of the axis's bounds, an empty list, an overflow.
bool expand(const Axis& axis, std::string_view values, bool pow2, std::vector<Value>* out, std::string* err);

// The points of suite `s`: without `given`, its sets one after the other; with `given` (-a:
// every override one of the family's axes, given once), their product with the suite's
// defaults for the rest. Both are one product, each follower set from its leader where it
// was not given. False with one line "--axis ARG: REASON (FAMILY's axes: a, b)".
bool select(const CaseModel& model, Suite s, const std::vector<Override>& given, std::vector<Point>* out,
            std::string* err);

// A suite's own points (no -a); throws std::logic_error on a set its axes refuse (a bug of
// the family's table, caught by the unit tests).
std::vector<Point> suite_points(const CaseModel& model, Suite s);

// "a, b, c": the family's axis names, for error lines and help.
std::string axis_names(const std::vector<Axis>& axes);

// The help of a family's axes: one line per axis with its kind and its defaults per suite.
std::string axes_help(const CaseModel& model);

// What a family's case list depends on of the device (sizes past its L2, fp8 from its compute
// capability, ranks from its GPUs). Without a GPU, --list uses the reference GPU's: an H200
// (compute capability 9.0, 50 MiB of L2), one GPU.
struct DeviceFacts {
  int compute_capability = 90;
  std::uint64_t l2_bytes = std::uint64_t{50} << 20;
  int gpus = 1;
  bool reference = true;  // these are the reference GPU's, not a device's
};

// One case --list prints: its name and its coordinates (axis name, value text).
struct Listed {
  std::string name;
  std::vector<std::pair<std::string, std::string>> axes;
};

// --list --format json: {"family", "suite", "device": "reference"|"this", "axes": [{name, kind,
// help, values?, follows?}], "cases": [{"name", "axes": {NAME: VALUE}}]}, one document.
std::string listed_json(const CaseModel& model, Suite suite, const std::vector<Listed>& cases, bool reference);

// Google Benchmark's --benchmark_filter on a name: a POSIX extended regex (core/regex.hpp, as
// Google Benchmark compiles it) searched in it; a leading '-' keeps the names it does not
// match. False with a reason on a regex that does not compile, or '-' alone.
bool filter_names(std::string_view filter, std::vector<Listed>* cases, std::string* err);

// nccl-tests' `-b MIN -e MAX -f FACTOR` as an override of the `bytes` axis: MIN, MIN*F, ...
// up to MAX (sizes with units). False with a reason on a bad size or factor.
bool bytes_range_override(std::string_view min, std::string_view max, std::string_view factor, Override* out,
                          std::string* err);

}  // namespace gpucheck::axes
