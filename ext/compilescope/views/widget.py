"""The live widgets (anywidget): the result view and the graph explorer, each with an HTML fallback.

Each widget's ES module is a bundle committed in `static/dist/` (built from the modules in
`static/` by `make js`; no Node at install); the state is one JSON string traitlet, so a notebook
saved with its widget state re-renders without a kernel.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files

import anywidget
import traitlets

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


def _dumps(data: dict) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


class _WithFallback(anywidget.AnyWidget):
    """A widget whose output also carries script-free HTML, for nbconvert, GitHub and reopening."""

    def __init__(self, data: dict, fallback: str, text: str = "", **kwargs) -> None:
        super().__init__(data=_dumps(data), **kwargs)
        self._fallback = fallback
        self._text = text

    def __repr__(self) -> str:  # what a terminal shows (IPython's text/plain)
        return self._text or super().__repr__()

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, tuple):
            data, metadata = bundle
        else:
            data, metadata = (bundle or {}), {}
        data = {**data, "text/html": self._fallback}
        return data, metadata


class ResultWidget(_WithFallback):
    """What `%%compile_fx` shows: every stage of a capture, cross-linked."""

    _esm = static_text("dist/result.js")
    _css = static_text("compilescope.css")
    data = traitlets.Unicode("{}").tag(sync=True)


class ExplorerWidget(_WithFallback):
    """One graph in the explorer: pan, zoom, search, groups, details."""

    _esm = static_text("dist/explorer.js")
    _css = static_text("compilescope.css")
    data = traitlets.Unicode("{}").tag(sync=True)
