#!/usr/bin/env bash
# Gate drills: does the gate catch what it must, and stay quiet on what it must not? Each drill
# runs `gpucheck gate` against a stored baseline with one thing changed, on purpose, and
# records the exit status and the cases that failed (docs/GATE.md, "Drills"):
#   unchanged        the tree as built, $UNCHANGED_RUNS times (default 1)
#   launch_blocking  CUDA_LAUNCH_BLOCKING=1 exported: every binary must refuse
#   launch_1.15x     a host spin of 15% of one launch added to every eager launch
#   launch_1.3x      a host spin of 30% of one launch added to every eager launch
#   launch_1.5x_mem  50% added by walking an 8 MiB buffer per launch (work that touches memory
#                    and evicts the caches, as a slower driver or wrapper would)
#   copy_6pct        the copy kernel copies 6% more bytes
#   copy_grid        the copy kernel's grid capped at 2 blocks per SM
#   tf32_8pct        bench_matmul's tf32 GEMMs do 8% more work (burst and sustained rows)
#   gemm_neighbour   another process runs bf16 GEMMs on the GPU during the gate (PyTorch)
# A changed drill copies the source tree, edits it (python3, each edit checked to apply),
# rebuilds only the binary it changes, and gates a bin folder where that binary replaces the
# built one. The card's settings are never touched.
# Usage: ci/gate_drills.sh BUILD_DIR BASELINE_STORE OUT_DIR [DRILL...]   (default: all)
# Environment: UNCHANGED_RUNS, DRILL_RUNS (runs of each, default 1), DRILL_GATE_ARGS (more gate options).
set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# gate NAME BIN_DIR [ENV=VALUE...]: one gate run, its verdict in the summary.
gate() {
  local name=$1 bin=$2
  shift 2
  local t0=$SECONDS
  # DRILL_GATE_ARGS: more gate options, split on spaces (e.g. "--filter ^memory/").
  # shellcheck disable=SC2086
  env "$@" "$gpucheck" gate --bin-dir "$bin" --baseline "$store" --out "$out/$name" --color never ${DRILL_GATE_ARGS:-} \
    > "$out/$name.txt" 2> "$out/$name.err"
  local rc=$?
  local failed
  failed=$(grep -E ' (REGRESSION|MISSING|ERRORED) ' "$out/$name.txt" | awk '{print $1}' | tr '\n' ' ')
  {
    echo "drill $name: exit $rc in $((SECONDS - t0)) s; failing: ${failed:-none}"
    grep -E "^result:|every benchmark binary" "$out/$name.txt" "$out/$name.err" | sed 's/^/    /'
  } | tee -a "$summary"
}

# repeat NAME BIN_DIR: a changed drill gated DRILL_RUNS times (default 1; NAME, then NAME-2, ...),
# e.g. to give a results history several runs on each side of a shift.
repeat() {
  gate "$1" "$2"
  for ((i = 2; i <= ${DRILL_RUNS:-1}; i++)); do gate "$1-$i" "$2"; done
}

# variant NAME BINARY PYTHON_EDIT: the tree with one edit, BINARY rebuilt; prints the bin folder
# to gate (the built binaries, BINARY replaced). One copy of the tree and one build folder serve
# every variant (the files an edit touches are restored first), so each rebuilds a file or two.
drill_tree=/tmp/gpucheck-drill drill_build=/tmp/gpucheck-drill-build
edited_files=(kernels/src/launch.cu benchmarks/bench_launch.cpp kernels/src/stream.cu benchmarks/bench_matmul.cpp)
variant() {
  local name=$1 binary=$2 edit=$3
  local vbin=$out/.bin-$name
  rm -rf "$vbin" && mkdir -p "$vbin"
  if [[ ! -d $drill_tree ]]; then
    mkdir -p "$drill_tree"
    # The tree as it is on disk (a checkout's index may be older than its files), less builds.
    tar -C "$src" --exclude='./build*' --exclude=./.git --exclude=./out --exclude=./results -cf - . | tar -C "$drill_tree" -xf -
  fi
  for f in "${edited_files[@]}"; do cp "$src/$f" "$drill_tree/$f"; done
  (cd "$drill_tree" && python3 -c "$edit") || { echo "drill $name: the edit did not apply" | tee -a "$summary" >&2; return 1; }
  { cmake -S "$drill_tree" -B "$drill_build" -DCMAKE_CUDA_ARCHITECTURES="${DRILL_ARCH:-90}" -DGPUCHECK_BUILD_TESTS=OFF &&
    cmake --build "$drill_build" -j"$(nproc)" --target "$binary"; } > "$out/$name.build.log" 2>&1 ||
    { echo "drill $name: the variant did not build ($name.build.log)" | tee -a "$summary" >&2; return 1; }
  cp -a "$build"/bin/. "$vbin"/
  cp "$drill_build/bin/$binary" "$vbin/$binary"
  echo "$vbin"
}

# The edits. Each asserts that its anchor is there, so a drill never runs on an unchanged tree.
edit_launch() {  # edit_launch FRACTION MODE(spin|memory)
  cat << PY
import re, pathlib
frac, mode = $1, "$2"
helper = '''
#include <chrono>
#include <cstring>
#include <vector>
namespace {
// Drill: FRACTION of one launch added to every launch (the constant: one eager launch of the
// H200 baseline, docs/GATE.md).
inline void drill_slow_launch() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<long>(3800 * FRACTION));
  if (MODE_MEMORY) {
    static std::vector<unsigned char> buf(std::size_t{8} << 20, 1);
    static std::size_t at = 0;
    while (std::chrono::steady_clock::now() < until)
      for (int k = 0; k < 64; ++k, at = (at + 4160) % buf.size()) buf[at] = static_cast<unsigned char>(buf[at] + 1);
  } else {
    while (std::chrono::steady_clock::now() < until) {
    }
  }
}
}  // namespace
'''.replace("FRACTION", str(frac)).replace("MODE_MEMORY", "true" if mode == "memory" else "false")
p = pathlib.Path("kernels/src/launch.cu"); s = p.read_text()
anchor = "cudaError_t launch_empty(cudaStream_t s) {\n"
assert anchor in s
s = s.replace('#include "gpucheck/kernels/launch.cuh"\n', '#include "gpucheck/kernels/launch.cuh"\n' + helper, 1)
s = s.replace(anchor, anchor + "  drill_slow_launch();\n", 1)
p.write_text(s)
p = pathlib.Path("benchmarks/bench_launch.cpp"); s = p.read_text()
a = "GPUCHECK_CUDA(cudaLaunchKernel(kernels::empty_kernel_fn(), one, one, nullptr, 0, s));"
assert a in s
s = s.replace('#include "gpucheck/harness/registry.hpp"\n', '#include "gpucheck/harness/registry.hpp"\n' + helper, 1)
s = s.replace(a, "drill_slow_launch(); " + a)
p.write_text(s)
PY
}
edit_copy_6pct() {
  cat << 'PY'
import pathlib
p = pathlib.Path("kernels/src/stream.cu"); s = p.read_text()
a = '    GPUCHECK_CUDA_LAUNCH("copy_flat_kernel");\n'
assert a in s
s = s.replace(a, a + '''    {  // drill: 6% more bytes copied
      const std::size_t extra = n * 6 / 100;
      copy_flat_kernel<<<static_cast<unsigned>((extra + kThreads - 1) / kThreads), kThreads, 0, s>>>(
          static_cast<int4*>(dst), static_cast<const int4*>(src), extra);
      GPUCHECK_CUDA_LAUNCH("copy_flat_kernel (drill)");
    }
''', 1)
p.write_text(s)
PY
}
edit_copy_grid() {
  cat << 'PY'
import pathlib
p = pathlib.Path("kernels/src/stream.cu"); s = p.read_text()
a = "const std::size_t blocks = std::min<std::size_t>((n + kThreads - 1) / kThreads, 0x7fffffffu);"
assert a in s
s = s.replace(a, "const std::size_t blocks = std::min<std::size_t>((n + kThreads - 1) / kThreads, std::size_t{132} * 2);  // drill: capped grid")
p.write_text(s)
PY
}
# After each tf32 GEMM, one more on the first 8% of A's columns (D's rows: m rounded down to a
# multiple of 128, as GEMM tiles are) into a scratch output, cuBLASLt's own algorithm for it;
# the case's D, which verification reads, is the real call's alone.
edit_tf32_8pct() {
  cat << 'PY'
import pathlib
p = pathlib.Path("benchmarks/bench_matmul.cpp"); s = p.read_text()
anchors = {
    "ctor": "    ws_ = harness::DeviceBuffer(workspace_bytes(c));\n",
    "run": "                                   ws_.get(), ws_.bytes(), s));\n",
    "member": "  std::optional<kernel_name::Picked> kernel_;\n};\n",
}
for a in anchors.values():
    assert s.count(a) == 1, a
s = s.replace(anchors["ctor"], anchors["ctor"] + '''    if (c.dtype == DType::tf32)  // drill: scratch for the 8% slice
      drill_d_ = harness::DeviceBuffer(out_bytes * static_cast<std::size_t>(drill_rows() * p_.n));
''')
s = s.replace(anchors["run"], anchors["run"] + '''    if (c_.dtype == DType::tf32) {  // drill: 8% more work, into a scratch output
      const auto rows = static_cast<std::uint64_t>(drill_rows());
      cublasLtMatrixLayout_t la = nullptr, ld = nullptr;
      GPUCHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la, types_.ab, static_cast<std::uint64_t>(p_.k), rows, p_.k));
      GPUCHECK_CUBLAS(cublasLtMatrixLayoutCreate(&ld, types_.cd, rows, static_cast<std::uint64_t>(p_.n),
                                                 static_cast<std::int64_t>(rows)));
      const cublasStatus_t st = cublasLtMatmul(lt_, op_, &alpha, a_.get(), la, b_.get(), lb_, &beta, drill_d_.get(), ld,
                                               drill_d_.get(), ld, nullptr, ws_.get(), ws_.bytes(), s);
      cublasLtMatrixLayoutDestroy(ld);
      cublasLtMatrixLayoutDestroy(la);
      GPUCHECK_CUBLAS(st);
    }
''')
s = s.replace(anchors["member"], '''  std::optional<kernel_name::Picked> kernel_;
  harness::DeviceBuffer drill_d_;
  std::int64_t drill_rows() const { return std::max<std::int64_t>(1, p_.m * 8 / 100 / 128 * 128); }
};
''')
p.write_text(s)
PY
}

# Sourced (tests/unit/compare/drill_edits.sh): the edits only.
[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0

build=$(realpath "$1") store=$(realpath "$2") out=$(realpath -m "$3")
shift 3
drills=("$@")
((${#drills[@]})) || drills=(unchanged launch_blocking launch_1.15x launch_1.3x launch_1.5x_mem copy_6pct copy_grid tf32_8pct gemm_neighbour)
mkdir -p "$out"
summary=$out/drills.log
export NCCL_NVLS_ENABLE=0
gpucheck=$build/bin/gpucheck

echo "gate drills on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2> /dev/null | head -1), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" | tee -a "$summary"
for d in "${drills[@]}"; do
  case $d in
    unchanged)
      for ((i = 1; i <= ${UNCHANGED_RUNS:-1}; i++)); do gate "unchanged-$i" "$build/bin"; done ;;
    launch_blocking) gate launch_blocking "$build/bin" CUDA_LAUNCH_BLOCKING=1 ;;
    launch_1.15x) b=$(variant launch115 bench_launch "$(edit_launch 0.15 spin)") && repeat launch_1.15x "$b" ;;
    launch_1.3x) b=$(variant launch13 bench_launch "$(edit_launch 0.3 spin)") && repeat launch_1.3x "$b" ;;
    launch_1.5x_mem) b=$(variant launch15 bench_launch "$(edit_launch 0.5 memory)") && repeat launch_1.5x_mem "$b" ;;
    copy_6pct) b=$(variant copy6 bench_memory "$(edit_copy_6pct)") && repeat copy_6pct "$b" ;;
    copy_grid) b=$(variant copygrid bench_memory "$(edit_copy_grid)") && repeat copy_grid "$b" ;;
    tf32_8pct) b=$(variant tf32_8pct bench_matmul "$(edit_tf32_8pct)") && repeat tf32_8pct "$b" ;;
    gemm_neighbour)
      if python3 -c "import torch" 2> /dev/null; then
        python3 -c "
import torch, time
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16); b = torch.randn_like(a)
end = time.time() + 600
while time.time() < end:
    for _ in range(20): a @ b
    torch.cuda.synchronize()
" > "$out/neighbour.log" 2>&1 &
        npid=$!
        sleep 5
        gate gemm_neighbour "$build/bin"
        kill "$npid" 2> /dev/null
        wait "$npid" 2> /dev/null
      else
        echo "drill gemm_neighbour: skipped (no PyTorch)" | tee -a "$summary"
      fi ;;
    *) echo "drill $d: unknown (see the header of $0)" | tee -a "$summary" ;;
  esac
done
