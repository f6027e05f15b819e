// The clock-event reason names of the contract's table, by class.
#include "accept/names.hpp"

namespace gpucheck::compare::accept_names {

bool fault_name(std::string_view name) {
  for (const auto& r : contract::kClockEventReasons)
    if (r.name == name) return r.cls == contract::ReasonClass::slowing;
  return false;
}

std::string_view power_cap_name() {
  for (const auto& r : contract::kClockEventReasons)
    if (r.cls == contract::ReasonClass::power_cap) return r.name;
  return "sw_power_cap";
}

}  // namespace gpucheck::compare::accept_names
