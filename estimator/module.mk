# estimator/: libcrius core (models, hardware, Cells, plan search, cost and memory
# model), crius-estimate and crius-discover.
LIBCRIUS_SRCS +=

include estimator/discover/module.mk
