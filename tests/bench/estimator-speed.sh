#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Speed of the estimator: one Cell with its full plan search (median over every
# feasible Cell), and all Cells of GPT-3 175B on the paper's 1,280-GPU cluster.
set -eu
: "${TOP:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${B:=$TOP/build}"
bench=$B/tests/bench/estimator-bench
[ -x "$bench" ] || { echo "estimator-bench not built (make B=... bench)"; exit 1; }
"$bench" speed "$TOP/tests/data/estimator/paper-sim.toml" gpt3-175b 1536
"$bench" speed "$TOP/tests/data/estimator/paper-sim.toml" bert__6.7B 512
