#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# --pci-gpus: on a host whose hwloc has no CUDA/NVML backend (Debian's), NVIDIA GPUs are PCI
# devices only. Here the DGX-2 export with its NVML OS devices and NVLink matrix removed stands
# for such a host: by default nothing is counted (exit 1, the 16 PCI devices listed as ignored);
# with --pci-gpus and a [discover.gpu_names] entry for the PCI id, 16 v100 with NUMA locality
# and PCIe bandwidth, no NVLink.
set -u
cd "$TOP" || exit 1
T=$TEST_TMP
fail() { echo "FAIL: $*"; exit 1; }
python3 - tests/data/hwloc/nvidiaDGX2.xml "$T/pci-only.xml" <<'PY' || fail "cannot strip the export"
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r'\s*<object type="OSDev"[^>]*name="nvml\d+"[^>]*>.*?</object>', '', s, flags=re.S)
s = re.sub(r'\s*<distances2hetero .*?</distances2hetero>', '', s, flags=re.S)
open(sys.argv[2], 'w').write(s)
PY
grep -q nvml "$T/pci-only.xml" && fail "nvml OS devices left"
crius-discover --xml "$T/pci-only.xml" --gpus etc/crius/gpus.toml 2>"$T/err" >/dev/null
rc=$?
cat "$T/err"
[ $rc -eq 1 ] || fail "without --pci-gpus: exit $rc, expected 1"
[ "$(grep -c 'ignored PCI device .*NVIDIA PCI display/3D controller without a GPU OS device' "$T/err")" -eq 16 ] ||
  fail "the 16 PCI-only GPUs are not listed as ignored"

crius-discover --xml "$T/pci-only.xml" --gpus etc/crius/gpus.toml --pci-gpus --format json >"$T/unnamed.json" 2>"$T/err" ||
  fail "--pci-gpus without a name: exit $?"
grep -q "GPU model 'NVIDIA PCI device 10de:1db8' is not in the GPU catalogue" "$T/err" || fail "no unknown-model warning"

printf 'gpus = "%s"\n[discover.gpu_names]\n"NVIDIA PCI device 10de:1db8" = "v100"\n' "$TOP/etc/crius/gpus.toml" >"$T/crius.toml"
crius-discover --xml "$T/pci-only.xml" --config "$T/crius.toml" --pci-gpus --format json >"$T/pci.json" 2>"$T/err" ||
  { cat "$T/err"; fail "--pci-gpus with a name: exit $?"; }
got=$(jq -c '[(.gpus | length), ([.gpus[].gpu] | unique), ([.gpus[].backends[]] | unique), ([.gpus[0:8][].numa_node] | unique), ([.gpus[8:][].numa_node] | unique), (.nvlink_domains | length), .partition.intra_node_link, .partition.intra_node_bw_gbs, .partition.nvlink_domain, .gpus[0].memory_source]' "$T/pci.json")
echo "$got"
[ "$got" = '[16,["v100"],["PCI"],[0],[1],0,"pcie",15.754,0,"catalogue"]' ] || fail "unexpected PCI-only description"
echo ok
