#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# `make install DESTDIR=... prefix=/usr` puts programs, plugins, man pages and etc files where a
# Slurm sysadmin expects them, an upgrade keeps the site's edits, and `make uninstall` removes
# them again (not the edits) once slurm.conf no longer loads the plugin.
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
# systemctl stop drains criusd: no move is left half done
grep -qx 'ExecStop=/usr/sbin/criusd --drain 300 --lock /run/criusd/criusd.lock' "$unit" ||
  { echo "criusd.service does not drain criusd on stop: $(grep ExecStop "$unit")"; fail=1; }
# ProtectSystem=strict, but the metrics file criusd(8) suggests can be written
grep -qx 'ProtectSystem=strict' "$unit" && grep -qx 'ReadWritePaths=-/var/lib/prometheus/node-exporter' "$unit" ||
  { echo "criusd.service cannot write the metrics file where criusd(8) suggests it"; fail=1; }

# The site's files (crius.toml, gpus.toml, models.toml) are conffiles: an upgrade replaces one
# only where the site left it as the last release shipped it; an edited one is kept and this
# release's lands beside it as FILE.crius-new.
etc=$stage/etc/crius
echo '# edited by the site' >>"$etc/gpus.toml"
edited=$(sha256sum <"$etc/gpus.toml")
echo '# as the last release shipped it' >"$etc/models.toml"  # unedited, of an older release
sed -i "s|^[0-9a-f]*  models.toml\$|$(sha256sum <"$etc/models.toml" | cut -d' ' -f1)  models.toml|" "$etc/.shipped.sha256"
make -s -C "$TOP" B="$B" install DESTDIR="$stage" prefix=/usr sysconfdir=/etc >"$TEST_TMP/upgrade.log" 2>&1 ||
  { cat "$TEST_TMP/upgrade.log"; exit 1; }
[ "$(sha256sum <"$etc/gpus.toml")" = "$edited" ] || { echo "the upgrade overwrote the site's gpus.toml"; fail=1; }
cmp -s "$etc/gpus.toml.crius-new" "$TOP/etc/crius/gpus.toml" || { echo "no gpus.toml.crius-new beside the edited one"; fail=1; }
grep -q "kept $etc/gpus.toml (edited by the site)" "$TEST_TMP/upgrade.log" || { echo "the upgrade did not say it kept gpus.toml"; fail=1; }
cmp -s "$etc/models.toml" "$TOP/etc/crius/models.toml" || { echo "the upgrade kept an unedited models.toml of the last release"; fail=1; }
[ ! -e "$etc/models.toml.crius-new" ] || { echo "models.toml.crius-new beside an unedited file"; fail=1; }

# Uninstall refuses while slurm.conf still loads the job_submit plugin (slurmctld would not start),
# then removes everything but the site's edits.
mkdir -p "$stage$slurmconfdir"
printf 'ClusterName=x\nJobSubmitPlugins=lua,crius\n' >"$stage$slurmconfdir/slurm.conf"
if make -s -C "$TOP" B="$B" uninstall DESTDIR="$stage" prefix=/usr sysconfdir=/etc >"$TEST_TMP/refused.log" 2>&1; then
  echo "make uninstall went on with JobSubmitPlugins=lua,crius in slurm.conf"; fail=1
elif ! grep -q "still lists crius in JobSubmitPlugins" "$TEST_TMP/refused.log" || [ ! -e "$stage/usr/sbin/criusd" ]; then
  echo "unclear refusal, or it removed files:"; cat "$TEST_TMP/refused.log"; fail=1
fi
printf 'ClusterName=x\nJobSubmitPlugins=lua\n' >"$stage$slurmconfdir/slurm.conf"
make -s -C "$TOP" B="$B" uninstall DESTDIR="$stage" prefix=/usr sysconfdir=/etc >"$TEST_TMP/uninstall.log" 2>&1 ||
  { cat "$TEST_TMP/uninstall.log"; exit 1; }
grep -q "left $etc/gpus.toml (edited by the site)" "$TEST_TMP/uninstall.log" || { echo "uninstall did not say it left gpus.toml"; fail=1; }
left=$(cd "$stage" && find . -type f | grep -vxF -e "./etc/crius/gpus.toml" -e ".$slurmconfdir/slurm.conf" || true)
[ -z "$left" ] || { echo "left after uninstall:"; echo "$left"; fail=1; }
[ "$(sha256sum <"$etc/gpus.toml" 2>/dev/null)" = "$edited" ] || { echo "uninstall removed the site's gpus.toml"; fail=1; }
exit $fail
