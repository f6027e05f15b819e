#!/usr/bin/env bash
# The user's own shapes beside PyTorch, one family at a time, on one GPU (issue 19's must-show):
#   GEMM       bench_matmul -a variant=cublaslt -a dtype=bf16 -a 'M=2^[9:14]'  (M=N=K 512..16384)
#   attention  bench_attention -a backend=naive,flash,cudnn -a head_dim=64,128,256 (b4 h16 s4096
#              fp16), run with PyTorch's own cuDNN (LD_LIBRARY_PATH) so that the cuDNN rows are
#              one library timed two ways; a case one side cannot run (a backend without
#              the head dim on this GPU) is in the table as skipped, with the reason
#   bmm        our strided, strided_mbk, permute_bmm against torch.bmm, torch.einsum and
#              .contiguous() then bmm, at 4 shapes
#   nccl       bytes 2^[20:30], one rank, out of place: all-gather and reduce-scatter against
#              torch.distributed (algbw_GBps). Our all-reduce is report only: torch.distributed's
#              all_reduce is in place only, and in place at one rank NCCL moves no data
# For each: the case list (bench_X ... --list), our run, PyTorch's counterparts of the same
# names timed the same way (ci/torch_reference.py --cases), and `gpucheck compare PYTORCH OURS
# --metric ...` (PyTorch is the reference side). At the end $OUT/table.md: per family, each
# case's figure on both sides, the ratio, and whether it is inside the family's agreement band.
# About 5 minutes on an H200.
# Usage: ci/axes_session.sh BUILD_DIR OUT_DIR   (python3 with torch on PATH; one GPU)
#   AXES_OURS_CUDNN=system  bench_attention with the system's cuDNN instead of PyTorch's
# Writes under OUT_DIR: summary.log, table.md, and per family NAME.cases.txt, NAME.ours.json,
# NAME.ours.log, NAME.torch.json, NAME.torch.log, NAME.compare.txt.
set -uo pipefail
if (( $# != 2 )); then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$1" && pwd)/bin
out=$2
mkdir -p "$out"
out=$(cd "$out" && pwd)
for b in bench_matmul bench_attention bench_bmm bench_nccl gpucheck; do
  [[ -x $bin/$b ]] || { echo "$0: $bin/$b is missing (build first)" >&2; exit 2; }
done
export NCCL_NVLS_ENABLE=0
summary=$out/summary.log
: > "$summary"
note() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$summary"; }
rc=0

# Agreement bands: docs/TORCH_REFERENCE.md, "Agreement with PyTorch" (keep the two in step).
# PREFIX=PCT: there both sides make the same library call, timed the same way, and the doc
# states they agree within PCT%; PREFIX=report:WHY: the two run different code, the ratio is
# shown and not judged. The longest matching prefix wins.
bands=(
  --band 'matmul/cublaslt/=5'
  --band 'attention/cudnn/=2.2'
  --band 'attention/flash/=report:our fused kernel against FlashAttention-2, different kernels'
  --band 'attention/naive/=report:different kernels and bytes (our S in fp32, PyTorch fp16)'
  --band 'bmm/strided/=5'
  --band 'bmm/strided_mbk/=5'
  --band 'bmm/permute_bmm/=report:our permute kernel against PyTorch .contiguous() copy'
  --band 'nccl/allgather/=5'
  --band 'nccl/reducescatter/=5'
  --band "nccl/allreduce/=report:torch.distributed's all_reduce is in place only, and in place at one rank nothing moves"
)

# sweep NAME METRIC BINARY AXES...: list, run ours, run PyTorch's, compare. ours_env (VAR=value
# words) goes before our binary, torch_args to torch_reference.py; both are reset after.
ours_env=()
torch_args=()
sweep() {
  local name=$1 metric=$2 binary=$3
  shift 3
  local t0
  t0=$(date +%s)
  "$bin/$binary" "$@" --list > "$out/$name.cases.txt" 2> "$out/$name.list.log" || {
    note "$name: --list failed ($name.list.log)"; rc=1; ours_env=(); torch_args=(); return
  }
  env ${ours_env[@]+"${ours_env[@]}"} "$bin/$binary" "$@" --benchmark_out="$out/$name.ours.json" \
    --benchmark_out_format=json > "$out/$name.ours.log" 2>&1
  local orc=$?
  PYTHONUNBUFFERED=1 python3 "$src/ci/torch_reference.py" --cases "$out/$name.cases.txt" \
    --json "$out/$name.torch.json" ${torch_args[@]+"${torch_args[@]}"} > "$out/$name.torch.log" 2>&1
  local trc=$?
  "$bin/gpucheck" compare "$out/$name.torch.json" "$out/$name.ours.json" --metric "$metric" --threshold 5 \
    --no-thresholds --allow-missing > "$out/$name.compare.txt" 2>&1
  local crc=$?
  note "$name: $(wc -l < "$out/$name.cases.txt") cases, ours exit $orc, torch exit $trc, compare exit $crc" \
       "($(( $(date +%s) - t0 )) s)"
  local skipped
  skipped=$(grep -c '"skip_message"' "$out/$name.torch.json" 2>/dev/null)
  (( ${skipped:-0} > 0 )) && echo "  PyTorch rows skipped: $skipped (reasons in $name.torch.json and table.md)" >> "$summary"
  cat "$out/$name.compare.txt" >> "$summary"
  (( orc == 0 && trc == 0 )) || rc=1
  ours_env=()
  torch_args=()
}

# The directory of the cuDNN that PyTorch loads (empty if none is found).
torch_cudnn_dir() {
  python3 - 2>/dev/null <<'EOF'
import os
import torch
torch.backends.cudnn.version()  # loads libcudnn
for line in open("/proc/self/maps"):
    path = line.split()[-1]
    if "/libcudnn.so" in path:
        print(os.path.dirname(path))
        break
EOF
}

note "axes session: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0 2>/dev/null)"
note "PyTorch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version())' 2>&1 | tail -1)"

# Beside each compared figure: the kernels a PyTorch GEMM call launches, and the two earlier
# differences of torch_reference.py timed (docs/TORCH_REFERENCE.md, "Small GEMMs").
torch_args=(--gemm-diagnostics)
sweep gemm TFLOPS bench_matmul -a variant=cublaslt -a dtype=bf16 -a 'M=2^[9:14]'

if [[ ${AXES_OURS_CUDNN:-torch} != system ]]; then
  cudnn_dir=$(torch_cudnn_dir)
  if [[ -n $cudnn_dir ]]; then
    ours_env=("LD_LIBRARY_PATH=$cudnn_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    note "attention: bench_attention loads PyTorch's cuDNN from $cudnn_dir"
  else
    note "attention: PyTorch's cuDNN not found; bench_attention uses the system's (the cuDNN rows then compare two libraries)"
  fi
fi
sweep attention TFLOPS bench_attention -a backend=naive,flash,cudnn -a head_dim=64,128,256

sweep bmm TFLOPS bench_bmm -a dtype=fp16 -a path=strided,strided_mbk,permute_bmm \
  --benchmark_filter='b1024m64n64k64|b512m128n128k64|b64m512n512k512|b8m4096n4096k64' \
  -a batch=1024,512,64,8 -a M=64,128,512,4096 -a K=64,512   # N follows M

sweep nccl algbw_GBps bench_nccl -b 1M -e 1G -f 2 -a collective=allreduce,allgather,reducescatter -a in_place=false

python3 "$src/ci/torch_reference.py" --table "$out/table.md" "${bands[@]}" \
  --section "GEMM: bench_matmul -a variant=cublaslt -a dtype=bf16 -a 'M=2^[9:14]'" TFLOPS "$out/gemm" \
  --section "Attention: bench_attention -a backend=naive,flash,cudnn -a head_dim=64,128,256" TFLOPS "$out/attention" \
  --section "bmm: bench_bmm -a dtype=fp16 -a path=strided,strided_mbk,permute_bmm (4 shapes)" TFLOPS "$out/bmm" \
  --section "NCCL, one rank, out of place: bench_nccl -b 1M -e 1G -f 2" algbw_GBps "$out/nccl" \
  > "$out/table.log" 2>&1 || { note "table: failed (table.log)"; rc=1; }
if [[ -f $out/table.md ]]; then
  note "table: $out/table.md"
  cat "$out/table.md" >> "$summary"
fi
note "done: exit $rc (logs, JSON, comparisons and table.md in $out)"
exit "$rc"
