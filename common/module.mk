# common/: small helpers shared by every component (text, numbers, CSV, files,
# percentiles, digests); part of libcrius.
LIBCRIUS_SRCS += common/util.cpp
