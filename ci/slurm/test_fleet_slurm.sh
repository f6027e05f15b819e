#!/usr/bin/env bash
# The fleet on a real Slurm (CTest fleet_slurm, label slurm): starts munged and a 4-node cluster
# on localhost (slurmctld, and one slurmd per node name: n[1-4] on ports 17001-17004), runs
# ci/slurm/accept.sbatch with a stand-in `gpucheck accept` that copies made acceptance folders
# (n3's GPU 1 6% slow in bf16 GEMM, on both runs), then checks the fleet verdict, drain.txt and
# the recheck, runs drain.sh against the cluster and checks `sinfo -R`. Every daemon it started
# is stopped by its PID. Needs root and slurmctld, slurmd, slurm-client, munge (ci/deps.sh
# installs them unless --quick); skips (exit 77) with the reason otherwise.
# Usage: test_fleet_slurm.sh GPUCHECK SOURCE_DIR WORK_DIR
set -uo pipefail
gpucheck=$(realpath "$1") src=$(realpath "$2") work=$3

[[ $(id -u) -eq 0 ]] || { echo "skip: needs root (starts munged, slurmctld and slurmd)"; exit 77; }
for t in slurmctld slurmd sbatch squeue sinfo scontrol munged python3; do
  command -v "$t" >/dev/null 2>&1 || { echo "skip: $t not installed (ci/deps.sh installs slurmctld slurmd slurm-client munge)"; exit 77; }
done

rm -rf "$work" && mkdir -p "$work"/{etc,state,log,spool,munge,bin,fixtures,accept} && chmod 700 "$work" || exit 2
work=$(realpath "$work")
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work"/log/*.log "$work"/job.out; do [[ -f $f ]] && { echo "== $f"; tail -20 "$f"; }; done; exit 1; }

# munged with its own key and socket, in the foreground so its PID is ours.
head -c 1024 /dev/urandom > "$work/munge/munge.key" && chmod 400 "$work/munge/munge.key"
munged -F --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.sock" \
  --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/seed" --log-file="$work/log/munged.log" &
pids+=($!)

ctl_port=${GPUCHECK_SLURM_PORT:-16917}
export SLURM_CONF=$work/etc/slurm.conf
cat > "$SLURM_CONF" <<CONF
ClusterName=gpucheck-test
SlurmctldHost=localhost
SlurmctldPort=$ctl_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd-%n.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
NodeName=n[1-4] NodeHostname=localhost Port=[17001-17004] CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=test Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP
CONF
for _ in $(seq 50); do [[ -S $work/munge/munge.sock ]] && break; sleep 0.1; done
[[ -S $work/munge/munge.sock ]] || fail "munged did not start"
slurmctld -D -i -f "$SLURM_CONF" > "$work/log/slurmctld.out" 2>&1 &
pids+=($!)
for n in 1 2 3 4; do
  mkdir -p "$work/spool/n$n"
  slurmd -D -N "n$n" -f "$SLURM_CONF" > "$work/log/slurmd-n$n.out" 2>&1 &
  pids+=($!)
done
up=0
for _ in $(seq 150); do
  up=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
  ((up == 4)) && break
  sleep 0.2
done
((up == 4)) || fail "the 4 nodes did not come up idle: $(sinfo -N 2>&1 | tr '\n' ' ')"

# Made acceptance folders, two GPUs per node from the real H200 fixture; n3's GPU 1 slow.
python3 - "$src/tests/unit/compare/fixtures/accept/h200_gpu0.json" "$work/fixtures" <<'PY' || fail "fixtures"
import json, os, sys
base = json.load(open(sys.argv[1]))
for n in range(1, 5):
    for g in range(2):
        d = json.loads(json.dumps(base))
        c = d["context"]
        c.update(host_name=f"n{n}", gpucheck_device_index=str(g), gpu_uuid=f"GPU-fleet-n{n}-{g}",
                 gpu_pci_bus_id=f"0000:{0x18 + 16 * g:02X}:00.0")
        for b in d["benchmarks"]:
            if n == 3 and g == 1 and b["name"].startswith("matmul/cublaslt/bf16/"):
                b["TFLOPS"] *= 0.94
        os.makedirs(f"{sys.argv[2]}/n{n}/gpu{g}/runs", exist_ok=True)
        json.dump(d, open(f"{sys.argv[2]}/n{n}/gpu{g}/runs/bench_all.json", "w"))
    open(f"{sys.argv[2]}/n{n}/accept.json", "w").write('{"gpucheck_accept": 1, "verdict": "pass", "gpus": [], "checks": []}\n')
PY
# The stand-in: `gpucheck accept --out D` copies this node's made folder; anything else is gpucheck.
cat > "$work/bin/gpucheck" <<SH
#!/bin/sh
if [ "\$1" = accept ]; then
  while [ \$# -gt 0 ]; do [ "\$1" = --out ] && out=\$2; shift; done
  mkdir -p "\$out" && cp -r "$work/fixtures/\$SLURMD_NODENAME/." "\$out/" && echo "\$SLURMD_NODENAME" >> "$work/accept_calls"
  exit 0
fi
exec "$gpucheck" "\$@"
SH
chmod +x "$work/bin/gpucheck"

job=$(cd "$src" && GPUCHECK=$work/bin/gpucheck sbatch --parsable -N 4 -o "$work/job.out" \
      --export=ALL,GPUCHECK_FLEET_ARGS="--specs $src/baselines/specs.json --gaps $src/baselines/fleet_gaps.json --config $src/baselines/accept.json" \
      ci/slurm/accept.sbatch "$work/accept") || fail "sbatch refused the job"
for _ in $(seq 300); do
  [[ -z $(squeue -h -j "$job" 2>/dev/null) ]] && break
  sleep 0.2
done
[[ -z $(squeue -h -j "$job" 2>/dev/null) ]] || fail "job $job still queued after 60 s"
echo "job $job finished"

out=$work/accept/fleet
[[ -f $out/fleet.json ]] || fail "no fleet.json"
verdict=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["verdict"], j["flagged"], j["not_judged"], j["recheck"] is not None)' "$out/fleet.json")
[[ $verdict == "FAIL 1 0 True" ]] || fail "fleet.json: verdict, flagged, not judged, rechecked = $verdict (expected FAIL 1 0 True)"
drained=$(grep -v '^#' "$out/drain.txt" | cut -f1 | tr '\n' ' ')
[[ $drained == "n3 " ]] || fail "drain.txt names \"$drained\", expected n3 alone"
grep -q 'gemm/bf16' "$out/drain.txt" || fail "drain.txt does not say bf16"
[[ $(sort "$work/accept_calls" | tr '\n' ' ') == "n1 n2 n3 n3 n4 " ]] || fail "accept ran on: $(sort "$work/accept_calls" | tr '\n' ' ') (expected every node once and n3 again)"
[[ -d $work/accept/recheck/n3 ]] || fail "no recheck of n3"

sh "$out/drain.sh" || fail "drain.sh failed"
reasons=$(sinfo -R -h -o '%N|%E')
echo "$reasons"
[[ $(grep -c . <<<"$reasons") -eq 1 ]] || fail "sinfo -R names more than n3: $reasons"
grep -q '^n3|gpucheck: outlier: n3 GPU 1' <<<"$reasons" || fail "sinfo -R: $reasons"
# resume.sh from those reasons: n3 still flagged, nothing to resume.
sinfo -R > "$work/reasons.txt"
"$gpucheck" fleet "$work/accept/nodes" --specs "$src/baselines/specs.json" --gaps "$src/baselines/fleet_gaps.json" \
  --config "$src/baselines/accept.json" --recheck "$work/accept/recheck" --reasons "$work/reasons.txt" --out "$work/fleet2" > /dev/null
grep -q '^# n3 stays drained: still flagged' "$work/fleet2/resume.sh" || fail "resume.sh: $(cat "$work/fleet2/resume.sh")"
echo "PASS: 4-node Slurm: n3 flagged by both runs, drained, sinfo -R says gpucheck"
