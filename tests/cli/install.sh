#!/usr/bin/env bash
# `make install DESTDIR=... prefix=/usr` puts programs, plugins, man pages and etc files where a
# Slurm sysadmin expects them, and `make uninstall` removes them again.
set -euo pipefail
stage=$TEST_TMP/stage
plugindir=$(sed -n 's/^SLURM_PLUGINDIR = //p' "$TOP/config.mk")
slurmconfdir=$(sed -n 's/^SLURM_SYSCONFDIR = //p' "$TOP/config.mk")
make -s -C "$TOP" B="$B" install DESTDIR="$stage" prefix=/usr sysconfdir=/etc >"$TEST_TMP/install.log" 2>&1 ||
  { cat "$TEST_TMP/install.log"; exit 1; }

fail=0
# Beside a slurmctld of another release (configure --with-slurm) and without DESTDIR, install
# refuses before writing anything: slurmctld would not start with the job_submit plugin.
other=$TEST_TMP/other
if make -s -C "$TOP" B="$B" install SLURM_RUNNING_VERSION=0.0.0 prefix="$other" sysconfdir="$other/etc" \
     SLURM_PLUGINDIR="$other/plugins" SLURM_SYSCONFDIR="$other/slurm" >"$TEST_TMP/refused.log" 2>&1; then
  echo "make install beside another slurmctld release was not refused"; fail=1
elif ! grep -q "this machine runs slurmctld 0.0.0.*DESTDIR" "$TEST_TMP/refused.log"; then
  echo "unclear refusal:"; cat "$TEST_TMP/refused.log"; fail=1
elif [ -e "$other" ]; then
  echo "the refused install wrote $(cd "$other" && find . -type f | head -n 3)"; fail=1
fi
expect() { if [ -e "$stage$1" ]; then echo "ok   $1"; else echo "MISSING $1"; fail=1; fi; }
for p in $(make -s -C "$TOP" B="$B" print-installed prefix=/usr sysconfdir=/etc); do expect "$p"; done
expect "$slurmconfdir/plugstack.conf.d/crius.conf"
# Nothing may land outside the expected roots.
stray=$(cd "$stage" && find . -type f | grep -vE "^\./(usr/bin|usr/sbin|usr/share/man|usr/lib/systemd/system|etc/crius|${plugindir#/}|${slurmconfdir#/})/" || true)
[ -z "$stray" ] || { echo "installed outside the expected places:"; echo "$stray"; fail=1; }
# Installed man pages must be the ones in man/.
for m in "$TOP"/man/*.[1-8]; do
  [ -e "$m" ] || continue
  s=${m##*.}; expect "/usr/share/man/man$s/$(basename "$m")"
done

# The systemd unit: well-formed, criusd as SlurmUser with the lock in its runtime directory.
unit=$stage/usr/lib/systemd/system/criusd.service
if command -v systemd-analyze >/dev/null; then
  # Only the installed binary and man page may be reported missing (they are under the stage).
  bad=$(systemd-analyze verify "$unit" 2>&1 | grep -vE "is not executable|Command 'man " || true)
  [ -z "$bad" ] || { echo "criusd.service: $bad"; fail=1; }
fi
grep -qx 'User=slurm' "$unit" && grep -qx 'NoNewPrivileges=yes' "$unit" &&
  grep -q -- '--lock /run/criusd/criusd.lock' "$unit" && grep -qx 'RuntimeDirectory=criusd' "$unit" ||
  { echo "criusd.service lacks its user, hardening or lock"; fail=1; }

make -s -C "$TOP" B="$B" uninstall DESTDIR="$stage" prefix=/usr sysconfdir=/etc >/dev/null
left=$(cd "$stage" && find . -type f)
[ -z "$left" ] || { echo "left after uninstall:"; echo "$left"; fail=1; }
exit $fail
