// Page-walk probe (ci/process_levels.sh builds and runs it once): does the speed of a process's
// memory depend on which pages it got? It maps BUFFERS anonymous buffers of MIB MiB each, one
// after another, and times a pointer chase through each: one 64-byte line a 4 KiB page, the
// pages in random order, so that every step needs a page walk and the lines stay in the L2
// (the best of 5 passes of 200,000 steps, ns a step). Then it times every buffer again: a buffer
// whose figure repeats carries its speed in its pages (where its page tables and its frames
// landed), not in the moment: the line gives the correlation of the two passes over the buffers
// (near 1: the pages decide; near 0: noise). Done twice: with 4 KiB pages (MADV_NOHUGEPAGE) and with huge pages
// asked for (MADV_HUGEPAGE; the line says how many kB the kernel gave).
// Measured on the CPU machine (a KVM guest, AMD EPYC, 2 vCPUs, quiet, 2026-12-05, 16 MiB x 24,
// 3 processes): 4 KiB pages 21.2-52.4 ns a step, correlation 0.75-0.97; huge pages 17.8-23.6 ns,
// correlation 0.23-0.31.
// Usage: page_walk_probe [MIB (16)] [BUFFERS (24)]; one line a page size on stdout.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kPage = 4096, kLine = 64;

// The first line of a cycle through one line of every page of [p, p + bytes), pages shuffled.
char* build_chase(char* p, std::size_t bytes, std::mt19937_64& rng) {
  const std::size_t pages = bytes / kPage;
  std::vector<std::size_t> order(pages);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  // A different line in each page, so that the lines spread over the cache's sets.
  auto line_of = [&](std::size_t k) { return p + order[k] * kPage + (order[k] * kLine * 5) % kPage; };
  for (std::size_t k = 0; k < pages; ++k) *reinterpret_cast<char**>(line_of(k)) = line_of((k + 1) % pages);
  return line_of(0);
}

double ns_per_step(char* start) {
  constexpr std::size_t kSteps = 200000;
  char* q = start;
  for (std::size_t i = 0; i < kSteps; ++i) q = *reinterpret_cast<char* volatile*>(q);  // warm
  double best = 1e300;
  for (int pass = 0; pass < 5; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < kSteps; ++i) q = *reinterpret_cast<char* volatile*>(q);
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / kSteps);
  }
  return best;
}

// Pearson's r of two equally long series; 0 where either does not vary.
double correlation(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

long anon_huge_kb() {
  std::ifstream f("/proc/self/smaps_rollup");
  std::string key;
  long kb = -1;
  while (f >> key) {
    if (key == "AnonHugePages:") {
      f >> kb;
      break;
    }
  }
  return kb;
}

bool probe(std::size_t bytes, std::size_t buffers, bool huge) {
  std::mt19937_64 rng(std::random_device{}());
  std::vector<char*> maps, starts;
  for (std::size_t b = 0; b < buffers; ++b) {
    void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      std::perror("page_walk_probe: mmap");
      return false;
    }
    auto* p = static_cast<char*>(m);
    ::madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    for (std::size_t i = 0; i < bytes; i += kPage) p[i] = 1;  // fault every page in, in order
    maps.push_back(p);
    starts.push_back(build_chase(p, bytes, rng));
  }
  std::vector<double> first, again;
  for (char* s : starts) first.push_back(ns_per_step(s));
  for (char* s : starts) again.push_back(ns_per_step(s));
  const long kb = anon_huge_kb();
  std::printf("page walk probe, %s pages (AnonHugePages %ld kB), %zu x %zu MiB: ns a step %.1f-%.1f; "
              "first against again, correlation %.2f; first/again:",
              huge ? "huge" : "4 KiB", kb, buffers, bytes >> 20, *std::min_element(first.begin(), first.end()),
              *std::max_element(first.begin(), first.end()), correlation(first, again));
  for (std::size_t b = 0; b < buffers; ++b) std::printf(" %.1f/%.1f", first[b], again[b]);
  std::printf("\n");
  for (char* p : maps) ::munmap(p, bytes);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const long mib = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 16;
  const long buffers = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 24;
  if (argc > 3 || mib < 1 || mib > 1024 || buffers < 1 || buffers > 256) {
    std::fprintf(stderr, "usage: page_walk_probe [MIB 1-1024] [BUFFERS 1-256]\n");
    return 2;
  }
  const auto bytes = static_cast<std::size_t>(mib) << 20;
  return probe(bytes, static_cast<std::size_t>(buffers), false) && probe(bytes, static_cast<std::size_t>(buffers), true)
             ? 0
             : 1;
}
