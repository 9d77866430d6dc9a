# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# job/: the contract of a crius job (crius(7)): its record (AdminComment) and its
# CRIUS_* environment, each with one codec; part of libcrius.
LIBCRIUS_SRCS += job/record.cpp job/env.cpp job/progress.cpp
