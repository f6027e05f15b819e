// What every gpucheck command shares: argument parsing with "did you mean", one-line errors
// and warnings, the colour choice, the step summary, and the shape of a command (the table in
// cli/cli.cpp holds one row per command; a new command adds a cmd_* function and one row).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/command.hpp"
#include "gpucheck/core/args.hpp"
#include "gpucheck/core/regex.hpp"
#include "base/expected.hpp"

namespace gpucheck::compare::cli {

// The parsed arguments and the options a command knows: core's parser, one for the binaries
// and the tool (gpucheck/core/args.hpp).
using Args = gpucheck::args::Parsed;
using OptionSet = gpucheck::args::OptionSet;

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
// --filter REGEX as compare, run and gate take it: a POSIX extended expression
// (gpucheck/core/regex.hpp); none when the option is not given, an error when it is empty or
// does not compile.
Expected<std::optional<Regex>> parse_filter(const Args& a);

// One line on stderr, exit status 2.
ExitStatus fail(CliOutput& io, const Error& e);
// A warning line on stderr ("gpucheck: warning: ..."), the exit status unchanged.
void warn(CliOutput& io, const std::string& text);

OptionSet with(const OptionSet& a, const OptionSet& b);

// Appends the Markdown to GITHUB_STEP_SUMMARY when set; a failure is a warning, never a
// change of the verdict's exit status.
void append_step_summary(FileSystem& fs, const CliEnvironment& env, CliOutput& io, const std::string& markdown);

Expected<bool> colour_from(const Args& a, const CliEnvironment& env);

// The data files the tool reads by default (specs.json, accept.json): the one given, else
// baselines/NAME below the current folder (a checkout), else share/gpucheck/NAME beside the
// binary's folder (the build's copy of the tree it was built from, or an install); nullopt
// when none is a file. data_file_places says where it looked, for the line that says so.
std::optional<std::string> find_data_file(const FileSystem& fs, const std::optional<std::string>& given,
                                          const std::string& name);
std::string data_file_places(const std::string& name);

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

}  // namespace gpucheck::compare::cli
