#!/usr/bin/env bash
# The user's own shapes beside PyTorch, one family at a time, on one GPU (issue 19's must-show):
#   GEMM       bench_matmul -a variant=cublaslt -a dtype=bf16 -a 'M=2^[9:14]'  (M=N=K 512..16384)
#   attention  bench_attention at head dims 64, 128, 256 (b4 h16 s4096, fp16; our flash kernels
#              have 64 and 128 only: their d256 cases are reported skipped with the reason)
#   bmm        torch.bmm vs torch.einsum("mbk,bkn->bmn") (our strided vs strided_mbk) at 4 shapes
#   nccl       bytes 2^[20:30], one rank: all-gather, reduce-scatter (out of place) and
#              all-reduce in place, against torch.distributed on one rank (algbw_GBps)
# For each: the case list (bench_X ... --list), our run, PyTorch's counterparts of the same
# names (ci/torch_reference.py --cases), and `gpucheck compare PYTORCH OURS --metric ...`
# (PyTorch is the reference side; a case more than 5% below it is shown as a regression).
# About 3-4 minutes on an H200.
# Usage: ci/axes_session.sh BUILD_DIR OUT_DIR   (python3 with torch on PATH; one GPU)
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
note() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$summary"; }
rc=0

# sweep NAME METRIC BINARY AXES...: list, run ours, run PyTorch's, compare.
sweep() {
  local name=$1 metric=$2 binary=$3
  shift 3
  local t0
  t0=$(date +%s)
  "$bin/$binary" "$@" --list > "$out/$name.cases.txt" 2> "$out/$name.list.log" || { note "$name: --list failed"; rc=1; return; }
  "$bin/$binary" "$@" --benchmark_out="$out/$name.ours.json" --benchmark_out_format=json > "$out/$name.ours.log" 2>&1
  local orc=$?
  python3 "$src/ci/torch_reference.py" --cases "$out/$name.cases.txt" --json "$out/$name.torch.json" \
    > "$out/$name.torch.log" 2>&1
  local trc=$?
  "$bin/gpucheck" compare "$out/$name.torch.json" "$out/$name.ours.json" --metric "$metric" --threshold 5 \
    --no-thresholds --allow-missing > "$out/$name.compare.txt" 2>&1
  local crc=$?
  note "$name: $(wc -l < "$out/$name.cases.txt") cases, ours exit $orc, torch exit $trc, compare exit $crc" \
       "($(( $(date +%s) - t0 )) s)"
  cat "$out/$name.compare.txt" >> "$summary"
  (( orc == 0 && trc == 0 )) || rc=1
}

note "axes session: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0 2>/dev/null)"
sweep gemm TFLOPS bench_matmul -a variant=cublaslt -a dtype=bf16 -a 'M=2^[9:14]'
sweep attention TFLOPS bench_attention -a backend=naive,flash,cudnn -a head_dim=64,128,256
sweep bmm TFLOPS bench_bmm -a dtype=fp16 -a path=strided,strided_mbk,permute_bmm \
  --benchmark_filter='b1024m64n64k64|b512m128n128k64|b64m512n512k512|b8m4096n4096k64' \
  -a batch=1024,512,64,8 -a M=64,128,512,4096 -a K=64,512   # N follows M
sweep nccl algbw_GBps bench_nccl -b 1M -e 1G -f 2 -a collective=allreduce,allgather,reducescatter -a in_place=false,true \
  --benchmark_filter='allreduce_inplace|allgather/|reducescatter/'
note "done: exit $rc (logs, JSON and comparisons in $out)"
exit "$rc"
