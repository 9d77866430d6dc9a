# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# launcher/: crius-launch, the rank layout (libcrius_launch.a, pure C++), the
# MPI/NCCL runtime (libcrius_runtime.a) and the crius-train reference trainer.
# CUDA/NCCL parts build only when config.mk says HAVE_CUDA=1 / HAVE_NCCL=1.

LAUNCH_LIB := $(B)/libcrius_launch.a
RUNTIME_LIB := $(B)/libcrius_runtime.a

LAUNCH_OBJS := $(B)/launcher/layout.o $(B)/launcher/plan_source.o $(B)/launcher/rank_env.o $(B)/launcher/megatron.o \
  $(B)/launcher/torchtitan.o $(B)/launcher/progress_scan.o
$(LAUNCH_LIB): $(LAUNCH_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

RUNTIME_SRCS := launcher/runtime.cpp
ifeq ($(HAVE_NCCL),1)
RUNTIME_SRCS += launcher/nccl_comm.cpp
endif
RUNTIME_OBJS := $(RUNTIME_SRCS:%.cpp=$(B)/%.o)
$(RUNTIME_OBJS): EXTRA_CPPFLAGS += $(MPI_CFLAGS) -DOMPI_SKIP_MPICXX=1
ifeq ($(HAVE_NCCL),1)
$(RUNTIME_OBJS): EXTRA_CPPFLAGS += -DCRIUS_HAVE_NCCL=1 $(CUDA_CFLAGS) $(NCCL_CFLAGS)
endif
$(RUNTIME_LIB): $(RUNTIME_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

RUNTIME_LINK_LIBS := $(MPI_LIBS)
ifeq ($(HAVE_NCCL),1)
RUNTIME_LINK_LIBS += $(NCCL_LIBS) $(CUDA_LIBS)
endif

# crius-launch: no MPI library needed (it runs mpirun/srun and is its own rank shim);
# libslurm reads the job's record (the source of its plan; slurm_plugin/load_record.h) and
# writes the job's progress into its Comment (slurm_plugin/job_comment.h).
PROGRAMS += $(B)/bin/crius-launch
$(B)/bin/crius-launch: $(addprefix $(B)/launcher/,launch_main.o rank_exec.o watch.o) \
  $(B)/slurm_plugin/job_comment.o $(B)/libcrius_slurm.a $(LAUNCH_LIB) $(LIBCRIUS)
	$(LINK_PROGRAM)
$(B)/bin/crius-launch: EXTRA_LIBS += $(SLURM_LIBS)
$(B)/launcher/launch_main.o: EXTRA_CPPFLAGS += -DCRIUS_MPIRUN='"$(MPIRUN)"' -DCRIUS_SLURM_SYSCONFDIR='"$(SLURM_SYSCONFDIR)"'

# crius-train: reference trainer (MPI; cuBLAS + NCCL backend with CUDA).
TRAIN_SRCS := launcher/train/train_main.cpp launcher/train/model.cpp launcher/train/predict.cpp
ifeq ($(HAVE_CUDA),1)
TRAIN_SRCS += launcher/train/gpu_backend.cpp
endif
TRAIN_OBJS := $(TRAIN_SRCS:%.cpp=$(B)/%.o)
$(TRAIN_OBJS): EXTRA_CPPFLAGS += $(MPI_CFLAGS) -DOMPI_SKIP_MPICXX=1
ifeq ($(HAVE_CUDA),1)
$(TRAIN_OBJS): EXTRA_CPPFLAGS += -DCRIUS_HAVE_CUDA=1 $(CUDA_CFLAGS)
endif
ifeq ($(HAVE_NCCL),1)
$(TRAIN_OBJS): EXTRA_CPPFLAGS += -DCRIUS_HAVE_NCCL=1 $(NCCL_CFLAGS)
endif
PROGRAMS += $(B)/bin/crius-train
$(B)/bin/crius-train: $(TRAIN_OBJS) $(RUNTIME_LIB) $(LAUNCH_LIB) $(LIBCRIUS)
	$(LINK_PROGRAM)
$(B)/bin/crius-train: EXTRA_LIBS += $(RUNTIME_LINK_LIBS)
ifeq ($(HAVE_CUDA),1)
$(B)/bin/crius-train: EXTRA_LIBS += $(CUDA_LIBS)
endif

# crius-profile: measures this machine for the estimator (CPU path: crius-train's kernels, MPI).
PROFILE_OBJS := $(B)/launcher/train/profile_main.o $(B)/launcher/train/profile_gpu.o $(B)/launcher/train/model.o \
  $(B)/launcher/train/predict.o
$(B)/launcher/train/profile_main.o $(B)/launcher/train/profile_gpu.o: EXTRA_CPPFLAGS += $(MPI_CFLAGS) -DOMPI_SKIP_MPICXX=1
ifeq ($(HAVE_CUDA),1)
$(B)/launcher/train/profile_gpu.o: EXTRA_CPPFLAGS += -DCRIUS_HAVE_CUDA=1 $(CUDA_CFLAGS)
endif
ifeq ($(HAVE_NCCL),1)
$(B)/launcher/train/profile_gpu.o: EXTRA_CPPFLAGS += -DCRIUS_HAVE_NCCL=1 $(NCCL_CFLAGS)
endif
PROGRAMS += $(B)/bin/crius-profile
$(B)/bin/crius-profile: $(PROFILE_OBJS) $(RUNTIME_LIB) $(LAUNCH_LIB) $(LIBCRIUS)
	$(LINK_PROGRAM)
$(B)/bin/crius-profile: EXTRA_LIBS += $(RUNTIME_LINK_LIBS)
ifeq ($(HAVE_CUDA),1)
$(B)/bin/crius-profile: EXTRA_LIBS += $(CUDA_LIBS)
endif

# Test helper: prints the rank's view of the environment and its MPI groups.
TEST_PROGRAMS += $(B)/tests/mpi/crius-rankinfo
$(B)/tests/mpi/rankinfo.o: EXTRA_CPPFLAGS += $(MPI_CFLAGS) -DOMPI_SKIP_MPICXX=1
ifeq ($(HAVE_NCCL),1)
$(B)/tests/mpi/rankinfo.o: EXTRA_CPPFLAGS += -DCRIUS_HAVE_NCCL=1 $(CUDA_CFLAGS) $(NCCL_CFLAGS)
endif
$(B)/tests/mpi/crius-rankinfo: $(B)/tests/mpi/rankinfo.o $(RUNTIME_LIB) $(LAUNCH_LIB) $(LIBCRIUS)
	$(LINK_PROGRAM)
$(B)/tests/mpi/crius-rankinfo: EXTRA_LIBS += $(RUNTIME_LINK_LIBS)

# Test driver: every plan up to N ranks verified inside one MPI job.
TEST_PROGRAMS += $(B)/tests/mpi/crius-train-allplans
$(B)/tests/mpi/train_all_plans.o: EXTRA_CPPFLAGS += $(MPI_CFLAGS) -DOMPI_SKIP_MPICXX=1
$(B)/tests/mpi/crius-train-allplans: $(B)/tests/mpi/train_all_plans.o $(B)/launcher/train/model.o $(RUNTIME_LIB) \
  $(LAUNCH_LIB) $(LIBCRIUS)
	$(LINK_PROGRAM)
$(B)/tests/mpi/crius-train-allplans: EXTRA_LIBS += $(RUNTIME_LINK_LIBS)

UNIT_TEST_ARCHIVES += $(LAUNCH_LIB)
MANPAGES += man/crius-launch.1 man/crius-train.1 man/crius-profile.1

# Test driver: every plan offered to a framework's job, as handed over (tests/cli/megatron_validate.sh,
# tests/cli/torchtitan_validate.sh).
TEST_PROGRAMS += $(B)/tests/frameworks/framework-cases
$(B)/tests/frameworks/framework-cases: $(B)/tests/frameworks/cases.o $(LAUNCH_LIB) $(LIBCRIUS)
	$(LINK_PROGRAM)
