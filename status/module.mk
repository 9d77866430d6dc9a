# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# status/: crius-status, a user's view of what crius did and does to their jobs (the job's
# record read from slurmctld, as the user: its Cell, the move in flight, the moves criusd made).
PROGRAMS += $(B)/bin/crius-status
MANPAGES += man/crius-status.1
$(B)/bin/crius-status: $(B)/status/status_main.o $(B)/libcrius_slurm.a $(LIBCRIUS)
	$(LINK_PROGRAM)
$(B)/bin/crius-status: EXTRA_LIBS += $(SLURM_LIBS)
$(B)/status/status_main.o: EXTRA_CPPFLAGS += $(SLURM_CFLAGS)
