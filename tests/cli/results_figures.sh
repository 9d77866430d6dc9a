#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The estimator's published figures are the shipped catalogue's: tests/bench/estimator-accuracy.sh,
# run now on etc/crius/gpus.toml, prints docs/estimator-figures.txt byte for byte, and every
# figure docs/results.md quotes between `<!-- figures: docs/estimator-figures.txt -->` and
# `<!-- /figures -->` (a percentage, a time in seconds) is one the output has, each row's
# together on one line of it. A changed constant or cost model fails here until both are
# regenerated.
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
figure = re.compile(r"[+-]?\d+(?:\.\d+)?(?:%| ?s\b)")  # "1.46 s" in the document, "1.46s" in the output
def figures(text):
    return {f.replace(" s", "s").lstrip("+") for f in figure.findall(text)}
out_lines = [figures(line) for line in out.splitlines()]
blocks = re.findall(r"<!-- figures: docs/estimator-figures.txt -->\n(.*?)<!-- /figures -->", doc, re.S)
if not blocks:
    sys.exit("FAIL: docs/results.md quotes no figures block")
bad = 0
for block in blocks:
    for line in block.splitlines():
        # A quoted row's figures come from one line of the output: all of them together, or,
        # where cells pair two runs ("6.9% / 7.2%"), each side's with the row's other cells.
        cells = line.split("|")
        plain = set().union(*(figures(c) for c in cells if " / " not in c))
        sides = [set(plain), set(plain)] if any(" / " in c for c in cells) else [plain]
        for c in cells:
            if " / " in c:
                for side, part in zip(sides, c.split(" / ")):
                    side |= figures(part)
        for want in sides:
            if want and not any(want <= have for have in out_lines):
                print(f"FAIL: docs/results.md quotes {', '.join(sorted(want))} together where no line of the estimator's output has them: {line.strip()}")
                bad += 1
print(f"{len(blocks)} quoted blocks checked, {bad} stale rows")
sys.exit(1 if bad else 0)
EOF
exit $fail
