#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A move across real network hosts, as a site runs it: on a lab whose nodes are hosts of their
# own (network, host name, cgroups: scripts/crius-lab) a movable two-node crius job runs
# `crius-launch -- crius-train` with the default launcher (mpirun, no --master-addr), then the
# same with `--launcher srun`. job_submit puts it on v100:2x1 (two hosts of one GPU each) while
# two plain jobs hold the four GPUs of the a100 host; when one of them ends, criusd moves it to
# a100:1x2: the checkpoint signal reaches every rank on both hosts, the job checkpoints, is
# requeued and resumes from its checkpoint on the new Cell. Before and after the move each task opens every fake GPU device file: those of
# its allocation open (ENXIO: no driver), the other job's GPUs are refused by the job's device
# cgroup (EPERM).
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
command -v mpirun >/dev/null || { echo "mpirun not installed"; exit 77; }
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
[ "${CRIUS_LAB_ONE_HOST:-0}" = 1 ] && { echo "CRIUS_LAB_ONE_HOST=1: nodes are not hosts"; exit 77; }

SPEC=v100:2x1,a100:1x4
crius_conf "$SPEC" >"$TEST_TMP/crius.toml"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
[ "${CRIUS_LAB_HOSTS:-0}" = 1 ] || { echo "${CRIUS_LAB_HOSTS_WHY:-nodes share one host}"; exit 77; }
[ "${CRIUS_LAB_CGROUPS:-0}" = 1 ] || { echo "${CRIUS_LAB_CGROUPS_WHY:-jobs not confined by cgroups}"; exit 77; }
export PATH="$B/bin:$PATH"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done' EXIT

# One line per task: its node, the GPU indices it may open and those it may not.
cat >probe.sh <<'P'
#!/bin/bash
ok='' denied=''
for d in "$CRIUS_LAB_DIR"/dev/nvidia*; do
  i=${d##*nvidia}
  err=$( (: <"$d") 2>&1 )
  case $err in
    *"No such device"*) ok+="$i," ;;
    *"not permitted"*) denied+="$i," ;;
    *) echo "probe: $d: unexpected: $err" >&2; exit 1 ;;
  esac
done
echo "gpus $(hostname) run=${SLURM_RESTART_COUNT:-0} cvd=$CUDA_VISIBLE_DEVICES open=${ok%,} denied=${denied%,}"
P
chmod +x probe.sh
# scenario NAME LAUNCHER-OPTIONS: the move, with crius-launch's default launcher (mpirun) or
# another; the lab is empty again at its end.
scenario() {
local name=$1 launcher=$2
cat >"$name.sh" <<J
#!/bin/bash
export OMPI_MCA_btl=self,tcp OMPI_MCA_mpi_yield_when_idle=1
srun --ntasks-per-node=1 "$TEST_TMP/probe.sh" >>"$TEST_TMP/$name.gpus.log" || exit 10
exec crius-launch $launcher -- crius-train --steps 1000000 --hidden 32 --heads 4 --ffn 64 --seq 8 --vocab 64 \
  --no-estimate -q --checkpoint-dir "$TEST_TMP/$name.ckpt" --checkpoint-every 2 --resume
J
chmod +x "$name.sh"

blocker=$(sbatch --parsable -p a100 -N1 --gres=gpu:a100:2 -o /dev/null --wrap 'sleep 600') || fail "plain sbatch"
wait_state "$blocker" RUNNING
other=$(sbatch --parsable -p a100 -N1 --gres=gpu:a100:2 -o /dev/null --wrap 'sleep 600') || fail "plain sbatch"
wait_state "$other" RUNNING
# criusd's report of the free GPUs is what job_submit decides an arriving job with
criusd --once 2>"$name.once.err" || { cat "$name.once.err"; fail "$name: criusd --once failed"; }
id=$(sbatch --parsable -o "$name.out" --open-mode=append --crius-movable --crius-model=bert__1.3B \
  --crius-global-batch=256 --crius-iters=100000 "$name.sh") || fail "crius sbatch"
wait_state "$id" RUNNING
from=$(job_field "$id" AdminComment | jq -c .cell)
[ "$(jq -r '"\(.gpu):\(.nodes)x\(.gpus_per_node)"' <<<"$from")" = v100:2x1 ] ||
  fail "$name: test premise: job_submit should give the job v100:2x1 (a100 full), it gave $from"
for _ in $(seq 300); do grep -q "checkpoint .* at step" "$name.out" && break; sleep 0.2; done
grep -q "checkpoint .* at step" "$name.out" || { cat "$name.out"; fail "$name: crius-train did not start training"; }

scancel "$blocker"
criusd 2>"$name.criusd.err" & pids=($!)
for _ in $(seq 450); do
  [ "$(job_field "$id" Restarts)" = 1 ] && [ "$(job_field "$id" JobState)" = RUNNING ] &&
    grep -q "resumed from" "$name.out" && grep -q "^gpus .* run=1 " "$name.gpus.log" 2>/dev/null && break
  sleep 0.2
done
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null
cat "$name.criusd.err"
echo "--- $name.out"; cat "$name.out"
echo "--- $name.gpus.log"; cat "$name.gpus.log"
to=$(job_field "$id" AdminComment | jq -c .cell)
echo "moved from $from to $to"
[ "$(job_field "$id" Restarts)" = 1 ] || fail "$name: job $id was requeued $(job_field "$id" Restarts) times"
[ "$(jq -r .gpu <<<"$to")" = a100 ] || fail "$name: job $id was not moved to a100: $to"
grep -q "the signal reached 2 of 2 ranks" "$name.out" || fail "$name: the checkpoint signal did not reach both ranks on their two hosts"
grep -q "resumed from .* at step [1-9]" "$name.out" || fail "$name: the moved job did not resume from its checkpoint"
grep -q "criusd moved this job to Cell a100:" "$name.out" || fail "$name: crius-launch did not run the record's new Cell"

# GPU binding: on v100:2x1 one task per host, whose GPU 0 opens (the files of GPUs 1-3 are no
# GRES of a v100 node: no cgroup rule names them); on a100:1x2 the GPUs the ended job held (0,1,
# Slurm's first fit) open and the other job's (2,3) are refused; CUDA_VISIBLE_DEVICES counts
# within the allocation.
python3 - "$name.gpus.log" <<'PY' || fail "$name: tasks saw GPUs outside their allocation"
import sys
runs = {}
for line in open(sys.argv[1]):
    _, host, run, cvd, ok, denied = line.split()
    runs.setdefault(run, {})[host] = (cvd, ok, denied)
assert set(runs) == {"run=0", "run=1"}, runs
v100 = ("cvd=0", "open=0,1,2,3", "denied=")
assert runs["run=0"] == {"v100-1": v100, "v100-2": v100}, runs
assert runs["run=1"] == {"a100-1": ("cvd=0,1", "open=0,1", "denied=2,3")}, runs
print("each task reached only its allocation's GPUs, before and after the move")
PY
scancel "$id" "$other"
for j in $id $other; do
  for _ in $(seq 100); do case $(job_field "$j" JobState) in RUNNING|PENDING|COMPLETING) sleep 0.2 ;; *) break ;; esac; done
done
echo "$name: passed"
}
scenario mpirun ""
scenario srun "--launcher srun"
echo "lab_hosts_move passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run "$SPEC" "$TEST_TMP/crius.toml" "$TEST_TMP/inner.sh"
rc=$?
[ $rc = 77 ] && exit 77  # skipped inside the lab, which said why
[ $rc = 0 ] || fail "lab run failed (rc $rc)"
