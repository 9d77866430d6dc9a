# launcher/: see DESIGN.md
