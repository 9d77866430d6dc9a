#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Plugins loaded into a Slurm release other than the one they were built for (crius(7), SLURM
# RELEASES): copies of the built plugins with another release in plugin_version.
#  1. spank_crius.so of another major.minor, on the shipped `optional` plugstack line: sbatch
#     skips it and still submits plain jobs; the --crius-* options are then unknown.
#  2. the same with only the micro version changed: Slurm loads it (SPANK plugins need only
#     major.minor to match) and crius jobs are submitted as usual.
#  3. job_submit_crius.so of another micro version: slurmctld refuses it ("Incompatible Slurm
#     plugin") and does not start, the plugin's code never runs.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
command -v readelf >/dev/null || { echo "readelf not installed (binutils)"; exit 77; }
cd "$TEST_TMP" || exit 1

# set_version SO VERSION_NUMBER: rewrites the 4-byte plugin_version of SO in place.
set_version() {
  python3 - "$1" "$2" <<'PY' || fail "cannot patch plugin_version of $1"
import re, struct, subprocess, sys
so, version = sys.argv[1], int(sys.argv[2])
syms = subprocess.run(["readelf", "-Ws", "--dyn-syms", so], capture_output=True, text=True, check=True).stdout
addr = next(int(l.split()[1], 16) for l in syms.splitlines() if l.split()[-1:] == ["plugin_version"])
secs = subprocess.run(["readelf", "-SW", so], capture_output=True, text=True, check=True).stdout
for m in re.finditer(r"\]\s+\S+\s+\S+\s+([0-9a-f]{16})\s+([0-9a-f]+)\s+([0-9a-f]+)", secs):
    start, off, size = int(m[1], 16), int(m[2], 16), int(m[3], 16)
    if start <= addr < start + size and start:
        with open(so, "r+b") as f:
            f.seek(addr - start + off)
            f.write(struct.pack("<I", version))
        break
else:
    sys.exit("plugin_version is in no section")
PY
}
built=$(python3 -c 'import ctypes,os,sys; ctypes.CDLL(sys.argv[2], mode=os.RTLD_LAZY | os.RTLD_GLOBAL); print(ctypes.c_uint32.in_dll(ctypes.CDLL(sys.argv[1], mode=os.RTLD_LAZY), "plugin_version").value)' \
  "$B/plugins/spank_crius.so" "$(libslurmfull)") || fail "cannot read plugin_version"
other_minor=$((built ^ 0x100))  # another major.minor: 22.05 -> 22.04, 24.11 -> 24.10
other_micro=$((built ^ 0x1))    # the same release, another micro version
mkdir -p minor micro
cp "$B/plugins/spank_crius.so" minor/ && set_version minor/spank_crius.so $other_minor
cp "$B/plugins/spank_crius.so" micro/ && set_version micro/spank_crius.so $other_micro
cp "$B/plugins/job_submit_crius.so" micro/ && set_version micro/job_submit_crius.so $other_micro
chmod -R a+rX minor micro
printf '#!/bin/bash\necho "cell=${CRIUS_CELL:-none}"\n' >job.sh
crius_conf a100:1x8 >crius.toml

cat >inner.sh <<'INNER'
#!/usr/bin/env bash
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
crius=(--crius-model=bert__1.3B --crius-global-batch=64)
# 1. another major.minor, optional: skipped, plain jobs still run
echo "optional $TEST_TMP/minor/spank_crius.so" >minor.conf
sed -i "s|^PlugStackConfig=.*|PlugStackConfig=$TEST_TMP/minor.conf|" "$SLURM_CONF"
id=$(sbatch --parsable -o plain.out job.sh 2>plain.err) || fail "a plain sbatch failed beside a mismatched optional SPANK plugin: $(cat plain.err)"
cat plain.err
sbatch -o /dev/null "${crius[@]}" job.sh 2>opt.err && fail "--crius-model accepted although the plugin was skipped"
grep -q "unrecognized option" opt.err || fail "no clear refusal of --crius-model: $(cat opt.err)"
sbatch -v --parsable -o /dev/null job.sh 2>verbose.err >/dev/null || fail "sbatch -v failed"
grep -E "Incompatible Slurm plugin.*spank_crius.so|Failed to load optional plugin.*spank_crius.so" verbose.err ||
  fail "sbatch -v does not say why the plugin was skipped: $(cat verbose.err)"
# 2. another micro version: loaded, crius jobs submitted
echo "optional $TEST_TMP/micro/spank_crius.so" >micro.conf
sed -i "s|^PlugStackConfig=.*|PlugStackConfig=$TEST_TMP/micro.conf|" "$SLURM_CONF"
id=$(sbatch --parsable -o /dev/null "${crius[@]}" job.sh) || fail "a SPANK plugin of another micro version was refused"
[ -n "$(job_field "$id" AdminComment)" ] || fail "job $id has no crius record"
echo "ok: the micro-version SPANK plugin submitted crius job $id"
INNER
chmod +x inner.sh
plugin_lab_run a100:1x8 crius.toml "$TEST_TMP/inner.sh" || fail "lab run failed"

# 3. job_submit of another micro version: slurmctld refuses it and does not start. Where crius is
#    also installed in Slurm's own PluginDir (the package check), slurmctld goes on searching its
#    PluginDir after refusing the lab's copy and loads the installed one: then it starts, and the
#    refusal of the lab's copy is what shows.
mkdir -p lab3
installed=$(ls /usr/lib/*/slurm-wlm/job_submit_crius.so /usr/lib/*/slurm/job_submit_crius.so /usr/lib64/slurm/job_submit_crius.so /usr/lib/slurm/job_submit_crius.so 2>/dev/null | head -n 1)
if "$TOP/scripts/crius-lab" run --dir "$TEST_TMP/lab3" --nodes a100:1x8 --plugins "$TEST_TMP/micro" \
  --job-submit crius --crius-conf crius.toml -- true >lab3.out 2>&1; then
  [ -n "$installed" ] || fail "slurmctld started with a job_submit plugin of another micro version"
  echo "slurmctld started with the installed $installed after refusing the lab's copy"
elif [ -n "$installed" ]; then
  fail "slurmctld did not start although $installed is installed: $(tail -n 5 lab3.out)"
fi
grep -h "Incompatible Slurm plugin.*$TEST_TMP/micro/job_submit_crius.so\|Incompatible Slurm plugin.*lab3/plugins/job_submit_crius.so" \
  lab3/log/slurmctld.log lab3/log/*.out 2>/dev/null | head -n 2 | grep . ||
  fail "slurmctld's log does not say why: $(tail -n 5 lab3/log/slurmctld.log 2>/dev/null)"
[ -n "$installed" ] || ! grep -q "job_submit/crius: loaded" lab3/log/slurmctld.log || fail "the mismatched plugin's init() ran"
echo ok
