#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A crius job's ranks inside a container image (a40:1x2, real Slurm): a Debian minbase root with
# python3 and the job's code, but no crius binary, no libslurm and no slurm.conf, stands in for
# the image; `chroot ROOT` between srun and the rank (crius-launch --mpi-arg) stands in for
# pyxis's --container-image. With --rank-shim sh every rank gets the plan's environment from the
# job's record: RANK, WORLD_SIZE, its TP/DP/PP ranks, the plan JSON.
# The root is made once with debootstrap (about 35 s, from this machine's Debian mirror) and kept
# in /var/tmp/crius-test-minbase-CODENAME; without debootstrap or the mirror the test skips.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ "$(id -u)" = 0 ] || { echo "needs root (chroot)"; exit 77; }
command -v debootstrap >/dev/null || { echo "debootstrap not installed (the stand-in image is made with it)"; exit 77; }
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
root=/var/tmp/crius-test-minbase-$codename
if [ ! -x "$root/usr/bin/python3" ]; then
  mirror=$(apt-cache policy 2>/dev/null | awk '$3 ~ /^[a-z]+\/main$/ && $2 ~ /^(https?|file):/ { print $2; exit }')
  rm -rf "$root.part"
  debootstrap --variant=minbase --include=python3-minimal "$codename" "$root.part" "${mirror:-http://deb.debian.org/debian}" \
    >"$TEST_TMP/debootstrap.log" 2>&1 || { tail -n 3 "$TEST_TMP/debootstrap.log"; rm -rf "$root.part"; echo "debootstrap failed (no Debian mirror?)"; exit 77; }
  mv "$root.part" "$root"
fi
# The stand-in image holds none of crius, libslurm or Slurm's configuration.
! ls "$root"/usr/bin/crius* "$root"/usr/local/bin/crius* >/dev/null 2>&1 || fail "the root holds a crius program"
! find "$root/usr/lib" -name 'libslurm*' | grep -q . || fail "the root holds libslurm"
[ ! -e "$root/etc/slurm/slurm.conf" ] || fail "the root holds slurm.conf"
rm -rf "$root/job" && mkdir -p "$root/job"
cat >"$root/job/prog.py" <<'PY'
import os  # python3-minimal: no json here
keys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "CRIUS_TP_RANK", "CRIUS_DP_RANK", "CRIUS_PP_RANK", "CRIUS_PLAN_JSON",
        "MASTER_ADDR", "MASTER_PORT"]
with open(f"/job/out.{os.environ['RANK']}", "w") as f:
    for k in keys:
        f.write(f"{k}={os.environ.get(k, '')}\n")
    f.write(f"root={os.path.exists('/job/prog.py')}\n")
PY
export CRIUS_TEST_ROOT=$root
conf=$TEST_TMP/crius.toml
crius_conf a40:1x2 >"$conf"
cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
cat >job.sh <<J
#!/bin/bash
exec "$B/bin/crius-launch" --launcher srun --rank-shim sh --mpi-arg chroot --mpi-arg "$CRIUS_TEST_ROOT" -- /usr/bin/python3 /job/prog.py
J
id=$(sbatch_wait -o job.out --crius-model=bert__1.3B --crius-global-batch=256 --crius-cell=a40:1x2 job.sh) ||
  { cat job.out; fail "job $id: $(job_field "$id" JobState)"; }
printf '%s' "$(job_field "$id" AdminComment)" >record.json
python3 - record.json "$CRIUS_TEST_ROOT/job" <<'PY' || { cat job.out; fail "the ranks in the root did not get the plan's environment"; }
import json, sys
plan = json.load(open(sys.argv[1]))["plan"]
st = plan["stages"]; tp, dp, world = st[0]["tp"], st[0]["dp"], sum(s["tp"] * s["dp"] for s in st)
for r in range(world):
    e = dict(line.rstrip("\n").split("=", 1) for line in open(f"{sys.argv[2]}/out.{r}"))
    assert e["root"] == "True", e
    assert (e["RANK"], e["WORLD_SIZE"]) == (str(r), str(world)), e
    assert (int(e["CRIUS_TP_RANK"]), int(e["CRIUS_DP_RANK"]), int(e["CRIUS_PP_RANK"])) == (r % tp, r // tp % dp, r // (tp * dp)), e
    assert json.loads(e["CRIUS_PLAN_JSON"]) == plan, (e["CRIUS_PLAN_JSON"], plan)
    assert e["MASTER_ADDR"] and e["MASTER_PORT"], e
print(world, "ranks ran in the root with the record's plan")
PY
echo "launch_container passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a40:1x2 "$conf" "$TEST_TMP/inner.sh"
