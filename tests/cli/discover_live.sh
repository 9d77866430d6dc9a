#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-discover on the live machine (hwloc's own discovery, no XML): the JSON describes this
# machine's CPUs and memory; without GPU OS devices it fails with "no GPUs found" (exit 1) unless
# --allow-no-gpus.
set -u
# Live discovery loads hwloc's own plugins (PCI, OpenCL); they are unloaded before a sanitizer
# build's LeakSanitizer runs, so their leaks cannot be attributed or suppressed by name.
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
T=$TEST_TMP
fail() { echo "FAIL: $*"; exit 1; }
crius-discover --format json --allow-no-gpus --gpus "$TOP/etc/crius/gpus.toml" >"$T/live.json" 2>"$T/err" || { cat "$T/err"; fail "live --allow-no-gpus exit $?"; }
cpus=$(jq '.node.cpus' "$T/live.json")
[ "$cpus" -eq "$(getconf _NPROCESSORS_ONLN)" ] || fail "node.cpus $cpus != $(getconf _NPROCESSORS_ONLN) online CPUs"
mem=$(jq '.node.memory_mib' "$T/live.json")
total=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
# hwloc reads the NUMA nodes' meminfo, which on a ballooned VM is below /proc/meminfo's MemTotal
[ "$mem" -gt 0 ] && [ "$mem" -le $((total * 105 / 100)) ] || fail "node.memory_mib $mem not in (0, MemTotal $total MiB]"
[ "$(jq -r .source "$T/live.json")" = live ] || fail "source is not live"
ngpus=$(jq '.gpus | length' "$T/live.json")
echo "live: $cpus CPUs, $mem MiB, $ngpus GPU(s) as hwloc sees them"
crius-discover --gpus "$TOP/etc/crius/gpus.toml" >/dev/null 2>"$T/err"
rc=$?
if [ "$ngpus" -eq 0 ]; then
  [ $rc -eq 1 ] && grep -q '^crius-discover: no GPUs found in this machine' "$T/err" || { cat "$T/err"; fail "no-GPU machine: exit $rc"; }
else
  [ $rc -eq 0 ] || { cat "$T/err"; fail "GPU machine: exit $rc"; }
fi
crius-discover --slurm --allow-no-gpus --node-name live1 | grep -q "^NodeName=live1 CPUs=$cpus " || fail "--slurm line"
echo ok
