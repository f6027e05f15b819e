// The outputs of a command, checked and written one way (docs/COMPARE.md, "Outputs and
// inputs"): every command names its outputs and inputs once, `check_outputs` refuses what
// cannot be written before anything is measured or written, and `write_command_output`
// writes one: standard output (`-`, or a path that is the file standard output already is)
// into the command's stdout text, anything else through FileSystem::write_output (a device or
// FIFO in place, a regular file replaced atomically). When an output is standard output, the
// command's other text (the terminal table, the summary line) goes to standard error.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/command.hpp"
#include "base/expected.hpp"
#include "base/filesystem.hpp"

namespace gpucheck::compare {

struct NamedPath {
  std::string option;  // "--out", "--markdown", "GITHUB_STEP_SUMMARY", "BASELINE", ...
  std::string path;
};

// "-", or a path whose target is the file descriptor 1 is open on (/dev/stdout, `> f`'s f).
bool is_standard_output(const FileSystem& fs, const std::string& path);

// An input's files: a file itself, a folder's files at any depth (bounded). Outputs are checked
// against these by identity.
std::vector<NamedPath> input_files(const FileSystem& fs, const std::vector<NamedPath>& inputs);

// A folder a command writes files into (the gate's runs/, logs/, confirm/): exit 2 when one
// of its files is an input file (by identity, links resolved).
Status check_output_folder(const FileSystem& fs, const NamedPath& folder, const std::vector<NamedPath>& inputs);

// Exit-2 checks, in order: an output that cannot be one (a folder, a block device, a socket, a
// link to nothing: named with its option), an output that names an input's file (input folders
// expanded, by identity) or a file inside an input folder (the folder, or one above it, is the
// input folder, by identity: a link to the folder counts), two outputs that name one file
// (two standard outputs included).
Status check_outputs(const FileSystem& fs, const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// check_outputs with the step summary (GITHUB_STEP_SUMMARY, an output that is appended to)
// among the outputs for the same-file checks: it may not name an input or another output.
Status check_command_outputs(const FileSystem& fs, const CliEnvironment& env, const std::vector<NamedPath>& outputs,
                            const std::vector<NamedPath>& inputs);

// Writes one output of a command (above).
Status write_command_output(FileSystem& fs, CliOutput& io, const std::string& path, std::string_view data);
// Writes every output of a command (path, data) so that a failure changes none of them
// (FileSystem::write_outputs); standard output's text goes to the command's stdout text after
// the files are in place.
Status write_command_outputs(FileSystem& fs, CliOutput& io,
                             const std::vector<std::pair<std::string, std::string>>& outputs);

// The text a command prints beside its outputs (a terminal table, "wrote ..."): standard
// error when one of the outputs is standard output, so that stream holds the output alone.
void print_beside(const FileSystem& fs, CliOutput& io, const std::vector<std::string>& outputs, const std::string& text);

}  // namespace gpucheck::compare
