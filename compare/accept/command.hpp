// `gpucheck accept`: its arguments (judging files on disk, or the measuring run), loading the
// results under a folder, and the judge wired to specs, config, renderers and output files.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "accept/judge.hpp"
#include "base/command.hpp"
#include "base/expected.hpp"
#include "base/filesystem.hpp"
#include "results/results.hpp"

namespace gpucheck::compare {

struct AcceptArgs {
  std::vector<std::string> results;          // --results PATH (repeatable): judge these
  std::optional<std::string> specs, config;  // --specs FILE, --config FILE
  std::optional<std::string> out;            // --out DIR: accept.json and accept.md
  std::string format = "terminal";           // --format terminal|markdown|json (stdout)
  std::optional<std::vector<int>> devices;   // --devices 0,3 (with --results: a filter)
  // Measuring run only (no --results):
  std::optional<std::string> bin_dir;  // --bin-dir DIR (the bench_* binaries)
  std::optional<double> burn_s;        // --burn SECONDS
  std::optional<double> timeout_s;     // --timeout SECONDS (per binary)
};

// args[from..] after "accept".
Expected<AcceptArgs> parse_accept_args(const std::vector<std::string>& args, std::size_t from);

// Every *.json results file under each path (a file, or a folder walked recursively; hidden
// entries, other files and the judge's own accept.json are skipped), parsed one by one.
Expected<std::vector<Results>> load_accept_results(const FileSystem& fs, const std::vector<std::string>& paths);

// The judge behind the command: specs and config (--specs / --config, else
// ./baselines/{specs,accept}.json, else the copies beside the binary), judge, render, --out
// files. `extra`: checks the judge cannot see in files (a binary that did not run), added to
// the report. Exit 0 all checks pass, 1 a check failed, 2 bad input (one line on io.err).
ExitStatus judge_and_report(const AcceptArgs& args, const std::vector<Results>& files, FileSystem& fs,
                            CliOutput& io, const std::vector<AcceptCheck>& extra = {});

// `gpucheck accept ...`: args[0] is the program, args[1] "accept".
ExitStatus cmd_accept(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io);

std::string accept_usage_text();

}  // namespace gpucheck::compare
