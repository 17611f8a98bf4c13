"""Parse torch's `print_readable` graph text into nodes, edges, tensor metadata and source lines."""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from typing import cast

from ..model.graph import Node
from ..model.place import Place
from .fast_statement import fast_node, tensors_of

# `# File: /path/x.py:7 in forward, code: y = self.lin(x).relu()`
_FILE = re.compile(r"#\s*File:\s*(.*?):(\d+) in ([^,]*)(?:, code: (.*))?$")
_FORWARD = re.compile(r"^\s*def forward\(")
_CLASS_LINE = re.compile(r"^( *)class [^(\n]*\(", re.MULTILINE)
_PARAM = re.compile(r"^l_(?:self_)?modules_(.+?)_(?:parameters|buffers)_")
# `l_x_ = L_x_`: Dynamo renames its inputs (or a plain alias, when no input has that name).
_RENAME = re.compile(r"^\s*([A-Za-z_]\w*) = ([A-Za-z_]\w*)$")
# `primals_1: "f32[4][1]cpu"  # PlainAOTInput(idx=0)`: a joint graph's input, annotated, no node.
_ANNOTATION_ONLY = re.compile(r'^\s*[A-Za-z_]\w*: "[^"\\]*"(?:\s*#.*)?$')


def module_path_from_name(name: str) -> str | None:
    """Dynamo names a parameter read `l_self_modules_h_modules_0_..._parameters_weight_`."""
    if not name.startswith("l_"):  # most names (a call per node): no match to look for
        return None
    match = _PARAM.match(name)
    return match.group(1).replace("_modules_", ".") if match else None


def parse_graph_nodes(text: str) -> list[Node]:
    """Nodes of the outermost `forward` in a print_readable text; [] if it is not one."""
    try:
        nodes = _parse_by_lines(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        nodes = None
    return nodes if nodes is not None else _parse_with_ast(text)


class _NeedAst(ValueError):
    """The text is not in the one-statement-a-line form that `_parse_by_lines` reads."""


def _parse_by_lines(text: str) -> list[Node] | None:
    """print_readable writes one statement a line: read each line alone (most without the ast,
    see fast_statement.py) instead of parsing the whole text, which costs more than the rest."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _FORWARD.match(line)), None)
    if start is None:
        return None
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start
    while not lines[end].rstrip().endswith(":"):  # a signature over several lines
        end += 1
        if end - start > 10_000 or end >= len(lines):
            raise _NeedAst(text[:40])
    # Parsed where it stands (blank lines above), so line numbers stay the text's own.
    header = "\n" * start + textwrap.dedent("\n".join(lines[start : end + 1])) + " pass\n"
    forward = ast.parse(header).body[0]
    if not isinstance(forward, ast.FunctionDef):  # `def forward(` parses to one
        raise _NeedAst(text[:40])
    sources = _source_by_line(lines)
    nodes: list[Node] = _placeholders(forward, lines)
    known = {n.name for n in nodes}
    number = end
    while number + 1 < len(lines):
        number += 1
        line = lines[number]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(line) - len(line.lstrip()) <= indent:
            break  # the end of forward: a nested class or the next definition
        renamed = _RENAME.match(line) if "(" not in line else None  # most lines are calls
        if renamed is not None and _rename_input(nodes, *renamed.groups()):
            known.add(renamed.group(1))
            continue
        node = fast_node(line, known, sources.get(number + 1), _MODULE_ROOTS, module_path_from_name)
        if node is not None:
            nodes.append(node)
            known.add(node.name)
            continue
        if _ANNOTATION_ONLY.match(line):
            continue
        first, depth = number, _depth(line)
        while depth > 0 and number + 1 < len(lines):  # `return f([` ... `])` over lines
            number += 1
            depth += _depth(lines[number])
        # Blank lines above, so line numbers are the text's own; `if 1:` keeps the columns.
        tree = ast.parse("\n" * (first - 1) + "if 1:\n" + "\n".join(lines[first : number + 1]))
        for stmt in cast(ast.If, tree.body[0]).body:  # the `if 1:` around the lines
            _add_statement(stmt, nodes, known, lines, sources)
    return nodes


def _depth(line: str) -> int:
    """Brackets a line opens minus those it closes (strings ignored: a wrong count only sends
    the text to the whole-text ast parse)."""
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def _parse_with_ast(text: str) -> list[Node]:
    try:
        tree = ast.parse(text)
    except (RecursionError, MemoryError):  # a hostile payload; nodes are optional
        return []
    except SyntaxError:
        # torch names the class after the function, which need not be an identifier
        # (`class <lambda>(torch.nn.Module):`); the class name carries nothing we need.
        text = _CLASS_LINE.sub(r"\1class GraphModule(", text)
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return []
    forward = _find_forward(tree)
    if forward is None:
        return []
    lines = text.splitlines()
    sources = _source_by_line(lines)
    nodes = _placeholders(forward, lines)
    known = {n.name for n in nodes}
    for stmt in forward.body:
        _add_statement(stmt, nodes, known, lines, sources)
    return nodes


def _placeholders(forward: ast.FunctionDef, lines: list[str]) -> list[Node]:
    nodes = []
    for arg in forward.args.args[1:]:  # skip self
        type_text = _const_str(arg.annotation)
        node = Node(
            name=arg.arg,
            op="placeholder",
            target=arg.arg,
            tensors=tensors_of(type_text),
            type_text=type_text,
            module_path=module_path_from_name(arg.arg.lower()),
            note=_trailing_comment(lines, arg.lineno),
        )
        nodes.append(node)
    return nodes


def _add_statement(
    stmt: ast.stmt,
    nodes: list[Node],
    known: set[str],
    lines: list[str],
    sources: Mapping[int, Place | None],
) -> None:
    """What one statement of forward adds to `nodes` (in place)."""
    flattened = _flattened_inputs(stmt)
    if flattened is not None:
        # Joint graphs take pytrees: `primals_1, tangents_1, = fx_pytree.tree_flatten_spec(...)`
        # makes the real placeholders; the pytree arguments themselves are not nodes.
        nodes[:] = [n for n in nodes if n.op != "placeholder" or n.name not in flattened[1]]
        for name in flattened[0]:
            nodes.append(Node(name=name, op="placeholder", target=name))
            known.add(name)
        return
    renamed = _renamed_input(stmt, nodes)
    if renamed is not None:
        # Dynamo prints its placeholder `l_x_` (target `L_x_`) as `l_x_ = L_x_`.
        index, new_name = renamed
        nodes[index] = replace(nodes[index], name=new_name)
        known.add(new_name)
        return
    node = None
    line = lines[stmt.lineno - 1] if stmt.end_lineno == stmt.lineno else ""
    if line and stmt.col_offset == len(line) - len(line.lstrip()):
        # The first statement of its line (later ones are FX's `x = None` deletions).
        node = fast_node(
            line, known, sources.get(stmt.lineno), _MODULE_ROOTS, module_path_from_name
        )
    if node is None:
        node = _statement_node(stmt, lines, sources, known)
    if node is not None:
        nodes.append(node)
        known.add(node.name)


def _flattened_inputs(stmt: ast.stmt) -> tuple[list[str], set[str]] | None:
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Tuple)
        and isinstance(stmt.value, ast.Call)
        and "tree_flatten_spec" in ast.unparse(stmt.value.func)
    ):
        return None
    names = [e.id for e in stmt.targets[0].elts if isinstance(e, ast.Name)]
    pytree_args = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
    return names, pytree_args


def _rename_input(nodes: list[Node], new_name: str, old_name: str) -> bool:
    """`new_name = old_name` read without the ast: as `_renamed_input` renames (True), or not a
    renamed input (False)."""
    for index, node in enumerate(nodes):
        if node.op == "placeholder" and node.name == old_name:
            nodes[index] = replace(node, name=new_name)
            return True
    return False


def _renamed_input(stmt: ast.stmt, nodes: list[Node]) -> tuple[int, str] | None:
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Name)
    ):
        return None
    for index, node in enumerate(nodes):
        if node.op == "placeholder" and node.name == stmt.value.id:
            return index, stmt.targets[0].id
    return None


def _find_forward(tree: ast.Module) -> ast.FunctionDef | None:
    for item in tree.body:
        if isinstance(item, ast.ClassDef):
            for sub in item.body:
                if isinstance(sub, ast.FunctionDef) and sub.name == "forward":
                    return sub
        if isinstance(item, ast.FunctionDef) and item.name == "forward":
            return item
    return None


def _source_by_line(lines: list[str]) -> dict[int, Place | None]:
    """For each 1-based line, the `# File:` comment above it (None after 'No stacktrace')."""
    current: Place | None = None
    by_line: dict[int, Place | None] = {}
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            place = _file_comment(stripped)
            if place is not None:
                current = place
            elif "No stacktrace found" in stripped:
                current = None
        elif not stripped:
            continue
        by_line[number] = current
    return by_line


@lru_cache(maxsize=4096)
def _file_comment(comment: str) -> Place | None:
    """The place a `# File:` comment names, once per distinct comment: a line's comment stands
    above each node it made, in every graph of the compile."""
    match = _FILE.search(comment)
    if not match:
        return None
    file, lineno, function, code = match.groups()
    return Place(file, int(lineno), function.strip(), (code or "").strip())


def _statement_node(
    stmt: ast.stmt, lines: list[str], sources: Mapping[int, Place | None], known: set[str]
) -> Node | None:
    source = sources.get(stmt.lineno)
    if isinstance(stmt, ast.Return):
        names = _names_in(stmt.value, known) if stmt.value is not None else []
        notes = [c for c in (_trailing_comment(lines, n) for n in _name_lines(stmt.value)) if c]
        return Node(
            name="output",
            op="output",
            target="output",
            inputs=tuple(names),
            args_text=_segment(lines, stmt.value),
            note="; ".join(notes),
        )
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        name, value, type_text = stmt.target.id, stmt.value, _const_str(stmt.annotation)
    elif (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        name, value, type_text = stmt.targets[0].id, stmt.value, ""
    else:
        return None  # `x = None` deletions come as a second statement on the line; skip others
    if value is None or (isinstance(value, ast.Constant) and value.value is None):
        return None
    op, target, arg_nodes = _classify(value)
    inputs = tuple(dict.fromkeys(n for a in arg_nodes for n in _names_in(a, known)))
    return Node(
        name=name,
        op=op,
        target=target,
        inputs=inputs,
        args_text=", ".join(ast.unparse(a) for a in arg_nodes),
        tensors=tensors_of(type_text),
        type_text=type_text,
        source=source,
        module_path=module_path_from_name(name),
    )


def _segment(lines: list[str], node: ast.expr | None) -> str:
    """The source text of `node` (ast.get_source_segment without re-splitting the text)."""
    if node is None or node.end_lineno is None or node.end_col_offset is None:
        return ""
    # Offsets count UTF-8 bytes, as ast.get_source_segment does.
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset : node.end_col_offset].decode()
    head = lines[first].encode()[node.col_offset :].decode()
    tail = lines[last].encode()[: node.end_col_offset].decode()
    return "\n".join([head, *lines[first + 1 : last], tail])


def _classify(value: ast.expr) -> tuple[str, str, list[ast.expr]]:
    """(op, target, argument expressions) for the right-hand side of a node statement."""
    if isinstance(value, ast.Call):
        args: list[ast.expr] = list(value.args) + [k.value for k in value.keywords]
        func = value.func
        if isinstance(func, ast.Attribute):
            base = func.value
            if isinstance(base, ast.Name) and base.id == "self":
                return "call_module", func.attr, args
            dotted = _dotted(func)
            if dotted is not None and not _is_value_name(base):
                return "call_function", dotted, args
            return "call_method", func.attr, [base, *args]
        return "call_function", ast.unparse(func), args
    if isinstance(value, ast.Attribute) and _dotted(value, "self"):
        return "get_attr", ast.unparse(value).removeprefix("self."), []
    if isinstance(value, ast.Subscript):
        return "call_function", "operator.getitem", [value.value, value.slice]
    if isinstance(value, ast.Name):
        return "call_function", "alias", [value]
    # FX prints operator.add/neg/eq... nodes as Python operators (torch/fx/graph.py,
    # magic_methods): name them by their real target, not the syntax.
    if isinstance(value, ast.BinOp) and type(value.op) in _OPERATORS:
        return "call_function", _OPERATORS[type(value.op)], [value.left, value.right]
    if isinstance(value, ast.UnaryOp) and type(value.op) in _OPERATORS:
        return "call_function", _OPERATORS[type(value.op)], [value.operand]
    if isinstance(value, ast.Compare) and len(value.ops) == 1 and type(value.ops[0]) in _OPERATORS:
        return "call_function", _OPERATORS[type(value.ops[0])], [value.left, *value.comparators]
    return "call_function", type(value).__name__, [value]


_OPERATORS: dict[type, str] = {
    ast.Add: "operator.add",
    ast.Sub: "operator.sub",
    ast.Mult: "operator.mul",
    ast.Div: "operator.truediv",
    ast.FloorDiv: "operator.floordiv",
    ast.Mod: "operator.mod",
    ast.Pow: "operator.pow",
    ast.MatMult: "operator.matmul",
    ast.LShift: "operator.lshift",
    ast.RShift: "operator.rshift",
    ast.BitAnd: "operator.and_",
    ast.BitOr: "operator.or_",
    ast.BitXor: "operator.xor",
    ast.USub: "operator.neg",
    ast.UAdd: "operator.pos",
    ast.Invert: "operator.invert",
    ast.Not: "operator.not_",
    ast.Eq: "operator.eq",
    ast.NotEq: "operator.ne",
    ast.Lt: "operator.lt",
    ast.LtE: "operator.le",
    ast.Gt: "operator.gt",
    ast.GtE: "operator.ge",
}


def _dotted(node: ast.expr, root: str | None = None) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or (root is not None and node.id != root):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


_MODULE_ROOTS = frozenset(
    ("torch", "operator", "math", "builtins", "aten", "prims", "inductor", "_operator")
)


def _is_value_name(node: ast.expr) -> bool:
    # `linear.relu()` is a method on a value; `torch.ops.aten.relu.default(x)` is a function.
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id not in _MODULE_ROOTS


def _names_in(node: ast.AST | None, known: set[str]) -> list[str]:
    if node is None:
        return []
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in known]


def _name_lines(node: ast.AST | None) -> list[int]:
    if node is None:
        return []
    return sorted({n.lineno for n in ast.walk(node) if isinstance(n, ast.Name)})


def _const_str(node: ast.AST | None) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def _trailing_comment(lines: list[str], lineno: int) -> str:
    """The `# ...` comment that ends line `lineno`, if any (outside string literals)."""
    if not 0 < lineno <= len(lines):
        return ""
    line = lines[lineno - 1]
    if "#" not in line:
        return ""
    in_str: str | None = None
    for i, ch in enumerate(line):
        if in_str:
            if ch == in_str:
                in_str = None
        elif ch in "\"'":
            in_str = ch
        elif ch == "#":
            return line[i + 1 :].strip()
    return ""
