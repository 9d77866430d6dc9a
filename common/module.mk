# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# common/: small helpers shared by every component (text, numbers, CSV, files,
# percentiles, digests); part of libcrius.
LIBCRIUS_SRCS += common/util.cpp
