"""The live widgets (anywidget): the result view and the graph explorer, each with an HTML fallback.

The ES modules are committed files in `static/` (no Node at install); the state is one JSON
string traitlet, so a notebook saved with its widget state re-renders without a kernel.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files

import anywidget
import traitlets

_STATIC = files("compilescope").joinpath("static")
_RESULT_TAIL = """
export default { render({ model, el }) {
  const draw = () => { el.textContent = ""; csRenderResult(el, JSON.parse(model.get("data"))); };
  draw();
  model.on("change:data", draw);
} };
"""
_EXPLORER_TAIL = """
export default { render({ model, el }) {
  const draw = () => {
    el.textContent = "";
    const box = document.createElement("div");
    box.className = "cs-root";
    el.appendChild(box);
    csCreateExplorer(box, JSON.parse(model.get("data")));
  };
  draw();
  model.on("change:data", draw);
} };
"""


@cache
def static_text(name: str) -> str:
    return _STATIC.joinpath(name).read_text("utf-8")


def result_script() -> str:
    """The result view's JavaScript without the anywidget export (used by the HTML report too)."""
    return "\n".join(
        static_text(name)
        for name in (
            "placement.js",
            "explorer.js",
            "text.js",
            "diff.js",
            "partition.js",
            "timings.js",
            "result.js",
        )
    )


def explorer_script() -> str:
    """The explorer's JavaScript alone (placement and drawing), without the anywidget export."""
    return static_text("placement.js") + "\n" + static_text("explorer.js")


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

    _esm = result_script() + _RESULT_TAIL
    _css = static_text("compilescope.css")
    data = traitlets.Unicode("{}").tag(sync=True)


class ExplorerWidget(_WithFallback):
    """One graph in the explorer: pan, zoom, search, groups, details."""

    _esm = explorer_script() + _EXPLORER_TAIL
    _css = static_text("compilescope.css")
    data = traitlets.Unicode("{}").tag(sync=True)
