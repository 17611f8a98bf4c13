"""Symbolic shapes and guards as math: sympy expressions built from `ast`, printed as MathML.

torch prints guards with sympy's printer (Python syntax: `Eq(Mod(s0, 2), 0)`, `s0**2 <= 4096`).
The text is parsed with `ast`; only whitelisted node types and functions become sympy objects,
built unevaluated, so nothing in a log is evaluated (never `sympify` or `eval`).
"""

from __future__ import annotations

import ast
import html
from collections.abc import Callable
from typing import Any
from xml.dom.minidom import Element, Node, Text

import sympy
from sympy.printing.mathml import MathMLPresentationPrinter

_MAX_TEXT, _MAX_NODES = 4000, 800

_COMPARE = {ast.Eq: sympy.Eq, ast.NotEq: sympy.Ne, ast.Lt: sympy.Lt, ast.LtE: sympy.Le,
            ast.Gt: sympy.Gt, ast.GtE: sympy.Ge}  # fmt: skip


def _floor_div(a: Any, b: Any) -> Any:
    return sympy.floor(sympy.Mul(a, sympy.Pow(b, -1, evaluate=False), evaluate=False))


def _ceil_div(a: Any, b: Any) -> Any:
    return sympy.ceiling(sympy.Mul(a, sympy.Pow(b, -1, evaluate=False), evaluate=False))


def _div(a: Any, b: Any) -> Any:
    return sympy.Mul(a, sympy.Pow(b, -1, evaluate=False), evaluate=False)


# The functions torch's guards use (torch/utils/_sympy/functions.py names), by arity.
_FUNCTIONS: dict[str, tuple[int | None, Callable[..., Any]]] = {
    "Eq": (2, lambda a, b: sympy.Eq(a, b, evaluate=False)),
    "Ne": (2, lambda a, b: sympy.Ne(a, b, evaluate=False)),
    "Lt": (2, lambda a, b: sympy.Lt(a, b, evaluate=False)),
    "Le": (2, lambda a, b: sympy.Le(a, b, evaluate=False)),
    "Gt": (2, lambda a, b: sympy.Gt(a, b, evaluate=False)),
    "Ge": (2, lambda a, b: sympy.Ge(a, b, evaluate=False)),
    "Mod": (2, lambda a, b: sympy.Mod(a, b, evaluate=False)),
    "PythonMod": (2, lambda a, b: sympy.Mod(a, b, evaluate=False)),
    "FloorDiv": (2, _floor_div),
    "CeilDiv": (2, _ceil_div),
    "CleanDiv": (2, _div),
    "IntTrueDiv": (2, _div),
    "FloatTrueDiv": (2, _div),
    "floor": (1, lambda a: sympy.floor(a, evaluate=False)),
    "ceiling": (1, lambda a: sympy.ceiling(a, evaluate=False)),
    "FloorToInt": (1, lambda a: sympy.floor(a, evaluate=False)),
    "CeilToInt": (1, lambda a: sympy.ceiling(a, evaluate=False)),
    "Abs": (1, lambda a: sympy.Abs(a, evaluate=False)),
    "sqrt": (1, lambda a: sympy.Pow(a, sympy.Rational(1, 2), evaluate=False)),
    "Max": (None, lambda *a: sympy.Max(*a, evaluate=False)),
    "Min": (None, lambda *a: sympy.Min(*a, evaluate=False)),
    "And": (None, lambda *a: sympy.And(*a, evaluate=False)),
    "Or": (None, lambda *a: sympy.Or(*a, evaluate=False)),
    "Not": (1, lambda a: sympy.Not(a, evaluate=False)),
}


def parse_expr(text: str) -> sympy.Basic:
    """The sympy expression of a guard or size as torch prints it; ValueError if not one.

    Only names, int/float literals, arithmetic, comparisons, and/or/not and the functions above
    are accepted; everything else (attributes, subscripts, keywords, strings, lambdas) is refused.
    """
    if len(text) > _MAX_TEXT:
        raise ValueError("expression too long")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, RecursionError, MemoryError) as error:
        raise ValueError(f"not an expression: {error}") from None
    if sum(1 for _ in ast.walk(tree)) > _MAX_NODES:
        raise ValueError("expression too large")
    try:
        return _build(tree.body)
    except RecursionError:
        raise ValueError("expression nested too deeply") from None


def _build(node: ast.AST) -> sympy.Basic:
    if isinstance(node, ast.Name):
        return sympy.Symbol(node.id)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
        if isinstance(node.value, bool):
            return sympy.true if node.value else sympy.false
        return sympy.Integer(node.value) if isinstance(node.value, int) else sympy.Float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return sympy.Mul(-1, _build(node.operand), evaluate=False)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
        return _build(node.operand)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return sympy.Not(_build(node.operand), evaluate=False)
    if isinstance(node, ast.BinOp):
        a, b = _build(node.left), _build(node.right)
        op = type(node.op)
        if op is ast.Add:
            return sympy.Add(a, b, evaluate=False)
        if op is ast.Sub:
            return sympy.Add(a, sympy.Mul(-1, b, evaluate=False), evaluate=False)
        if op is ast.Mult:
            return sympy.Mul(a, b, evaluate=False)
        if op is ast.Div:
            return _div(a, b)
        if op is ast.FloorDiv:
            return _floor_div(a, b)
        if op is ast.Mod:
            return sympy.Mod(a, b, evaluate=False)
        if op is ast.Pow:  # unevaluated: `9**9**9` stays three numbers, never computed
            return sympy.Pow(a, b, evaluate=False)
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        parts, left = [], _build(node.left)
        for compare, right_node in zip(node.ops, node.comparators, strict=True):
            right = _build(right_node)
            parts.append(_COMPARE[type(compare)](left, right, evaluate=False))
            left = right
        return parts[0] if len(parts) == 1 else sympy.And(*parts, evaluate=False)
    if isinstance(node, ast.BoolOp):
        join = sympy.And if isinstance(node.op, ast.And) else sympy.Or
        return join(*(_build(v) for v in node.values), evaluate=False)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
        and not any(isinstance(a, ast.Starred) for a in node.args)
    ):
        arity, make = _FUNCTIONS[node.func.id]
        if arity is not None and len(node.args) != arity:
            raise ValueError(f"{node.func.id} takes {arity} arguments")
        if not node.args:
            raise ValueError(f"{node.func.id} needs arguments")
        return make(*(_build(a) for a in node.args))
    raise ValueError(f"not part of a symbolic expression: {type(node).__name__}")


# The MathML elements sympy's presentation printer writes; anything else is refused.
_TAGS = {"math", "mrow", "mi", "mn", "mo", "msub", "msup", "msubsup", "mfrac", "msqrt",
         "mroot", "mtext", "mspace", "mfenced", "mtable", "mtr", "mtd", "mstyle", "mover",
         "munder"}  # fmt: skip
_ATTRIBUTES = {"mathvariant", "separators", "open", "close", "stretchy", "fence", "lspace",
               "rspace", "linethickness", "form"}  # fmt: skip


def to_mathml(expr: sympy.Basic) -> str:
    """`<math>` markup (MathML Core, which browsers render natively) for a sympy expression.

    sympy's printer builds a DOM; it is written out here with every text escaped and only
    whitelisted elements and attributes, since its own writer leaves `<` unescaped.
    """
    element = MathMLPresentationPrinter({"mul_symbol": "dot"})._print(expr)
    return (
        "<math xmlns='http://www.w3.org/1998/Math/MathML' display='inline'>"
        + _write(element)
        + "</math>"
    )


def _write(node: Node) -> str:
    if isinstance(node, Text):
        # sympy writes entities as text (`&InvisibleTimes;`, `&#x2264;`): turn them into chars.
        return html.escape(html.unescape(node.data), quote=True)
    if not isinstance(node, Element) or node.tagName not in _TAGS:
        raise ValueError(f"unexpected MathML: {getattr(node, 'tagName', node)!r}")
    tag = "mrow" if node.tagName == "mfenced" else node.tagName  # mfenced is not MathML Core
    attrs = "".join(
        f" {k}='{html.escape(v, quote=True)}'"
        for k, v in node.attributes.items()
        if k in _ATTRIBUTES
    )
    inner = "".join(_write(child) for child in node.childNodes)
    if node.tagName == "mfenced":
        inner = (
            f"<mo>{html.escape(node.getAttribute('open') or '(')}</mo>{inner}"
            f"<mo>{html.escape(node.getAttribute('close') or ')')}</mo>"
        )
        attrs = ""
    return f"<{tag}{attrs}>{inner}</{tag}>"


def math_html(text: str) -> str:
    """A guard's text as MathML, or the text escaped when it is not an expression we read."""
    try:
        return to_mathml(parse_expr(text))
    except (ValueError, TypeError, AttributeError, RecursionError):
        return f"<code>{html.escape(text)}</code>"
