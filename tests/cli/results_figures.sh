#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The estimator's published figures are the shipped catalogue's: tests/bench/estimator-accuracy.sh,
# run now on etc/crius/gpus.toml, prints docs/estimator-figures.txt byte for byte, and every
# figure docs/results.md quotes between `<!-- figures: docs/estimator-figures.txt -->` and
# `<!-- /figures -->` (a percentage, a time in seconds) is one the output has. A changed constant
# or cost model fails here until both are regenerated.
set -u
bench=$B/tests/bench/estimator-bench
[ -x "$bench" ] || { echo "estimator-bench not built"; exit 77; }
B=$B bash "$TOP/tests/bench/estimator-accuracy.sh" >figures.txt 2>&1 || { cat figures.txt; echo "FAIL: estimator-accuracy.sh"; exit 1; }
fail=0
if ! diff -u "$TOP/docs/estimator-figures.txt" figures.txt >figures.diff; then
  head -40 figures.diff
  echo "FAIL: docs/estimator-figures.txt is not what the shipped catalogue gives now;"
  echo "      regenerate it (tests/bench/estimator-accuracy.sh >docs/estimator-figures.txt) and the figures docs/results.md quotes"
  fail=1
fi
python3 - "$TOP/docs/results.md" figures.txt <<'EOF' || fail=1
import re, sys
doc, out = (open(p).read() for p in sys.argv[1:3])
figures = {f.lstrip("+") for f in re.findall(r"[+-]?\d+(?:\.\d+)?(?:%|s\b)", out)}
blocks = re.findall(r"<!-- figures: docs/estimator-figures.txt -->\n(.*?)<!-- /figures -->", doc, re.S)
if not blocks:
    sys.exit("FAIL: docs/results.md quotes no figures block")
bad = 0
for block in blocks:
    for line in block.splitlines():
        for f in re.findall(r"[+-]?\d+(?:\.\d+)?(?:%| s\b)", line):
            f = f.replace(" s", "s").lstrip("+")
            if f not in figures:
                print(f"FAIL: docs/results.md quotes {f} where the estimator now gives otherwise: {line.strip()}")
                bad += 1
print(f"{len(blocks)} quoted blocks checked, {bad} stale figures")
sys.exit(1 if bad else 0)
EOF
exit $fail
