#!/usr/bin/env bash
# attention_energy: bad usage first (exit 2 and one line naming the option, with or without a
# device), then a short run on a small shape: exit 0, a burst and a steady figure for both
# kernels, their ratio. Exit 77 (CTest: Skipped) without a CUDA device, unless
# GPUCHECK_REQUIRE_GPU=1. Usage: run_energy_smoke.sh BINARY
set -uo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad() {  # expected substring, then the arguments
  local want=$1
  shift
  "$bin" "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if ((rc != 2)) || [[ $(wc -l < "$tmp/err") -ne 1 ]] || ! grep -q -- "$want" "$tmp/err"; then
    echo "FAIL: attention_energy $* exited $rc, stderr: $(cat "$tmp/err")"
    exit 1
  fi
}
bad "--shape 'b1h32'" --shape b1h32
bad "--shape 'b1h6kv4s128d64'" --shape b1h6kv4s128d64
bad "--dtype 'fp8'" --dtype fp8
bad "--mask 'diag'" --mask diag
bad "--seconds" --seconds nan
bad "--seconds" --seconds 0.1
bad "--idle" --idle -1
bad "--device 'x'" --device x
bad "unknown option" --secnds 3
bad "unexpected argument" extra
"$bin" --shape b2h8s1024d64 --dtype fp16 --seconds 0.3 --idle 0 > "$tmp/out" 2> "$tmp/err"
rc=$?
cat "$tmp/out"
if ((rc == 2)) && grep -q "no CUDA device found" "$tmp/err"; then
  if [[ ${GPUCHECK_REQUIRE_GPU:-0} == 1 ]]; then
    echo "FAIL: GPUCHECK_REQUIRE_GPU=1 but $(cat "$tmp/err")"
    exit 1
  fi
  echo "SKIPPED: $(cat "$tmp/err")"
  exit 77
fi
if ((rc != 0)); then
  echo "FAIL: attention_energy exited $rc: $(cat "$tmp/err")"
  exit 1
fi
for mask in "/causal " " "; do
  for who in ours cudnn; do
    n=$(grep -cE "^fp16/b2h8s1024d64${mask% } +$who +burst +[0-9.]+ TFLOP/s .* steady +[0-9.]+ TFLOP/s" "$tmp/out")
    if ((n != 2)); then
      echo "FAIL: $n runs of $who${mask% } with a burst and a steady figure (want 2)"
      exit 1
    fi
  done
done
if [[ $(grep -cE "ours / cudnn: burst [0-9.]+, steady [0-9.]+" "$tmp/out") -ne 2 ]]; then
  echo "FAIL: no ratio line for each mask"
  exit 1
fi
echo "ok"
