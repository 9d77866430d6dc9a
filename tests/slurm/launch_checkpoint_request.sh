#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# On a real cluster (a40:1x2), both launchers: criusd's checkpoint request (SIGUSR1 to the batch
# shell, as criusd sends it: `scancel --signal=USR1 --batch`) never kills a Python rank that has
# no handler for it, although srun's step gets it on every process; a rank with a handler gets
# it. The job ends COMPLETED.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
command -v mpirun >/dev/null || { echo "mpirun not installed"; exit 77; }
[ -x /usr/bin/python3 ] || { echo "python3 not installed"; exit 77; }
conf=$TEST_TMP/crius.toml
crius_conf a40:1x2 >"$conf"
cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
cat >prog.py <<'PY'
import os, signal, sys, time
rank, out = os.environ["RANK"], sys.argv[1]
if rank == "1":
    signal.signal(signal.SIGUSR1, lambda s, f: open(f"{out}.got.{rank}", "w").write("USR1"))
open(f"{out}.ready.{rank}", "w").close()
for _ in range(100):
    if os.path.exists(f"{out}.got.1") and rank == "1":
        break
    time.sleep(0.1)
time.sleep(1)
print(f"rank {rank} ended normally", flush=True)
PY
for launcher in srun mpirun; do
  cat >"$launcher.sh" <<J
#!/bin/bash
export PATH="$B/bin:\$PATH" OMPI_MCA_btl=self,tcp OMPI_MCA_mpi_yield_when_idle=1
[ "\${CRIUS_LAB_HOSTS:-0}" = 1 ] || export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
exec crius-launch --launcher $launcher -- /usr/bin/python3 "$TEST_TMP/prog.py" "$TEST_TMP/$launcher"
J
  id=$(sbatch --parsable -o "$launcher.out" --crius-model=bert__1.3B --crius-global-batch=256 --crius-cell=a40:1x2 \
    "$launcher.sh") || fail "$launcher: sbatch"
  for _ in $(seq 150); do [ -e "$launcher.ready.0" ] && [ -e "$launcher.ready.1" ] && break; sleep 0.2; done
  [ -e "$launcher.ready.1" ] || { cat "$launcher.out"; fail "$launcher: the ranks did not start"; }
  scancel --signal=USR1 --batch "$id"
  for _ in $(seq 150); do case $(job_field "$id" JobState) in COMPLETED | FAILED | CANCELLED) break ;; esac; sleep 0.2; done
  cat "$launcher.out"
  [ "$(job_field "$id" JobState)" = COMPLETED ] || fail "$launcher: job $id $(job_field "$id" JobState): a rank did not survive the request"
  [ "$(grep -c 'ended normally' "$launcher.out")" = 2 ] || fail "$launcher: not every rank ended normally"
  [ -e "$launcher.got.1" ] || fail "$launcher: the rank with a handler did not get the request"
  grep -q "rank 0: checkpoint request not passed on as SIGUSR1" "$launcher.out" || fail "$launcher: rank 0's skipped request not reported"
done
echo "launch_checkpoint_request passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a40:1x2 "$conf" "$TEST_TMP/inner.sh"
