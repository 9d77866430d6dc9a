#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-lab: a cluster with two GPU types runs typed-GRES jobs on the right fake nodes with the
# right GPUs visible, and `down` leaves no process of the lab behind.
set -u
command -v slurmctld >/dev/null || { echo "slurmctld not installed"; exit 77; }
LAB=$TEST_TMP/lab
fail() { echo "FAIL: $*"; exit 1; }

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -eu
cd "$TEST_TMP"
sinfo -N -o '%N %P %T %G %f'
[ "$(sinfo -h -N -o %T | grep -cx idle)" = 4 ] || { echo "not 4 idle nodes"; exit 1; }
cat >job.sh <<'J'
#!/bin/bash
echo "node=$SLURMD_NODENAME cvd=$CUDA_VISIBLE_DEVICES part=$SLURM_JOB_PARTITION"
J
sbatch -W -p a100 --gres=gpu:a100:4 -o "$TEST_TMP/a100.out" job.sh
cat a100.out
grep -Eq '^node=a100-[12] cvd=0,1,2,3 part=a100$' a100.out || { echo "a100 job: wrong node or GPUs"; exit 1; }
out=$(srun -p v100 -N2 --gres=gpu:v100:2 bash -c 'echo "$SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"' | sort)
echo "$out"
[ "$out" = "v100-1 0,1
v100-2 0,1" ] || { echo "v100 srun: unexpected output"; exit 1; }
# an 8-GPU request fits a node, a 9-GPU one never can
sbatch -W -p v100 --gres=gpu:v100:8 -o v8.out --wrap 'echo $CUDA_VISIBLE_DEVICES' && grep -qx 0,1,2,3,4,5,6,7 v8.out
! sbatch -p v100 --gres=gpu:v100:9 --wrap true 2>err.txt || { echo "9 GPUs accepted"; exit 1; }
cat err.txt
# a job left running must be stopped by down
sbatch -p a100 --wrap 'sleep 600' -o /dev/null
# record the daemons' PIDs for the caller
cat "$CRIUS_LAB_DIR"/run/*.pid "$CRIUS_LAB_DIR"/munge/munged.pid >"$TEST_TMP/pids"
INNER
chmod +x "$TEST_TMP/inner.sh"

start=$(date +%s.%N)
"$TOP/scripts/crius-lab" run --dir "$LAB" --nodes a100:2x8,v100:2x8 -- "$TEST_TMP/inner.sh" || fail "lab run failed (rc $?)"
echo "lab up+tests+down took $(echo "$(date +%s.%N) - $start" | bc) s"
[ -s "$TEST_TMP/pids" ] || fail "no PIDs recorded"
n=$(wc -l <"$TEST_TMP/pids")
[ "$n" -eq 6 ] || fail "expected 6 daemons (munged, slurmctld, 4 slurmd), got $n"
for p in $(cat "$TEST_TMP/pids"); do
  if kill -0 "$p" 2>/dev/null && ! grep -q '^State:.*Z' /proc/$p/status; then fail "daemon PID $p still alive after down"; fi
done
real_lab=$(cd "$LAB" && pwd -P)
left=
for d in /proc/[0-9]*; do
  tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF "$real_lab" && left+=" ${d#/proc/}"
  grep -qzxF "SLURM_CONF=$real_lab/etc/slurm.conf" "$d/environ" 2>/dev/null && [ "${d#/proc/}" != $$ ] && left+=" ${d#/proc/}(env)"
done
[ -z "$left" ] || { ps -o pid,ppid,stat,cmd -p "${left//(env)/}" 2>/dev/null; fail "processes of the lab left:$left"; }
# down again is a no-op
"$TOP/scripts/crius-lab" down --dir "$LAB" || fail "second down failed"
echo "ok"
