// What the families' tables share: a case's coordinates (axis name, value), the listing of a
// vector of cases that have name() and coordinates(), and the points a case list is made of
// (the suite's own, or the user's -a). Pure.
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

// The points a family's cases are made of: the user's (-a, when given) or suite s's own.
inline std::vector<axes::Point> points_of(const axes::CaseModel& model, Suite s, const std::vector<axes::Point>* user) {
  return user ? *user : axes::suite_points(model, s);
}

// "a,b,c": values joined as an axis's VALUES.
inline std::string value_list(const std::vector<std::string>& vs) {
  std::string out;
  for (const std::string& v : vs) out += (out.empty() ? "" : ",") + v;
  return out;
}

inline std::vector<std::string> dtype_names(std::span<const DType> ts) {
  std::vector<std::string> out;
  for (DType t : ts) out.emplace_back(to_string(t));
  return out;
}

}  // namespace gpucheck
