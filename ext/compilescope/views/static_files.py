"""The files of `static/` (stylesheet, bundled ES modules), read without importing anywidget."""

from __future__ import annotations

from functools import cache
from pathlib import Path

# The package's own folder on disk (an ordinary or editable install); importlib.resources only
# for a package that is not (a zip), as it costs more to import than reading the file itself.
_STATIC = Path(__file__).resolve().parents[1] / "static"


@cache
def static_text(name: str) -> str:
    """A file of `static/`: "compilescope.css", or a bundle such as "dist/result.js".

    The bundles are built from the ES modules in `static/` by `make js` (esbuild) and committed.
    """
    if _STATIC.is_dir():
        return _STATIC.joinpath(*name.split("/")).read_text("utf-8")
    from importlib.resources import files

    path = files("compilescope").joinpath("static")
    for part in name.split("/"):
        path = path.joinpath(part)
    return path.read_text("utf-8")
