// The handler runs async-signal-safe calls only: an atomic store, unlink (through
// remove_registered_temps), write and _exit.
#include "gpucheck/core/stop.hpp"

#include <signal.h>
#include <unistd.h>

#include "gpucheck/core/output.hpp"

namespace gpucheck {
namespace {

std::atomic<int> g_stop{0};
std::atomic<int> g_polled{0};

extern "C" void on_stop_signal(int sig) {
  g_stop.store(sig);
  if (g_polled.load() > 0) return;
  remove_registered_temps();
  const char* msg = sig == SIGINT ? "gpucheck: stopped by SIGINT\n" : sig == SIGTERM ? "gpucheck: stopped by SIGTERM\n"
                                                                                     : "gpucheck: stopped by SIGHUP\n";
  std::size_t n = 0;
  while (msg[n] != '\0') ++n;
  (void)!::write(STDERR_FILENO, msg, n);
  ::_exit(128 + sig);
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  ::sigaction(SIGPIPE, &ign, nullptr);
}

int stop_signal() { return g_stop.load(); }
const std::atomic<int>& stop_flag() { return g_stop; }

StopPolled::StopPolled() { g_polled.fetch_add(1); }
StopPolled::~StopPolled() { g_polled.fetch_sub(1); }

}  // namespace gpucheck
