# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# scheduler/: the scheduler core (cluster state, jobs, policies incl. the
# baselines) in $(B)/libcrius_sched.a, and crius-sim.
SCHED_SRCS := scheduler/objective.cpp scheduler/types.cpp scheduler/throughput.cpp \
  scheduler/placement.cpp scheduler/policy.cpp scheduler/scheduler.cpp \
  scheduler/simulator.cpp scheduler/report.cpp scheduler/live.cpp \
  scheduler/policies/crius.cpp scheduler/policies/fcfs.cpp scheduler/policies/gandiva.cpp \
  scheduler/policies/gavel.cpp scheduler/policies/elasticflow_ls.cpp scheduler/policies/sia.cpp
SCHED_SRCS += scheduler/estimator_throughput.cpp scheduler/sacct_import.cpp
SCHED_OBJS := $(SCHED_SRCS:%.cpp=$(B)/%.o)
LIBCRIUS_SCHED := $(B)/libcrius_sched.a

$(LIBCRIUS_SCHED): $(SCHED_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

PROGRAMS += $(B)/bin/crius-sim
$(B)/bin/crius-sim: $(B)/scheduler/sim_main.o $(LIBCRIUS_SCHED) $(LIBCRIUS)
	$(LINK_PROGRAM)
$(B)/bin/crius-sim: EXTRA_LIBS += $(GLPK_LIBS)

PROGRAMS += $(B)/bin/crius-import-sacct
$(B)/bin/crius-import-sacct: $(B)/scheduler/import_main.o $(LIBCRIUS_SCHED) $(LIBCRIUS)
	$(LINK_PROGRAM)

UNIT_TEST_ARCHIVES += $(LIBCRIUS_SCHED)
UNIT_TEST_LIBS += $(GLPK_LIBS)
MANPAGES += man/crius-sim.1 man/crius-replay.1 man/crius-import-sacct.1 man/crius.7

PROGRAMS += $(B)/bin/crius-replay
$(B)/bin/crius-replay: scheduler/crius-replay
	@mkdir -p $(@D)
	cp $< $@ && chmod 0755 $@
