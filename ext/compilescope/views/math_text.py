"""Symbolic guards as math: torch prints sympy expressions; this writes them as a person would.

The text is parsed with `ast` (sympy's printer writes Python syntax) and never evaluated.
"""

from __future__ import annotations

import ast

_RELATIONS = {"Eq": "=", "Ne": "\u2260", "Lt": "<", "Le": "\u2264", "Gt": ">", "Ge": "\u2265"}
_COMPARE = {ast.Eq: "=", ast.NotEq: "\u2260", ast.Lt: "<", ast.LtE: "\u2264", ast.Gt: ">",
            ast.GtE: "\u2265"}  # fmt: skip
_BINARY = {ast.Add: " + ", ast.Sub: " \u2212 ", ast.Mult: "\u00b7", ast.Div: "/",
           ast.FloorDiv: " // ", ast.Mod: " mod "}  # fmt: skip
_SUPERSCRIPT = str.maketrans(
    "0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b"
)
_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.FloorDiv: 2, ast.Mod: 2}


def pretty_expr(text: str) -> str:
    """`Eq(Mod(s0, 2), 0)` -> `s0 mod 2 = 0`; `s0**2 <= 4096` -> `s0\u00b2 \u2264 4096`.

    Returns the text unchanged when it is not an expression this printer knows.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval").body
        return _show(tree, 0)
    except (SyntaxError, ValueError, RecursionError):
        return text


def _show(node: ast.AST, outer: int) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return repr(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return "\u2212" + _show(node.operand, 3)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return "\u00ac" + _show(node.operand, 3)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base = _show(node.left, 4)
        if isinstance(node.right, ast.Constant) and isinstance(node.right.value, int):
            return base + str(node.right.value).translate(_SUPERSCRIPT)
        return f"{base}^({_show(node.right, 0)})"
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        level = _PRECEDENCE[type(node.op)]
        text = _show(node.left, level) + _BINARY[type(node.op)] + _show(node.right, level + 1)
        return f"({text})" if level < outer else text
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        parts = [_show(node.left, 1)]
        for op, right in zip(node.ops, node.comparators, strict=True):
            parts += [_COMPARE[type(op)], _show(right, 1)]
        text = " ".join(parts)
        return f"({text})" if outer else text
    if isinstance(node, ast.BoolOp):
        joiner = " \u2227 " if isinstance(node.op, ast.And) else " \u2228 "
        return "(" + joiner.join(_show(v, 1) for v in node.values) + ")"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name, args = node.func.id, [_show(a, 0) for a in node.args]
        if name in _RELATIONS and len(args) == 2:
            text = f"{args[0]} {_RELATIONS[name]} {args[1]}"
            return f"({text})" if outer else text
        if name in ("floor", "FloorDiv") and len(args) in (1, 2):
            inner = args[0] if len(args) == 1 else f"{args[0]}/{args[1]}"
            return f"\u230a{inner}\u230b"
        if name in ("ceiling", "CeilDiv") and len(args) in (1, 2):
            inner = args[0] if len(args) == 1 else f"{args[0]}/{args[1]}"
            return f"\u2308{inner}\u2309"
        if name in ("Mod", "PythonMod") and len(args) == 2:
            text = f"{_show(node.args[0], 3)} mod {_show(node.args[1], 3)}"
            return f"({text})" if outer > 1 else text
        if name in ("Max", "Min", "Abs", "sqrt"):
            return f"{name.lower()}({', '.join(args)})" if name != "Abs" else f"|{args[0]}|"
        return f"{name}({', '.join(args)})"
    if isinstance(node, ast.Tuple):
        return "(" + ", ".join(_show(e, 0) for e in node.elts) + ")"
    raise ValueError("not a symbolic expression")
