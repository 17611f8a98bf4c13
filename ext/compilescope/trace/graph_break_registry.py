"""torch's graph-break registry (gb id -> type, explanation, hints), read without importing torch."""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

# torch ships it next to the code that raises the breaks (torch 2.13: torch/_dynamo/exc.py reads
# it to fill in each message's gb id and the link to the graph-break site).
_RELATIVE = Path("_dynamo") / "graph_break_registry.json"


def registry_path() -> Path | None:
    """Where the installed torch keeps its registry; None when torch or the file is absent."""
    try:
        # find_spec of a top-level package locates it without running its __init__.
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = Path(root) / _RELATIVE
        if path.is_file():
            return path
    return None


@functools.cache
def load() -> dict[str, list[dict[str, Any]]]:
    """The registry as torch ships it: "GB0291" -> versions, newest first, each a dict with
    `Gb_type`, `Context`, `Explanation` and `Hints`; {} when it cannot be read."""
    path = registry_path()
    if path is None:
        return {}
    return read(path)


def read(path: Path) -> dict[str, list[dict[str, Any]]]:
    """A registry file, keeping only well-formed entries ({} for a file that is not one)."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(key).upper(): [v for v in versions if isinstance(v, dict)]
        for key, versions in data.items()
        if isinstance(versions, list)
    }
