#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# job_submit/crius configuration ([job_submit] in crius.toml, found through CRIUS_CONF):
# a bad file never stops slurmctld; crius jobs are then rejected (on_error = "reject") or
# passed through unchanged (on_error = "accept", and the submitter is told) while plain jobs
# run; a good [job_submit] table's objective and partitions are honoured; a job submitted from
# inside a crius job is not one; crius.toml is reloaded when it changes.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
base() { # the default two-partition cluster with absolute catalogue paths
  printf 'gpus = "%s"\nmodels = "%s"\n' "$TOP/etc/crius/gpus.toml" "$TOP/etc/crius/models.toml"
  sed -n '/^\[\[partition\]\]/,$p' "$TOP/etc/crius/crius.toml"
}
printf '#!/bin/bash\necho "part=$SLURM_JOB_PARTITION cell=${CRIUS_CELL:-none}"\n' >"$TEST_TMP/job.sh"

# 1. bad config, on_error = reject
{ base; printf '\n[job_submit]\non_error = "reject"\nobjectve = "throughput"\n'; } >"$TEST_TMP/reject.toml"
cat >"$TEST_TMP/inner1.sh" <<'INNER'
#!/usr/bin/env bash
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
grep 'job_submit/crius' "$CRIUS_LAB_DIR/log/slurmctld.log"
grep -q "reject.toml:[0-9]*:[0-9]*: \[job_submit\] objectve.*unknown key.*degraded mode, on_error=reject" "$CRIUS_LAB_DIR/log/slurmctld.log" ||
  fail "no clear degraded-mode line in the slurmctld log"
! sbatch -o /dev/null --crius-model=bert__1.3B --crius-global-batch=64 job.sh 2>err.txt || fail "crius job accepted"
cat err.txt
grep -q "crius: crius is not available (configuration error: .*objectve" err.txt || fail "unclear rejection"
sbatch_wait -o plain.out job.sh >/dev/null || fail "plain job refused"
grep -q '^part=a100 cell=none$' plain.out || fail "plain job: $(cat plain.out)"
INNER
chmod +x "$TEST_TMP/inner1.sh"
plugin_lab_run a100:2x8,v100:2x8 "$TEST_TMP/reject.toml" "$TEST_TMP/inner1.sh" || fail "on_error=reject"

# 2. malformed TOML, default on_error = accept: crius jobs pass unchanged
printf '[[partition]\nname = "a100\n' >"$TEST_TMP/broken.toml"
cat >"$TEST_TMP/inner2.sh" <<'INNER'
#!/usr/bin/env bash
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
grep -q "job_submit/crius: .*broken.toml.*accepted unchanged (degraded mode, on_error=accept)" "$CRIUS_LAB_DIR/log/slurmctld.log" ||
  { grep crius "$CRIUS_LAB_DIR/log/slurmctld.log"; fail "no degraded-mode line"; }
id=$(sbatch_wait -o c.out -p v100 --crius-model=bert__1.3B --crius-global-batch=64 job.sh 2>c.err) || fail "crius job refused"
grep -q '^part=v100 cell=none$' c.out || fail "accepted job was changed: $(cat c.out)"
# the submitter is told
grep -q "crius: crius is not available (configuration error: .*); the job was submitted as it is" c.err ||
  fail "the user was not told that crius is not available: $(cat c.err)"
[ "$(job_field "$id" TresPerNode)" = "" ] || [ "$(job_field "$id" TresPerNode)" = "(null)" ] || fail "TresPerNode set"
grep -q "passed through unchanged (on_error=accept)" "$CRIUS_LAB_DIR/log/slurmctld.log" || fail "no log line for the passed job"
INNER
chmod +x "$TEST_TMP/inner2.sh"
plugin_lab_run a100:2x8,v100:2x8 "$TEST_TMP/broken.toml" "$TEST_TMP/inner2.sh" 2>&1 | tee out2.txt
[ "${PIPESTATUS[0]}" = 0 ] || fail "on_error=accept"

# 3. good [job_submit]: partitions = ["v100"] is the default set, objective = "efficiency",
#    max_gpus = 4 bounds every Cell
{ base; printf '\n[job_submit]\nobjective = "efficiency"\npartitions = ["v100"]\nrecord_top = 2\non_error = "reject"\nmax_gpus = 4\n'; } >"$TEST_TMP/good.toml"
cat >"$TEST_TMP/inner3.sh" <<'INNER'
#!/usr/bin/env bash
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
id=$(sbatch_wait -o g.out --crius-model=bert__1.3B --crius-global-batch=64 job.sh) || fail "crius job refused"
cat g.out
grep -q '^part=v100 cell=v100:' g.out || fail "partitions=[v100] not honoured"
scontrol show job "$id" | grep -o 'AdminComment=.*' | grep -q '"objective":"efficiency"' || fail "objective not recorded"
scontrol show job "$id" | sed -n 's/^ *AdminComment=//p' | python3 -c 'import json,sys; r=json.load(sys.stdin); sys.exit(len(r["top"]) != 2)' ||
  fail "record_top = 2 not honoured: $(scontrol show job "$id" | grep AdminComment)"
# -p a100 is still allowed explicitly
sbatch_wait -o g2.out -p a100 --crius-model=bert__1.3B --crius-global-batch=64 job.sh >/dev/null || fail "-p a100 refused"
grep -q '^part=a100 cell=a100:' g2.out || fail "-p a100: $(cat g2.out)"
# max_gpus = 4: a model no Cell of 4 GPUs holds is refused, naming the key
! sbatch -o /dev/null --crius-model=bert__15B --crius-global-batch=256 job.sh 2>big.err || fail "bert__15B accepted on 4 GPUs"
grep -q 'max_gpus' big.err || fail "the refusal does not name max_gpus: $(cat big.err)"
# plugstack.conf arguments: key=value, unknown keys rejected (a copy of slurm.conf with its own plugstack)
mkdir -p alt && cp "$CRIUS_LAB_DIR"/etc/{slurm.conf,gres.conf} alt/
sed -i "s|^PlugStackConfig=.*|PlugStackConfig=$PWD/alt/plugstack.conf|" alt/slurm.conf
for args in "bogus=1" "validate=maybe" "max_model_kib=999" "conf"; do
  echo "optional $B/plugins/spank_crius.so $args" >alt/plugstack.conf
  SLURM_CONF=$PWD/alt/slurm.conf sbatch --help >help.out 2>help.err
  echo "plugstack args '$args': $(grep crius help.err)"
  grep -q "crius: plugstack.conf: .*${args%%=*}" help.err || fail "plugstack argument '$args' not rejected"
  ! grep -q -- --crius-model help.out || fail "options registered despite bad argument '$args'"
done
echo "optional $B/plugins/spank_crius.so validate=syntax max_model_kib=1 conf=$CRIUS_CONF" >alt/plugstack.conf
SLURM_CONF=$PWD/alt/slurm.conf sbatch --help 2>&1 | grep -q -- '--crius-model=NAME|FILE' || fail "good plugstack arguments refused"
head -c 2048 /dev/zero | tr '\0' '#' >big.toml
! SLURM_CONF=$PWD/alt/slurm.conf sbatch --crius-model=./big.toml --crius-global-batch=1 job.sh 2>err.txt || fail "max_model_kib=1 not honoured"
grep -q "larger than the 1 KiB limit" err.txt || fail "max_model_kib: $(cat err.txt)"

# A job submitted from inside a crius job does not inherit the crius options.
cat >nest.sh <<'N'
#!/bin/bash
env | grep -c '_SLURM_SPANK_OPTION_crius' >options-seen.txt
sbatch --parsable -o /dev/null --wrap true >nested.id
N
sbatch_wait -o nest.out --crius-model=bert__1.3B --crius-global-batch=64 nest.sh >/dev/null || fail "nesting job failed"
[ "$(cat options-seen.txt)" = 0 ] || fail "the crius job's environment carries its options: $(cat options-seen.txt)"
nested=$(cat nested.id)
[ -n "$nested" ] || fail "nested sbatch failed"
[ -z "$(job_field "$nested" AdminComment)" ] || fail "nested job $nested became a crius job: $(job_field "$nested" AdminComment)"

# crius.toml is reloaded when it changes, without restarting slurmctld; a broken edit keeps
# the last good configuration.
sed -i 's/^partitions = \["v100"\]/partitions = ["a100"]/' "$CRIUS_CONF"
sleep 11
sbatch_wait -o r.out --crius-model=bert__1.3B --crius-global-batch=64 job.sh >/dev/null || fail "after reload"
grep -q '^part=a100 cell=a100:' r.out || fail "the changed crius.toml was not reloaded: $(cat r.out)"
grep -q "job_submit/crius: reloaded $CRIUS_CONF" "$CRIUS_LAB_DIR/log/slurmctld.log" || fail "no reload line in the log"
printf 'bogus = 1\n' >>"$CRIUS_CONF"
sleep 11
sbatch_wait -o r2.out --crius-model=bert__1.3B --crius-global-batch=64 job.sh >/dev/null || fail "after a broken edit"
grep -q '^part=a100 cell=a100:' r2.out || fail "a broken edit lost the configuration: $(cat r2.out)"
grep -q "changed but does not load, the previous configuration stays" "$CRIUS_LAB_DIR/log/slurmctld.log" ||
  fail "no log line for the broken edit"
INNER
chmod +x "$TEST_TMP/inner3.sh"
plugin_lab_run a100:2x8,v100:2x8 "$TEST_TMP/good.toml" "$TEST_TMP/inner3.sh" || fail "good [job_submit]"
echo ok
