"""Charts: matplotlib figures and plain SVG, labels made safe for both."""
