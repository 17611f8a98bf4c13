"""What every chart shares: a Figure that shows itself without pyplot, labels safe for matplotlib
and point labels placed where they overlap nothing."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.transforms import Bbox, BboxBase

LABEL_CHARS = 44  # characters of a row label (full names are in the view's tables)
# Where a point's label may go, in points from the point: right, left, above, below, corners.
_SPOTS = (
    (5, 0, "left", "center"), (-5, 0, "right", "center"), (0, 5, "center", "bottom"),
    (0, -5, "center", "top"), (4, 4, "left", "bottom"), (-4, 4, "right", "bottom"),
    (4, -4, "left", "top"), (-4, -4, "right", "top"),
)  # fmt: skip


def label_text(value: str, limit: int = LABEL_CHARS) -> str:
    """A capture's string as a matplotlib label: cut to `limit` characters, `$` kept literal."""
    # Capture strings are plain text: `$` would start matplotlib's math mode.
    value = value if len(value) <= limit else value[: limit - 1] + "\u2026"
    return value.replace("$", r"\$")


_SUPERSCRIPT = str.maketrans(
    "-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"
)


def power_of_ten(value: float, _position: object = None) -> str:
    """A log axis's tick label as plain text, "10⁶" for a whole power and "" between: what
    matplotlib writes as math text ($10^{6}$), whose parser took 14% of drawing the charts."""
    exponent = round(math.log10(value)) if value > 0 else None
    if exponent is None or not math.isclose(value, 10.0**exponent, rel_tol=1e-9):
        return ""
    return "10" + str(exponent).translate(_SUPERSCRIPT)


class ShownFigure(Figure):
    """A Figure that shows itself in a notebook as a PNG, with or without pyplot's inline
    backend (a Figure made without pyplot otherwise shows as `<Figure size ...>`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # gid of an artist -> its full text: figures.svg writes it as the artist's <title>,
        # which a browser shows on hover (the widget, the report, an exported notebook).
        self.hover: dict[str, str] = {}
        # Laid out already (`lay_out`) and unchanged since: saving need not lay it out again.
        self.laid_out = False

    def _repr_png_(self) -> bytes:
        out = io.BytesIO()
        self.savefig(out, format="png", bbox_inches="tight")
        return out.getvalue()


def lay_out(fig: Figure) -> None:
    """Run the figure's layout engine now (constrained layout: where its axes go), so that
    labels can be placed in pixels; they are kept out of the layout, which then stays put."""
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
    if isinstance(fig, ShownFigure):
        fig.laid_out = True


def _overlaps(box: Bbox, taken: list[Bbox]) -> bool:
    return any(box.overlaps(other) for other in taken)


def _inside(box: BboxBase, frame: BboxBase) -> bool:
    # BboxBase, not Bbox: matplotlib's stubs type Bbox's x0..y1 (redefined with setters) as Any.
    return frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1


def place_labels(
    ax: Axes,
    points: Sequence[tuple[float, float, float, Sequence[str]]],
    fontsize: float = 6,
) -> list[str | None]:
    """Label points (x, y in data units, the marker's radius in points, the texts to try: the
    longest first) where a label overlaps no other label, no text already in the axes and no
    other point, inside the axes; a point whose texts fit nowhere stays unlabelled (its full
    name is on hover and in the chart's table). Points come most important first. Returns the
    text each point got (None: none). Call `lay_out` first: it places the axes."""
    fig = ax.figure
    assert isinstance(fig, Figure)  # our charts' axes sit on a Figure, not a SubFigure
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    frame = ax.get_window_extent(renderer)
    taken = [t.get_window_extent(renderer) for t in ax.texts if t.get_visible()]
    scale = fig.dpi / 72
    marks = []
    for x, y, radius, _ in points:
        px, py = ax.transData.transform((x, y))
        r = max(radius, 2) * scale
        marks.append(Bbox.from_extents(px - r, py - r, px + r, py + r))
    placed: list[str | None] = []
    font = FontProperties(size=fontsize)
    for k, (x, y, _, texts) in enumerate(points):
        others = taken + marks[:k] + marks[k + 1 :]
        px, py = ax.transData.transform((x, y))
        chosen = None
        for text in texts:
            # Each spot's box from the text's size, so only the chosen one becomes an artist;
            # that one is measured again as drawn (a pixel of slack either way).
            w, h, _ = renderer.get_text_width_height_descent(text, font, ismath=False)
            for dx, dy, ha, va in _SPOTS:
                x0 = px + dx * scale - {"left": 0, "center": w / 2, "right": w}[ha]
                y0 = py + dy * scale - {"bottom": 0, "center": h / 2, "top": h}[va]
                box = Bbox.from_extents(x0 - 1, y0 - 1, x0 + w + 1, y0 + h + 1)
                if not _inside(box, frame) or _overlaps(box, others):
                    continue
                note = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points",
                                   fontsize=fontsize, ha=ha, va=va)  # fmt: skip
                note.set_in_layout(False)  # placed in a laid-out figure: keep the layout
                drawn = note.get_window_extent(renderer)
                if _inside(drawn, frame) and not _overlaps(drawn, others):
                    chosen = text
                    taken.append(Bbox.union([drawn, box]))
                    break
                note.remove()
            if chosen is not None:
                break
        placed.append(chosen)
    return placed
