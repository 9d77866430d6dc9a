# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# slurm_plugin/criusd/: criusd, the controller (libslurm + the scheduler core).
# The Slurm-free part (snapshot, record, controller, metrics) is an archive the unit tests link.
LIBCRIUSD := $(B)/libcrius_criusd.a
$(LIBCRIUSD): $(addprefix $(B)/slurm_plugin/criusd/,snapshot.o limits.o description.o controller.o metrics.o failover.o)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^
UNIT_TEST_ARCHIVES := $(LIBCRIUSD) $(UNIT_TEST_ARCHIVES)

SBIN_PROGRAMS += $(B)/sbin/criusd
MANPAGES += man/criusd.8
$(B)/sbin/criusd: $(addprefix $(B)/slurm_plugin/criusd/,slurm_client.o main.o) $(LIBCRIUSD) $(B)/slurm_plugin/free_gpus.o \
  $(LIBCRIUS_SCHED) $(LIBCRIUS)
	$(LINK_PROGRAM)
$(B)/sbin/criusd: EXTRA_LIBS += $(SLURM_LIBS) $(GLPK_LIBS)
$(B)/slurm_plugin/criusd/%.o: EXTRA_CPPFLAGS += $(SLURM_CFLAGS) -DCRIUS_SLURM_SYSCONFDIR='"$(SLURM_SYSCONFDIR)"' 
