"""Parse torch's `print_readable` graph text into nodes, edges, tensor metadata and source lines."""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from ..model.graph import Node, SourceLoc, TensorMeta

# `# File: /path/x.py:7 in forward, code: y = self.lin(x).relu()`
_FILE = re.compile(r"#\s*File:\s*(.*?):(\d+) in ([^,]*)(?:, code: (.*))?$")
_CLASS_LINE = re.compile(r"^( *)class [^(\n]*\(", re.MULTILINE)
_PARAM = re.compile(r"^l_(?:self_)?modules_(.+?)_(?:parameters|buffers)_")


def module_path_from_name(name: str) -> str | None:
    """Dynamo names a parameter read `l_self_modules_h_modules_0_..._parameters_weight_`."""
    match = _PARAM.match(name)
    return match.group(1).replace("_modules_", ".") if match else None


def parse_graph_nodes(text: str) -> list[Node]:
    """Nodes of the outermost `forward` in a print_readable text; [] if it is not one."""
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
    nodes: list[Node] = []
    known: set[str] = set()
    for arg in forward.args.args[1:]:  # skip self
        type_text = _const_str(arg.annotation)
        node = Node(
            name=arg.arg,
            op="placeholder",
            target=arg.arg,
            tensors=TensorMeta.parse_all(type_text),
            type_text=type_text,
            module_path=module_path_from_name(arg.arg.lower()),
            note=_trailing_comment(lines, arg.lineno),
        )
        nodes.append(node)
        known.add(arg.arg)
    for stmt in forward.body:
        flattened = _flattened_inputs(stmt)
        if flattened is not None:
            # Joint graphs take pytrees: `primals_1, tangents_1, = fx_pytree.tree_flatten_spec(...)`
            # makes the real placeholders; the pytree arguments themselves are not nodes.
            nodes = [n for n in nodes if n.op != "placeholder" or n.name not in flattened[1]]
            for name in flattened[0]:
                nodes.append(Node(name=name, op="placeholder", target=name))
                known.add(name)
            continue
        renamed = _renamed_input(stmt, nodes)
        if renamed is not None:
            # Dynamo prints its placeholder `l_x_` (target `L_x_`) as `l_x_ = L_x_`.
            index, new_name = renamed
            nodes[index] = replace(nodes[index], name=new_name)
            known.add(new_name)
            continue
        node = _statement_node(stmt, lines, sources, known)
        if node is not None:
            nodes.append(node)
            known.add(node.name)
    return nodes


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


def _source_by_line(lines: list[str]) -> dict[int, SourceLoc | None]:
    """For each 1-based line, the `# File:` comment above it (None after 'No stacktrace')."""
    current: SourceLoc | None = None
    by_line: dict[int, SourceLoc | None] = {}
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            match = _FILE.search(stripped)
            if match:
                file, lineno, function, code = match.groups()
                current = SourceLoc(file, int(lineno), function.strip(), (code or "").strip())
            elif "No stacktrace found" in stripped:
                current = None
        elif not stripped:
            continue
        by_line[number] = current
    return by_line


def _statement_node(stmt, lines, sources, known: set[str]) -> Node | None:
    source = sources.get(stmt.lineno)
    if isinstance(stmt, ast.Return):
        names = _names_in(stmt.value, known) if stmt.value is not None else []
        notes = [c for c in (_trailing_comment(lines, n) for n in _name_lines(stmt.value)) if c]
        return Node(
            name="output",
            op="output",
            target="output",
            inputs=tuple(names),
            args_text=ast.get_source_segment("\n".join(lines), stmt.value) or "",
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
        tensors=TensorMeta.parse_all(type_text),
        type_text=type_text,
        source=source,
        module_path=module_path_from_name(name),
    )


def _classify(value: ast.expr) -> tuple[str, str, list[ast.AST]]:
    """(op, target, argument expressions) for the right-hand side of a node statement."""
    if isinstance(value, ast.Call):
        args: list[ast.AST] = list(value.args) + [k.value for k in value.keywords]
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


_MODULE_ROOTS = {"torch", "operator", "math", "builtins", "aten", "prims", "inductor", "_operator"}


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
