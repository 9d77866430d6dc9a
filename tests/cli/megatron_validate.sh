#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Every plan crius offers a Megatron-LM job passes Megatron-LM's own argument parsing and
# validation, for a 2024 release (Megatron-Core 0.8), one of early 2025 (0.12: uneven stages with an
# interleaved schedule as first and last stage, each a multiple of the chunks) and a current one (0.19): every catalogue
# model Megatron trains, over every Cell of the shipped example clusters, as
# `crius-launch --framework megatron:X.Y` hands it over (tests/frameworks/cases.cpp), fed to the
# release's megatron/training/arguments.py on CPU with the Cell's world size
# (tests/megatron/validate.py). And the check can fail: 0.19's layouts are refused by 0.8.
#
# Megatron-LM's source is not part of crius: its releases' megatron/ folders are looked for in
# $CRIUS_MEGATRON_LM (default ../shared/megatron-lm beside the tree, else build/framework-sources/
# megatron-lm, where scripts/framework-sources puts them), one folder per tag:
#   core_r0.8.0/megatron, core_v0.12.0/megatron, core_v0.19.0/megatron   (GitHub NVIDIA/Megatron-LM, those tags)
# and the test skips, saying so, where they are absent.
set -euo pipefail
dir=${CRIUS_MEGATRON_LM:-}
# ../shared beside the tree, else what scripts/framework-sources brought into the build folder.
if [ -z "$dir" ]; then
  dir=$TOP/../shared/megatron-lm
  [ -d "$dir" ] || dir=$B/framework-sources/megatron-lm
fi
py=/usr/bin/python3
cases=$B/tests/frameworks/framework-cases
[ -x "$cases" ] || { echo "framework-cases not built"; exit 1; }
"$py" -c 'import torch, regex, packaging' 2>/dev/null ||
  { echo "Debian's python3-torch, python3-regex and python3-packaging are needed to run Megatron-LM's checks"; exit 77; }
# validate.py stands in for what Megatron imports from PyTorch >= 2 on Debian 12's PyTorch 1.13,
# the one combination it was proven on; a newer PyTorch brings those modules but other surprises.
torch_major=$("$py" -c 'import torch; print(torch.__version__.split(".")[0])')
[ "$torch_major" = 1 ] ||
  { echo "tests/megatron/validate.py is made for Debian 12's PyTorch 1.13 (this is PyTorch $torch_major.x)"; exit 77; }
releases=(core_r0.8.0:megatron:0.8 core_v0.12.0:megatron:0.12 core_v0.19.0:megatron:0.19)
present=()
for r in "${releases[@]}"; do [ -d "$dir/${r%%:*}/megatron" ] && present+=("$r"); done
[ ${#present[@]} -gt 0 ] ||
  { echo "no Megatron-LM release in $dir (core_r0.8.0/megatron, core_v0.12.0/megatron, core_v0.19.0/megatron from NVIDIA/Megatron-LM)"; exit 77; }

fail=0 checked=() cannot=()
for r in "${present[@]}"; do
  tag=${r%%:*} framework=${r#*:}
  "$cases" --framework "$framework" "$TOP" >"$TEST_TMP/$tag.jsonl"
  rc=0
  "$py" -W ignore "$TOP/tests/megatron/validate.py" "$dir/$tag" "$TEST_TMP/$tag.jsonl" 2>"$TEST_TMP/$tag.err" || rc=$?
  case $rc in
    0) checked+=("$tag") ;;
    # Megatron-LM does not import with this Python and PyTorch (the stand-ins of validate.py are
    # made for Debian 12's PyTorch 1.13): an environment this check cannot run in, not a plan.
    2) cannot+=("$tag: $(tail -n 1 "$TEST_TMP/$tag.err")") ;;
    *) echo "FAIL: Megatron-LM $tag rejected plans crius offers to $framework jobs"; tail -n 5 "$TEST_TMP/$tag.err"; fail=1 ;;
  esac
done
[ ${#cannot[@]} -eq 0 ] || printf 'not checked here: %s\n' "${cannot[@]}"
[ $fail -eq 0 ] && [ ${#checked[@]} -eq 0 ] && { echo "Megatron-LM does not import here: ${cannot[*]}"; exit 77; }

# The check discriminates: uneven layouts, which 0.19 runs, are not 0.8's to run.
if [[ " ${checked[*]} " == *" core_r0.8.0 "* ]]; then
  "$cases" --framework megatron:0.19 "$TOP" >"$TEST_TMP/all-0.19.jsonl" 2>/dev/null
  grep -- '--pipeline-model-parallel-layout' "$TEST_TMP/all-0.19.jsonl" | head -n 20 >"$TEST_TMP/layouts.jsonl" || true
  [ -s "$TEST_TMP/layouts.jsonl" ] || { echo "FAIL: no uneven layout among 0.19's plans"; fail=1; }
  if "$py" -W ignore "$TOP/tests/megatron/validate.py" "$dir/core_r0.8.0" "$TEST_TMP/layouts.jsonl" \
    >"$TEST_TMP/refused.out" 2>&1; then
    echo "FAIL: Megatron-LM 0.8 accepted --pipeline-model-parallel-layout"; fail=1
  fi
  grep -q " 0 accepted, 20 rejected" "$TEST_TMP/refused.out" || { tail -n 3 "$TEST_TMP/refused.out"; fail=1; }
fi
[ $fail -eq 0 ] && echo "megatron_validate: ${checked[*]} accept every plan offered"
exit $fail
