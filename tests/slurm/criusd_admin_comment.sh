#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius shares AdminComment with a site's own tools: a site's job_submit.lua (run before
# job_submit/crius, JobSubmitPlugins=lua,crius) puts its own text there at submission; on a
# real two-type cluster (a100:1x8 + v100:1x8) the crius job is given its Cell, moved pending
# by criusd to v100, started, moved running back to a100 (signal, requeue, new Cell, restart),
# and after each step the site's text is still there byte for byte, crius's record its own line.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
ls "$(dirname "$(command -v slurmctld)")"/../lib/*/slurm*/job_submit_lua.so >/dev/null 2>&1 ||
  ls /usr/lib/*/slurm*/job_submit_lua.so /usr/lib*/slurm/job_submit_lua.so >/dev/null 2>&1 ||
  { echo "Slurm's job_submit/lua plugin is not installed"; exit 77; }

conf=$TEST_TMP/crius.toml
crius_conf a100:1x8,v100:1x8 "max_moves_per_round = 1" >"$conf"
# The site's text: what jobstats-like tools keep there (a tag, base64, quotes, braces, spaces).
export FOREIGN='JS1:H4sIAAAAAAAAA+2d {"site":"budget lab-7","note":"kept \"as is\""} end'
cat >"$TEST_TMP/job_submit.lua" <<LUA
function slurm_job_submit(job_desc, part_list, submit_uid)
  job_desc.admin_comment = [[$FOREIGN]]
  return slurm.SUCCESS
end
function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end
LUA

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
# admin_comment ID: the whole AdminComment, every line of it (scontrol ends it with a space)
admin_comment() {
  scontrol show job "$1" | awk '/^   AdminComment=/ { on = 1; sub(/^   AdminComment=/, ""); print; next }
                                on && /^   [A-Za-z]+=/ { exit } on { print }' | sed '$ s/ $//'
}
# shared ID WHEN: the site's line is first and unchanged, crius's record the only other line
shared() {
  local text
  text=$(admin_comment "$1")
  [ "$(head -n 1 <<<"$text")" = "$FOREIGN" ] || fail "$2: the site's AdminComment is not kept: $text"
  [ "$(wc -l <<<"$text")" = 2 ] || fail "$2: AdminComment has other lines: $text"
  tail -n 1 <<<"$text" | jq -e '.crius >= 1' >/dev/null || fail "$2: no crius record line: $text"
  echo "$2: kept beside crius's record: $(head -c 60 <<<"$text")..."
}
blocker=$(sbatch --parsable -p a100 -N1 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 300') || fail "plain sbatch"
wait_state "$blocker" RUNNING
[ "$(admin_comment "$blocker")" = "$FOREIGN" ] || fail "the site's job_submit.lua did not run: $(admin_comment "$blocker")"
cat >job.sh <<'J'
#!/bin/bash
trap 'echo checkpoint; exit 0' USR1
for _ in $(seq 600); do sleep 0.2; done
J
id=$(sbatch --parsable -o job.out --open-mode=append --crius-model=bert__1.3B --crius-global-batch=256 --crius-iters=100000 \
  --crius-movable job.sh) || fail "crius sbatch"
sleep 1
[ "$(job_field "$id" Partition)" = a100 ] || fail "test premise: job_submit should choose a100"
shared "$id" "submitted"
criusd --once 2>once.err || { cat once.err; fail "criusd --once failed"; }
wait_state "$id" RUNNING
[ "$(job_field "$id" Partition)" = v100 ] || fail "job $id not moved to v100: $(cat once.err)"
shared "$id" "moved pending"
scancel "$blocker"
criusd 2>loop.err & pid=$!
for _ in $(seq 300); do
  [ "$(job_field "$id" Partition)" = a100 ] && [ "$(job_field "$id" JobState)" = RUNNING ] &&
    [ "$(job_field "$id" Restarts)" = 1 ] && break; sleep 0.2; done
kill "$pid"; wait "$pid"
cat loop.err
[ "$(job_field "$id" Partition)" = a100 ] && [ "$(job_field "$id" Restarts)" = 1 ] ||
  fail "job $id not moved back to a100: $(scontrol show job "$id")"
shared "$id" "moved running, requeued, restarted"
admin_comment "$id" | tail -n 1 | jq -e '.history | length == 1 and .[0].outcome == "moved"' >/dev/null ||
  fail "the record does not keep the move: $(admin_comment "$id")"
scancel "$id"
echo "criusd_admin_comment passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:1x8,v100:1x8 "$conf" "$TEST_TMP/inner.sh" --job-submit lua,crius --job-submit-lua "$TEST_TMP/job_submit.lua"
