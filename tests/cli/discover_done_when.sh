#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 4's "done when", checked on the JSON output (not on golden text): the DGX-2 has 16 GPUs of
# catalogue type v100 (32 GB), one NVLink domain of 16 and GPUs 0-7 on NUMA node 0, 8-15 on NUMA
# node 1; the POWER8 has 4 p100 in two NVLink pairs, each pair linked to its CPU package.
set -u
cd "$TOP" || exit 1
command -v jq >/dev/null || { echo "jq not installed"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
is() { # description jq-filter json expected (compared as JSON values: jq 1.7 prints 150.0 as written)
  local got
  got=$(jq -c "$2" <<<"$3") || fail "$1: jq failed"
  jq -e --argjson want "$4" '. == $want' <<<"$got" >/dev/null || fail "$1: got $got, expected $4"
  echo "ok: $1 = $got"
}
d=$(crius-discover --xml tests/data/hwloc/nvidiaDGX2.xml --format json --gpus etc/crius/gpus.toml) || fail "DGX-2 run"
is "DGX-2 GPU count" '.gpus | length' "$d" 16
is "DGX-2 GPU types" '[.gpus[].gpu] | unique' "$d" '["v100"]'
is "DGX-2 memory GiB" '[.gpus[].memory_gib] | unique' "$d" '[32]'
is "DGX-2 NVLink domains" '[.nvlink_domains[].size]' "$d" '[16]'
is "DGX-2 NVSwitches in the domain" '.nvlink_domains[0].nvswitches' "$d" 12
is "DGX-2 NUMA of GPUs 0-7" '[.gpus[0:8][].numa_node] | unique' "$d" '[0]'
is "DGX-2 NUMA of GPUs 8-15" '[.gpus[8:16][].numa_node] | unique' "$d" '[1]'
is "DGX-2 partition" '.partition | [.gpu, .gpus_per_node, .nvlink_domain, .intra_node_bw_gbs, .numa_nodes]' "$d" '["v100",16,16,150,2]'
p=$(crius-discover --xml tests/data/hwloc/power8gpudistances.xml --format json --gpus etc/crius/gpus.toml) || fail "POWER8 run"
is "POWER8 GPU types" '[.gpus[].gpu]' "$p" '["p100","p100","p100","p100"]'
is "POWER8 NVLink pairs" '[.nvlink_domains[].gpus]' "$p" '[[0,1],[2,3]]'
is "POWER8 pairs' CPU links" '[.nvlink_domains[].cpu_packages]' "$p" '[[0],[1]]'
is "POWER8 GPU-CPU NVLink GB/s" '[.gpus[].cpu_nvlink_gbs] | unique' "$p" '[40]'
is "POWER8 partition" '.partition | [.gpu, .gpus_per_node, .nvlink_domain, .intra_node_bw_gbs]' "$p" '["p100",4,2,40]'
a=$(crius-discover --xml tests/data/hwloc/hgx-a100-8gpu.xml --format json --gpus etc/crius/gpus.toml) || fail "A100 run"
is "HGX A100 partition" '.partition | [.gpu, .gpus_per_node, .nvlink_domain, .intra_node_bw_gbs, .numa_nodes]' "$a" '["a100",8,8,300,8]'
h=$(crius-discover --xml tests/data/hwloc/hgx-h100-8gpu.xml --format json --gpus etc/crius/gpus.toml) || fail "H100 run"
is "HGX H100 partition" '.partition | [.gpu, .gpus_per_node, .nvlink_domain, .intra_node_bw_gbs, .numa_nodes]' "$h" '["h100",8,8,450,2]'
is "HGX H100 InfiniBand HCAs per NUMA node" '[.nics[] | select(.kind == "infiniband") | .numa_node] | group_by(.) | map(length)' "$h" '[4,4]'
s=$(crius-discover --xml tests/data/hwloc/nvidiaDGX2.xml --slurm --node-name dgx2-01 --gpus etc/crius/gpus.toml) || fail "--slurm run"
grep -qx 'NodeName=dgx2-01 CPUs=4 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1546833 Gres=gpu:v100:16 Feature=v100' <<<"$s" || fail "slurm.conf line: $s"
grep -qx 'NodeName=dgx2-01 Name=gpu Type=v100 File=/dev/nvidia\[0-15\]' <<<"$s" || fail "gres.conf line: $s"
echo "ok: --slurm lines"
