#!/usr/bin/env bash
# libFuzzer run (bounded) of the job_submit request parser and rewrite path, built with
# clang -fsanitize=fuzzer,address,undefined. Fails on any crash, leak or UB report.
set -u
bin=$B/tests/fuzz/fuzz_request
command -v clang++ >/dev/null || { echo "clang++ not installed (apt-get install clang)"; exit 77; }
[ -x "$bin" ] || { echo "FAIL: $bin not built (make B=$B check builds it)"; exit 1; }
mkdir -p corpus
cp "$TOP"/tests/fuzz/corpus-request/* corpus/
# A fixed seed and run count keep the suite deterministic; FUZZ_RUNS=-1 FUZZ_SEED=0 explores freely.
CRIUS_FUZZ_CONF=$TOP/etc/crius/crius.toml "$bin" -seed=${FUZZ_SEED:-1} -runs=${FUZZ_RUNS:-100000} -max_len=4096 \
  -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus 2>&1 | tail -n 25
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || { echo "FAIL: fuzzer exit $rc"; exit 1; }
echo ok
