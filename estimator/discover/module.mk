# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# estimator/discover/: crius-discover (hwloc).  The topology reading and the
# output formats live in libcrius_discover.a so unit tests can drive them.
DISCOVER_LIB := $(B)/libcrius_discover.a
DISCOVER_SRCS := estimator/discover/topology.cpp estimator/discover/output.cpp

$(DISCOVER_LIB): $(DISCOVER_SRCS:%.cpp=$(B)/%.o)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

PROGRAMS += $(B)/bin/crius-discover
$(B)/bin/crius-discover: $(B)/estimator/discover/main.o $(DISCOVER_LIB) $(LIBCRIUS)
	$(LINK_PROGRAM)
$(B)/bin/crius-discover: EXTRA_LIBS += $(HWLOC_LIBS)
$(B)/estimator/discover/%.o: EXTRA_CPPFLAGS += $(HWLOC_CFLAGS)

UNIT_TEST_ARCHIVES += $(DISCOVER_LIB)
UNIT_TEST_LIBS += $(HWLOC_LIBS)

MANPAGES += man/crius-discover.1
