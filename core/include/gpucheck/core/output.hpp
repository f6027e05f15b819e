// Writing an output file, for the binaries and the tool alike. An output is one of:
//   standard output  `-`: written to file descriptor 1;
//   in place         a character device or a FIFO, or a symbolic link to one: opened and
//                    written, never replaced (a FIFO is opened without blocking: no reader
//                    is an error, not a hang);
//   replaced         a regular file, a link to one (its target is replaced), or a path that
//                    does not exist: written to `.NAME.tmp-PID` in the same folder, flushed
//                    (fsync), renamed over NAME, and the folder flushed, so a reader sees the
//                    old file or the new one and a crash leaves no half file under NAME; the
//                    temp is removed on every failure path, and on SIGINT/SIGTERM/SIGHUP
//                    (a handler that removes the temps in flight, then does what the signal's
//                    earlier disposition did). A `.NAME.tmp-PID` whose process is gone (a
//                    writer killed with SIGKILL) is removed when NAME is next written.
// A path that is the file standard output or standard error already is (`/dev/stdout`, a
// link to /proc/self/fd/1, the file `> f` opened) is that stream: written to the descriptor,
// never replaced, so `--out /dev/stdout > f` leaves f holding exactly the output.
// Anything else (a folder, a block device, a socket, a link to nothing) is refused.
// Errors are values: false and a one-line reason naming the path in *err.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpucheck {

enum class FileType { missing, regular, directory, character_device, block_device, fifo, socket, symlink, other };

// What lstat(2) and stat(2) say about a path: `type` of the path itself, `target` of what it
// names after following links (equal to `type` unless type is symlink; missing for a link to
// nothing).
struct PathFacts {
  FileType type = FileType::missing;
  FileType target = FileType::missing;
  int std_stream = 0;  // 1 or 2 when the target is the file descriptor 1 or 2 is open on
  bool link_loop = false;  // a link whose target never resolves (ELOOP): target is missing
};

enum class OutputKind { standard_output, in_place, replace, refuse };

// The rule above, pure: `path` only decides `-`.
OutputKind classify_output(std::string_view path, const PathFacts& facts);
// Why an output of these facts is refused ("is a folder", ...); "" when it is not.
std::string refusal_reason(const PathFacts& facts);

// lstat + stat of a path (missing when it does not exist).
PathFacts path_facts(const std::string& path);

// The temp beside `path` that replace() writes: "DIR/.NAME.tmp-PID".
std::string temp_path_for(const std::string& path, long pid);
// True for a name temp_path_for makes (".x.json.tmp-123"); *pid gets the number.
bool is_temp_name(std::string_view name, long* pid = nullptr);
// Removes the temps of `path` (".NAME.tmp-PID" beside it) whose process no longer exists;
// the names removed.
std::vector<std::string> remove_stale_temps(const std::string& path);

// Unlinks every temp of an output in flight, now: for a signal handler that ends the process
// (async-signal-safe).
void remove_registered_temps() noexcept;

// A file being replaced atomically, for writers that are handed a path (Google Benchmark's
// --benchmark_out): create() names the temp to write; commit() flushes it, renames it over
// the final path and flushes the folder. The destructor removes the temp unless committed.
class AtomicReplace {
 public:
  // `final_path` is the path as given; a link to a regular file replaces its target.
  explicit AtomicReplace(std::string final_path);
  ~AtomicReplace();
  AtomicReplace(const AtomicReplace&) = delete;
  AtomicReplace& operator=(const AtomicReplace&) = delete;

  const std::string& final_path() const { return final_; }
  const std::string& temp_path() const { return temp_; }
  // Flushes the temp, renames it over the final path, flushes the folder. A temp that nobody
  // wrote is an error (nothing to put in place).
  bool commit(std::string* err);
  // Removes the temp now (nothing is put in place).
  void abandon();

 private:
  std::string final_, temp_;
  bool done_ = false;
  int slot_ = -1;  // its place in the list the signal handler removes
};

// Writes `data` to `path` by its kind (above). False with a reason on any failure, and the
// temp removed; an output that is refused writes nothing.
bool write_output(const std::string& path, std::string_view data, std::string* err);

// Several outputs of one command (path, data), by their kinds as write_output, so that a
// failure leaves every one as it was: each device and FIFO is opened first (a FIFO with no
// reader fails here) and each file written to its temp beside it and flushed; only when all of
// that worked are the temps renamed into place, then the devices, FIFOs and standard streams
// written. A rename that still fails (the temp is on the disk: hardly ever) says how many
// earlier outputs it replaced. False with a reason naming the output, temps removed.
bool write_outputs(const std::vector<std::pair<std::string, std::string_view>>& outputs, std::string* err);

// The `replace` path alone: temp, write, fsync, rename, fsync the folder.
bool write_file_atomically(const std::string& path, std::string_view data, std::string* err);

// An output that is appended to (GITHUB_STEP_SUMMARY): a regular file (created if missing)
// opened O_APPEND, a character device written, a FIFO opened without blocking. `skipped` is
// set (and true returned) for a FIFO with no reader: nothing waits on it, nothing is lost
// that the caller cannot say in a warning. Anything else is refused with a reason.
bool append_output(const std::string& path, std::string_view data, bool* skipped, std::string* err);

// Whether two outputs (or an output and an input) are one file: the same inode when both
// exist, else the same name in the same folder. "-" is only itself.
bool same_file(const std::string& a, const std::string& b);

}  // namespace gpucheck
