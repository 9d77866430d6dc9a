#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-discover --slurm on the DGX-2 export, pasted into a real Slurm 22.05 cluster (crius-lab):
# the slurm.conf NodeName= line and gres.conf lines (with Cores=) replace the lab's node v100-1,
# slurmctld and slurmd restart on them, and Slurm accepts the node with gpu:v100:16: it is idle,
# shows the discovered CPUs/sockets/cores/memory, and a job gets all 16 GPUs.
set -u
command -v slurmctld >/dev/null || { echo "slurmctld not installed"; exit 77; }
command -v crius-discover >/dev/null || { echo "crius-discover not built"; exit 1; }
LAB=$TEST_TMP/lab
crius-discover --xml "$TOP/tests/data/hwloc/nvidiaDGX2.xml" --gpus "$TOP/etc/crius/gpus.toml" \
  --slurm --gres-cores --node-name v100-1 >"$TEST_TMP/dgx2.slurm" || { echo "FAIL: crius-discover exit $?"; exit 1; }
cat "$TEST_TMP/dgx2.slurm"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
L=$CRIUS_LAB_DIR
D=$TEST_TMP/dgx2.slurm
fail() { echo "FAIL: $*"; tail -n 20 "$L"/log/slurmctld.log "$L"/log/slurmd-v100-1.log; exit 1; }
# Paste: the discovered NodeName= line (plus the lab's address/port, which are not hardware
# facts) and the gres.conf lines, with the fake device files of the lab instead of /dev/nvidia*.
orig=$(grep '^NodeName=v100-1 ' "$L/etc/slurm.conf") || fail "lab has no v100-1"
addr=$(grep -oE '(NodeHostname|NodeAddr|Port|State)=[^ ]+' <<<"$orig" | tr '\n' ' ')
node=$(grep '^NodeName=v100-1 .*Gres=gpu:v100:16' "$D") || fail "no NodeName line with Gres=gpu:v100:16"
{ grep -v '^NodeName=v100-1 ' "$L/etc/slurm.conf"; echo "$node $addr"; } >"$L/etc/slurm.conf.new"
{ grep -v '^NodeName=v100-1 ' "$L/etc/gres.conf"; grep '^NodeName=v100-1 Name=gpu' "$D" | sed "s|File=/dev/nvidia|File=$L/dev/nvidia|"; } >"$L/etc/gres.conf.new"
mv "$L/etc/slurm.conf.new" "$L/etc/slurm.conf"
mv "$L/etc/gres.conf.new" "$L/etc/gres.conf"
grep -h '^NodeName=v100-1' "$L/etc/slurm.conf" "$L/etc/gres.conf"

# Node hardware changes need a restart of slurmctld and slurmd (scontrol reconfigure refuses).
"$TOP/scripts/crius-lab" restart --dir "$L" || fail "crius-lab restart failed"
state=
for _ in $(seq 150); do state=$(sinfo -h -N -n v100-1 -o %T 2>/dev/null); [ "$state" = idle ] && break; sleep 0.2; done
scontrol show node v100-1
[ "$state" = idle ] || fail "node v100-1 is '$state', not idle"
show=$(scontrol show node v100-1)
for want in 'CPUTot=4' 'Sockets=2' 'CoresPerSocket=2' 'ThreadsPerCore=1' 'RealMemory=1546833' 'Gres=gpu:v100:16' 'AvailableFeatures=v100'; do
  grep -qF -- "$want" <<<"$show" || fail "scontrol show node lacks $want"
done
out=$(srun -p v100 -N1 --gres=gpu:v100:16 bash -c 'echo "$CUDA_VISIBLE_DEVICES"') || fail "16-GPU job failed"
[ "$out" = 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 ] || fail "16-GPU job saw '$out'"
echo "16-GPU job: CUDA_VISIBLE_DEVICES=$out"
! srun -p v100 --gres=gpu:v100:17 true 2>/dev/null || fail "17 GPUs accepted"
grep -E 'error:.*(v100-1|gres)' "$L/log/slurmctld.log" && fail "slurmctld logged errors about the node"
echo ok
INNER
chmod +x "$TEST_TMP/inner.sh"
# crius-lab serialises labs with a lock; another test's lab holding it is not a failure of ours.
for try in 1 2; do
  "$TOP/scripts/crius-lab" run --dir "$LAB" --nodes v100:1x16 -- "$TEST_TMP/inner.sh" 2>&1 | tee "$TEST_TMP/lab.out"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] && break
  grep -q 'could not take .*crius-lab.lock' "$TEST_TMP/lab.out" || { echo "FAIL: lab run rc $rc"; exit 1; }
  [ $try -eq 2 ] && { echo "crius-lab lock busy twice (another lab running)"; exit 77; }
done
echo "Slurm accepts the discovered DGX-2 node with gpu:v100:16"
