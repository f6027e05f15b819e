#!/usr/bin/env bash
# A fake Google Benchmark binary for the gate's end-to-end tests: it keeps the runner contract
# (--suite, --device, --benchmark_out=F, --benchmark_out_format=json, --benchmark_repetitions=N,
# --benchmark_filter=REGEX; exit 0 / 1 / 2) and misbehaves on request.
# Usage: fake_bench.sh MODE FAMILY [gbench flags...]; the binary bench_<family> is a 2-line
# wrapper, and its cases are <family>/a/fp32/1MiB and <family>/b/fp32/4MiB.
# MODE: steady, regress (every run 30% slower, SM clock down, sw_power_cap), regress_once (30%
# slower on the first call only; state in $FAKE_STATE), hang, hang_ignoring_term, crash
# (SIGSEGV), exit2, nodevice, truncated (half a JSON file), casefail (one case errored, exit 1),
# exit1_clean (exit 1 with nothing failed), group_child_deaf (leaves a child in its group that
# ignores SIGTERM, then hangs; obeys SIGTERM itself), setsid_child (starts a grandchild in a new
# session, then writes its results), partial_hang (writes FILE.partial-PID, as the real binaries
# do, then hangs), flood (40 MB on stderr, then its results), clash (reports steady's cases).
# levels: the first case lands on one of two levels a process, as launch figures do on VMs: every
# third process (a count in $FAKE_STATE) at FAKE_LOW (default 1.0) times its figure, the others
# 1.25 times that; FAKE_SCALE (default 1.0) multiplies both (a slower launch path).
# FAKE_BASELINE=1: behave (record a baseline).
# FAKE_GPU / FAKE_HOST: the context's gpu_name / host_cpu. FAKE_HOSTNAME and GPUCHECK_GIT_BRANCH,
# when set: its host_name and git_branch.
set -u
mode=$1 family=$2
shift 2
out="" reps=1 filter=""
for a in "$@"; do
  case $a in
    --benchmark_out=*) out=${a#*=} ;;
    --benchmark_repetitions=*) reps=${a#*=} ;;
    --benchmark_filter=*) filter=${a#*=} ;;
    --benchmark_out_format=json | --suite | --device | quick | full | [0-9]*) ;;
    *) echo "fake_bench: unknown flag $a" >&2; exit 2 ;;
  esac
done
[[ -n $out ]] || { echo "fake_bench: needs --benchmark_out" >&2; exit 2; }
baseline=${FAKE_BASELINE:-0}
slow=0
clock=1980 reasons=0 throttled=0
if ((!baseline)); then
  case $mode in
    hang) echo "fake_bench: hanging" >&2; sleep 1000 ;;
    hang_ignoring_term) trap '' TERM; echo "fake_bench: hanging, deaf to SIGTERM" >&2; while :; do sleep 0.1; done ;;
    crash) echo "fake_bench: about to crash" >&2; kill -SEGV $$ ;;
    exit2) echo "gpucheck: bench_exit2: cannot create a cuBLAS handle (fake)" >&2; exit 2 ;;
    nodevice) echo "gpucheck: no CUDA device found (fake: no driver loaded)" >&2; exit 2 ;;
    regress) slow=1; clock=1545; reasons=4; throttled=12 ;;
    group_child_deaf)
      bash -c 'trap "" TERM; while :; do sleep 0.1; done' "fake_group_child_deaf:${FAKE_STATE:-}" &
      trap 'exit 143' TERM
      echo "fake_bench: hanging with a deaf child in my group" >&2
      while :; do sleep 0.1; done ;;
    setsid_child) setsid bash -c 'while :; do sleep 0.1; done' "fake_setsid_grandchild:${FAKE_STATE:-}" < /dev/null > /dev/null 2>&1 & ;;
    setsid_chain | hang_chain)
      # 100 nested sessions, each holding our stderr; the deepest says it is up; then results (or a hang).
      c='n=$1; if [ "$n" -gt 0 ]; then setsid bash -c "$0" "$0" $((n-1)) "$2" & else : > "$2"; fi; while :; do sleep 0.1; done'
      c="$c # fake_setsid_chain:${FAKE_STATE:-}"
      rm -f "${FAKE_STATE:?}/chain_up"
      setsid bash -c "$c" "$c" 100 "$FAKE_STATE/chain_up" &
      while [[ ! -e $FAKE_STATE/chain_up ]]; do sleep 0.05; done
      echo "fake_bench: a chain of 100 sessions is up" >&2
      [[ $mode == hang_chain ]] && sleep 1000 ;;
    partial_hang) echo "{" > "$out.partial-$$"; echo "fake_bench: writing $out.partial-$$" >&2; sleep 1000 ;;
    flood) head -c 40000000 /dev/zero | tr '\0' 'y' >&2; echo "fake_bench: the last line of a flood" >&2 ;;
    regress_once)
      state=${FAKE_STATE:?FAKE_STATE must name a folder}/regress_once.called
      if [[ ! -e $state ]]; then slow=1; : > "$state"; fi ;;
  esac
fi

level=1.0
if [[ $mode == levels ]]; then
  n=$(cat "${FAKE_STATE:?FAKE_STATE must name a folder}/levels.count" 2> /dev/null || echo 0)
  echo $((n + 1)) > "$FAKE_STATE/levels.count"
  level=$(awk -v n="$n" -v low="${FAKE_LOW:-1.0}" -v s="${FAKE_SCALE:-1.0}" 'BEGIN { printf "%.6f", low * s * (n % 3 == 0 ? 1.0 : 1.25) }')
fi
gpu=${FAKE_GPU:-NVIDIA H200}
host=${FAKE_HOST:-Fake CPU (family 6 model 143 stepping 8)}
[[ $mode == clash ]] && family=steady
cases=("$family/a/fp32/1MiB" "$family/b/fp32/4MiB")
base_us=(100 400)
entries=()
matched=0
for i in "${!cases[@]}"; do
  name=${cases[$i]}
  full="$name/manual_time"
  if [[ -n $filter ]] && ! [[ $full =~ $filter ]]; then continue; fi
  matched=$((matched + 1))
  # The first case of a regressing binary slows down; the second never does.
  f=1.0
  if ((slow && i == 0)); then f=1.3; fi
  if ((i == 0)); then f=$(awk -v f="$f" -v l="$level" 'BEGIN { printf "%.6f", f * l }'); fi
  if [[ $mode == casefail && $i == 1 && $baseline == 0 ]]; then
    entries+=("{\"name\": \"$full\", \"run_name\": \"$full\", \"run_type\": \"iteration\", \"repetitions\": $reps, \"repetition_index\": 0, \"threads\": 1, \"iterations\": 0, \"real_time\": 0, \"cpu_time\": 0, \"time_unit\": \"us\", \"error_occurred\": true, \"error_message\": \"verification failed: 3 wrong elements (fake)\"}")
    continue
  fi
  vals=()
  for ((r = 0; r < reps; r++)); do
    # Deterministic jitter of a few tenths of a percent, distinct per repetition.
    v=$(awk -v b="${base_us[$i]}" -v f="$f" -v r="$r" -v p="${FAKE_PID:-$$}" 'BEGIN { printf "%.4f", b * f * (1 + 0.001 * (((r * 7 + p) % 9) - 4) + 0.0001 * r) }')
    vals+=("$v")
    entries+=("{\"name\": \"$full\", \"family_index\": $i, \"per_family_instance_index\": 0, \"run_name\": \"$full\", \"run_type\": \"iteration\", \"repetitions\": $reps, \"repetition_index\": $r, \"threads\": 1, \"iterations\": 1000, \"real_time\": $v, \"cpu_time\": $v, \"time_unit\": \"us\", \"GBps\": $(awk -v v="$v" 'BEGIN { printf "%.3f", 1048.576 / v }'), \"samples\": 200, \"cv_pct\": 0.4, \"batch\": 8, \"throttled_samples\": $((i == 0 ? throttled : 0)), \"sm_clock_MHz\": $((i == 0 ? clock : 1980)), \"clock_event_reasons\": $((i == 0 ? reasons : 0)), \"label\": \"timing=held\"}")
  done
  if ((reps > 1)); then
    med=$(printf '%s\n' "${vals[@]}" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.4f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
    entries+=("{\"name\": \"${full}_median\", \"run_name\": \"$full\", \"run_type\": \"aggregate\", \"repetitions\": $reps, \"threads\": 1, \"aggregate_name\": \"median\", \"aggregate_unit\": \"time\", \"iterations\": $reps, \"real_time\": $med, \"cpu_time\": $med, \"time_unit\": \"us\"}")
  fi
done
if ((matched == 0)); then
  # What Google Benchmark does: the output file exists and is empty, exit 0.
  : > "$out"
  echo "Failed to match any benchmarks against regex: $filter" >&2
  exit 0
fi
{
  printf '{\n  "context": {"date": "2026-12-01T10:00:00+00:00", "executable": "%s", "num_cpus": 16, "mhz_per_cpu": 2100, "cpu_scaling_enabled": false, "library_build_type": "release", "gpu_name": "%s", "gpu_uuid": "GPU-fake-0000", "host_cpu": "%s", "gpucheck_suite": "quick"%s},\n  "benchmarks": [\n' "$0" "$gpu" "$host" \
    "${FAKE_HOSTNAME:+, \"host_name\": \"$FAKE_HOSTNAME\"}${GPUCHECK_GIT_BRANCH:+, \"git_branch\": \"$GPUCHECK_GIT_BRANCH\"}"
  for ((k = 0; k < ${#entries[@]}; k++)); do
    printf '    %s%s\n' "${entries[$k]}" "$([[ $k -lt $((${#entries[@]} - 1)) ]] && echo ,)"
  done
  printf '  ]\n}\n'
} > "$out"
if [[ $mode == truncated && $baseline == 0 ]]; then
  size=$(wc -c < "$out")
  truncate -s $((size / 2)) "$out"
fi
[[ $mode == casefail && $baseline == 0 ]] && exit 1
[[ $mode == exit1_clean && $baseline == 0 ]] && exit 1
exit 0
