// What the gpucheck commands share: argument parsing with "did you mean", the compare options
// (compare and gate take the same), the thresholds file, one-line errors, the command table.
// Internal to compare/src; a new command (accept) adds a cmd_* function and one table row.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpucheck/compare/cli.hpp"
#include "gpucheck/compare/compare.hpp"
#include "gpucheck/compare/expected.hpp"

namespace gpucheck::compare::cli {

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;              // --opt VALUE
  std::set<std::string> flags;                            // --flag
  std::map<std::string, std::vector<std::string>> lists;  // --opt VALUE, repeatable, in order
};

struct OptionSet {
  std::set<std::string> with_value;
  std::set<std::string> flags;
  std::set<std::string> repeatable = {};  // with a value, may be given more than once (Args::lists)
};

// `command` names the subcommand in "see gpucheck COMMAND --help". "--opt=value" is accepted
// too; an unknown option suggests the nearest known one.
Expected<Args> parse_args(const std::vector<std::string>& in, std::size_t from, const OptionSet& known,
                          const std::string& command);

std::optional<std::string> value(const Args& a, const std::string& key);
bool flag(const Args& a, const std::string& key);

// A number strictly inside (lo, hi).
Expected<double> parse_number(const std::string& opt, const std::string& s, double lo, double hi);
// A whole number in [lo, hi].
Expected<int> parse_count(const std::string& opt, const std::string& s, int lo, int hi);

// One line on stderr, exit status 2.
ExitStatus fail(CliOutput& io, const Error& e);
// A warning line on stderr ("gpucheck: warning: ..."), the exit status unchanged.
void warn(CliOutput& io, const std::string& text);

// --metric, --higher-is-better, --lower-is-better, --threshold, --thresholds, --no-thresholds,
// --alpha, --min-repetitions, --allow-missing: the options compare and gate share.
const OptionSet& compare_options();
OptionSet with(const OptionSet& a, const OptionSet& b);

// The compare options from the arguments; thresholds from --thresholds, or the first
// thresholds.json found in `search` (files), unless --no-thresholds.
Expected<CompareOptions> read_compare_options(const FileSystem& fs, const Args& a, const std::vector<std::string>& search);
// thresholds.json next to BASELINE or up to two folders above it (baselines/<gpu>/<host>/x.json).
std::vector<std::string> thresholds_search_from(const std::string& baseline_path);

// Appends the Markdown to GITHUB_STEP_SUMMARY when set; a failure is a warning, never a
// change of the verdict's exit status.
void append_step_summary(FileSystem& fs, const CliEnvironment& env, CliOutput& io, const std::string& markdown);

Expected<bool> colour_from(const Args& a, const CliEnvironment& env);

struct Context {
  FileSystem& fs;
  const CliEnvironment& env;
  CliOutput& io;
};

using CommandFn = ExitStatus (*)(const std::vector<std::string>& args, Context& ctx);

struct Command {
  const char* name;
  const char* usage;  // the command's help text: usage lines and options
  CommandFn run;
};

ExitStatus cmd_compare(const std::vector<std::string>& args, Context& ctx);
ExitStatus cmd_baseline(const std::vector<std::string>& args, Context& ctx);
ExitStatus cmd_report(const std::vector<std::string>& args, Context& ctx);
ExitStatus cmd_gate(const std::vector<std::string>& args, Context& ctx);
ExitStatus cmd_run(const std::vector<std::string>& args, Context& ctx);

extern const char* const kCompareUsage;
extern const char* const kBaselineUsage;
extern const char* const kReportUsage;
extern const char* const kGateUsage;
extern const char* const kRunUsage;

}  // namespace gpucheck::compare::cli
