"""The package's shape: torch is touched only by compilescope.live; the model stays pure data."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ext" / "compilescope"


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_only_live_imports_torch():
    offenders = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if "torch" in imported_modules(p)
        and "live" not in p.relative_to(PACKAGE).parts
        and p.name != "__main__.py"
    ]
    assert offenders == []


def test_model_and_reader_load_without_torch():
    code = (
        "import sys, compilescope\n"
        "from compilescope import load_trace\n"
        f"cap = load_trace({str(PACKAGE.parents[1] / 'tests/fixtures/plain_function.log.gz')!r})\n"
        "cap.to_json(); str(cap)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('torch', 'ipywidgets', 'anywidget')]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_model_imports_no_view():
    # One direction of flow: views read the model; the model never reaches back (issue 13).
    offenders = []
    for path in (PACKAGE / "model").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "views":
                offenders.append(str(path.relative_to(PACKAGE)))
            if isinstance(node, ast.ImportFrom) and "views" in (node.module or "").split("."):
                offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []
