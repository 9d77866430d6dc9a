#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-estimate never crashes on damaged input: 300 deterministic random
# mutations of a cluster file, a model file and the GPU catalogue must each end
# with exit 0, 1 or 2 and, on 2, a message starting with the program name.
set -u
D=$TOP/tests/data/estimator
cp "$TOP/etc/crius/gpus.toml" "$D/models.toml" .
cat >cluster.toml <<'TOML'
[[partition]]
name = "p"
gpu = "a100"
nodes = 4
gpus_per_node = 4
intra_node_bw_gbs = 300
inter_node_bw_gbs = 25
inter_node_latency_us = 5
TOML
cat >model.toml <<'TOML'
family = "moe"
layers = 8
hidden = 1024
heads = 16
ffn_hidden = 4096
seq_len = 1024
vocab = 32000
experts = 8
expert_every = 2
capacity_factor = 1.0
dtype = "fp16"
TOML
mkdir cases
python3 - <<'PY'
import random, shutil
random.seed(20260101)
junk = [b'=', b'"', b'[', b']', b'0', b'-1', b'1e400', b'\n', b' ', b'x', b'{', b'}', b'.', b'#', b'99999999999999999999']
orig = {f: open(f + '.toml', 'rb').read() for f in ('cluster', 'model', 'gpus')}
for i in range(300):
    f = ('cluster', 'model', 'gpus')[i % 3]
    t = orig[f]
    p = random.randrange(max(1, len(t)))
    j = random.choice(junk)
    op = random.choice(('del', 'ins', 'rep'))
    if op == 'del': t = t[:p] + t[p + 1 + random.randrange(5):]
    elif op == 'ins': t = t[:p] + j + t[p:]
    else: t = t[:p] + j + t[p + len(j):]
    d = 'cases/%03d' % i
    shutil.os.makedirs(d)
    for g in orig:
        open('%s/%s.toml' % (d, g), 'wb').write(t if g == f else orig[g])
PY
fail=0
for d in cases/*; do
  crius-estimate --cluster "$d/cluster.toml" --model "$d/model.toml" --global-batch 64 --top 2 >out.txt 2>err.txt
  rc=$?
  case $rc in
    0|1) ;;
    2) grep -q '^crius-estimate: ' err.txt || { echo "FAIL $d: exit 2 without message"; fail=1; } ;;
    *) echo "FAIL $d: exit $rc"; cat err.txt; fail=1 ;;
  esac
done
exit $fail
