# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius — hand-written, non-recursive Makefile (git's pattern).
#
# `./configure` writes config.mk, which this file includes. On a fresh clone, any
# target first runs scripts/bootstrap (autoconf, configure); `make check` and
# `make demo` also install the missing Debian packages (scripts/install-deps).
# Each component folder adds its sources, programs and tests in its module.mk.
#
#   make            build everything into $(B)/
#   make check      build and run every test suite (tests/run)
#   make demo       the end-to-end demo on a throwaway local Slurm cluster
#   make bench      benchmarks (speed and accuracy figures)
#   make install    DESTDIR and prefix honoured; plugins go to Slurm's PluginDir
#   make packages-check  the Debian packages (debian/), in a throwaway root only
#                   (scripts/check-fresh --only packages)
#   make SANITIZE=address,undefined check
#   make WERROR=1   warnings are errors (CI sets this)

.DEFAULT_GOAL := all
SHELL := /bin/bash
# Build with every core by default (`make check` from a fresh clone stays short).
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)

ifeq ($(filter clean distclean,$(MAKECMDGOALS)),)
include config.mk
endif

# The README's two commands install missing Debian packages first; every other target only
# configures (configure names the package of anything missing).
config.mk: configure.ac config.mk.in scripts/bootstrap scripts/install-deps
	scripts/bootstrap $(if $(filter check demo packages-check,$(MAKECMDGOALS)),--install-deps)

# ---- build settings -------------------------------------------------------
# `make clean` removes B when it is given (command line or environment), else both defaults.
ifneq ($(filter command line environment,$(origin B)),)
CLEAN_DIRS := $(B)
else
CLEAN_DIRS := build build-san
endif
ifdef SANITIZE
B ?= build-san
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
# GCC's -Wmaybe-uninitialized gives false positives under sanitizers (libstdc++'s <regex>).
SAN_WARN_FLAGS := -Wno-maybe-uninitialized
else
B ?= build
SAN_FLAGS :=
SAN_WARN_FLAGS :=
endif
# One name per build folder: objects built with B=$(CURDIR)/build (tests/cli/install.sh) and with
# B=build would otherwise record their header dependencies under two names, and a header change
# would not rebuild the objects of the other.
override B := $(patsubst $(CURDIR)/%,%,$(B))
ifeq ($(CI),true)
WERROR ?= 1
endif
ifeq ($(WERROR),1)
WARN_FLAGS := -Wall -Wextra -Werror
else
WARN_FLAGS := -Wall -Wextra
endif

OPTFLAGS ?= -O2 -g
CPPFLAGS_ALL := -I. -I$(B)/gen $(TOML_CFLAGS) $(JSON_CFLAGS)
CXXFLAGS_ALL := -std=c++20 -fPIC $(OPTFLAGS) $(WARN_FLAGS) $(SAN_WARN_FLAGS) $(SAN_FLAGS) $(CXXFLAGS)
CFLAGS_ALL := -std=c11 -fPIC $(OPTFLAGS) $(WARN_FLAGS) $(CFLAGS)
LDFLAGS_ALL := $(SAN_FLAGS) $(LDFLAGS)

# Filled by module.mk files.
LIBCRIUS_SRCS :=
PROGRAMS :=          # installed into bindir
SBIN_PROGRAMS :=     # installed into sbindir
PLUGINS :=           # installed into SLURM_PLUGINDIR
TEST_PROGRAMS :=     # built by `make check`, never installed
BENCH_PROGRAMS :=
MANPAGES :=
ETC_FILES :=         # installed under $(sysconfdir)/crius, path relative to etc/crius
ETC_CONFFILES :=     # of those, the site's to edit: kept on install and uninstall once edited

LIBCRIUS := $(B)/libcrius.a
UNIT_TEST_ARCHIVES :=  # component archives unit tests link (before libcrius)
UNIT_TEST_LIBS :=      # system libraries unit tests link

include common/module.mk
include estimator/module.mk
include job/module.mk
include scheduler/module.mk
include slurm_plugin/module.mk
include slurm_plugin/criusd/module.mk
include launcher/module.mk
include status/module.mk
include etc/module.mk
include tests/module.mk

LIBCRIUS_OBJS := $(LIBCRIUS_SRCS:%.cpp=$(B)/%.o)

# ./configure --without-X (config.mk: HAVE_X = 0) leaves out what needs X. The plugins
# need none of them; `make check` and `make bench` need the full build.
ifeq ($(HAVE_CLI11),0)
PROGRAMS :=
SBIN_PROGRAMS :=
endif
ifeq ($(HAVE_HWLOC),0)
PROGRAMS := $(filter-out %/crius-discover,$(PROGRAMS))
endif
ifeq ($(HAVE_GLPK),0)
PROGRAMS := $(filter-out %/crius-sim,$(PROGRAMS))
SBIN_PROGRAMS := $(filter-out %/criusd,$(SBIN_PROGRAMS))
endif
ifeq ($(HAVE_MPI),0)
PROGRAMS := $(filter-out %/crius-train %/crius-profile,$(PROGRAMS))
endif
PARTIAL_BUILD := $(filter 0,$(HAVE_CLI11) $(HAVE_HWLOC) $(HAVE_GLPK) $(HAVE_MPI) $(HAVE_BOOST_TEST))

# ---- generic rules ---------------------------------------------------------
$(B)/%.o: %.cpp config.mk
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS_ALL) $(CXXFLAGS_ALL) $(EXTRA_CPPFLAGS) -MMD -MP -c -o $@ $<

$(B)/%.o: %.c config.mk
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(EXTRA_CPPFLAGS) -MMD -MP -c -o $@ $<

$(LIBCRIUS): $(LIBCRIUS_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

# Programs list their objects as prerequisites; EXTRA_LIBS is set per target.
LINK_PROGRAM = @mkdir -p $(@D) && $(CXX) $(LDFLAGS_ALL) -o $@ $(filter %.o %.a,$^) $(EXTRA_LIBS) $(TOML_LIBS) -lpthread

.PHONY: all check check-programs demo bench install uninstall clean distclean lint-man print-installed packages-check
all: $(PROGRAMS) $(SBIN_PROGRAMS) $(PLUGINS)

# What the tests run, built without running them (tests/gpu/run-all).
check-programs: all $(TEST_PROGRAMS)

check: all $(if $(PARTIAL_BUILD),,$(TEST_PROGRAMS))
	$(if $(PARTIAL_BUILD),@echo "make check needs the full build: configure without --without-*" >&2; exit 2)
	B=$(B) SANITIZE=$(SANITIZE) tests/run

demo: all
	B=$(B) scripts/demo

bench: all $(if $(PARTIAL_BUILD),,$(BENCH_PROGRAMS))
	$(if $(PARTIAL_BUILD),@echo "make bench needs the full build: configure without --without-*" >&2; exit 2)
	B=$(B) tests/bench/run

lint-man:
	B=$(B) tests/run man

# Build the Debian packages, install, test, upgrade and purge them: system-wide, so only in a
# throwaway root (scripts/check-packages says how).
packages-check:
	scripts/check-packages --throwaway-root

# ---- install ---------------------------------------------------------------
INSTALL ?= install
crius_etcdir := $(sysconfdir)/crius
systemd_unitdir ?= $(prefix)/lib/systemd/system

# slurmctld refuses to start with a job_submit plugin built for another Slurm release (to the
# micro version; src/common/plugin.c), so the plugins go only beside the Slurm they were built for,
# or under DESTDIR (a staged upgrade: configure --with-slurm=DIR).
install: all
	@if [ -z "$(DESTDIR)" ] && [ -n "$(SLURM_RUNNING_VERSION)" ] && [ "$(SLURM_RUNNING_VERSION)" != "$(SLURM_VERSION)" ]; then \
	  echo "make install: the plugins are built for Slurm $(SLURM_VERSION) but this machine runs slurmctld $(SLURM_RUNNING_VERSION):" \
	    "slurmctld would not start with job_submit_crius.so; install them with DESTDIR=... and copy them where Slurm $(SLURM_VERSION) runs" >&2; \
	  exit 1; fi
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(sbindir) $(DESTDIR)$(SLURM_PLUGINDIR) \
	  $(DESTDIR)$(crius_etcdir) $(DESTDIR)$(SLURM_SYSCONFDIR)/plugstack.conf.d
	$(if $(PROGRAMS),$(INSTALL) -m 0755 $(PROGRAMS) $(DESTDIR)$(bindir))
	$(if $(SBIN_PROGRAMS),$(INSTALL) -m 0755 $(SBIN_PROGRAMS) $(DESTDIR)$(sbindir))
	$(if $(PLUGINS),$(INSTALL) -m 0755 $(PLUGINS) $(DESTDIR)$(SLURM_PLUGINDIR))
	CONFFILES="$(ETC_CONFFILES)" scripts/install-etc install etc/crius $(DESTDIR)$(crius_etcdir) $(ETC_FILES)
	$(INSTALL) -m 0644 etc/plugstack.conf.d/crius.conf $(DESTDIR)$(SLURM_SYSCONFDIR)/plugstack.conf.d/crius.conf
	for m in $(MANPAGES); do \
	  s=$${m##*.}; $(INSTALL) -D -m 0644 $$m $(DESTDIR)$(mandir)/man$$s/$${m##*/} || exit 1; done
	$(INSTALL) -d $(DESTDIR)$(systemd_unitdir)
	sed 's|@sbindir@|$(sbindir)|g' etc/systemd/criusd.service.in > $(DESTDIR)$(systemd_unitdir)/criusd.service

# Every file `make install` writes, without DESTDIR (used by tests/cli/install.sh).
print-installed:
	@for f in $(notdir $(PROGRAMS)); do echo $(bindir)/$$f; done
	@for f in $(notdir $(SBIN_PROGRAMS)); do echo $(sbindir)/$$f; done
	@for f in $(notdir $(PLUGINS)); do echo $(SLURM_PLUGINDIR)/$$f; done
	@for f in $(ETC_FILES); do echo $(crius_etcdir)/$$f; done
	@echo $(crius_etcdir)/.shipped.sha256
	@for m in $(MANPAGES); do s=$${m##*.}; echo $(mandir)/man$$s/$${m##*/}; done
	@echo $(systemd_unitdir)/criusd.service
	@echo $(SLURM_SYSCONFDIR)/plugstack.conf.d/crius.conf

# slurmctld does not start while slurm.conf names a job_submit plugin it cannot load: uninstall
# refuses until the site took crius out of JobSubmitPlugins (FORCE=1 uninstalls anyway).
uninstall:
	@conf=$(DESTDIR)$(SLURM_SYSCONFDIR)/slurm.conf; \
	if [ -z "$(FORCE)" ] && [ -f "$$conf" ] && grep -qiE '^[[:space:]]*JobSubmitPlugins[[:space:]]*=.*(^|[=,[:space:]])(job_submit/)?crius([,[:space:]]|$$)' "$$conf"; then \
	  echo "make uninstall: $$conf still lists crius in JobSubmitPlugins, and slurmctld does not start without job_submit_crius.so:" \
	    "take crius out of that line and restart slurmctld first (or make uninstall FORCE=1)" >&2; \
	  exit 1; fi
	rm -f $(addprefix $(DESTDIR)$(bindir)/,$(notdir $(PROGRAMS)))
	rm -f $(addprefix $(DESTDIR)$(sbindir)/,$(notdir $(SBIN_PROGRAMS)))
	rm -f $(addprefix $(DESTDIR)$(SLURM_PLUGINDIR)/,$(notdir $(PLUGINS)))
	CONFFILES="$(ETC_CONFFILES)" scripts/install-etc uninstall etc/crius $(DESTDIR)$(crius_etcdir) $(ETC_FILES)
	rm -f $(DESTDIR)$(SLURM_SYSCONFDIR)/plugstack.conf.d/crius.conf
	rm -f $(DESTDIR)$(systemd_unitdir)/criusd.service
	for m in $(MANPAGES); do s=$${m##*.}; rm -f $(DESTDIR)$(mandir)/man$$s/$${m##*/}; done
	-rmdir $(DESTDIR)$(crius_etcdir)/examples $(DESTDIR)$(crius_etcdir)/calibration $(DESTDIR)$(crius_etcdir) 2>/dev/null

clean:
	rm -rf $(CLEAN_DIRS)

distclean: clean
	rm -rf config.mk config.log config.status configure autom4te.cache

-include $(shell find $(B) -name '*.d' 2>/dev/null)
