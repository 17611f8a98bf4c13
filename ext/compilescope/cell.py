"""Turn a notebook cell's code into one function, so torch.compile can compile the cell itself."""

from __future__ import annotations

import ast
from dataclasses import dataclass

FUNCTION_NAME = "__compile_fx_cell__"
UNSET_NAME = "__compile_fx_unset__"  # a sentinel object: "the cell did not bind this name"


@dataclass(frozen=True)
class CellFunction:
    """The cell as `def __compile_fx_cell__(<names it reads and rebinds>): ...`.

    Calling the function returns (values of the names the cell binds, value of its last
    expression or None). Line numbers stay those of the cell, so tracebacks point into it.
    """

    module: ast.Module
    parameters: tuple[str, ...]  # names the cell binds that already exist: passed in
    bound: tuple[str, ...]  # every name the cell binds, written back afterwards
    has_result: bool  # the cell ends with an expression (displayed like IPython's Out)


class CellError(ValueError):
    """A cell that cannot be compiled as one function (the message says what to change)."""


def build_cell_function(
    source: str, existing: set[str], filename: str = "<cell>", first_line: int = 1
) -> CellFunction:
    """Parse `source` and wrap it into a function; a SyntaxError names `filename` and its line.

    `first_line` is the line of the cell where `source` starts (2 under a `%%magic` line), so
    line numbers in tracebacks and in the capture are the ones the user sees.
    """
    tree = ast.parse("\n" * (first_line - 1) + source, filename)
    body = tree.body or [ast.Pass()]
    _reject_unsupported(tree)
    bound = _bound_names(body)
    parameters = tuple(n for n in bound if n in existing)
    fresh = [n for n in bound if n not in existing]
    last = body[-1]
    has_result = isinstance(last, ast.Expr)
    if isinstance(last, ast.Expr):
        result = ast.copy_location(
            ast.Assign([ast.Name("__compile_fx_result__", ast.Store())], last.value), last
        )
        body = [*body[:-1], result]
    first, end = body[0], body[-1]
    # Names the cell binds but that do not exist yet start as the sentinel, so the final
    # `return` can read every one of them even when a branch did not assign it.
    preamble = [
        ast.Assign([ast.Name(n, ast.Store())], ast.Name(UNSET_NAME, ast.Load())) for n in fresh
    ]
    returns = ast.Return(
        ast.Tuple(
            [
                ast.Dict(
                    [ast.Constant(n) for n in bound], [ast.Name(n, ast.Load()) for n in bound]
                ),
                ast.Name("__compile_fx_result__", ast.Load()) if has_result else ast.Constant(None),
            ],
            ast.Load(),
        )
    )
    for node in preamble:
        ast.copy_location(node, first)
    ast.copy_location(returns, end)
    function = ast.FunctionDef(
        name=FUNCTION_NAME,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(n) for n in parameters],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        ),
        body=[*preamble, *body, returns],
        decorator_list=[],
        returns=None,
        # A field from Python 3.12 on; 3.10 and 3.11 keep the extra keyword as an attribute.
        type_params=[],  # type: ignore[call-arg]
    )
    ast.copy_location(function, first)
    function.lineno = max(first_line - 1, 1)  # the `def` sits on the line above the cell's code
    module = ast.Module([function], type_ignores=[])
    ast.fix_missing_locations(module)
    return CellFunction(module, parameters, tuple(bound), has_result)


def _reject_unsupported(tree: ast.Module) -> None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            raise CellError(
                f"line {node.lineno}: `{type(node).__name__.lower()}` cannot be used in a "
                "%%compile_fx cell (the cell runs as one function); assign the name instead"
            )
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            raise CellError(f"line {node.lineno}: a %%compile_fx cell cannot yield or await")
        if isinstance(node, ast.Delete):
            raise CellError(
                f"line {node.lineno}: `del` is not supported in a %%compile_fx cell; "
                "delete the name in a plain cell"
            )
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            raise CellError(f"line {node.lineno}: `import *` cannot be used inside a function")


def _bound_names(body: list[ast.stmt]) -> list[str]:
    """Names the cell binds at its top level (not inside its own defs, lambdas or classes)."""
    names: dict[str, None] = {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = None
            for decorator in node.decorator_list:
                visit(decorator)
            return  # their bodies bind their own locals
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for child in ast.walk(node):  # only the walrus leaks out of a comprehension
                if isinstance(child, ast.NamedExpr) and isinstance(child.target, ast.Name):
                    names[child.target.id] = None
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names[node.id] = None
        elif isinstance(node, ast.alias):
            names[(node.asname or node.name).split(".")[0]] = None
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names[node.name] = None
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in body:
        visit(statement)
    return list(names)
