# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# slurm_plugin/: the submission path (see DESIGN.md): spank_crius.so (the --crius-*
# options of sbatch/srun/salloc) and job_submit_crius.so (slurmctld picks and applies
# the Cell). Both are C++ behind extern "C", not linked with -lslurm (the host
# process provides Slurm's symbols), and export only the plugin symbols (*.map).
# criusd lives in slurm_plugin/criusd/ with its own module.mk.

# The request parser and the decision, shared by both plugins, the tests and the fuzzer; the
# decision takes the crius policy's rule for a Cell (scheduler/objective.cpp, no more of it).
SLURM_PLUGIN_CORE := $(B)/slurm_plugin/request.o $(B)/slurm_plugin/submit.o $(B)/slurm_plugin/free_gpus.o $(B)/slurm_plugin/load_record.o \
  $(B)/scheduler/objective.o
$(B)/libcrius_slurm.a: $(SLURM_PLUGIN_CORE)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^
UNIT_TEST_ARCHIVES += $(B)/libcrius_slurm.a

SPANK_OBJS := $(B)/slurm_plugin/spank_crius.o $(B)/slurm_plugin/spank_submit.o
$(B)/slurm_plugin/job_submit_crius.o $(SPANK_OBJS) $(B)/slurm_plugin/load_record.o $(B)/slurm_plugin/job_comment.o: \
  EXTRA_CPPFLAGS += $(SLURM_CFLAGS) -DCRIUS_SLURM_SYSCONFDIR='"$(SLURM_SYSCONFDIR)"'
$(B)/slurm_plugin/submit.o: EXTRA_CPPFLAGS += -DCRIUS_SLURM_SYSCONFDIR='"$(SLURM_SYSCONFDIR)"'

LINK_PLUGIN = @mkdir -p $(@D) && $(CXX) $(LDFLAGS_ALL) -shared -Wl,-Bsymbolic \
  -Wl,--version-script=$(filter %.map,$^) -o $@ $(filter %.o %.a,$^) $(TOML_LIBS)

PLUGINS += $(B)/plugins/job_submit_crius.so $(B)/plugins/spank_crius.so
$(B)/plugins/job_submit_crius.so: $(B)/slurm_plugin/job_submit_crius.o $(B)/libcrius_slurm.a \
  $(LIBCRIUS) slurm_plugin/job_submit_crius.map
	$(LINK_PLUGIN)
$(B)/plugins/spank_crius.so: $(SPANK_OBJS) $(B)/libcrius_slurm.a \
  $(LIBCRIUS) slurm_plugin/spank_crius.map
	$(LINK_PLUGIN)

# libFuzzer target for the request parser and the decision (tests/fuzz/request.sh runs it).
# configure sets FUZZ_CXX only when clang++ links the fuzzer and sanitizer runtimes.
ifneq ($(FUZZ_CXX),)
TEST_PROGRAMS += $(B)/tests/fuzz/fuzz_request $(B)/tests/fuzz/fuzz_job_submit
endif
$(B)/tests/fuzz/fuzz_request: tests/fuzz/fuzz_request.cpp slurm_plugin/request.cpp slurm_plugin/submit.cpp slurm_plugin/free_gpus.cpp \
  scheduler/objective.cpp \
  slurm_plugin/request.h slurm_plugin/submit.h $(LIBCRIUS)
	@mkdir -p $(@D)
	$(FUZZ_CXX) -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I. $(TOML_CFLAGS) $(JSON_CFLAGS) \
	  -o $@ $(filter %.cpp,$^) $(LIBCRIUS) $(TOML_LIBS)

# The slurmctld entry point with its C glue, on a 1 MiB stack (tests/fuzz/job_submit.sh).
$(B)/tests/fuzz/fuzz_job_submit: tests/fuzz/fuzz_job_submit.cpp slurm_plugin/job_submit_crius.cpp \
  slurm_plugin/request.cpp slurm_plugin/submit.cpp slurm_plugin/free_gpus.cpp scheduler/objective.cpp $(LIBCRIUS_SRCS) \
  $(wildcard slurm_plugin/*.h job/*.h estimator/*.h common/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CXX) -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I. $(SLURM_CFLAGS) $(TOML_CFLAGS) $(JSON_CFLAGS) \
	  -DCRIUS_SYSCONFDIR='"$(sysconfdir)"' -o $@ $(filter %.cpp,$^) $(TOML_LIBS) -lpthread

# In-process speed of job_submit (tests/bench/job_submit-speed.sh).
BENCH_PROGRAMS += $(B)/tests/bench/job_submit-bench
$(B)/tests/bench/job_submit-bench: $(B)/tests/bench/job_submit_bench.o $(B)/libcrius_slurm.a $(LIBCRIUS)
	$(LINK_PROGRAM)

MANPAGES += man/spank_crius.8 man/job_submit_crius.8

# A libslurm client that bypasses the SPANK plugin (tests/slurm/plugin_hostile.sh).
TEST_PROGRAMS += $(B)/tests/slurm/crius-hostile-submit
$(B)/tests/slurm/hostile_submit.o: EXTRA_CPPFLAGS += $(SLURM_CFLAGS)
$(B)/tests/slurm/crius-hostile-submit: $(B)/tests/slurm/hostile_submit.o
	$(LINK_PROGRAM)
$(B)/tests/slurm/crius-hostile-submit: EXTRA_LIBS += $(SLURM_LIBS)
