# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Tests. Every tests/unit/test_*.cpp is one Boost.Test binary (it defines
# BOOST_TEST_MODULE), linked with the component archives and libcrius.
# Script suites (tests/{cli,mpi,slurm,gpu,fuzz}/*.sh) need no rule here;
# programs they need are added to TEST_PROGRAMS by their component's module.mk.
UNIT_TESTS := $(patsubst tests/unit/%.cpp,$(B)/tests/unit/%,$(wildcard tests/unit/test_*.cpp))
TEST_PROGRAMS += $(UNIT_TESTS)

# $(SLURM_CFLAGS): the tests of the plugins' code see the Slurm headers that code was built with
# (configure --with-slurm=DIR: another release's)
$(B)/tests/unit/%.o: EXTRA_CPPFLAGS += -DBOOST_TEST_DYN_LINK $(SLURM_CFLAGS)
$(UNIT_TESTS): $(B)/tests/unit/%: $(B)/tests/unit/%.o $(UNIT_TEST_ARCHIVES) $(LIBCRIUS)
	$(LINK_PROGRAM)
$(UNIT_TESTS): EXTRA_LIBS += $(UNIT_TEST_LIBS) $(BOOST_TEST_LIBS)
