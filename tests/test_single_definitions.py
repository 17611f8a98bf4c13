"""Each fact is defined once in the package: stage names, sizes as text, cell lookup, FLOPs, rates."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ext" / "compilescope"


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text("utf-8"))


def test_helpers_are_defined_once():
    defined = Counter()
    where: dict[str, list[str]] = {}
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.col_offset == 0:
                defined[node.name] += 1
                where.setdefault(node.name, []).append(name)
    for fact in ("human_bytes", "short_path", "milliseconds", "achieved_rates", "formula_flops",
                 "kernel_flops", "ipython_cell", "notebook_cell"):  # fmt: skip
        assert defined[fact] == 1, (fact, where.get(fact))
    # FLOPs are counted by torch's formulas in one module; the partition lab only sums them.
    assert where.get("flops_of", []) in ([], ["live/trials/torch_partitioners.py"])


def test_stage_names_are_listed_once():
    # common.STAGES is the one table: every other list of stages is derived from it. A literal
    # collection (or dict) naming two stages elsewhere is a second list.
    from compilescope.common import STAGES

    kinds = {s.kind for s in STAGES}
    lists = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
                elts = node.keys if isinstance(node, ast.Dict) else node.elts
                strings = {e.value for e in elts if isinstance(e, ast.Constant)}
                calls = {
                    e.args[0].value
                    for e in elts
                    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name)
                    and e.args and isinstance(e.args[0], ast.Constant)
                }  # fmt: skip
                # (`a, b = c.graph("..."), c.graph("...")` reads two graphs: not a list.)
                if len(kinds & (strings | calls)) >= 2:
                    lists.append(name)
    assert set(lists) == {"common.py"}, lists
    # The view's JS reads the table from the payload (views/view_data.py): it names no stage.
    named = {}
    for path in sorted((PACKAGE / "static").glob("*.js")):
        code = re.sub(r"//[^\n]*|/\*.*?\*/", "", path.read_text("utf-8"), flags=re.S)
        found = {k for k in kinds if f'"{k}"' in code or f"'{k}'" in code or f"`{k}`" in code}
        if found:
            named[path.name] = found
    assert named == {}, named


def test_bandwidth_is_computed_in_one_place():
    # A rate is bytes over a median time: only model/measured/timing.py divides by `time.median_s`.
    dividing = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                text = ast.unparse(node.right)
                if text.endswith("time.median_s") or text == "per_call":
                    dividing.append(name)
    assert set(dividing) <= {"model/measured/timing.py"}, dividing


def test_a_notebook_cell_is_named_in_one_place():
    # "cell [3] line 2" is written by model/place.py (cell_label) in Python and by format.js
    # (formatCell) in the view: a string, not a docstring, that says "cell [".
    writing = set()
    for name, tree in _modules():
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and "cell [" in text and id(node) not in docstrings:
                writing.add(name)
    assert writing == {"model/place.py"}, writing
    js = set()
    for path in sorted((PACKAGE / "static").glob("*.js")):
        code = re.sub(r"//[^\n]*|/\*.*?\*/", "", path.read_text("utf-8"), flags=re.S)
        if "cell [" in code:
            js.add(path.name)
    assert js == {"format.js"}, js
