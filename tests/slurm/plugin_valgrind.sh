#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# slurmctld under valgrind memcheck with job_submit/crius loaded: a stream of good and bad
# crius submissions and plain jobs gives no memcheck error (the env_size+2 and xmalloc rules
# of notes/slurm-22.05.md), and after the bad ones slurmctld still accepts and runs jobs.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
printf '#!/bin/bash\necho "ran $CRIUS_CELL"\n' >job.sh
G=--crius-global-batch=64
ids=()
good() { local id; id=$(sbatch --parsable -o "out.%j" "$@" job.sh) || fail "good submission refused: $*"; ids+=("$id"); }
badsub() { ! sbatch -o /dev/null "$@" job.sh 2>>bad.err || fail "bad submission accepted: $*"; }
for round in 1 2; do
  good --crius-model=bert__350M $G
  good --crius-model=bert__350M $G --crius-cell=v100:1x2
  good -p a100 --gres=gpu:a100:1                       # plain job
  good --crius-model=gpt3-125m --crius-global-batch=16 --crius-iters=100 --crius-deadline=10:00
  badsub --crius-model=bert__350M                      # no batch (rejected by job_submit)
  badsub --crius-model=bert__350M $G --crius-cell=v100:9x8
  badsub --crius-model=llama2-70b --crius-global-batch=512 --crius-cell=v100:1x1
  badsub --crius-model=bert__350M $G --crius-deadline=5
  badsub -p nosuch,other --crius-model=bert__350M $G
  # srun and salloc allocations: no batch environment, only spank_job_env is rewritten
  srun --crius-model=bert__350M $G --crius-cell=a100:1x2 true || fail "srun crius job"
  salloc --crius-model=bert__350M $G srun true >/dev/null 2>&1 || fail "salloc crius job"
  ! srun --crius-model=bert__350M $G --crius-cell=a100:5x8 true 2>>bad.err || fail "bad srun accepted"
done
grep -c 'crius' bad.err
id=$(sbatch_wait -o last.out --crius-model=bert__350M $G job.sh) || fail "good job after the bad ones"
grep -q '^ran v100:\|^ran a100:' last.out || fail "last job: $(cat last.out)"
deadline=$((SECONDS + 60))
while [ -n "$(squeue -h -o %i)" ]; do [ $SECONDS -lt $deadline ] || fail "jobs did not finish"; sleep 0.5; done
for id in "${ids[@]}"; do
  [ "$(job_field "$id" JobState)" = COMPLETED ] || fail "job $id: $(job_field "$id" JobState)"
done
echo "${#ids[@]} good jobs completed"
INNER
chmod +x "$TEST_TMP/inner.sh"
CRIUS_LAB_TIMEOUT=60 plugin_lab_run a100:2x8,v100:2x8 "$TOP/etc/crius/crius.toml" "$TEST_TMP/inner.sh" --valgrind-ctld ||
  fail "lab run failed"
logs=("$TEST_TMP"/lab/log/vg.*.log)
[ -f "${logs[0]}" ] || fail "no valgrind log"
for l in "${logs[@]}"; do
  [ -s "$l" ] || continue  # a forked child (24.11's slurmscriptd) that re-executes without valgrind
  grep -q 'ERROR SUMMARY' "$l" || { tail -n 20 "$l"; fail "$l: valgrind did not finish (no ERROR SUMMARY)"; }
  grep -H 'ERROR SUMMARY' "$l"
  grep -q 'ERROR SUMMARY: 0 errors' "$l" || { grep -B2 -A25 'Invalid\|uninitialised\|Mismatched' "$l" | head -n 80; fail "memcheck errors in slurmctld"; }
done
echo ok
