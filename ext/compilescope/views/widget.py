"""The live widgets (anywidget): the result view and the graph explorer, each with an HTML fallback.

Each widget's ES module is a bundle committed in `static/dist/` (built from the modules in
`static/` by `make js`; no Node at install); the state is one JSON string traitlet, so a notebook
saved with its widget state re-renders without a kernel.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from .static_files import static_text as static_text  # where the report reads them too


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


class _WithFallback(anywidget.AnyWidget):
    """A widget whose output also carries script-free HTML, for nbconvert, GitHub and reopening."""

    def __init__(self, data: dict[str, Any], fallback: str, text: str = "", **kwargs: Any) -> None:
        super().__init__(data=_dumps(data), **kwargs)
        self._fallback = fallback
        self._text = text

    def __repr__(self) -> str:  # what a terminal shows (IPython's text/plain)
        return self._text or super().__repr__()

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, tuple):
            data, metadata = bundle
        else:
            data, metadata = (bundle or {}), {}
        data = {**data, "text/html": self._fallback}
        return data, metadata


class ResultWidget(_WithFallback):
    """What `%%compile_fx` shows: every stage of a capture, cross-linked.

    With `on_try` (finding number -> JSON-ready result), a finding's "try this fix" button
    asks the kernel to try it; the result comes back in `trial`.
    """

    _esm = static_text("dist/result.js")
    _css = static_text("compilescope.css")
    data = traitlets.Unicode("{}").tag(sync=True)
    trial = traitlets.Unicode("null").tag(sync=True)
    tryable = traitlets.Bool(False).tag(sync=True)

    def __init__(
        self,
        data: dict[str, Any],
        fallback: str,
        text: str = "",
        on_try: Callable[[int], dict[str, Any]] | None = None,
        **kwargs: object,
    ) -> None:
        super().__init__(data, fallback, text, tryable=on_try is not None, **kwargs)
        self._on_try = on_try
        self.on_msg(self._message)

    def _message(self, _widget: object, content: object, _buffers: object) -> None:
        if not (isinstance(content, dict) and content.get("kind") == "try_fix"):
            return
        number = content.get("number")
        if self._on_try is None or not isinstance(number, int):
            return
        try:
            result = self._on_try(number)
        except Exception as error:  # shown in the view: a failed trial must not raise in a comm
            result = {"title": f"finding {number}", "python": "", "rows": [],
                      "error": f"{type(error).__name__}: {error}"}  # fmt: skip
        # The view shows the result by the finding it came from.
        self.trial = _dumps({**result, "number": number})


class ExplorerWidget(_WithFallback):
    """One graph in the explorer: pan, zoom, search, groups, details."""

    _esm = static_text("dist/explorer.js")
    _css = static_text("compilescope.css")
    data = traitlets.Unicode("{}").tag(sync=True)
