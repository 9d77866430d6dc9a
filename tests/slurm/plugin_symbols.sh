#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The plugins export only the plugin symbols (nm -D), are not linked with libslurm (the host
# process provides Slurm's symbols), and plugin_version equals the Slurm version they were
# built against (job_submit plugins must match major.minor.micro exactly).
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
command -v slurmctld >/dev/null || { echo "slurmctld not installed (its libslurmfull resolves the plugins' Slurm symbols)"; exit 77; }
[ -z "${SANITIZE:-}" ] || { echo "sanitizer build: the plugins carry sanitizer runtime symbols"; exit 77; }
want=$(sed -n 's/^SLURM_VERSION_NUMBER = //p' "$TOP/config.mk" 2>/dev/null)  # the headers built against
[ -n "$want" ] || { echo "no SLURM_VERSION_NUMBER in config.mk"; exit 77; }
want=$((want))
check() { # so expected-symbols...
  local so=$B/plugins/$1; shift
  [ -f "$so" ] || fail "$so not built"
  local got expect
  got=$(nm -D --defined-only "$so" | awk '{print $3}' | sort | tr '\n' ' ')
  expect=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
  echo "$(basename "$so"): exports $got"
  [ "$got" = "$expect" ] || fail "$(basename "$so") exports '$got', want '$expect'"
  ! ldd "$so" | grep -q libslurm || fail "$(basename "$so") is linked with libslurm"
  local v
  v=$(python3 - "$so" "$(libslurmfull)" <<'PY'
import ctypes, os, sys
ctypes.CDLL(sys.argv[2], mode=os.RTLD_LAZY | os.RTLD_GLOBAL)  # as in slurmctld, sbatch, slurmstepd
lib = ctypes.CDLL(sys.argv[1], mode=os.RTLD_LAZY | os.RTLD_LOCAL)
print(ctypes.c_uint32.in_dll(lib, "plugin_version").value)
print(ctypes.c_char_p(ctypes.addressof(ctypes.c_char.in_dll(lib, "plugin_type"))).value.decode())
PY
) || fail "cannot dlopen $(basename "$so")"
  echo "  plugin_version=$(sed -n 1p <<<"$v") (want $want) plugin_type=$(sed -n 2p <<<"$v")"
  [ "$(sed -n 1p <<<"$v")" = "$want" ] || fail "$(basename "$so"): plugin_version $(sed -n 1p <<<"$v") != SLURM_VERSION_NUMBER $want"
  PLUGIN_TYPE=$(sed -n 2p <<<"$v")
}
check job_submit_crius.so plugin_name plugin_type plugin_version init fini job_submit job_modify
[ "$PLUGIN_TYPE" = job_submit/crius ] || fail "plugin_type '$PLUGIN_TYPE'"
check spank_crius.so plugin_name plugin_type plugin_version spank_plugin_version slurm_spank_init \
  slurm_spank_init_post_opt slurm_spank_local_user_init slurm_spank_exit
[ "$PLUGIN_TYPE" = spank ] || fail "plugin_type '$PLUGIN_TYPE'"
# the running Slurm is the one built against
# (configure allows them to differ only with --with-slurm, a staged upgrade: then not compared)
built_for=$(sed -n 's/^SLURM_VERSION = //p' "$TOP/config.mk")
configured_running=$(sed -n 's/^SLURM_RUNNING_VERSION = //p' "$TOP/config.mk")
if [ -n "$configured_running" ] && [ "$configured_running" != "$built_for" ]; then
  echo "built for Slurm $built_for with configure --with-slurm while slurmctld is $configured_running: not compared"
elif command -v slurmctld >/dev/null; then
  run=$(slurmctld -V | awk '{print $2}')
  IFS=. read -r a b c <<<"$run"
  [ $(((a << 16) + (b << 8) + c)) = "$want" ] || fail "installed slurmctld is $run, plugins built for $want; rebuild"
fi
echo ok
