#include "watch/html.hpp"

namespace gpucheck::compare::watch {

std::string watch_html(const WatchRun& run) {
  return "<!doctype html><meta charset=\"utf-8\"><title>gpucheck watch</title><p>" + run.verdict.headline + "</p>\n";
}

}  // namespace gpucheck::compare::watch
