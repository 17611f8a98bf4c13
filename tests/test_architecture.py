"""The package's layers import downward only, with no circles: ARCHITECTURE.md's one rule per layer."""

from __future__ import annotations

import ast
import re
from itertools import pairwise
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ext" / "compilescope"

# Lower layers first. A module may import its own layer (without circles) and any lower one.
# live/ and views/ share a rank but never import each other: live touches torch, views draw.
LAYERS = {
    "common": 0,
    "model": 1,
    "trace": 2,
    "live": 3,
    "views": 3,
    "cell": 4,
    "magic": 5,
    "__init__": 6,
    "report_job": 6,
    "__main__": 7,
}
APART = {("live", "views"), ("views", "live"), ("views", "trace")}


def _layer(module: str) -> str:
    """`compilescope.model.capture` -> `model`; `compilescope` -> `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, type_only: bool = False) -> set[str]:
    """Every compilescope module `path` imports at run time (in functions too; not the ones
    under `if TYPE_CHECKING:`, which only a type checker reads, unless `type_only`)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test) and not type_only:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "compilescope":
                modules = {f"{target}.{a.name}" for a in node.names}
                # `from . import x` names a module when x is one, else the package's name
                named = {m for m in modules if _exists(m)}
                found.update(named or {target})
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "compilescope")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text("utf-8")))
    found.discard(name)
    return found


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").exists() or (PACKAGE / rel / "__init__.py").exists()


def _graph(type_only: bool = False) -> dict[str, set[str]]:
    return {_module_name(p): _imports(p, type_only) for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_belongs_to_a_layer():
    unknown = sorted(m for m in _graph() if _layer(m) not in LAYERS)
    assert not unknown, f"modules outside the layers of ARCHITECTURE.md: {unknown}"


def test_imports_point_down():
    upward = []
    for module, imports in _graph().items():
        for target in imports:
            a, b = _layer(module), _layer(target)
            if (a, b) in APART or (a != b and LAYERS[b] >= LAYERS[a]):
                upward.append(f"{module} -> {target}")
    assert not upward, "imports against the layers:\n" + "\n".join(sorted(upward))


def test_no_import_circles():
    # Type-only imports count too: an annotation pointing back up is a circle all the same
    # (the lower module takes plain data or names what it reads in a Protocol instead).
    graph = _graph(type_only=True)
    run_time = _graph()
    # Packages import nothing here but their modules' names resolve to the package itself.
    graph = {m: {t for t in ts if t in graph} for m, ts in graph.items()}
    circles, state = [], {}

    def arrow(a: str, b: str) -> str:
        return " -> " if b in run_time[a] else " -(type only)-> "

    def walk(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                loop = [*stack[stack.index(nxt) :], nxt]
                circles.append(loop[0] + "".join(arrow(a, b) + b for a, b in pairwise(loop)))
            elif nxt not in state:
                walk(nxt, [*stack, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            walk(module, [module])
    assert not circles, "import circles:\n" + "\n".join(circles)


def test_the_check_sees_upward_imports_and_skips_type_only_ones(tmp_path):
    # The checker itself, on a made-up package: a lazy upward import inside a function is
    # caught; one under `if TYPE_CHECKING:` is not a run-time import.
    fake = tmp_path / "compilescope"
    (fake / "model").mkdir(parents=True)
    (fake / "views").mkdir()
    (fake / "views" / "report.py").write_text("")
    (fake / "model" / "capture.py").write_text("")
    (fake / "model" / "x.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .capture import Capture\n"
        "def f():\n    from ..views.report import to_html\n"
    )
    globals()["PACKAGE"] = fake
    try:
        assert _imports(fake / "model" / "x.py") == {"compilescope.views.report"}
        with pytest.raises(AssertionError, match="model.x -> compilescope.views.report"):
            test_imports_point_down()
    finally:
        globals()["PACKAGE"] = Path(__file__).resolve().parents[1] / "ext" / "compilescope"


# Concepts as folders (issue 33): each a package that says in one line what it holds.
FOLDERS = {
    "model/findings": "finding",
    "model/ranks": "rank",
    "model/measured": "measure",
    "live/timing": "timing",
    "live/trials": "trial",
    "live/compiled_code": "compiled_code",
    "views/explorer": "explorer",
    "views/charts": "chart",
    "views/offline": "offline",
}


def test_concepts_are_folders_with_a_one_line_docstring_and_no_prefixed_names():
    for folder, prefix in FOLDERS.items():
        init = PACKAGE / folder / "__init__.py"
        assert init.exists(), f"{folder} is not a package"
        doc = ast.get_docstring(ast.parse(init.read_text("utf-8")))
        assert doc and "\n" not in doc.strip(), f"{folder}/__init__.py: a one-line docstring"
        inside = [p.stem for p in (PACKAGE / folder).glob("*.py")]
        assert not [s for s in inside if s.startswith(prefix)], (folder, inside)
        # ... and the room above holds no module that belongs in it by its name.
        above = [p.stem for p in (PACKAGE / folder).parent.glob(f"{prefix}*.py")]
        assert not above, f"{above} belong in {folder}/"
    for room in ("model", "live", "views"):
        flat = [p for p in (PACKAGE / room).glob("*.py") if p.name != "__init__.py"]
        # What a reader scans at once (issue 44: 21-23 each, before the folders above).
        assert len(flat) <= 16, f"{room}/ holds {len(flat)} modules side by side"


# The boundary to torch's private API (issue 41): only the modules ARCHITECTURE.md's table names
# may touch it, so a new use elsewhere is a decision written down, not an accident.
ARCHITECTURE = PACKAGE.parents[1] / "ARCHITECTURE.md"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_torch_uses(source: str) -> set[str]:
    """torch's private names a module uses: imports of them, attribute chains from `torch`, and
    modules imported by name (`importlib.import_module("torch._inductor.config")`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            parts = node.module.split(".")
            names = [a.name for a in node.names]
            if parts[0] == "torch" and any(_private(p) for p in parts + names):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "torch" and any(_private(p) for p in parts):
                    found.add(alias.name)
        elif isinstance(node, ast.Attribute):
            chain, base = [], node
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id == "torch" and any(map(_private, chain)):
                found.add("torch." + ".".join(reversed(chain)))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            value = node.args[0].value
            if name == "import_module" and isinstance(value, str) and value.startswith("torch._"):
                found.add(value)
    return found


def boundary_modules() -> set[str]:
    """The first column of ARCHITECTURE.md's table of where torch's private APIs are touched."""
    text = ARCHITECTURE.read_text("utf-8")
    section = text.split("## Where torch's private APIs are touched", 1)[1].split("\n## ", 1)[0]
    return {
        m.group(1)
        for line in section.splitlines()
        if (m := re.match(r"\|\s*`([\w/]+\.py)`\s*\|", line))
    }


def test_torch_private_api_is_touched_only_where_architecture_md_says():
    allowed = boundary_modules()
    assert "live/torch_bridge.py" in allowed, "the table of ARCHITECTURE.md was not found"
    outside = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        uses = private_torch_uses(path.read_text("utf-8"))
        if uses and rel not in allowed:
            outside[rel] = sorted(uses)
    assert not outside, (
        "torch's private API used outside the modules ARCHITECTURE.md names (go through "
        f"live/torch_bridge.py, or add the module to the table with the versions checked): {outside}"
    )
    # Every module of the table exists and still needs its row.
    for rel in allowed:
        assert (PACKAGE / rel).exists(), f"ARCHITECTURE.md names {rel}, which is gone"


def test_the_boundary_check_sees_each_form_of_private_use():
    source = (
        "import torch\nimport torch._dynamo\nfrom torch._guards import CompileContext\n"
        "from torch import _C\nimport importlib\n"
        "def f():\n    torch._C._autograd.x()\n    importlib.import_module('torch._inductor.config')\n"
        "    torch.__version__\n    torch.compile\n"
    )
    assert private_torch_uses(source) == {
        "torch._dynamo",
        "torch._guards",
        "torch",  # `from torch import _C`
        "torch._C._autograd.x",
        "torch._C._autograd",
        "torch._C",
        "torch._inductor.config",
    }
    assert private_torch_uses("import torch\ntorch.compile(f)\nx = torch.__version__\n") == set()
