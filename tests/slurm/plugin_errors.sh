#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Every bad --crius-* request fails at submission, fast, with a message naming the problem
# (from the SPANK plugin on the submit host or from job_submit/crius in slurmctld), creates
# no job, and slurmctld still runs good jobs afterwards.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
printf '#!/bin/bash\necho ran\n' >job.sh
printf 'family = "transformer"\nlayers = "twelve"\nhidden = 1024\nheads = 16\nffn_hidden = 4096\nseq_len = 1024\nvocab = 50257\ndtype = "fp16"\n' >bad.toml
printf 'family = "transformer"\nlayers = 12\nhidden = 1024\nheads = 16\nffn_hidden = 4096\nseq_len = 1024\nvocab = 50257\ndtype = "fp16"\nwings = 2\n' >unknown-key.toml
head -c 10485760 /dev/zero | tr '\0' '#' >huge.toml
mkdir -p adir.toml
n=0
# bad CMD PATTERN ARGS...: CMD (sbatch/srun/salloc) with ARGS exits non-zero, prints "crius"
# and PATTERN on stderr, and no job is created (one that waits for resources instead of refusing
# is killed after 60 s, exit 124, and fails).
bad() {
  local cmd=$1 pat=$2 rc before after; shift 2
  n=$((n + 1))
  before=$(squeue -h -t all -o %i | wc -l)
  case $cmd in
    sbatch) timeout 60 sbatch -o /dev/null "$@" job.sh >out.txt 2>err.txt ;;
    srun) timeout 60 srun "$@" true >out.txt 2>err.txt ;;
    salloc) timeout 60 salloc "$@" true >out.txt 2>err.txt ;;
  esac
  rc=$?
  echo "[$n] $cmd $* -> rc $rc: $(grep -m1 crius err.txt)"
  [ $rc -ne 0 ] && [ $rc -ne 124 ] || { cat out.txt err.txt; fail "[$n] accepted (rc $rc)"; }
  grep -q 'crius' err.txt || { cat err.txt; fail "[$n] message does not mention crius"; }
  grep -Eq -- "$pat" err.txt || { cat err.txt; fail "[$n] message does not match /$pat/"; }
  after=$(squeue -h -t all -o %i | wc -l)
  [ "$after" = "$before" ] || fail "[$n] a job was created"
}
# says TEXT: the last refusal came from slurmctld with this Slurm error text (job_submit's code).
says() { grep -q "submission failed: $1\|allocation failure: $1\|Unable to allocate resources: $1" err.txt ||
  { cat err.txt; fail "[$n] Slurm's error text is not '$1'"; }; }
G=--crius-global-batch=256
# unknown model, with close matches
bad sbatch "unknown model 'bert__1.3'.*did you mean.*bert__1.3B" --crius-model=bert__1.3 $G
bad sbatch "unknown model 'foo'" --crius-model=foo $G
bad srun "unknown model 'lama2-7b'.*llama2-7b" --crius-model=lama2-7b $G
bad salloc "unknown model" --crius-model=gpt4 $G
# model files: malformed, unknown key, missing, a folder, 10 MB
bad sbatch "bad.toml:2:.*layers" --crius-model=./bad.toml $G
bad sbatch "unknown-key.toml:9:.*wings" --crius-model=./unknown-key.toml $G
bad sbatch "cannot read ./missing.toml" --crius-model=./missing.toml $G
bad sbatch "adir.toml is not a regular file" --crius-model=./adir.toml $G
bad sbatch "huge.toml is 10485760 bytes, larger than the 64 KiB limit" --crius-model=./huge.toml $G
# batch and other numbers
bad sbatch "--crius-global-batch: '0' is not a whole number" --crius-model=bert__1.3B --crius-global-batch=0
bad sbatch "--crius-global-batch: '-5'" --crius-model=bert__1.3B --crius-global-batch=-5
bad sbatch "--crius-global-batch: '99999999999999999999999'" --crius-model=bert__1.3B --crius-global-batch=99999999999999999999999
bad sbatch "--crius-global-batch: '1e6'" --crius-model=bert__1.3B --crius-global-batch=1e6
bad sbatch "--crius-iters: '0'" --crius-model=bert__1.3B $G --crius-iters=0
bad sbatch "--crius-global-batch is required" --crius-model=bert__1.3B
bad sbatch "--crius-model is required" $G
# impossible or unknown Cells
bad sbatch "larger than the partition" --crius-model=bert__1.3B $G --crius-cell=v100:4x8
says "Requested node configuration is not available"
bad sbatch "larger than the partition" --crius-model=bert__1.3B $G --crius-cell=a100:1x16
bad sbatch "no partition of type 'h100'" --crius-model=bert__1.3B $G --crius-cell=h100
bad sbatch "unknown GPU type 'v10'.*v100" --crius-model=bert__1.3B $G --crius-cell=v10
bad sbatch "no feasible Cell" --crius-model=llama2-70b --crius-global-batch=512 --crius-cell=v100:1x1
bad sbatch "--crius-cell: 'a100:2x'" --crius-model=bert__1.3B $G --crius-cell=a100:2x
bad sbatch "--crius-cell: 'a100:99999x8': nodes must be 1..65536" --crius-model=bert__1.3B $G --crius-cell=a100:99999x8
bad srun "larger than the partition" --crius-model=bert__1.3B $G --crius-cell=a100:3x8
# shell metacharacters and other junk
bad sbatch "not a model name" --crius-model='bert;rm -rf x' $G
bad sbatch "cannot read bert;rm -rf /" --crius-model='bert;rm -rf /' $G
bad sbatch "not a model name" --crius-model='$(id)' $G
bad sbatch "--crius-cell: 'a100\`id\`'" --crius-model=bert__1.3B $G '--crius-cell=a100`id`'
bad sbatch "--crius-runtime: 'megatron;id' is not megatron, megatron-core or alpa" --crius-model=bert__1.3B $G '--crius-runtime=megatron;id'
bad sbatch "--crius-framework: 'megatron:0.8;id': the release must be MAJOR.MINOR" --crius-model=bert__1.3B $G '--crius-framework=megatron:0.8;id'
bad sbatch "--crius-framework: 'megatron:0.7': Megatron-Core releases before 0.8" --crius-model=bert__1.3B $G --crius-framework=megatron:0.7
bad sbatch "framework megatron:0.19: Megatron-LM .Megatron-Core 0.19. trains transformers; model 'wide_resnet__1B'" --crius-model=wide_resnet__1B $G --crius-framework=megatron
bad sbatch "--crius-checkpoint-signal: 'KILL' is not a checkpoint signal .USR1, USR2, TERM, INT, HUP, URG or none." --crius-model=bert__1.3B $G --crius-checkpoint-signal=KILL
bad sbatch "--crius-deadline: 'soon'" --crius-model=bert__1.3B $G --crius-deadline=soon
bad sbatch "--crius-deadline needs --crius-iters" --crius-model=bert__1.3B $G --crius-deadline=1:00:00
says "Invalid argument"
# GPUs and their type are the Cell's: a request of the job's own is refused, not dropped
bad sbatch "--constraint: crius gives a crius job its GPU type as its constraint" -C a100 --crius-model=bert__1.3B $G
says "Invalid feature specification"
bad sbatch "--gres=gpu/--gpus\*: crius chooses a crius job's GPUs" --gres=gpu:2 --crius-model=bert__1.3B $G
says "Invalid generic resource (gres) specification"
bad sbatch "--gres=gpu/--gpus\*: crius chooses" --gpus=4 --crius-model=bert__1.3B $G
bad srun "--gres=gpu/--gpus\*: crius chooses" -n 1 --gpus-per-task=1 --crius-model=bert__1.3B $G
bad salloc "--gres=gpu/--gpus\*: crius chooses" --gres=gpu:a100:1 --crius-model=bert__1.3B $G
# a heterogeneous job
bad sbatch "a heterogeneous job cannot be a crius job" --crius-model=bert__1.3B $G -n1 : -n1
says "Requested operation not supported on this system"
# -p with no partition crius knows
scontrol create partition=other nodes=a100-1 >/dev/null 2>&1 || fail "cannot create partition 'other'"
bad sbatch "none of the job's partitions 'other' is described in crius.toml" -p other --crius-model=bert__1.3B $G
says "Invalid partition name specified"

# A deadline no Cell can meet: flagged (accepted, the user told why, the record says so),
# then, with [job_submit] deadline_miss = "reject", refused with the same reason.
id=$(sbatch --parsable -o /dev/null -H --crius-model=bert__1.3B $G --crius-iters=100000000 --crius-deadline=1:00 job.sh 2>err.txt) ||
  { cat err.txt; fail "a job with a deadline no Cell meets was not accepted (deadline_miss = flag)"; }
grep -q "crius: no Cell meets --crius-deadline=60s: the fastest, .* needs .* s for 100000000 iterations" err.txt ||
  { cat err.txt; fail "the submitter was not told that no Cell meets the deadline"; }
job_field "$id" AdminComment | grep -q '"deadline_met":false' || fail "the record of job $id does not say deadline_met false"
scancel "$id"
# job_submit's counters: written at the first crius submission it saw, then at most every 10 s
[ -f js.prom ] || fail "job_submit wrote no metrics_file"
printf 'deadline_miss = "reject"\n' >>"$TEST_TMP/conf/crius.toml"  # into the [job_submit] table the file ends with
sleep 11  # job_submit looks at crius.toml at most every 10 s
bad sbatch "no Cell meets --crius-deadline=60s: .*deadline_miss = \"reject\"" --crius-model=bert__1.3B $G --crius-iters=100000000 --crius-deadline=1:00
says "Invalid time specified"
cat js.prom
# metric NAME: its value in job_submit's metrics file (0 when absent)
metric() { awk -v n="$1" '$1 == n {v = $2} END {print v + 0}' js.prom; }
[ "$(metric 'crius_job_submit_rejections_total{reason="deadline"}')" = 1 ] &&
  [ "$(metric crius_job_submit_deadline_flagged_total)" = 1 ] &&
  [ "$(metric 'crius_job_submit_decisions_total{outcome="placed"}')" -ge 1 ] &&
  [ "$(metric 'crius_job_submit_rejections_total{reason="no_partition"}')" -ge 1 ] || fail "job_submit's metrics"
[ "$(stat -c %a js.prom)" = 644 ] || fail "metrics_file mode $(stat -c %a js.prom)"

# slurmctld is alive and still runs crius and plain jobs
id=$(sbatch_wait -o ok1.out --crius-model=bert__1.3B $G job.sh) || fail "good crius job after the bad ones"
grep -qx ran ok1.out || fail "good crius job did not run"
id=$(sbatch_wait -o ok2.out job.sh) || fail "plain job after the bad ones"
grep -qx ran ok2.out || fail "plain job did not run"
echo "$n bad submissions refused; good jobs still run"
INNER
chmod +x "$TEST_TMP/inner.sh"
cp -r "$TOP/etc/crius" "$TEST_TMP/conf"  # a copy: the test changes [job_submit]
printf '\n[job_submit]\nmetrics_file = "%s/js.prom"\n' "$TEST_TMP" >>"$TEST_TMP/conf/crius.toml"
plugin_lab_run a100:2x8,v100:2x8 "$TEST_TMP/conf/crius.toml" "$TEST_TMP/inner.sh"
