# slurm_plugin/: see DESIGN.md
