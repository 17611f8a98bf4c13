"""The script-free and standalone HTML: the offline report, its index, the rank report, the summary."""
