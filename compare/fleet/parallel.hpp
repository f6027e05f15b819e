// Independent per-node work (reading a node's folder, accept's judge of one node) spread over
// the machine's cores: a fleet of 1,000 nodes is 8,000 files to parse, and a login node has
// cores to spare. Each index is done exactly once; results go to slots the caller owns, so the
// order of the output never depends on the threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace gpucheck::compare::fleet {

template <class Fn>
void parallel_for(std::size_t n, Fn fn) {
  const std::size_t workers = std::min<std::size_t>({std::max(1u, std::thread::hardware_concurrency()), 16, n});
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (std::size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace gpucheck::compare::fleet
