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
# names, simple quoted strings, flat lists and tuples. Anything else takes the ast path.
_PLAIN_ARGS = re.compile(r"^(?:[\w.\- ,\[\]()]|'[\w.\- ]*')*$")
_NAME = re.compile(r"(?<![\w.'])[A-Za-z_]\w*")
_STRING = re.compile(r"'[^']*'")


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
    if "=" not in line:
        return None
    match = _ASSIGN.match(line)
    if match is None:
        return None
    name, type_text, value = match.group(1), match.group(2) or "", match.group(3)
    cut = value.find(";")
    if cut >= 0:
        if "'" in value[:cut] or '"' in value[:cut]:
            return None
        value = value[:cut].rstrip()  # FX's `;  x = y = None` deletions are not the node
    if value == "None":
        return None  # no node (the ast path skips these as well)
    call = _CALL.match(value)
    if call is not None:
        func, args = call.group(1), call.group(2)
        if not _plain(args):
            return None
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
        else:
            return None
    else:
        item = _GETITEM.match(value)
        if item is None:
            return None
        op, target, args = "call_function", "operator.getitem", f"{item.group(1)}, {item.group(2)}"
    inputs = tuple(dict.fromkeys(n for n in _NAME.findall(_STRING.sub("''", args)) if n in known))
    return Node(
        name=name,
        op=op,
        target=target,
        inputs=inputs,
        args_text=args,
        tensors=tensors_of(type_text),
        type_text=type_text,
        source=source,
        module_path=module_path(name),
    )


def _plain(args: str) -> bool:
    if not _PLAIN_ARGS.match(args) or "  " in args:
        return False
    depth = 0
    for ch in args:
        if ch in "[(":
            depth += 1
            if depth > 1:
                return False  # nested: the ast walks it breadth first; let it
        elif ch in "])":
            depth -= 1
    # ", " between arguments, as FX and ast.unparse both write them.
    return depth == 0 and ",," not in args and not args.endswith(",") and ", ," not in args
