"""What every chart shares: a Figure that shows itself without pyplot, and labels safe for matplotlib."""

from __future__ import annotations

import io

from matplotlib.figure import Figure

LABEL_CHARS = 44  # characters of a row label (full names are in the view's tables)


def label_text(value: str, limit: int = LABEL_CHARS) -> str:
    """A capture's string as a matplotlib label: cut to `limit` characters, `$` kept literal."""
    # Capture strings are plain text: `$` would start matplotlib's math mode.
    value = value if len(value) <= limit else value[: limit - 1] + "\u2026"
    return value.replace("$", r"\$")


class ShownFigure(Figure):
    """A Figure that shows itself in a notebook as a PNG, with or without pyplot's inline
    backend (a Figure made without pyplot otherwise shows as `<Figure size ...>`)."""

    def _repr_png_(self) -> bytes:
        out = io.BytesIO()
        self.savefig(out, format="png", bbox_inches="tight")
        return out.getvalue()
