#!/usr/bin/env bash
# The include graph runs downward only, and never into another folder's internals
# (docs/ARCHITECTURE.md, "Layers"):
#   core (pure C++) < kernels < benchmarks/harness < benchmarks (the families)
#   core < compare: base < results < rules < report < runner < {gate, accept, watch} < fleet (above accept) < cli < bench
#   (history sits beside runner: above report, below gate and cli)
# A folder's public headers are core/include, kernels/include, benchmarks/harness/include; a
# quoted include that resolves to another folder's src/ is an include into its internals.
# Nothing under compare/ or core/ includes a CUDA header. Prints every offending include and
# a summary line. Usage: check_layers.sh SOURCE_DIR
set -uo pipefail
cd "$1" || exit 2
declare -A part_rank=([base]=0 [results]=1 [rules]=2 [report]=3 [runner]=4 [history]=4 [gate]=5 [accept]=5 [watch]=5 [fleet]=6 [cli]=7 [bench]=8)
# layer of a path: core 0, kernels 1, harness 2, benchmarks 3; compare parts sit beside the
# CUDA side at 10+ (they may include core only).
layer_of() {  # sets `layer`
  case $1 in
    core/*) layer=0 ;;
    kernels/*) layer=1 ;;
    benchmarks/harness/*) layer=2 ;;
    benchmarks/*) layer=3 ;;
    compare/*) layer=10 ;;
    *) layer=-1 ;;
  esac
}
# where an include resolves: the includer's own folder first, then the public include folders
resolve() {  # resolve INCLUDER INCLUDE
  local c
  for c in "${1%/*}/$2" "core/include/$2" "kernels/include/$2" "benchmarks/harness/include/$2" "compare/$2" "benchmarks/$2"; do
    [[ -f $c ]] || continue
    [[ $c == *../* ]] && c=$(realpath -m --relative-to=. "$c")
    resolved=$c
    return
  done
  resolved=""
}
bad=0 seen=0
while IFS= read -r f; do
  layer_of "$f"; from=$layer
  while IFS= read -r inc; do
    seen=$((seen + 1))
    case $inc in
      cuda*|cublas*|cudnn*|nccl*|mpi.h)
        if ((from == 0 || from == 10)); then echo "$f: includes <$inc> (no CUDA in core/ or compare/)"; bad=1; fi
        continue ;;
    esac
    resolve "$f" "$inc"
    to_path=$resolved
    [[ -n $to_path ]] || continue  # a system or third-party header
    layer_of "$to_path"; to=$layer
    if ((from == 10)); then
      if ((to != 0 && to != 10)); then echo "$f: includes $inc ($to_path: compare/ uses only core/)"; bad=1; continue; fi
      if ((to == 10)); then
        p=${f#compare/}; p=${p%%/*}; q=${to_path#compare/}; q=${q%%/*}
        [[ -n ${part_rank[$p]:-} ]] || { echo "$f: in no known part of compare/ (add it here and to docs/ARCHITECTURE.md)"; bad=1; continue; }
        if [[ $p != "$q" ]] && (( part_rank[$q] >= part_rank[$p] )); then
          echo "$f: includes $inc (part $q is not below part $p)"; bad=1
        fi
      fi
      continue
    fi
    if ((to > from)); then echo "$f: includes $inc ($to_path runs up a layer)"; bad=1; continue; fi
    # internals: another top folder's src/ (kernels/src, core/src) reached from outside it
    case $to_path in
      kernels/src/*) [[ $f == kernels/* ]] || { echo "$f: includes $inc (into kernels/src)"; bad=1; } ;;
      core/src/*) [[ $f == core/* ]] || { echo "$f: includes $inc (into core/src)"; bad=1; } ;;
    esac
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p' "$f")
done < <(find core kernels benchmarks compare -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.h' \) | sort)
((seen > 0)) || { echo "no includes read: wrong folder?"; exit 2; }
((bad == 0)) && echo "layers: $seen includes, all downward, none into another folder's src/"
exit $bad
