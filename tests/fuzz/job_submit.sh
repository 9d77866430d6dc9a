#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# libFuzzer run (bounded) of job_submit/crius as slurmctld calls it, C glue included, on a
# thread with slurmctld's 1 MiB RPC stack (tests/fuzz/fuzz_job_submit.cpp). Fails on any
# crash, stack overflow, leak, UB report or broken invariant.
set -u
bin=$B/tests/fuzz/fuzz_job_submit
fuzz_cxx=$(sed -n 's/^FUZZ_CXX = //p' "$TOP/config.mk")
if [ -z "$fuzz_cxx" ]; then
  echo "libFuzzer target not built: $(sed -n 's/^FUZZ_MISSING = //p' "$TOP/config.mk")"
  exit 77
fi
[ -x "$bin" ] || { echo "FAIL: $bin not built (make B=$B check builds it)"; exit 1; }
mkdir -p corpus
cp "$TOP"/tests/fuzz/corpus-job_submit/* corpus/
# A fixed seed and run count keep the suite deterministic; FUZZ_RUNS=-1 FUZZ_SEED=0 explores freely.
CRIUS_CONF=$TOP/etc/crius/crius.toml "$bin" -seed=${FUZZ_SEED:-1} -runs=${FUZZ_RUNS:-20000} -max_len=4096 \
  -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus 2>&1 | tail -n 25
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || { echo "FAIL: fuzzer exit $rc"; exit 1; }
echo ok
