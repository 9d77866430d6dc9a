#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# libFuzzer run (bounded) of the job_submit request parser and rewrite path, built with
# clang -fsanitize=fuzzer,address,undefined. Fails on any crash, leak or UB report.
set -u
bin=$B/tests/fuzz/fuzz_request
# configure leaves FUZZ_CXX empty, with the reason in FUZZ_MISSING, when the toolchain is incomplete.
fuzz_cxx=$(sed -n 's/^FUZZ_CXX = //p' "$TOP/config.mk")
if [ -z "$fuzz_cxx" ]; then
  echo "libFuzzer target not built: $(sed -n 's/^FUZZ_MISSING = //p' "$TOP/config.mk")"
  exit 77
fi
[ -x "$bin" ] || { echo "FAIL: $bin not built (make B=$B check builds it)"; exit 1; }
mkdir -p corpus
cp "$TOP"/tests/fuzz/corpus-request/* corpus/
# A fixed seed and run count keep the suite deterministic; FUZZ_RUNS=-1 FUZZ_SEED=0 explores freely.
CRIUS_FUZZ_CONF=$TOP/etc/crius/crius.toml "$bin" -seed=${FUZZ_SEED:-1} -runs=${FUZZ_RUNS:-100000} -max_len=4096 \
  -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus 2>&1 | tail -n 25
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || { echo "FAIL: fuzzer exit $rc"; exit 1; }
echo ok
