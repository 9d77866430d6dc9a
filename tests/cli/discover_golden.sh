#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-discover on every topology in tests/data/hwloc: JSON, TOML and --slurm output equal the
# golden files in tests/golden/discover/ (regenerate with UPDATE_GOLDEN=1 after a deliberate change).
set -u
cd "$TOP" || exit 1
G=tests/golden/discover
fails=0
check() { # golden-name command...
  local name=$1; shift
  local out=$TEST_TMP/$name
  "$@" >"$out" 2>"$out.err"
  local rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL: $name: exit $rc: $*"; cat "$out.err"; fails=$((fails + 1)); return; fi
  if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then cp "$out" "$G/$name"; echo "updated $G/$name"; return; fi
  if ! diff -u "$G/$name" "$out"; then echo "FAIL: $name differs from $G/$name"; fails=$((fails + 1)); else echo "ok: $name"; fi
}
for x in tests/data/hwloc/*.xml; do
  base=$(basename "$x" .xml)
  extra=()
  [ "$base" = 96em64t-4n4d3ca2co-pci ] && extra=(--allow-no-gpus)
  check "$base.json" crius-discover --xml "$x" --gpus etc/crius/gpus.toml --format json "${extra[@]}"
  check "$base.toml" crius-discover --xml "$x" --gpus etc/crius/gpus.toml --format toml "${extra[@]}"
  check "$base.slurm" crius-discover --xml "$x" --gpus etc/crius/gpus.toml --slurm --gres-cores "${extra[@]}"
done
n=$(ls tests/data/hwloc/*.xml | wc -l)
[ "$n" -ge 6 ] || { echo "FAIL: expected at least 6 topology files, found $n"; fails=$((fails + 1)); }
[ $fails -eq 0 ] || { echo "$fails golden check(s) failed"; exit 1; }
echo "all golden outputs match"
