# scheduler/: see DESIGN.md
