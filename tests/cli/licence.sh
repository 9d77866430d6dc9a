#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Every file of the tree says under which licence it is and whose it is: `reuse lint` (the REUSE
# specification, Debian's reuse) passes, with the SPDX lines of each file or, for the files that
# cannot carry them, .reuse/dep5; and debian/copyright, what a site's legal review reads in the
# packages, has each paragraph of .reuse/dep5 verbatim besides its own "Files: *".
set -euo pipefail
command -v reuse >/dev/null || { echo "reuse not installed (apt-get install reuse)"; exit 77; }
cd "$TOP"
[ -e .git ] || { echo "not a git checkout: reuse would lint build outputs too"; exit 77; }

out=$(reuse lint 2>&1) || { printf '%s\n' "$out"; echo "FAIL: reuse lint"; exit 1; }
echo "$out" | tail -n 4

python3 - <<'PY'
import sys
def paragraphs(path):
    with open(path, encoding="utf-8") as f:
        return [p.strip("\n") for p in f.read().split("\n\n") if p.strip()]
dep5 = paragraphs(".reuse/dep5")[1:]           # the header paragraph is each file's own
copyright = paragraphs("debian/copyright")
missing = [p.splitlines()[0] for p in dep5 if p not in copyright]
if missing:
    sys.exit("FAIL: debian/copyright lacks these paragraphs of .reuse/dep5: " + "; ".join(missing))
if not any(p.startswith("Files: *\n") and "License: GPL-2.0-or-later" in p for p in copyright):
    sys.exit("FAIL: debian/copyright has no 'Files: *' paragraph under GPL-2.0-or-later")
for lic in ("GPL-2.0-or-later", "Apache-2.0", "BSD-3-Clause"):
    if not any(p.startswith("License: " + lic + "\n") for p in copyright):
        sys.exit("FAIL: debian/copyright has no stand-alone 'License: %s' paragraph" % lic)
print("debian/copyright: %d paragraphs of .reuse/dep5 found verbatim" % len(dep5))
PY

# The check can fail: a new file without SPDX lines is caught.
scratch=${TEST_TMP:-$(mktemp -d)}/unlicensed.cpp
probe=estimator/licence-probe-$$.cpp
trap 'rm -f "$TOP/$probe"' EXIT
echo 'int x;' >"$probe"
if reuse lint >"$scratch" 2>&1; then echo "FAIL: reuse lint passed a file without SPDX lines"; exit 1; fi
grep -q "licence-probe-$$.cpp" "$scratch" || { cat "$scratch"; echo "FAIL: reuse lint did not name the unlicensed file"; exit 1; }
echo "licence: ok"
