"""The common FX statement read from its line, without the ast: the same Node, faster."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from ..model.graph import Node, TensorMeta
from ..model.place import Place

# `    name: "f32[8][1]cpu" = torch.ops.aten.sin.default(x);  x = None` (print_readable's form).
_ASSIGN = re.compile(r'^\s*([A-Za-z_]\w*)(?:: "([^"\\]*)")? = (.*)$')
_CALL = re.compile(r"^([A-Za-z_][\w.]*)\((.*)\)$")
_GETITEM = re.compile(r"^([A-Za-z_]\w*)\[(-?\d+)\]$")
# Arguments whose printed text is exactly what ast.unparse gives back: names, numbers, dotted
# names, simple quoted strings, flat lists and tuples (no list in a list: the ast walks nested
# ones breadth first). Anything else takes the ast path.
_ATOM = r"(?:[\w.\- ,]|'[\w.\- ]*')"
_PLAIN_ARGS = re.compile(rf"^{_ATOM}*(?:[\[(]{_ATOM}*[\])]{_ATOM}*)*$")
_NAME = re.compile(r"(?<![\w.'])[A-Za-z_]\w*")
_STRING = re.compile(r"'[^']*'")
# A keyword argument as FX prints it (`dim = 1`); the ast path keeps its value, not its name.
_KEYWORD = re.compile(r"^([A-Za-z_]\w*) = (.+)$")
# A device argument, `device(type='cuda', index=0)`: ast.unparse writes it back the same.
_DEVICE = re.compile(r"^device\(type='\w+'(?:, index=\d+)?\)$")
# `a + b`, `0.5 * x`, `x < y`: one operator between two names or numbers (FX's magic methods).
_OPERAND = r"([A-Za-z_]\w*|\d[\d.e+-]*)"
_BINARY = re.compile(rf"^{_OPERAND} (\*\*|//|<<|>>|<=|>=|==|!=|[-+*/%@&|^<>]) {_OPERAND}$")
_OPERATORS = {
    "+": "operator.add", "-": "operator.sub", "*": "operator.mul", "/": "operator.truediv",
    "//": "operator.floordiv", "%": "operator.mod", "**": "operator.pow", "@": "operator.matmul",
    "<<": "operator.lshift", ">>": "operator.rshift", "&": "operator.and_", "|": "operator.or_",
    "^": "operator.xor", "==": "operator.eq", "!=": "operator.ne", "<": "operator.lt",
    "<=": "operator.le", ">": "operator.gt", ">=": "operator.ge",
}  # fmt: skip
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_CONSTANTS = frozenset(("None", "True", "False"))


@lru_cache(maxsize=4096)
def tensors_of(type_text: str) -> tuple[TensorMeta, ...]:
    """TensorMeta.parse_all, once per distinct annotation (graphs repeat a few shapes a lot)."""
    return TensorMeta.parse_all(type_text)


def fast_node(
    line: str,
    known: set[str],
    source: Place | None,
    module_roots: frozenset[str] | set[str],
    module_path: Callable[[str], str | None],
) -> Node | None:
    """The node of one statement line, or None when the line needs the ast path."""
    roots = module_roots if isinstance(module_roots, frozenset) else frozenset(module_roots)
    read = _statement(line, roots)
    if read is None:
        return None
    name, op, target, args, names, type_text = read
    inputs = tuple(dict.fromkeys([n for n in names if n in known]))
    # Node's fields in order, by position (a node per line: keywords cost a fifth of the call):
    # name, op, target, inputs, args_text, tensors, type_text, source, module_path.
    return Node(
        name, op, target, inputs, args, tensors_of(type_text), type_text, source, module_path(name)
    )


# A line's reading: name, op, target, arguments, the names its inputs are read from, type.
_Statement = tuple[str, str, str, str, tuple[str, ...], str]


@lru_cache(maxsize=8192)
def _statement(line: str, module_roots: frozenset[str]) -> _Statement | None:
    """What a line says by itself, once per distinct line: the graphs of one compile repeat
    most of their lines (the pre-grad graph is Dynamo's, a post-grad graph is AOTAutograd's
    forward or backward as Inductor got it), and so do the ranks of a job."""
    if "=" not in line:
        return None
    match = _ASSIGN.match(line)
    if match is None:
        return None
    name, type_text, value = match.groups()
    type_text = type_text or ""
    cut = value.find(";")
    if cut >= 0:
        if "'" in value[:cut] or '"' in value[:cut]:
            return None
        value = value[:cut].rstrip()  # FX's `;  x = y = None` deletions are not the node
    if value == "None":
        return None  # no node (the ast path skips these as well)
    call = _CALL.match(value)
    names_text = None  # where the inputs are read from, when not `args`
    if call is not None:
        func, args = call.group(1), call.group(2)
        if not _plain(args):
            read = _with_keywords(args)
            if read is None:
                return None
            args, names_text = read
        parts = func.split(".")
        if len(parts) == 1:
            op, target = "call_function", func
        elif parts[0] == "self":
            if len(parts) != 2:
                return None
            op, target = "call_module", parts[1]
        elif parts[0] in module_roots:
            op, target = "call_function", func
        elif len(parts) == 2:  # `x.view(4, 4)`: a method on a value
            op, target = "call_method", parts[1]
            args = f"{parts[0]}, {args}" if args else parts[0]
            if names_text is not None:
                names_text = f"{parts[0]}, {names_text}"
        else:
            return None
    elif (item := _GETITEM.match(value)) is not None:
        op, target, args = "call_function", "operator.getitem", f"{item.group(1)}, {item.group(2)}"
    elif (binary := _BINARY.match(value)) is not None:
        left, symbol, right = binary.groups()
        if not (_as_printed(left) and _as_printed(right)):
            return None
        op, target, args = "call_function", _OPERATORS[symbol], f"{left}, {right}"
    elif _IDENTIFIER.match(value) and value not in _CONSTANTS:
        op, target, args = "call_function", "alias", value  # `x = y` (not a renamed input)
    else:
        return None
    if names_text is None:
        names_text = _STRING.sub("''", args) if "'" in args else args
    return name, op, target, args, tuple(_NAME.findall(names_text)), type_text


def _plain(args: str) -> bool:
    # ", " between arguments, as FX and ast.unparse both write them.
    return (
        _PLAIN_ARGS.match(args) is not None
        and "  " not in args
        and ",," not in args
        and ", ," not in args
        and not args.endswith(",")
    )


def _as_printed(operand: str) -> bool:
    """A name, or a number that ast.unparse writes back as printed (`0.5`, `2`, `1e-05`)."""
    if not operand[0].isdigit():
        return True
    try:
        number: float = int(operand)
    except ValueError:
        try:
            number = float(operand)
        except ValueError:
            return False
    return repr(number) == operand


def _with_keywords(args: str) -> tuple[str, str] | None:
    """Call arguments with keywords (`x, dim = 1`) as the ast path writes them: the values
    alone (`x, 1`), and the text to read input names from (no keyword names, no strings); None
    when an argument is not plain."""
    if " = " not in args:
        return None
    values, names = [], []
    depth, start = 0, 0
    pieces = []
    for i, ch in enumerate(args):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append(args[start:i])
            start = i + 2  # past ", "
            if args[i + 1 : i + 2] != " ":
                return None
    pieces.append(args[start:])
    keywords = False
    for piece in pieces:
        keyword = _KEYWORD.match(piece)
        if keyword is not None:
            keywords, piece = True, keyword.group(2)
        elif keywords:
            return None  # a positional argument after a keyword: not FX's print
        if not piece:
            return None
        if _DEVICE.match(piece):
            names.append("device")
        elif _plain(piece):
            names.append(_STRING.sub("''", piece))
        else:
            return None
        values.append(piece)
    return ", ".join(values), ", ".join(names)
