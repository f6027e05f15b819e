#include "gpucheck/core/input.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <utility>

namespace gpucheck {
namespace {

std::string not_regular(mode_t m) {
  if (S_ISDIR(m)) return "is a folder, expected a file";
  return "is " + non_regular_kind(m) + (S_ISFIFO(m) || S_ISCHR(m) || S_ISBLK(m) || S_ISSOCK(m) ? ", not a regular file" : "");
}

}  // namespace

std::string non_regular_kind(unsigned mode) {
  const auto m = static_cast<mode_t>(mode);
  if (S_ISDIR(m)) return "a folder";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

std::string input_errno_reason(int e) {
  if (e == ENOENT) return "no such file or folder";
  if (e == ELOOP) return "a symbolic link loop";
  if (e == ENOTDIR) return "a part of the path is not a folder";
  return std::strerror(e);
}

namespace {

// An open input that passed the checks: a regular file no larger than the bound.
struct OpenInput {
  int fd = -1;
  std::size_t size = 0;
  OpenInput() = default;
  OpenInput(const OpenInput&) = delete;
  OpenInput& operator=(const OpenInput&) = delete;
  ~OpenInput() {
    if (fd >= 0) ::close(fd);
  }
};

bool open_input(const std::string& path, std::size_t max_bytes, OpenInput* in, std::string* err) {
  auto fail = [&](const std::string& why) {
    *err = path + ": " + why;
    return false;
  };
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked right after.
  in->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (in->fd < 0) return fail(input_errno_reason(errno));
  struct stat st {};
  if (::fstat(in->fd, &st) != 0) return fail(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail(not_regular(st.st_mode));
  if (static_cast<std::size_t>(st.st_size) > max_bytes)
    return fail(max_bytes >= (std::size_t{1} << 20) ? "file is larger than " + std::to_string(max_bytes >> 20) + " MiB"
                                                    : "file is larger than " + std::to_string(max_bytes) + " bytes");
  const int fl = ::fcntl(in->fd, F_GETFL);
  if (fl >= 0) ::fcntl(in->fd, F_SETFL, fl & ~O_NONBLOCK);
  in->size = static_cast<std::size_t>(st.st_size);
  return true;
}

bool read_all(const std::string& path, const OpenInput& in, std::string* out, std::string* err) {
  std::string text(in.size, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(in.fd, text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = path + ": cannot read: " + std::strerror(errno);
      return false;
    }
    if (n == 0) break;  // it shrank while being read
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  *out = std::move(text);
  return true;
}

// The mappings the SIGBUS handler may repair: a few at a time (one per loader thread); a load
// that finds the table full reads its file instead.
struct MapSlot {
  std::atomic<bool> used{false};
  std::atomic<std::uintptr_t> begin{0}, end{0};
  std::atomic<bool> cut{false};
};
constexpr int kMapSlots = 16;
MapSlot g_slots[kMapSlots];
std::uintptr_t g_page = 4096;
struct sigaction g_old_bus {};

// A fault inside a mapped input (its file was truncated under it): zeros mapped from the
// faulting page to the mapping's end, the text marked cut, and the read resumes. mmap is a plain
// system call on Linux, safe here though POSIX does not list it. Any other SIGBUS gets the
// action there was before: restored, then met again as the instruction re-runs (or re-raised).
void on_sigbus(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const auto at = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (MapSlot& s : g_slots) {
    const std::uintptr_t b = s.begin.load(), e = s.end.load();
    if (b == 0 || at < b || at >= e) continue;
    const std::uintptr_t page = at & ~(g_page - 1);
    void* r = ::mmap(reinterpret_cast<void*>(page), e - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (r != MAP_FAILED) {
      s.cut.store(true);
      errno = saved_errno;
      return;
    }
  }
  (void)context;
  ::sigaction(SIGBUS, &g_old_bus, nullptr);
  if (info->si_code <= 0) ::raise(sig);
  errno = saved_errno;
}

void install_sigbus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_old_bus);
  });
}

int claim_slot() {
  for (int i = 0; i < kMapSlots; ++i) {
    bool expected = false;
    if (g_slots[i].used.compare_exchange_strong(expected, true)) return i;
  }
  return -1;
}

}  // namespace

bool read_input_file(const std::string& path, std::size_t max_bytes, std::string* out, std::string* err) {
  OpenInput in;
  return open_input(path, max_bytes, &in, err) && read_all(path, in, out, err);
}

bool map_input_file(const std::string& path, std::size_t max_bytes, InputText* out, std::string* err) {
  OpenInput in;
  if (!open_input(path, max_bytes, &in, err)) return false;
  install_sigbus_handler();
  const int slot = in.size == 0 ? -1 : claim_slot();
  void* p = slot < 0 ? MAP_FAILED : ::mmap(nullptr, in.size, PROT_READ, MAP_PRIVATE, in.fd, 0);
  if (p == MAP_FAILED) {  // empty, the table full, or a file system that cannot map: read it
    if (slot >= 0) g_slots[slot].used.store(false);
    std::string text;
    if (!read_all(path, in, &text, err)) return false;
    *out = InputText(std::move(text));
    return true;
  }
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  MapSlot& s = g_slots[slot];
  s.cut.store(false);
  s.end.store(b + ((in.size + g_page - 1) & ~(g_page - 1)));
  s.begin.store(b);
  out->release();
  out->cut_ = false;
  out->fd_ = std::exchange(in.fd, -1);
  out->view_ = std::string_view(static_cast<const char*>(p), in.size);
  out->slot_ = slot;
  return true;
}

InputText::InputText(InputText&& other) noexcept { *this = std::move(other); }

InputText& InputText::operator=(InputText&& other) noexcept {
  if (this == &other) return *this;
  release();
  owned_ = std::move(other.owned_);
  view_ = other.slot_ < 0 ? std::string_view(owned_) : other.view_;  // unmapped text is owned_ (or empty)
  slot_ = std::exchange(other.slot_, -1);
  cut_ = std::exchange(other.cut_, false);
  fd_ = std::exchange(other.fd_, -1);
  other.owned_.clear();
  other.view_ = {};
  return *this;
}

bool InputText::cut() const {
  if (cut_ || slot_ < 0) return cut_;
  struct stat st {};
  return g_slots[slot_].cut.load() || (::fstat(fd_, &st) == 0 && static_cast<std::size_t>(st.st_size) < view_.size());
}

void InputText::release() {
  if (slot_ >= 0) {
    MapSlot& s = g_slots[slot_];
    cut_ = cut();
    s.begin.store(0);
    s.end.store(0);
    ::munmap(const_cast<char*>(view_.data()), view_.size());
    s.used.store(false);
    slot_ = -1;
    ::close(std::exchange(fd_, -1));
  }
  std::string().swap(owned_);
  view_ = {};
}

}  // namespace gpucheck
