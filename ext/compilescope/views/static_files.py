"""The files of `static/` (stylesheet, bundled ES modules), read without importing anywidget."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

_STATIC = files("compilescope").joinpath("static")


@cache
def static_text(name: str) -> str:
    """A file of `static/`: "compilescope.css", or a bundle such as "dist/result.js".

    The bundles are built from the ES modules in `static/` by `make js` (esbuild) and committed.
    """
    path = _STATIC
    for part in name.split("/"):
        path = path.joinpath(part)
    return path.read_text("utf-8")
