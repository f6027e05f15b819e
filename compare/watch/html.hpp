// watch.html: one self-contained page with the verdict, the timeline charts (utilisation beside
// SM active, power against the limit, PCIe, CPU) and the step-time histogram.
#pragma once

#include <string>

#include "watch/record.hpp"

namespace gpucheck::compare::watch {

std::string watch_html(const WatchRun& run);

}  // namespace gpucheck::compare::watch
