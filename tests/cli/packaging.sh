#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The packages hold what `make install` installs, each file in one package, and pin the Slurm
# they were built for: every file of `make print-installed` is matched by exactly one entry of
# one package, in debian/*.install (Debian's plugin folder and SchedMD's) and in rpm/crius.spec's
# %files (as rpmspec expands it); the RPMs require the Slurm of slurm-devel exactly
# (crius-slurm-controller) and its major.minor (crius-slurm-spank), and the spec refuses to be
# read with no Slurm to pin. scripts/check-rpm and scripts/check-packages build them.
set -euo pipefail
command -v rpmspec >/dev/null || { echo "rpmspec not installed (apt-get install rpm)"; exit 77; }
cd "$TOP"
spec=rpm/crius.spec
slurm=24.11.5
work=${TEST_TMP:-$(mktemp -d)}

rpmspec -P --define "slurm_version $slurm" --define '_unitdir /usr/lib/systemd/system' "$spec" >"$work/spec.parsed"
libdir=$(rpm --eval '%{_libdir}')
for sysroot in "debian /usr/lib/x86_64-linux-gnu/slurm-wlm" "debian /usr/lib/x86_64-linux-gnu/slurm" "rpm $libdir/slurm"; do
  read -r kind plugindir <<<"$sysroot"
  make -s B="$B" print-installed prefix=/usr sysconfdir=/etc SLURM_SYSCONFDIR=/etc/slurm \
    SLURM_PLUGINDIR="$plugindir" systemd_unitdir=/usr/lib/systemd/system | grep '^/' | grep -v '/\.shipped\.sha256$' >"$work/installed"
  python3 - "$kind" "$work/installed" "$work/spec.parsed" <<'PY'
import fnmatch, glob, os, re, sys
kind, installed, parsed = sys.argv[1:]
files = [l.strip() for l in open(installed) if l.strip()]
entries = []  # (package, pattern)
if kind == "debian":
    # crius-launch-cuda (build profile pkg.crius.cuda) replaces crius-launch: the same man pages,
    # its programs built with CUDA (debian/rules installs them)
    launch = [l.split()[0] for l in open("debian/crius-launch.install") if l.strip()]
    cuda = [l.split()[0] for l in open("debian/crius-launch-cuda.install") if l.strip()]
    if sorted(cuda) != sorted(l for l in launch if not l.startswith("usr/bin/")):
        sys.exit("FAIL: debian/crius-launch-cuda.install is not crius-launch's man pages")
    for path in sorted(glob.glob("debian/*.install")):
        pkg = os.path.basename(path)[:-len(".install")]
        if pkg == "crius-launch-cuda":
            continue
        for line in open(path):
            if not line.strip() or line.startswith("#"):
                continue
            src = line.split()[0]
            src = src[len("debian/tmp/"):] if src.startswith("debian/tmp/") else src
            entries.append((pkg, "/" + src))
else:
    pkg = None
    for line in open(parsed):
        line = line.strip()
        m = re.match(r"%files\s+(\S+)", line)
        if m:
            pkg = "crius-" + m.group(1); continue
        if line.startswith("%") and not re.match(r"%(config|dir|doc|license|attr)", line):
            pkg = None; continue
        if pkg is None or not line or line.startswith(("%doc", "%license", "#")):
            continue
        path = re.sub(r"^(%config(\([^)]*\))?|%dir)\s+", "", line)
        entries.append((pkg, path))
def matches(pattern, f):
    return fnmatch.fnmatchcase(f, pattern) or f.startswith(pattern.rstrip("/") + "/")
bad = []
for f in files:
    owners = [p for p, pat in entries if matches(pat, f)]
    if len(set(owners)) != 1:
        bad.append("%s: %s" % (f, ", ".join(sorted(set(owners))) or "in no package"))
if bad:
    sys.exit("FAIL (%s): %s" % (kind, "; ".join(bad)))
print("%s: the %d installed files each in one package" % (kind, len(files)))
PY
done

# The Slurm the RPMs pin
req_of() { rpmspec -q --define "slurm_version $slurm" --qf "[%{=NAME}: %{REQUIRENAME} %{REQUIREFLAGS:depflags} %{REQUIREVERSION}\n]" "$spec" | grep "^$1: " | sed "s/^$1: //; s/ *$//"; }
ctl=$(req_of crius-slurm-controller) spank=$(req_of crius-slurm-spank)
echo "crius-slurm-controller requires: $(echo "$ctl" | paste -sd, -)"
grep -qx "slurm = $slurm" <<<"$ctl" || { echo "FAIL: crius-slurm-controller does not require slurm = $slurm"; exit 1; }
grep -qx "slurm-slurmctld = $slurm" <<<"$ctl" || { echo "FAIL: crius-slurm-controller does not require slurm-slurmctld = $slurm"; exit 1; }
grep -qx "slurm >= ${slurm%.*}" <<<"$spank" && grep -qx "slurm < ${slurm%.*}.99" <<<"$spank" ||
  { echo "FAIL: crius-slurm-spank does not require slurm ${slurm%.*}.x: $spank"; exit 1; }
if ! rpm -q slurm-devel >/dev/null 2>&1; then
  if rpmspec -q "$spec" >"$work/noslurm" 2>&1; then echo "FAIL: the spec was read with no Slurm to pin"; exit 1; fi
  grep -q "slurm-devel is not installed" "$work/noslurm" || { cat "$work/noslurm"; echo "FAIL: the refusal does not name slurm-devel"; exit 1; }
fi

# Debian: the Slurm the build found names the dependencies (Debian's or SchedMD's packages)
grep -q '^Build-Depends:.*' debian/control && grep -q 'libslurm-dev | slurm-smd-dev' debian/control ||
  { echo "FAIL: debian/control does not build against SchedMD's slurm-smd-dev"; exit 1; }
echo "packaging: Debian and RPM file lists agree with make install; the RPMs pin Slurm $slurm"
