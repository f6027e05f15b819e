#!/usr/bin/env bash
# End-to-end tests of `gpucheck gate` / `gpucheck run` / `gpucheck baseline update` with fake
# bench_* binaries (fake_bench.sh): confirmation, hang, crash, exit 2, truncated JSON, no GPU,
# no baseline, another GPU model, filters, the binary list, host-bound and report-only lists,
# concurrent baseline updates. One case per CTest entry; each takes a few seconds at most.
# --pin-cpu off: on a GPU machine auto would pin every fake binary (and the chains of 100 shells)
# to one core, shared by the tests that ctest runs at once; pinning is tested in unit_compare.
# Usage: gate_e2e.sh GPUCHECK WORKDIR CASE
set -uo pipefail
gpucheck=$1 work=$2/$3 case=$3
fake=$(cd "$(dirname "$0")" && pwd)/fake_bench.sh
rm -rf "$work" && mkdir -p "$work/bin" "$work/state"
cd "$work" || exit 1
export FAKE_STATE=$work/state
unset GITHUB_STEP_SUMMARY CUDA_VISIBLE_DEVICES FAKE_GPU FAKE_HOST FAKE_BASELINE
failures=0

bench() {  # bench NAME MODE: a fake binary in bin/, its cases named after NAME less bench_
  printf '#!/usr/bin/env bash\nexec bash "%s" %s %s "$@"\n' "$fake" "$2" "${1#bench_}" > "bin/$1"
  chmod +x "bin/$1"
}
record() {  # record [baseline update flags...]: a 5-repetition baseline of bin/ under baselines/
  FAKE_BASELINE=1 "$gpucheck" run --bin-dir bin --out base --repetitions 5 --timeout 20 > record.log 2>&1 ||
    { echo "recording the baseline failed:"; cat record.log; exit 1; }
  "$gpucheck" baseline update --suite quick --root baselines "$@" base/results.json >> record.log 2>&1 ||
    { echo "storing the baseline failed:"; cat record.log; exit 1; }
}
# gate [flags...]: runs the gate against $BASE (default baselines), keeps rc, stdout, stderr and
# its seconds (checked only against a fake that hangs for 1000 s: a bound no busy machine nears;
# the "timed out after N s" line is what says the timeout worked).
gate() {
  local t0=$SECONDS
  "$gpucheck" gate --bin-dir bin --baseline "${BASE:-baselines}" --out out --pin-cpu off "$@" > out.txt 2> err.txt
  rc=$?
  elapsed=$((SECONDS - t0))
}
check() {  # check DESCRIPTION COMMAND...
  if ! "${@:2}"; then
    echo "FAIL: $1"
    failures=$((failures + 1))
  fi
}
has() { grep -qF -- "$1" "${2:-out.txt}"; }
lacks() { ! grep -qF -- "$1" "${2:-out.txt}"; }
one_line() { [[ $(wc -l < "${1:-err.txt}") -eq 1 ]]; }
none_left() {  # none_left PATTERN: no process of ours whose command line holds it
  command -v pgrep > /dev/null || return 0
  sleep 0.2
  [[ -z $(pgrep -f -- "$1") ]]
}

case $case in
  pass_unchanged)
    bench bench_steady steady
    bench bench_memory steady
    record
    : > summary.md
    GITHUB_STEP_SUMMARY=$work/summary.md gate
    check "exit 0" test "$rc" -eq 0
    check "progress line" grep -qE '^\[1/2\] bench_memory \.\.\. [0-9.]+ s, 2 cases ok$' out.txt
    check "result PASS" has "result: PASS"
    check "the CPU said once" test "$(grep -c '^CPU: \(pinned to core [0-9]*\|not pinned\) (' out.txt)" -eq 1
    check "nothing re-measured" lacks "confirming"
    for f in results.json compare.md compare.json junit.xml logs/bench_steady.log runs/bench_steady.json; do
      check "out/$f written" test -f "out/$f"
    done
    check "no temporaries left" test -z "$(find out -name '.*tmp-*')"
    check "results.json is Google Benchmark JSON" grep -q '"benchmarks"' out/results.json
    check "step summary appended" grep -q "gpucheck compare: :white_check_mark: PASS" summary.md
    # A step summary that cannot be written is a warning; the verdict keeps its exit status.
    mkdir summary_dir
    GITHUB_STEP_SUMMARY=$work/summary_dir gate
    check "unwritable summary: still exit 0" test "$rc" -eq 0
    check "unwritable summary: a warning" has "gpucheck: warning: GITHUB_STEP_SUMMARY not written" err.txt
    ;;
  not_confirmed)
    bench bench_steady steady
    bench bench_regress_once regress_once
    record
    gate
    check "exit 0 (the slow-down did not hold)" test "$rc" -eq 0
    check "re-measured" has "[confirm 1/1] bench_regress_once (confirmation) ... "
    check "says not confirmed" grep -qE 'not confirmed +regress_once/a/fp32/1MiB +first pass \+[0-9.]+% \(n=5/1\), re-run [-+][0-9.]+% \(n=5/5, p=' out.txt
    check "results.json holds the re-run's 5 repetitions" test "$(grep -c '"name":"regress_once/a/fp32/1MiB/manual_time"' out/results.json)" -eq 5
    check "compare.md lists it" has "not confirmed" out/compare.md
    ;;
  confirmed)
    bench bench_steady steady
    bench bench_regress regress
    record
    gate
    check "exit 1" test "$rc" -eq 1
    check "names the case" grep -qE '^regress/a/fp32/1MiB .* REGRESSION ' out.txt
    check "confirmed with n and p" grep -qE 'confirmed +regress/a/fp32/1MiB +first pass \+(29|30)\.[0-9]+% \(n=5/1\), re-run \+(29|30)\.[0-9]+% \(n=5/5, p=0\.00794\)' out.txt
    check "says why: SM clock" has "SM clock 1980 -> 1545 MHz"
    check "says why: clock events" has "clock events sw_power_cap (baseline: none)"
    check "says why: throttled samples" has "throttled samples 0 -> 12 of 200"
    check "the other case passes" grep -qE '^regress/b/fp32/4MiB .* ok' out.txt
    check "result FAIL" has "result: FAIL (regression)"
    check "junit failure" grep -q '<failure message="REGRESSION' out/junit.xml
    check "json: result" has '"result": "fail"' out/compare.json
    check "json: confirmation" has '"status": "confirmed"' out/compare.json
    ;;
  hang)
    bench bench_hang hang
    bench bench_steady steady
    record
    gate --timeout 2
    check "exit 1" test "$rc" -eq 1
    check "ended long before the hang's 1000 s (${elapsed} s)" test "$elapsed" -le 25
    check "names it" has "[1/2] bench_hang ... "
    check "timed out" has "ERRORED: timed out after 2.0 s"
    check "the next binary still ran" grep -qE '^\[2/2\] bench_steady \.\.\. .* 2 cases ok$' out.txt
    check "its cases are ERRORED, not missing" grep -qE '^hang/a/fp32/1MiB .* ERRORED .*bench_hang ERRORED: timed out' out.txt
    check "no process left" none_left "$fake hang hang "
    ;;
  hang_ignoring_term)
    bench bench_deaf hang_ignoring_term
    record
    gate --timeout 1
    check "exit 1" test "$rc" -eq 1
    check "ended long before the hang's 1000 s (${elapsed} s)" test "$elapsed" -le 25
    check "killed" has "timed out after 1.0 s (ignored SIGTERM, killed)"
    check "no process left" none_left "$fake hang_ignoring_term deaf "
    ;;
  group_child_deaf)
    # A child in the binary's group ignores SIGTERM; the binary obeys it within the grace.
    bench bench_deafkid group_child_deaf
    record
    gate --timeout 1
    check "exit 1" test "$rc" -eq 1
    check "timed out" has "timed out after 1.0 s"
    check "no process left in the group" none_left "fake_group_child_deaf:$FAKE_STATE"
    ;;
  setsid_child)
    # A grandchild that left the group (setsid) does not outlive the gate.
    bench bench_escape setsid_child
    record
    gate
    check "exit 0" test "$rc" -eq 0
    check "no grandchild left" none_left "fake_setsid_grandchild:$FAKE_STATE"
    ;;
  setsid_chain)
    # 100 nested sessions holding stderr: the gate ends on time, and none outlives it.
    bench bench_chain setsid_chain
    record
    gate --timeout 60
    check "exit 0" test "$rc" -eq 0
    check "no session of the chain left" none_left "fake_setsid_chain:$FAKE_STATE"
    ;;
  hang_chain_timeout)
    # A hanging binary whose chain holds stderr: the timeout counts from its start.
    bench bench_chain hang_chain
    record
    gate --timeout 2
    check "exit 2 (errored)" test "$rc" -ne 0
    check "timed out" has "timed out after 2.0 s"
    check "ended long before the hang's 1000 s (${elapsed} s)" test "$elapsed" -le 25
    check "no session of the chain left" none_left "fake_setsid_chain:$FAKE_STATE"
    ;;
  killed_gate_chain)
    # kill -9 of gpucheck ends the binary's whole tree (its PID namespace), not only the binary.
    bench bench_chain hang_chain
    record
    "$gpucheck" gate --bin-dir bin --baseline baselines --out out --pin-cpu off > out.txt 2> err.txt &
    gpid=$!
    for _ in $(seq 1200); do [[ -e $FAKE_STATE/chain_up ]] && break; sleep 0.1; done
    check "the chain was up" test -e "$FAKE_STATE/chain_up"
    kill -9 "$gpid"
    wait "$gpid" 2> /dev/null
    # Without a PID namespace (unprivileged), the fallbacks cannot outlive a SIGKILLed gpucheck.
    if unshare -p -f true 2> /dev/null; then
      check "no session of the chain left after kill -9 of gpucheck" none_left "fake_setsid_chain:$FAKE_STATE"
    else
      echo "skipped the count: no PID namespace here"
    fi
    ;;
  killed_gate)
    # kill -9 of gpucheck takes the running binary with it (parent-death signal).
    bench bench_orphan hang
    record
    "$gpucheck" gate --bin-dir bin --baseline baselines --out out --pin-cpu off > out.txt 2> err.txt &
    gpid=$!
    for _ in $(seq 1200); do pgrep -f -- "$fake hang orphan" > /dev/null && break; sleep 0.1; done
    check "the binary was running" pgrep -f -- "$fake hang orphan"
    kill -9 "$gpid"
    wait "$gpid" 2> /dev/null
    check "no binary left after kill -9 of gpucheck" none_left "$fake hang orphan"
    ;;
  signalled_gate)
    # SIGTERM to gpucheck (a cancelled CI job) stops the binary and its deaf child.
    bench bench_sigkid group_child_deaf
    record
    "$gpucheck" gate --bin-dir bin --baseline baselines --out out --pin-cpu off > out.txt 2> err.txt &
    gpid=$!
    for _ in $(seq 1200); do pgrep -f -- "fake_group_child_deaf:$FAKE_STATE" > /dev/null && break; sleep 0.1; done
    kill -TERM "$gpid"
    wait "$gpid"
    rc=$?
    check "exit 143 (128 + SIGTERM)" test "$rc" -eq 143
    check "the stop said once" grep -q "interrupted by a signal" err.txt
    check "no process left in the group" none_left "fake_group_child_deaf:$FAKE_STATE"
    check "no binary left" none_left "$fake group_child_deaf sigkid"
    ;;
  partial_left)
    # A binary killed at its timeout leaves no FILE.partial-PID behind.
    bench bench_partial partial_hang
    record
    gate --timeout 1
    check "exit 1" test "$rc" -eq 1
    check "the binary wrote a partial file" grep -q "partial-" out/logs/bench_partial.log
    check "no partial file left" test -z "$(find out -name '*.partial-*')"
    ;;
  flood)
    # A binary printing 40 MB costs its log the middle, never the disk; the tail is kept.
    bench bench_flood flood
    record
    gate
    check "exit 0" test "$rc" -eq 0
    size=$(wc -c < out/logs/bench_flood.log)
    check "log capped (${size} bytes)" test "$size" -le $((16 * 1024 * 1024 + 4096))
    check "the tail kept" grep -q "the last line of a flood" out/logs/bench_flood.log
    check "says what was dropped" grep -q "bytes of output dropped here" out/logs/bench_flood.log
    ;;
  clash)
    # A binary whose cases another binary reports costs that binary only; outputs are written.
    bench bench_steady steady
    record
    bench bench_twin clash
    gate
    check "exit 1 (an errored binary)" test "$rc" -eq 1
    check "names the clash" has "bench_twin: ERRORED: reports steady/a/fp32/1MiB, which bench_steady reported too"
    for f in results.json compare.md compare.json junit.xml; do check "out/$f written" test -f "out/$f"; done
    check "steady still compared" grep -qE '^steady/a/fp32/1MiB .* ok' out.txt
    ;;
  mixed_gpu)
    # One binary on another GPU model than the rest costs that binary only.
    bench bench_steady steady
    bench bench_memory steady
    bench bench_zeta steady
    record
    printf '#!/usr/bin/env bash\nFAKE_GPU="NVIDIA A100-SXM4-80GB" exec bash "%s" steady memory "$@"\n' "$fake" > bin/bench_memory
    gate
    check "exit 1 (an errored binary)" test "$rc" -eq 1
    check "names the other GPU" has "bench_memory: ERRORED: ran on NVIDIA A100-SXM4-80GB, bench_steady on NVIDIA H200"
    for f in results.json compare.md compare.json junit.xml; do check "out/$f written" test -f "out/$f"; done
    ;;
  crash)
    bench bench_crash crash
    bench bench_steady steady
    record
    gate
    check "exit 1" test "$rc" -eq 1
    check "crash named" has "ERRORED: crashed: SIGSEGV; last stderr line: fake_bench: about to crash"
    check "stderr tail echoed" has "    | fake_bench: about to crash"
    check "log kept" has "about to crash" out/logs/bench_crash.log
    check "junit failure for the binary" grep -q 'name="bench_crash (first)"' out/junit.xml
    ;;
  exit2)
    bench bench_exit2 exit2
    bench bench_steady steady
    record
    gate
    check "exit 1 (one binary could not run)" test "$rc" -eq 1
    check "reason is its stderr line" has "ERRORED: could not run (exit 2): gpucheck: bench_exit2: cannot create a cuBLAS handle (fake)"
    ;;
  truncated)
    bench bench_truncated truncated
    bench bench_steady steady
    record
    gate
    check "exit 1" test "$rc" -eq 1
    check "unreadable JSON named" grep -qE 'bench_truncated \.\.\. .*ERRORED: exit 0 but its results JSON does not read \(not valid JSON' out.txt
    check "kept aside" test -f out/logs/bench_truncated.json.unreadable
    check "not in runs/" test ! -e out/runs/bench_truncated.json
    check "results.json still reads" "$gpucheck" compare out/results.json out/results.json --no-thresholds
    ;;
  casefail)
    bench bench_casefail casefail
    record
    gate
    check "exit 1" test "$rc" -eq 1
    check "case errored with its message" grep -qE '^casefail/b/fp32/4MiB .* ERRORED .*verification failed: 3 wrong elements' out.txt
    check "binary not ERRORED itself" grep -qE 'bench_casefail \.\.\. .* 1 case ok, 1 errored' out.txt
    bench bench_casefail exit1_clean
    gate
    check "exit 1 without a failed case is an error of the binary" has "ERRORED: exit 1 but no case in its JSON is marked as failed"
    ;;
  no_gpu)
    bench bench_a nodevice
    bench bench_b nodevice
    mkdir -p baselines
    gate
    check "exit 2" test "$rc" -eq 2
    check "one line" one_line
    check "says no GPU, one prefix, what to do" has 'gpucheck: no GPU: bench_a said "no CUDA device found (fake: no driver loaded)"; run on a GPU machine, or judge results measured there with gpucheck compare' err.txt
    check "the second binary is not started" lacks bench_b
    ;;
  no_baseline)
    bench bench_steady steady
    mkdir -p baselines
    gate
    check "exit 2" test "$rc" -eq 2
    check "one line" one_line
    check "prints the update command" grep -qF "no baseline for NVIDIA H200 (looked for baselines/nvidia-h200/quick.json and baselines/nvidia-h200/fake-cpu-family-6-model-143-stepping-8/quick.json); to store this run as one: $gpucheck baseline update --suite quick --root baselines out/results.json" err.txt
    cmd=$(sed -n 's/.*to store this run as one: //p' err.txt)
    check "the printed command stores one" $cmd
    gate
    check "then the gate passes" test "$rc" -eq 0
    ;;
  other_gpu)
    bench bench_steady steady
    FAKE_GPU="NVIDIA A100-SXM4-80GB" record
    BASE=baselines/nvidia-a100-sxm4-80gb/quick.json gate
    check "exit 2" test "$rc" -eq 2
    check "one clear line" has "baseline is from NVIDIA A100-SXM4-80GB, this run is on NVIDIA H200: compare the same GPU model, or pass --allow-other-gpu" err.txt
    BASE=baselines/nvidia-a100-sxm4-80gb/quick.json gate --allow-other-gpu
    check "allowed: exit 0" test "$rc" -eq 0
    check "allowed: a warning" has "WARNING: baseline is from NVIDIA A100-SXM4-80GB, this run is on NVIDIA H200 (--allow-other-gpu)"
    ;;
  filter)
    bench bench_steady steady
    bench bench_memory steady
    record
    gate --filter zzz
    check "nothing matched: exit 2" test "$rc" -eq 2
    check "one line" one_line
    check "says so" has 'gpucheck: --filter: "zzz" matches no benchmark in any binary' err.txt
    gate --filter '^steady/a'
    check "a subset: exit 0" test "$rc" -eq 0
    check "the rest is out of scope, not missing" has "1 benchmarks: 0 regressed, 0 missing"
    gate --filter '('
    check "bad regex: exit 2" test "$rc" -eq 2
    ;;
  binary_list)
    bench bench_steady steady
    bench bench_crash crash
    printf 'bench_steady\n' > bin/gpucheck-benchmarks.txt
    record
    gate
    check "only the listed binary ran: exit 0" test "$rc" -eq 0
    check "the crash was not run" lacks "bench_crash"
    printf '# built by CMake\nbench_steady\nbench_attention\n' > bin/gpucheck-benchmarks.txt
    gate
    check "a listed binary missing: exit 2" test "$rc" -eq 2
    check "names it" has "lists bench_attention, which is not an executable in bin" err.txt
    ;;
  host_baseline)
    bench bench_steady steady
    record --host
    gate
    check "exit 0" test "$rc" -eq 0
    check "picks this host's baseline" has "baseline: baselines/nvidia-h200/fake-cpu-family-6-model-143-stepping-8/quick.json (NVIDIA H200)"
    ;;
  lists)
    bench bench_regress regress
    bench bench_steady steady
    FAKE_HOST="Other CPU (family 25 model 17 stepping 1)" record
    cat > baselines/thresholds.json <<'JSON'
{"default_pct": 10,
 "report_only": [{"glob": "steady/b/*", "cv_pct": 31, "why": "host CPU time, cv measured on the H200 lease"}],
 "host_bound": [{"glob": "regress/a/*", "pct": 5, "why": "host launch rate"}],
 "overrides": [{"glob": "nothing/*", "pct": 20, "why": "stale"}]}
JSON
    gate
    check "exit 0: host-bound case against another host is not gated" test "$rc" -eq 0
    check "host differs verdict" grep -qE '^regress/a/fp32/1MiB .* host differs ' out.txt
    check "hosts printed once" has "host CPU differs (baseline Other CPU (family 25 model 17 stepping 1), current Fake CPU (family 6 model 143 stepping 8))"
    check "report-only section" has "report only (shown, never gated):"
    check "report-only row with its cv" grep -qE '^  steady/b/fp32/4MiB .* cv 31% listed, 0.4% now' out.txt
    check "report-only in markdown" has "**Report only** (shown, never gated)" out/compare.md
    check "unmatched glob warned" has 'WARNING: baselines/thresholds.json: overrides glob "nothing/*" matches no benchmark in either file'
    echo '{"overides": []}' > baselines/thresholds.json
    gate
    check "misspelt key: exit 2" test "$rc" -eq 2
    check "misspelt key: suggestion" has 'unknown key "overides" (did you mean overrides?)' err.txt
    check "misspelt key: before any binary ran" lacks "[1/2]"
    ;;
  fresh_processes)
    # A baseline's repetitions from fresh processes (gpucheck run --fresh-processes), and a
    # host-bound case past its limit confirmed in a fresh process per repetition.
    bench bench_steady steady
    bench bench_regress_once regress_once
    FAKE_BASELINE=1 "$gpucheck" run --bin-dir bin --out base --repetitions 5 --fresh-processes --timeout 20 > record.log 2>&1
    check "recorded" test $? -eq 0
    check "five processes a binary" test "$(grep -c '(process [1-5]/5) bench_steady ' record.log)" -eq 5
    check "five repetitions a case" test "$(grep -c '"name":"steady/a/fp32/1MiB/manual_time"' base/results.json)" -eq 5
    check "repetition indices 0-4" grep -q '"repetition_index":4' base/results.json
    "$gpucheck" baseline update --suite quick --root baselines base/results.json >> record.log 2>&1
    cat > baselines/thresholds.json <<'JSON'
{"host_bound": [{"glob": "regress_once/a/*", "pct": 10, "why": "host launch rate"}]}
JSON
    gate
    check "exit 0 (the slow-down did not hold)" test "$rc" -eq 0
    check "confirmed in fresh processes" test "$(grep -c '(process [1-5]/5) bench_regress_once (confirmation)' out.txt)" -eq 5
    check "not confirmed" grep -qE 'not confirmed +regress_once/a/fp32/1MiB' out.txt
    check "results.json holds the 5 processes' figures" test "$(grep -c '"name":"regress_once/a/fp32/1MiB/manual_time"' out/results.json)" -eq 5
    ;;
  baseline_update)
    bench bench_steady steady
    FAKE_BASELINE=1 "$gpucheck" run --bin-dir bin --out base --repetitions 3 > /dev/null
    mkdir -p baselines/nvidia-h200
    echo '{"context": {' > baselines/nvidia-h200/.quick.json.tmp-99999
    "$gpucheck" baseline update --suite quick --root baselines base/results.json > u1.txt 2>&1 &
    "$gpucheck" baseline update --suite quick --root baselines base/results.json > u2.txt 2>&1 &
    wait
    check "one created it" test "$(cat u1.txt u2.txt | grep -c '^created ')" -eq 1
    check "the other waited and updated it" test "$(cat u1.txt u2.txt | grep -c '^updated ')" -eq 1
    check "stale temporary removed" has "removed a stale temporary of a killed update: .quick.json.tmp-99999" <(cat u1.txt u2.txt)
    check "no temporaries left" test -z "$(find baselines -name '.*tmp-*')"
    check "repetitions kept" test "$(grep -c '"repetition_index"' baselines/nvidia-h200/quick.json)" -eq 6
    ;;
  usage)
    for c in gate run compare baseline report; do
      "$gpucheck" "$c" --help > out.txt 2> err.txt
      check "$c --help exits 0" test $? -eq 0
      check "$c --help prints its usage" grep -q "gpucheck $c" out.txt
    done
    "$gpucheck" gaet > out.txt 2> err.txt
    check "misspelt command: exit 2" test $? -eq 2
    check "misspelt command: suggestion" has 'unknown command "gaet" (did you mean gate?)' err.txt
    "$gpucheck" gate --bin-dir bin --baseline . --out out --timout 3 > out.txt 2> err.txt
    check "misspelt option: suggestion" has "gpucheck: --timout: unknown option (did you mean --timeout?)" err.txt
    ;;
  *)
    echo "unknown case $case"
    exit 2
    ;;
esac

if ((failures)); then
  echo "--- stdout"; cat out.txt 2>/dev/null
  echo "--- stderr"; cat err.txt 2>/dev/null
  exit 1
fi
echo "$case: ok"
