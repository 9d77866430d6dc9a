#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-discover's bad inputs: each gives its exit status (2 input/usage error, 1 request cannot
# be met) and a message that starts with the program name and names the file, key or option.
set -u
cd "$TOP" || exit 1
T=$TEST_TMP
GPUS=etc/crius/gpus.toml
fails=0
expect() { # description rc pattern command...
  local what=$1 want=$2 pat=$3; shift 3
  "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ $rc -ne "$want" ]; then echo "FAIL: $what: exit $rc, expected $want"; cat "$T/err"; fails=$((fails + 1)); return; fi
  if ! grep -qE -- "$pat" "$T/err"; then echo "FAIL: $what: stderr lacks /$pat/:"; cat "$T/err"; fails=$((fails + 1)); return; fi
  echo "ok: $what (exit $rc): $(head -n 1 "$T/err")"
}

expect "missing file" 2 "^crius-discover: $T/nope.xml: cannot open: No such file" \
  crius-discover --xml "$T/nope.xml"
echo 'just text' >"$T/text.xml"
expect "non-XML file" 2 "^crius-discover: $T/text.xml: not an XML file" crius-discover --xml "$T/text.xml"
printf '<?xml version="1.0"?>\n<html><body/></html>\n' >"$T/html.xml"
expect "XML that is not a topology" 2 "without a <topology> root element" crius-discover --xml "$T/html.xml"
# hwloc >= 3.0 writes version="3.0": hwloc 2.9 refuses it ("cannot import XML version 3.0 > 2"),
# hwloc 2.12 reads it. crius-discover reads what its hwloc reads, and names the format when not.
sed 's/<topology version="2.0">/<topology version="3.0">/' tests/data/hwloc/nvidiaDGX2.xml >"$T/v3.xml"
if lstopo -i "$T/v3.xml" --of console >/dev/null 2>&1; then
  # (a 2.0 file relabelled 3.0 reads differently, so only the import itself is compared)
  crius-discover --xml "$T/v3.xml" --gpus $GPUS >/dev/null 2>"$T/err"
  ! grep -q "cannot import" "$T/err" ||
    { echo "FAIL: hwloc's own lstopo reads the 3.0 file, crius-discover does not: $(cat "$T/err")"; fails=$((fails + 1)); }
else
  expect "XML format 3.0" 2 "v3.xml:3: hwloc XML format 3.0 .*cannot import.*lstopo --of xml --export-xml-flags v2" \
    crius-discover --xml "$T/v3.xml"
fi
head -c 4000 tests/data/hwloc/power8gpudistances.xml >"$T/truncated.xml"
expect "truncated XML" 2 "truncated.xml: hwloc .* cannot import this XML" crius-discover --xml "$T/truncated.xml"
expect "no GPUs" 1 "^crius-discover: no GPUs found in tests/data/hwloc/96em64t-4n4d3ca2co-pci.xml" \
  crius-discover --xml tests/data/hwloc/96em64t-4n4d3ca2co-pci.xml --gpus $GPUS
grep -q "ignored card0 0000:01:00.0 'ES1000': not an NVIDIA GPU" "$T/err" || { echo "FAIL: no-GPU message does not list the ignored ATI card"; fails=$((fails + 1)); }
crius-discover --xml tests/data/hwloc/96em64t-4n4d3ca2co-pci.xml --allow-no-gpus >/dev/null ||
  { echo "FAIL: --allow-no-gpus did not exit 0"; fails=$((fails + 1)); }
expect "unknown option" 2 "^crius-discover: .*--bogus" crius-discover --bogus
expect "bad --format" 2 "^crius-discover: --format: yaml not in" crius-discover --format yaml
expect "--gres-cores without --slurm" 2 "gres-cores needs --slurm" crius-discover --gres-cores --xml tests/data/hwloc/nvidiaDGX2.xml
expect "missing catalogue" 2 "^crius-discover: .*$T/none.toml.*GPU catalogue" \
  crius-discover --xml tests/data/hwloc/nvidiaDGX2.xml --gpus "$T/none.toml"

# GPUs of two models on one node: a partition holds one type
sed '0,/Tesla V100-SXM3-32GB-H/s//Tesla P100-SXM2-16GB/' tests/data/hwloc/nvidiaDGX2.xml >"$T/mixed.xml"
expect "two GPU models on a node" 1 "mixed.xml: the node has GPUs of 2 models \\(1 x p100, 15 x v100\\); a crius partition holds one GPU type" \
  crius-discover --xml "$T/mixed.xml" --gpus $GPUS

# an unknown GPU model is reported with its raw name, never guessed
crius-discover --xml tests/data/hwloc/32em64t-2n8c2t-pci-wholeio.xml --gpus $GPUS --format json >"$T/k40.json" 2>"$T/k40.err" ||
  { echo "FAIL: K40m node exit $?"; fails=$((fails + 1)); }
grep -q "^crius-discover: warning: GPU model 'Tesla K40m' is not in the GPU catalogue" "$T/k40.err" ||
  { echo "FAIL: no warning for the K40m"; fails=$((fails + 1)); }
[ "$(jq -c '[.gpus[0].gpu, .gpus[0].model, .partition.gpu]' "$T/k40.json")" = '["unknown","Tesla K40m","unknown"]' ] ||
  { echo "FAIL: K40m not reported as unknown"; fails=$((fails + 1)); }

# the override table in crius.toml names it; bad override entries are input errors
cat >"$T/crius.toml" <<TOML
gpus = "$TOP/etc/crius/gpus.toml"
[discover.gpu_names]
"Tesla K40m" = "a10"
TOML
[ "$(crius-discover --xml tests/data/hwloc/32em64t-2n8c2t-pci-wholeio.xml --config "$T/crius.toml" --format json 2>/dev/null |
     jq -c '[.gpus[0].gpu, .gpus[0].name_source]')" = '["a10","override"]' ] ||
  { echo "FAIL: [discover.gpu_names] override not applied"; fails=$((fails + 1)); }
printf 'gpus = "%s"\n[discover.gpu_names]\n"Tesla K40m" = "k40"\n' "$TOP/etc/crius/gpus.toml" >"$T/bad-id.toml"
expect "override to an unknown id" 2 "bad-id.toml:3:16: unknown GPU type 'k40'" \
  crius-discover --xml tests/data/hwloc/32em64t-2n8c2t-pci-wholeio.xml --config "$T/bad-id.toml"
printf '[discover]\ngpu_name = {}\n' >"$T/bad-key.toml"
expect "unknown key in [discover]" 2 "bad-key.toml:2:1: unknown key 'discover.gpu_name' \(close matches: gpu_names\)" \
  crius-discover --xml tests/data/hwloc/nvidiaDGX2.xml --config "$T/bad-key.toml" --gpus $GPUS
printf 'gpus = [1,2\n' >"$T/syntax.toml"
expect "config syntax error" 2 "syntax.toml:[0-9]+:[0-9]+:" crius-discover --xml tests/data/hwloc/nvidiaDGX2.xml --config "$T/syntax.toml"

# Names that would inject lines into the TOML or slurm.conf it prints; a merge input of the
# wrong type (issue 13).
X=tests/data/hwloc/hgx-a100-8gpu.xml
expect "node name with a newline" 2 "node name 'evil\?\[\[partition\]\]' is not a Slurm node name" \
  crius-discover --gpus $GPUS --xml $X --node-name $'evil\n[[partition]]'
expect "partition name with a newline" 2 "--partition 'p\?x' is not a Slurm partition name" \
  crius-discover --gpus $GPUS --xml $X --partition $'p\nx'
crius-discover --gpus $GPUS --xml $X --format json --node-name n1 >"$T/n1.json"
sed 's/"gpus_per_node": 8/"gpus_per_node": "eight"/; s/"name": "n1"/"name": "n2"/' "$T/n1.json" >"$T/n2.json"
sed 's/"name": "n1"/"name": "n3"/' "$T/n2.json" >"$T/n3.json"
expect "merge: a string where a number belongs" 2 'n2.json: key "partition.gpus_per_node" = "eight" is not what crius-discover writes' \
  crius-discover --gpus $GPUS merge --partition a100 "$T/n2.json" "$T/n3.json"

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all bad-input checks passed"
