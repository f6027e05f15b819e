// Reading an input file, for the binaries and the tool alike: one regular file, whole, up to
// a bound. Anything else is refused at once with one line naming the path: a FIFO (opened
// without blocking, so a FIFO nobody writes is never a hang), a device, a folder where a file
// is wanted, a symbolic link loop, a file larger than the bound.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace gpucheck {

// False with "PATH: reason" in *err ("PATH: no such file or folder", "PATH: is a FIFO, not a
// regular file", "PATH: a symbolic link loop", ...).
bool read_input_file(const std::string& path, std::size_t max_bytes, std::string* out, std::string* err);

// A file's bytes for a loader that only reads them: a regular file mapped read-only rather
// than copied (a 650 MB results file is then neither copied nor zeroed page by page), or, where
// mapping is not possible (an empty file, a file system without mmap), read() into a string.
// A file truncated while mapped would raise SIGBUS at the first page past its new end: a
// handler maps zeros there instead, and cut() (the handler's mark, or the file now shorter than
// its text) lets the caller refuse it in one line.
class InputText {
 public:
  InputText() = default;
  explicit InputText(std::string text) : owned_(std::move(text)), view_(owned_) {}
  InputText(InputText&& other) noexcept;
  InputText& operator=(InputText&& other) noexcept;
  InputText(const InputText&) = delete;
  InputText& operator=(const InputText&) = delete;
  ~InputText() { release(); }

  [[nodiscard]] std::string_view text() const { return view_; }
  // Whether the file shrank while mapped (its bytes past the new end then read as zeros), also
  // after release().
  [[nodiscard]] bool cut() const;
  [[nodiscard]] bool mapped() const { return slot_ >= 0; }
  // Frees the bytes (unmaps them) at once; text() is empty afterwards.
  void release();

 private:
  friend bool map_input_file(const std::string&, std::size_t, InputText*, std::string*);
  std::string owned_;
  std::string_view view_;
  int slot_ = -1;  // the mapping's entry in the SIGBUS handler's table, -1 when not mapped
  int fd_ = -1;    // the mapped file, open while mapped (is it shorter now?)
  bool cut_ = false;  // kept past release()
};

// read_input_file's checks and refusals, word for word; the bytes mapped where they can be.
bool map_input_file(const std::string& path, std::size_t max_bytes, InputText* out, std::string* err);

// The reason alone, from errno after a failed open/stat of an input ("no such file or
// folder", "a symbolic link loop", strerror otherwise).
std::string input_errno_reason(int e);

// What a node that is not a regular file is, from its st_mode: "a folder", "a FIFO", "a
// character device", "a block device", "a socket", else "not a regular file".
std::string non_regular_kind(unsigned mode);

}  // namespace gpucheck
