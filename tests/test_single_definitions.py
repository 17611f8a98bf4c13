"""Each fact is defined once in the package: stage names, sizes as text, cell lookup, FLOPs, rates."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ext" / "compilescope"
# Graph kinds that only a list of stages would name together.
KINDS = {
    "dynamo_output_graph",
    "aot_forward_graph",
    "aot_backward_graph",
    "inductor_post_grad_graph",
}


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
    assert where.get("flops_of", []) in ([], ["live/torch_partitioners.py"])


def test_stage_names_are_listed_once():
    lists = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                strings = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                calls = {
                    e.args[0].value
                    for e in node.elts
                    if isinstance(e, ast.Call) and e.args and isinstance(e.args[0], ast.Constant)
                }
                # (A grouping by priority, a tuple of tuples, is another fact: not counted.)
                if len(KINDS & (strings | calls)) >= 3:
                    lists.append(name)
    assert set(lists) == {"common.py"}, lists


def test_bandwidth_is_computed_in_one_place():
    # A rate is bytes over a median time: only model/timing.py divides by `time.median_s`.
    dividing = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                text = ast.unparse(node.right)
                if text.endswith("time.median_s") or text == "per_call":
                    dividing.append(name)
    assert set(dividing) <= {"model/timing.py"}, dividing


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
