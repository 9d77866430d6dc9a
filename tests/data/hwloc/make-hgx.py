#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
"""Builds the synthetic HGX topologies hgx-a100-8gpu.xml and hgx-h100-8gpu.xml.

The CPU/NUMA part comes from hwloc itself (`lstopo -i "<synthetic>" --of xml`);
this script adds the PCI/OS devices (GPUs, NVSwitches, NICs), machine infos and
the heterogeneous NVLinkBandwidth matrix the way hwloc's NVML backend writes
them (see nvidiaDGX2.xml), and finally lets hwloc re-export the result
(`lstopo -i gen.xml --of xml`), so the files are hwloc 2.9's own XML.
Usage: tests/data/hwloc/make-hgx.py OUTDIR   (needs lstopo from hwloc 2.x)
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

GIB = 1024 ** 3


class Gen:
    def __init__(self, synthetic):
        xml = subprocess.run(["lstopo", "-i", synthetic, "--of", "xml", "-"],
                             check=True, capture_output=True, text=True).stdout
        self.root = ET.fromstring(xml)
        self.gp = 5000

    def gp_index(self):
        self.gp += 1
        return str(self.gp)

    def machine(self):
        return self.root.find("object")

    def numa_parent(self, os_index):
        for parent in self.root.iter("object"):
            for child in parent.findall("object"):
                if child.get("type") == "NUMANode" and child.get("os_index") == str(os_index):
                    return parent
        raise KeyError(os_index)

    def set_infos(self, infos):
        m = self.machine()
        for el in list(m.findall("info")):
            m.remove(el)
        for i, (k, v) in enumerate(infos):
            el = ET.Element("info", name=k, value=v)
            m.insert(i, el)

    def host_bridge(self, numa, buses):
        lo, hi = min(buses), max(buses)
        br = ET.Element("object", type="Bridge", gp_index=self.gp_index(), bridge_type="0-1", depth="0",
                        bridge_pci="0000:[%02x-%02x]" % (lo, hi))
        self.numa_parent(numa).append(br)
        return br

    def pcidev(self, parent, bus, cls, ids, speed, subtype=None, infos=()):
        attrs = dict(type="PCIDev", gp_index=self.gp_index(), pci_busid="0000:%02x:00.0" % bus,
                     pci_type="%s %s a1" % (cls, ids), pci_link_speed=speed)
        if subtype:
            attrs["subtype"] = subtype
        el = ET.SubElement(parent, "object", attrs)
        for k, v in infos:
            ET.SubElement(el, "info", name=k, value=v)
        return el

    def osdev(self, parent, name, osdev_type, subtype, infos):
        attrs = dict(type="OSDev", gp_index=self.gp_index(), name=name, osdev_type=str(osdev_type))
        if subtype:
            attrs["subtype"] = subtype
        el = ET.SubElement(parent, "object", attrs)
        for k, v in infos:
            ET.SubElement(el, "info", name=k, value=v)
        return el

    def nvlink(self, objs, matrix):
        d = ET.SubElement(self.root, "distances2hetero", nbobjs=str(len(objs)), kind="25", name="NVLinkBandwidth")
        idx = " ".join("%s:%s" % ("OSDev" if o.get("type") == "OSDev" else "PCIDev", o.get("gp_index"))
                       for o in objs) + " "
        ET.SubElement(d, "indexes", length=str(len(idx))).text = idx
        vals = " ".join(str(v) for row in matrix for v in row) + " "
        ET.SubElement(d, "u64values", length=str(len(vals))).text = vals
        # distances must come before <support> elements
        self.root.remove(d)
        first_support = next(i for i, el in enumerate(list(self.root)) if el.tag == "support")
        self.root.insert(first_support, d)

    def write(self, path):
        with tempfile.NamedTemporaryFile("wb", suffix=".xml", delete=False) as f:
            f.write(b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n')
            f.write(ET.tostring(self.root))
            tmp = f.name
        subprocess.run(["lstopo", "--whole-io", "-i", tmp, "--of", "xml", "-f", path], check=True)
        os.unlink(tmp)


def build(out, synthetic, infos, gpus, switches, nics, gpu_model, gpu_ids, gpu_speed, switch_ids,
          links_per_switch, cuda_mem_kib):
    g = Gen(synthetic)
    g.set_infos(infos)
    gpu_objs, switch_objs = [], []
    # one host bridge per NUMA node, holding its GPUs, NICs and switches
    by_numa = {}
    for i, (numa, bus) in enumerate(gpus):
        by_numa.setdefault(numa, []).append(("gpu", i, bus))
    for i, (numa, bus, model, ids, speed, kind) in enumerate(nics):
        by_numa.setdefault(numa, []).append(("nic", i, bus))
    for i, (numa, bus) in enumerate(switches):
        by_numa.setdefault(numa, []).append(("sw", i, bus))
    for numa in sorted(by_numa):
        items = sorted(by_numa[numa], key=lambda t: t[2])
        br = g.host_bridge(numa, [t[2] for t in items])
        for kind, i, bus in items:
            if kind == "gpu":
                pci = g.pcidev(br, bus, "0302", gpu_ids, gpu_speed)
                if cuda_mem_kib:
                    g.osdev(pci, "cuda%d" % i, 5, "CUDA",
                            [("Backend", "CUDA"), ("GPUVendor", "NVIDIA Corporation"), ("GPUModel", gpu_model),
                             ("CUDAGlobalMemorySize", str(cuda_mem_kib)), ("CUDAMultiProcessors", "108")])
                nv = g.osdev(pci, "nvml%d" % i, 1, "NVML",
                             [("Backend", "NVML"), ("GPUVendor", "NVIDIA Corporation"), ("GPUModel", gpu_model),
                              ("NVIDIAUUID", "GPU-00000000-0000-4000-8000-%012d" % i)])
                gpu_objs.append((i, nv))
            elif kind == "sw":
                switch_objs.append((i, g.pcidev(br, bus, "0680", switch_ids, "1.000000", subtype="NVSwitch")))
            else:
                _, _, model, ids, speed, nkind = nics[i]
                pci = g.pcidev(br, bus, "0207" if nkind == "ib" else "0200", ids, speed,
                               infos=[("PCIVendor", "Mellanox Technologies"), ("PCIDevice", model)])
                if nkind == "ib":
                    g.osdev(pci, "ib%d" % i, 2, None, [("Address", "80:00:00:48:fe:80:00:00:00:00:00:00:00:00:00:00:00:00:%02x:%02x" % (i, i)), ("Port", "1")])
                    g.osdev(pci, "mlx5_%d" % i, 3, "OpenFabrics", [("NodeGUID", "0000:0000:0000:%04x" % i)])
                else:
                    g.osdev(pci, "enp%ds0" % bus, 2, None, [("Address", "00:00:00:00:00:%02x" % i)])
    gpu_objs.sort()
    switch_objs.sort()
    objs = [o for _, o in gpu_objs] + [o for _, o in switch_objs]
    n, ng = len(objs), len(gpu_objs)
    m = [[0] * n for _ in range(n)]
    for gi in range(ng):
        for si, links in enumerate(links_per_switch):
            m[gi][ng + si] = m[ng + si][gi] = links * 25000   # 25 GB/s per NVLink (NVLink3/4 per direction)
    g.nvlink(objs, m)
    g.write(out)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "."
    # DGX A100 / HGX A100 8-GPU: 2 x 64-core EPYC in NPS4 (8 NUMA nodes), 8 x A100-SXM4-40GB,
    # 6 NVSwitches (12 NVLinks per GPU, 2 to each switch), 8 ConnectX-6 HDR HCAs next to the GPUs.
    build(os.path.join(outdir, "hgx-a100-8gpu.xml"),
          "pack:2 numa:4(memory=137438953472) core:16 pu:2",
          [("DMIProductName", "Synthetic HGX A100 8-GPU (crius test topology)"), ("DMIBoardVendor", "crius"),
           ("Backend", "Synthetic"), ("HostName", "hgx-a100-1.example"), ("Architecture", "x86_64")],
          gpus=[(3, 0x07), (3, 0x0f), (1, 0x47), (1, 0x4e), (7, 0x87), (7, 0x90), (5, 0xb7), (5, 0xbd)],
          switches=[(4, 0xc4), (4, 0xc5), (4, 0xc6), (4, 0xc7), (4, 0xc8), (4, 0xc9)],
          nics=[(3, 0x0c, "MT28908 Family [ConnectX-6]", "[15b3:101b] [15b3:0007]", "24.615385", "ib"),
                (3, 0x12, "MT28908 Family [ConnectX-6]", "[15b3:101b] [15b3:0007]", "24.615385", "ib"),
                (1, 0x4b, "MT28908 Family [ConnectX-6]", "[15b3:101b] [15b3:0007]", "24.615385", "ib"),
                (1, 0x54, "MT28908 Family [ConnectX-6]", "[15b3:101b] [15b3:0007]", "24.615385", "ib"),
                (7, 0x8d, "MT28908 Family [ConnectX-6]", "[15b3:101b] [15b3:0007]", "24.615385", "ib"),
                (7, 0x94, "MT28908 Family [ConnectX-6]", "[15b3:101b] [15b3:0007]", "24.615385", "ib"),
                (5, 0xba, "MT28908 Family [ConnectX-6]", "[15b3:101b] [15b3:0007]", "24.615385", "ib"),
                (5, 0xcc, "MT28908 Family [ConnectX-6]", "[15b3:101b] [15b3:0007]", "24.615385", "ib"),
                (4, 0xe1, "MT2892 Family [ConnectX-6 Dx]", "[15b3:101d] [15b3:0040]", "15.753846", "eth")],
          gpu_model="NVIDIA A100-SXM4-40GB", gpu_ids="[10de:20b0] [10de:134f]", gpu_speed="31.507692",
          switch_ids="[10de:1af1] [10de:0000]", links_per_switch=[2, 2, 2, 2, 2, 2], cuda_mem_kib=41508864)
    # DGX H100 / HGX H100 8-GPU: 2 x 56-core Xeon (1 NUMA node each), 8 x H100 SXM5 80GB,
    # 4 NVSwitches (18 NVLinks per GPU: 5+4+4+5), 8 ConnectX-7 NDR HCAs.  NVML only, no CUDA memory.
    build(os.path.join(outdir, "hgx-h100-8gpu.xml"),
          "pack:2 numa:1(memory=1082331758592) core:56 pu:2",
          [("DMIProductName", "Synthetic HGX H100 8-GPU (crius test topology)"), ("DMIBoardVendor", "crius"),
           ("Backend", "Synthetic"), ("HostName", "hgx-h100-1.example"), ("Architecture", "x86_64")],
          gpus=[(0, 0x18), (0, 0x2a), (0, 0x3a), (0, 0x5d), (1, 0x9a), (1, 0xab), (1, 0xba), (1, 0xdb)],
          switches=[(1, 0xe4), (1, 0xe5), (1, 0xe6), (1, 0xe7)],
          nics=[(0, 0x19, "MT2910 Family [ConnectX-7]", "[15b3:1021] [15b3:0041]", "31.507692", "ib"),
                (0, 0x29, "MT2910 Family [ConnectX-7]", "[15b3:1021] [15b3:0041]", "31.507692", "ib"),
                (0, 0x3b, "MT2910 Family [ConnectX-7]", "[15b3:1021] [15b3:0041]", "31.507692", "ib"),
                (0, 0x5e, "MT2910 Family [ConnectX-7]", "[15b3:1021] [15b3:0041]", "31.507692", "ib"),
                (1, 0x9b, "MT2910 Family [ConnectX-7]", "[15b3:1021] [15b3:0041]", "31.507692", "ib"),
                (1, 0xac, "MT2910 Family [ConnectX-7]", "[15b3:1021] [15b3:0041]", "31.507692", "ib"),
                (1, 0xbb, "MT2910 Family [ConnectX-7]", "[15b3:1021] [15b3:0041]", "31.507692", "ib"),
                (1, 0xdc, "MT2910 Family [ConnectX-7]", "[15b3:1021] [15b3:0041]", "31.507692", "ib")],
          gpu_model="NVIDIA H100 80GB HBM3", gpu_ids="[10de:2330] [10de:16c1]", gpu_speed="63.015384",
          switch_ids="[10de:22a3] [10de:0000]", links_per_switch=[5, 4, 4, 5], cuda_mem_kib=None)


if __name__ == "__main__":
    main()
