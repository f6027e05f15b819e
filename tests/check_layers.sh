#!/usr/bin/env bash
# The tool's parts include only downward (docs/ARCHITECTURE.md, "The tool's side"):
#   base < results < rules < report < runner < {gate, accept, watch} < cli
# gate, accept and watch are siblings: none includes another. Nothing under compare/ includes a
# CUDA header or the harness's CUDA side (gpucheck/harness/...). Prints every offending include.
# Usage: check_layers.sh SOURCE_DIR
set -uo pipefail
cd "$1/compare" || exit 2
declare -A rank=([base]=0 [results]=1 [rules]=2 [report]=3 [runner]=4 [gate]=5 [accept]=5 [watch]=5 [cli]=6)
bad=0 seen=0
for f in */*.hpp */*.cpp; do
  part=${f%%/*}
  [[ -n ${rank[$part]:-} ]] || { echo "$f: in no known part (add it to check_layers.sh and docs/ARCHITECTURE.md)"; bad=1; continue; }
  while IFS= read -r inc; do
    seen=$((seen + 1))
    case $inc in
      cuda*|cublas*|cudnn*|nccl*|gpucheck/harness/*|gpucheck/kernels/*) echo "$f: includes $inc (no CUDA under compare/)"; bad=1; continue ;;
      gpucheck/core/*) continue ;;
    esac
    to=${inc%%/*}
    [[ $inc == */* && -n ${rank[$to]:-} ]] || continue
    if [[ $to != "$part" ]] && (( rank[$to] >= rank[$part] )); then
      echo "$f: includes $inc (part $to is not below part $part)"; bad=1
    fi
  done < <(sed -n 's/^#include [<"]\([^>"]*\)[>"].*/\1/p' "$f")
done
((seen > 0)) || { echo "no includes read: wrong folder?"; exit 2; }
((bad == 0)) && echo "layers: $seen includes, all downward"
exit $bad
