# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# etc/: default configuration, GPU and model catalogues, example clusters, calibration tables.
# Paths relative to etc/crius; installed under $(sysconfdir)/crius.
ETC_FILES += gpus.toml models.toml crius.toml \
  examples/paper-sim.toml examples/paper-testbed.toml examples/dgx-h100.toml \
  calibration/README.md calibration/nccl-a100.csv calibration/nccl-v100.csv \
  calibration/nccl-a40.csv calibration/nccl-a10.csv
ETC_CONFFILES += crius.toml gpus.toml models.toml
