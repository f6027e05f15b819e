// What the families' tables share for --list: a case's coordinates (axis name, value) and the
// listing of a vector of cases that have name() and coordinates(). Pure.
#pragma once
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/dtype.hpp"
#include "gpucheck/core/options.hpp"

namespace gpucheck {

using Coordinates = std::vector<std::pair<std::string, std::string>>;

template <class C>
std::vector<axes::Listed> listed(const std::vector<C>& cases) {
  std::vector<axes::Listed> out;
  out.reserve(cases.size());
  for (const C& c : cases) out.push_back({c.name(), c.coordinates()});
  return out;
}

// The rows of a table that belong to suite s, in order (rows carry `suites`).
template <class R>
std::vector<R> in_suite(const std::vector<R>& rows, Suite s) {
  std::vector<R> out;
  for (const R& r : rows)
    if (r.suites.has(s)) out.push_back(r);
  return out;
}

inline std::vector<std::string> dtype_names(std::span<const DType> ts) {
  std::vector<std::string> out;
  for (DType t : ts) out.emplace_back(to_string(t));
  return out;
}

}  // namespace gpucheck
