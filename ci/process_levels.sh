#!/usr/bin/env bash
# What sets the level a fresh process lands on (issue 39): a host-timed launch figure lands on one
# of two levels a process, 20-25% apart (docs/GATE.md, "Host-bound cases"), and keeps it for the
# process's life. This runs one case in R fresh processes under each placement below, the
# placements interleaved (process i of each before process i+1 of any, so that drift over the
# run falls on all alike), and tabulates the levels per placement: a placement that puts every
# process on one level names the cause.
#   pinned     taskset to one CPU (LEVELS_CPU, default the last one), as the gate's runner pins
#   unpinned   no taskset
#   other_cpu  taskset to LEVELS_OTHER_CPU (default 0): another core, maybe another NUMA node
#   no_aslr    pinned, address-space randomisation off for the process (setarch -R): if the
#              level follows where the process's mappings land, every process lands on one
#   no_thp     pinned, transparent huge pages off for the process (prctl PR_SET_THP_DISABLE):
#              if the level is whether its memory got huge pages (a pointer chase moved with
#              the level too), every process lands on the slow one
#   hugetlb    pinned, glibc's malloc on huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1)
#   env_pad    pinned, the environment 4 KiB longer (moves the stack's start)
# Nothing is changed outside the processes it starts (no system setting, nothing on the card).
# Usage: ci/process_levels.sh BINARY CASE_REGEX OUT [PLACEMENT...]   (default: all)
#   R (default 12) processes a placement; COUNTER (default us_per_launch, else real_time) the
#   figure; LEVELS_DEADLINE_S (default 540) stops starting processes after that many seconds;
#   LEVELS_CPU and LEVELS_OTHER_CPU must be CPUs of this machine (0 to nproc - 1).
#   CASE_REGEX is Google Benchmark's filter: it matches the full name, which goes on past the case's
#   (launch/host_launch/empty/1/iterations:1/manual_time), so end it without $. A process that
#   exits 2 (refused: a filter matching nothing) stops the run, exit 2, with its line.
# Each process's AnonHugePages is read while it runs (/proc/PID/smaps_rollup, every 0.25 s).
# First, where g++ is, ci/page_walk_probe.cpp once: whether a pointer chase is faster in some of
# a process's pages than in others, with 4 KiB pages and with huge pages (levels.log).
# Writes OUT/levels.csv (placement, process, order started, value, cpu, AnonHugePages kB, the
# run's host reference host_ref_us where it has one, pid) and OUT/levels.md
# (printed): per placement the processes on each level, min, median, max, the huge pages of
# each level's processes; and every process's
# level in the order they started (a level that follows a count of processes, as a driver
# resource handed out in turn would, shows there as a period). Exit 2 on bad usage.
set -uo pipefail
if (($# < 3)); then
  echo "usage: $0 BINARY CASE_REGEX OUT [PLACEMENT...]" >&2
  exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
bin=$1 filter=$2 out=$3
shift 3
[[ -x $bin ]] || { echo "$0: $bin is not an executable" >&2; exit 2; }
places=("$@")
((${#places[@]})) || places=(pinned unpinned other_cpu no_aslr no_thp hugetlb env_pad)
for p in "${places[@]}"; do
  case $p in pinned | unpinned | other_cpu | no_aslr | no_thp | hugetlb | env_pad) ;;
    *) echo "$0: unknown placement $p" >&2; exit 2 ;;
  esac
done
runs=${R:-12} deadline=${LEVELS_DEADLINE_S:-540}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "$0: R must be a whole number above 0" >&2; exit 2; }
[[ $deadline =~ ^(0|[1-9][0-9]{0,8})$ ]] || { echo "$0: LEVELS_DEADLINE_S=$deadline: not a whole number of seconds" >&2; exit 2; }
cpus=$(nproc --all)
cpu=${LEVELS_CPU:-$((cpus - 1))} other=${LEVELS_OTHER_CPU:-0}
for v in "LEVELS_CPU=$cpu" "LEVELS_OTHER_CPU=$other"; do  # taskset would refuse every process
  [[ ${v#*=} =~ ^(0|[1-9][0-9]{0,5})$ ]] && ((${v#*=} < cpus)) ||
    { echo "$0: $v: not a CPU of this machine (0 to $((cpus - 1)))" >&2; exit 2; }
done
dir=$(mkdir -p "$out/runs" 2> /dev/null && cd "$out" && pwd) || { echo "$0: $out: cannot make OUT/runs there" >&2; exit 2; }
out=$dir
export NCCL_NVLS_ENABLE=0

# launch PLACEMENT CMD...: CMD under the placement, in place of the (background) subshell that
# calls it: every wrapper execs, so the subshell's pid becomes the benchmark's.
launch() {
  local p=$1
  shift
  case $p in
    pinned) exec taskset -c "$cpu" "$@" ;;
    unpinned) exec "$@" ;;
    other_cpu) exec taskset -c "$other" "$@" ;;
    no_aslr) exec taskset -c "$cpu" setarch "$(uname -m)" -R "$@" ;;
    no_thp) exec taskset -c "$cpu" python3 -c 'import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(41, 1, 0, 0, 0) != 0: sys.exit("prctl(PR_SET_THP_DISABLE) failed")
os.execvp(sys.argv[1], sys.argv[1:])' "$@" ;;
    hugetlb) GLIBC_TUNABLES=glibc.malloc.hugetlb=1 exec taskset -c "$cpu" "$@" ;;
    env_pad) LEVELS_PAD=$(head -c 4096 /dev/zero | tr '\0' x) exec taskset -c "$cpu" "$@" ;;
  esac
}

start=$SECONDS seq=0
: > "$out/runs/order.txt"
: > "$out/runs/thp.txt"
{
  echo "transparent_hugepage: enabled $(cat /sys/kernel/mm/transparent_hugepage/enabled 2> /dev/null)," \
    "defrag $(cat /sys/kernel/mm/transparent_hugepage/defrag 2> /dev/null)"
  echo "pinned CPU $cpu, other CPU $other, $(nproc --all) CPUs; $(grep -m1 'model name' /proc/cpuinfo)"
} > "$out/levels.log"
# Whether this machine's memory is faster in some pages than in others (ci/page_walk_probe.cpp).
if command -v g++ > /dev/null && g++ -O2 -std=c++17 -o "$out/page_walk_probe" "$src/ci/page_walk_probe.cpp" 2>> "$out/levels.log"; then
  taskset -c "$cpu" "$out/page_walk_probe" >> "$out/levels.log" 2>&1 || echo "page walk probe: exit $?" >> "$out/levels.log"
fi
for ((i = 1; i <= runs; i++)); do
  for p in "${places[@]}"; do
    if ((SECONDS - start > deadline)); then
      echo "stopped at process $i: past ${deadline} s" | tee -a "$out/levels.log"
      break 2
    fi
    seq=$((seq + 1))
    echo "$p.$i $seq" >> "$out/runs/order.txt"
    launch "$p" "$bin" --benchmark_filter="$filter" --benchmark_out="$out/runs/$p.$i.json" \
      --benchmark_out_format=json > "$out/runs/$p.$i.log" 2>&1 &
    pid=$!
    # While it runs (each wrapper execs, so the pid is the benchmark's): its largest
    # AnonHugePages, the transparent huge pages its anonymous memory got.
    thp=-1
    while kill -0 "$pid" 2> /dev/null; do
      kb=$(awk '/^AnonHugePages:/ {print $2}' "/proc/$pid/smaps_rollup" 2> /dev/null)
      [[ $kb =~ ^[0-9]+$ ]] && ((kb > thp)) && thp=$kb
      sleep 0.25
    done
    wait "$pid"
    rc=$?
    if ((rc == 2)); then  # refused (a filter that matches nothing, a bad flag): so would every other
      echo "$0: $p process $i refused, exit 2: $(tail -1 "$out/runs/$p.$i.log")" | tee -a "$out/levels.log" >&2
      exit 2
    fi
    ((rc == 0)) || echo "$p process $i: exit $rc (runs/$p.$i.log)" | tee -a "$out/levels.log"
    ((thp < 0)) || echo "$p.$i $thp $pid" >> "$out/runs/thp.txt"
  done
done
python3 "$src/ci/process_levels.py" "$out" "${COUNTER:-us_per_launch}" "${places[@]}"
