#!/usr/bin/env bash
# The history under concurrent writers and kill -9 (docs/HISTORY.md, "Concurrency"), with the real
# gpucheck binary: `concurrent`: 4 `history add` processes at once on one new file, 5 rounds, every
# run lands; `kill9`: an add killed with SIGKILL at random moments, 20 times, loses no run stored
# before it and leaves a file every command reads; after each, FILE alone (no -wal) holds every run.
# Usage: history_stress.sh GPUCHECK WORK concurrent|kill9
set -euo pipefail
G=$1 W=$2 mode=$3
rm -rf "$W" && mkdir -p "$W"

# results FILE COMMIT CASES REPS: a Google Benchmark file of CASES cases, REPS repetitions each.
results() {
  local f=$1 commit=$2 cases=$3 reps=$4 c r sep=""
  {
    printf '{"context": {"date": "2026-12-01T10:00:00+00:00", "gpu_name": "NVIDIA H200", "host_name": "n1",'
    printf ' "host_cpu": "Xeon", "gpucheck_commit": "%s", "git_branch": "main"},\n"benchmarks": [\n' "$commit"
    for ((c = 0; c < cases; c++)); do
      for ((r = 0; r < reps; r++)); do
        printf '%s{"name": "fam/case%d/manual_time", "run_name": "fam/case%d/manual_time", "run_type": "iteration",' "$sep" $c $c
        printf ' "repetitions": %d, "repetition_index": %d, "threads": 1, "iterations": 1,' "$reps" $r
        printf ' "real_time": %d.%d, "cpu_time": 1, "time_unit": "us"}\n' $((1000 + c)) $((r + ${#commit}))
        sep=","
      done
    done
    printf ']}\n'
  } > "$f"
}

runs_in() { "$G" history list --db "$1" | tail -n 1 | cut -d' ' -f1; }

check_file_alone() {  # the file without its -wal holds every run
  cp "$1" "$W/alone.db"
  local n; n=$(runs_in "$W/alone.db")
  [[ $n == "$2" ]] || { echo "FAIL: $1 copied alone holds $n runs, want $2"; exit 1; }
  rm -f "$W/alone.db"*
}

if [[ $mode == concurrent ]]; then
  for i in 1 2 3 4 5 6 7 8; do results "$W/r$i.json" "commit$i" 60 5; done
  for round in 1 2 3 4 5; do
    db="$W/round$round.db"
    pids=()
    for p in 1 2 3 4; do
      "$G" history add --db "$db" "$W/r$p.json" "$W/r$((p + 4)).json" > "$W/add$p.log" 2>&1 & pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || { echo "FAIL: an add exited $?"; cat "$W"/add*.log; exit 1; }; done
    n=$(runs_in "$db")
    [[ $n == 8 ]] || { echo "FAIL: round $round: $n runs stored, want 8"; cat "$W"/add*.log; exit 1; }
    check_file_alone "$db" 8
  done
  echo "concurrent: 5 rounds of 4 adds at once, every run stored"
  exit 0
fi

[[ $mode == kill9 ]] || { echo "usage: history_stress.sh GPUCHECK WORK concurrent|kill9"; exit 2; }
db="$W/h.db"
results "$W/small.json" base 10 3
"$G" history add --db "$db" "$W/small.json" > /dev/null
for ((i = 0; i < 20; i++)); do
  results "$W/big.json" "big$i" 1500 5
  before=$(runs_in "$db")
  "$G" history add --db "$db" "$W/big.json" > /dev/null 2>&1 & pid=$!
  sleep "0.$((RANDOM % 30))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  after=$(runs_in "$db") || { echo "FAIL: the history does not read after kill -9 number $i"; exit 1; }
  ((after == before || after == before + 1)) || { echo "FAIL: $before runs before the kill, $after after"; exit 1; }
  # a run that is there is whole: every one of its 1500 cases
  if ((after > before)); then
    "$G" history list --db "$db" | grep -q " big$i .* 1500 cases " || { echo "FAIL: run big$i stored in part"; exit 1; }
  fi
  check_file_alone "$db" "$after"
done
echo "kill9: 20 adds killed at random moments, nothing stored before was lost, no run stored in part"
