// Command-line arguments, for the benchmark binaries and the gpucheck tool alike: options
// with a value (`--opt VALUE` or `--opt=VALUE`), flags, repeatable options (in order),
// positionals, `--` ending the options, and an unknown option an error that suggests the
// nearest known one (gpucheck/core/suggest.hpp). A binary passes what belongs to another
// parser on in order (Google Benchmark's `--benchmark_*`, a family's own flags). Our own,
// not CLI11: the binaries run on GPU machines that reach no package mirror, so what they
// need travels with the tree (docs/ARCHITECTURE.md). Errors are values.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::args {

struct OptionSet {
  std::set<std::string> with_value;       // --opt VALUE, at most once
  std::set<std::string> flags;            // --flag (a value is an error)
  std::set<std::string> repeatable = {};  // --opt VALUE, any number of times (Parsed::lists)
  // Passed on (Parsed::passed), not parsed here: arguments starting with one of these
  // ("--benchmark_", "--v=": Google Benchmark's), and these known options besides being
  // parsed ("--help": Google Benchmark prints its part too).
  std::vector<std::string> pass_prefixes = {};
  std::set<std::string> pass_also = {};
  // Unknown options, positionals and `--` are passed on instead of parsed (a first parser
  // of several: the binaries' common flags, then a family's, then Google Benchmark's).
  bool pass_unknown = false;
  // A value option given twice keeps the last (the binaries' habit) instead of an error.
  bool last_wins = false;
  // Other names for a known option (another tool's habit: nvbench's -d for --device), parsed
  // as the option they name.
  std::map<std::string, std::string> aliases = {};
};

struct Parsed {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  std::set<std::string> flags;
  std::map<std::string, std::vector<std::string>> lists;
  std::vector<std::size_t> passed;  // indices into the input of what is passed on, in order

  std::optional<std::string> value(const std::string& opt) const;
  bool flag(const std::string& opt) const;
  // The values of a repeatable option in order (empty when not given).
  const std::vector<std::string>& list(const std::string& opt) const;
};

struct ParseError {
  std::string option;                     // as given, without "=VALUE"
  std::string message;                    // "unknown option", "needs a value", "given twice", "takes no value"
  std::optional<std::string> suggestion;  // the nearest known option, for an unknown one
  std::optional<std::string> hint;        // for another tool's flag: what gpucheck says instead
  // "OPTION: MESSAGE", then " (HINT)" for another tool's flag, else " (did you mean X?)" when
  // there is a suggestion.
  std::string str() const;
};

// For a flag that neighbouring tools use and gpucheck does not (nccl-tests' -g): what to use
// instead, in one clause; nullopt for any other name.
std::optional<std::string> foreign_flag_hint(std::string_view option);

// Parses `in` (the arguments, without the program's name). False with *err on bad input.
bool parse(std::span<const std::string> in, const OptionSet& known, Parsed* out, ParseError* err);

// The arguments of main() after the program's name, as strings.
std::vector<std::string> from_argv(int argc, char* const* argv);
// Keeps argv[0] and the arguments `p` passed on (indices into argv + 1), in order, and ends
// argv with nullptr: what the next parser sees.
void keep_passed(int* argc, char** argv, const Parsed& p);

// Whole numbers and numbers, all of the text or nothing.
std::optional<long long> to_integer(std::string_view s);
std::optional<double> to_number(std::string_view s);

}  // namespace gpucheck::args
