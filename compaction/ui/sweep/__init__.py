"""The Sweep page's parts: the grid form, the charts (heatmaps, frontier) and the results view."""
