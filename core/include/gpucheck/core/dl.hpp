// Libraries gpucheck loads at run time (NVML, PCRE2, SQLite: the GPU machine has their runtime
// libraries but not their headers): one way to take a function from a dlopen handle.
#pragma once

#include <dlfcn.h>

namespace gpucheck {

// Sets *fn to `name` in `lib`; returns whether the library has it.
template <typename F>
bool dl_bind(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(::dlsym(lib, name));
  return *fn != nullptr;
}

}  // namespace gpucheck
