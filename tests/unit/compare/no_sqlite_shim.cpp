// LD_PRELOAD shim for history_no_sqlite.sh: dlopen of any libsqlite3 fails, as on a machine
// without the library; every other dlopen is the real one.
#include <dlfcn.h>

#include <cstring>

extern "C" void* dlopen(const char* name, int flags) {
  using Open = void* (*)(const char*, int);
  static const Open real = reinterpret_cast<Open>(dlsym(RTLD_NEXT, "dlopen"));
  if (name != nullptr && std::strstr(name, "libsqlite3") != nullptr) return nullptr;
  return real(name, flags);
}
