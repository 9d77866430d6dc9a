# etc/: default configuration, GPU and model catalogues, example clusters, calibration tables.
ETC_FILES +=
