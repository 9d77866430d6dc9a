#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# criusd on recorded cluster states (criusd --state), the issue's cases: a running job that
# opted in (--crius-movable) fills a100; a pending job wants a100. criusd shrinks the running
# job for it only when Slurm could start the pending job now (not held, no dependency, begin
# time reached) and only when the running job may move; a record criusd cannot read (a
# number where a word belongs) is reported, never fatal.
set -u
criusd=$B/sbin/criusd
[ -x "$criusd" ] || { echo "FAIL: $criusd not built"; exit 1; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# state FILE [python assignments to the pending job 999 / the running job 1 / the record of job 1]
state() {
  python3 - "$@" <<'PY'
import json, sys
out, pending_update, running_update, request_update = sys.argv[1], *(json.loads(a) for a in sys.argv[2:5])
def record(nodes, request_update={}):
    request = {"model": "bert__1.3B", "global_batch": 256, "runtime": "megatron", "cell": "auto",
               "iters": 100000, "movable": True}
    request.update(request_update)
    return json.dumps({"crius": 2, "by": "job_submit", "request": request,
                       "cell": {"gpu": "a100", "partition": "a100", "nodes": nodes, "gpus_per_node": 8, "stages": 1},
                       "plan": {"version": 1, "stages": [{"layers": [0, 24], "dp": nodes * 8, "tp": 1}],
                                "micro_batches": 1, "micro_batch_size": 256 // (nodes * 8)}})
nodes = [{"name": f"{g}-{i}", "partitions": [g], "gpu": g, "gpus": 8, "gpus_used": 8, "usable": True}
         for g in ("a100", "v100") for i in (1, 2)]
running = {"id": 1, "name": "big", "state": "RUNNING", "partition": "a100", "features": "a100",
           "tres_per_node": "gres:gpu:8", "admin_comment": record(2, request_update), "nodes": ["a100-1", "a100-2"],
           "num_nodes": 2, "submit_time": 100, "start_time": 200, "priority": 100, "user": "alice"}
running.update(running_update)
plain = {"id": 2, "name": "plain", "state": "RUNNING", "partition": "v100", "tres_per_node": "gres:gpu:8",
         "admin_comment": "", "nodes": ["v100-1", "v100-2"], "num_nodes": 2, "submit_time": 100, "start_time": 200}
pending = {"id": 999, "name": "next", "state": "PENDING", "partition": "a100", "features": "a100",
           "tres_per_node": "gres:gpu:8", "admin_comment": record(1), "nodes": [], "num_nodes": 1,
           "submit_time": 300, "priority": 1000, "reason": "Priority", "user": "bob"}
pending.update(pending_update)
json.dump({"now": 100000, "nodes": nodes, "jobs": [running, plain, pending]}, open(out, "w"))
PY
}
decide() { # FILE -> actions as "job:action" lines; the --status table in FILE.status
  "$criusd" --config "$TOP/etc/crius/crius.toml" --state "$1" --status >"$1.status" 2>"$1.err" || fail "criusd --status on $1: $(cat "$1.err")"
  "$criusd" --config "$TOP/etc/crius/crius.toml" --state "$1" --json 2>"$1.err" | jq -r '.actions[] | "\(.job):\(.action)"'
}

state free.json '{}' '{}' '{}'
[ "$(decide free.json)" = "1:checkpoint" ] || fail "control: the running job should shrink for job 999: $(decide free.json)"
grep -qE '^999 .* policy' free.json.status || fail "job 999 should be offered to the policy: $(cat free.json.status)"

state held.json '{"priority": 0, "reason": "JobHeldUser"}' '{}' '{}'
state dependency.json '{"reason": "Dependency"}' '{}' '{}'
state begin.json '{"reason": "BeginTime", "begin_time": 31536000}' '{}' '{}'
state limits.json '{"reason": "AssocMaxJobsLimit"}' '{}' '{}'
for s in held dependency begin limits; do
  [ -z "$(decide $s.json)" ] || fail "$s: criusd acted for a job Slurm would not start: $(decide $s.json)"
done
grep -qE '^999 .* no: held' held.json.status || fail "held: no reason in --status: $(cat held.json.status)"
grep -qE '^999 .* no: waits for a dependency' dependency.json.status || fail "dependency: no reason in --status"
grep -qE '^999 .* no: waits for its begin time' begin.json.status || fail "begin: no reason in --status"
grep -qE '^999 .* no: pending for AssocMaxJobsLimit' limits.json.status || fail "limits: no reason in --status"

state not_movable.json '{}' '{}' '{"movable": false}'
state no_requeue.json '{}' '{"requeue": false}' '{}'
state interactive.json '{}' '{"batch": false}' '{}'
state young.json '{}' '{"start_time": 99900}' '{}'
for s in not_movable no_requeue interactive young; do
  [ -z "$(decide $s.json)" ] || fail "$s: criusd moved a running job that cannot come back: $(decide $s.json)"
  grep -qE '^1 .* no: not movable' $s.json.status || fail "$s: no reason in --status: $(cat $s.json.status)"
done

# A record with a number for the runtime: reported, skipped, the round goes on (exit 0).
state broken.json '{}' '{}' '{"runtime": 7}'
[ -z "$(decide broken.json)" ] || fail "broken: criusd acted on a job whose record does not read"
grep -qE '^1 .* no: its record does not read' broken.json.status || fail "broken: not reported: $(cat broken.json.status)"
# --check-description on a saved snapshot: crius.toml's 2 x 8 a100 and v100 agree with it; a
# v100 node of 4 GPUs is said; a snapshot that cannot be read is exit 2, naming it.
"$criusd" --config "$TOP/etc/crius/crius.toml" --state free.json --check-description >agree.out 2>&1 ||
  fail "--check-description on free.json: exit $?: $(cat agree.out)"
grep -qx 'partition v100: agrees (2 nodes x 8 v100)' agree.out || fail "--check-description: $(cat agree.out)"
python3 -c 'import json; s = json.load(open("free.json")); s["nodes"][3]["gpus"] = 4; json.dump(s, open("four.json", "w"))'
rc=0; "$criusd" --config "$TOP/etc/crius/crius.toml" --state four.json --check-description >four.out 2>&1 || rc=$?
[ $rc = 1 ] && grep -qx 'partition v100: crius.toml says 2 nodes x 8 v100, but node v100-2 has 4 GPUs; criusd places nothing there' four.out ||
  fail "--check-description on four.json: exit $rc: $(cat four.out)"
rc=0; "$criusd" --config "$TOP/etc/crius/crius.toml" --state missing.json --check-description >missing.out 2>&1 || rc=$?
[ $rc = 2 ] && grep -q 'cannot open --state missing.json' missing.out || fail "--check-description on a missing file: exit $rc: $(cat missing.out)"
echo "$fails failure(s)"
[ $fails = 0 ]
