# estimator/discover/: crius-discover (hwloc)
