# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# estimator/: libcrius core (models, hardware, Cells, plan search, cost and memory
# model), crius-estimate and crius-discover.
LIBCRIUS_SRCS += estimator/plan.cpp estimator/framework.cpp estimator/toml_util.cpp estimator/catalog.cpp estimator/cluster.cpp \
  estimator/cost.cpp estimator/request.cpp estimator/search.cpp estimator/cells.cpp \
  estimator/json.cpp

# The installed catalogues are the fallback for cluster files without gpus/models keys.
$(B)/estimator/cluster.o: EXTRA_CPPFLAGS += -DCRIUS_SYSCONFDIR='"$(sysconfdir)"'

PROGRAMS += $(B)/bin/crius-estimate
$(B)/bin/crius-estimate: $(B)/estimator/estimate_main.o $(LIBCRIUS)
	$(LINK_PROGRAM)

BENCH_PROGRAMS += $(B)/tests/bench/estimator-bench
$(B)/tests/bench/estimator-bench: $(B)/tests/bench/estimator-bench.o $(LIBCRIUS)
	$(LINK_PROGRAM)

MANPAGES += man/crius-estimate.1 man/crius.toml.5

include estimator/discover/module.mk
$(B)/estimator/estimate_main.o: EXTRA_CPPFLAGS += -DCRIUS_SLURM_SYSCONFDIR='"$(SLURM_SYSCONFDIR)"'
TEST_PROGRAMS += $(B)/tests/bench/estimator-bench
