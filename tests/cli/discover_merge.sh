#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# `crius-discover merge`: node descriptions that agree become one [[partition]] that the estimator
# loads; nodes that differ are refused (exit 2) with the differing fields and the nodes on each side.
set -u
cd "$TOP" || exit 1
T=$TEST_TMP
fail() { echo "FAIL: $*"; exit 1; }
d() { crius-discover --xml "tests/data/hwloc/$1.xml" --gpus etc/crius/gpus.toml --format json --node-name "$2" >"$T/$2.json" 2>/dev/null || fail "discover $1 as $2"; }
d nvidiaDGX2 dgx2-01
d nvidiaDGX2 dgx2-02
d power8gpudistances p8-01

crius-discover merge --partition v100 --inter-node-bw-gbs 100 --inter-node-latency-us 5 \
  "$T/dgx2-01.json" "$T/dgx2-02.json" >"$T/part.toml" || fail "merge of two DGX-2 exit $?"
cat "$T/part.toml"
grep -qx 'nodes = 2' "$T/part.toml" || fail "nodes = 2 missing"
grep -qx '# slurm.conf: PartitionName=v100 Nodes=dgx2-01,dgx2-02' "$T/part.toml" || fail "PartitionName comment missing"
# (tests/unit/test_discover.cpp loads merged partitions with the estimator's load_cluster)

crius-discover merge --partition mixed "$T/dgx2-01.json" "$T/p8-01.json" "$T/dgx2-02.json" >/dev/null 2>"$T/err"
rc=$?
cat "$T/err"
[ $rc -eq 2 ] || fail "mismatch exit $rc, expected 2"
grep -q "^crius-discover: merge: the nodes of partition 'mixed' do not agree:" "$T/err" || fail "no mismatch headline"
grep -qF "gpu: p100 on p8-01 ($T/p8-01.json); v100 on dgx2-01 ($T/dgx2-01.json), dgx2-02 ($T/dgx2-02.json)" "$T/err" || fail "gpu line"
grep -qF "gpus_per_node: 16 on dgx2-01" "$T/err" || fail "gpus_per_node line"
grep -qF "intra_node_bw_gbs: 150.0 on dgx2-01" "$T/err" || fail "intra_node_bw_gbs line"
grep -q "numa_nodes" "$T/err" && fail "numa_nodes agree but were reported"

crius-discover merge --partition v100 "$T/dgx2-01.json" "$T/dgx2-01.json" 2>"$T/err" >/dev/null
[ $? -eq 2 ] && grep -q "node name 'dgx2-01' appears twice" "$T/err" || fail "duplicate node not refused"
echo '{"not": "a node"}' >"$T/junk.json"
crius-discover merge --partition v100 "$T/junk.json" 2>"$T/err" >/dev/null
[ $? -eq 2 ] && grep -q "junk.json: not a crius-discover node description" "$T/err" || fail "foreign JSON not refused"
echo 'not json' >"$T/bad.json"
crius-discover merge --partition v100 "$T/bad.json" 2>"$T/err" >/dev/null
[ $? -eq 2 ] && grep -q "bad.json: not JSON" "$T/err" || fail "non-JSON not refused"
crius-discover --xml tests/data/hwloc/96em64t-4n4d3ca2co-pci.xml --allow-no-gpus --format json >"$T/cpu.json"
crius-discover merge --partition v100 "$T/cpu.json" 2>"$T/err" >/dev/null
[ $? -eq 2 ] && grep -q "has no GPUs" "$T/err" || fail "GPU-less node not refused"
crius-discover merge "$T/dgx2-01.json" 2>"$T/err" >/dev/null
[ $? -eq 2 ] && grep -q -- "--partition is required" "$T/err" || fail "merge without --partition"
echo "ok"
