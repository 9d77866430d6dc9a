#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A per-type GPU limit holds for crius jobs, by submission and by move: on a real cluster with
# accounting and AccountingStorageEnforce=limits (a100:2x8 + v100:1x8, slurmdbd + MariaDB),
# account lab may hold 8 A100 (GrpTRES=gres/gpu:a100=8), and 16 are idle.
#  1. three crius jobs in a row: the first gets 8 A100 (not the 16 that would be fastest), the
#     second v100, the third waits for v100, although 8 A100 stay idle; the account never holds
#     a 9th A100 (squeue);
#  2. criusd moves none of them to the idle A100 (the second is --crius-movable), and says why
#     nothing changes; with the limit raised to 16 (the control), it moves one there;
#  3. from Slurm 23.11 the request is typed: sacct shows ReqTRES gres/gpu:a100=8 for the first
#     (on 22.05 it is untyped, and crius keeps the limit itself).
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
for c in mariadbd slurmdbd sacctmgr; do command -v $c >/dev/null || { echo "$c not installed (scripts/install-deps)"; exit 77; }; done

conf=$TEST_TMP/crius.toml
crius_conf a100:2x8,v100:1x8 >"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
printf '#!/bin/bash\ntrap "exit 0" USR1\nfor _ in $(seq 3000); do sleep 0.2; done\n' >loop.sh
chmod +x loop.sh
crius=(-A lab --crius-model=bert__1.3B --crius-global-batch=256 --crius-iters=100000)
# a100_held: the A100 GPUs account lab's running jobs hold, as Slurm has them
a100_held() {
  squeue -h -t R -A lab -p a100 -o '%D %b' | awk '{ n = split($2, t, ":"); s += $1 * t[n] } END { print s + 0 }'
}
limit() { # N: account lab's GrpTRES=gres/gpu:a100=N, once slurmctld knows it
  sacctmgr -i modify account lab set GrpTRES=gres/gpu:a100="$1" >/dev/null || fail "sacctmgr modify account"
  for _ in $(seq 50); do
    scontrol show assoc_mgr flags=assoc accounts=lab 2>/dev/null | grep -q "GrpTRES=.*gres/gpu:a100=$1(" && return 0; sleep 0.2; done
  fail "slurmctld does not know GrpTRES=gres/gpu:a100=$1: $(scontrol show assoc_mgr flags=assoc accounts=lab)"
}
limit 8
criusd --once 2>once0.err || { cat once0.err; fail "criusd --once"; }
grep -q " left:a100=8" "${CRIUS_FREE_GPUS_FILE:?}" || { cat "$CRIUS_FREE_GPUS_FILE"; fail "criusd's report lacks the per-type limit"; }

### 1. Three jobs in a row
ids=()
for k in 1 2 3; do
  movable=(); [ $k = 2 ] && movable=(--crius-movable)
  ids+=("$(sbatch --parsable -o /dev/null "${movable[@]}" "${crius[@]}" loop.sh)") || fail "crius sbatch $k"
  sleep 1
  [ $k = 3 ] || wait_state "${ids[-1]}" RUNNING
  criusd --once 2>"once$k.err" || { cat "once$k.err"; fail "criusd --once"; }
  echo "job ${ids[-1]}: $(job_field "${ids[-1]}" Partition) $(job_field "${ids[-1]}" NumNodes)x$(job_field "${ids[-1]}" TresPerNode) $(job_field "${ids[-1]}" JobState)"
  [ "$(a100_held)" -le 8 ] || fail "account lab holds $(a100_held) A100, over its 8"
done
[ "$(job_field "${ids[0]}" Partition)" = a100 ] && [ "$(a100_held)" = 8 ] || fail "the first job should run on 8 A100"
[ "$(job_field "${ids[1]}" Partition)" = v100 ] || fail "the second job should run on v100"
[ "$(job_field "${ids[2]}" Partition)" = v100 ] && [ "$(job_field "${ids[2]}" JobState)" = PENDING ] ||
  fail "the third job should wait for v100: $(job_field "${ids[2]}" Partition) $(job_field "${ids[2]}" JobState)"
[ "$(sinfo -h -p a100 -o '%D %t' | awk '$2 == "idle" {print $1}')" = 1 ] || fail "test premise: one a100 node idle"

### 2. No move onto the idle A100; with the limit raised, one
criusd --once --dry-run --json >kept.json 2>kept.err || { cat kept.err; fail "criusd --dry-run"; }
! jq -e '.actions[] | select(.to.gpu == "a100")' kept.json >/dev/null || fail "criusd would give A100 over the limit: $(jq -c .actions kept.json)"
limit 16
criusd --once --dry-run --json >moved.json 2>moved.err || { cat moved.err; fail "criusd --dry-run"; }
jq -e --argjson a "${ids[1]}" --argjson b "${ids[2]}" '.actions[] | select((.job == $a or .job == $b) and .to.gpu == "a100")' \
  moved.json >/dev/null || fail "with 16 A100 allowed, criusd moves nothing to a100: $(jq -c .actions moved.json)"

### 3. The request Slurm's limits see
v=$(slurmctld -V | awk '{print $2}')
req=$(sacct -n -X -P -j "${ids[0]}" -o ReqTRES)
echo "job ${ids[0]}: ReqTRES=$req (Slurm $v)"
if printf '%s\n' 23.11 "$v" | sort -V -C; then
  grep -q 'gres/gpu:a100=8' <<<"$req" || fail "Slurm $v: ReqTRES is not typed: $req"
else
  ! grep -q 'gres/gpu:a100' <<<"$req" || fail "Slurm $v: a typed request would keep a moved pending job from starting"
fi
scancel "${ids[@]}"
echo "criusd_typed_limits passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:2x8,v100:1x8 "$conf" "$TEST_TMP/inner.sh" --accounting --enforce-limits
