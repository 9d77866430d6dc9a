#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Every option crius-discover --help lists (and those of `merge`) is documented in crius-discover(1).
set -u
MAN=$TOP/man/crius-discover.1
[ -f "$MAN" ] || { echo "FAIL: $MAN missing"; exit 1; }
opts=$( { crius-discover --help; crius-discover merge --help; } | grep -oE -- '--[a-z][a-z-]+' | sort -u)
[ -n "$opts" ] || { echo "FAIL: no options in --help"; exit 1; }
missing=
for o in $opts; do
  grep -qF -- "${o//-/\\-}" "$MAN" || missing+=" $o"
done
[ -z "$missing" ] || { echo "FAIL: not in the man page:$missing"; exit 1; }
echo "all $(wc -w <<<"$opts") options documented"
