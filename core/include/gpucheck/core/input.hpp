// Reading an input file, for the binaries and the tool alike: one regular file, whole, up to
// a bound. Anything else is refused at once with one line naming the path: a FIFO (opened
// without blocking, so a FIFO nobody writes is never a hang), a device, a folder where a file
// is wanted, a symbolic link loop, a file larger than the bound.
#pragma once
#include <cstddef>
#include <string>

namespace gpucheck {

// False with "PATH: reason" in *err ("PATH: no such file or folder", "PATH: is a FIFO, not a
// regular file", "PATH: a symbolic link loop", ...).
bool read_input_file(const std::string& path, std::size_t max_bytes, std::string* out, std::string* err);

// The reason alone, from errno after a failed open/stat of an input ("no such file or
// folder", "a symbolic link loop", strerror otherwise).
std::string input_errno_reason(int e);

}  // namespace gpucheck
