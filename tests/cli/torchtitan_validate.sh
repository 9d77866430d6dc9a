#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Every plan crius offers a torchtitan job passes torchtitan's own configuration parser and
# checks, for its first release (0.1.0, 2025-06) and a current one (0.2.2, 2026-02): every
# catalogue model torchtitan builds (its Llama 3 flavors), over every Cell of the shipped example
# clusters, as `crius-launch --framework torchtitan:X.Y` hands it over (tests/frameworks/cases.cpp),
# fed to the release's ConfigManager and ParallelDims, and to the checks it makes only on GPUs,
# read from its source (tests/torchtitan/validate.py). And the check can fail: the plans searched
# without the rule are refused, and so is a flag value the parser does not know.
#
# torchtitan is not part of crius, nor is tyro, its parser's library (no Debian package): both are
# looked for in $CRIUS_TORCHTITAN (default ../shared/torchtitan beside the tree, else
# build/framework-sources/torchtitan, where scripts/framework-sources puts them):
#   v0.1.0/torchtitan, v0.2.2/torchtitan   (GitHub pytorch/torchtitan, those tags)
#   pylib/   tyro 1.0.15 and its typeguard >= 4, typing_extensions >= 4.13, docstring_parser
# and the test skips, saying so, where they are absent.
set -euo pipefail
dir=${CRIUS_TORCHTITAN:-}
# ../shared beside the tree, else what scripts/framework-sources brought into the build folder.
if [ -z "$dir" ]; then
  dir=$TOP/../shared/torchtitan
  [ -d "$dir" ] || dir=$B/framework-sources/torchtitan
fi
py=/usr/bin/python3
cases=$B/tests/frameworks/framework-cases
[ -x "$cases" ] || { echo "framework-cases not built"; exit 1; }
"$py" -c 'import torch' 2>/dev/null || { echo "Debian's python3-torch is needed to import torchtitan's configuration"; exit 77; }
# validate.py stands in for what torchtitan imports from PyTorch >= 2.4 on Debian 12's PyTorch 1.13,
# the one combination it was proven on (as megatron_validate.sh).
torch_major=$("$py" -c 'import torch; print(torch.__version__.split(".")[0])')
[ "$torch_major" = 1 ] ||
  { echo "tests/torchtitan/validate.py is made for Debian 12's PyTorch 1.13 (this is PyTorch $torch_major.x)"; exit 77; }
[ -d "$dir/pylib/tyro" ] || { echo "no tyro in $dir/pylib (torchtitan's parser library; not packaged by Debian)"; exit 77; }
export PYTHONPATH=$dir/pylib${PYTHONPATH:+:$PYTHONPATH}
releases=(v0.1.0:torchtitan:0.1 v0.2.2:torchtitan:0.2)
present=()
for r in "${releases[@]}"; do [ -d "$dir/${r%%:*}/torchtitan" ] && present+=("$r"); done
[ ${#present[@]} -gt 0 ] || { echo "no torchtitan release in $dir (v0.1.0/torchtitan, v0.2.2/torchtitan from pytorch/torchtitan)"; exit 77; }

fail=0 checked=()
for r in "${present[@]}"; do
  tag=${r%%:*} framework=${r#*:}
  "$cases" --framework "$framework" "$TOP" >"$TEST_TMP/$tag.jsonl"
  rc=0
  "$py" -W ignore "$TOP/tests/torchtitan/validate.py" "$dir/$tag" "$TEST_TMP/$tag.jsonl" >"$TEST_TMP/$tag.out" 2>"$TEST_TMP/$tag.err" || rc=$?
  case $rc in
    0) checked+=("$tag"); cat "$TEST_TMP/$tag.out" ;;
    2) echo "torchtitan $tag does not import here: $(tail -n 1 "$TEST_TMP/$tag.err")"; exit 77 ;;
    *) echo "FAIL: torchtitan $tag rejected plans crius offers to $framework jobs"; tail -n 5 "$TEST_TMP/$tag.err"; fail=1 ;;
  esac
  [ "$rc" = 0 ] || continue
  # Without the rule: plans torchtitan refuses (DDP beside TP or PP) or runs otherwise than
  # estimated (a gradient reduction per accumulated micro-batch).
  "$cases" --framework "$framework" "$TOP" --no-rule >"$TEST_TMP/$tag-no-rule.jsonl" 2>/dev/null
  if "$py" -W ignore "$TOP/tests/torchtitan/validate.py" "$dir/$tag" "$TEST_TMP/$tag-no-rule.jsonl" \
    >"$TEST_TMP/$tag-no-rule.out" 2>"$TEST_TMP/$tag-no-rule.err"; then
    echo "FAIL: without the rule torchtitan $tag accepted every plan"; fail=1
  fi
  grep -q "DDP has not supported > 1D parallelism" "$TEST_TMP/$tag-no-rule.err" ||
    { echo "FAIL: no DDP-beside-TP/PP plan refused without the rule"; fail=1; }
  echo "without the rule: $(cat "$TEST_TMP/$tag-no-rule.out")"
  # The parser is torchtitan's: a value it does not know is refused.
  head -n 1 "$TEST_TMP/$tag.jsonl" | jq -c '.args += ["--parallelism.fsdp_reshard_after_forward", "sometimes"]' >"$TEST_TMP/bad.jsonl"
  if "$py" -W ignore "$TOP/tests/torchtitan/validate.py" "$dir/$tag" "$TEST_TMP/bad.jsonl" >/dev/null 2>"$TEST_TMP/bad.err" ||
    ! grep -q "the parser refused it" "$TEST_TMP/bad.err"; then
    echo "FAIL: torchtitan $tag's parser took --parallelism.fsdp_reshard_after_forward sometimes"; fail=1
  fi
done
[ $fail -eq 0 ] && echo "torchtitan_validate: ${checked[*]} accept every plan offered"
exit $fail
