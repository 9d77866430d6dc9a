#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-launch's environment contract and the runtime's groups, seen from inside
# the ranks (crius-rankinfo), for plans of 1..8 ranks from every plan source.
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
RI=$B/tests/mpi/crius-rankinfo
[ -x "$RI" ] || fail "$RI not built (make check builds it)"
unset CRIUS_PLAN_JSON CRIUS_STAGES CRIUS_STAGE_TP CRIUS_STAGE_DP CRIUS_STAGE_LAYERS SLURM_JOB_ID MASTER_ADDR MASTER_PORT RANK

run_case() { # name, crius-launch options...
  local name=$1; shift
  crius-launch "$@" --json >"$name.plan.json" || fail "$name: --dry-run --json failed"
  crius-launch "$@" -- "$RI" >"$name.out" 2>"$name.err" || { cat "$name.err"; fail "$name: launch failed"; }
  compare_ranks "$name.plan.json" "$name.out" || fail "$name: ranks disagree with the layout"
  echo "ok $name ($(grep -c RANKINFO "$name.out") ranks)"
}

run_case n1 -n 1
run_case dp3 -n 3
run_case tp2pp2dp2 --tp 2 --pp 2 --dp 2 --layers 8
run_case tp2pp3 --tp 2 --pp 3
run_case tp4pp2 --tp 4 --pp 2 --micro-batches 4
run_case shapes --pp 2 --tp 2,1 --dp 1,2 --stage-layers 0-4,5-7
run_case uneven_sizes --pp 2 --tp 2,1 --dp 2,1
cat > plan.json <<'JSON'
{"cells":[{"feasible":true,"plan":{"version":1,"stages":[{"layers":[0,4],"tp":1,"dp":1},{"layers":[4,6],"tp":1,"dp":1},
 {"layers":[6,8],"tp":1,"dp":1}],"micro_batches":4,"micro_batch_size":2,"schedule":"gpipe"}}]}
JSON
run_case planfile --plan plan.json
# The job's environment (what job_submit wrote; outside Slurm there is no record to read).
CRIUS_PLAN_JSON='{"version":1,"stages":[{"layers":[0,4],"tp":1,"dp":2},{"layers":[4,8],"tp":1,"dp":2}],"micro_batches":8}' \
  run_case jobenv
grep -q '"CRIUS_MICRO_BATCHES":"8"' jobenv.out || fail "jobenv: CRIUS_MICRO_BATCHES from the job environment not passed on"
grep -q '"CRIUS_STAGE_LAYERS":"0-3,4-7"' jobenv.out || fail "jobenv: CRIUS_STAGE_LAYERS not passed on"

# What the user set is never overwritten.
MASTER_ADDR=10.9.8.7 MASTER_PORT=4242 crius-launch -n 2 -- "$RI" >user.out 2>&1 || fail "user env launch failed"
[ "$(grep -c '"MASTER_ADDR":"10.9.8.7","MASTER_PORT":"4242"' user.out)" = 2 ] || { cat user.out; fail "MASTER_ADDR/PORT set by the user were overwritten"; }
# A rank variable left in the launching shell (a batch script's RANK=0) reaches no rank.
RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 crius-launch -n 2 -- "$RI" >leak.out 2>&1 || fail "leaked env launch failed"
for r in 0 1; do
  grep -q "\"LOCAL_RANK\":\"$r\",\"LOCAL_WORLD_SIZE\":\"2\",\"MASTER_ADDR\":\"[^\"]*\",\"MASTER_PORT\":\"[0-9]*\",\"RANK\":\"$r\",\"WORLD_SIZE\":\"2\"" leak.out ||
    { cat leak.out; fail "rank $r did not get its own RANK/LOCAL_RANK/WORLD_SIZE over the leaked ones"; }
done
grep -q "note: RANK=0 in this environment is replaced on every rank" leak.out || fail "the leaked RANK was not reported"
# In a job, where no Slurm configuration is reachable (a container image): the documented
# CRIUS_PLAN_JSON fallback, not libslurm's fatal exit; without it, a clear error.
SLURM_JOB_ID=5 SLURM_CONF=/nonexistent CRIUS_PLAN_JSON='{"version":1,"stages":[{"tp":1,"dp":2}]}' \
  crius-launch -- "$RI" >noconf.out 2>&1 || { cat noconf.out; fail "no slurm.conf: the CRIUS_PLAN_JSON fallback failed"; }
grep -q "warning: no Slurm configuration here; running the plan of the job's environment" noconf.out || fail "no slurm.conf: no warning"
[ "$(grep -c '"RANK":"[01]"' noconf.out)" = 2 ] || { cat noconf.out; fail "no slurm.conf: the ranks did not start"; }
out=$(SLURM_JOB_ID=5 SLURM_CONF=/nonexistent crius-launch -- true 2>&1); rc=$?
[ $rc = 1 ] && grep -q "no Slurm configuration here to read job 5's record" <<<"$out" || fail "no slurm.conf, no plan: exit $rc: $out"
# MASTER_PORT is deterministic per Slurm job id (dry run: no allocation needed).
crius-launch -n 1 --master-port 31337 -- "$RI" | grep -q '"MASTER_PORT":"31337"' || fail "--master-port ignored"

# Collective validation: one rank with another plan -> every rank fails with one message.
crius-launch --tp 2 --pp 2 -- "$RI" --perturb-rank 1 >bad.out 2>&1
rc=$?
[ $rc = 3 ] || { cat bad.out; fail "perturbed plan: exit $rc, want 3"; }
n=$(grep -c 'ranks disagree on the plan' bad.out)
[ "$n" = 4 ] || { cat bad.out; fail "perturbed plan: $n of 4 ranks reported the disagreement"; }
[ "$(grep 'ranks disagree' bad.out | sed 's/^crius-rankinfo: rank [0-9]*: //' | sort -u | wc -l)" = 1 ] || fail "ranks reported different messages"

# Usage errors: exit 2 with the option named.
expect2() { local want=$1; shift; out=$("$@" 2>&1); rc=$?; [ $rc = 2 ] || fail "'$*': exit $rc, want 2 ($out)";
  grep -qF -- "$want" <<<"$out" || fail "'$*': message '$out' lacks '$want'"; }
expect2 "-n 3 does not match the plan's 2 ranks" crius-launch -n 3 --tp 2 -- true
expect2 "no program given" crius-launch -n 2
expect2 "--plan: cannot read 'nope.json'" crius-launch --plan nope.json -- true
expect2 "CRIUS_PLAN_JSON: not valid JSON" env CRIUS_PLAN_JSON=x crius-launch -- true
expect2 "CRIUS_PLAN_JSON: key 'version' is missing" env CRIUS_PLAN_JSON='{"stages":[{"tp":1,"dp":1}]}' crius-launch -- true
expect2 "--tp: 3 values for 2 stages" crius-launch --pp 2 --tp 1,2,3 -- true
expect2 "unknown schedule 'zigzag'" crius-launch -n 2 --schedule zigzag -- true
expect2 "--launcher" crius-launch -n 2 --launcher pdsh -- true
out=$(crius-launch --tp 4 --dp 2 --gpus-per-node 6 --dry-run 2>&1); rc=$?
[ $rc = 1 ] && grep -q "would span nodes" <<<"$out" || fail "TP across nodes: exit $rc: $out"
# --bind-cpus: each rank on its own share of the CPUs this shell may use; without it, all of them.
allowed=$(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))')
affinity='python3 -c "import os; open(os.environ[\"PREFIX\"] + os.environ[\"RANK\"], \"w\").write(\" \".join(map(str, sorted(os.sched_getaffinity(0)))))"'
PREFIX=bind. crius-launch -n 4 --bind-cpus -- sh -c "$affinity" >bind.out 2>&1 || { cat bind.out; fail "--bind-cpus launch failed"; }
python3 - "$allowed" <<'PY' || fail "--bind-cpus: ranks not on their own shares of the CPUs"
import sys
cpus = [int(c) for c in sys.argv[1].split()]
n = len(cpus)
for r in range(4):  # consecutive ranks share where there are fewer CPUs than ranks
    mine = [int(c) for c in open(f"bind.{r}").read().split()]
    want = [cpus[r * n // 4]] if n <= 4 else cpus[r * n // 4:(r + 1) * n // 4]
    assert mine == want, (r, mine, want)
PY
PREFIX=nobind. crius-launch -n 2 -- sh -c "$affinity" >nobind.out 2>&1 || fail "launch without --bind-cpus failed"
for r in 0 1; do
  [ "$(cat nobind.$r)" = "$allowed" ] || fail "without --bind-cpus rank $r got CPUs $(cat nobind.$r), not $allowed"
done
# MASTER_PORT: 29500 outside Slurm, unless a socket on this host holds it (another user's
# process on a shared node): then a free port, the same for every rank.
python3 -c 'import socket,time
s=socket.socket(); s.bind(("0.0.0.0", 29500)); s.listen(1); print("held", flush=True); time.sleep(60)' >held.txt 2>&1 &
holder=$!
for _ in $(seq 50); do grep -q held held.txt && break; sleep 0.1; done
if grep -q held held.txt; then
  crius-launch -n 2 -- sh -c 'echo "$MASTER_PORT" >port.$RANK' >port.out 2>&1 || { kill $holder; cat port.out; fail "launch with 29500 held failed"; }
  kill $holder; wait $holder 2>/dev/null
  [ "$(cat port.0)" = "$(cat port.1)" ] && [ "$(cat port.0)" != 29500 ] && [ "$(cat port.0)" -gt 0 ] ||
    fail "MASTER_PORT with 29500 held: ranks got $(cat port.0) and $(cat port.1)"
else
  kill $holder 2>/dev/null
  echo "port 29500 in use here already; the held-port check was not run"
fi
echo "all launch_env checks passed"
