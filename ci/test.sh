#!/usr/bin/env bash
# Installs what is missing, configures, builds (warnings are errors) and runs every test.
# GPU tests skip with a reason on a machine without a device.
# Usage: ci/test.sh [extra cmake args...]   (BUILD_DIR overrides the build folder)
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$GPUCHECK_ROOT/ci/deps.sh"
build=${BUILD_DIR:-$GPUCHECK_ROOT/build}
gpucheck_generator "$build"
cmake -S "$GPUCHECK_ROOT" -B "$build" ${GPUCHECK_GENERATOR[@]+"${GPUCHECK_GENERATOR[@]}"} -DGPUCHECK_WERROR=ON "$@"
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
