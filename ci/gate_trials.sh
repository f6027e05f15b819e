#!/usr/bin/env bash
# Gate trials: before a limit of baselines/thresholds.json is tightened, or a case leaves
# report_only, gate the unchanged tree K times with the limit proposed, on each machine of the
# trial, and run the drills that must still fail against the same store. Then one table,
# OUT/trials.md: each case's change in each gate (worse positive), the largest both ways and the
# gates it failed: the figures an entry's "why" quotes (docs/GATE.md, "Changing a limit").
#   gate[:K]      K gates (default 1) of the unchanged tree, OUT/gate-1, gate-2, ... (numbered on
#                 from those already in OUT), each recorded in the results history as a run of
#                 main; cases measured in fresh processes are gated only with TRIAL_BASE_BIN
#   drill:NAME    one drill of ci/gate_drills.sh (launch_1.15x, tf32_8pct, copy_6pct, ...)
#                 against the same store and history, recorded as a run of branch drill/NAME
#   table         OUT/trials.md again (also written after each gate)
# Usage: ci/gate_trials.sh BUILD_DIR OUT JOB...
#   TRIAL_ENTRIES  the limits to try, ';'-separated GLOB=host_bound|overrides:PCT[:PROCESSES],
#                  e.g. 'launch/eager/*=host_bound:10:10' (each replaces its glob's entry in
#                  report_only, host_bound or overrides); OUT/thresholds.json is the result
#   TRIAL_STORE    the baseline store (default the repository's baselines/)
#   TRIAL_DEADLINE_S  seconds from the start after which no job starts and a running one is
#                  stopped (default 560: inside the device tool's 600 s a call)
#   TRIAL_GATE_S   a gate's estimate (default 90 s: the quick suite with its fresh processes)
#   TRIAL_GATE_ARGS more `gpucheck gate` flags for every gate and drill, split on spaces, e.g.
#                  '--filter ^(launch|pcie)/': the fresh-process cases' gates alone (the cases
#                  the filter leaves out are out of scope, not missing; the time saved is not
#                  measured yet)
#   TRIAL_BASE_BIN the base build's binaries (`gpucheck gate --base-bin-dir`): every gate and
#                  drill judges its fresh-process cases against that build's processes, each run
#                  beside one of its own (the median pair); BUILD_DIR/bin for an unchanged tree
#                  against itself
# OUT keeps history.db and thresholds.json between calls: a later call on the same machine adds
# its gates after the earlier ones. Exit 0 when every job ran, 1 when one could not (no time, a
# drill that did not build), 2 on bad usage, a bad entry or a table with no gate. A gate that fails is a figure of the
# trial, not an error of this script.
set -uo pipefail
if (($# < 3)); then
  echo "usage: $0 BUILD_DIR OUT JOB...   (JOB: gate[:K], drill:NAME, table)" >&2
  exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
for job in "${@:3}"; do  # every job checked before any runs
  [[ $job =~ ^(gate(:[1-9][0-9]*)?|drill:[A-Za-z0-9_.]+|table)$ ]] ||
    { echo "$0: unknown job $job (gate[:K], drill:NAME, table)" >&2; exit 2; }
done
build=$(cd "$1" 2> /dev/null && pwd) || { echo "$0: no build folder $1" >&2; exit 2; }
gpucheck=$build/bin/gpucheck
[[ -x $gpucheck ]] || { echo "$0: $gpucheck is missing (build the tree first)" >&2; exit 2; }
start=$SECONDS deadline=${TRIAL_DEADLINE_S:-560} gate_s=${TRIAL_GATE_S:-90}
for v in "TRIAL_DEADLINE_S=$deadline" "TRIAL_GATE_S=$gate_s"; do  # before OUT is made
  [[ ${v#*=} =~ ^(0|[1-9][0-9]{0,8})$ ]] || { echo "$0: $v: not a whole number of seconds" >&2; exit 2; }
done
store=$(cd "${TRIAL_STORE:-$src/baselines}" 2> /dev/null && pwd) || { echo "$0: no store ${TRIAL_STORE:-}" >&2; exit 2; }
out=$(mkdir -p "$2" 2> /dev/null && cd "$2" && pwd) || { echo "$0: $2: cannot make OUT there" >&2; exit 2; }
shift 2
base_args=() drill_base=
if [[ -n ${TRIAL_BASE_BIN:-} ]]; then
  base_bin=$(cd "$TRIAL_BASE_BIN" 2> /dev/null && pwd) || { echo "$0: no folder $TRIAL_BASE_BIN (TRIAL_BASE_BIN)" >&2; exit 2; }
  base_args=(--base-bin-dir "$base_bin") drill_base=" --base-bin-dir $base_bin"
fi
summary=$out/summary.log
note() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$summary"; }
export NCCL_NVLS_ENABLE=0

thresholds=$out/thresholds.json
if [[ ! -f $thresholds ]]; then
  IFS=';' read -r -a entries <<< "${TRIAL_ENTRIES:-}"
  python3 "$src/ci/gate_trials.py" propose "$store/thresholds.json" "$thresholds" ${entries[@]+"${entries[@]}"} || exit 2
  note "trial limits: ${TRIAL_ENTRIES:-none, the store thresholds.json as it is}"
fi

left() { echo $((deadline - (SECONDS - start))); }
# fits SECONDS: is there time for a job of that estimate?
fits() {
  (($(left) >= $1)) && return 0
  note "skipped: needs ~$1 s, $(left) s left"
  return 1
}

# gate_once: the next gate-K; its exit status in gate-K.rc, its output in gate-K.txt.
gate_once() {
  local k=1
  while [[ -e $out/gate-$k ]]; do k=$((k + 1)); done
  local t0=$SECONDS
  # shellcheck disable=SC2086  # TRIAL_GATE_ARGS: flags split on spaces
  GPUCHECK_GIT_BRANCH=main timeout "$(left)" "$gpucheck" gate --bin-dir "$build/bin" --baseline "$store" \
    --thresholds "$thresholds" --history "$out/history.db" --out "$out/gate-$k" --color never \
    ${base_args[@]+"${base_args[@]}"} ${TRIAL_GATE_ARGS:-} > "$out/gate-$k.txt" 2>&1
  local rc=$?
  echo "$rc" > "$out/gate-$k.rc"
  if ((rc == 124)); then
    note "gate-$k: stopped at the trial's deadline after $((SECONDS - t0)) s (exit 124), no verdict"
  else
    note "gate-$k: exit $rc in $((SECONDS - t0)) s; $(grep -E '^result:' "$out/gate-$k.txt" | head -1)"
  fi
  grep -E '^fresh-process cases:' "$out/gate-$k.txt" | sed 's/^/    /' | tee -a "$summary"
  grep -E ' (REGRESSION|MISSING|ERRORED) ' "$out/gate-$k.txt" | sed 's/^/    /' | tee -a "$summary"
}

rc=0
for job in "$@"; do
  case $job in
    gate | gate:*)
      k=1
      [[ $job == gate:* ]] && k=${job#gate:}
      for ((i = 0; i < k; i++)); do
        fits "$gate_s" || { rc=1; break; }
        gate_once
      done
      python3 "$src/ci/gate_trials.py" table "$out" > /dev/null || rc=1 ;;
    drill:*)
      name=${job#drill:}
      fits $((gate_s * 2)) || { rc=1; continue; }
      GPUCHECK_GIT_BRANCH=drill/$name DRILL_GATE_ARGS="--thresholds $thresholds --history $out/history.db$drill_base ${TRIAL_GATE_ARGS:-}" \
        timeout "$(left)" bash "$src/ci/gate_drills.sh" "$build" "$store" "$out/drills" "$name" > "$out/drill-$name.log" 2>&1 ||
        rc=1
      # The drill's gate is named NAME (unchanged: unchanged-1).
      line=$(grep -E "^drill $name(-[0-9]+)?: exit" "$out/drills/drills.log" 2> /dev/null | tail -1)
      if [[ -n $line ]]; then note "$line"; else note "drill $name: did not run (drill-$name.log)"; rc=1; fi ;;
    table) python3 "$src/ci/gate_trials.py" table "$out" || exit $? ;;
  esac
done
exit $rc
