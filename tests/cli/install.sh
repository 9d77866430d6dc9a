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

make -s -C "$TOP" B="$B" uninstall DESTDIR="$stage" prefix=/usr sysconfdir=/etc >/dev/null
left=$(cd "$stage" && find . -type f)
[ -z "$left" ] || { echo "left after uninstall:"; echo "$left"; fail=1; }
exit $fail
